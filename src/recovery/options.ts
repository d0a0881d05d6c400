/** Options of `scanPartition` / `scanPath` (SPEC §9.1) and their resolution to the values a report records. */
import { DEFAULT_WINDOW_BYTES, MAX_BATCH_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES, PROBE_BUDGET_UNITS } from "../format/constants.js";
import type { Engine } from "../engine/types.js";
import type { ScanOptionsUsed, VerifyMode } from "../report/types.js";

export interface ProgressEvent {
  /** The partition directory (or single .log) being scanned. */
  path: string;
  bytesDone: number;
  bytesTotal: number;
}

export interface ScanOptions {
  /** Defaults to a fresh wasm engine (ts where WebAssembly is unavailable). */
  engine?: Engine;
  /** SPEC §6.1: how many replicas hold this partition; decides the action on refusal. Default 1. */
  replicaCount?: number;
  /** "tail" (default): walk from the last index entry; "full": deep mode, every batch from byte 0 (SPEC §3.2). */
  verify?: VerifyMode;
  /** One partition load's probe budget (SPEC §3.5). Default PROBE_BUDGET_UNITS. */
  probeBudgetUnits?: number;
  /** Scan window size in bytes (SPEC §7). Default 1 MiB. */
  windowBytes?: number;
  /** Explicit override of MAX_BATCH_BYTES (SPEC §2.2); recorded in the report. */
  maxBatchBytes?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** Worker threads for many partitions (SPEC §7). Default: CPU count. */
  concurrency?: number;
  /**
   * "async" (default): reads go through libuv's threadpool and never block the
   * event loop. "blocking": positioned reads on the scanning thread, about twice
   * as fast from the page cache; for CLIs and dedicated threads (pool workers
   * always read this way).
   */
  io?: "async" | "blocking";
}

export interface ResolvedScanOptions {
  used: ScanOptionsUsed;
  signal: AbortSignal | undefined;
  onProgress: ((event: ProgressEvent) => void) | undefined;
}

function requireInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

export function resolveScanOptions(options: ScanOptions = {}): ResolvedScanOptions {
  const verify = options.verify ?? "tail";
  if (verify !== "tail" && verify !== "full") throw new RangeError(`verify must be "tail" or "full", got ${String(verify)}`);
  const used: ScanOptionsUsed = {
    verify,
    replicaCount: requireInteger("replicaCount", options.replicaCount ?? 1, 1, 1_000_000),
    probeBudgetUnits: requireInteger("probeBudgetUnits", options.probeBudgetUnits ?? PROBE_BUDGET_UNITS, 0, Number.MAX_SAFE_INTEGER - 2 * MAX_BATCH_BYTES),
    windowBytes: requireInteger("windowBytes", options.windowBytes ?? DEFAULT_WINDOW_BYTES, MIN_WINDOW_BYTES, MAX_WINDOW_BYTES),
  };
  if (options.maxBatchBytes !== undefined) {
    used.maxBatchBytes = requireInteger("maxBatchBytes", options.maxBatchBytes, 256, Number.MAX_SAFE_INTEGER);
  }
  return { used, signal: options.signal, onProgress: options.onProgress };
}
