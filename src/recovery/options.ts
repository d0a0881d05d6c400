/** Options of `scanPartition` / `scanPath` (docs/interfaces.md §9.1) and their resolution to the values a report records. */
import { DEFAULT_WINDOW_BYTES, MAX_BATCH_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES, PROBE_BUDGET_UNITS } from "../format/constants.js";
import { availableParallelism } from "node:os";
import type { Engine, EngineKind } from "../engine/types.js";
import type { ScanOptionsUsed, VerifyMode } from "../domain/scan.js";

export interface ProgressEvent {
  /** The partition directory (or single .log) being scanned. */
  path: string;
  bytesDone: number;
  bytesTotal: number;
}

export interface ScanOptions {
  /** An engine, or its kind ("wasm" | "ts") to create one. Defaults to a fresh wasm engine (ts where WebAssembly is unavailable). */
  engine?: Engine | EngineKind;
  /** docs/repair.md §6.1: how many replicas hold this partition; decides the action on refusal. Default 1. */
  replicaCount?: number;
  /** "tail" (default): walk from the last index entry; "full": deep mode, every batch from byte 0 (docs/recovery.md §3.2). */
  verify?: VerifyMode;
  /** One partition load's probe budget (docs/recovery.md §3.5). Default PROBE_BUDGET_UNITS. */
  probeBudgetUnits?: number;
  /** Scan window size in bytes (docs/engines.md §7). Default 1 MiB. */
  windowBytes?: number;
  /** Explicit override of MAX_BATCH_BYTES (docs/format.md §2.2); recorded in the report. */
  maxBatchBytes?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Worker threads for many partitions (docs/engines.md §7). Default: CPU count. A value
   * above `maxConcurrency()` (2 × CPU count) is clamped to it: more workers
   * than that only add memory and contention (60 workers on 2 cores ran 20×
   * slower than 1), and the count never changes a report.
   */
  concurrency?: number;
  /**
   * "async" (default): the scan never blocks the caller's event loop.
   * `scanPath`, `scanIter` and `scanPartition` run it on a scan thread with
   * blocking reads (docs/engines.md §7.6, decided in src/node/placement.ts; about as fast as "blocking");
   * given a ScanFs (`nodeScanFs` included) or an engine of the caller's own,
   * reads go through libuv's threadpool from the caller's thread. "blocking": positioned reads on the scanning thread, about twice
   * as fast from the page cache as the threadpool; for CLIs and dedicated
   * threads (pool workers always read this way).
   */
  io?: "async" | "blocking";
  /**
   * Node roots only (docs/node.md N6): also scan the segments of every
   * `<p>.fenced.<n>/` quarantine dir, read-only (evidence; never merged back).
   */
  includeFenced?: boolean;
}

export interface ResolvedScanOptions {
  used: ScanOptionsUsed;
  signal: AbortSignal | undefined;
  onProgress: ((event: ProgressEvent) => void) | undefined;
  /** Worker threads, validated and clamped to `maxConcurrency()`. */
  concurrency: number;
  io: "async" | "blocking";
}

/** Workers per CPU beyond which a scan only gets slower (docs/engines.md §7): reads and verification are CPU-bound per worker. */
export const WORKERS_PER_CPU = 2;

/** The most worker threads a scan uses on this machine. */
export function maxConcurrency(): number {
  return Math.max(1, availableParallelism()) * WORKERS_PER_CPU;
}

/** Every ScanOptions key (the Record type makes a new option fail to compile until it is listed here). */
const OPTION_NAMES: Record<keyof ScanOptions, true> = {
  engine: true,
  replicaCount: true,
  verify: true,
  probeBudgetUnits: true,
  windowBytes: true,
  maxBatchBytes: true,
  signal: true,
  onProgress: true,
  concurrency: true,
  io: true,
  includeFenced: true,
};
const KNOWN_OPTIONS: ReadonlySet<string> = new Set(Object.keys(OPTION_NAMES));

/** Largest `replicaCount` accepted: far above any real cluster, low enough to catch a unit mix-up. */
const MAX_REPLICA_COUNT = 1_000_000;

/** Smallest `maxBatchBytes` override: one batch header (docs/format.md §2.2). */
const MIN_MAX_BATCH_BYTES = 256;

