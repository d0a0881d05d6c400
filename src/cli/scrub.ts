/** `segscan scrub` (docs/scrub.md): verify a running broker's segments and node items, once or every interval. */
import { stat } from "node:fs/promises";
import { constants as osConstants, setPriority } from "node:os";
import { resolve } from "node:path";
import { SEGSCAN_VERSION } from "../version.js";
import { setTimeout as sleep } from "node:timers/promises";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { EngineKind } from "../engine/types.js";
import { DEFAULT_WINDOW_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES } from "../format/constants.js";
import { formatBytes, formatCount } from "../report/format.js";
import { terminalSafe } from "../report/terminal-safe.js";
import { COUNTED_NODE_SEVERITIES, type PassSummary, type ScrubEvent, passOutcome } from "../scrub/findings.js";
import type { ScrubOutputs } from "../scrub/outputs.js";
import { DEFAULT_REVERIFY_AFTER_MS, DEFAULT_SCRUB_RATE_BYTES_PER_SECOND } from "../scrub/rate.js";
import { out, resolveEngine, warn } from "./context.js";
import { EXIT, OperationalError, UsageError } from "./exit.js";
import { SCRUB_HELP } from "./help.js";
import { operandPath, parseBytes } from "./parse.js";
import { engineOption } from "./scan-flags.js";

/** Lowest accepted rate: below this a scrub of one small segment would take hours. */
const MIN_RATE_BYTES_PER_SECOND = 64 * 1024;

/** Shortest `--interval`: a watch loop tighter than this is a busy loop, not a scrub schedule. */
const MIN_INTERVAL_MS = 1000;

/** Default `--interval`: four passes a day. */
const DEFAULT_INTERVAL_MS = 6 * 3600 * 1000;

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `0`, `500ms`, `90s`, `15m`, `6h`, `30d`, `2w`, or combinations such as `1h30m`. */
export function parseDuration(minMs: number) {
  return (raw: string): number => {
    const text = raw.trim();
    if (text === "0") return check(0, raw, minMs);
    const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)];
    if (parts.length === 0 || parts.map((part) => part[0]).join("") !== text) {
      throw new InvalidArgumentError(`expected a duration such as 90s, 15m, 6h or 30d, got "${raw}"`);
    }
    return check(Math.round(parts.reduce((sum, part) => sum + Number(part[1]) * DURATION_UNITS_MS[part[2]!]!, 0)), raw, minMs);
  };
}

function check(valueMs: number, raw: string, minMs: number): number {
  if (!Number.isSafeInteger(valueMs) || valueMs < minMs)
    throw new InvalidArgumentError(`expected a duration of at least ${minMs} ms, got ${raw}`);
  return valueMs;
}

/** `200MiB/s`, `64M`, `1GiB/s`, `unlimited`. */
export function parseRate(raw: string): number {
  if (raw.trim() === "unlimited") return Infinity;
  return parseBytes(MIN_RATE_BYTES_PER_SECOND)(raw.trim().replace(/\/s$/i, ""));
}

export interface ScrubFlags {
  rate: number;
  state?: string;
  reverifyAfter: number;
  metrics?: string;
  watch?: boolean;
  interval: number;
  json?: boolean;
  nice?: boolean;
  engine: EngineKind;
  window: number;
}

