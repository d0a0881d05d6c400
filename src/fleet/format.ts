/**
 * `segscan fleet` text output (docs/fleet.md): a cluster summary first, then
 * one line per partition that is not clean everywhere (with indented detail
 * lines). Every name and message goes through report/terminal-safe.ts.
 */
import { colors, formatCount } from "../report/format.js";
import { escapeControl } from "../report/terminal-safe.js";
import type { FleetMetadata, FleetNode, FleetPartition, FleetReplica, FleetSummary } from "./schema.js";

type Colors = ReturnType<typeof colors>;

const safe = escapeControl;
const range = (r: { from: string; to: string }): string => (r.from === r.to ? r.from : `${r.from}..${r.to}`);
const offsetsWord = (count: string): string => `${formatCount(BigInt(count))} offset${count === "1" ? "" : "s"}`;

function verdictColor(c: Colors, verdict: FleetPartition["verdict"]): (text: string) => string {
  switch (verdict) {
    case "clean":
      return c.green;
    case "lagging":
      return c.cyan;
    case "degraded":
      return c.yellow;
    case "failed":
      return c.magenta;
    default:
      return c.red;
  }
}

function replicaText(replica: FleetReplica): string {
  const name = safe(replica.node);
  switch (replica.role) {
    case "missing":
      return `${name} has no such partition`;
    case "failed":
      return `${name} failed (${safe(replica.error ?? "not judged")})`;
    case "lagging":
      return `${name} lags${replica.head === null ? " (empty)" : ` at ${replica.head}`}${replica.behind === null ? "" : `, ${offsetsWord(replica.behind)} behind`}`;
    case "in-sync":
      return `${name} in sync`;
    default: {
      const what: string[] = [];
      for (const cut of replica.cuts) {
        what.push(`torn tail cut from ${cut.fromOffset}${cut.claimed === null ? "" : ` (claims ${range(cut.claimed)})`}`);
      }
      for (const refusal of replica.refusals)
        what.push(`refused ${safe(refusal.code)}${refusal.segment === null ? "" : ` in segment ${refusal.segment}`}`);
      return `${name} ${replica.verdict ?? "damaged"}: ${what.join(", ") || "damaged"}`;
    }
  }
}

/** The detail lines of one partition that is not clean everywhere. */
export function formatFleetPartition(partition: FleetPartition, color = false): string {
  const c = colors(color);
  const tint = verdictColor(c, partition.verdict);
  const lines: string[] = [];
  const lostDurable = partition.lost.filter((r) => r.kind === "durable");
  let headline = "";
  if (partition.verdict === "diverged") headline = `${partition.divergence.length} divergent batch(es): a split brain`;
  else if (partition.verdict === "lost") {
    const count = lostDurable.reduce((sum, r) => sum + BigInt(r.count), 0n);
    headline = `${offsetsWord(count.toString())} lost on every replica: ${lostDurable.map((r) => `${range(r)}${r.openEnded ? "+" : ""}`).join(", ")}`;
  } else if (partition.verdict === "failed") headline = "a replica could not be judged";
  else if (partition.verdict === "degraded") headline = "nothing lost: every offset is held by a replica";
  else if (partition.verdict === "lagging") headline = "nothing lost: lagging replicas catch up from the cluster";
  lines.push(
    `${safe(partition.key)}  ${tint(partition.verdict)}  ${headline}${partition.head === null ? "" : c.dim(`  (head ${partition.head})`)}`,
  );
  for (const replica of partition.replicas) {
    if (replica.role === "in-sync") continue;
    const from =
      replica.rebuildFrom === null ? "" : ` → ${replica.role === "lagging" ? "catch up" : "rebuild"} from ${safe(replica.rebuildFrom)}`;
    const onlyCuts = replica.refusals.length === 0 && replica.cuts.length > 0;
    const none =
      replica.rebuildFrom === null && (replica.role === "damaged" || replica.role === "missing")
        ? c.dim(onlyCuts ? " → repair in place (segscan repair): no peer holds more" : " (no peer holds what it lacks)")
        : "";
    lines.push(`    ${replicaText(replica)}${from}${none}`);
  }
  for (const r of partition.lost) {
    if (r.kind === "durable") continue;
    const who = r.claimedBy.map((claim) => safe(claim.node)).join(", ");
    lines.push(
      c.dim(
        r.kind === "unacknowledged"
          ? `    ${range(r)} (${offsetsWord(r.count)}) only in torn tails (${who}): never acknowledged, cut everywhere`
          : `    ${range(r)} (${offsetsWord(r.count)}) held and claimed by no replica (retention, or never written)`,
      ),
    );
  }
  for (const r of lostDurable) {
    const who = r.claimedBy.map((claim) => `${safe(claim.node)} ${safe(claim.as)}`).join(", ");
    lines.push(`    ${c.red("lost")} ${range(r)}${r.openEnded ? " and possibly more" : ""} (${offsetsWord(r.count)}): claimed by ${who}`);
  }
  for (const divergence of partition.divergence) lines.push(`    ${c.red("divergence")}: ${safe(divergence.message)}`);
  for (const ahead of partition.offsetsAhead) lines.push(`    ${c.yellow("offset ahead")}: ${safe(ahead.message)}`);
  return lines.join("\n");
}

