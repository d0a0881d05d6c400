/**
 * The self-contained HTML report: one file with inline CSS, script and SVG,
 * no network access at view time (a Content-Security-Policy of
 * `default-src 'none'` makes sure of it), opening from disk.
 *
 * It draws the `scan --json` report shape (docs/interfaces.md §9.3, the output
 * of `toJsonReport`), so `scan --html` and `report <scan.json> --html` share
 * this one renderer. Problems come first (docs/html-report.md): the verdict
 * banner, the node's findings, then the partitions worst first; the boot
 * forecast's table, the scan's facts, the glossary and the legend last. All
 * but the partition rows is static HTML rendered here (it reads and prints
 * without the script); the rows are built by the inline script on demand, from
 * the report JSON embedded once in the page.
 *
 * Fields other versions add are drawn when present and ignored when absent:
 * segment `warnings`, partition `ignored` and `findings`, top-level
 * `node.bootForecast`, and a next step's argv (NEXT_STEP_ARGV_FIELD).
 */
import { gzipSync } from "node:zlib";
import { shellQuote } from "../../domain/command.js";
import { SEVERITY_ORDER } from "../../domain/node.js";
import { TORN_EVIDENCE_WORDS, formatBytes, formatCount } from "../format.js";
import type { JsonScanReport } from "../json.js";
import { escapeControl } from "../terminal-safe.js";
import { HTML_REPORT_SCRIPT } from "./client.js";
import { HTML_REPORT_CSS, MARK_COLORS } from "./style.js";

/**
 * Reports whose JSON is larger than this are embedded gzip-compressed and
 * base64-encoded (the browser inflates them with DecompressionStream): a
 * 10,000-partition report shrinks about tenfold. Smaller ones stay plain JSON,
 * readable in the file and loadable by any browser without DecompressionStream.
 */
export const HTML_PLAIN_JSON_MAX_BYTES = 256 * 1024;

/** Above this many partitions the page opens with clean partitions hidden (the issue's threshold). */
export const HTML_ONLY_PROBLEMS_ABOVE_PARTITIONS = 50;

/** Rows per page: the DOM holds one page, so even "all" on a huge report is the reader's explicit choice. */
export const HTML_PAGE_SIZES: readonly number[] = [50, 200, 1000];

/** Index ticks drawn per segment at most; the tooltip says when more entries exist. */
export const HTML_MAX_INDEX_TICKS = 64;

/**
 * A segment whose residue takes less than this fraction of its row also gets a
 * zoomed bar of its tail, so a damage mark and a survivor a few KiB apart in a
 * 1 GiB segment are drawn apart.
 */
export const HTML_ZOOM_BELOW_FRACTION = 0.2;

/** The zoomed bar starts this fraction of the residue's width before the damage, so the proven prefix's end shows. */
export const HTML_ZOOM_MARGIN_FRACTION = 0.1;

/** Typing in the search box re-filters after this pause, so 10,000 rows are not filtered per keystroke. */
export const HTML_SEARCH_DEBOUNCE_MS = 120;

export interface BootForecastEntry {
  effect: string;
  path: string;
  destructive: boolean;
  detail: string;
}

/** One node root's section of the report (`node`, or each of `nodes`). */
export type HtmlNodeInput = { bootForecast?: BootForecastEntry[] } & Record<string, unknown>;

/**
 * The JSON report, plus the optional whole-node section a later version adds:
 * `node` for a scan that met one node root, `nodes` for one that met several
 * (docs/interfaces.md §9.3; never both).
 */
export type HtmlReportInput = JsonScanReport & {
  node?: HtmlNodeInput;
  nodes?: HtmlNodeInput[];
};

export interface HtmlRenderOptions {
  /** Page title; defaults to "segscan report". */
  title?: string;
  /** "auto" (default): gzip+base64 above HTML_PLAIN_JSON_MAX_BYTES; "plain" or "gzip" forces one form. */
  embed?: "auto" | "plain" | "gzip";
}

function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) =>
    ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;",
  );
}

/** JSON that is safe inside a <script> element: `<` cannot close it (it only occurs inside strings). */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** A name or message from the disk as the page shows it: HTML-escaped, control characters as visible `\xHH` (as the text report). */
function escapeText(value: unknown): string {
  return escapeHtml(escapeControl(String(value)));
}

