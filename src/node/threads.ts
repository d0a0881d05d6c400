/**
 * A scan's worker threads, on the side that starts them (docs/engines.md
 * §7.5, §7.6). One protocol serves both off-thread paths: a worker
 * (./scan-worker.ts) takes jobs — a whole scan (`partition`, `paths`) or a run
 * of partition loads (`targets`) — and answers each with its partitions,
 * progress and then its result or its error. The scan thread is one such
 * worker kept between scans; the pool is a few of them for one scan. Which
 * one a scan uses is decided in ./placement.ts, never here.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";
import type { PartitionReport, ScanReport } from "../domain/scan.js";
import type { EngineKind } from "../engine/types.js";
import { abortError } from "../io/errors.js";
import type { ProgressEvent, ResolvedScanOptions } from "../recovery/options.js";
import { failedTarget } from "../recovery/partition.js";
import type { ScannedPartition } from "../recovery/scan.js";
import type { ScanTarget } from "../recovery/targets.js";
import type { ThreadScanOptions } from "./placement.js";

/** The compiled worker module beside this one. */
export const SCAN_WORKER_URL = new URL("./scan-worker.js", import.meta.url);

/** An idle scan thread ends after this long; the next scan starts another. */
export const SCAN_THREAD_IDLE_MS = 5000;

/** Partitions a streamed scan's thread may send before the caller has taken them: memory stays flat for a slow consumer. */
export const PARTITIONS_AHEAD = 16;

/**
 * Most partitions in one `targets` job. A job and its reports cost a round
 * trip through both threads' event loops plus the structured clones; one per
 * small partition made a pool of 2 slower than one thread (docs/engines.md
 * §7.5: 530 ms vs 270 ms for 2,000 partitions of 204 KiB). Runs of
 * consecutive partitions amortise that, while the cap keeps the end of the
 * scan balanced between workers (the last jobs are small: `partitionsPerJob`).
 */
export const MAX_PARTITIONS_PER_REQUEST = 64;

/**
 * Jobs queued per pool worker: one running and one waiting, so a worker starts
 * its next partitions at once instead of after a round trip to this thread.
 */
const JOBS_PER_WORKER = 2;

/** A target as a worker gets it (its failure, if any, is reported on this thread). */
export type WorkerTarget = Pick<ScanTarget, "path" | "singleLog" | "entries" | "preserveDirListed">;

/** What a worker runs. */
export type ScanJob =
  /** `scanPartition` of one directory; the result is its report. */
  | { kind: "partition"; directory: string }
  /** `scanPath` (partitions sent as they are made, the result the report without them) or, `stream`, `scanIter` (the result its summary). */
  | { kind: "paths"; paths: string[]; stream: boolean }
  /** Loads of consecutive targets, their reports sent together in target order; the result is null. */
  | { kind: "targets"; targets: WorkerTarget[]; directoryNames: boolean };

export type WorkerRequest =
  | { type: "start"; id: number; job: ScanJob; options: ThreadScanOptions; progress: boolean }
  /** A streamed job: the caller took `count` more partitions. */
  | { type: "more"; id: number; count: number }
  /** The caller stopped (aborted, or left a `scanIter` loop): stop and send nothing more. */
  | { type: "stop"; id: number };

/** An error as it crosses threads: the caller throws one of the same class (the built-in ones), name, message, code and stack. */
export interface SentError {
  name: string;
  message: string;
  stack?: string | undefined;
  code?: unknown;
}

export type WorkerReply =
  | { type: "progress"; id: number; event: ProgressEvent }
  /** Partitions in job order; `directoryNames[i]` what the load of `partitions[i]` listed in its dir (asked for, and listed). */
  | { type: "partitions"; id: number; partitions: PartitionReport[]; directoryNames?: (string[] | null)[] }
  | { type: "done"; id: number; result: unknown }
  | { type: "error"; id: number; error: SentError };

/** Heap flags a Worker refuses in `execArgv` (per isolate: a worker takes them as `resourceLimits`). */
const OLD_SPACE_FLAG = /^--max[-_]old[-_]space[-_]size=(\d+)$/;
/** `-e <text>` and `-p <text>`: the parent's script, which is no option of the worker's. */
const EVAL_FLAGS = new Set(["-e", "--eval", "-p", "--print"]);
/** Flags a worker does not get: the other heap sizes (per isolate), `--input-type` and the `--eval=`/`--print=` forms. */
const DROPPED_FLAG = /^--((max|min)[-_](old|semi)[-_]space[-_]size(=|$)|input-type|eval=|print=)/;

