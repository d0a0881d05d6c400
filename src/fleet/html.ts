/**
 * `segscan fleet --html <file>` (docs/fleet.md): one self-contained page, no
 * script. Each partition that is not clean everywhere is a row; its replicas
 * are lanes drawn on one offset scale (the partition's span): proven offsets,
 * intact offsets past a damage, unreadable claims, torn-tail cuts, and the
 * ranges lost on every replica marked across all lanes.
 */
import { MARK_COLORS, OKABE_ITO } from "../report/html/index.js";
import { formatCount } from "../report/format.js";
import type { FleetMetadata, FleetNode, FleetPartition, FleetSummary } from "./schema.js";

/** The lost-everywhere band's colour: the browser tests read it back from a screenshot. */
export const FLEET_LOST_COLOR = MARK_COLORS.damage;

function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) =>
    ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;",
  );
}

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.3rem;margin:0 0 .5rem}
.summary{margin:.5rem 0 1rem}
.summary td{padding:0 .8rem 0 0}
.part{border-top:1px solid #ddd;padding:.6rem 0}
.part h2{font-size:1rem;margin:0 0 .3rem;font-family:ui-monospace,monospace}
.verdict{display:inline-block;padding:0 .4rem;border-radius:3px;color:#fff;font-size:.8rem;margin-left:.5rem}
.v-clean{background:${OKABE_ITO.bluishGreen}}.v-lagging{background:${OKABE_ITO.blue}}.v-degraded{background:${OKABE_ITO.orange}}
.v-lost,.v-diverged{background:${OKABE_ITO.vermillion}}.v-failed{background:${OKABE_ITO.reddishPurple}}
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
.notes{margin:.3rem 0 0 9rem;font-size:.85rem}
.notes li.bad{color:${OKABE_ITO.vermillion}}
.legend span{display:inline-block;width:1.2rem;height:.8rem;vertical-align:middle;margin:0 .3rem 0 .8rem}
`;

function percent(value: bigint, span: { from: bigint; to: bigint }): number {
  const width = span.to - span.from + 1n;
  return (Number(value - span.from) / Number(width)) * 100;
}

function bar(kind: string, from: string, to: string, span: { from: bigint; to: bigint }, title: string): string {
  const left = percent(BigInt(from), span);
  const right = percent(BigInt(to) + 1n, span);
  return `<div class="bar ${kind}" style="left:${left.toFixed(3)}%;width:${Math.max(0, right - left).toFixed(3)}%" title="${escapeHtml(title)}"></div>`;
}

function partitionHtml(partition: FleetPartition): string {
  const parts: string[] = [];
  parts.push(
    `<section class="part" data-key="${escapeHtml(partition.key)}" data-verdict="${partition.verdict}"><h2>${escapeHtml(partition.key)}<span class="verdict v-${partition.verdict}">${partition.verdict}</span></h2>`,
  );
  if (partition.span === null) {
    parts.push(`<div class="notes">no replica holds or claims an offset</div></section>`);
    return parts.join("");
  }
  const span = { from: BigInt(partition.span.from), to: BigInt(partition.span.to) };
  parts.push(`<div class="lanes">`);
  for (const replica of partition.replicas) {
    const bars: string[] = [];
    for (const r of replica.proven) bars.push(bar("proven", r.from, r.to, span, `${replica.node} proves ${r.from}..${r.to}`));
    for (const r of replica.intact) bars.push(bar("intact", r.from, r.to, span, `${replica.node} holds ${r.from}..${r.to} past a damage`));
    for (const r of replica.unreadable)
      bars.push(bar("unreadable", r.from, r.to, span, `${replica.node}: ${r.code}, ${r.from}..${r.to} unreadable`));
    for (const cut of replica.cuts) {
      if (cut.claimed !== null) bars.push(bar("cut", cut.claimed.from, cut.claimed.to, span, `${replica.node}: torn tail cut`));
    }
    parts.push(
      `<div class="lane" data-node="${escapeHtml(replica.node)}" data-role="${replica.role}"><span class="name">${escapeHtml(replica.node)} · ${replica.role}</span>${bars.join("")}</div>`,
    );
  }
  for (const r of partition.lost.filter((lost) => lost.kind === "durable")) {
    const left = percent(BigInt(r.from), span);
    const right = percent(BigInt(r.to) + 1n, span);
    parts.push(
      `<div class="lost" data-lost="${r.from}..${r.to}" style="left:${left.toFixed(3)}%;width:${Math.max(0, right - left).toFixed(3)}%" title="lost on every replica: ${r.from}..${r.to} (${r.count} offsets)"></div>`,
    );
  }
  for (const divergence of partition.divergence) {
    const at = percent(BigInt(divergence.offset), span);
    parts.push(
      `<div class="diverge" data-diverge="${divergence.offset}" style="left:${at.toFixed(3)}%" title="${escapeHtml(divergence.message)}"></div>`,
    );
  }
  parts.push(`</div><div class="axis"><span>${partition.span.from}</span><span>${partition.span.to}</span></div>`);
  const notes: string[] = [];
  for (const r of partition.lost) {
    if (r.kind === "durable")
      notes.push(
        `<li class="bad">lost on every replica: ${r.from}..${r.to}${r.openEnded ? " and possibly more" : ""} (${formatCount(BigInt(r.count))} offsets)</li>`,
      );
    else
      notes.push(
        `<li>${r.from}..${r.to}: ${r.kind === "unacknowledged" ? "only in torn tails, never acknowledged" : "claimed by no replica"}</li>`,
      );
  }
  for (const replica of partition.replicas) {
    if (replica.rebuildFrom !== null)
      notes.push(
        `<li>${escapeHtml(replica.node)} (${replica.role}): ${replica.role === "lagging" ? "catch up" : "rebuild"} from ${escapeHtml(replica.rebuildFrom)}</li>`,
      );
  }
  for (const divergence of partition.divergence) notes.push(`<li class="bad">${escapeHtml(divergence.message)}</li>`);
  for (const ahead of partition.offsetsAhead) notes.push(`<li>${escapeHtml(ahead.message)}</li>`);
  if (notes.length > 0) parts.push(`<ul class="notes">${notes.join("")}</ul>`);
  parts.push(`</section>`);
  return parts.join("");
}

/** The page: the summary, then one row per partition given (the caller passes those not clean everywhere). */
export function renderFleetHtml(input: {
  nodes: readonly FleetNode[];
  metadata: FleetMetadata;
  summary: FleetSummary;
  partitions: readonly FleetPartition[];
}): string {
  const { nodes, metadata, summary, partitions } = input;
  const rows = [
    ["nodes", nodes.map((node) => `${escapeHtml(node.name)} (${escapeHtml(node.file)})`).join(", ")],
    [
      "partitions",
      `${formatCount(summary.partitions)}: ${summary.clean} clean, ${summary.lagging} lagging, ${summary.degraded} degraded, ${summary.lost} lost, ${summary.diverged} diverged, ${summary.failed} failed`,
    ],
    ["lost on every replica", `${formatCount(BigInt(summary.lostOffsets))} offsets`],
    ["highest committed op", metadata.highestCommitted ?? "unknown"],
    ["metadata ops lost", metadata.opsLost === null ? "none" : `${metadata.opsLost.from}..${metadata.opsLost.to}`],
    ["identity conflicts", metadata.identityConflicts.map((conflict) => escapeHtml(conflict.message)).join("<br>") || "none"],
  ];
  const clean = summary.partitions - partitions.length;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>segscan fleet</title><style>${CSS}</style></head><body>
<h1>segscan fleet: ${nodes.length} nodes</h1>
<table class="summary">${rows.map(([key, value]) => `<tr><td>${key}</td><td>${value}</td></tr>`).join("")}</table>
<div class="legend"><span class="proven" style="background:${MARK_COLORS.prefix}"></span>proven<span style="background:${OKABE_ITO.bluishGreen}"></span>intact past damage<span style="background:${OKABE_ITO.vermillion};opacity:.5"></span>unreadable<span style="background:#000;opacity:.5"></span>torn tail cut<span style="background:${FLEET_LOST_COLOR}"></span>lost on every replica</div>
${partitions.map(partitionHtml).join("\n")}
<p>${clean > 0 ? `${formatCount(clean)} partition(s) clean on every replica are not drawn.` : ""}</p>
</body></html>
`;
}
