/**
 * The node section at the top of the human `scan` report (docs/node.md N9):
 * the WAL's op range and verdict, the snapshot's op and counts, the superblock
 * pairing, every non-clean finding in one line, and what the next boot would do.
 */
import { relative } from "node:path";
import pc from "picocolors";
import { type NodeReport, type Severity, nodeFindings, worstSeverity } from "../domain/node.js";
import { nodeFindingNextStep } from "../policy/next-step.js";

type Colors = ReturnType<typeof pc.createColors>;

export function paint(severity: Severity, text: string, c: Colors): string {
  switch (severity) {
    case "clean":
      return c.green(text);
    case "info":
      return c.cyan(text);
    case "warn":
      return c.yellow(text);
    case "repairable":
      return c.yellow(text);
    case "refused":
      return c.red(text);
    case "failed":
      return c.magenta(text);
  }
}

/** docs/node.md N1.1: a boot that goes on (it only warns) without the committed ops the WAL no longer proves. */
function withoutCommittedOps(wal: NonNullable<NodeReport["metadata"]["wal"]>): string {
  const lost = wal.findings.find((finding) => finding.code === "WalCommittedOpsLost");
  if (lost === undefined || wal.iggy.scan === "refuse" || typeof lost.provenOp !== "bigint") return "";
  const first = lost.provenOp + 1n;
  return `, warns and runs without ${first === lost.commitMax ? `op ${first}` : `ops ${first}..${lost.commitMax}`}`;
}

/** docs/node.md N3 pairing, as the superblock line states it. */
function pairingText(superblock: NonNullable<NodeReport["metadata"]["superblock"]>, snapshot: NodeReport["metadata"]["snapshot"]): string {
  if (superblock.findings.some((f) => f.code.startsWith("Checkpoint"))) return "";
  const snapshotOp = snapshot?.sequenceNumber ?? null;
  if (superblock.vsr !== null && snapshotOp !== null && superblock.vsr.checkpointOp < snapshotOp) {
    return ` (lags the snapshot's op ${snapshotOp}: accepted, a newer snapshot is complete)`;
  }
  return " (pairs with the snapshot)";
}

export function formatNode(node: NodeReport, options: { color?: boolean } = {}): string {
  const c = pc.createColors(options.color ?? false);
  const rel = (path: string): string => relative(node.path, path) || ".";
  const lines = [`${c.bold("node")} ${node.path}  ${paint(node.verdict, node.verdict.toUpperCase(), c)}`];
  const { wal, snapshot, superblock } = node.metadata;
  if (!node.metadata.present) lines.push("  metadata/  absent");
  if (wal !== null) {
    const verdict = worstSeverity(wal.findings.map((f) => f.severity));
    const ops = wal.ops === null ? "no entries" : `ops ${wal.ops.first}..${wal.ops.last} (${wal.entries} entries)`;
    const iggy =
      wal.iggy.scan === "boot"
        ? wal.iggy.truncateFromOp === null
          ? "boots"
          : `truncates from op ${wal.iggy.truncateFromOp}`
        : wal.iggy.scan === "truncate-tail"
          ? `cuts at byte ${wal.iggy.position}`
          : "refuses to boot";
    lines.push(
      `  WAL        ${ops}, ${wal.walkedSize}/${wal.size} bytes proven  ${paint(verdict, verdict, c)}  (iggy: ${iggy}${withoutCommittedOps(wal)})`,
    );
  }
  if (snapshot !== null) {
    lines.push(
      snapshot.present
        ? `  snapshot   op ${snapshot.sequenceNumber ?? "?"}, ${snapshot.streams} streams, ${snapshot.topics} topics, ${snapshot.partitions} partitions, ${snapshot.sealed ? "sealed" : "unsealed"}`
        : "  snapshot   absent",
    );
  }
  if (superblock !== null) {
    const vsr = superblock.vsr;
    lines.push(
      vsr !== null
        ? `  superblock sequence ${superblock.sequence}, view ${vsr.view}, log_view ${vsr.logView}, commit_max ${vsr.commitMax}, checkpoint op ${vsr.checkpointOp}${pairingText(superblock, snapshot)}`
        : `  superblock ${superblock.state}`,
    );
  }
  for (const finding of nodeFindings(node).filter((f) => f.severity !== "clean")) {
    lines.push(
      `  ${paint(finding.severity, finding.severity.padEnd(10), c)} ${finding.code} ${c.dim(rel(finding.path))}: ${finding.message}`,
      `             next step: ${nodeFindingNextStep(finding)}`,
    );
  }
  if (node.bootForecast.length > 0) {
    lines.push("  If iggy-server starts now:");
    for (const entry of node.bootForecast) {
      lines.push(`    ${entry.destructive ? c.red("DESTRUCTIVE ") : ""}${entry.effect} ${c.dim(rel(entry.path))}: ${entry.detail}`);
    }
  }
  return lines.join("\n");
}
