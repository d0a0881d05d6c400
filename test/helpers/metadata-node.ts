/**
 * A tiny generated node (segments plus the metadata plane, optionally with one
 * `--node-fault`), and a rewrite of its newest superblock slot: the set-up the
 * node-plane tests share.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { VsrState } from "../../src/domain/node.js";
import { createTsEngine } from "../../src/engine/ts/engine.js";
import { generateDataDir } from "../../src/gen/generate.js";
import { writeNodeMetadata } from "../../src/gen/node/node.js";
import { decodeSuperblockRecord, decodeVsrState, encodeSuperblockRecord, encodeVsrState } from "../../src/format/superblock.js";
import { tempDir } from "./node-wal.js";

const ts = createTsEngine();

export interface TinyNodeOptions {
  seed: number;
  /** A `gen --node-fault` name; none for a clean metadata plane. */
  fault?: string | undefined;
  /** A segment scenario for the partitions. */
  scenario?: string;
  /** Where to write it; default a new temporary dir. */
  root?: string;
}

/** Generates a tiny node (`gen --size tiny --node`) and returns its root. */
export async function tinyNode({ seed, fault, scenario, root = tempDir() }: TinyNodeOptions): Promise<string> {
  const generated = await generateDataDir(root, { size: "tiny", seed, ...(scenario === undefined ? {} : { scenario }) });
  await writeNodeMetadata(root, generated.partitions, fault === undefined ? {} : { fault });
  return root;
}

/** Rewrites the newest metadata superblock slot (B, sequence 2 in a generated node) with some VsrState fields changed. */
export function rewriteSuperblock(root: string, changes: Partial<VsrState>): void {
  const path = join(root, "metadata/superblock.b");
  const slot = decodeSuperblockRecord(readFileSync(path), ts);
  if (slot.kind !== "valid") throw new Error(`superblock.b is ${slot.kind}`);
  const decoded = decodeVsrState(slot.payload);
  if ("error" in decoded) throw new Error(decoded.error);
  writeFileSync(path, encodeSuperblockRecord(slot.sequence, encodeVsrState({ ...decoded.state, ...changes }), ts));
}
