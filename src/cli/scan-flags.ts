/**
 * The scan flags shared by `scan` and `repair` (docs/interfaces.md §9.2). The
 * scan they drive is in ./scan-run.ts, loaded only when a command runs, so
 * `--help` loads no scanner (docs/benchmarks.md).
 */
import { availableParallelism } from "node:os";
import { type Command, Option } from "commander";
import { DEFAULT_WINDOW_BYTES, MAX_BATCH_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES, PROBE_BUDGET_UNITS } from "../format/constants.js";
import type { EngineKind } from "../engine/types.js";
import { maxConcurrency, WORKERS_PER_CPU } from "../recovery/options.js";
import { parseBytes, parseInteger } from "./parse.js";

export interface ScanFlags {
  json?: boolean;
  /** `scan` only: one JSON partition per line as each completes, a summary line last. */
  ndjson?: boolean;
  engine: EngineKind;
  deep?: boolean;
  replicas: number;
  probeBudget: number;
  window: number;
  concurrency: number;
  progress: boolean;
  /** `scan --html <file>`: also write the HTML report there. */
  html?: string;
  /** docs/node.md N6: also scan `<p>.fenced.<n>/` dirs, read-only. */
  includeFenced?: boolean;
  /** `scan` text only: every problem in full (the whole explanation, every segment line). */
  verbose?: boolean;
  /** `scan` text only: list the clean partitions too (otherwise counted). */
  all?: boolean;
}

export function defaultConcurrency(): number {
  return Math.min(Math.max(1, availableParallelism()), maxConcurrency());
}

/** `--engine wasm|ts`, as every command that verifies takes it. */
export function engineOption(): Option {
  return new Option("--engine <kind>", "verification engine").choices(["wasm", "ts"]).default("wasm");
}

export function addScanFlags(command: Command): Command {
  return command
    .option("--json", "print the report as JSON (docs/interfaces.md §9.3) on stdout")
    .addOption(engineOption())
    .option("--deep", "verify every batch from byte 0 and check every index entry (verify: full)")
    .option("--replicas <n>", "replicas holding each partition: decides tombstone vs rebuild-from-peers", parseInteger(1, 1_000_000), 1)
    .option(
      "--probe-budget <units>",
      "damage-probe budget per partition load, in units",
      parseInteger(0, Number.MAX_SAFE_INTEGER - 2 * MAX_BATCH_BYTES),
      PROBE_BUDGET_UNITS,
    )
    .option(
      "--window <bytes>",
      `scan window (e.g. 4KiB, 1MiB; ${MIN_WINDOW_BYTES}..${MAX_WINDOW_BYTES})`,
      parseBytes(MIN_WINDOW_BYTES, MAX_WINDOW_BYTES),
      DEFAULT_WINDOW_BYTES,
    )
    .option(
      "--concurrency <n>",
      `partitions scanned in parallel on worker threads: 1..${maxConcurrency()} ` +
        `(at most ${WORKERS_PER_CPU} × this machine's ${availableParallelism()} CPUs; more only adds memory and contention); ` +
        "the default is the CPU count",
      parseInteger(1, maxConcurrency()),
      defaultConcurrency(),
    )
    .option("--include-fenced", "node root: also scan the segments of every <partition>.fenced.<n>/ quarantine dir, read-only")
    .option("--no-progress", "never show the progress bar (it shows only on a TTY, for scans over 0.5 s)");
}

export function engineWasExplicit(command: Command): boolean {
  return command.getOptionValueSource("engine") !== "default";
}

/** `segscan salvage`'s flags: the scan's, and `--apply`. */
export interface SalvageFlags extends ScanFlags {
  apply?: boolean;
}

/** `heal <partition> --from <peer>` (docs/heal.md). */
export interface HealFlags extends SalvageFlags {
  from: string;
}