/**
 * The options to start a worker with this process's Node flags: all but
 * `-e`/`-p` with their text and `--input-type`, which applies to `--eval` text
 * only and makes a worker started from a file fail (`node --input-type=module
 * -e "…"` importing segscan), and the heap flags, given as resource limits
 * instead (`--max-old-space-size` becomes the worker's own cap, so a process
 * started with a small heap does not start an uncapped thread).
 */
export function workerOptions(): WorkerOptions {
  const execArgv: string[] = [];
  const resourceLimits: NonNullable<WorkerOptions["resourceLimits"]> = {};
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const oldSpace = OLD_SPACE_FLAG.exec(arg);
    if (oldSpace !== null) resourceLimits.maxOldGenerationSizeMb = Number(oldSpace[1]);
    else if (EVAL_FLAGS.has(arg))
      i++; // and its text
    else if (!DROPPED_FLAG.test(arg)) execArgv.push(arg);
  }
  return { execArgv, resourceLimits };
}

/**
 * A worker with this process's flags (`workerOptions`). A flag this Node
 * refuses in a worker (ERR_WORKER_INVALID_EXEC_ARGV: a per-process option)
 * starts it without the flags instead of failing the scan.
 */
function startWorker(url: URL): Worker {
  const options = workerOptions();
  try {
    return new Worker(url, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    return new Worker(url, { ...options, execArgv: [] });
  }
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

/** An error as the worker sends it. */
export function sendError(error: unknown): SentError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const code = (error as NodeJS.ErrnoException).code;
  return { name: error.name, message: error.message, stack: error.stack, ...(code === undefined ? {} : { code }) };
}

/** An error from a worker as this thread would have thrown it: the same class (built-ins), name, message, code and stack. */
function revive(sent: SentError): Error {
  const error = new (BUILT_IN_ERRORS[sent.name] ?? Error)(sent.message);
  if (error.name !== sent.name) error.name = sent.name;
  if (sent.stack !== undefined) error.stack = sent.stack;
  if (sent.code !== undefined) (error as NodeJS.ErrnoException).code = sent.code as string;
  return error;
}

/** What a job's caller hears. A handler that throws stops the job with its error. */
interface JobHandlers {
  onProgress: ((event: ProgressEvent) => void) | undefined;
  onPartitions: (partitions: PartitionReport[], directoryNames: (string[] | null)[] | undefined) => void;
  onDone: (result: unknown) => void;
  onError: (error: Error) => void;
}

/** One worker thread and the jobs running on it. */
class ScanWorker {
  private readonly worker = startWorker(SCAN_WORKER_URL);
  private nextId = 1;
  private readonly jobs = new Map<number, JobHandlers>();
  /** Set once the thread is gone: every later job fails with it. */
  private lost: Error | null = null;

  constructor(private readonly onIdle: (worker: ScanWorker) => void = () => undefined) {
    this.worker.on("message", (reply: WorkerReply) => this.receive(reply));
    this.worker.on("error", (error: Error) => this.fail(error));
    this.worker.on("exit", (code: number) => this.fail(new Error(`segscan: a scan thread exited (code ${code}) before its scan finished`)));
  }

  get idle(): boolean {
    return this.jobs.size === 0;
  }

  get gone(): boolean {
    return this.lost !== null;
  }

  start(job: ScanJob, options: ThreadScanOptions, handlers: JobHandlers): number {
    const id = this.nextId++;
    if (this.lost !== null) {
      handlers.onError(this.lost);
      return id;
    }
    this.jobs.set(id, handlers);
    this.worker.ref();
    this.post({ type: "start", id, job, options, progress: handlers.onProgress !== undefined });
    return id;
  }

  /** A streamed job: the caller took `count` more partitions. */
  more(id: number, count: number): void {
    if (this.jobs.has(id)) this.post({ type: "more", id, count });
  }

  /** Stops job `id` and forgets it: nothing more is heard of it. */
  stop(id: number): void {
    if (!this.end(id)) return;
    this.post({ type: "stop", id });
  }

  terminate(): Promise<number> {
    this.lost ??= new Error("segscan: the scan thread was stopped");
    return this.worker.terminate();
  }

  unref(): void {
    this.worker.unref();
  }

  private post(request: WorkerRequest): void {
    if (this.lost === null) this.worker.postMessage(request);
  }

  private end(id: number): boolean {
    if (!this.jobs.delete(id)) return false;
    if (this.jobs.size === 0) this.onIdle(this);
    return true;
  }

  private receive(reply: WorkerReply): void {
    const handlers = this.jobs.get(reply.id);
    if (handlers === undefined) return; // stopped: what was already on its way is dropped
    try {
      switch (reply.type) {
        case "progress":
          handlers.onProgress?.(reply.event);
          return;
        case "partitions":
          handlers.onPartitions(reply.partitions, reply.directoryNames);
          return;
        case "done":
          this.end(reply.id);
          handlers.onDone(reply.result);
          return;
        case "error":
          this.end(reply.id);
          handlers.onError(revive(reply.error));
          return;
      }
    } catch (error) {
      // A handler of the caller's threw: the job stops with its error, as it would on the caller's thread.
      this.stop(reply.id);
      handlers.onError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** The thread died: every job on it fails with the reason. */
  private fail(error: Error): void {
    if (this.lost !== null) return;
    this.lost = error;
    const failed = [...this.jobs.values()];
    this.jobs.clear();
    this.onIdle(this);
    for (const handlers of failed) handlers.onError(error);
  }
}

// ---------------------------------------------------------------------------
// The scan thread: one worker per process, kept between scans (docs/engines.md §7.6).

let scanThread: ScanWorker | null = null;
let idleTimer: ReturnType<typeof setTimeout> | null = null;

/** The scan thread, started on demand; it keeps the process alive only while it has work. */
function acquireScanThread(): ScanWorker {
  if (idleTimer !== null) clearTimeout(idleTimer);
  idleTimer = null;
  if (scanThread === null || scanThread.gone) {
    scanThread = new ScanWorker((worker) => {
      if (worker !== scanThread) return;
      if (worker.gone) {
        scanThread = null;
        return;
      }
      worker.unref();
      idleTimer = setTimeout(() => {
        if (worker !== scanThread || !worker.idle) return;
        scanThread = null;
        void worker.terminate();
      }, SCAN_THREAD_IDLE_MS);
      idleTimer.unref();
    });
  }
  return scanThread;
}

/** A job on the scan thread, stopped when `signal` aborts (it rejects at once with the signal's AbortError). */
function onScanThread(
  job: ScanJob,
  options: ThreadScanOptions,
  signal: AbortSignal | undefined,
  handlers: Omit<JobHandlers, "onDone" | "onError"> & { onDone: (result: unknown) => void; onError: (error: Error) => void },
): { worker: ScanWorker; id: number; settled: () => boolean } {
  let settled = false;
  const thread = acquireScanThread();
  const onAbort = (): void => {
    settled = true;
    thread.stop(id);
    handlers.onError(abortError(signal!));
  };
  const id = thread.start(job, options, {
    ...handlers,
    onDone: (result) => {
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      handlers.onDone(result);
    },
    onError: (error) => {
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      handlers.onError(error);
    },
  });
  if (!settled) signal?.addEventListener("abort", onAbort, { once: true });
  return { worker: thread, id, settled: () => settled };
}

/** `scanPartition` or `scanPath` on the scan thread: the report it makes there. */
export function reportOnScanThread(
  job: { kind: "partition"; directory: string } | { kind: "paths"; paths: string[]; stream: false },
  options: ThreadScanOptions,
  signal: AbortSignal | undefined,
  onProgress: ((event: ProgressEvent) => void) | undefined,
): Promise<ScanReport> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const partitions: PartitionReport[] = [];
  return new Promise<ScanReport>((resolve, reject) => {
    onScanThread(job, options, signal, {
      onProgress,
      onPartitions: (sent) => {
        for (const partition of sent) partitions.push(partition);
      },
      onDone: (result) => {
        const report = result as ScanReport;
        // `scanPath`'s thread sent the partitions ahead; `partitions` keeps its place among the keys.
        if (job.kind === "paths") report.partitions = partitions;
        resolve(report);
      },
      onError: reject,
    });
  });
}

/** `scanIter` on the scan thread: partitions as the thread sends them, at most PARTITIONS_AHEAD ahead of the caller. */
export async function* streamOnScanThread<Summary>(
  paths: readonly string[],
  options: ThreadScanOptions,
  signal: AbortSignal | undefined,
  onProgress: ((event: ProgressEvent) => void) | undefined,
): AsyncGenerator<PartitionReport, Summary, undefined> {
  if (signal?.aborted) throw abortError(signal);
  const received: PartitionReport[] = [];
  let outcome: { result: Summary } | { error: Error } | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const waiting = wake;
    wake = null;
    waiting?.();
  };
  const job = onScanThread({ kind: "paths", paths: [...paths], stream: true }, options, signal, {
    onProgress,
    onPartitions: (sent) => {
      for (const partition of sent) received.push(partition);
      notify();
    },
    onDone: (result) => {
      outcome = { result: result as Summary };
      notify();
    },
    onError: (error) => {
      outcome = { error };
      notify();
    },
  });
  try {
    for (;;) {
      const partition = received.shift();
      if (partition !== undefined) {
        job.worker.more(job.id, 1);
        yield partition;
        continue;
      }
      const settled = outcome as { result: Summary } | { error: Error } | null;
      if (settled !== null) {
        if ("error" in settled) throw settled.error;
        return settled.result;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    // The caller left the loop early: the thread stops this scan.
    if (!job.settled()) job.worker.stop(job.id);
  }
}

// ---------------------------------------------------------------------------
// The pool: a few workers loading one scan's partitions (docs/engines.md §7.5).

/** What a pooled scan's workers need, and where its reports go. */
export interface PoolRun {
  workers: number;
  engineKind: EngineKind;
  resolved: Pick<ResolvedScanOptions, "used" | "signal" | "onProgress">;
  /** Hand on each partition's directory names (the node pass wants them). */
  directoryNames: boolean;
}

/**
 * Partitions in the next job when `remaining` are left for `workers`: a share
 * small enough that every worker still gets ~4 more jobs (so none idles while
 * another finishes a long run), at most the cap, at least 1.
 */
function partitionsPerJob(remaining: number, workers: number): number {
  return Math.max(1, Math.min(MAX_PARTITIONS_PER_REQUEST, Math.floor(remaining / (workers * JOBS_PER_WORKER * 2))));
}

/** A target taken from the source, and its report once made. */
interface Slot {
  target: ScanTarget;
  scanned: ScannedPartition | null;
}

/**
 * Every target's report in target order, the loads on `run.workers` worker
 * threads: runs of consecutive targets go out as `targets` jobs, two queued
 * per worker, and each report is handed on once every earlier one has been.
 * Streams like a scan on one thread: targets are taken from `source` only a
 * few jobs ahead of the workers. A failed target (discovery could not list
 * it) is reported here, never sent. Abort, a worker's error or a throwing
 * progress callback rejects, and every worker is ended either way.
 */
export async function* loadOnWorkers(source: AsyncIterator<ScanTarget>, run: PoolRun): AsyncGenerator<ScannedPartition, void, undefined> {
  const { signal } = run.resolved;
  if (signal?.aborted) throw abortError(signal);
  const options: ThreadScanOptions = { ...run.resolved.used, engine: run.engineKind };
  const lookahead = run.workers * JOBS_PER_WORKER * MAX_PARTITIONS_PER_REQUEST;
  const slots: Slot[] = [];
  const unsent: Slot[] = [];
  const jobsInFlight = new Map<ScanWorker, number>();
  let exhausted = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const waiting = wake;
    wake = null;
    waiting?.();
  };
  const fail = (error: Error): void => {
    failure ??= error;
    notify();
  };
  const onAbort = (): void => fail(abortError(signal!));
  signal?.addEventListener("abort", onAbort, { once: true });
  const workers = Array.from({ length: run.workers }, () => new ScanWorker());

  const send = (worker: ScanWorker): void => {
    const count = exhausted ? partitionsPerJob(unsent.length, workers.length) : MAX_PARTITIONS_PER_REQUEST;
    const batch = unsent.splice(0, count);
    jobsInFlight.set(worker, (jobsInFlight.get(worker) ?? 0) + 1);
    const targets = batch.map(({ target }): WorkerTarget => {
      const sent: WorkerTarget = { path: target.path, singleLog: target.singleLog };
      if (target.entries !== undefined) sent.entries = target.entries;
      if (target.preserveDirListed !== undefined) sent.preserveDirListed = target.preserveDirListed;
      // The listing is used once: a target scanned again is listed afresh.
      target.entries = undefined;
      return sent;
    });
    worker.start({ kind: "targets", targets, directoryNames: run.directoryNames }, options, {
      onProgress: run.resolved.onProgress,
      onPartitions: (reports, names) => {
        reports.forEach((report, i) => {
          const slot = batch[i]!;
          const listed = names?.[i];
          slot.scanned = { report, directoryNames: listed == null ? undefined : new Set(listed) };
        });
      },
      onDone: () => {
        jobsInFlight.set(worker, (jobsInFlight.get(worker) ?? 1) - 1);
        notify();
      },
      onError: fail,
    });
  };

  try {
    for (;;) {
      if (failure !== null) throw failure;
      while (!exhausted && unsent.length < lookahead && slots.length < 2 * lookahead) {
        const next = await source.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        const slot: Slot = { target: next.value, scanned: null };
        const failed = next.value.failure;
        if (failed === undefined) unsent.push(slot);
        else slot.scanned = { report: failedTarget(next.value.path, failed, { options: run.resolved }) };
        slots.push(slot);
        if (failure !== null) throw failure;
      }
      for (const worker of workers) while (unsent.length > 0 && (jobsInFlight.get(worker) ?? 0) < JOBS_PER_WORKER) send(worker);
      const head = slots[0];
      if (head === undefined) {
        if (exhausted) return;
        continue;
      }
      if (head.scanned !== null) {
        slots.shift();
        yield head.scanned;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await Promise.all(workers.map((worker) => worker.terminate()));
    if (!exhausted) await source.return?.();
  }
}
