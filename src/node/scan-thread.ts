/**
 * The library's default io, async, without paying for it (issue 23 item 3).
 * With `io: "async"` on the caller's thread every listing, stat, open and read
 * is a round trip through libuv's threadpool: a scan of many small partitions
 * took 2.8–3× the time of blocking reads (bench/scale.ts, 2,000 × 204 KiB). So
 * `scanPath` and `scanIter` run such a scan on one scan thread (a Worker) with
 * blocking reads, the way the CLI scans, and hand its results back by
 * structured clone: the caller's event loop is never blocked, and each report
 * is the one a scan on the caller's thread makes (test/scan-thread.test.ts).
 *
 * Only scans the thread reproduces exactly go there: the real filesystem (a
 * scan given a ScanFs, `nodeScanFs` included, stays on the caller's thread), an
 * engine of this package's (passed by kind; an engine the caller wrote stays
 * on the caller's thread), compiled JS (not the TypeScript sources), Node.js.
 * Progress events and the AbortSignal are relayed; an error comes back with
 * its class (the built-in ones), name, message and code. The thread is kept
 * between scans, unreferenced (it never keeps a process alive), and ends after
 * SCAN_THREAD_IDLE_MS without work.
 */
import type { Worker } from "node:worker_threads";
import type { PartitionReport, ScanReport } from "../domain/scan.js";
import type { EngineKind } from "../engine/types.js";
import { isOwnEngine } from "../engine/own.js";
import { abortError } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import type { ProgressEvent, ScanOptions } from "../recovery/options.js";
import { startWorker } from "../recovery/pool.js";
import { usePartitionThread } from "../recovery/scan.js";

/** The compiled thread entry beside this module. */
export const SCAN_THREAD_URL = new URL("./scan-thread-worker.js", import.meta.url);

/** An idle scan thread ends after this long; the next scan starts another. */
export const SCAN_THREAD_IDLE_MS = 5000;

/** Partitions `scanIter`'s thread may send before the caller has taken them: memory stays flat for a slow consumer. */
export const PARTITIONS_AHEAD = 16;

/** What the thread is told of the options: all but the engine object, signal and callback (relayed), and `io` (the thread reads blocking). */
export type ThreadScanOptions = Omit<ScanOptions, "engine" | "signal" | "onProgress" | "io"> & { engine?: EngineKind };

export type ThreadCall = "scanPath" | "scanIter" | "scanPartition";

export type ThreadRequest =
  | { type: "scan"; id: number; call: ThreadCall; paths: readonly string[]; options: ThreadScanOptions; progress: boolean }
  /** `scanIter`: the caller took `count` more partitions. */
  | { type: "more"; id: number; count: number }
  /** The caller stopped (aborted, or left a `scanIter` loop): stop and send nothing more. */
  | { type: "stop"; id: number };

export interface ThreadError {
  name: string;
  message: string;
  stack?: string | undefined;
  code?: unknown;
}

export type ThreadReply =
  | { type: "progress"; id: number; event: ProgressEvent }
  | { type: "partition"; id: number; partition: PartitionReport }
  /** `scanPath`: reports sent on as the scan makes them, so their copies overlap the scan; `done` then has `partitions: []`. */
  | { type: "partitions"; id: number; partitions: PartitionReport[] }
  | { type: "done"; id: number; result: unknown }
  | { type: "error"; id: number; error: ThreadError };

function threadAvailable(): boolean {
  return import.meta.url.endsWith(".js") && typeof (globalThis as { Deno?: unknown }).Deno === "undefined";
}

/**
 * The options to hand a scan thread, or null when this scan stays on the
 * caller's thread: blocking io asked for, a ScanFs given, an engine the
 * package did not make, or no thread to be had.
 */
export function threadOptions(
  options: ScanOptions,
  io: "async" | "blocking",
  scanFsOverride: ScanFs | undefined,
): ThreadScanOptions | null {
  if (io !== "async" || scanFsOverride !== undefined || !threadAvailable()) return null;
  const { engine, signal: _signal, onProgress: _onProgress, io: _io, ...rest } = options;
  if (engine === undefined || typeof engine === "string") return engine === undefined ? rest : { ...rest, engine };
  return isOwnEngine(engine) ? { ...rest, engine: engine.kind } : null;
}

interface Pending {
  onProgress: ((event: ProgressEvent) => void) | undefined;
  onPartition: ((partition: PartitionReport) => void) | undefined;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

const BUILT_IN_ERRORS: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** An error from the thread as the caller's thread would have thrown it: the same class (built-ins), name, message, code and stack. */
function revive(sent: ThreadError): Error {
  const error = new (BUILT_IN_ERRORS[sent.name] ?? Error)(sent.message);
  if (error.name !== sent.name) error.name = sent.name;
  if (sent.stack !== undefined) error.stack = sent.stack;
  if (sent.code !== undefined) (error as NodeJS.ErrnoException).code = sent.code as string;
  return error;
}

/** The one scan thread of this process, started on demand. */
class ScanThread {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private idle: ReturnType<typeof setTimeout> | null = null;

