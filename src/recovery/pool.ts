/**
 * Many partitions on a bounded pool of worker threads (docs/engines.md §7): one engine
 * per worker, memory = pool size × one scan's window. Results keep target
 * order, so the report is identical to a sequential scan.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";
import type { EngineKind } from "../engine/types.js";
import { abortError } from "../io/errors.js";
import type { PartitionReport, ScanOptionsUsed } from "../domain/scan.js";
import type { ProgressEvent } from "./options.js";
import type { ScanTarget } from "./targets.js";
import type { WorkerMessage, WorkerRequest } from "./worker.js";

/** The compiled worker beside this module; absent when running from TypeScript sources. */
export const WORKER_URL = new URL("./worker.js", import.meta.url);

/**
 * Requests queued per worker: one running and one waiting, so a worker starts
 * its next partition at once instead of after a round trip to this thread
 * (that round trip dominated a pool scan of many small partitions).
 */
const REQUESTS_PER_WORKER = 2;

/**
 * Most partitions in one request. A request and its reports cost a round
 * trip through both threads' event loops plus the structured clones; one per
 * small partition made a pool of 2 slower than one thread (issue 13: 530 ms
 * vs 270 ms for 2,000 partitions of 204 KiB). Runs of consecutive partitions
 * amortise that, while the cap keeps the tail of the scan balanced between
 * workers (the last requests are small: see `partitionsPerRequest`).
 */
export const MAX_PARTITIONS_PER_REQUEST = 64;

/**
 * Partitions in the next request when `remaining` are left for `workers`:
 * a share small enough that every worker still gets ~4 more requests (so
 * none idles while another finishes a long run), at most the cap, at least 1.
 */
function partitionsPerRequest(remaining: number, workers: number): number {
  return Math.max(1, Math.min(MAX_PARTITIONS_PER_REQUEST, Math.floor(remaining / (workers * REQUESTS_PER_WORKER * 2))));
}

/**
 * Heap flags a Worker refuses in `execArgv` (they are per isolate: a worker
 * takes them as `resourceLimits`); `--max-old-space-size` becomes the worker's
 * own cap, so a process started with a small heap does not start an uncapped thread.
 */
const OLD_SPACE_FLAG = /^--max[-_]old[-_]space[-_]size=(\d+)$/;
/** `-e <text>` and `-p <text>`: the parent's script, which is no option of the worker's. */
const EVAL_FLAGS = new Set(["-e", "--eval", "-p", "--print"]);
/** Flags a worker does not get: the other heap sizes (per isolate), `--input-type` and the `--eval=`/`--print=` forms. */
const DROPPED_FLAG = /^--((max|min)[-_](old|semi)[-_]space[-_]size(=|$)|input-type|eval=|print=)/;

/**
 * The options to start a worker with this process's Node flags: all but
 * `-e`/`-p` with their text and `--input-type`, which applies to `--eval` text
 * only and makes a worker started from a file fail (`node --input-type=module
 * -e "…"` importing segscan), and the heap flags, given as resource limits instead.
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
export function startWorker(url: URL): Worker {
  const options = workerOptions();
  try {
    return new Worker(url, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    return new Worker(url, { ...options, execArgv: [] });
  }
}

export function poolAvailable(): boolean {
  return import.meta.url.endsWith(".js");
}

export interface PoolOptions {
  concurrency: number;
  engineKind: EngineKind;
  used: ScanOptionsUsed;
  signal: AbortSignal | undefined;
  onProgress: ((event: ProgressEvent) => void) | undefined;
}

export function scanOnPool(targets: readonly ScanTarget[], options: PoolOptions): Promise<PartitionReport[]> {
  const reports: PartitionReport[] = new Array(targets.length);
  const workers: Worker[] = [];
  let nextTarget = 0;
  let finished = 0;
  return new Promise<PartitionReport[]>((resolvePool, rejectPool) => {
    let settled = false;
    const settle = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener("abort", onAbort);
      for (const worker of workers) void worker.terminate();
      if (error) rejectPool(error);
      else resolvePool(reports);
    };
    const onAbort = (): void => settle(abortError(options.signal!));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const dispatch = (worker: Worker): void => {
      if (nextTarget >= targets.length) return;
      const firstId = nextTarget;
      nextTarget = Math.min(targets.length, firstId + partitionsPerRequest(targets.length - firstId, options.concurrency));
      const request: WorkerRequest = {
        firstId,
        targets: targets.slice(firstId, nextTarget),
        engineKind: options.engineKind,
        used: options.used,
        progress: options.onProgress !== undefined,
      };
      worker.postMessage(request);
    };
    const workerCount = Math.max(1, Math.min(options.concurrency, targets.length));
    for (let i = 0; i < workerCount; i++) {
      const worker = startWorker(WORKER_URL);
      workers.push(worker);
      worker.on("message", (message: WorkerMessage) => {
        if (message.type === "progress") {
          options.onProgress?.({ path: targets[message.id]!.path, bytesDone: message.bytesDone, bytesTotal: message.bytesTotal });
        } else if (message.type === "error") {
          settle(
            Object.assign(new Error(`scan of ${targets[message.id]!.path} failed in a worker: ${message.message}`), {
              stack: message.stack,
            }),
          );
        } else {
          for (const [offset, report] of message.reports.entries()) reports[message.firstId + offset] = report;
          finished += message.reports.length;
          if (finished === targets.length) settle(null);
          else dispatch(worker);
        }
      });
      worker.on("error", (error) => settle(error));
      for (let queued = 0; queued < REQUESTS_PER_WORKER; queued++) dispatch(worker);
    }
    if (targets.length === 0) settle(null);
  });
}
