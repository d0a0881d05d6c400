/**
 * The library entry points (docs/interfaces.md §9.1): scan one partition, or discover
 * partitions under a path and scan each. Read-only: nothing here writes.
 */
import { resolve } from "node:path";
import type { Engine } from "../engine/types.js";
import { LOG_SUFFIX } from "../format/constants.js";
import { abortError } from "../io/errors.js";
import { type ScanFs, nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import type { IgnoredEntry, PartitionReport, ScanReport } from "../report/types.js";
import { type ResolvedScanOptions, type ScanOptions, resolveEngineOption, resolveScanOptions } from "./options.js";
import { failedTarget, loadPartition } from "./partition.js";
import { poolAvailable, scanOnPool } from "./pool.js";
import { type Discovery, type ScanTarget, discover, logBytesByTarget } from "./targets.js";
import { SEGSCAN_VERSION } from "../version.js";
import { finishNode, isNodeRoot, scanNodeMetadata } from "../node/scan.js";

export { discover, discoverTargets, logBytesByTarget, type DiscoveredRoot, type Discovery, type ScanTarget } from "./targets.js";

export { SEGSCAN_VERSION } from "../version.js";

/**
 * Below this much log data a worker pool costs more than it saves: each worker
 * takes ~100–250 ms to start and compile the engine, while one thread scans
 * tens of MiB in that time.
 */
export const POOL_MIN_BYTES = 64 * 1024 * 1024;

/**
 * One partition directory. `scanFs` replaces the filesystem (tests inject
 * faults through it); by default `options.io` picks one. A directory that holds
 * no `.log` at all is refused (TypeError): it is no partition, and a data dir
 * belongs to `scanPath`.
 */
export async function scanPartition(directory: string, options: ScanOptions = {}, scanFs?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  if (typeof directory !== "string") throw new TypeError(`scanPartition: directory must be a path string, got ${String(directory)}`);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  const path = resolve(directory);
  // A listing failure is reported by the load itself (ListFailure); only a
  // readable directory with no `.log` is refused here.
  const entries = await fs.list(path).catch(() => null);
  if (entries !== null && !entries.some((entry) => !entry.isDirectory && entry.name.endsWith(LOG_SUFFIX))) {
    throw new TypeError(
      `scanPartition: ${path} holds no .log file, so it is not a partition directory; ` +
        "to scan a data dir (or any directory above partitions), call scanPath",
    );
  }
  return scanResolved([{ path, singleLog: false }], resolved, fs, [], options.engine);
}

function defaultScanFs(io: "async" | "blocking"): ScanFs {
  return io === "blocking" ? nodeBlockingScanFs : nodeScanFs;
}

/**
 * A data dir, any dir under it, a partition dir, or one `.log` (several paths
 * allowed). One node root (a dir holding metadata/ or streams/, docs/node.md
 * N0) also gets the node section, its metadata scanned before the partitions.
 */
export async function scanPath(paths: string | readonly string[], options: ScanOptions = {}, scanFsOverride?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const list = typeof paths === "string" ? [paths] : paths;
  if (!Array.isArray(list) || list.some((path) => typeof path !== "string")) {
    throw new TypeError("scanPath: paths must be a path string or an array of path strings");
  }
  const scanFs = scanFsOverride ?? defaultScanFs(resolved.io);
  const discovery = await discover(list, scanFs, resolved.signal);
  return scanDiscovered(list, discovery, options, scanFs);
}

/**
 * Scans what `discover` found under `paths` (the CLI discovers first, to check
 * its paths). One node root also gets its node section, its metadata scanned
 * before the partitions (docs/node.md N0).
 */
export async function scanDiscovered(
  paths: readonly string[],
  discovery: Discovery,
  options: ScanOptions,
  scanFs?: ScanFs,
): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  const root = paths.length === 1 ? resolve(paths[0]!) : null;
  if (root === null || !(await isNodeRoot(root, fs))) {
    return scanResolved(discovery.targets, resolved, fs, discovery.skipped, options.engine);
  }
  const engine = await resolveEngineOption(options.engine);
  const withEngine = { ...options, engine };
  const node = await scanNodeMetadata(root, withEngine, fs, engine);
  const report = await scanResolved(discovery.targets, resolved, fs, discovery.skipped, engine);
  // docs/node.md N6: fenced dirs are scanned (read-only, never repaired) only on request.
  const scanFenced = options.includeFenced
    ? async (dir: string) =>
        (
          await scanResolved(
            [{ path: dir, singleLog: false }],
            resolveScanOptions({ ...withEngine, onProgress: undefined, concurrency: 1 }),
            fs,
            [],
            engine,
          )
        ).partitions[0] ?? null
    : undefined;
  report.node = await finishNode(node, withEngine, fs, engine, report.partitions, scanFenced);
  return report;
}

/** Scans targets found by `discover` (the CLI discovers first, to check its paths). */
export async function scanTargets(
  targets: readonly ScanTarget[],
  options: ScanOptions,
  scanFs?: ScanFs,
  skipped: readonly IgnoredEntry[] = [],
): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  return scanResolved(targets, resolved, scanFs ?? defaultScanFs(resolved.io), skipped, options.engine);
}

async function scanResolved(
  targets: readonly ScanTarget[],
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  skipped: readonly IgnoredEntry[],
  engineOption?: ScanOptions["engine"],
): Promise<ScanReport> {
  const startedAt = performance.now();
  const engine: Engine = await resolveEngineOption(engineOption);
  const { concurrency } = resolved;
  const readable = targets.filter((target) => target.failure === undefined);
  // Workers read through the real filesystem with their own engine: a caller's
  // ScanFs (tests' fault injection) keeps the scan in this thread.
  const pooled =
    concurrency > 1 &&
    readable.length > 1 &&
    (scanFs === nodeScanFs || scanFs === nodeBlockingScanFs) &&
    poolAvailable() &&
    sum(await logBytesByTarget(readable, scanFs, resolved.signal)) >= POOL_MIN_BYTES;
  const scanned = pooled
    ? await scanOnPool(readable, {
        concurrency,
        engineKind: engine.kind,
        used: resolved.used,
        signal: resolved.signal,
        onProgress: resolved.onProgress,
      })
    : await scanSequentially(readable, engine, resolved, scanFs);
  // Failed listings keep their place in discovery order beside the scanned partitions.
  const byPath = new Map(readable.map((target, i) => [target, scanned[i]!]));
  const partitions = targets.map((target) => byPath.get(target) ?? failedTarget(target.path, target.failure!, { options: resolved }));
  const report = assembleReport(engine, resolved.used, partitions, performance.now() - startedAt);
  if (skipped.length > 0) report.skipped = [...skipped];
  return report;
}

function sum(totals: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const bytes of totals.values()) total += bytes;
  return total;
}

async function scanSequentially(
  targets: readonly ScanTarget[],
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
): Promise<PartitionReport[]> {
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
