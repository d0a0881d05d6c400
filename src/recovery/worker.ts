/**
 * A pool worker (docs/engines.md §7): one engine per worker, a run of consecutive
 * partitions per message, loaded one after another. Reports cross back by structured clone, which keeps bigint.
 */
import { parentPort } from "node:worker_threads";
import { createEngine } from "../engine/index.js";
import type { Engine, EngineKind, EngineWindow } from "../engine/types.js";
import { nodeBlockingScanFs } from "../io/fs.js";
import type { PartitionReport } from "../domain/scan.js";
import type { ScanOptionsUsed } from "../domain/scan.js";
import { loadPartition, openScanWindow } from "./partition.js";
import type { ScanTarget } from "./targets.js";

export interface WorkerRequest {
  /** Index of `targets[0]` in the pool's target list; the rest follow in order. */
  firstId: number;
  targets: ScanTarget[];
  engineKind: EngineKind;
  used: ScanOptionsUsed;
  /** The caller listens to progress: only then does the worker post progress messages (each costs a round trip of the main thread). */
  progress: boolean;
}

export type WorkerMessage =
  | { type: "progress"; id: number; bytesDone: number; bytesTotal: number }
  | { type: "done"; firstId: number; reports: PartitionReport[] }
  | { type: "error"; id: number; message: string; stack?: string };

let engine: Promise<Engine> | null = null;
/** One window per worker, reused by every load that asks for the same size and batch cap. */
let reusable: { key: string; engineWindow: EngineWindow } | null = null;

function windowFor(loaded: Engine, used: ScanOptionsUsed): EngineWindow {
  const key = `${used.windowBytes}:${used.maxBatchBytes ?? ""}`;
  if (reusable?.key !== key) {
    reusable?.engineWindow.close();
    reusable = { key, engineWindow: openScanWindow(loaded, used) };
  }
  return reusable.engineWindow;
}

/**
 * Requests run one after another (they share the worker's window): the pool
 * sends the next before this one is done, so the worker never waits for the
 * main thread between two small partitions.
 */
let queue: Promise<void> = Promise.resolve();

parentPort?.on("message", (request: WorkerRequest) => {
  queue = queue.then(() => handle(request));
});

async function handle(request: WorkerRequest): Promise<void> {
  const post = (message: WorkerMessage): void => parentPort!.postMessage(message);
  let id = request.firstId;
  try {
    engine ??= createEngine(request.engineKind);
    const loaded = await engine;
    const reports: PartitionReport[] = [];
    for (const target of request.targets) {
      const targetId = id;
      reports.push(
        await loadPartition(
          target.path,
          {
            engine: loaded,
            engineWindow: windowFor(loaded, request.used),
            // A worker thread has nothing else to serve: blocking reads are the faster path.
            scanFs: nodeBlockingScanFs,
            options: {
              used: request.used,
              signal: undefined,
              onProgress: request.progress
                ? (event) => post({ type: "progress", id: targetId, bytesDone: event.bytesDone, bytesTotal: event.bytesTotal })
                : undefined,
            },
          },
          target.singleLog,
          target.entries,
          target.preserveDirListed,
        ),
      );
      id++;
    }
    post({ type: "done", firstId: request.firstId, reports });
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    post({ type: "error", id, message: failure.message, ...(failure.stack ? { stack: failure.stack } : {}) });
  }
}
