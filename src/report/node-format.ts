/**
 * The node section at the top of the human `scan` report (docs/node.md N9):
 * the WAL's op range and verdict, the snapshot's op and counts, the superblock
 * pairing, every finding from `warn` up in one short line with its next step
 * (`info` ones counted), and what the next boot would do. `verbose` gives
 * every non-clean finding its whole message and next step.
 */
import { relative } from "node:path";
import pc from "picocolors";
import { type NodeReport, type Severity, nodeFindings, worstSeverity } from "../domain/node.js";
import { briefColumns, clipLine, formatCount } from "./units.js";
import { nextStepShort, nodeFindingNext } from "../policy/next-step.js";

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

/** What formatNode reads of the report's format options (./format.ts FormatOptions). */
export interface NodeFormatOptions {
  color?: boolean;
  verbose?: boolean;
  /** The width a short line is cut to (a command is never cut). */
  columns?: number;
}

/** A finding's message without the path it starts with (the line names the path already). */
function messageAfterPath(message: string, path: string): string {
  return message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
}

export function formatNode(node: NodeReport, options: NodeFormatOptions = {}): string {
  const c = pc.createColors(options.color ?? false);
  const verbose = options.verbose ?? false;
  const columns = briefColumns(options.columns);
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
          ? `cuts at byte ${wal.iggy.position === null ? "?" : formatCount(wal.iggy.position)}`
          : "refuses to boot";
    lines.push(
      `  WAL        ${ops}, ${formatCount(wal.walkedSize)} of ${formatCount(wal.size)} bytes proven  ${paint(verdict, verdict, c)}  (iggy: ${iggy}${withoutCommittedOps(wal)})`,
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
  const findings = nodeFindings(node).filter((f) => f.severity !== "clean");
  const listed = verbose ? findings : findings.filter((f) => f.severity !== "info");
  for (const finding of listed) {
    const next = nodeFindingNext(finding, node.path);
    const head = `  ${finding.severity.padEnd(10)} ${finding.code} ${rel(finding.path)}: `;
    const message = verbose ? finding.message : clipLine(messageAfterPath(finding.message, finding.path), columns - head.length);
    lines.push(
      `  ${paint(finding.severity, finding.severity.padEnd(10), c)} ${finding.code} ${c.dim(rel(finding.path))}: ${message}`,
      `             next step: ${verbose ? next.text : nextStepShort(next)}`,
    );
  }
  const info = findings.length - listed.length;
  if (info > 0) {
    const byCode = new Map<string, number>();
    for (const finding of findings) if (finding.severity === "info") byCode.set(finding.code, (byCode.get(finding.code) ?? 0) + 1);
    const codes = [...byCode].map(([code, count]) => (count === 1 ? code : `${code} ×${count}`)).join(", ");
    lines.push(`  ${paint("info", `${formatCount(info)} info finding${info === 1 ? "" : "s"}`, c)} (${codes}): --verbose lists them`);
  }
  if (node.bootForecast.length > 0) {
    lines.push("  If iggy-server starts now:");
    for (const entry of node.bootForecast) {
      const head = `    ${entry.destructive ? "DESTRUCTIVE " : ""}${entry.effect} ${rel(entry.path)}: `;
      const detail = verbose ? entry.detail : clipLine(entry.detail, columns - head.length);
      lines.push(`    ${entry.destructive ? c.red("DESTRUCTIVE ") : ""}${entry.effect} ${c.dim(rel(entry.path))}: ${detail}`);
    }
  }
  return lines.join("\n");
}