/** Whether a partition gets a line in the text output. */
export const isNotable = (partition: FleetPartition): boolean => partition.verdict !== "clean" || partition.offsetsAhead.length > 0;

/** The summary block that opens the text output. */
export function formatFleetSummary(nodes: readonly FleetNode[], metadata: FleetMetadata, summary: FleetSummary, color = false): string {
  const c = colors(color);
  const lines: string[] = [];
  lines.push(
    `${c.bold("segscan fleet")}: ${nodes.length} node${nodes.length === 1 ? "" : "s"} (${nodes.map((n) => safe(n.name)).join(", ")}), ${formatCount(summary.partitions)} partition${summary.partitions === 1 ? "" : "s"}`,
  );
  for (const node of nodes) {
    const unidentified =
      node.unidentified > 0 ? c.yellow(`, ${node.unidentified} partition(s) outside streams/…/partitions/… not merged`) : "";
    lines.push(
      c.dim(
        `  ${safe(node.name)}: ${safe(node.file)} (${node.format}, ${node.engine}, ${node.verify === "full" ? "--deep" : "tail"}, ${formatCount(node.partitions)} partitions${node.root === null ? "" : `, root ${safe(node.root)}`})`,
      ) + unidentified,
    );
  }
  const counts = [
    c.green(`${formatCount(summary.clean)} clean`),
    c.cyan(`${formatCount(summary.lagging)} lagging`),
    c.yellow(`${formatCount(summary.degraded)} degraded`),
    (summary.lost > 0 ? c.red : (t: string) => t)(`${formatCount(summary.lost)} lost`),
    (summary.diverged > 0 ? c.red : (t: string) => t)(`${formatCount(summary.diverged)} diverged`),
    (summary.failed > 0 ? c.magenta : (t: string) => t)(`${formatCount(summary.failed)} failed`),
  ];
  lines.push(`  partitions: ${counts.join(", ")}`);
  lines.push(
    summary.lostOffsets === "0"
      ? c.green("  nothing is lost on every replica")
      : c.red(`  ${offsetsWord(summary.lostOffsets)} lost on every replica`) +
          (summary.unacknowledgedOffsets === "0"
            ? ""
            : c.dim(`; ${offsetsWord(summary.unacknowledgedOffsets)} only in torn tails (never acknowledged)`)),
  );
  if (summary.lostOffsets === "0" && summary.unacknowledgedOffsets !== "0") {
    lines.push(c.dim(`  ${offsetsWord(summary.unacknowledgedOffsets)} only in torn tails everywhere (never acknowledged)`));
  }
  if (summary.failedReplicas > 0)
    lines.push(c.magenta(`  ${summary.failedReplicas} replica(s) could not be judged: what they hold is unknown`));
  if (summary.offsetsAhead > 0)
    lines.push(c.yellow(`  ${summary.offsetsAhead} stored consumer offset(s) past every replica's head (offsets re-minted cluster-wide)`));
  lines.push(...formatMetadata(metadata, c));
  return lines.join("\n");
}

function formatMetadata(metadata: FleetMetadata, c: Colors): string[] {
  const lines: string[] = [];
  const present = metadata.nodes.filter((node) => node.present);
  if (present.length === 0) {
    lines.push(c.dim("  metadata: no report has a node section (scan node roots to compare the metadata plane)"));
    return lines;
  }
  lines.push("  metadata:");
  for (const node of metadata.nodes) {
    if (!node.present) {
      lines.push(c.dim(`    ${safe(node.node)}: no node section`));
      continue;
    }
    const wal = node.walOps === null ? "WAL holds no op" : `WAL ops ${node.walOps.first}..${node.walOps.last}`;
    const identity = node.cluster === null ? "no superblock identity" : `replica ${node.replicaId}/${node.replicaCount}`;
    const boot = node.boots ? `boots holding ops ..${node.heldOp}` : c.red("would not boot");
    lines.push(
      `    ${safe(node.node)}: ${identity}, ${wal}, commit ${node.commitMax ?? "?"}, view ${node.view ?? "?"}, log_view ${node.logView ?? "?"}, checkpoint ${node.checkpointOp ?? "?"}; ${boot}`,
    );
  }
  if (metadata.highestCommitted !== null) {
    lines.push(`    highest committed op ${metadata.highestCommitted} (${metadata.committedBy.map(safe).join(", ")})`);
  }
  if (metadata.opsLost !== null) {
    lines.push(
      c.red(
        `    ops ${range(metadata.opsLost)} (${formatCount(BigInt(metadata.opsLost.count))}) were committed and no node that boots holds them`,
      ),
    );
  }
  for (const conflict of metadata.identityConflicts) lines.push(c.red(`    ${conflict.code}: ${safe(conflict.message)}`));
  return lines;
}

/** The exit status line's words (docs/fleet.md). */
export function fleetOutcomeLine(summary: FleetSummary, color = false): string {
  const c = colors(color);
  if (summary.lost + summary.diverged + summary.identityConflicts > 0 || summary.metadataOpsLost !== "0") {
    return c.red("→ data is lost on every replica, or replicas disagree: see the lines above; nothing was changed");
  }
  if (summary.degraded + summary.lagging > 0) {
    return c.yellow("→ nothing is lost: rebuild each damaged replica from the peer named, lagging replicas catch up");
  }
  return c.green("→ every partition is clean on every replica");
}
