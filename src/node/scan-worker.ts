/**
 * A scan's worker thread (docs/engines.md §7.5, §7.6): runs the jobs of
 * ./threads.ts with blocking reads and answers each with its partitions,
 * progress, and then its result or its error. The scan thread runs whole
 * scans here (`partition`, `paths`), each as the caller's thread would with
 * `io: "blocking"`; pool workers run `targets`, partition loads one after
 * another in one reused window. One engine per kind is made once and kept.
 * A thread entry: nothing imports this module.
 */
import { parentPort } from "node:worker_threads";
import type { PartitionReport } from "../domain/scan.js";
import { createEngine } from "../engine/index.js";
import type { Engine, EngineKind, EngineWindow } from "../engine/types.js";
import { nodeBlockingScanFs } from "../io/fs.js";
import { type ScanOptions, resolveScanOptions } from "../recovery/options.js";
import { loadListedPartition, openScanWindow } from "../recovery/partition.js";
import { discover } from "../recovery/targets.js";
import { orderScanPaths, scanDiscovered, scanIter, scanPartition } from "./scan-path.js";
import { PARTITIONS_AHEAD, type ScanJob, type WorkerReply, type WorkerRequest, sendError } from "./threads.js";

interface Running {
  controller: AbortController;
  /** Partitions a streamed job may still send before the caller takes more. */
  credit: number;
  stopped: boolean;
  wake: (() => void) | null;
}

/** A whole scan's partitions per message: fewer messages, each copy still small. */
const PARTITIONS_PER_MESSAGE = 64;

const running = new Map<number, Running>();
const engines = new Map<string, Promise<Engine>>();
/** One window for the `targets` jobs, reused while their size, batch cap and engine stay the same. */
let reusable: { key: string; engineWindow: EngineWindow } | null = null;
/** `targets` jobs run one after another (they share the window); the caller queues the next before this one is done. */
let loads: Promise<void> = Promise.resolve();

function engineFor(kind: EngineKind | undefined): Promise<Engine> {
  const key = kind ?? "default";
  let engine = engines.get(key);
  if (engine === undefined) {
    engine = createEngine(kind);
    engines.set(key, engine);
    engine.catch(() => engines.delete(key));
  }
  return engine;
}

const post = (reply: WorkerReply): void => parentPort!.postMessage(reply);

function wakeUp(state: Running): void {
  const waiting = state.wake;
  state.wake = null;
  waiting?.();
}

parentPort?.on("message", (request: WorkerRequest) => {
  if (request.type === "start") {
    if (request.job.kind === "targets") loads = loads.then(() => run(request));
    else void run(request);
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

async function run(request: Extract<WorkerRequest, { type: "start" }>): Promise<void> {
  const { id, job } = request;
  const state: Running = { controller: new AbortController(), credit: PARTITIONS_AHEAD, stopped: false, wake: null };
  running.set(id, state);
  const send = (reply: WorkerReply): void => {
    if (!state.stopped) post(reply);
  };
  try {
    const { engine: kind, ...rest } = request.options;
    const options: ScanOptions & { engine: Engine } = {
      ...rest,
      engine: await engineFor(kind),
      io: "blocking",
      signal: state.controller.signal,
      ...(request.progress ? { onProgress: (event) => send({ type: "progress", id, event }) } : {}),
    };
    send({ type: "done", id, result: await runJob(job, options, state, send, id) });
  } catch (error) {
    send({ type: "error", id, error: sendError(error) });
  } finally {
    running.delete(id);
  }
}

async function runJob(
  job: ScanJob,
  options: ScanOptions & { engine: Engine },
  state: Running,
  send: (reply: WorkerReply) => void,
  id: number,
): Promise<unknown> {
  switch (job.kind) {
    case "partition":
      return scanPartition(job.directory, options);
    case "paths":
      return job.stream ? streamPaths(job.paths, options, state, send, id) : scanPaths(job.paths, options, send, id);
    case "targets":
      return loadTargets(job, options, send, id);
  }
}

/** `scanPath`: partitions go out in batches as the scan makes them (the caller's thread copies them while this one scans); the result is the report without them. */
async function scanPaths(paths: readonly string[], options: ScanOptions, send: (reply: WorkerReply) => void, id: number): Promise<unknown> {
  const batch: PartitionReport[] = [];
  const flush = (): void => {
    if (batch.length > 0) send({ type: "partitions", id, partitions: batch.splice(0) });
  };
  const ordered = await orderScanPaths(paths, nodeBlockingScanFs);
  const discovery = await discover(ordered, nodeBlockingScanFs, options.signal);
  const report = await scanDiscovered(ordered, discovery, options, nodeBlockingScanFs, (partition) => {
    batch.push(partition);
    if (batch.length >= PARTITIONS_PER_MESSAGE) flush();
  });
  flush();
  return { ...report, partitions: [] };
}

/** `scanIter`: partitions one by one, at most PARTITIONS_AHEAD ahead of the caller; the result is the summary. */
async function streamPaths(
  paths: readonly string[],
  options: ScanOptions,
  state: Running,
  send: (reply: WorkerReply) => void,
  id: number,
): Promise<unknown> {
  const partitions = scanIter(paths, options);
  for (let next = await partitions.next(); ; next = await partitions.next()) {
    if (next.done) return next.value;
    while (state.credit === 0 && !state.stopped) await new Promise<void>((resolve) => (state.wake = resolve));
    if (state.stopped) {
      await partitions.return(undefined as never);
      return null;
    }
    state.credit--;
    send({ type: "partitions", id, partitions: [next.value] });
  }
}

/** A pool job: its targets loaded in order, their reports sent together (with the names each load listed, when asked). */
async function loadTargets(
  job: Extract<ScanJob, { kind: "targets" }>,
  options: ScanOptions & { engine: Engine },
  send: (reply: WorkerReply) => void,
  id: number,
): Promise<null> {
  const resolved = resolveScanOptions(options);
  const engine = options.engine;
  const key = `${engine.kind}:${resolved.used.windowBytes}:${resolved.used.maxBatchBytes ?? ""}`;
  if (reusable?.key !== key) {
    reusable?.engineWindow.close();
    reusable = { key, engineWindow: openScanWindow(engine, resolved.used) };
  }
  const engineWindow = reusable.engineWindow;
  const partitions: PartitionReport[] = [];
  const directoryNames: (string[] | null)[] = [];
  for (const target of job.targets) {
    const loaded = await loadListedPartition(
      target.path,
      // A worker thread has nothing else to serve: blocking reads are the faster path.
      { engine, engineWindow, scanFs: nodeBlockingScanFs, options: resolved },
      target.singleLog,
      target.entries,
      target.preserveDirListed,
    );
    partitions.push(loaded.report);
    directoryNames.push(loaded.directoryNames === undefined ? null : [...loaded.directoryNames]);
  }
  send({ type: "partitions", id, partitions, ...(job.directoryNames ? { directoryNames } : {}) });
  return null;
}