/**
 * The field beside a `nextStep` sentence that holds its command as an argv
 * array (docs/interfaces.md §9.2): one command (`string[]`) or several in
 * order (`string[][]`); `null` or absent when the step runs no command. The page shows each shell-quoted (`shellQuote`, the
 * one quoting) in a copyable code element; a report without the field shows
 * the sentence alone.
 */
export const NEXT_STEP_ARGV_FIELD = "nextCommand";

const isArgv = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === "string");

/** The pasteable command lines of one next step, shell-quoted; [] when the item carries no argv. */
export function nextStepCommands(item: unknown): string[] {
  if (item === null || typeof item !== "object") return [];
  const argv = (item as Record<string, unknown>)[NEXT_STEP_ARGV_FIELD];
  if (isArgv(argv)) return [shellQuote(argv)];
  if (Array.isArray(argv) && argv.every(isArgv)) return argv.map((one) => shellQuote(one));
  return [];
}

/**
 * The copyable command block (the page's script wires the copy buttons; without
 * it a click on the code selects the whole command). Same markup as the
 * client's `commandHtml`.
 */
function commandsHtml(commands: readonly string[]): string {
  return commands
    .map(
      (command) =>
        `<div class="command"><code class="mono" tabindex="0">${escapeHtml(command)}</code>` +
        `<button type="button" class="copy" data-copy="${escapeHtml(command)}" aria-label="Copy the command">copy</button></div>`,
    )
    .join("");
}

const VERDICTS = ["clean", "repairable", "refused", "failed"] as const;

function countsTable(report: HtmlReportInput): string {
  const rows = VERDICTS.map(
    (verdict) =>
      `<tr><th scope="row"><span class="badge ${verdict}">${verdict}</span></th><td class="num">${formatCount(report.summary[verdict])}</td></tr>`,
  );
  return (
    `<table class="counts"><caption class="sr-only">Partitions by verdict</caption>` +
    `<thead><tr><th scope="col">verdict</th><th scope="col">partitions</th></tr></thead><tbody>${rows.join("")}` +
    `<tr><th scope="row">total</th><td class="num">${formatCount(report.summary.partitions)}</td></tr></tbody></table>`
  );
}

interface NodeFindingInput {
  severity?: unknown;
  code?: unknown;
  path?: unknown;
  message?: unknown;
  nextStep?: unknown;
}

/** Every `findings` array anywhere in the node section (metadata, WAL, snapshot, superblocks, partitions). */
function nodeFindings(value: unknown, into: NodeFindingInput[] = []): NodeFindingInput[] {
  if (Array.isArray(value)) for (const item of value) nodeFindings(item, into);
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key === "findings" && Array.isArray(inner)) into.push(...(inner as NodeFindingInput[]));
      else if (key !== "bootForecast") nodeFindings(inner, into);
    }
  }
  return into;
}

/** Paths compared with their numbers as numbers (`partitions/8` before `partitions/32`); the page's script sorts the same way. */
export function naturalCompare(a: string, b: string): number {
  const x = a.match(/\d+|\D+/g) ?? [];
  const y = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i]!, y[i]!];
    if (p === q) continue;
    if (/^\d/.test(p) && /^\d/.test(q)) {
      const [m, n] = [p.replace(/^0+(?=\d)/, ""), q.replace(/^0+(?=\d)/, "")];
      if (m.length !== n.length) return m.length - n.length;
      if (m !== n) return m < n ? -1 : 1;
      continue;
    }
    return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

const severityRank = (severity: unknown): number => SEVERITY_ORDER.indexOf(severity as (typeof SEVERITY_ORDER)[number]);

/** A path below the node root, as the text report prints it. */
function underRoot(path: string, root: string): string {
  const base = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(base) ? path.slice(base.length) : path === root ? "." : path;
}

/** Paths a group of like findings names in its head; the rest are counted there and all are listed under "why". */
export const HTML_FINDING_PATHS_SHOWN = 8;

interface FindingGroup {
  severity: string;
  code: string;
  nextStep: string | undefined;
  commands: string[];
  members: { path: string; message: string }[];
}