export function addScrubCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command("scrub")
    .description(
      "verify sealed segments in full and the active one up to its current size, and on a node root the metadata WAL, snapshot, superblocks, offsets and purge.gen, beside a running server (read-only, rate-limited, incremental)",
    )
    .argument("<path>", "data dir, any dir under it, a partition dir, or one .log file")
    .addOption(
      new Option("--rate <bytes/s>", 'read rate limit, e.g. 200MiB/s, or "unlimited"')
        .argParser(parseRate)
        .default(DEFAULT_SCRUB_RATE_BYTES_PER_SECOND, `${formatBytes(DEFAULT_SCRUB_RATE_BYTES_PER_SECOND).replace(" ", "")}/s`),
    )
    .option(
      "--state <file>",
      "state file (default: $XDG_STATE_HOME/segscan/… or ~/.local/state/segscan/…); never inside the scrubbed tree, and an existing file must be a scrub state",
    )
    .addOption(
      new Option(
        "--reverify-after <duration>",
        "re-read and re-hash a segment whose size, mtime and inode did not change at most this long after it was last verified (0 = every pass): bit rot changes none of them, so this bounds how long it goes unfound",
      )
        .argParser(parseDuration(0))
        .default(DEFAULT_REVERIFY_AFTER_MS, "7d, as Ceph's weekly deep scrub"),
    )
    .option(
      "--metrics <file>",
      "write Prometheus text-format metrics here after each complete pass (node_exporter textfile collector; name it *.prom); never inside the scrubbed tree, and an existing file must be scrub metrics",
    )
    .option(
      "--watch",
      "keep running: print a start line, then one pass per --interval until SIGTERM/SIGINT (then finish the current window, save state, exit 0)",
    )
    .addOption(
      new Option("--interval <duration>", "time between the starts of passes with --watch")
        .argParser(parseDuration(MIN_INTERVAL_MS))
        .default(DEFAULT_INTERVAL_MS, "6h"),
    )
    .option("--json", "one JSON event per line on stdout")
    .option("--nice", "lower this process's CPU priority (nice 19; under the BFQ I/O scheduler its I/O priority follows)")
    .addOption(engineOption())
    .option(
      "--window <bytes>",
      `read window (${MIN_WINDOW_BYTES}..${MAX_WINDOW_BYTES}); a stop takes effect within one window`,
      parseBytes(MIN_WINDOW_BYTES, MAX_WINDOW_BYTES),
      DEFAULT_WINDOW_BYTES,
    )
    .addHelpText("after", SCRUB_HELP)
    .action(async (path: string, flags: ScrubFlags, command: Command) => setExit(await scrubCommand(operandPath(path), flags, command)));
}