  /** Starts a scan on the thread; `pending` hears what it sends. */
  start(call: ThreadCall, paths: readonly string[], options: ThreadScanOptions, handlers: Omit<Pending, "onAbort">): number {
    const id = this.nextId++;
    const worker = this.acquire();
    const entry: Pending = {
      ...handlers,
      onAbort: () => {
        this.finish(id);
        this.send({ type: "stop", id });
        handlers.reject(abortError(handlers.signal!));
      },
    };
    this.pending.set(id, entry);
    handlers.signal?.addEventListener("abort", entry.onAbort, { once: true });
    worker.postMessage({
      type: "scan",
      id,
      call,
      paths: [...paths],
      options,
      progress: handlers.onProgress !== undefined,
    } satisfies ThreadRequest);
    return id;
  }

  send(request: ThreadRequest): void {
    this.worker?.postMessage(request);
  }

  /** Forgets request `id` (its promise is settled by the caller); the thread goes idle when none is left. */
  finish(id: number): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    entry.signal?.removeEventListener("abort", entry.onAbort);
    if (this.pending.size === 0 && this.worker !== null) {
      this.worker.unref();
      const worker = this.worker;
      this.idle = setTimeout(() => {
        if (this.worker !== worker || this.pending.size > 0) return;
        this.worker = null;
        void worker.terminate();
      }, SCAN_THREAD_IDLE_MS);
      this.idle.unref();
    }
  }

  private acquire(): Worker {
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
    if (this.worker === null) {
      const worker = startWorker(SCAN_THREAD_URL);
      worker.on("message", (reply: ThreadReply) => this.receive(reply));
      worker.on("error", (error: Error) => this.lost(worker, error));
      worker.on("exit", (code: number) =>
        this.lost(worker, new Error(`segscan: the scan thread exited (code ${code}) before the scan finished`)),
      );
      this.worker = worker;
    }
    this.worker.ref();
    return this.worker;
  }

  private receive(reply: ThreadReply): void {
    const entry = this.pending.get(reply.id);
    if (entry === undefined) return; // stopped: what was already on its way is dropped
    try {
      switch (reply.type) {
        case "progress":
          entry.onProgress?.(reply.event);
          return;
        case "partition":
          entry.onPartition?.(reply.partition);
          return;
        case "partitions":
          for (const partition of reply.partitions) entry.onPartition?.(partition);
          return;
        case "done":
          this.finish(reply.id);
          entry.resolve(reply.result);
          return;
        case "error":
          this.finish(reply.id);
          entry.reject(revive(reply.error));
          return;
      }
    } catch (error) {
      // A callback of the caller's threw: the scan stops with its error, as it would on the caller's thread.
      this.finish(reply.id);
      this.send({ type: "stop", id: reply.id });
      entry.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** The thread died: every scan on it fails with the reason, and the next scan starts another thread. */
  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const [id, entry] of [...this.pending]) {
      this.finish(id);
      entry.reject(error);
    }
  }
}

let thread: ScanThread | null = null;
const scanThread = (): ScanThread => {
  thread ??= new ScanThread();
  return thread;
};

/** `scanPath` (or `scanPartition` of the one path) on the scan thread. */
export function scanPathOnThread(
  paths: readonly string[],
  options: ThreadScanOptions,
  signal: AbortSignal | undefined,
  onProgress: ((event: ProgressEvent) => void) | undefined,
  call: "scanPath" | "scanPartition" = "scanPath",
): Promise<ScanReport> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const partitions: PartitionReport[] = [];
  return new Promise<ScanReport>((resolve, reject) => {
    scanThread().start(call, paths, options, {
      signal,
      onProgress,
      onPartition: (partition) => partitions.push(partition),
      resolve: (result) => {
        const report = result as ScanReport;
        // The thread sent the partitions ahead; `partitions` keeps its place among the keys.
        if (call === "scanPath") report.partitions = partitions;
        resolve(report);
      },
      reject,
    });
  });
}

/** `scanIter` on the scan thread: partitions as the thread sends them, at most PARTITIONS_AHEAD ahead of the caller. */
export async function* scanIterOnThread<Summary>(
  paths: readonly string[],
  options: ThreadScanOptions,
  signal: AbortSignal | undefined,
  onProgress: ((event: ProgressEvent) => void) | undefined,
): AsyncGenerator<PartitionReport, Summary, undefined> {
  if (signal?.aborted) throw abortError(signal);
  const received: PartitionReport[] = [];
  let settled: { result: Summary } | { error: Error } | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const waiting = wake;
    wake = null;
    waiting?.();
  };
  const threads = scanThread();
  const id = threads.start("scanIter", paths, options, {
    signal,
    onProgress,
    onPartition: (partition) => {
      received.push(partition);
      notify();
    },
    resolve: (result) => {
      settled = { result: result as Summary };
      notify();
    },
    reject: (error) => {
      settled = { error };
      notify();
    },
  });
  try {
    for (;;) {
      const partition = received.shift();
      if (partition !== undefined) {
        threads.send({ type: "more", id, count: 1 });
        yield partition;
        continue;
      }
      const outcome = settled as { result: Summary } | { error: Error } | null;
      if (outcome !== null) {
        if ("error" in outcome) throw outcome.error;
        return outcome.result;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    if (settled === null) {
      // The caller left the loop early: the thread stops this scan.
      threads.finish(id);
      threads.send({ type: "stop", id });
    }
  }
}

// `scanPartition` (a layer down, in src/recovery/scan.ts) hands its async scans here too, once this module has loaded.
usePartitionThread((directory, options, resolved) => {
  const onThread = threadOptions(options, resolved.io, undefined);
  return onThread === null ? null : scanPathOnThread([directory], onThread, resolved.signal, resolved.onProgress, "scanPartition");
});
