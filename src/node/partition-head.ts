/**
 * docs/node.md N4, docs/repair.md §6.2: a partition's head H as the bytes prove
 * it now — its segments scanned again and its superblock's `offset_frontier`
 * read — for the repair's offset steps, which must not trust a plan's value
 * (a plan edited to write offset 0 is refused, not applied).
 */
import type { Engine } from "../engine/types.js";
import { nodeScanFs, type ScanFs } from "../io/fs.js";
import type { ScanOptions } from "../recovery/options.js";
import { scanPartition } from "./scan-path.js";
import { partitionHead } from "./partition-dir.js";
import { scanSuperblock } from "./superblock.js";
import type { PartitionHead } from "../domain/node.js";

/** H of the partition in `dir` now (null `head`: empty; `known` false: its scan failed). */
export async function partitionHeadNow(
  dir: string,
  options: ScanOptions,
  engine: Engine,
  scanFs: ScanFs = nodeScanFs,
): Promise<PartitionHead> {
  const proven = (await scanPartition(dir, { ...options, engine })).partitions[0];
  const superblock = await scanSuperblock(dir, scanFs, engine, "partition");
  const frontier = superblock.state === "present" ? (superblock.vsr?.offsetFrontier ?? 0n) : 0n;
  return partitionHead(proven, frontier);
}