function eventJson(event: ScrubEvent): string {
  return JSON.stringify(event, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
}

/** `scrub --json`: the pass's unchanged segments (not re-read) as one line, just before its `pass-complete`. */
function unchangedJsonLine(count: number): string {
  return `${JSON.stringify({ type: "segments-skipped", reason: "unchanged", count })}\n`;
}

/** `scrub --json`: the pass's deferred node findings as one line, by reason, just before its `pass-complete`. */
function deferredJsonLine(byReason: Record<string, number>): string {
  const count = Object.values(byReason).reduce((sum, n) => sum + n, 0);
  return `${JSON.stringify({ type: "node-deferred", count, byReason })}\n`;
}

function passLine(summary: PassSummary): string {
  const seconds = summary.elapsedMs / 1000;
  const deferred = summary.node === null ? 0 : Object.values(summary.node.deferred).reduce((sum, n) => sum + n, 0);
  const node =
    summary.node === null ? "" : `, node items checked${deferred > 0 ? ` (${deferred} node finding(s) deferred to the next pass)` : ""}`;
  return (
    `scrub pass ${summary.complete ? "complete" : "stopped"}: ${summary.segmentsVerified} segment(s) verified ` +
    `(${formatBytes(summary.bytesVerified)}), ${summary.segmentsSkipped} unchanged, ${summary.segmentsDeleted} deleted mid-scrub${node}, ` +
    `${summary.findings} finding(s) · read ${formatBytes(summary.bytesRead)} in ${seconds.toFixed(1)} s (${formatBytes(summary.bytesPerSecond)}/s)\n`
  );
}

async function printEvent(unsafe: ScrubEvent, json: boolean): Promise<void> {
  if (json) return out(eventJson(unsafe) + "\n");
  const event = terminalSafe(unsafe);
  switch (event.type) {
    case "finding": {
      const { finding } = event;
      // A node finding names its item and severity; info and warn ones are notes (exit 0), as in `scan`.
      const label =
        finding.severity === undefined
          ? "FINDING"
          : COUNTED_NODE_SEVERITIES.has(finding.severity)
            ? "FINDING"
            : finding.severity.toUpperCase();
      const node = finding.item === undefined ? "" : ` [${finding.item}, ${finding.severity}]`;
      const nextStep = finding.nextStep === undefined ? "" : `  next step: ${finding.nextStep}\n`;
      return out(
        `${label} ${finding.code}${node} ${finding.path}${finding.position === null ? "" : ` @ byte ${formatCount(finding.position)}`}\n  ${finding.message}\n${nextStep}`,
      );
    }
    case "state-ignored":
      warn(event.message);
      return;
    case "segment-skipped":
      return out(`skipped ${event.message}\n`);
    case "pass-complete":
      // The summary names the state file, so an operator (or a unit's log) knows which file to keep or remove.
      return out(passLine(event.summary) + (event.summary.statePath === null ? "" : `  state saved to ${event.summary.statePath}\n`));
    default:
      return;
  }
}

/**
 * The files the scrub writes (docs/scrub.md §3.1), resolved and checked
 * before anything is opened (a FIFO would block the open) or written: outside
 * the scrubbed tree, regular or absent, the scrub's own when they exist, not
 * one file. A path the operator gave is a usage error, the default state path
 * an operational one.
 */
async function checkOutputFiles(root: string, statePath: string, flags: ScrubFlags): Promise<ScrubOutputs> {
  const { checkScrubOutputs, ScrubOutputError } = await import("../scrub/outputs.js");
  try {
    return await checkScrubOutputs(root, statePath, flags.metrics ?? null);
  } catch (error) {
    if (!(error instanceof ScrubOutputError)) throw error;
    if (error.output === "metrics") throw new UsageError(`--metrics: ${error.message}; nothing was scrubbed`);
    if (flags.state !== undefined) throw new UsageError(`--state: ${error.message}; nothing was scrubbed`);
    throw new OperationalError(`${error.message}; give --state <file>; nothing was scrubbed`);
  }
}

/** `6h`, `1h30m`, `90s` → `1m30s`: a duration as `--interval` takes it. */
export function formatDuration(durationMs: number): string {
  const units: [string, number][] = [
    ["w", DURATION_UNITS_MS.w!],
    ["d", DURATION_UNITS_MS.d!],
    ["h", DURATION_UNITS_MS.h!],
    ["m", DURATION_UNITS_MS.m!],
    ["s", DURATION_UNITS_MS.s!],
    ["ms", 1],
  ];
  let rest = durationMs;
  const parts: string[] = [];
  for (const [unit, sizeMs] of units) {
    const count = Math.floor(rest / sizeMs);
    if (count > 0) parts.push(`${count}${unit}`);
    rest -= count * sizeMs;
  }
  return parts.length === 0 ? "0" : parts.join("");
}

/** `--watch`: what this long-running process scrubs, how often, how fast, and where it writes (one line, or one JSON event). */
function watchStartLine(root: string, outputs: ScrubOutputs, flags: ScrubFlags): string {
  if (flags.json) {
    return `${JSON.stringify({
      type: "watch-start",
      version: SEGSCAN_VERSION,
      root,
      intervalMs: flags.interval,
      rateBytesPerSecond: Number.isFinite(flags.rate) ? flags.rate : null,
      statePath: outputs.statePath,
      metricsPath: outputs.metricsPath,
    })}\n`;
  }
  const rate = Number.isFinite(flags.rate) ? `${formatBytes(flags.rate)}/s` : "unlimited";
  const metrics = outputs.metricsPath === null ? "no metrics file (--metrics not given)" : `metrics ${outputs.metricsPath}`;
  const line = `segscan ${SEGSCAN_VERSION} scrub --watch: ${root} every ${formatDuration(flags.interval)}, rate ${rate}; state ${outputs.statePath}; ${metrics}`;
  return `${terminalSafe(line)}\n`;
}

export async function scrubCommand(path: string, flags: ScrubFlags, command: Command): Promise<number> {
  // The scrubber loads when the command runs, not when the program is defined (docs/benchmarks.md: `--help` loads no engine).
  const [{ scrub }, { writeMetrics }] = await Promise.all([import("../scrub/scrub.js"), import("../scrub/metrics.js")]);
  const { root, outputs } = await checkScrubTarget(path, flags);
  if (flags.nice) lowerPriority();
  const engine = await resolveEngine(flags.engine, command.getOptionValueSource("engine") !== "default");
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      process.stderr.write(`\nsegscan: ${signal} again; exiting now (the state file holds the last save)\n`);
      process.exit(EXIT.CANCELLED);
    }
    const error = new Error(`stopped by ${signal}; nothing was changed`);
    error.name = "AbortError";
    controller.abort(error);
  };
  // A watcher whose stdout can no longer be written (its reader went away, a full disk) would scrub on unheard for
  // ever: it stops as SIGTERM stops it, and exits 8 (docs/scrub.md §4). A single pass runs to its verdict instead.
  let stdoutLost: string | null = null;
  const onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (!flags.watch || stdoutLost !== null) return;
    stdoutLost = error.code ?? error.message;
    warn(`scrub --watch: cannot write to stdout (${stdoutLost}); stopping after the current window (the state file holds the last save)`);
    const stop = new Error(`stdout failed (${stdoutLost})`);
    stop.name = "AbortError";
    if (!controller.signal.aborted) controller.abort(stop);
  };
  const stoppedCode = (): number => (stdoutLost !== null ? EXIT.OPERATIONAL : EXIT.CLEAN);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.stdout.on("error", onStdoutError);
  try {
    if (flags.watch) await out(watchStartLine(root, outputs, flags));
    for (;;) {
      const passStartedMs = performance.now();
      const options = { rate: flags.rate, state: outputs.statePath, signal: controller.signal, reverifyAfterMs: flags.reverifyAfter };
      const summary = await printPass(root, scrub(root, { ...options, engine, windowBytes: flags.window }), flags);
      // A stopped pass saw only part of the tree: its findings gauge would read as
      // "fixed". The last complete pass's metrics stay until the next one.
      if (outputs.metricsPath !== null && summary.complete) {
        try {
          await writeMetrics(outputs.metricsPath, { root, summary, rateLimitBytesPerSecond: flags.rate });
        } catch (error) {
          throw new OperationalError(`cannot write the metrics file ${flags.metrics}: ${(error as Error).message}`);
        }
        if (!flags.json) await out(`${terminalSafe(`  metrics written to ${outputs.metricsPath}`)}\n`);
      }
      if (!summary.complete) return flags.watch ? stoppedCode() : EXIT.CANCELLED;
      if (!flags.watch) return passExitCode(summary);
      const waitMs = Math.max(0, flags.interval - (performance.now() - passStartedMs));
      await sleep(waitMs, undefined, { signal: controller.signal }).catch(() => undefined);
      if (controller.signal.aborted) return stoppedCode();
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.stdout.off("error", onStdoutError);
  }
}

