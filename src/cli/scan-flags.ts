/** The scan flags shared by `scan` and `repair` (SPEC §9.2), and the scan they drive. */
import { availableParallelism } from "node:os";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { type Command, Option } from "commander";
import {
  DEFAULT_WINDOW_BYTES, LOG_SUFFIX, MAX_BATCH_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES, PROBE_BUDGET_UNITS,
} from "../format/constants.js";
import type { EngineKind } from "../engine/types.js";
import { discoverTargets, scanPath } from "../recovery/scan.js";
import { nodeScanFs } from "../io/fs.js";
import type { ScanReport } from "../report/types.js";
import { resolveEngine } from "./context.js";
import { OperationalError, UsageError } from "./exit.js";
import { parseBytes, parseInteger } from "./parse.js";
import { progressWanted, startProgress } from "./progress.js";

export interface ScanFlags {
  json?: boolean;
  engine: EngineKind;
  deep?: boolean;
  replicas: number;
  probeBudget: number;
  window: number;
  concurrency: number;
  progress: boolean;
}

export function defaultConcurrency(): number {
  return Math.max(1, availableParallelism());
}

export function addScanFlags(command: Command): Command {
  return command
    .option("--json", "print the report as JSON (SPEC 9.3) on stdout")
    .addOption(new Option("--engine <kind>", "verification engine").choices(["wasm", "ts"]).default("wasm"))
    .option("--deep", "verify every batch from byte 0 and check every index entry (verify: full)")
    .option("--replicas <n>", "replicas holding each partition: decides tombstone vs rebuild-from-peers", parseInteger(1, 1_000_000), 1)
    .option("--probe-budget <units>", "damage-probe budget per partition load, in units",
      parseInteger(0, Number.MAX_SAFE_INTEGER - 2 * MAX_BATCH_BYTES), PROBE_BUDGET_UNITS)
    .option("--window <bytes>", `scan window (e.g. 4KiB, 1MiB; ${MIN_WINDOW_BYTES}..${MAX_WINDOW_BYTES})`,
      parseBytes(MIN_WINDOW_BYTES, MAX_WINDOW_BYTES), DEFAULT_WINDOW_BYTES)
    .option("--concurrency <n>", "partitions scanned in parallel on worker threads (the default is this machine's CPU count)", parseInteger(1, 4096), defaultConcurrency())
    .option("--no-progress", "never show the progress bar (it shows only on a TTY, for scans over 0.5 s)");
}

/**
 * Checks each path before scanning: a missing path is an operational error
 * (exit 8, like fsck on a missing device); a file that is not a `.log` is a
 * usage error (exit 16).
 */
export async function checkScanPaths(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new OperationalError(`cannot scan ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (info.isFile() && !path.endsWith(LOG_SUFFIX)) {
      throw new UsageError(`${path} is a file but not a .log segment; give a data dir, a partition dir or a .log file`);
    }
    if (!info.isFile() && !info.isDirectory()) throw new UsageError(`${path} is neither a file nor a directory`);
  }
}

/** Bytes each partition will read, from one stat pass, so the bar's total and ETA are right from the start. */
async function estimateTotals(paths: readonly string[], into: Map<string, number>): Promise<void> {
  for (const target of (await Promise.all(paths.map((path) => discoverTargets(path, nodeScanFs)))).flat()) {
    let total = 0;
    if (target.singleLog) {
      total = (await stat(target.path)).size;
    } else {
      for (const name of await readdir(target.path)) {
        if (name.endsWith(LOG_SUFFIX)) total += await stat(join(target.path, name)).then((s) => (s.isFile() ? s.size : 0), () => 0);
      }
    }
    into.set(target.path, total);
  }
}

/** Runs the scan the flags describe; rejects with an AbortError when `signal` fires. */
export async function runScan(
  paths: readonly string[], flags: ScanFlags, engineExplicit: boolean, signal: AbortSignal,
): Promise<ScanReport> {
  await checkScanPaths(paths);
  const engine = await resolveEngine(flags.engine, engineExplicit);
  const wanted = progressWanted(process.stderr, flags);
  const estimates = new Map<string, number>();
  if (wanted) {
    const { resolve } = await import("node:path");
    void estimateTotals(paths.map((path) => resolve(path)), estimates).catch(() => undefined);
  }
  const progress = startProgress(process.stderr, wanted, estimates);
  try {
    return await scanPath([...paths], {
      engine,
      verify: flags.deep ? "full" : "tail",
      replicaCount: flags.replicas,
      probeBudgetUnits: flags.probeBudget,
      windowBytes: flags.window,
      concurrency: flags.concurrency,
      // A CLI process serves nothing else: blocking reads are about twice as fast
      // from the page cache, and the scan still yields after every window.
      io: "blocking",
      signal,
      ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    });
  } finally {
    progress.stop();
  }
}

export function engineWasExplicit(command: Command): boolean {
  return command.getOptionValueSource("engine") !== "default";
}