/**
 * Findings that say the same thing to do (severity, code, next step and
 * command alike; eight OffsetAheadOfHead findings of one node) as one group:
 * one short item, its paths listed, each finding's message under "why".
 */
function groupFindings(findings: { finding: NodeFindingInput; path: string }[]): FindingGroup[] {
  const groups = new Map<string, FindingGroup>();
  for (const { finding, path } of findings) {
    const severity = String(finding.severity);
    const code = String(finding.code);
    const nextStep = typeof finding.nextStep === "string" ? finding.nextStep : undefined;
    const commands = nextStepCommands(finding);
    const key = JSON.stringify([severity, code, nextStep ?? null, commands]);
    let group = groups.get(key);
    if (group === undefined) {
      group = { severity, code, nextStep, commands, members: [] };
      groups.set(key, group);
    }
    group.members.push({ path, message: String(finding.message) });
  }
  return [...groups.values()];
}

function findingGroupHtml(group: FindingGroup): string {
  const shown = group.members.slice(0, HTML_FINDING_PATHS_SHOWN);
  const more = group.members.length - shown.length;
  const paths =
    shown.map((member) => `<span class="mono finding-path">${escapeText(member.path === "" ? "." : member.path)}</span>`).join(" ") +
    (more > 0 ? ` <span class="muted">and ${formatCount(more)} more (under why)</span>` : "");
  const why = group.members
    .map((member) =>
      group.members.length === 1
        ? `<p>${escapeText(member.message)}</p>`
        : `<li><span class="mono">${escapeText(member.path)}</span>: ${escapeText(member.message)}</li>`,
    )
    .join("");
  return (
    `<li class="node-finding sev-${escapeHtml(group.severity)}" data-severity="${escapeHtml(group.severity)}" data-code="${escapeHtml(group.code)}">` +
    `<div class="finding-head"><span class="badge ${escapeHtml(group.severity)}">${escapeHtml(group.severity)}</span> ` +
    `<span class="mono finding-code">${escapeText(group.code)}</span>` +
    (group.members.length > 1 ? ` <span class="finding-count">&times; ${formatCount(group.members.length)}</span>` : "") +
    ` ${paths}` +
    `<details class="why"><summary>why</summary>${group.members.length === 1 ? why : `<ul>${why}</ul>`}</details></div>` +
    (group.nextStep === undefined ? "" : `<p class="next-step"><b>Next step:</b> ${escapeText(group.nextStep)}</p>`) +
    commandsHtml(group.commands) +
    `</li>`
  );
}

const nodeRoot = (node: HtmlNodeInput): string => (typeof node.path === "string" ? node.path : "");
const nodeVerdict = (node: HtmlNodeInput): string => (typeof node.verdict === "string" ? node.verdict : "unknown");

/**
 * Every node root the report carries (`node`, or each of `nodes`), worst
 * verdict first, then by root (numbers as numbers), each with the ids its
 * section and boot-forecast table get on the page: `node` and
 * `boot-forecast` for the first, as a one-node report has always had them.
 */
function reportNodes(report: HtmlReportInput): { node: HtmlNodeInput; id: string; forecastId: string }[] {
  const nodes = report.nodes ?? (report.node === undefined ? [] : [report.node]);
  return [...nodes]
    .sort((a, b) => severityRank(nodeVerdict(b)) - severityRank(nodeVerdict(a)) || naturalCompare(nodeRoot(a), nodeRoot(b)))
    .map((node, index) => ({
      node,
      id: index === 0 ? "node" : `node-${index + 1}`,
      forecastId: index === 0 ? "boot-forecast" : `boot-forecast-${index + 1}`,
    }));
}

/**
 * One node root's own verdict and every finding that is not clean (docs/node.md N9),
 * first on the page (docs/html-report.md): a refused WAL is not hidden behind
 * clean partitions. Titled with its root, so a scan of several node roots
 * shows which one each finding is about. Worst first, then by path (numbers
 * as numbers); each item is one short head (severity, code, the files it
 * concerns), its next step and command, and the full explanation folded under "why".
 */