/** The scrubbed root and the files the scrub writes, checked before anything is read (the same target check as `scan`). */
async function checkScrubTarget(path: string, flags: ScrubFlags): Promise<{ root: string; outputs: ScrubOutputs }> {
  const [{ defaultStatePath }, { checkTargetKind }] = await Promise.all([import("../scrub/state.js"), import("./scan-run.js")]);
  try {
    await stat(path);
  } catch (error) {
    throw new OperationalError(`cannot scrub ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  // A path that is no data dir, partition dir or .log is a usage error.
  await checkTargetKind(path);
  const root = resolve(path);
  const outputs = await checkOutputFiles(root, flags.state !== undefined ? resolve(flags.state) : defaultStatePath(root), flags);
  return { root, outputs };
}

/** `--nice`: the lowest CPU priority, or a warning where it cannot be set. */
function lowerPriority(): void {
  try {
    setPriority(osConstants.priority.PRIORITY_LOW);
  } catch (error) {
    warn(`--nice: cannot lower the priority (${(error as Error).message}); running at normal priority`);
  }
}

/** One pass's events printed as they come (routine ones counted instead), and its summary. */
async function printPass(root: string, events: AsyncIterable<ScrubEvent>, flags: ScrubFlags): Promise<PassSummary> {
  let summary: PassSummary | null = null;
  let unchanged = 0;
  const deferred: Record<string, number> = {};
  for await (const event of events) {
    // Unchanged segments are most of an incremental pass: one summary line per pass, not one per segment.
    if (event.type === "segment-skipped" && event.reason === "unchanged") {
      unchanged++;
      continue;
    }
    // Deferred node findings are routine beside a busy server (a WAL being appended): counted per pass, not one line each.
    if (event.type === "node-deferred") {
      deferred[event.reason] = (deferred[event.reason] ?? 0) + 1;
      continue;
    }
    if (event.type === "pass-complete" && flags.json && unchanged > 0) await out(unchangedJsonLine(unchanged));
    if (event.type === "pass-complete" && flags.json && Object.keys(deferred).length > 0) await out(deferredJsonLine(deferred));
    await printEvent(event, flags.json === true);
    if (event.type === "pass-complete") summary = event.summary;
  }
  if (summary === null) throw new OperationalError(`scrub of ${root} ended without a pass summary`);
  if (summary.complete && summary.segmentsVerified + summary.segmentsSkipped + summary.segmentsDeleted === 0 && summary.findings === 0) {
    warn(`no segments found under ${root} (no directory holds a .log file)`);
  }
  return summary;
}

/** A complete pass's exit status: 8 for failures, 4 for problems (docs/scrub.md). */
function passExitCode(summary: PassSummary): number {
  const outcome = passOutcome(summary);
  return (outcome.failures > 0 ? EXIT.OPERATIONAL : 0) | (outcome.problems > 0 ? EXIT.PROBLEMS : 0);
}
