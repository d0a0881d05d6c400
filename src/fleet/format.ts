/**
 * `segscan fleet` text output (docs/fleet.md "Outputs"), problems first: the
 * cluster's verdict line, the metadata plane's findings and the reports'
 * warnings with their next steps, one block per partition not clean
 * everywhere (its replicas not in sync, lost ranges, divergences, next steps
 * with the commands to paste), then the summary, then the outcome line. Every
 * name and message goes through report/terminal-safe.ts; commands are
 * shell-quoted (src/domain/command.ts), which leaves no control character.
 */
import { TORN_TAILS_CLAIM, TORN_TAILS_CLAIM_BRIEF } from "../policy/torn-evidence.js";
import { colors, formatCount } from "../report/format.js";
import { FORWARD_GAP } from "./adapter.js";
import { escapeControl } from "../report/terminal-safe.js";
import type { ClusterVerdict, FleetMetadata, FleetNode, FleetPartition, FleetReplica, FleetStep, FleetSummary } from "./schema.js";

type Colors = ReturnType<typeof colors>;

const safe = escapeControl;
const offset = (value: string): string => formatCount(BigInt(value));
const range = (r: { from: string; to: string }): string => (r.from === r.to ? offset(r.from) : `${offset(r.from)}..${offset(r.to)}`);
const offsetsWord = (count: string | bigint): string => `${formatCount(BigInt(count))} offset${BigInt(count) === 1n ? "" : "s"}`;
const plural = (count: number, word: string): string => `${formatCount(count)} ${word}${count === 1 ? "" : "s"}`;

function verdictColor(c: Colors, verdict: FleetPartition["verdict"] | ClusterVerdict): (text: string) => string {
  switch (verdict) {
    case "clean":
      return c.green;
    case "lagging":
      return c.cyan;
    case "degraded":
      return c.yellow;
    case "failed":
    case "unknown":
      return c.magenta;
    default:
      return c.red;
  }
}

/** "lost on every replica", or, when a replica could not be judged, "lost on every replica that could be judged (n of m)". */
export function everyReplicaWords(judged: FleetPartition["judged"]): string {
  return judged.replicas >= judged.of
    ? "lost on every replica"
    : `lost on every replica that could be judged (${judged.replicas} of ${judged.of})`;
}

function replicaText(replica: FleetReplica): string {
  const name = safe(replica.node);
  switch (replica.role) {
    case "missing":
      return `${name} has no such partition (its report is of its node root)`;
    case "unknown":
      return `${name}: not covered by its report (not of its node root): what it holds is unknown`;
    case "failed":
      return `${name} failed (${safe(replica.error ?? "not judged")}): what it holds is unknown`;
    case "lagging":
      return `${name} lags${replica.head === null ? " (empty)" : ` at ${offset(replica.head)}`}${replica.behind === null ? "" : `, ${offsetsWord(replica.behind)} behind`}`;
    case "in-sync":
      return `${name} in sync`;
    case "diverged":
      return `${name} diverged (scans ${replica.verdict ?? "clean"})`;
    default: {
      const what: string[] = [];
      for (const cut of replica.cuts) {
        what.push(`torn tail cut from ${offset(cut.fromOffset)}${cut.claimed === null ? "" : ` (claims ${range(cut.claimed)})`}`);
      }
      for (const refusal of replica.refusals)
        what.push(`${safe(refusal.code)}${refusal.segment === null ? "" : ` in segment ${offset(refusal.segment)}`}`);
      const gaps = replica.unreadable.filter((u) => u.code === FORWARD_GAP);
      if (gaps.length > 0) what.push(`forward gap${gaps.length === 1 ? "" : "s"} skip ${gaps.map(range).join(", ")}`);
      if (what.length === 0 && replica.missing.length > 0) what.push(`lacks ${replica.missing.map(range).join(", ")}, which peers hold`);
      return `${name} ${replica.verdict ?? "damaged"}: ${what.join(", ") || "damaged"}`;
    }
  }
}