const describe = (value: unknown): string =>
  typeof value === "string"
    ? JSON.stringify(value)
    : typeof value === "bigint"
      ? `${value}n`
      : typeof value === "function"
        ? "a function"
        : String(value);

function requireInteger(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number") throw new TypeError(`${name} must be a number, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${describe(value)}`);
  }
  return value;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    value instanceof AbortSignal ||
    (typeof value === "object" &&
      value !== null &&
      typeof (value as AbortSignal).aborted === "boolean" &&
      typeof (value as AbortSignal).addEventListener === "function")
  );
}

/**
 * Checks every option before anything is read, so a mistake fails at once with
 * the option's name: TypeError for a wrong type or unknown option, RangeError
 * for a value out of range. `undefined` means "the default"; `null` is an error.
 */
export function resolveScanOptions(options: ScanOptions = {}): ResolvedScanOptions {
  if (typeof options !== "object" || options === null) throw new TypeError(`scan options must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new TypeError(`unknown scan option "${key}"; known options: ${[...KNOWN_OPTIONS].join(", ")}`);
  }
  const verify = options.verify === undefined ? "tail" : options.verify;
  if (verify !== "tail" && verify !== "full") throw new RangeError(`verify must be "tail" or "full", got ${describe(verify)}`);
  const used: ScanOptionsUsed = {
    verify,
    replicaCount: requireInteger("replicaCount", options.replicaCount ?? 1, 1, MAX_REPLICA_COUNT),
    probeBudgetUnits: requireInteger(
      "probeBudgetUnits",
      options.probeBudgetUnits ?? PROBE_BUDGET_UNITS,
      0,
      Number.MAX_SAFE_INTEGER - 2 * MAX_BATCH_BYTES,
    ),
    windowBytes: requireInteger("windowBytes", options.windowBytes ?? DEFAULT_WINDOW_BYTES, MIN_WINDOW_BYTES, MAX_WINDOW_BYTES),
  };
  if (options.maxBatchBytes !== undefined) {
    used.maxBatchBytes = requireInteger("maxBatchBytes", options.maxBatchBytes, MIN_MAX_BATCH_BYTES, Number.MAX_SAFE_INTEGER);
  }
  if (options.signal !== undefined && !isAbortSignal(options.signal)) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(options.signal)}`);
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== "function") {
    throw new TypeError(`onProgress must be a function, got ${describe(options.onProgress)}`);
  }
  const io = options.io === undefined ? "async" : options.io;
  if (io !== "async" && io !== "blocking") throw new RangeError(`io must be "async" or "blocking", got ${describe(io)}`);
  if (options.includeFenced !== undefined && typeof options.includeFenced !== "boolean") {
    throw new TypeError(`includeFenced must be a boolean, got ${describe(options.includeFenced)}`);
  }
  const requested = requireInteger("concurrency", options.concurrency ?? availableParallelism(), 1, Number.MAX_SAFE_INTEGER);
  if (options.engine !== undefined && typeof options.engine !== "string" && !isEngine(options.engine)) {
    throw new TypeError(`engine must be an Engine (from createEngine) or "wasm" | "ts", got ${describe(options.engine)}`);
  }
  if (typeof options.engine === "string" && options.engine !== "wasm" && options.engine !== "ts") {
    throw new RangeError(`engine must be "wasm" or "ts" (or an Engine from createEngine), got ${describe(options.engine)}`);
  }
  return { used, signal: options.signal, onProgress: options.onProgress, concurrency: Math.min(requested, maxConcurrency()), io };
}

function isEngine(value: unknown): value is Engine {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Engine).openWindow === "function" &&
    typeof (value as Engine).xxh3_64 === "function" &&
    ((value as Engine).kind === "wasm" || (value as Engine).kind === "ts")
  );
}

/** The engine option as an Engine: the one given, one of the kind named, or the default. Call after `resolveScanOptions`. */
export async function resolveEngineOption(engine: ScanOptions["engine"]): Promise<Engine> {
  if (typeof engine === "object") return engine;
  // Loaded on first use: the CLI's flag definitions read this module's limits without loading an engine (docs/benchmarks.md).
  const { createEngine } = await import("../engine/index.js");
  return createEngine(engine);
}