function nodeSection(node: HtmlNodeInput, id: string, forecastId: string): string {
  const verdict = nodeVerdict(node);
  const root = nodeRoot(node);
  const findings = nodeFindings(node)
    .filter((finding) => finding.severity !== "clean")
    .map((finding) => ({ finding, path: underRoot(String(finding.path ?? ""), root) }))
    .sort((a, b) => severityRank(b.finding.severity) - severityRank(a.finding.severity) || naturalCompare(a.path, b.path));
  const groups = groupFindings(findings);
  return (
    `<section id="${id}" class="node-section" data-root="${escapeHtml(root)}" data-verdict="${escapeHtml(verdict)}" aria-labelledby="${id}-heading">` +
    `<h2 id="${id}-heading">Node findings${root === "" ? "" : `: <span class="mono node-root">${escapeText(root)}</span>`}</h2>` +
    `<p class="section-note">Node verdict: <b>${escapeHtml(verdict)}</b> (the worst of the metadata findings and the partitions)` +
    `${root === "" ? "" : `; paths are relative to <span class="mono">${escapeText(root)}</span>`}.</p>` +
    (groups.length === 0
      ? "<p>No node finding needs attention.</p>"
      : `<ul class="node-findings">${groups.map(findingGroupHtml).join("")}</ul>`) +
    bootForecastLine(node, forecastId) +
    `</section>`
  );
}

/** One section per node root the report carries, worst first (docs/html-report.md). */
function nodeSections(report: HtmlReportInput): string {
  return reportNodes(report)
    .map(({ node, id, forecastId }) => nodeSection(node, id, forecastId))
    .join("\n");
}

/**
 * docs/repair.md §6.6: the partition findings (offsets a salvage recorded as
 * lost, a salvage record that cannot be read), listed in the header where
 * they are read without the script, worst first, each with its next step.
 */
function partitionFindingsSection(report: HtmlReportInput): string {
  const rows = (report.partitions ?? []).flatMap((partition) =>
    (partition.findings ?? []).map(
      (finding) =>
        `<li class="node-finding sev-${escapeHtml(finding.severity)}"><b>${escapeHtml(finding.severity)}</b> ` +
        `<span class="mono">${escapeHtml(finding.code)}</span> <span class="mono finding-path">${escapeText(partition.path)}</span>: ` +
        `${escapeText(finding.message)}<br><span class="next-step"><b>Next step:</b> ${escapeText(finding.nextStep)}</span></li>`,
    ),
  );
  if (rows.length === 0) return "";
  return `<h2>Recorded beside the partitions</h2><ul class="node-findings partition-findings">${rows.join("")}</ul>`;
}

/** What each verdict and action means, said once for the whole page (the cards carry only their next step). */
function meanings(): string {
  const verdicts: [string, string][] = [
    ["clean", "every byte of every segment is proven; the partition is served as it is."],
    [
      "repairable",
      "the only problems are tails no verified batch follows, an index to rebuild or trim, or scratch files; a repair preserves every byte it cuts or replaces (segscan restore puts them back).",
    ],
    ["refused", "damage hides data that may be durable, so nothing is cut; the scope line says which offsets are at stake."],
    ["failed", "a read error stopped the scan of this partition; nothing was concluded and nothing was changed."],
    [
      "warn",
      "(a node finding's severity) something to look at that no repair changes; its message says what it means. Alone, it still exits 0.",
    ],
    ["info", "(a node finding's severity) a fact worth knowing, not a problem. Alone, it exits 0."],
  ];
  const actions: [string, string][] = [
    ["serve", "serve it as it is."],
    ["repair", "segscan repair --apply cuts each torn tail at its cut point, rebuilds or trims the index and sweeps scratch files."],
    ["tombstone", "do not serve it, and leave every file exactly where it is as evidence."],
    ["rebuild-from-peers", "move the files aside (never deleted) and copy the partition from a healthy replica."],
    ["retry", "fix the storage and scan again; nothing was changed."],
  ];
  const items = (pairs: [string, string][], badge: boolean): string =>
    pairs
      .map(
        ([name, words]) =>
          `<dt>${badge ? `<span class="badge ${name}">${name}</span>` : `<span class="mono">${name}</span>`}</dt><dd>${escapeHtml(words)}</dd>`,
      )
      .join("");
  return `<h2 id="glossary-heading">What the verdicts and actions mean</h2><dl class="meanings">${items(verdicts, true)}${items(actions, false)}</dl>`;
}

