/**
 * The library entry points (SPEC §9.1): scan one partition, or discover
 * partitions under a path and scan each. Read-only: nothing here writes.
 */
import { basename, dirname, join, resolve } from "node:path";
import { INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { abortError } from "../io/errors.js";
import { type ScanFs, nodeScanFs } from "../io/fs.js";
import type { PartitionReport, ScanReport } from "../report/types.js";
import { type ScanOptions, resolveScanOptions } from "./options.js";
import { loadPartition, parseSegmentStem } from "./partition.js";
import type { SegmentFiles } from "./segment.js";

export const SEGSCAN_VERSION = "1.0.0";

/** Directories segscan itself creates beside a partition: never scanned as partitions. */
const OWN_DIRECTORY_PATTERN = /\.(segscan|fenced\.\d+)$/;

export interface ScanTarget {
  /** A partition directory, or one `.log` file scanned as a partition of one segment. */
  path: string;
  singleLog: boolean;
}

export async function scanPartition(directory: string, options: ScanOptions = {}, scanFs: ScanFs = nodeScanFs): Promise<ScanReport> {
  return scanTargets([{ path: resolve(directory), singleLog: false }], options, scanFs);
}

export async function scanPath(paths: string | readonly string[], options: ScanOptions = {}, scanFs: ScanFs = nodeScanFs): Promise<ScanReport> {
  const targets: ScanTarget[] = [];
  for (const path of typeof paths === "string" ? [paths] : paths) targets.push(...(await discoverTargets(resolve(path), scanFs)));
  return scanTargets(targets, options, scanFs);
}

/**
 * Partitions under `path`: directories holding `.log` files, in path order
 * (SPEC §9.2). A `.log` path is a target of its own.
 */
export async function discoverTargets(path: string, scanFs: ScanFs = nodeScanFs): Promise<ScanTarget[]> {
  const info = await scanFs.stat(path);
  if (info.isFile) {
    if (!path.endsWith(LOG_SUFFIX)) throw new TypeError(`${path} is not a .log file, a partition directory or a data directory`);
    return [{ path, singleLog: true }];
  }
  const found: ScanTarget[] = [];
  const visit = async (directory: string): Promise<void> => {
    const entries = await scanFs.list(directory);
    if (entries.some((entry) => entry.isFile && entry.name.endsWith(LOG_SUFFIX))) found.push({ path: directory, singleLog: false });
    const children = entries.filter((entry) => entry.isDirectory && !OWN_DIRECTORY_PATTERN.test(entry.name)).map((entry) => entry.name).sort();
    for (const child of children) await visit(join(directory, child));
  };
  await visit(path);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function singleLogFiles(logPath: string, scanFs: ScanFs): Promise<SegmentFiles> {
  const stem = basename(logPath).slice(0, -LOG_SUFFIX.length);
  const indexPath = join(dirname(logPath), stem + INDEX_SUFFIX);
  const indexSize = await scanFs.stat(indexPath).then((info) => info.size, () => 0);
  return {
    startOffset: parseSegmentStem(stem) ?? 0n,
    logPath,
    indexPath,
    logSize: (await scanFs.stat(logPath)).size,
    indexSize,
  };
}

export async function scanTargets(targets: readonly ScanTarget[], options: ScanOptions, scanFs: ScanFs): Promise<ScanReport> {
  const startedAt = performance.now();
  const resolved = resolveScanOptions(options);
  const engine: Engine = options.engine ?? (await createEngine());
  const partitions: PartitionReport[] = [];
  for (const target of targets) {
    if (resolved.signal?.aborted) throw abortError(resolved.signal);
    const singleLog = target.singleLog ? await singleLogFiles(target.path, scanFs) : undefined;
    partitions.push(await loadPartition(target.path, { engine, scanFs, options: resolved }, singleLog));
  }
  return assembleReport(engine, resolved.used, partitions, performance.now() - startedAt);
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