/** Next steps as text lines: the first as `next:`, the others under it, each command on a line of its own to paste. */
export function formatSteps(steps: readonly FleetStep[], indent: string, color = false): string[] {
  const c = colors(color);
  const lines: string[] = [];
  for (const [i, step] of steps.entries()) {
    const lead = i === 0 ? `${indent}${c.bold("next:")} ` : `${indent}      `;
    // Each step's sentence names the node it runs on; the command goes on a line of its own.
    lines.push(`${lead}${safe(step.text)}${step.command === null ? "" : ":"}`);
    if (step.command !== null) lines.push(`${indent}        ${safe(step.command)}`);
  }
  return lines;
}

/** The detail lines of one partition that is not clean everywhere. */
export function formatFleetPartition(partition: FleetPartition, color = false): string {
  const c = colors(color);
  const tint = verdictColor(c, partition.verdict);
  const lines: string[] = [];
  const lostDurable = partition.lost.filter((r) => r.kind === "durable");
  let headline = "";
  if (partition.verdict === "diverged") headline = `${plural(partition.divergence.length, "divergent batch")}: a split brain`;
  else if (partition.verdict === "lost") {
    const count = lostDurable.reduce((sum, r) => sum + BigInt(r.count), 0n);
    headline = `${offsetsWord(count)} ${everyReplicaWords(partition.judged)}: ${lostDurable.map((r) => `${range(r)}${r.openEnded ? "+" : ""}`).join(", ")}`;
  } else if (partition.verdict === "failed") headline = "a replica could not be judged: what it holds is unknown";
  else if (partition.verdict === "unknown") headline = "a replica's report does not cover it: what that replica holds is unknown";
  else if (partition.verdict === "degraded") headline = "nothing lost: every offset is held by a replica";
  else if (partition.verdict === "lagging") headline = "nothing lost: lagging replicas catch up from the cluster";
  lines.push(
    `${safe(partition.key)}  ${tint(partition.verdict)}  ${headline}${partition.head === null ? "" : c.dim(`  (head ${offset(partition.head)})`)}`,
  );
  for (const replica of partition.replicas) {
    if (replica.role === "in-sync") continue;
    const from =
      replica.rebuildFrom === null ? "" : ` → ${replica.role === "lagging" ? "catch up" : "rebuild"} from ${safe(replica.rebuildFrom)}`;
    const none =
      replica.rebuildFrom === null && (replica.role === "damaged" || replica.role === "missing")
        ? c.dim(" (no peer holds what it lacks)")
        : "";
    lines.push(`    ${replicaText(replica)}${from}${none}`);
  }
  for (const r of partition.lost) {
    if (r.kind === "durable") continue;
    const who = r.claimedBy.map((claim) => safe(claim.node)).join(", ");
    lines.push(
      c.dim(
        r.kind === "unacknowledged"
          ? `    ${range(r)} (${offsetsWord(r.count)}) only in torn tails (${who}), cut everywhere: ${TORN_TAILS_CLAIM}`
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
  lines.push(...formatSteps(partition.nextSteps, "    ", color));
  return lines.join("\n");
}

/** Whether a partition gets a block in the text output. */
export const isNotable = (partition: FleetPartition): boolean => partition.verdict !== "clean" || partition.offsetsAhead.length > 0;

/** The partitions of each verdict present, worst first: the verdict line's and the HTML banner's counts. */
export function verdictCounts(summary: FleetSummary): [ClusterVerdict & keyof FleetSummary, number][] {
  const words = ["diverged", "lost", "failed", "unknown", "degraded", "lagging", "clean"] as const;
  return words.map((word): [(typeof words)[number], number] => [word, summary[word]]).filter(([, count]) => count > 0);
}

/** The cluster's one verdict, and what makes it: the text output's first line. */
export function formatFleetVerdict(verdict: ClusterVerdict, summary: FleetSummary, color = false): string {
  const c = colors(color);
  const counts = verdictCounts(summary).map(([word, count]) => verdictColor(c, word)(`${formatCount(count)} ${word}`));
  const metadata: string[] = [];
  if (summary.metadataOpsLost !== "0") metadata.push(`${formatCount(BigInt(summary.metadataOpsLost))} committed ops lost`);
  if (summary.identityConflicts > 0) metadata.push(plural(summary.identityConflicts, "identity conflict"));
  if (summary.unidentified > 0) metadata.push(`${plural(summary.unidentified, "partition line")} not merged`);
  return (
    `${c.bold("verdict")} ${verdictColor(c, verdict)(verdict.toUpperCase())} · ${plural(summary.nodes, "node")}, ${plural(summary.partitions, "partition")}` +
    (counts.length === 0 ? "" : `: ${counts.join(", ")}`) +
    (metadata.length === 0 ? "" : ` · ${metadata.join(", ")}`)
  );
}

/** The cluster's problems, before the partitions: the metadata plane's findings and the reports' warnings, each with its next steps. */
export function formatFleetProblems(
  metadata: FleetMetadata,
  steps: readonly FleetStep[],
  warnings: readonly string[],
  color = false,
): string {
  const c = colors(color);
  const lines: string[] = [];
  const stepsAbout = (about: string) => steps.filter((step) => step.about === about);
  if (metadata.opsLost !== null) {
    lines.push(
      c.red(
        `ops ${range(metadata.opsLost)} (${formatCount(BigInt(metadata.opsLost.count))}) were committed (commit_max on ${metadata.committedBy.map(safe).join(", ")}) and no node that boots holds them`,
      ),
    );
    lines.push(...formatSteps(stepsAbout("OpsLost"), "    ", color));
  }
  const conflictCodes = new Set<string>();
  for (const conflict of metadata.identityConflicts) {
    lines.push(c.red(`${conflict.code}: ${safe(conflict.message)}`));
    if (!conflictCodes.has(conflict.code)) lines.push(...formatSteps(stepsAbout(conflict.code), "    ", color));
    conflictCodes.add(conflict.code);
  }
  for (const warning of warnings) lines.push(c.yellow(`warning: ${safe(warning)}`));
  const reportSteps = steps.filter((step) => step.about === "unknown" || step.about === "unidentified" || step.about === "replicas");
  for (const step of reportSteps) lines.push(...formatSteps([step], "", color));
  return lines.join("\n");
}

/** The summary block after the partitions: the reports merged, the partition counts, the metadata plane node by node. */
export function formatFleetSummary(nodes: readonly FleetNode[], metadata: FleetMetadata, summary: FleetSummary, color = false): string {
  const c = colors(color);
  const lines: string[] = [];
  lines.push(
    `${c.bold("segscan fleet")}: ${plural(nodes.length, "node")} (${nodes.map((n) => safe(n.name)).join(", ")}), ${plural(summary.partitions, "partition")}`,
  );
  for (const node of nodes) {
    const unidentified =
      node.unidentified > 0 ? c.yellow(`, ${plural(node.unidentified, "partition line")} outside streams/…/partitions/… not merged`) : "";
    lines.push(
      c.dim(
        `  ${safe(node.name)}: ${safe(node.file)} (${node.format}, ${node.engine}, ${node.verify === "full" ? "--deep" : "tail"}, --replicas ${node.replicas}, ${plural(node.partitions, "partition")}${node.root === null ? "" : `, ${node.coversRoot ? "node root" : "under"} ${safe(node.root)}`})`,
      ) + unidentified,
    );
  }
  const counts = [
    c.green(`${formatCount(summary.clean)} clean`),
    c.cyan(`${formatCount(summary.lagging)} lagging`),
    c.yellow(`${formatCount(summary.degraded)} degraded`),
    (summary.unknown > 0 ? c.magenta : (t: string) => t)(`${formatCount(summary.unknown)} unknown`),
    (summary.lost > 0 ? c.red : (t: string) => t)(`${formatCount(summary.lost)} lost`),
    (summary.diverged > 0 ? c.red : (t: string) => t)(`${formatCount(summary.diverged)} diverged`),
    (summary.failed > 0 ? c.magenta : (t: string) => t)(`${formatCount(summary.failed)} failed`),
  ];
  lines.push(`  partitions: ${counts.join(", ")}`);
  lines.push(lostLine(summary, c));
  if (summary.failedReplicas > 0)
    lines.push(c.magenta(`  ${plural(summary.failedReplicas, "replica")} could not be judged (a failed scan): what they hold is unknown`));
  if (summary.unknownReplicas > 0)
    lines.push(c.magenta(`  ${plural(summary.unknownReplicas, "replica")} not covered by their report: what they hold is unknown`));
  if (summary.unidentified > 0)
    lines.push(c.magenta(`  ${plural(summary.unidentified, "partition line")} name no partition: not merged, not judged`));
  if (summary.offsetsAhead > 0)
    lines.push(
      c.yellow(
        `  ${plural(summary.offsetsAhead, "consumer or group offset")} past every replica's head (offsets minted again cluster-wide)`,
      ),
    );
  lines.push(...formatMetadata(metadata, c));
  return lines.join("\n");
}

function lostLine(summary: FleetSummary, c: Colors): string {
  const torn =
    summary.unacknowledgedOffsets === "0"
      ? ""
      : `; ${offsetsWord(summary.unacknowledgedOffsets)} only in torn tails (${TORN_TAILS_CLAIM_BRIEF})`;
  if (summary.lostOffsets === "0") {
    const words =
      summary.failedReplicas + summary.unknownReplicas + summary.unidentified > 0
        ? "  nothing is lost on every replica that could be judged"
        : "  nothing is lost on every replica";
    return c.green(words) + c.dim(torn);
  }
  const partly = BigInt(summary.lostOffsetsNotAllJudged);
  const total = BigInt(summary.lostOffsets);
  const words =
    partly === 0n
      ? `${offsetsWord(total)} lost on every replica`
      : partly === total
        ? `${offsetsWord(total)} lost on every replica that could be judged`
        : `${offsetsWord(total)} lost on every replica that could be judged (${offsetsWord(total - partly)} of them on every replica)`;
  return c.red(`  ${words}`) + c.dim(torn);
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
    const wal = node.walOps === null ? "WAL holds no op" : `WAL ops ${range({ from: node.walOps.first, to: node.walOps.last })}`;
    const identity = node.cluster === null ? "no superblock identity" : `replica ${node.replicaId}/${node.replicaCount}`;
    const boot = node.boots ? `boots holding ops ..${node.heldOp === null ? "?" : offset(node.heldOp)}` : c.red("would not boot");
    lines.push(
      `    ${safe(node.node)}: ${identity}, ${wal}, commit ${node.commitMax === null ? "?" : offset(node.commitMax)}, view ${node.view ?? "?"}, log_view ${node.logView ?? "?"}, checkpoint ${node.checkpointOp === null ? "?" : offset(node.checkpointOp)}; ${boot}`,
    );
  }
  if (metadata.highestCommitted !== null) {
    lines.push(`    highest committed op ${offset(metadata.highestCommitted)} (${metadata.committedBy.map(safe).join(", ")})`);
  }
  if (metadata.opsLost !== null) lines.push(c.red(`    ops ${range(metadata.opsLost)} lost (above)`));
  if (metadata.identityConflicts.length > 0)
    lines.push(c.red(`    identity conflicts: ${metadata.identityConflicts.map((conflict) => conflict.code).join(", ")} (above)`));
  return lines;
}

/** The last line: what the exit status means, in words (docs/fleet.md "Exit status"). */
export function fleetOutcomeLine(verdict: ClusterVerdict, summary: FleetSummary, color = false): string {
  const c = colors(color);
  if (verdict === "clean") return c.green("→ every partition is clean on every replica");
  const bad: string[] = [];
  if (summary.lost > 0) {
    bad.push(
      BigInt(summary.lostOffsetsNotAllJudged) > 0n ? "data is lost on every replica that could be judged" : "data is lost on every replica",
    );
  }
  if (summary.metadataOpsLost !== "0") bad.push("committed metadata ops are lost");
  if (summary.diverged > 0) bad.push("replicas disagree (split brain)");
  if (summary.identityConflicts > 0) bad.push("node identities conflict");
  const unknown: string[] = [];
  if (summary.failedReplicas > 0) unknown.push(`${plural(summary.failedReplicas, "replica")} failed`);
  if (summary.unknownReplicas > 0) unknown.push(`${plural(summary.unknownReplicas, "replica")} not covered by their report`);
  if (summary.unidentified > 0) unknown.push(`${plural(summary.unidentified, "partition line")} not merged`);
  const parts = [...bad];
  if (unknown.length > 0) parts.push(`not everything could be judged (${unknown.join(", ")}): what those hold is unknown`);
  if (parts.length === 0) {
    return c.yellow("→ nothing is lost: rebuild each damaged replica from the peer named, lagging replicas catch up");
  }
  const paint = bad.length > 0 ? c.red : c.magenta;
  return paint(`→ ${parts.join("; ")}: see the next steps above; nothing was changed`);
}