/** The boot forecast in one line beside a node's findings, linking to its table further down. */
function bootForecastLine(node: HtmlNodeInput, forecastId: string): string {
  const forecast = node.bootForecast;
  if (!Array.isArray(forecast)) return "";
  if (forecast.length === 0) return `<p class="forecast-line"><b>Boot forecast:</b> the server's next boot changes nothing on disk.</p>`;
  const destructive = forecast.filter((entry) => entry.destructive).length;
  return (
    `<p class="forecast-line"><b>Boot forecast:</b> the server's next boot would make ${formatCount(forecast.length)} ` +
    `change${forecast.length === 1 ? "" : "s"} to these files, ` +
    `${destructive === 0 ? "none destructive" : `<b>${formatCount(destructive)} destructive</b>`} ` +
    `(<a href="#${forecastId}">the boot forecast</a>).</p>`
  );
}

/** One node root's boot forecast table; titled with its root when the report carries several. */
function bootForecast(node: HtmlNodeInput, forecastId: string, several: boolean): string {
  const forecast = node.bootForecast;
  if (!Array.isArray(forecast)) return "";
  const root = nodeRoot(node);
  const heading = `<h2 id="${forecastId}">Boot forecast${several && root !== "" ? `: <span class="mono">${escapeText(root)}</span>` : ""}</h2>`;
  if (forecast.length === 0) return `${heading}<p>The server's next boot changes nothing on disk.</p>`;
  const destructive = forecast.filter((entry) => entry.destructive).length;
  // Each cell names its column, so a narrow screen can stack a row's cells under their names (style.ts).
  const rows = forecast.map(
    (entry) =>
      `<tr class="${entry.destructive ? "destructive" : ""}"><td data-label="effect">${escapeHtml(entry.effect)}</td>` +
      `<td class="mono" data-label="path">${escapeText(root === "" ? entry.path : underRoot(entry.path, root))}</td>` +
      `<td data-label="data">${entry.destructive ? "<b>destructive</b>" : "no data lost"}</td><td data-label="detail">${escapeText(entry.detail)}</td></tr>`,
  );
  return (
    `${heading}<p>What the server would do to these files on its next boot: ` +
    `${formatCount(forecast.length)} effect${forecast.length === 1 ? "" : "s"}, ${formatCount(destructive)} destructive` +
    `${root === "" ? "" : `; paths relative to <span class="mono">${escapeText(root)}</span>`}.</p>` +
    `<table class="forecast"><thead><tr><th scope="col">effect</th><th scope="col">path</th><th scope="col">data</th>` +
    `<th scope="col">detail</th></tr></thead><tbody>${rows.join("")}</tbody></table>`
  );
}

/** Every node root's boot forecast table, in the order of their sections. */
function bootForecasts(report: HtmlReportInput): string {
  const nodes = reportNodes(report);
  return nodes.map(({ node, forecastId }) => bootForecast(node, forecastId, nodes.length > 1)).join("\n");
}

/** Hatches, dots and glyphs the bars share; every inline SVG in the page can reference them. */
const SVG_DEFS = `<svg width="0" height="0" style="position:absolute" aria-hidden="true" focusable="false"><defs>
<pattern id="pat-residue-nonzero" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
<rect width="6" height="6" fill="#fbe0cc"/><rect width="2.5" height="6" fill="#D55E00"/></pattern>
<pattern id="pat-residue-zero" width="6" height="6" patternUnits="userSpaceOnUse">
<rect width="6" height="6" fill="#e4f3fc"/><circle cx="3" cy="3" r="1.3" fill="#1f78a8"/></pattern>
<pattern id="pat-intact" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">
<rect width="8" height="8" fill="${MARK_COLORS.intact}"/><rect width="1.5" height="8" fill="#c9efe3"/></pattern>
<pattern id="pat-gap" width="4" height="4" patternUnits="userSpaceOnUse">
<rect width="4" height="4" fill="#E69F00"/><rect width="1.5" height="4" fill="#000"/></pattern>
<path id="glyph-damage" d="M-6 -3 H6 L0 6 Z"/>
<path id="glyph-survivor" d="M0 -3 L5 3 L0 9 L-5 3 Z"/>
<path id="glyph-warning" d="M0 -3 L6 8 H-6 Z"/>
</defs></svg>`;

