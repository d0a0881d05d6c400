/**
 * The partition scans (docs/interfaces.md §9.1): scan one partition, or the
 * partitions discovery found under paths, each loaded on this thread or on the
 * worker pool and reported in path order. Nothing here knows the node: the
 * library's `scanPath` and `scanIter` (src/node/scan-path.ts) add the node
 * section through `onPartition`, which sees each partition as it is reported
 * with the names its load listed in its directory. Read-only: nothing here writes.
 */
import { resolve } from "node:path";
import type { Engine, EngineWindow } from "../engine/types.js";
import { LOG_SUFFIX } from "../format/constants.js";
import { abortError } from "../io/errors.js";
import { type ScanFs, nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import { type IgnoredEntry, type PartitionReport, type ScanOptionsUsed, type ScanReport, countFindings } from "../domain/scan.js";
import { type ResolvedScanOptions, type ScanOptions, resolveEngineOption, resolveScanOptions } from "./options.js";
import { failedTarget, loadListedPartition, openScanWindow } from "./partition.js";
import { poolAvailable, scanOnPool } from "./pool.js";
import { type ScanTarget, discover, logBytesByTarget } from "./targets.js";
import { SEGSCAN_VERSION } from "../version.js";

export {
  discover,
  discoverStream,
  discoverTargets,
  logBytesByTarget,
  type DiscoveredRoot,
  type Discovery,
  type DiscoverySink,
  type ScanTarget,
} from "./targets.js";

/** Targets as `discover` returns them, or as `discoverStream` finds them. */
export type TargetSource = readonly ScanTarget[] | AsyncIterable<ScanTarget>;

/** What `scanTargets` and `streamTargets` scan: a collected Discovery, or a stream whose `skipped` fills as it is walked. */
export interface DiscoveredTargets {
  targets: TargetSource;
  skipped: readonly IgnoredEntry[];
  /** docs/node.md N0: the node roots discovery listed, by real path; a stream's fills as it is walked (see `DiscoverySink`). */
  nodeRoots?: readonly string[];
}

/**
 * Called with each partition's report as the scan reports it (in path order),
 * before the next: `directoryNames` are the names its load listed in its
 * directory (undefined when it listed none, or scanned on the worker pool), so
 * a caller that looks at the partition dir again (the node pass) need not list
 * it again. The scan waits for a returned promise.
 */
export type PartitionSink = (partition: PartitionReport, directoryNames: ReadonlySet<string> | undefined) => Promise<void> | void;

/** A partition's report and the names its load listed (only when a PartitionSink wants them). */
interface ScannedPartition {
  report: PartitionReport;
  directoryNames?: ReadonlySet<string> | undefined;
}

export { SEGSCAN_VERSION } from "../version.js";

/**
 * Below this much log data a worker pool costs more than it saves: each worker
 * takes ~100–250 ms to start and compile the engine, while one thread scans
 * tens of MiB in that time.
 */
export const POOL_MIN_BYTES = 64 * 1024 * 1024;

/**
 * Below this much log data per partition, on average, the pool costs more
 * than it saves whatever the total: each partition costs a request and a
 * report round trip (structured clones) on top of the workers' start-up, and
 * one thread scans a small partition faster than that. Measured on 2 cores
 * (issue 13, bench/scale.ts): 2,000 partitions of 204 KiB, deep, took 270 ms
 * on one thread and 530 ms on a pool of 2.
 */
export const POOL_MIN_BYTES_PER_PARTITION = 1024 * 1024;

/**
 * Most partition loads in flight on one thread with async io. A small
 * partition is a chain of metadata round trips through libuv's threadpool
 * (list, stat, open, index read, close); one at a time leaves the thread idle
 * most of the scan (issue 13), while a few in flight keep the threadpool's 4
 * threads busy. More than twice its size only queues.
 */
export const PARTITIONS_IN_FLIGHT = 8;

/**
 * Window memory the loads in flight may hold together: each holds one window,
 * so a large `windowBytes` lowers the count (down to 1) and a scan's window
 * memory stays ≤ max(this, windowBytes).
 */
const IN_FLIGHT_WINDOW_BUDGET_BYTES = 8 * 1024 * 1024;

/** Loads in flight for these options: 1 with blocking io (every call blocks, nothing to overlap). */
function partitionsInFlight(resolved: Pick<ResolvedScanOptions, "io" | "used">): number {
  if (resolved.io === "blocking") return 1;
  return Math.max(1, Math.min(PARTITIONS_IN_FLIGHT, Math.floor(IN_FLIGHT_WINDOW_BUDGET_BYTES / resolved.used.windowBytes)));
}

/**
 * One partition directory. `scanFs` replaces the filesystem (tests inject
 * faults through it); by default `options.io` picks one. A directory that holds
 * no `.log` at all is refused (TypeError): it is no partition, and a data dir
 * belongs to `scanPath`.
 */
export async function scanPartition(directory: string, options: ScanOptions = {}, scanFs?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  if (typeof directory !== "string") throw new TypeError(`scanPartition: directory must be a path string, got ${String(directory)}`);
  const onThread = scanFs === undefined ? partitionThread?.(directory, options, resolved) : null;
  if (onThread) return onThread;
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
  // The load takes this listing instead of listing the directory again.
  return scanResolved([{ path, singleLog: false, entries: entries ?? undefined }], resolved, fs, [], options.engine);
}

/**
 * Runs `scanPartition` on the scan thread (docs/engines.md §7.6), or returns
 * null to keep the scan on this thread. The thread lives a layer up
 * (src/node/scan-thread.ts), which registers itself here when it loads.
 */
export type PartitionThread = (directory: string, options: ScanOptions, resolved: ResolvedScanOptions) => Promise<ScanReport> | null;

let partitionThread: PartitionThread | null = null;

/** Where `scanPartition` may hand its scan (null: always this thread). */
export function usePartitionThread(run: PartitionThread | null): void {
  partitionThread = run;
}

/** The filesystem a scan reads through when the caller gives none: `options.io` picks it. */
export function defaultScanFs(io: "async" | "blocking"): ScanFs {
  return io === "blocking" ? nodeBlockingScanFs : nodeScanFs;
}

/** `paths` as a list, or a TypeError naming `caller` when they are not path strings. */
export function scanPathList(paths: string | readonly string[], caller: string): readonly string[] {
  const list = typeof paths === "string" ? [paths] : paths;
  if (!Array.isArray(list) || list.some((path) => typeof path !== "string")) {
    throw new TypeError(`${caller}: paths must be a path string or an array of path strings`);
  }
  return list;
}

/**
 * The partitions under a data dir, any dir under it, a partition dir, or one
 * `.log` (several paths allowed), without the node section: the library's
 * `scanPath` (src/node/scan-path.ts) is this plus the node section of a node
 * root. Repair re-scans a single `.log` through it.
 */
export async function scanPartitionPaths(
  paths: string | readonly string[],
  options: ScanOptions = {},
  scanFsOverride?: ScanFs,
): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const list = scanPathList(paths, "scanPath");
  const scanFs = scanFsOverride ?? defaultScanFs(resolved.io);
  return scanTargets(await discover(list, scanFs, resolved.signal), options, scanFs);
}

