/**
 * `segscan fleet --html <file>` (docs/fleet.md "Outputs"): one self-contained
 * page, no script, problems first: a coloured verdict banner, the cluster's
 * findings with their next steps, then a row per partition that is not clean
 * everywhere (its replicas as lanes on one offset scale: proven offsets, intact
 * offsets past a damage, unreadable claims and forward gaps, torn-tail cuts;
 * the ranges lost on every replica marked across all lanes; its next steps
 * with the commands to paste), then the summary, and the legend last. Every
 * legend swatch is drawn with the very class its mark is drawn with.
 */
import { MARK_COLORS, OKABE_ITO } from "../report/html/index.js";
import { TORN_TAILS_CLAIM } from "../policy/torn-evidence.js";
import { formatCount } from "../report/format.js";
import { FORWARD_GAP } from "./adapter.js";
import { everyReplicaWords, verdictCounts } from "./format.js";
import type { ClusterVerdict, FleetMetadata, FleetNode, FleetPartition, FleetStep, FleetSummary } from "./schema.js";

/** The lost-everywhere band's colour: the browser tests read it back from a screenshot. */
export const FLEET_LOST_COLOR = MARK_COLORS.damage;

/** Each verdict's banner and badge colours: an Okabe-Ito colour, with the text colour that reads on it. */
export const FLEET_VERDICT_COLORS: Record<ClusterVerdict, { background: string; text: string }> = {
  clean: { background: OKABE_ITO.bluishGreen, text: "#fff" },
  lagging: { background: OKABE_ITO.blue, text: "#fff" },
  degraded: { background: OKABE_ITO.orange, text: "#000" },
  unknown: { background: OKABE_ITO.reddishPurple, text: "#000" },
  failed: { background: OKABE_ITO.reddishPurple, text: "#000" },
  conflict: { background: OKABE_ITO.vermillion, text: "#fff" },
  lost: { background: OKABE_ITO.vermillion, text: "#fff" },
  diverged: { background: OKABE_ITO.vermillion, text: "#fff" },
};

function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) =>
    ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;",
  );
}

const offset = (value: string): string => formatCount(BigInt(value));
const range = (r: { from: string; to: string }): string => (r.from === r.to ? offset(r.from) : `${offset(r.from)}..${offset(r.to)}`);