function legendItem(svgBody: string, text: string): string {
  return `<li><svg class="bar" style="width:44px;height:38px" role="img" aria-label="${escapeHtml(text)}">${svgBody}</svg><span>${escapeHtml(text)}</span></li>`;
}

function legend(): string {
  return (
    `<ul class="legend" aria-label="Legend">` +
    [
      legendItem(`<rect class="prefix" x="2" y="7" width="40" height="18"/>`, "proven prefix P (solid)"),
      legendItem(`<rect class="range intact" x="2" y="7" width="40" height="18"/>`, "intact after the damage (green, striped)"),
      legendItem(
        `<rect class="residue-nonzero" x="2" y="7" width="40" height="18"/><rect class="range unreadable" x="3" y="8" width="38" height="16"/>`,
        "unreadable: offsets at stake (outlined)",
      ),
      legendItem(`<rect class="residue-zero" x="2" y="7" width="40" height="18"/>`, "residue, all zero (dots)"),
      legendItem(`<rect class="residue-nonzero" x="2" y="7" width="40" height="18"/>`, "residue, not all zero (hatched)"),
      legendItem(
        `<rect class="damage-line" x="20" y="3" width="4" height="26"/><use class="damage-cap" href="#glyph-damage" x="22" y="3"/>` +
          `<text class="mark-label" x="22" y="37" text-anchor="middle">D</text>`,
        "D: damage position (▼)",
      ),
      legendItem(
        `<rect class="survivor-line" x="20" y="3" width="4" height="26"/><use class="survivor-cap" href="#glyph-survivor" x="22" y="3"/>` +
          `<text class="mark-label" x="22" y="37" text-anchor="middle">S</text>`,
        "S: surviving batch (◆)",
      ),
      legendItem(
        `<line class="cut-line" x1="14" x2="14" y1="0" y2="31"/><text class="cut-label" x="17" y="37">cut</text>`,
        "cut point a repair makes (dashed)",
      ),
      legendItem(
        `<rect class="gap-mark" x="19" y="5" width="6" height="22"/><text class="mark-label" x="22" y="37" text-anchor="middle">G</text>`,
        "G: forward offset gap (striped)",
      ),
      legendItem(
        `<use class="warning-mark" href="#glyph-warning" x="22" y="3"/><text class="mark-label" x="22" y="37" text-anchor="middle">W</text>`,
        "W: warning (▲)",
      ),
      legendItem(
        `<rect class="file" x="2" y="7" width="40" height="18"/>` +
          [6, 14, 22, 30, 38].map((x) => `<line class="tick" x1="${x}" x2="${x}" y1="26" y2="31"/>`).join(""),
        "index entries (ticks; count only, spread evenly)",
      ),
    ].join("") +
    `</ul>`
  );
}

/** The nodes' findings of one severity, as the headline counts them: every `findings` array of every node section, whatever its code. */
function nodeFindingsOf(report: HtmlReportInput, severity: string): { code: string }[] {
  return reportNodes(report)
    .flatMap(({ node }) => nodeFindings(node))
    .filter((finding) => finding.severity === severity)
    .map((finding) => ({ code: String(finding.code) }));
}

/**
 * The page's headline (docs/html-report.md): the scan's one verdict (docs/node.md
 * N0) first, then what makes it — partitions and node findings alike, so a
 * refused node finding is never behind "all clean".
 */
