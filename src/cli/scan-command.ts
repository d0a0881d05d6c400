/**
 * `scan` (docs/interfaces.md §9.2): its own module, so the command loads what
 * scanning needs and nothing of repair, gen, dump or the HTML renderer (docs/benchmarks.md).
 */
import type { Command } from "commander";
import { shellQuote } from "../domain/command.js";
import { type NodePartitionReport, nodeFindings } from "../domain/node.js";
import { type ScanReport, scanNodes } from "../domain/scan.js";
import type { ScanStream } from "../node/scan-path.js";
import { type FormatOptions, TextReport, colors, formatReport } from "../report/format.js";
import { partitionToJson, stringifyJson, toJsonReport } from "../report/json.js";
import { nodePartitionToJson } from "../report/node-json.js";
import { terminalSafe } from "../report/terminal-safe.js";
import { colorEnabled, out, warn, withCancellation } from "./context.js";
import { EXIT, OperationalError, UsageError, scanExitCode } from "./exit.js";
import { engineWasExplicit, type ScanFlags } from "./scan-flags.js";
import { runScan, runScanStream } from "./scan-run.js";

/** What `scan --html -` is refused for: stdout carries the scan's own report (`report --html -` draws a page there). */
const HTML_TO_STDOUT = "-";

const useColor = (): boolean => colorEnabled(process.stdout);

/** The text report's options from the flags: colour on a TTY, short lines cut to the terminal's width there. */
function textOptions(flags: ScanFlags): FormatOptions {
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  return {
    color: useColor(),
    verbose: flags.verbose === true,
    all: flags.all === true,
    ...(columns === undefined ? {} : { columns }),
  };
}

/** Whether anything in the scan is for `segscan repair` to do: a repairable partition or a repairable node finding. */
function repairsToMake(report: Pick<ScanReport, "summary" | "node" | "nodes">): boolean {
  if (report.summary.repairable > 0) return true;
  return scanNodes(report).some((node) => nodeFindings(node).some((finding) => finding.severity === "repairable"));
}

/** The lines under the summary: what to run next for the whole scan, as pasteable commands with the real paths. */
export function scanHints(report: ScanReport, paths: readonly string[]): string {
  const c = colors(useColor());
  const lines: string[] = [];
  if (repairsToMake(report)) {
    const nodes = scanNodes(report);
    // repair plans one node root at a time (docs/repair.md §6.2): with several, one command per root.
    const repairs = nodes.length > 1 ? nodes.map((node) => ["segscan", "repair", node.path]) : [["segscan", "repair", ...paths]];
    const restore =
      paths.length === 1
        ? `${c.bold(shellQuote(["segscan", "restore", paths[0]!]))} undoes it`
        : "segscan restore given a repaired path undoes it";
    lines.push(
      `${c.yellow("→")} repairs to make: ${repairs.map((argv) => c.bold(shellQuote(argv))).join(" and ")} shows the plan, ` +
        `add ${c.bold("--apply")} to carry it out (cut bytes are preserved; ${restore}).`,
    );
  }
  if (report.summary.refused > 0) {
    lines.push(`${c.red("→")} refused partitions are left exactly as they are: not served, every byte kept as evidence.`);
  }
  if (report.summary.failed > 0) {
    lines.push(
      `${c.magenta("→")} failed partitions could not be judged (a read or listing error, a file that is not a regular file, ` +
        "or no segment at all; each error says which): nothing was concluded or changed; fix that and scan again.",
    );
  }
  // Every path in them went through shellQuote, which shows a control character as an escape: terminal-safe as they are.
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

export async function scanCommand(paths: string[], flags: ScanFlags, command: Command): Promise<number> {
  if (flags.json && flags.ndjson) throw new UsageError("--json and --ndjson are two formats of the same report: give one");
  if (flags.html === HTML_TO_STDOUT) {
    throw new UsageError(
      "scan --html -: stdout carries scan's own report; give --html a file, or draw the page on stdout with " +
        `\`${shellQuote(["segscan", "scan", ...paths, "--json"])} | segscan report - --html -\``,
    );
  }
  // A page never goes inside what is scanned, nor over a file that is not a page (./page-file.ts): refused before the scan.
  if (flags.html !== undefined) await (await import("./page-file.js")).checkPagePath(flags.html, paths, "nothing was scanned or written");
  // runScan refuses a path holding no partition (exit 16) and notes a node root that holds none.
  // --json and --html need the whole report.
  if (flags.json || flags.html !== undefined) {
    const report = await withCancellation((signal) => runScan(paths, flags, engineWasExplicit(command), signal));
    if (flags.json) await out(stringifyJson(toJsonReport(report)) + "\n");
    else if (flags.ndjson) await out(ndjsonText(report));
    else await out(formatReport(terminalSafe(report), textOptions(flags)) + scanHints(report, paths));
    const code = scanExitCode(report);
    if (flags.html === undefined) return code;
    try {
      // The renderer loads only for --html (docs/benchmarks.md).
      const { writeHtmlReport } = await import("./report-html.js");
      await writeHtmlReport(flags.html, toJsonReport(report), paths);
    } catch (error) {
      if (!(error instanceof OperationalError)) throw error;
      // The scan's own findings still count: the failed page adds 8 to them.
      warn(error.message);
      return code | EXIT.OPERATIONAL;
    }
    return code;
  }
  // The text report and --ndjson take each partition as it completes and keep
  // only what they print (the text: its problems), so memory stays flat however many partitions there are.
  const end = await withCancellation((signal) =>
    runScanStream(
      paths,
      flags,
      engineWasExplicit(command),
      signal,
      async (stream) => {
        const summary = await (flags.ndjson ? printNdjson(stream) : printText(stream, paths, flags));
        return reportShell(stream, summary);
      },
      // --ndjson: each node entry goes out on its partition's line, none is kept (docs/benchmarks.md); the text needs every finding at the end.
      flags.ndjson ? "per-partition" : "keep",
    ),
  );
  return scanExitCode(end);
}

/** What the stream's header and a summary make: a report without partitions, for the header and summary formatters. */
function reportShell(stream: ScanStream, summary: ScanReport["summary"]): ScanReport {
  const shell: ScanReport = { segscan: stream.segscan, engine: stream.engine, options: stream.options, partitions: [], summary };
  if (stream.skipped.length > 0) shell.skipped = [...stream.skipped];
  if (stream.node !== undefined) shell.node = stream.node;
  if (stream.nodes !== undefined) shell.nodes = stream.nodes;
  return shell;
}

/** A batch of output goes to stdout once it holds this much… */
const COALESCE_BYTES = 64 * 1024;
/** …or this long after its first line: a slow scan still shows each partition soon after it completes. */
const COALESCE_MS = 100;

/**
 * Text for stdout, written in batches (docs/benchmarks.md: a write and its callback per
 * partition cost a twentieth of a scan of many small partitions). `flush`
 * writes what is buffered; the printers flush before they return or throw, so
 * a cancelled scan has printed every partition it finished.
 */
class CoalescedOut {
  private buffered = "";
  private timer: ReturnType<typeof setTimeout> | null = null;

  add(text: string): Promise<void> {
    this.buffered += text;
    if (this.buffered.length >= COALESCE_BYTES) return this.flush();
    this.timer ??= setTimeout(() => void this.flush(), COALESCE_MS);
    return Promise.resolve();
  }

  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const text = this.buffered;
    this.buffered = "";
    return out(text);
  }
}