/**
 * Scans the targets discovery found (the CLI discovers first, to check its
 * paths): every partition's report in target order, with the skipped links.
 * `onPartition` sees each partition as it is reported.
 */
export async function scanTargets(
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs?: ScanFs,
  onPartition?: PartitionSink,
): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  return scanResolved(discovery.targets, resolved, fs, discovery.skipped, options.engine, onPartition);
}

async function scanResolved(
  targets: TargetSource,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  skipped: readonly IgnoredEntry[],
  engineOption?: ScanOptions["engine"],
  onPartition?: PartitionSink,
): Promise<ScanReport> {
  const startedAt = performance.now();
  const engine: Engine = await resolveEngineOption(engineOption);
  const partitions: PartitionReport[] = [];
  for await (const { report, directoryNames } of await scanInOrder(targets, engine, resolved, scanFs, onPartition !== undefined)) {
    await onPartition?.(report, directoryNames);
    partitions.push(report);
  }
  const report = assembleReport(engine, resolved.used, partitions, performance.now() - startedAt);
  if (skipped.length > 0) report.skipped = [...skipped];
  return report;
}

/**
 * Every target's report in target order: on the worker pool when it pays
 * (several workers asked for, the real filesystem, ≥ POOL_MIN_BYTES of logs),
 * else on this thread. The pool hands back its reports together (its memory
 * grows with the partition count); this thread's scan streams them. The
 * first POOL_SAMPLE_TARGETS targets are sampled: small partitions never go to
 * the pool, so the rest keeps streaming.
 */