function headlineOf(report: HtmlReportInput): { word: string; rest: string } {
  const summary = report.summary;
  const problems = summary.repairable + summary.refused + summary.failed;
  const partitions =
    summary.partitions === 0
      ? "no partitions were found (no directory held a .log file)"
      : problems === 0
        ? `all ${formatCount(summary.partitions)} partitions are clean`
        : `${formatCount(problems)} of ${formatCount(summary.partitions)} partitions need attention: ` +
          `${formatCount(summary.repairable)} repairable, ${formatCount(summary.refused)} refused, ${formatCount(summary.failed)} failed`;
  const node = ["failed", "refused", "repairable", "warn"]
    .map((severity) => [severity, nodeFindingsOf(report, severity)] as const)
    .filter(([, findings]) => findings.length > 0)
    .map(([severity, findings]) => `${formatCount(findings.length)} ${severity} (${[...new Set(findings.map((f) => f.code))].join(", ")})`);
  const recorded = report.summary.findings ?? { warn: 0, failed: 0 };
  const recordedText =
    recorded.failed + recorded.warn === 0
      ? ""
      : `; partition findings: ${[
          ...(recorded.failed > 0 ? [`${formatCount(recorded.failed)} failed (SalvageRecordUnreadable)`] : []),
          ...(recorded.warn > 0 ? [`${formatCount(recorded.warn)} warn (SalvageLostOffsets)`] : []),
        ].join("; ")}`;
  const nodeCount = reportNodes(report).length;
  const nodeText =
    nodeCount === 0
      ? ""
      : node.length === 0
        ? nodeCount === 1
          ? "; the node's metadata and offsets are clean"
          : `; the ${formatCount(nodeCount)} nodes' metadata and offsets are clean`
        : `; ${nodeCount === 1 ? "node findings" : `findings of ${formatCount(nodeCount)} nodes`}: ${node.join("; ")}`;
  const verdict = report.verdict;
  const word =
    verdict === "clean" || verdict === "info" || verdict === "warn" ? `Verdict: ${verdict}` : `Verdict: ${verdict.toUpperCase()}`;
  return { word, rest: `${partitions}${recordedText}${nodeText}.` };
}

/**
 * The verdict as a banner in its verdict's colour, first on the page
 * (docs/html-report.md): the one sentence of the headline, the verdict word
 * set apart. Colour is not the only cue: each verdict also has its own border
 * style and mark (style.ts).
 */
function verdictBanner(report: HtmlReportInput): string {
  const { word, rest } = headlineOf(report);
  const verdict = escapeHtml(report.verdict);
  return (
    `<section class="verdict-banner v-${verdict}" id="verdict" data-verdict="${verdict}" aria-label="Verdict">` +
    `<p class="headline"><b class="verdict-word">${escapeHtml(word)}</b> — ${escapeText(rest)}</p></section>`
  );
}

/**
 * Each partition's next-step commands, shell-quoted here (the one quoting,
 * src/domain/command.ts) and embedded beside the report, keyed by the
 * partition's index; the page's script shows them under the sentence.
 */
function partitionCommands(report: HtmlReportInput): Record<string, string[]> {
  const commands: Record<string, string[]> = {};
  report.partitions.forEach((partition, index) => {
    const lines = nextStepCommands(partition);
    if (lines.length > 0) commands[index] = lines;
  });
  return commands;
}

/** The partitions' list, filled by the page's script, with its filters and pager. */
const PARTITIONS_MAIN = `<main>
<h2 id="partitions-heading" tabindex="-1">Partitions</h2>
<p class="muted" id="prefix-note"></p>
<div class="toolbar" role="search" aria-label="Filter partitions">
<label><input type="checkbox" id="only-problems"> only partitions that are not clean</label>
<label>search path <input type="search" id="search" placeholder="e.g. topics/3  (press /)" autocomplete="off"></label>
<label>sort <select id="sort"><option value="worst">worst first</option><option value="path">by path</option></select></label>
<label>scale <select id="scale"><option value="partition">per partition</option><option value="report">whole report</option><option value="fit">fit each bar</option></select></label>
<label>rows <select id="page-size"></select></label>
<span class="pager"><button type="button" id="prev" aria-label="previous page">&larr;</button><span id="page-label"></span><button type="button" id="next" aria-label="next page">&rarr;</button></span>
</div>
<p class="status" id="status" role="status" aria-live="polite">Loading the report&hellip;</p>
<p class="print-note" id="print-note"></p>
<noscript><p>The partition drawings need JavaScript; the verdict, the node findings and everything below the partitions are complete without it.</p></noscript>
<ol class="partitions" id="partitions" aria-labelledby="partitions-heading"></ol>
<p class="empty-list" id="empty" hidden>No partition matches the filters.</p>
</main>`;

