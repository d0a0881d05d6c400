/** `segscan gen --node` / `--node-fault NAME` (docs/node.md N1–N6 faults) and their `--list` text. */
import type { PartitionLayout } from "../generate.js";
import { type GeneratedNode, NODE_FAULTS, writeNodeMetadata } from "./node.js";

export function nodeFaultListText(): string {
  const width = Math.max(...NODE_FAULTS.map((fault) => fault.name.length));
  const lines = [
    "",
    "Node faults (segscan gen <dir> --node-fault NAME); each injects one fault into metadata/ or a partition dir (offsets, purge.gen, fenced, orphan and missing dirs):",
    "",
  ];
  for (const fault of NODE_FAULTS) {
    lines.push(`  ${fault.name.padEnd(width)}  ${fault.description}`);
    lines.push(`  ${"".padEnd(width)}  → ${fault.expected.code === "" ? "clean" : `${fault.expected.severity} ${fault.expected.code}`}`);
  }
  return lines.join("\n") + "\n";
}

export function nodeFaultNames(): string[] {
  return NODE_FAULTS.map((fault) => fault.name);
}

export async function genNode(
  dir: string,
  partitions: readonly PartitionLayout[],
  seed: number,
  fault: string | undefined,
): Promise<{ node: GeneratedNode; text: string }> {
  const node = await writeNodeMetadata(dir, partitions, fault === undefined ? { seed } : { seed, fault });
  const faultText =
    node.fault === null
      ? ""
      : `\n  node fault ${node.fault.name}: ${node.fault.description}\n    expected: ${node.fault.expected.code === "" ? "clean" : `${node.fault.expected.severity} ${node.fault.expected.code}`}`;
  return {
    node,
    text: `wrote metadata/ (WAL ops ${node.walOps.first}..${node.walOps.last}, snapshot at op ${node.snapshotOp}, superblocks)${faultText}\n`,
  };
}