const verdictClasses = Object.entries(FLEET_VERDICT_COLORS)
  .map(([verdict, { background, text }]) => `.v-${verdict}{background:${background};color:${text}}`)
  .join("");

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.3rem;margin:0 0 .5rem}
h2.section{font-size:1.05rem;margin:1.2rem 0 .4rem}
.banner{padding:.6rem .9rem;border-radius:4px;font-size:1.1rem;margin:.2rem 0 1rem}
.banner strong{font-size:1.25rem;margin-right:.4rem}
.summary{margin:.5rem 0 1rem}
.summary td{padding:0 .8rem 0 0;vertical-align:top}
.part{border-top:1px solid #ddd;padding:.6rem 0}
.part h2{font-size:1rem;margin:0 0 .3rem;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.verdict{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.8rem;margin-left:.5rem}
${verdictClasses}
.lanes{position:relative;margin:.3rem 0 .2rem 9rem}
.lane{position:relative;height:18px;margin:3px 0;background:#f1f1f1}
.lane .name{position:absolute;left:-9rem;width:8.6rem;text-align:right;font-size:.8rem;overflow:hidden;white-space:nowrap}
.bar{position:absolute;top:0;height:100%;min-width:2px}
.proven{background:${MARK_COLORS.prefix}}.intact{background:${OKABE_ITO.bluishGreen}}
.unreadable{background:repeating-linear-gradient(45deg,${OKABE_ITO.vermillion} 0 4px,#fff 4px 8px)}
.cut{background:repeating-linear-gradient(-45deg,#000 0 3px,#fff 3px 6px)}
.lost{position:absolute;top:0;bottom:0;background:${FLEET_LOST_COLOR};min-width:3px}
.diverge{position:absolute;top:-3px;bottom:-3px;width:3px;background:${OKABE_ITO.reddishPurple}}
.axis{display:flex;justify-content:space-between;margin-left:9rem;font-size:.75rem;color:#666;font-family:ui-monospace,monospace}
.notes{margin:.3rem 0 0 9rem;font-size:.85rem;padding-left:1.2rem}
.notes li.bad,.problems li.bad{color:${OKABE_ITO.vermillion}}
.steps{margin:.3rem 0 0 9rem;font-size:.85rem;padding-left:1.2rem;color:#222}
.problems .steps{margin-left:0}
.cmd{display:block;font-family:ui-monospace,monospace;background:#f4f4f4;padding:.15rem .4rem;margin:.15rem 0;overflow-wrap:anywhere;color:#222}
.legend{margin-top:1.2rem;font-size:.85rem;line-height:1.9}
.legend .key{display:inline-block;white-space:nowrap;margin-right:1rem}
.legend .sw{position:static;display:inline-block;width:1.6rem;height:.9rem;vertical-align:middle;margin:0 .35rem 0 0;border:1px solid #bbb}
.legend .sw.diverge{width:3px;height:1.1rem}
`;

function percent(value: bigint, span: { from: bigint; to: bigint }): number {
  const width = span.to - span.from + 1n;
  return (Number(value - span.from) / Number(width)) * 100;
}

/** A bar from `from` to `to` (inclusive offsets) on the span's scale, kept inside the lane. */
function bar(kind: string, from: string, to: string, span: { from: bigint; to: bigint }, title: string): string {
  const left = Math.min(Math.max(percent(BigInt(from), span), 0), 100);
  const right = Math.min(Math.max(percent(BigInt(to) + 1n, span), left), 100);
  return `<div class="bar ${kind}" style="left:${left.toFixed(3)}%;width:${(right - left).toFixed(3)}%" title="${escapeHtml(title)}"></div>`;
}

function stepsHtml(steps: readonly FleetStep[]): string {
  if (steps.length === 0) return "";
  const items = steps.map((step) => {
    const command = step.command === null ? "" : `<code class="cmd">${escapeHtml(step.command)}</code>`;
    return `<li class="step" data-about="${escapeHtml(step.about)}">${escapeHtml(step.text)}${command}</li>`;
  });
  return `<ol class="steps">${items.join("")}</ol>`;
}

/** A lane's label: the node and its role (short enough for the name column); the title says more. */
function laneLabel(partition: FleetPartition, replica: FleetPartition["replicas"][number]): { text: string; title: string } {
  const text = `${replica.node} · ${replica.role}`;
  if (replica.role === "diverged") {
    const odd = partition.divergence.some((entry) => entry.majority !== null && entry.odd.includes(replica.node));
    return {
      text,
      title: `${replica.node} diverged: ${odd ? "the odd one out (the majority by checksum holds other batches)" : "no majority decides"}`,
    };
  }
  return { text, title: text };
}

type Span = { from: bigint; to: bigint };

function partitionHtml(partition: FleetPartition): string {
  const parts: string[] = [];
  parts.push(
    `<section class="part" data-key="${escapeHtml(partition.key)}" data-verdict="${partition.verdict}"><h2>${escapeHtml(partition.key)}<span class="verdict v-${partition.verdict}">${partition.verdict}</span></h2>`,
  );
  if (partition.span === null) {
    parts.push(`<div class="notes">no replica holds or claims an offset</div>${stepsHtml(partition.nextSteps)}</section>`);
    return parts.join("");
  }
  const span = { from: BigInt(partition.span.from), to: BigInt(partition.span.to) };
  parts.push(`<div class="lanes">`);
  for (const replica of partition.replicas) parts.push(laneHtml(partition, replica, span));
  for (const r of partition.lost.filter((lost) => lost.kind === "durable")) {
    const left = percent(BigInt(r.from), span);
    const right = percent(BigInt(r.to) + 1n, span);
    parts.push(
      `<div class="lost" data-lost="${r.from}..${r.to}" style="left:${left.toFixed(3)}%;width:${Math.max(0, right - left).toFixed(3)}%" title="${escapeHtml(`${everyReplicaWords(partition.judged)}: ${range(r)} (${formatCount(BigInt(r.count))} offsets)`)}"></div>`,
    );
  }
  for (const divergence of partition.divergence) {
    const at = Math.min(Math.max(percent(BigInt(divergence.offset), span), 0), 100);
    parts.push(
      `<div class="diverge" data-diverge="${divergence.offset}" style="left:${at.toFixed(3)}%" title="${escapeHtml(divergence.message)}"></div>`,
    );
  }
  parts.push(`</div><div class="axis"><span>${offset(partition.span.from)}</span><span>${offset(partition.span.to)}</span></div>`);
  const notes = notesHtml(partition);
  if (notes.length > 0) parts.push(`<ul class="notes">${notes.join("")}</ul>`);
  parts.push(stepsHtml(partition.nextSteps));
  parts.push(`</section>`);
  return parts.join("");
}

/** One replica's lane: its proven, intact and unreadable ranges and its cuts as bars on the partition's offset scale. */
function laneHtml(partition: FleetPartition, replica: FleetPartition["replicas"][number], span: Span): string {
  const bars: string[] = [];
  for (const r of replica.proven) bars.push(bar("proven", r.from, r.to, span, `${replica.node} proves ${range(r)}`));
  for (const r of replica.intact) bars.push(bar("intact", r.from, r.to, span, `${replica.node} holds ${range(r)} past a damage`));
  for (const r of replica.unreadable) {
    const title =
      r.code === FORWARD_GAP ? `${replica.node}: a forward gap skips ${range(r)}` : `${replica.node}: ${r.code}, ${range(r)} unreadable`;
    bars.push(bar("unreadable", r.from, r.to, span, title));
  }
  for (const cut of replica.cuts) {
    // The cut starts one past the proven end; what it removes is the claim when the torn header decodes, else a marker there.
    const to = cut.claimed === null ? cut.fromOffset : cut.claimed.to;
    const claims = cut.claimed === null ? "" : ` (claims ${range(cut.claimed)})`;
    bars.push(bar("cut", cut.fromOffset, to, span, `${replica.node}: torn tail cut from ${offset(cut.fromOffset)}${claims}`));
  }
  const label = laneLabel(partition, replica);
  return `<div class="lane" data-node="${escapeHtml(replica.node)}" data-role="${replica.role}"><span class="name" title="${escapeHtml(label.title)}">${escapeHtml(label.text)}</span>${bars.join("")}</div>`;
}

/** The notes under the lanes: what is lost or unclaimed, the replicas not judged or lagging, divergences, offsets ahead. */
function notesHtml(partition: FleetPartition): string[] {
  const notes: string[] = [];
  for (const r of partition.lost) {
    if (r.kind === "durable")
      notes.push(
        `<li class="bad">${escapeHtml(everyReplicaWords(partition.judged))}: ${range(r)}${r.openEnded ? " and possibly more" : ""} (${formatCount(BigInt(r.count))} offsets)</li>`,
      );
    else
      notes.push(
        `<li>${range(r)}: ${r.kind === "unacknowledged" ? `only in torn tails, cut everywhere: ${escapeHtml(TORN_TAILS_CLAIM)}` : "claimed by no replica"}</li>`,
      );
  }
  for (const replica of partition.replicas) {
    if (replica.role === "unknown") notes.push(`<li>${escapeHtml(replica.node)}: not covered by its report: what it holds is unknown</li>`);
    else if (replica.role === "failed")
      notes.push(
        `<li class="bad">${escapeHtml(replica.node)}: its scan failed (${escapeHtml(replica.error ?? "")}): what it holds is unknown</li>`,
      );
    else if (replica.role === "lagging" && replica.rebuildFrom !== null)
      notes.push(`<li>${escapeHtml(replica.node)} (${replica.role}): catch up from ${escapeHtml(replica.rebuildFrom)}</li>`);
  }
  for (const divergence of partition.divergence) notes.push(`<li class="bad">${escapeHtml(divergence.message)}</li>`);
  for (const ahead of partition.offsetsAhead) notes.push(`<li>${escapeHtml(ahead.message)}</li>`);
  return notes;
}

/** The banner's sentence: the verdict and what makes it. */
function bannerText(verdict: ClusterVerdict, nodes: number, summary: FleetSummary): string {
  const counts = verdictCounts(summary).map(([word, count]) => `${formatCount(count)} ${word}`);
  const metadata: string[] = [];
  if (summary.metadataOpsLost !== "0") metadata.push(`${formatCount(BigInt(summary.metadataOpsLost))} committed metadata ops lost`);
  if (summary.identityConflicts > 0)
    metadata.push(`${summary.identityConflicts} identity conflict${summary.identityConflicts === 1 ? "" : "s"}`);
  if (summary.unidentified > 0) metadata.push(`${formatCount(summary.unidentified)} partition line(s) not merged`);
  return (
    `<strong>verdict ${verdict.toUpperCase()}</strong> ${nodes} node${nodes === 1 ? "" : "s"}, ${formatCount(summary.partitions)} partition${summary.partitions === 1 ? "" : "s"}` +
    (counts.length === 0 ? "" : `: ${counts.join(", ")}`) +
    (metadata.length === 0 ? "" : ` · ${escapeHtml(metadata.join(", "))}`)
  );
}

/** The legend, last: each swatch drawn with the class of the mark it names, so it looks as the mark does. */
function legendHtml(): string {
  const keys: [string, string][] = [
    ["bar proven", "proven (the batches verify)"],
    ["bar intact", "intact past a damage"],
    ["bar unreadable", "unreadable, or skipped by a forward gap"],
    ["bar cut", "torn tail (what a cut removes)"],
    ["lost", "lost on every replica"],
    ["diverge", "divergent batch"],
  ];
  return `<div class="legend">${keys
    .map(([kind, label]) => `<span class="key"><span class="sw ${kind}"></span>${escapeHtml(label)}</span>`)
    .join("")}</div>`;
}

/** The page: the verdict banner, the cluster's problems, a row per partition given (the caller passes those not clean everywhere), the summary, the legend. */
export function renderFleetHtml(input: {
  verdict: ClusterVerdict;
  nodes: readonly FleetNode[];
  metadata: FleetMetadata;
  summary: FleetSummary;
  partitions: readonly FleetPartition[];
  nextSteps: readonly FleetStep[];
  warnings: readonly string[];
}): string {
  const { verdict, nodes, metadata, summary, partitions, nextSteps, warnings } = input;
  const problems: string[] = [];
  const stepsAbout = (about: string) => nextSteps.filter((step) => step.about === about);
  if (metadata.opsLost !== null) {
    problems.push(
      `<li class="bad">ops ${range(metadata.opsLost)} were committed and no node that boots holds them${stepsHtml(stepsAbout("OpsLost"))}</li>`,
    );
  }
  const shown = new Set<string>();
  for (const conflict of metadata.identityConflicts) {
    problems.push(
      `<li class="bad">${escapeHtml(conflict.code)}: ${escapeHtml(conflict.message)}${shown.has(conflict.code) ? "" : stepsHtml(stepsAbout(conflict.code))}</li>`,
    );
    shown.add(conflict.code);
  }
  for (const warning of warnings) problems.push(`<li>warning: ${escapeHtml(warning)}</li>`);
  const reportSteps = nextSteps.filter((step) => step.about === "unknown" || step.about === "unidentified" || step.about === "replicas");
  if (reportSteps.length > 0) problems.push(`<li>reports${stepsHtml(reportSteps)}</li>`);

  const rows = [
    ["nodes", nodes.map((node) => `${escapeHtml(node.name)} (${escapeHtml(node.file)}, --replicas ${node.replicas})`).join(", ")],
    [
      "partitions",
      `${formatCount(summary.partitions)}: ${summary.clean} clean, ${summary.lagging} lagging, ${summary.degraded} degraded, ${summary.unknown} unknown, ${summary.lost} lost, ${summary.diverged} diverged, ${summary.failed} failed`,
    ],
    ["lost on every replica", `${formatCount(BigInt(summary.lostOffsets))} offsets`],
    [
      "replicas not judged",
      `${formatCount(summary.failedReplicas)} failed, ${formatCount(summary.unknownReplicas)} not covered by their report`,
    ],
    ["highest committed op", metadata.highestCommitted === null ? "unknown" : offset(metadata.highestCommitted)],
    ["metadata ops lost", metadata.opsLost === null ? "none" : range(metadata.opsLost)],
    ["identity conflicts", metadata.identityConflicts.map((conflict) => escapeHtml(conflict.code)).join(", ") || "none"],
  ];
  const clean = summary.partitions - partitions.length;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>segscan fleet</title><style>${CSS}</style></head><body>
<h1>segscan fleet: ${nodes.length} nodes</h1>
<div class="banner v-${verdict}" data-verdict="${verdict}">${bannerText(verdict, nodes.length, summary)}</div>
${problems.length === 0 ? "" : `<section class="problems"><h2 class="section">cluster</h2><ul>${problems.join("")}</ul></section>`}
${partitions.map(partitionHtml).join("\n")}
<p class="clean-count">${clean > 0 ? `${formatCount(clean)} partition(s) clean on every replica are not drawn.` : ""}</p>
<h2 class="section">summary</h2>
<table class="summary">${rows.map(([key, value]) => `<tr><td>${key}</td><td>${value}</td></tr>`).join("")}</table>
${legendHtml()}
</body></html>
`;
}