async function scanInOrder(
  source: TargetSource,
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  /** Hand on each partition's directory names (a PartitionSink wants them). */
  keepDirectoryNames = false,
): Promise<AsyncGenerator<ScannedPartition, void, undefined>> {
  // Decides, then hands out the one generator that scans: a generator delegating to another cost a few promises per partition (issue 23).
  const poolWanted = resolved.concurrency > 1 && (scanFs === nodeScanFs || scanFs === nodeBlockingScanFs) && poolAvailable();
  if (!poolWanted) return loadInOrder(source, engine, resolved, scanFs, keepDirectoryNames);
  // The first POOL_SAMPLE_TARGETS decide a node of small partitions without a
  // stat of every log (that pass cost a tenth of such a scan), and a streamed
  // discovery keeps streaming.
  const iterator = isTargetList(source) ? chain(source, null) : source[Symbol.asyncIterator]();
  const sample: ScanTarget[] = [];
  let exhausted = false;
  while (!exhausted && sample.length < POOL_SAMPLE_TARGETS) {
    const next = await iterator.next();
    if (next.done) exhausted = true;
    else sample.push(next.value);
  }
  const readableSample = sample.filter((target) => target.failure === undefined);
  // One partition (or none) never goes to the pool: no stats to decide it.
  if (exhausted && readableSample.length <= 1) return loadInOrder(sample, engine, resolved, scanFs, keepDirectoryNames);
  const sampleBytes = sum(await logBytesByTarget(readableSample, scanFs, resolved.signal));
  if (!exhausted && sampleBytes < readableSample.length * POOL_MIN_BYTES_PER_PARTITION) {
    return loadInOrder(chain(sample, iterator), engine, resolved, scanFs, keepDirectoryNames);
  }
  const rest = exhausted ? [] : await collect(iterator);
  const targets = [...sample, ...rest];
  const readable = targets.filter((target) => target.failure === undefined);
  const readableRest = rest.filter((target) => target.failure === undefined);
  const logBytes = sampleBytes + sum(await logBytesByTarget(readableRest, scanFs, resolved.signal));
  const pooled = readable.length > 1 && poolPays(logBytes, readable.length);
  if (!pooled) return loadInOrder(targets, engine, resolved, scanFs, keepDirectoryNames);
  return (async function* (): AsyncGenerator<ScannedPartition, void, undefined> {
    const scanned = await scanOnPool(readable, {
      concurrency: resolved.concurrency,
      engineKind: engine.kind,
      used: resolved.used,
      signal: resolved.signal,
      onProgress: resolved.onProgress,
    });
    // Failed listings keep their place in discovery order beside the scanned partitions.
    const byPath = new Map(readable.map((target, i) => [target, scanned[i]!]));
    for (const target of targets) yield { report: byPath.get(target) ?? failedTarget(target.path, target.failure!, { options: resolved }) };
  })();
}

/**
 * Targets sampled before the pool decision: if their logs average under
 * POOL_MIN_BYTES_PER_PARTITION the scan stays on this thread and keeps
 * streaming (a node of many small partitions); otherwise the rest is
 * collected and the decision made on all of them.
 */
export const POOL_SAMPLE_TARGETS = 256;

function isTargetList(source: TargetSource): source is readonly ScanTarget[] {
  return Array.isArray(source);
}