/** Feeds each partition to `print` in order; returns the summary. */
async function drain(
  stream: ScanStream,
  print: (partition: ScanReport["partitions"][number]) => Promise<void> | void,
): Promise<ScanReport["summary"]> {
  for (let next = await stream.partitions.next(); ; next = await stream.partitions.next()) {
    if (next.done) return next.value;
    await print(next.value);
  }
}

/**
 * docs/interfaces.md §9.3: the `type` of each `--ndjson` line, as NDJSON_LINE_TYPES in
 * src/report/schema.ts (not imported: printing loads no schema).
 */
const NDJSON_PARTITION = "partition";
const NDJSON_SUMMARY = "summary";

/**
 * The `--ndjson` last line: `type: "summary"`, then the `--json` report without
 * `partitions` (segscan, engine, verdict, options, summary, and `node` or `nodes`
 * for the node roots the scan met).
 */
function ndjsonLastLine(report: ScanReport): string {
  const { partitions: _partitions, ...last } = toJsonReport({ ...report, partitions: [] });
  return JSON.stringify({ type: NDJSON_SUMMARY, ...last }) + "\n";
}

/**
 * `--ndjson` text of a whole report (`scan --ndjson --html`): the same lines
 * the stream prints, so each partition dir's node entry moves onto its
 * partition's line and the last line keeps the dirs no partition covered.
 */
function ndjsonText(report: ScanReport): string {
  const nodes = scanNodes(report);
  const entries = new Map(nodes.flatMap((node) => node.partitions.map((entry) => [entry.path, { root: node.path, entry }] as const)));
  const lines = report.partitions.map((partition) => {
    const entry = entries.get(partition.path);
    entries.delete(partition.path);
    return ndjsonPartitionLine(partition, entry);
  });
  const left = nodes.map((node) => ({ ...node, partitions: node.partitions.filter((entry) => entries.has(entry.path)) }));
  const last = { ...report };
  if (report.node !== undefined) last.node = left[0]!;
  if (report.nodes !== undefined) last.nodes = left;
  return lines.join("") + ndjsonLastLine(last);
}

/**
 * `scan --ndjson` (docs/interfaces.md §9.3): one partition per line
 * (`type: "partition"`), exactly as it appears in the `--json` report's
 * `partitions`, in path order; the last line (`type: "summary"`) is that
 * report without `partitions`, with the node section of each node root met.
 */
async function printNdjson(stream: ScanStream): Promise<ScanReport["summary"]> {
  const lines = new CoalescedOut();
  try {
    const summary = await drain(stream, (partition) => lines.add(ndjsonPartitionLine(partition, stream.nodeEntryOf?.(partition))));
    await lines.add(ndjsonLastLine(reportShell(stream, summary)));
    return summary;
  } finally {
    await lines.flush();
  }
}

/** One partition's `--ndjson` line; under a node root with its partition dir's node entry as `node` (docs/interfaces.md §9.3). */
function ndjsonPartitionLine(
  partition: ScanReport["partitions"][number],
  nodeEntry: { root: string; entry: NodePartitionReport } | undefined,
): string {
  const json = { type: NDJSON_PARTITION, ...partitionToJson(partition) };
  return JSON.stringify(nodeEntry === undefined ? json : { ...json, node: nodePartitionToJson(nodeEntry.entry, nodeEntry.root) }) + "\n";
}

/**
 * The text report of a streamed scan: problems first (src/report/format.ts
 * TextReport), so it is printed once the verdict is known; only the problems
 * (and with --all the clean partitions) are kept meanwhile.
 */
async function printText(stream: ScanStream, paths: readonly string[], flags: ScanFlags): Promise<ScanReport["summary"]> {
  const text = new TextReport(textOptions(flags));
  const summary = await drain(stream, (partition) => text.add(terminalSafe(partition)));
  const report = reportShell(stream, summary);
  await out(text.finish(terminalSafe(report)) + scanHints(report, paths));
  return summary;
}
