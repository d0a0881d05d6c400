/**
 * The HTML report's client-side script, inlined into the page. It reads the
 * report JSON embedded once in the page (`#segscan-data`, plain or
 * gzip+base64), then builds partition rows on demand: only the current page of
 * the filtered list is in the DOM, so a 10,000-partition report stays fast.
 * Plain ES2020 without modules or dependencies; it makes no network request
 * (the page's Content-Security-Policy forbids them anyway).
 *
 * Byte positions come straight from the report (docs/interfaces.md §9.3); the
 * drawing's meaning follows docs/recovery.md §3.5 (prefix P, residue, probe,
 * survivor) and docs/repair.md §6.2 (a repair truncates the .log to P).
 *
 * Kept as a String.raw literal: no `${` and no backticks inside.
 */
export const HTML_REPORT_SCRIPT = String.raw`
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("segscan-config").textContent);
  var PAGE_SIZES = config.pageSizes;
  var MAX_INDEX_TICKS = config.maxIndexTicks;

  /**
   * Shown as the next step of a report written before partitions carried their
   * own next step: words alone, never a command with a placeholder in it (a
   * partition's real command is its nextCommand, shown under the words when
   * the report carries it).
   */
  var ACTION_WORDS = {
    serve: "Serve it as it is.",
    repair: "Repair it: a repair cuts each torn tail at its cut point and rebuilds or trims its index; every cut byte is preserved first, and a restore puts it back.",
    tombstone: "Tombstone: do not serve it, and leave every file exactly where it is as evidence.",
    "rebuild-from-peers": "Rebuild from peers: move the files aside (never deleted) and copy the partition from a healthy replica.",
    retry: "Retry: fix the storage and scan again; nothing was changed."
  };
  var TORN_WORDS = config.tornEvidenceWords;
  var SEVERITY_RANK = {};
  config.severityOrder.forEach(function (severity, rank) { SEVERITY_RANK[severity] = rank; });
  var REFUSAL_WORDS = {
    InteriorDamage: "a complete, verifying batch survives after the damage, so cutting there would destroy durable data",
    UnverifiedResidue: "the damage probe ran out of budget before it could prove that the residue holds no surviving batch",
    OffsetDiscontinuity: "a verified batch does not continue the offset chain",
    IndexEntriesNotMonotone: "the index's entries go backwards",
    IndexEntryBeforeSegmentStart: "an index entry points before the segment's first offset",
    SizeDivergence: "the index points past the end of the log",
    EmptyNonTailSegment: "an empty segment sits before the last segment",
    Hole: "offsets are missing between two segments",
    Overlap: "two segments hold the same offsets"
  };

  var report = null;
  var view = { onlyProblems: false, query: "", page: 0, pageSize: PAGE_SIZES[0], scale: "partition", sort: "worst" };
  var all = [];
  /** Each partition's next-step commands, shell-quoted by render.ts, keyed by the partition's index. */
  var commands = {};
  var matching = [];
  var sharedScaleBytes = 1;
  var commonPrefix = "";

  var $ = function (id) { return document.getElementById(id); };
  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (ch) {
      return ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;";
    });
  }
  /** A name or message from the disk as shown: control characters as visible \xHH, as the text report shows them. */
  function visible(value) {
    return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, function (ch) {
      return "\\x" + ("0" + ch.charCodeAt(0).toString(16)).slice(-2);
    });
  }
  function escv(value) { return esc(visible(value)); }
  function count(value) { return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function bytes(value) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"];
    var v = value, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return u === 0 ? v + " B" : (Number.isInteger(v) ? v : v.toFixed(1)) + " " + units[u];
  }
  function plural(n, one, many) { return count(n) + " " + (n === 1 ? one : many); }
  function baseName(path) { var at = path.lastIndexOf("/"); return at < 0 ? path : path.slice(at + 1); }
  function shown(path) { return commonPrefix && path.indexOf(commonPrefix) === 0 ? path.slice(commonPrefix.length) : path; }
  function list(value) { return Array.isArray(value) ? value : []; }

  /** Paths compared with their numbers as numbers: partitions/8 before partitions/32. */
  function naturalCompare(a, b) {
    var x = String(a).match(/\d+|\D+/g) || [], y = String(b).match(/\d+|\D+/g) || [];
    for (var i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] === y[i]) continue;
      var dx = /^\d/.test(x[i]), dy = /^\d/.test(y[i]);
      if (dx && dy) {
        var nx = x[i].replace(/^0+(?=\d)/, ""), ny = y[i].replace(/^0+(?=\d)/, "");
        if (nx.length !== ny.length) return nx.length - ny.length;
        if (nx !== ny) return nx < ny ? -1 : 1;
        continue;
      }
      return x[i] < y[i] ? -1 : 1;
    }
    return x.length - y.length;
  }
  /** Worst first (failed, refused, repairable, …), then by path, numbers as numbers. */
  function bySeverity(severityA, pathA, severityB, pathB) {
    var rank = (SEVERITY_RANK[severityB] || 0) - (SEVERITY_RANK[severityA] || 0);
    return rank !== 0 ? rank : naturalCompare(pathA, pathB);
  }

  // ---- the scope of loss (docs/recovery.md §3.7), in the text report's words ----

  function hasOffsets(range) { return range.firstOffset !== null || range.lastOffset !== null; }
  function offsetsText(range) {
    if (range.firstOffset === null) return range.lastOffset === null ? "no offset" : ".." + range.lastOffset;
    if (range.lastOffset === null) return range.firstOffset + "..unknown";
    return range.firstOffset === range.lastOffset ? String(range.firstOffset) : range.firstOffset + ".." + range.lastOffset;
  }
  function messagesText(range) {
    if (range.messages === null || range.messages === undefined) return null;
    var msgs = count(range.messages) + " msg" + (range.messages === 1 ? "" : "s");
    return range.kind === "unreadable" || range.kind === "missing" ? "\u2264" + msgs : msgs;
  }
  /** One range, as src/report/format.ts scopeRangeText words it. */
  function rangeText(range) {
    var details = [messagesText(range), range.kind === "missing" ? "no bytes" : bytes(range.bytes)].filter(function (d) { return d !== null; });
    if (range.kind === "torn") {
      var claim = range.firstOffset === null && range.messages === null ? "its header does not decode, so its offsets are unknown"
        : range.firstOffset === null ? "its header claims no message"
        : "its header claims " + offsetsText(range) + " (" + messagesText(range) + ")";
      return "torn tail (" + bytes(range.bytes) + "): " + claim + (range.tornEvidence ? "; " + TORN_WORDS[range.tornEvidence] : "");
    }
    return range.kind + " " + offsetsText(range) + " (" + details.join(", ") + ")";
  }
  /** The short label drawn inside a range on the bar. */
  function rangeLabel(range) {
    return (range.kind === "torn" ? "torn" : range.kind) + (hasOffsets(range) ? " " + offsetsText(range) : "");
  }

  function loadReport() {
    var el = $("segscan-data");
    if (el.getAttribute("data-encoding") === "gzip+base64") {
      var text = atob(el.textContent.trim());
      var raw = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) raw[i] = text.charCodeAt(i);
      var stream = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
      return new Response(stream).text().then(JSON.parse);
    }
    return Promise.resolve(JSON.parse(el.textContent));
  }

  function computeCommonPrefix(paths) {
    if (paths.length < 2) return "";
    var first = paths[0], cut = first.length;
    for (var i = 1; i < paths.length && cut > 0; i++) {
      var p = paths[i], j = 0;
      while (j < cut && j < p.length && p.charCodeAt(j) === first.charCodeAt(j)) j++;
      cut = j;
    }
    var slash = first.lastIndexOf("/", cut - 1);
    return slash > 0 ? namingPrefix(first.slice(0, slash + 1)) : "";
  }

  /**
   * The shared prefix shortened so that what is left names each partition on
   * its own: never a bare id ("1/partitions/2", "2"), always from topics/ on,
   * or from streams/ on when the streams differ ("topics/1/partitions/2").
   */
  function namingPrefix(prefix) {
    var streams = /(^|\/)streams\/$/.exec(prefix);
    if (streams) return prefix.slice(0, prefix.length - "streams/".length);
    var topics = /(^|\/)topics\/([^\/]+\/(partitions\/)?)?$/.exec(prefix);
    if (topics) return prefix.slice(0, topics.index + topics[1].length);
    var partitions = /(^|\/)partitions\/$/.exec(prefix);
    if (partitions) return prefix.slice(0, partitions.index + partitions[1].length);
    return prefix;
  }

  // ---- the byte map of one segment -------------------------------------

  function pct(position, scaleBytes) { return (Math.max(0, position) / scaleBytes * 100).toFixed(4) + "%"; }

  /** A focusable mark: its tooltip text is also its accessible name and its SVG title. */
  function mark(kind, tip, body, hitX, hitWidth) {
    return '<g class="mark" tabindex="0" role="img" data-mark="' + kind + '" aria-label="' + esc(tip.replace(/\n/g, "; ")) +
      '" data-tip="' + esc(tip) + '"><title>' + esc(tip) + "</title>" + body +
      (hitX === undefined ? "" : '<rect class="hit" x="' + hitX + '" y="1" width="' + hitWidth + '" height="30" transform="translate(' + (-hitWidth / 2) + ' 0)"/>') +
      "</g>";
  }

  function lineMark(kind, xPct, lineClass, capClass, cap, label, tip) {
    var body = '<rect class="' + lineClass + '" x="' + xPct + '" y="3" width="4" height="26" transform="translate(-2 0)"/>' +
      '<use class="' + capClass + '" href="#' + cap + '" x="' + xPct + '" y="3"/>' +
      '<text class="mark-label" x="' + xPct + '" y="37" text-anchor="middle">' + label + "</text>";
    return mark(kind, tip, body, xPct, 12);
  }

  /**
   * One segment's byte map. With fromByte > 0 it is a zoomed view of the bytes
   * [fromByte, size): the same marks, scaled so the residue fills the row.
   */
  function segmentFigure(partition, segment, scaleBytes, fromByte) {
    var from = fromByte || 0;
    var zoom = from > 0;
    var size = segment.messagesSize;
    function at(position) { return pct(position - from, scaleBytes); }
    function span(start, end) { return pct(Math.max(0, end - Math.max(start, from)), scaleBytes); }
    function inView(position) { return position >= from; }
    var out = [];
    var fileW = span(0, size);
    var walked = segment.walkedSize;
    var residue = segment.residue;
    var refusal = segment.refusal;
    var where = visible(baseName(segment.logPath));
    var desc = [where + ": " + count(size) + " bytes, offsets " + segment.startOffset + ".." + (segment.endOffset === null ? "(none)" : segment.endOffset) +
      ", outcome " + segment.outcome + ", proven prefix " + count(walked) + " bytes"];

    out.push('<rect class="file" x="0" y="7" width="' + fileW + '" height="18"/>');
    if (walked > from) {
      out.push(mark("prefix", "Proven prefix P: bytes 0.." + count(walked) + " (" + bytes(walked) + ")\n" +
        "offsets " + segment.startOffset + ".." + (segment.endOffset === null ? "(none)" : segment.endOffset) +
        (segment.messageCount === null ? "" : ", " + plural(segment.messageCount, "message", "messages")) +
        "\nevery batch here verifies and continues the offset chain",
        '<rect class="prefix" x="0" y="7" width="' + span(0, walked) + '" height="18"/>'));
    }
    if (residue) {
      var zero = residue.allZero;
      var probeWords = residue.probe === "survivor" ? "the probe found a surviving batch at byte " + count(residue.survivorPosition)
        : residue.probe === "budget-exhausted" ? "the probe ran out of budget before it finished"
        : "the probe found no surviving batch";
      out.push(mark(zero ? "residue-zero" : "residue-nonzero",
        "Residue: bytes " + count(residue.damagePosition) + ".." + count(residue.damagePosition + residue.bytes) +
        " (" + count(residue.bytes) + " bytes, " + (zero ? "all zero" : "NOT all zero") + ")\n" + probeWords +
        "\nprobe spent " + count(residue.spentUnits) + " units",
        '<rect class="' + (zero ? "residue-zero" : "residue-nonzero") + '" x="' + at(residue.damagePosition) +
        '" y="7" width="' + span(residue.damagePosition, residue.damagePosition + residue.bytes) + '" height="18"/>'));
      desc.push("residue of " + count(residue.bytes) + " bytes " + (zero ? "all zero" : "not all zero") + " from byte " + count(residue.damagePosition));
    }
    // The scope of loss (docs/recovery.md §3.7): each range named inside its own bytes (clipped there, so
    // labels never run into each other), with its exact numbers in its note.
    list(segment.scope).forEach(function (range) {
      var end = range.endPosition;
      if (end <= from || range.bytes === 0) return;
      var x = at(Math.max(range.startPosition, from));
      var w = span(range.startPosition, end);
      var where = "bytes " + count(range.startPosition) + ".." + count(end) + " (" + bytes(range.bytes) + ")";
      var label = '<svg class="range-box" x="' + x + '" y="7" width="' + w + '" height="18" aria-hidden="true">' +
        '<text class="range-label" x="3" y="13" data-short="' + esc(hasOffsets(range) ? offsetsText(range) : "") + '">' +
        esc(rangeLabel(range)) + "</text></svg>";
      if (range.kind === "proven") {
        out.push(label);
        return;
      }
      var tip = range.kind === "intact"
        ? "Intact after the damage: " + where + "\noffsets " + offsetsText(range) + (range.messages === null ? "" : ", " + plural(range.messages, "message", "messages")) +
          "\nevery batch here verifies and continues the chain from a surviving batch"
        : range.kind === "unreadable"
          ? "Unreadable: " + where + "\n" + (hasOffsets(range) ? "offsets " + offsetsText(range) + " cannot be proven" +
            (range.messages === null ? "" : " (at most " + plural(range.messages, "message", "messages") + ")") : "no offset is hidden here")
          : "Torn tail: " + where + "\n" + rangeText(range).replace(/^torn tail \([^)]*\): /, "");
      out.push(mark("range-" + range.kind, tip,
        '<rect class="range ' + range.kind + '" x="' + x + '" y="7" width="' + w + '" height="18"/>' + label));
      desc.push(range.kind + " range " + offsetsText(range));
    });
    list(segment.gaps).forEach(function (gap) {
      if (!inView(gap.position)) return;
      var x = at(gap.position);
      out.push(mark("gap", "Forward gap at byte " + count(gap.position) + ": expected offset " + gap.expectedOffset +
        ", found " + gap.foundOffset + " (offsets skipped forward; allowed, reported)",
        '<rect class="gap-mark" x="' + x + '" y="5" width="6" height="22" transform="translate(-3 0)"/>' +
        '<text class="mark-label" x="' + x + '" y="37" text-anchor="middle">G</text>', x, 10));
      desc.push("forward gap at byte " + count(gap.position));
    });
    list(segment.warnings).forEach(function (w) {
      if (!inView(w.position)) return;
      var x = at(w.position);
      out.push(mark("warning", "Warning " + w.code + " at byte " + count(w.position) +
        (w.batchLength === undefined ? "" : " (batch length " + count(w.batchLength) + " bytes)") + "\n" + visible(w.message),
        '<use class="warning-mark" href="#glyph-warning" x="' + x + '" y="3"/>' +
        '<text class="mark-label" x="' + x + '" y="37" text-anchor="middle">W</text>', x, 12));
      desc.push("warning " + w.code + " at byte " + count(w.position));
    });
    // The damage position: where the walk stopped before the file end (a residue),
    // or where a segment refusal without a residue points.
    var damageAt = residue ? residue.damagePosition
      : refusal && typeof refusal.position === "number" ? refusal.position
      : refusal && typeof refusal.indexedPosition === "number" ? refusal.indexedPosition : null;
    // A torn tail's damage position IS the cut point: one mark says both.
    var cutDrawn = segment.outcome === "torn-tail" && partition.action === "repair";
    if (damageAt !== null && inView(damageAt) && !(cutDrawn && residue && damageAt === walked)) {
      var dTip = "Damage at byte " + count(damageAt) + (refusal ? " (" + refusal.code + ")" : "") +
        "\nthe proven prefix ends here" + (residue && residue.probe === "no-survivor" ? " (a torn tail: nothing survives after it)" : "") + (residue ? "; " + count(residue.bytes) + " bytes follow, " + (residue.allZero ? "all zero" : "not all zero") +
        "\nprobe spent " + count(residue.spentUnits) + " units" : "") +
        (refusal ? "\n" + visible(refusal.message) : "");
      out.push(lineMark("damage", at(damageAt), "damage-line", "damage-cap", "glyph-damage", "D", dTip));
      desc.push("damage at byte " + count(damageAt));
    }
    if (residue && residue.probe === "survivor" && residue.survivorPosition !== null) {
      out.push(lineMark("survivor", at(residue.survivorPosition), "survivor-line", "survivor-cap", "glyph-survivor", "S",
        "Survivor at byte " + count(residue.survivorPosition) + ": a complete batch that extends the chain starts here, " +
        count(residue.survivorPosition - residue.damagePosition) + " bytes after the damage at " + count(residue.damagePosition) +
        "\ncutting at the damage would destroy it, so nothing is cut\nprobe spent " + count(residue.spentUnits) + " units to find it"));
      desc.push("surviving batch at byte " + count(residue.survivorPosition));
    }
    if (cutDrawn) {
      var cx = at(walked);
      out.push(mark("cut", (residue && residue.damagePosition === walked ? "Damage position and cut point" : "Cut point") + " at byte " + count(walked) + ": a repair truncates the .log from " + count(size) +
        " to " + count(walked) + " bytes (" + count(size - walked) + " bytes removed" +
        (residue ? ", " + (residue.allZero ? "all zero, recorded by length" : "preserved in the .segscan directory") : "") + ")" +
        (residue ? "\nprobe spent " + count(residue.spentUnits) + " units proving no batch survives" : "") +
        (residue && residue.tornEvidence ? "\n" + TORN_WORDS[residue.tornEvidence] : ""),
        '<line class="cut-line" x1="' + cx + '" x2="' + cx + '" y1="0" y2="31"/>' +
        '<text class="cut-label" x="' + cx + '" y="37" text-anchor="start" dx="3">cut</text>', cx, 10));
      desc.push("a repair cuts at byte " + count(walked));
    }
    var index = segment.index || { entries: 0 };
    if (!zoom && (index.entries > 0 || index.rebuilt || index.trailingBytes > 0 || index.mismatches > 0)) {
      var ticks = Math.min(index.entries, MAX_INDEX_TICKS);
      var tickBody = "";
      for (var t = 0; t < ticks; t++) {
        var tx = at(walked * (t / Math.max(1, ticks)));
        tickBody += '<line class="tick" x1="' + tx + '" x2="' + tx + '" y1="26" y2="31"/>';
      }
      var indexTip = "Index: " + plural(index.entries, "entry", "entries") + " (" + count(segment.indexSize) + " bytes)" +
        "\nthe report holds the count, not the positions: ticks are spread evenly over the proven prefix" +
        (index.entries > MAX_INDEX_TICKS ? " (first " + MAX_INDEX_TICKS + " drawn)" : "") +
        (index.rebuilt ? "\nrepair rebuilds it: " + plural(index.rebuiltEntries, "entry", "entries") : "") +
        (index.trailingBytes > 0 ? "\n" + count(index.trailingBytes) + " trailing bytes (a torn entry) to trim" : "") +
        (index.mismatches > 0 ? "\n" + plural(index.mismatches, "entry does", "entries do") + " not sit on a verified batch" : "");
      out.push(mark("index", indexTip, tickBody + '<rect class="hit" x="0" y="25" width="' + span(0, Math.max(walked, 1)) + '" height="7"/>'));
      desc.push(plural(index.entries, "index entry", "index entries") + (index.rebuilt ? ", index to rebuild" : ""));
    }
    var label = desc.join("; ");
    if (size === 0) {
      return '<div class="empty-file" role="img" aria-label="' + esc(label) + '">empty file (0 bytes)</div>';
    }
    if (zoom) {
      return '<svg class="bar zoom" data-from="' + from + '" role="group" aria-label="' +
        esc("Zoomed byte map, bytes " + count(from) + ".." + count(size) + ", of " + label) + '">' + out.join("") + "</svg>";
    }
    return '<svg class="bar" role="group" aria-label="' + esc("Byte map of " + label) + '">' + out.join("") + "</svg>";
  }

  /**
   * Where a zoomed view of a segment starts, or 0 for none: when the residue
   * takes less than ZOOM_BELOW_FRACTION of the row, a second bar shows the bytes
   * from a little before the damage to the end, so close marks come apart.
   */
  function zoomFrom(segment, rowScale) {
    var residue = segment.residue;
    if (!residue || residue.bytes === 0 || residue.bytes / rowScale >= config.zoomBelowFraction) return 0;
    var margin = Math.ceil(residue.bytes * config.zoomMarginFraction);
    return Math.max(1, residue.damagePosition - margin);
  }

  function segmentLabel(segment) {
    return '<div class="seglabel"><div class="name mono">' + escv(baseName(segment.logPath)) + "</div>" +
      '<div class="muted">offsets ' + esc(segment.startOffset) + ".." + esc(segment.endOffset === null ? "(none)" : segment.endOffset) +
      " &middot; " + esc(bytes(segment.messagesSize)) + " &middot; " + esc(segment.outcome) + "</div></div>";
  }

  /** A copyable command: the same markup as render.ts commandsHtml (the copy button is wired once, for the whole page). */
  function commandHtml(command) {
    return '<div class="command"><code class="mono" tabindex="0">' + esc(command) + "</code>" +
      '<button type="button" class="copy" data-copy="' + esc(command) + '" aria-label="Copy the command">copy</button></div>';
  }

  /**
   * The partition's own findings, whatever their code (a report may carry them
   * beside the verdict): each with its severity, code, path, message and next step.
   */
  function findingsHtml(p) {
    var findings = list(p.findings).filter(function (f) { return f && f.severity !== "clean"; });
    if (findings.length === 0) return "";
    findings.sort(function (a, b) { return bySeverity(a.severity, String(a.path || ""), b.severity, String(b.path || "")); });
    return '<ul class="partition-findings">' + findings.map(function (f) {
      return '<li class="sev-' + esc(f.severity) + '"><span class="badge ' + esc(f.severity) + '">' + esc(f.severity) + "</span> " +
        '<span class="mono finding-code">' + escv(f.code) + "</span>" +
        (f.path ? ' <span class="mono finding-path">' + escv(shown(String(f.path))) + "</span>" : "") +
        ": " + escv(f.message) +
        (typeof f.nextStep === "string" ? '<br><span class="next-step"><b>Next step:</b> ' + escv(f.nextStep) + "</span>" : "") + "</li>";
    }).join("") + "</ul>";
  }

  function refusalHtml(refusal) {
    if (!refusal) return "";
    var words = REFUSAL_WORDS[refusal.code];
    return '<div class="refusal"><b>' + esc(refusal.code) + "</b>" + (words ? ": " + esc(words) + "." : "") +
      "<br>" + escv(refusal.message) + "</div>";
  }

  function partitionHtml(partition, at) {
    var p = partition;
    var segmentsOf = list(p.segments);
    var scale = view.scale === "report" ? sharedScaleBytes : 0;
    if (view.scale === "partition") {
      scale = 1;
      segmentsOf.forEach(function (s) { if (s.messagesSize > scale) scale = s.messagesSize; });
    }
    var html = '<li class="partition v-' + esc(p.verdict) + '" data-index="' + at + '" data-verdict="' + esc(p.verdict) + '">' +
      '<h3><span class="badge ' + esc(p.verdict) + '">' + esc(p.verdict) + '</span> <span class="path mono" title="' + escv(p.path) + '">' + escv(shown(p.path)) + "</span></h3>" +
      '<p class="next-step"><b>Next step:</b> ' + escv(p.nextStep || ACTION_WORDS[p.action] || p.action) +
      ' <span class="muted">(action <span class="mono">' + esc(p.action) + "</span>)</span></p>" +
      (commands[at] || []).map(commandHtml).join("") + findingsHtml(p);
    var scopeOf = list(p.scope);
    if (scopeOf.length > 1) {
      html += '<p class="scope"><b>Scope:</b> ' + scopeOf.map(function (range) {
        return '<span class="scope-range ' + esc(range.kind) + '">' + esc(rangeText(range)) + "</span>";
      }).join(" &middot; ") + "</p>";
    }
    if (p.budget && p.budget.spentUnits > 0) {
      html += '<p class="words muted">Damage probe spent ' + count(p.budget.spentUnits) + " of " + count(p.budget.limitUnits) + " units.</p>";
    }
    html += refusalHtml(p.refusal);
    if (p.error) html += '<div class="error"><b>' + esc(p.error.code) + "</b>: " + escv(p.error.message) + ' <span class="mono">(' + escv(p.error.path) + ")</span></div>";
    var segments = list(p.segments);
    if (segments.length > 0) {
      html += '<div class="segments">';
      segments.forEach(function (segment) {
        var rowScale = scale || Math.max(1, segment.messagesSize);
        html += segmentLabel(segment) + "<div>" + segmentFigure(p, segment, rowScale, 0) + "</div>";
        var from = zoomFrom(segment, rowScale);
        if (from > 0) {
          html += '<div class="seglabel zoomlabel muted">zoom &#8599; bytes ' + count(from) + ".." + count(segment.messagesSize) + "</div>" +
            "<div>" + segmentFigure(p, segment, segment.messagesSize - from, from) + "</div>";
        }
      });
      html += "</div>";
    }
    var notes = [];
    segments.forEach(function (segment) {
      var name = escv(baseName(segment.logPath));
      var index = segment.index || {};
      if (p.action === "repair" && segment.outcome === "torn-tail") {
        notes.push("Repair cuts " + name + " at byte " + count(segment.walkedSize) + ", removing " + count(segment.messagesSize - segment.walkedSize) +
          " bytes" + (segment.residue ? (segment.residue.allZero ? " (all zero: recorded by length)" : " (not all zero: preserved first)") : "") + ".");
      }
      if (p.action === "repair" && segment.outcome === "empty") notes.push(name + " holds no message; repair handles it as an empty tail.");
      if (index.rebuilt) notes.push(name + ": the index is rebuilt from the log (" + plural(index.rebuiltEntries, "entry", "entries") + ").");
      else if (index.trailingBytes > 0) notes.push(name + ": " + count(index.trailingBytes) + " trailing bytes of the index (a torn entry) are trimmed.");
      if (index.mismatches > 0) notes.push(name + ": " + plural(index.mismatches, "index entry does", "index entries do") + " not sit on a verified batch" +
        (segment.outcome === "refused" ? " inside the proven prefix (entries past the damage are its doing, not counted)" : "") + ".");
      if (segment.refusal && (!p.refusal || segment.refusal.message !== p.refusal.message)) notes.push(escv(baseName(segment.logPath)) + ": " + esc(segment.refusal.code) + " &mdash; " + escv(segment.refusal.message));
    });
    if (notes.length) html += '<ul class="notes">' + notes.map(function (n) { return "<li>" + n + "</li>"; }).join("") + "</ul>";
    var warnings = [];
    segments.forEach(function (segment) {
      list(segment.warnings).forEach(function (w) { warnings.push("<li><b>" + esc(w.code) + "</b> in " + escv(baseName(segment.logPath)) + " at byte " + count(w.position) + ": " + escv(w.message) + "</li>"); });
    });
    if (warnings.length) html += '<div class="warnings"><b>Warnings</b><ul>' + warnings.join("") + "</ul></div>";
    var sweep = list(p.sweep);
    html += '<div class="sweep"><b>Sweep candidates</b>' + (sweep.length === 0 ? ': none' :
      " (moved aside by a repair, never deleted)<ul>" + sweep.map(function (s) {
        return '<li><span class="mono">' + escv(shown(s.path)) + "</span> &mdash; " + (s.kind === "staging" ? "staging file left by an interrupted write" : "index without its log") + "</li>";
      }).join("") + "</ul>") + "</div>";
    var ignored = list(p.ignored);
    if (ignored.length) {
      html += '<div class="ignored"><b>Ignored files</b> (not segments; never touched)<ul>' + ignored.map(function (item) {
        if (typeof item === "string") return '<li class="mono">' + escv(shown(item)) + "</li>";
        return '<li><span class="mono">' + escv(shown(item.path)) + "</span> &mdash; " + esc(item.kind) + ": " + escv(item.message) + "</li>";
      }).join("") + "</ul></div>";
    }
    return html + "</li>";
  }

  // ---- filtering, paging, tooltips ---------------------------------------

  /** Report indexes in display order, per sort (built once: the report does not change). */
  var orders = {};
  function order() {
    if (!orders[view.sort]) {
      var indexes = all.map(function (_, i) { return i; });
      indexes.sort(view.sort === "worst"
        ? function (a, b) { return all[b].rank - all[a].rank || naturalCompare(all[a].p.path, all[b].p.path); }
        : function (a, b) { return naturalCompare(all[a].p.path, all[b].p.path); });
      orders[view.sort] = indexes;
    }
    return orders[view.sort];
  }

  function applyFilters() {
    var q = view.query.trim().toLowerCase();
    matching = [];
    var sorted = order();
    for (var k = 0; k < sorted.length; k++) {
      var i = sorted[k];
      var entry = all[i];
      if (view.onlyProblems && entry.rank === 0) continue;
      if (q && entry.lowerPath.indexOf(q) < 0) continue;
      matching.push(i);
    }
    var pages = Math.max(1, Math.ceil(matching.length / view.pageSize));
    if (view.page >= pages) view.page = pages - 1;
  }

  function render() {
    var start = view.page * view.pageSize;
    var end = Math.min(matching.length, start + view.pageSize);
    var parts = [];
    for (var i = start; i < end; i++) parts.push(partitionHtml(all[matching[i]].p, matching[i]));
    var listEl = $("partitions");
    listEl.innerHTML = parts.join("");
    $("empty").hidden = matching.length !== 0;
    var pages = Math.max(1, Math.ceil(matching.length / view.pageSize));
    var status = matching.length === 0 ? "No partition matches." :
      "Showing " + count(start + 1) + "\u2013" + count(end) + " of " + plural(matching.length, "matching partition", "matching partitions") +
      " (" + count(all.length) + " in the report)" + (view.onlyProblems ? ", clean ones hidden" : "");
    $("status").textContent = status;
    $("print-note").textContent = "Printed view: " + status;
    $("page-label").textContent = "Page " + count(view.page + 1) + " of " + count(pages);
    $("prev").disabled = view.page === 0;
    $("next").disabled = view.page >= pages - 1;
    hideTip();
    spreadLabels(listEl);
  }

  /** Height of one row of mark labels under a bar, in CSS pixels. */
  var LABEL_ROW_PX = 11;
  /**
   * Labels drawn where the page's width decides whether they fit. The letters
   * under a bar (D, S, G, W, cut) sit at their marks' positions; two marks a
   * few pixels apart would print "DS": each label that would touch the one
   * before it moves down a row, and the bar grows to hold its rows. A range's
   * name inside its bytes (proven 0..669) is shortened to its offsets where it
   * does not fit, and left out where those do not fit either (its note has
   * it). Run after every render and resize.
   */
  function spreadLabels(root) {
    var bars = Array.prototype.slice.call(root.querySelectorAll("svg.bar"));
    // Writes, then every read, then writes: one layout for the whole page, however many bars it holds.
    var perBar = bars.map(function (bar) {
      var labels = Array.prototype.slice.call(bar.querySelectorAll("text.mark-label, text.cut-label"));
      labels.forEach(function (label) {
        if (!label.hasAttribute("data-y")) label.setAttribute("data-y", label.getAttribute("y"));
        label.setAttribute("y", label.getAttribute("data-y"));
      });
      var names = Array.prototype.slice.call(bar.querySelectorAll("text.range-label"));
      names.forEach(function (name) {
        if (!name.hasAttribute("data-full")) name.setAttribute("data-full", name.textContent);
        name.textContent = name.getAttribute("data-full");
        name.removeAttribute("visibility");
      });
      return { labels: labels, names: names };
    });
    var measured = perBar.map(function (one, b) {
      var barWidth = bars[b].getBoundingClientRect().width;
      return {
        labels: one.labels.map(function (label) { return { label: label, box: label.getBoundingClientRect() }; }),
        names: one.names.map(function (name) {
          // The range's box is a percentage of the bar (its own bounding box is its text's, not its width).
          var room = barWidth * parseFloat(name.parentNode.getAttribute("width")) / 100 - 6;
          return { name: name, room: room, needs: name.getComputedTextLength() };
        })
      };
    });
    measured.forEach(function (one, b) {
      one.labels.sort(function (x, y) { return x.box.left - y.box.left; });
      var rowEnds = [];
      one.labels.forEach(function (item) {
        var row = 0;
        while (row < rowEnds.length && item.box.left < rowEnds[row] + 2) row++;
        rowEnds[row] = item.box.right;
        if (row > 0) item.label.setAttribute("y", String(Number(item.label.getAttribute("data-y")) + row * LABEL_ROW_PX));
      });
      bars[b].style.height = rowEnds.length > 1 ? 38 + (rowEnds.length - 1) * LABEL_ROW_PX + "px" : "";
      one.names.forEach(function (item) {
        if (item.needs <= item.room) return;
        var full = item.name.getAttribute("data-full");
        var short = item.name.getAttribute("data-short");
        // The same font: the short form's width scales with its length.
        if (short && item.needs * short.length / full.length <= item.room) item.name.textContent = short;
        else item.name.setAttribute("visibility", "hidden");
      });
    });
  }

  function update(resetPage) {
    if (resetPage) view.page = 0;
    applyFilters();
    render();
  }

  var tip = null;
  function showTip(target) {
    var text = target.getAttribute("data-tip");
    if (!text) return;
    tip.textContent = text;
    tip.hidden = false;
    var box = target.getBoundingClientRect();
    var tipBox = tip.getBoundingClientRect();
    var left = Math.min(Math.max(4, box.left + box.width / 2 - tipBox.width / 2), window.innerWidth - tipBox.width - 4);
    var top = box.bottom + 8;
    if (top + tipBox.height > window.innerHeight - 4) top = Math.max(4, box.top - tipBox.height - 8);
    tip.style.left = left + "px";
    tip.style.top = top + "px";
    target.setAttribute("aria-describedby", "tooltip");
  }
  function hideTip() { if (tip) tip.hidden = true; }
  function markOf(node) { return node && node.closest ? node.closest(".mark") : null; }

  function wire() {
    tip = $("tooltip");
    var list = $("partitions");
    list.addEventListener("mouseover", function (e) { var m = markOf(e.target); if (m) showTip(m); });
    list.addEventListener("mouseout", function (e) { var m = markOf(e.target); if (m && !m.contains(e.relatedTarget)) hideTip(); });
    list.addEventListener("focusin", function (e) { var m = markOf(e.target); if (m) showTip(m); });
    list.addEventListener("focusout", function (e) { if (markOf(e.target)) hideTip(); });
    list.addEventListener("keydown", function (e) {
      var m = markOf(e.target);
      if (!m) return;
      if (e.key === "Escape") { hideTip(); return; }
      if (e.key !== "ArrowRight" && e.key !== "ArrowLeft" && e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
      var marks = Array.prototype.slice.call(list.querySelectorAll(".mark"));
      var at = marks.indexOf(m) + (e.key === "ArrowRight" || e.key === "ArrowDown" ? 1 : -1);
      if (at >= 0 && at < marks.length) { marks[at].focus(); e.preventDefault(); }
    });
    var search = $("search");
    var pending = 0;
    search.addEventListener("input", function () {
      clearTimeout(pending);
      pending = setTimeout(function () { view.query = search.value; update(true); }, config.searchDebounceMs);
    });
    search.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { clearTimeout(pending); view.query = search.value; update(true); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "/" && document.activeElement !== search) { e.preventDefault(); search.focus(); }
    });
    $("only-problems").addEventListener("change", function (e) { view.onlyProblems = e.target.checked; update(true); });
    $("page-size").addEventListener("change", function (e) { view.pageSize = Number(e.target.value) || all.length || 1; update(true); });
    $("scale").addEventListener("change", function (e) { view.scale = e.target.value; render(); });
    $("sort").addEventListener("change", function (e) { view.sort = e.target.value; update(true); });
    var resizing = 0;
    window.addEventListener("resize", function () {
      clearTimeout(resizing);
      resizing = setTimeout(function () { spreadLabels($("partitions")); }, config.searchDebounceMs);
    });
    $("prev").addEventListener("click", function () { if (view.page > 0) { view.page--; render(); } });
    $("next").addEventListener("click", function () { view.page++; applyFilters(); render(); });
    window.addEventListener("scroll", hideTip, { passive: true });
  }

  function start(data) {
    report = data;
    var partitions = list(report.partitions);
    commands = JSON.parse($("segscan-commands").textContent);
    all = partitions.map(function (p) {
      // A partition's rank is the worst of its verdict and its own findings: a warning is never filed among the clean.
      var rank = SEVERITY_RANK[p.verdict] || 0;
      list(p.findings).forEach(function (f) { if (f && SEVERITY_RANK[f.severity] > rank) rank = SEVERITY_RANK[f.severity]; });
      return { p: p, rank: rank, lowerPath: String(p.path).toLowerCase() };
    });
    commonPrefix = computeCommonPrefix(partitions.map(function (p) { return String(p.path); }));
    sharedScaleBytes = 1;
    partitions.forEach(function (p) { list(p.segments).forEach(function (s) { if (s.messagesSize > sharedScaleBytes) sharedScaleBytes = s.messagesSize; }); });
    $("scale-note").textContent = "Scale: a partition's segments share one scale, its largest segment filling the row; with \u201cwhole report\u201d the full row is " +
      count(sharedScaleBytes) + " bytes (" + bytes(sharedScaleBytes) + ", the report's largest segment).";
    if (commonPrefix) $("prefix-note").textContent = "Paths below are relative to " + commonPrefix;
    view.onlyProblems = all.length > config.onlyProblemsAbove;
    $("only-problems").checked = view.onlyProblems;
    var sizeSelect = $("page-size");
    sizeSelect.innerHTML = PAGE_SIZES.map(function (n) { return '<option value="' + n + '">' + n + "</option>"; }).join("") +
      '<option value="0">all</option>';
    wire();
    update(true);
    if (window.performance && performance.mark) performance.mark("segscan-ready"); // time to first rows, for the tests' log
    document.documentElement.setAttribute("data-ready", "true");
  }

  /** How long a copy button says "copied" before it reads "copy" again. */
  var COPY_FEEDBACK_MS = 1500;

  /**
   * The copy buttons of every command, node findings' and partitions' alike (one
   * listener for the page, so rows built later need no wiring). The clipboard
   * API where the browser allows it, else the command is selected and copied
   * the old way; either way the command's text is selected, ready for Ctrl+C.
   */
  function wireCommands() {
    document.addEventListener("click", function (e) {
      var button = e.target && e.target.closest ? e.target.closest("button.copy") : null;
      if (!button) return;
      var text = button.getAttribute("data-copy");
      var code = button.parentNode.querySelector("code");
      var selection = window.getSelection();
      if (code && selection) { selection.removeAllRanges(); var range = document.createRange(); range.selectNodeContents(code); selection.addRange(range); }
      function said(word) {
        button.textContent = word;
        setTimeout(function () { button.textContent = "copy"; }, COPY_FEEDBACK_MS);
      }
      function legacy() {
        var copied = false;
        try { copied = document.execCommand("copy"); } catch (ignored) { copied = false; }
        said(copied ? "copied" : "selected");
      }
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(function () { said("copied"); }, legacy);
      else legacy();
    });
    // A printed page shows every finding's explanation, folded or not.
    var reopen = [];
    window.addEventListener("beforeprint", function () {
      reopen = Array.prototype.filter.call(document.querySelectorAll("details.why"), function (d) { return !d.open; });
      reopen.forEach(function (d) { d.open = true; });
    });
    window.addEventListener("afterprint", function () { reopen.forEach(function (d) { d.open = false; }); reopen = []; });
  }

  wireCommands();
  loadReport().then(start, function (error) {
    $("status").textContent = "This report could not be read: " + error.message;
    document.documentElement.setAttribute("data-ready", "error");
  });
})();
`;