/** "This scan": the version, engine, bytes, time and options the report was made with. */
function factsList(report: HtmlReportInput): string {
  const summary = report.summary;
  const opts = report.options;
  const facts = [
    ["segscan", report.segscan],
    ["engine", report.engine],
    ["bytes scanned", `${formatCount(summary.bytesScanned)} (${formatBytes(summary.bytesScanned)})`],
    ["elapsed", `${formatCount(Math.round(summary.elapsedMs))} ms`],
    ["verify", opts.verify],
    ["replicas", formatCount(opts.replicaCount)],
    ["probe budget", `${formatCount(opts.probeBudgetUnits)} units`],
    ["window", `${formatCount(opts.windowBytes)} bytes`],
    ...(opts.maxBatchBytes === undefined ? [] : [["max batch (override)", `${formatCount(opts.maxBatchBytes)} bytes`]]),
  ];
  return facts.map(([name, value]) => `<li><b>${escapeHtml(name)}</b> ${escapeHtml(value)}</li>`).join("");
}

/** The complete HTML document for a JSON scan report. */
export function renderHtmlReport(report: HtmlReportInput, options: HtmlRenderOptions = {}): string {
  const json = scriptSafeJson(report);
  const gzip = options.embed === "gzip" || (options.embed !== "plain" && Buffer.byteLength(json) > HTML_PLAIN_JSON_MAX_BYTES);
  const payload = gzip ? gzipSync(Buffer.from(JSON.stringify(report)), { level: 9 }).toString("base64") : json;
  const config = scriptSafeJson({
    pageSizes: HTML_PAGE_SIZES,
    maxIndexTicks: HTML_MAX_INDEX_TICKS,
    onlyProblemsAbove: HTML_ONLY_PROBLEMS_ABOVE_PARTITIONS,
    searchDebounceMs: HTML_SEARCH_DEBOUNCE_MS,
    zoomBelowFraction: HTML_ZOOM_BELOW_FRACTION,
    zoomMarginFraction: HTML_ZOOM_MARGIN_FRACTION,
    tornEvidenceWords: TORN_EVIDENCE_WORDS,
    severityOrder: SEVERITY_ORDER,
  });
  const title = options.title ?? "segscan report";
  // Problems first (docs/html-report.md): the verdict, the node's findings, the partitions worst first;
  // the boot forecast's table, the scan's facts and the glossary and legend after them.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="segscan ${escapeHtml(report.segscan)}">
<title>${escapeHtml(title)}</title>
<style>${HTML_REPORT_CSS}</style>
</head>
<body>
<a class="skip" href="#partitions-heading">Skip to the partitions</a>
${SVG_DEFS}
<header class="summary">
<h1>${escapeHtml(title)}</h1>
${verdictBanner(report)}
</header>
${nodeSections(report)}
${partitionFindingsSection(report)}
${PARTITIONS_MAIN}
<div class="reference">
${bootForecasts(report)}
<section id="scan-facts" aria-labelledby="scan-facts-heading"><h2 id="scan-facts-heading">This scan</h2>
<ul class="facts">${factsList(report)}</ul>
${countsTable(report)}
</section>
<section id="glossary" aria-labelledby="glossary-heading">
${meanings()}
<h2>How to read the drawings</h2>
<p>Each segment is a bar, in offset order; a partition's segments share one scale (the scale menu can share it across the report); hover over or tab to any mark for its exact numbers (arrow keys move between marks, Esc hides the note).</p>
${legend()}
<p class="muted" id="scale-note"></p>
</section>
</div>
<div id="tooltip" role="tooltip" hidden></div>
<script type="application/json" id="segscan-config">${config}</script>
<script type="application/json" id="segscan-data"${gzip ? ` data-encoding="gzip+base64"` : ""}>${payload}</script>
<script type="application/json" id="segscan-commands">${scriptSafeJson(partitionCommands(report))}</script>
<script>${HTML_REPORT_SCRIPT}</script>
</body>
</html>
`;
}
