/**
 * Where a scan runs: the one place that chooses (docs/engines.md §7.5, §7.6).
 * Every scan of the library and the CLI (`scanPartition`, `scanPath`,
 * `scanIter`, the CLI's discovered scans, repair's re-scans) asks here twice:
 *
 * 1. `placeScan`, before anything is read: the whole scan on the caller's
 *    thread, or on the scan thread with blocking reads (the library's async
 *    io, at the speed of blocking reads).
 * 2. `loadThreads`, on the thread that scans, once the first targets are
 *    known: its partition loads on that thread (1), or on a pool of worker
 *    threads (> 1), reports still in target order.
 *
 * Both off-thread paths run src/node/scan-worker.ts through one protocol
 * (src/node/threads.ts); where a scan runs never changes its report. A new
 * policy is a change here and nowhere else.
 */
import { isOwnEngine } from "../engine/own.js";
import type { EngineKind } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import type { ResolvedScanOptions, ScanOptions } from "../recovery/options.js";
import { isRealScanFs } from "../recovery/scan.js";

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
 * (docs/engines.md §7.5, bench/scale.ts): 2,000 partitions of 204 KiB, deep,
 * took 270 ms on one thread and 530 ms on a pool of 2.
 */
export const POOL_MIN_BYTES_PER_PARTITION = 1024 * 1024;

/**
 * Targets whose logs are stat'ed for the bytes rule (`poolPays`): a node of
 * small partitions is decided without a stat of every log (that pass cost a
 * tenth of such a scan), and a streamed discovery keeps streaming.
 */
export const POOL_SAMPLE_TARGETS = 256;

/** What the scan thread is told of the options: all but the engine object, signal and callback (relayed), and `io` (the thread reads blocking). */
export type ThreadScanOptions = Omit<ScanOptions, "engine" | "signal" | "onProgress" | "io"> & { engine?: EngineKind };

/** Where a whole scan runs, and what the scan thread is told of its options. */
export type ScanPlace = { where: "caller" } | { where: "scan-thread"; options: ThreadScanOptions };

/** This package's worker threads can start: the compiled `.js` (the worker module lives beside it), not the TypeScript sources. */
function compiled(): boolean {
  return import.meta.url.endsWith(".js");
}

/** Deno: its `Worker` does not take this package's worker options, so the scan thread stays off there. */
function onDeno(): boolean {
  return typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
}

/**
 * Where the whole scan runs (docs/engines.md §7.6): on the scan thread only
 * for async io on the real filesystem with an engine this package made (sent
 * by kind), from compiled JS on Node; blocking io (the CLI, a worker), a
 * ScanFs of the caller's (fault injection, or `nodeScanFs` to keep libuv
 * reads on the caller's thread) or an engine the caller wrote keep it on the
 * caller's thread. Scans the thread could not reproduce exactly never go there.
 */
export function placeScan(options: ScanOptions, resolved: Pick<ResolvedScanOptions, "io">, scanFs: ScanFs | undefined): ScanPlace {
  if (resolved.io !== "async" || scanFs !== undefined || !compiled() || onDeno()) return { where: "caller" };
  const { engine, signal: _signal, onProgress: _onProgress, io: _io, ...rest } = options;
  if (engine === undefined) return { where: "scan-thread", options: rest };
  if (typeof engine === "string") return { where: "scan-thread", options: { ...rest, engine } };
  return isOwnEngine(engine) ? { where: "scan-thread", options: { ...rest, engine: engine.kind } } : { where: "caller" };
}

/** What the first targets of a scan show the pool decision; each is taken only when the decision needs it. */
export interface TargetSample {
  /** Readable targets (a failed one is no load) among the first `upTo`, and whether they are all the scan's targets. */
  count(upTo: number): Promise<{ readable: number; complete: boolean }>;
  /** The `.log` bytes of the readable targets among the first `upTo` (one stat per file). */
  logBytes(upTo: number): Promise<number>;
}

/**
 * How many threads load a scan's partitions (docs/engines.md §7.5): 1 (the
 * scanning thread itself), or a pool of that many workers, when `concurrency
 * > 1` asks for one, the filesystem is the real one (a caller's ScanFs stays
 * on its thread), the package is compiled, and there is more than one
 * partition whose logs are large enough for the pool to pay (`poolPays`, judged
 * on the first POOL_SAMPLE_TARGETS). A count of small partitions alone never
 * pays: each one's round trip to a worker costs more than the second core
 * saves (docs/engines.md §7.5, measured).
 */
export async function loadThreads(
  resolved: Pick<ResolvedScanOptions, "concurrency">,
  scanFs: ScanFs,
  sample: TargetSample,
): Promise<number> {
  if (resolved.concurrency <= 1 || !isRealScanFs(scanFs) || !compiled()) return 1;
  const sampled = await sample.count(POOL_SAMPLE_TARGETS);
  if (sampled.readable <= 1 || !poolPays(await sample.logBytes(POOL_SAMPLE_TARGETS), sampled.readable)) return 1;
  return sampled.complete ? Math.min(resolved.concurrency, sampled.readable) : resolved.concurrency;
}

/** Whether a scan of this much log data in this many partitions goes to the worker pool (when one is asked for). */
export function poolPays(logBytes: number, partitions: number): boolean {
  return logBytes >= POOL_MIN_BYTES && logBytes / partitions >= POOL_MIN_BYTES_PER_PARTITION;
}
