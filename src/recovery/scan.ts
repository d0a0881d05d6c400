/**
 * The library entry points (SPEC §9.1): scan one partition, or discover
 * partitions under a path and scan each. Read-only: nothing here writes.
 */
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { abortError } from "../io/errors.js";
import { type ScanFs, nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import type { PartitionReport, ScanReport } from "../report/types.js";
import { type ScanOptions, resolveScanOptions } from "./options.js";
import { loadPartition } from "./partition.js";
import { poolAvailable, scanOnPool } from "./pool.js";
import { type ScanTarget, discoverTargets } from "./targets.js";
import { finishNode, isNodeRoot, scanNodeMetadata } from "../node/scan.js";

export { discoverTargets, type ScanTarget } from "./targets.js";

export const SEGSCAN_VERSION = "1.0.0";

/**
 * Below this much log data a worker pool costs more than it saves: each worker
 * takes ~100–250 ms to start and compile the engine, while one thread scans
 * tens of MiB in that time.
 */
export const POOL_MIN_BYTES = 64 * 1024 * 1024;

/** `scanFs` replaces the filesystem (tests inject faults through it); by default `options.io` picks one. */
export async function scanPartition(directory: string, options: ScanOptions = {}, scanFs?: ScanFs): Promise<ScanReport> {
  return scanTargets([{ path: resolve(directory), singleLog: false }], options, scanFs ?? defaultScanFs(options));
}

function defaultScanFs(options: ScanOptions): ScanFs {
  if (options.io !== undefined && options.io !== "async" && options.io !== "blocking") {
    throw new RangeError(`io must be "async" or "blocking", got ${String(options.io)}`);
  }
  return options.io === "blocking" ? nodeBlockingScanFs : nodeScanFs;
}

/**
 * A data dir, any dir under it, a partition dir, or one `.log` (several paths
 * allowed). One node root (a dir holding metadata/ or streams/, docs/node.md
 * N0) also gets the node section, its metadata scanned before the partitions.
 */
export async function scanPath(paths: string | readonly string[], options: ScanOptions = {}, scanFsOverride?: ScanFs): Promise<ScanReport> {
  const scanFs = scanFsOverride ?? defaultScanFs(options);
  const list = typeof paths === "string" ? [paths] : paths;
  if (list.length === 1 && (await isNodeRoot(resolve(list[0]!), scanFs))) {
    const engine = options.engine ?? (await createEngine());
    const withEngine = { ...options, engine };
    const node = await scanNodeMetadata(resolve(list[0]!), withEngine, scanFs, engine);
    const report = await scanTargets(await discoverTargets(resolve(list[0]!), scanFs), withEngine, scanFs);
    report.node = await finishNode(node, withEngine, scanFs, engine, report.partitions);
    return report;
  }
  const targets: ScanTarget[] = [];
  for (const path of list) targets.push(...(await discoverTargets(resolve(path), scanFs)));
  return scanTargets(targets, options, scanFs);
}

export async function scanTargets(targets: readonly ScanTarget[], options: ScanOptions, scanFs: ScanFs): Promise<ScanReport> {
  const startedAt = performance.now();
  const resolved = resolveScanOptions(options);
  const engine: Engine = options.engine ?? (await createEngine());
  const concurrency = options.concurrency ?? availableParallelism();
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  // Workers read through the real filesystem with their own engine: a caller's
  // ScanFs (tests' fault injection) keeps the scan in this thread.
  const pooled = concurrency > 1 && targets.length > 1 && (scanFs === nodeScanFs || scanFs === nodeBlockingScanFs) && poolAvailable()
    && (await totalLogBytes(targets, scanFs)) >= POOL_MIN_BYTES;
  const partitions = pooled
    ? await scanOnPool(targets, { concurrency, engineKind: engine.kind, used: resolved.used, signal: resolved.signal, onProgress: resolved.onProgress })
    : await scanSequentially(targets, engine, resolved, scanFs);
  return assembleReport(engine, resolved.used, partitions, performance.now() - startedAt);
}

/** Sum of `.log` sizes under the targets: one listing and stat per file, no reads. */
async function totalLogBytes(targets: readonly ScanTarget[], scanFs: ScanFs): Promise<number> {
  let total = 0;
  for (const target of targets) {
    const logs = target.singleLog
      ? [target.path]
      : (await scanFs.list(target.path)).filter((entry) => entry.isFile && entry.name.endsWith(".log")).map((entry) => join(target.path, entry.name));
    for (const log of logs) total += await scanFs.stat(log).then((info) => info.size, () => 0);
  }
  return total;
}

async function scanSequentially(targets: readonly ScanTarget[], engine: Engine, resolved: ReturnType<typeof resolveScanOptions>, scanFs: ScanFs): Promise<PartitionReport[]> {
  const partitions: PartitionReport[] = [];
  for (const target of targets) {
    if (resolved.signal?.aborted) throw abortError(resolved.signal);
    partitions.push(await loadPartition(target.path, { engine, scanFs, options: resolved }, target.singleLog));
  }
  return partitions;
}

export function assembleReport(engine: Engine, used: ScanReport["options"], partitions: PartitionReport[], elapsedMs: number): ScanReport {
  const count = (verdict: PartitionReport["verdict"]): number => partitions.filter((partition) => partition.verdict === verdict).length;
  return {
    segscan: SEGSCAN_VERSION,
    engine: engine.kind,
    options: used,
    partitions,
    summary: {
      partitions: partitions.length,
      clean: count("clean"),
      repairable: count("repairable"),
      refused: count("refused"),
      failed: count("failed"),
      bytesScanned: partitions.reduce((sum, partition) => sum + partition.bytesScanned, 0),
      elapsedMs: Math.round(elapsedMs),
    },
  };
}