/** `first`, then whatever `rest` still holds. */
async function* chain(first: readonly ScanTarget[], rest: AsyncIterator<ScanTarget> | null): AsyncGenerator<ScanTarget> {
  yield* first;
  if (rest === null) return;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

async function collect(iterator: AsyncIterator<ScanTarget>): Promise<ScanTarget[]> {
  const out: ScanTarget[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) out.push(next.value);
  return out;
}

/** Whether a scan of this much log data in this many partitions goes to the worker pool (when one is asked for). */
export function poolPays(logBytes: number, partitions: number): boolean {
  return logBytes >= POOL_MIN_BYTES && logBytes / partitions >= POOL_MIN_BYTES_PER_PARTITION;
}

function sum(totals: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const bytes of totals.values()) total += bytes;
  return total;
}

/**
 * Every target's report, in target order, on this thread: up to
 * `partitionsInFlight` loads run at once (each in its own engine window,
 * reused by the next load), and each report is handed on as soon as every
 * earlier one has been. A load that fails to read fails only its own
 * partition (loadPartition reports it); anything else (an abort, a bug)
 * rejects the scan after the loads in flight have settled.
 */
async function* loadInOrder(
  source: TargetSource,
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  keepDirectoryNames = false,
): AsyncGenerator<ScannedPartition, void, undefined> {
  const limit = partitionsInFlight(resolved);
  const idleWindows: EngineWindow[] = [];
  const pending: Promise<ScannedPartition>[] = [];
  const start = (target: ScanTarget): Promise<ScannedPartition> => {
    if (target.failure !== undefined) return Promise.resolve({ report: failedTarget(target.path, target.failure, { options: resolved }) });
    const engineWindow = idleWindows.pop() ?? openScanWindow(engine, resolved.used);
    // The listing is used once: a target scanned again is listed afresh.
    const entries = target.entries;
    target.entries = undefined;
    const load = loadListedPartition(
      target.path,
      { engine, scanFs, options: resolved, engineWindow },
      target.singleLog,
      entries,
      target.preserveDirListed,
    )
      .then(({ report, directoryNames }) => ({ report, directoryNames: keepDirectoryNames ? directoryNames : undefined }))
      .finally(() => idleWindows.push(engineWindow));
    load.catch(() => undefined); // observed below, in order; never an unhandled rejection meanwhile
    return load;
  };
  // Blocking io lists as it is asked (nothing to overlap): targets held ahead only live long enough to be promoted to the old generation.
  const targets = isTargetList(source)
    ? source[Symbol.iterator]()
    : resolved.io === "blocking"
      ? source[Symbol.asyncIterator]()
      : readAhead(source[Symbol.asyncIterator](), TARGETS_READ_AHEAD);
  let exhausted = false;
  try {
    while (!exhausted || pending.length > 0) {
      while (pending.length < limit && !exhausted) {
        if (resolved.signal?.aborted) throw abortError(resolved.signal);
        const next = await targets.next();
        if (next.done) exhausted = true;
        else pending.push(start(next.value));
      }
      if (pending.length > 0) yield await pending.shift()!;
    }
  } finally {
    await Promise.allSettled(pending);
    for (const engineWindow of idleWindows) engineWindow.close();
    if (!exhausted) await targets.return?.();
  }
}

/**
 * Targets a streamed discovery is asked for ahead of the loads. Without it,
 * discovery ran only when a load slot freed, so each partition's listing
 * round trips (a stat and a listing through libuv's threadpool with async io)
 * sat between one load and the next; a few ahead keep the slots fed while the
 * loads run. A target holds its listing until loaded, so this stays small.
 */
const TARGETS_READ_AHEAD = 16;

/**
 * Pulls from `source` in the background, up to `depth` items ahead of the
 * consumer; items and a failure come out in the source's order. `return`
 * stops the pulling and closes the source.
 */
