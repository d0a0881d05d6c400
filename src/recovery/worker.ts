/**
 * A pool worker (docs/engines.md §7): one engine per worker, one partition load per
 * message. Reports cross back by structured clone, which keeps bigint.
 */
import { parentPort } from "node:worker_threads";
import { createEngine } from "../engine/index.js";
import type { Engine, EngineKind } from "../engine/types.js";
import { nodeBlockingScanFs } from "../io/fs.js";
import type { PartitionReport } from "../report/types.js";
import type { ScanOptionsUsed } from "../report/types.js";
import { loadPartition } from "./partition.js";
import type { ScanTarget } from "./targets.js";

export interface WorkerRequest {
  id: number;
  target: ScanTarget;
  engineKind: EngineKind;
  used: ScanOptionsUsed;
}

export type WorkerMessage =
  | { type: "progress"; id: number; bytesDone: number; bytesTotal: number }
  | { type: "done"; id: number; report: PartitionReport }
  | { type: "error"; id: number; message: string; stack?: string };

let engine: Promise<Engine> | null = null;

parentPort?.on("message", async (request: WorkerRequest) => {
  const post = (message: WorkerMessage): void => parentPort!.postMessage(message);
  try {
    engine ??= createEngine(request.engineKind);
    const report = await loadPartition(
      request.target.path,
      {
        engine: await engine,
        // A worker thread has nothing else to serve: blocking reads are the faster path.
        scanFs: nodeBlockingScanFs,
        options: {
          used: request.used,
          signal: undefined,
          onProgress: (event) => post({ type: "progress", id: request.id, bytesDone: event.bytesDone, bytesTotal: event.bytesTotal }),
        },
      },
      request.target.singleLog,
    );
    post({ type: "done", id: request.id, report });
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    post({ type: "error", id: request.id, message: failure.message, ...(failure.stack ? { stack: failure.stack } : {}) });
  }
});
