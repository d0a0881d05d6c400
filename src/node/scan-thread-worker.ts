/**
 * The scan thread (./scan-thread.ts): runs `scanPath` and `scanIter` with
 * blocking reads for the thread that started it, sending progress, partitions
 * (`scanIter`, at most PARTITIONS_AHEAD ahead of the caller) and the result or
 * the error back. One engine per kind is made once and kept.
 */
import { parentPort } from "node:worker_threads";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import type { ScanOptions } from "../recovery/options.js";
import { scanPartition } from "../recovery/scan.js";
import type { PartitionReport } from "../domain/scan.js";
import { scanIter, scanPathHere } from "./scan-path.js";
import { PARTITIONS_AHEAD, type ThreadError, type ThreadReply, type ThreadRequest } from "./scan-thread.js";

interface Running {
  controller: AbortController;
  /** Partitions that may still be sent before the caller takes more. */
  credit: number;
  stopped: boolean;
  wake: (() => void) | null;
}

/** `scanPath`'s partitions per message: fewer messages, each copy still small. */
const PARTITIONS_PER_MESSAGE = 64;

const running = new Map<number, Running>();
const engines = new Map<string, Promise<Engine>>();

function engineFor(kind: "wasm" | "ts" | undefined): Promise<Engine> {
  const key = kind ?? "default";
  let engine = engines.get(key);
  if (engine === undefined) {
    engine = createEngine(kind);
    engines.set(key, engine);
    engine.catch(() => engines.delete(key));
  }
  return engine;
}

const post = (reply: ThreadReply): void => parentPort!.postMessage(reply);

function serialize(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const code = (error as NodeJS.ErrnoException).code;
  return { name: error.name, message: error.message, stack: error.stack, ...(code === undefined ? {} : { code }) };
}

function wakeUp(state: Running): void {
  const waiting = state.wake;
  state.wake = null;
  waiting?.();
}

parentPort?.on("message", (request: ThreadRequest) => {
  if (request.type === "scan") {
    void run(request);
    return;
  }
  const state = running.get(request.id);
  if (state === undefined) return;
  if (request.type === "more") state.credit += request.count;
  else {
    state.stopped = true;
    state.controller.abort();
  }
  wakeUp(state);
});

async function run(request: Extract<ThreadRequest, { type: "scan" }>): Promise<void> {
  const { id } = request;
  const state: Running = { controller: new AbortController(), credit: PARTITIONS_AHEAD, stopped: false, wake: null };
  running.set(id, state);
  try {
    const { engine: kind, ...rest } = request.options;
    const options: ScanOptions = {
      ...rest,
      engine: await engineFor(kind),
      io: "blocking",
      signal: state.controller.signal,
      ...(request.progress ? { onProgress: (event) => post({ type: "progress", id, event }) } : {}),
    };
    if (request.call === "scanPartition") {
      const report = await scanPartition(request.paths[0]!, options);
      if (!state.stopped) post({ type: "done", id, result: report });
      return;
    }
    if (request.call === "scanPath") {
      // Partitions go out in batches as the scan makes them: the caller's thread copies them while this one scans.
      const batch: PartitionReport[] = [];
      const flush = (): void => {
        if (batch.length > 0 && !state.stopped) post({ type: "partitions", id, partitions: batch.splice(0) });
      };
      const report = await scanPathHere(request.paths, options, undefined, (partition) => {
        batch.push(partition);
        if (batch.length >= PARTITIONS_PER_MESSAGE) flush();
      });
      flush();
      if (!state.stopped) post({ type: "done", id, result: { ...report, partitions: [] } });
      return;
    }
    const partitions = scanIter(request.paths, options);
    for (let next = await partitions.next(); ; next = await partitions.next()) {
      if (next.done) {
        if (!state.stopped) post({ type: "done", id, result: next.value });
        return;
      }
      while (state.credit === 0 && !state.stopped) await new Promise<void>((resolve) => (state.wake = resolve));
      if (state.stopped) {
        await partitions.return(undefined as never);
        return;
      }
      state.credit--;
      post({ type: "partition", id, partition: next.value });
    }
  } catch (error) {
    if (!state.stopped) post({ type: "error", id, error: serialize(error) });
  } finally {
    running.delete(id);
  }
}