function readAhead<T>(source: AsyncIterator<T>, depth: number): AsyncIterator<T> {
  const buffered: T[] = [];
  let finished = false;
  let failed = false;
  let failure: unknown;
  let pump: Promise<void> | null = null;
  const fill = (): Promise<void> => {
    pump ??= (async () => {
      try {
        while (!finished && buffered.length < depth) {
          const next = await source.next();
          if (next.done) finished = true;
          else buffered.push(next.value);
        }
      } catch (error) {
        failed = true;
        failure = error;
        finished = true;
      } finally {
        pump = null;
      }
    })();
    return pump;
  };
  return {
    async next(): Promise<IteratorResult<T>> {
      while (buffered.length === 0 && !finished) await fill();
      if (buffered.length > 0) {
        const value = buffered.shift()!;
        if (!finished) void fill();
        return { done: false, value };
      }
      if (failed) throw failure;
      return { done: true, value: undefined };
    },
    async return(): Promise<IteratorResult<T>> {
      finished = true;
      await pump;
      await source.return?.();
      return { done: true, value: undefined };
    },
  };
}

/** Running totals of a streamed scan: all a streaming report keeps (its memory stays flat). */
class SummaryCounter {
  private readonly startedAt = performance.now();
  readonly summary: ScanReport["summary"] = {
    partitions: 0,
    clean: 0,
    repairable: 0,
    refused: 0,
    failed: 0,
    findings: { warn: 0, failed: 0 },
    bytesScanned: 0,
    elapsedMs: 0,
  };

  add(partition: PartitionReport): void {
    this.summary.partitions++;
    this.summary[partition.verdict]++;
    countFindings(this.summary.findings, partition.findings);
    this.summary.bytesScanned += partition.bytesScanned;
    this.summary.elapsedMs = Math.round(performance.now() - this.startedAt);
  }
}

/** A streamed scan (`scanIter`, `scan --ndjson`): what its header says, then the partitions one by one. */
export interface PartitionStream {
  segscan: string;
  engine: Engine["kind"];
  options: ScanOptionsUsed;
  skipped: readonly IgnoredEntry[];
  /** Partition reports in path order, each as soon as it and every earlier one is done; returns the summary. */
  partitions: AsyncGenerator<PartitionReport, ScanReport["summary"], undefined>;
}

/**
 * Scans the targets discovery finds as a stream. Nothing but the summary is
 * kept: on one thread memory does not grow with the partition count beyond
 * the targets themselves (the worker pool, used as in `scanTargets`, holds its
 * reports until it is done). `onPartition` sees each partition before it is
 * yielded.
 */
export async function streamTargets(
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs?: ScanFs,
  onPartition?: PartitionSink,
): Promise<PartitionStream> {
  const resolved = resolveScanOptions(options);
  const engine = await resolveEngineOption(options.engine);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  async function* partitions(): AsyncGenerator<PartitionReport, ScanReport["summary"], undefined> {
    const counter = new SummaryCounter();
    for await (const { report, directoryNames } of await scanInOrder(discovery.targets, engine, resolved, fs, onPartition !== undefined)) {
      counter.add(report);
      await onPartition?.(report, directoryNames);
      yield report;
    }
    return counter.summary;
  }
  return { segscan: SEGSCAN_VERSION, engine: engine.kind, options: resolved.used, skipped: discovery.skipped, partitions: partitions() };
}

/** A path given to a scan that is a file but not a `.log` is a caller error (TypeError), before anything is read; unreadable paths are the scan's failed items. */
export async function checkRoot(path: string, scanFs: ScanFs): Promise<void> {
  const absolute = resolve(path);
  const info = await scanFs.stat(absolute).catch(() => null);
  if (info !== null && !info.isDirectory && !absolute.endsWith(LOG_SUFFIX)) {
    throw new TypeError(`${absolute} is not a .log file, a partition directory or a data directory`);
  }
}

export function assembleReport(engine: Engine, used: ScanReport["options"], partitions: PartitionReport[], elapsedMs: number): ScanReport {
  const count = (verdict: PartitionReport["verdict"]): number => partitions.filter((partition) => partition.verdict === verdict).length;
  const findings = { warn: 0, failed: 0 };
  for (const partition of partitions) countFindings(findings, partition.findings);
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
      findings,
      bytesScanned: partitions.reduce((sum, partition) => sum + partition.bytesScanned, 0),
      elapsedMs: Math.round(elapsedMs),
    },
  };
}
