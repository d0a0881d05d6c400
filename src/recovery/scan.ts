/**
 * Partition loads on the scanning thread (docs/engines.md §7): targets in,
 * each partition's report out in target order, several loads in flight at
 * once. Which thread scans, and whether the loads go to worker threads
 * instead, is decided once, by the scan front door (src/node/placement.ts);
 * this module only loads. Read-only: nothing here writes.
 */
import { resolve } from "node:path";
import type { Engine, EngineKind, EngineWindow } from "../engine/types.js";
import { LOG_SUFFIX } from "../format/constants.js";
import { abortError } from "../io/errors.js";
import { yieldDue, yieldTurn } from "../engine/file-window.js";
import { type ScanFs, nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import { type PartitionReport, type ScanReport, countFindings } from "../domain/scan.js";
import type { ResolvedScanOptions } from "./options.js";
import { failedTarget, loadListedPartition, loadListedPartitionAsync, loadPartitionResident, openScanWindow } from "./partition.js";
import type { ScanTarget } from "./targets.js";
import { SEGSCAN_VERSION } from "../version.js";

/** Targets as `discover` returns them, or as `discoverStream` finds them. */
export type TargetSource = readonly ScanTarget[] | AsyncIterable<ScanTarget>;

/** A partition's report as a scan hands it on, with the names its load listed (for the node pass). */
export interface ScannedPartition {
  report: PartitionReport;
  /** The names the load listed in the partition's directory, when asked for and it listed one (the node pass reads them instead of listing again). */
  directoryNames?: ReadonlySet<string> | undefined;
}

/**
 * Most partition loads in flight on one thread with async io. A small
 * partition is a chain of metadata round trips through libuv's threadpool
 * (list, stat, open, index read, close); one at a time leaves the thread idle
 * most of the scan (docs/engines.md §7.5), while a few in flight keep the
 * threadpool's 4 threads busy. More than twice its size only queues.
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

/** The filesystem a scan reads through when the caller gives none: `options.io` picks it. */
export function defaultScanFs(io: "async" | "blocking"): ScanFs {
  return io === "blocking" ? nodeBlockingScanFs : nodeScanFs;
}

/** Whether `scanFs` is one of the real filesystems, which another thread reproduces exactly. */
export function isRealScanFs(scanFs: ScanFs): boolean {
  return scanFs === nodeScanFs || scanFs === nodeBlockingScanFs;
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
 * The one target of `scanPartition`: a directory that holds no `.log` at all
 * is refused (TypeError): it is no partition, and a data dir belongs to
 * `scanPath`. The listing is handed to the load, which does not list again.
 */
export async function partitionTarget(directory: string, scanFs: ScanFs): Promise<ScanTarget> {
  const path = resolve(directory);
  // A listing failure is reported by the load itself (ListFailure); only a readable directory with no `.log` is refused here.
  const entries = await scanFs.list(path).catch(() => null);
  if (entries !== null && !entries.some((entry) => !entry.isDirectory && entry.name.endsWith(LOG_SUFFIX))) {
    throw new TypeError(
      `scanPartition: ${path} holds no .log file, so it is not a partition directory; ` +
        "to scan a data dir (or any directory above partitions), call scanPath",
    );
  }
  return { path, singleLog: false, entries: entries ?? undefined };
}

/** A path given to a scan that is a file but not a `.log` is a caller error (TypeError), before anything is read; unreadable paths are the scan's failed items. */
export async function checkRoot(path: string, scanFs: ScanFs): Promise<void> {
  const absolute = resolve(path);
  const info = await scanFs.stat(absolute).catch(() => null);
  if (info !== null && !info.isDirectory && !absolute.endsWith(LOG_SUFFIX)) {
    throw new TypeError(`${absolute} is not a .log file, a partition directory or a data directory`);
  }
}

export function isTargetList(source: TargetSource): source is readonly ScanTarget[] {
  return Array.isArray(source);
}

/** `first`, then whatever `rest` still holds. */
export async function* chain(first: readonly ScanTarget[], rest: AsyncIterator<ScanTarget> | null): AsyncGenerator<ScanTarget> {
  yield* first;
  if (rest === null) return;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * Every target's report, in target order, on this thread: up to
 * `partitionsInFlight` loads run at once (each in its own engine window,
 * reused by the next load), and each report is handed on as soon as every
 * earlier one has been. A load that fails to read fails only its own
 * partition (loadPartition reports it); anything else (an abort, a bug)
 * rejects the scan after the loads in flight have settled.
 */
export async function* loadInOrder(
  source: TargetSource,
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  /** Hand on each partition's directory names (the node pass wants them). */
  keepDirectoryNames = false,
): AsyncGenerator<ScannedPartition, void, undefined> {
  const limit = partitionsInFlight(resolved);
  if (limit === 1) {
    yield* loadOneAtATime(source, engine, resolved, scanFs, keepDirectoryNames);
    return;
  }
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
      const first = pending.shift();
      if (first !== undefined) yield await first;
    }
  } finally {
    await Promise.allSettled(pending);
    for (const engineWindow of idleWindows) engineWindow.close();
    if (!exhausted) await targets.return?.();
  }
}

/**
 * `loadInOrder` with one load at a time (blocking io: nothing to overlap), as
 * a short loop with no promise per partition of its own: a partition
 * `loadPartitionResident` answers costs no promise at all, any other goes
 * the promise path. The macrotask turn a refill would take (docs/engines.md
 * §7.1) is taken between partitions, when due.
 */
async function* loadOneAtATime(
  source: TargetSource,
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  keepDirectoryNames: boolean,
): AsyncGenerator<ScannedPartition, void, undefined> {
  const list = isTargetList(source) ? source : null;
  const stream = isTargetList(source) ? null : source[Symbol.asyncIterator]();
  const engineWindow = openScanWindow(engine, resolved.used);
  const context = { engine, scanFs, options: resolved, engineWindow };
  let exhausted = false;
  try {
    for (let i = 0; ; i++) {
      if (resolved.signal?.aborted) throw abortError(resolved.signal);
      let target: ScanTarget;
      if (stream === null) {
        if (list === null || i >= list.length) break;
        target = list[i]!;
      } else {
        const next = await stream.next();
        if (next.done) break;
        target = next.value;
      }
      if (target.failure !== undefined) {
        yield { report: failedTarget(target.path, target.failure, { options: resolved }) };
        continue;
      }
      // The listing is used once: a target scanned again is listed afresh.
      const entries = target.entries;
      target.entries = undefined;
      const loaded =
        (target.singleLog ? null : loadPartitionResident(target.path, context, entries, target.preserveDirListed)) ??
        (await loadListedPartitionAsync(target.path, context, target.singleLog, entries, target.preserveDirListed));
      yield { report: loaded.report, directoryNames: keepDirectoryNames ? loaded.directoryNames : undefined };
      if (yieldDue()) await yieldTurn();
    }
    exhausted = true;
  } finally {
    engineWindow.close();
    if (!exhausted) await stream?.return?.();
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
      const value = buffered.shift();
      if (value !== undefined) {
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

/** Running totals of a scan's partitions: all a streamed report keeps (its memory stays flat). */
export class SummaryCounter {
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

/** A whole report of `partitions` (their summary counted here). */
export function assembleReport(
  engine: EngineKind,
  used: ScanReport["options"],
  partitions: PartitionReport[],
  elapsedMs: number,
): ScanReport {
  const counter = new SummaryCounter();
  for (const partition of partitions) counter.add(partition);
  return {
    segscan: SEGSCAN_VERSION,
    engine,
    options: used,
    partitions,
    summary: { ...counter.summary, elapsedMs: Math.round(elapsedMs) },
  };
}
