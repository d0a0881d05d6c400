/**
 * `scan` (docs/interfaces.md §9.2): its own module, so the command loads what
 * scanning needs and nothing of repair, gen, dump or the HTML renderer (issue 23).
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import type { NodePartitionReport } from "../domain/node.js";
import type { ScanReport } from "../domain/scan.js";
import { nodeBlockingScanFs } from "../io/fs.js";
import { isNodeRoot } from "../node/scan.js";
import type { ScanStream } from "../node/scan-path.js";
import { NO_PARTITIONS_TEXT, colors, formatHeader, formatPartition, formatReport, formatSkipped, formatSummary } from "../report/format.js";
import { partitionToJson, stringifyJson, toJsonReport } from "../report/json.js";
import { nodePartitionToJson } from "../report/node-json.js";
import { escapeControl, terminalSafe } from "../report/terminal-safe.js";
import { colorEnabled, out, warn, withCancellation } from "./context.js";
import { EXIT, OperationalError, UsageError, scanExitCode } from "./exit.js";
import { engineWasExplicit, type ScanFlags } from "./scan-flags.js";
import { runScan, runScanStream } from "./scan-run.js";

/** What `scan --html -` is refused for: stdout carries the scan's own report (`report --html -` draws a page there). */
const HTML_TO_STDOUT = "-";

const useColor = (): boolean => colorEnabled(process.stdout);

function scanHints(report: ScanReport, paths: readonly string[]): string {
  const c = colors(useColor());
  const lines: string[] = [];
  const quoted =
    paths.length > 2
      ? "<same paths>"
      : paths.map((path) => escapeControl(/[\s'"$]/.test(path) ? `'${path.replace(/'/g, "'\\''")}'` : path)).join(" ");
  if (report.summary.repairable > 0) {
    lines.push(
      `${c.yellow("→")} ${report.summary.repairable} partition(s) can be repaired: ${c.bold(`segscan repair ${quoted}`)} shows the plan, ` +
        `add ${c.bold("--apply")} to carry it out (cut bytes are preserved; ${c.bold("segscan restore <partition>")} undoes it).`,
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
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

export async function scanCommand(paths: string[], flags: ScanFlags, command: Command): Promise<number> {
  if (flags.json && flags.ndjson) throw new UsageError("--json and --ndjson are two formats of the same report: give one");
  if (flags.html === HTML_TO_STDOUT) {
    throw new UsageError(
      "scan --html -: stdout carries scan's own report; give --html a file, or draw the page on stdout with " +
        "`segscan scan <path...> --json | segscan report - --html -`",
    );
  }
  // runScan refuses a path holding no partition (exit 16) and notes a node root that holds none.
  // --json and --html need the whole report; so does the text report of a node
  // root, whose node section comes first and needs every partition's verdict.
  if (flags.json || flags.html !== undefined || (!flags.ndjson && (await isSingleNodeRoot(paths)))) {
    const report = await withCancellation((signal) => runScan(paths, flags, engineWasExplicit(command), signal));
    if (flags.json) await out(stringifyJson(toJsonReport(report)) + "\n");
    else if (flags.ndjson) await out(ndjsonText(report));
    else await out(formatReport(terminalSafe(report), { color: useColor() }) + scanHints(report, paths));
    const code = scanExitCode(report);
    if (flags.html === undefined) return code;
    try {
      // The renderer loads only for --html (issue 23).
      const { writeHtmlReport } = await import("./report-html.js");
      await writeHtmlReport(flags.html, toJsonReport(report));
    } catch (error) {
      if (!(error instanceof OperationalError)) throw error;
      // The scan's own findings still count: the failed page adds 8 to them.
      warn(error.message);
      return code | EXIT.OPERATIONAL;
    }
    return code;
  }
  // The text report and --ndjson print each partition as it completes and keep
  // only the summary, so their memory stays flat however many partitions there are.
  const end = await withCancellation((signal) =>
    runScanStream(
      paths,
      flags,
      engineWasExplicit(command),
      signal,
      async (stream) => {
        const summary = await (flags.ndjson ? printNdjson(stream) : printText(stream, paths));
        return { summary, node: stream.node };
      },
      // Each node entry goes out on its partition's line: none is kept (issue 13).
      flags.ndjson ? "per-partition" : "keep",
    ),
  );
  return scanExitCode(end);
}

/**
 * Whether `scan` was given one path and it is a node root (docs/node.md N0):
 * the scan then adds the node section. A path that cannot be told is no node
 * root here; the scan reports its failure.
 */
async function isSingleNodeRoot(paths: readonly string[]): Promise<boolean> {
  return paths.length === 1 && (await isNodeRoot(resolve(paths[0]!), nodeBlockingScanFs).catch(() => false));
}

/** What the stream's header and a summary make: a report without partitions, for the header and summary formatters. */
function reportShell(stream: ScanStream, summary: ScanReport["summary"]): ScanReport {
  const shell: ScanReport = { segscan: stream.segscan, engine: stream.engine, options: stream.options, partitions: [], summary };
  if (stream.node !== undefined) shell.node = stream.node;
  return shell;
}

/** A batch of output goes to stdout once it holds this much… */
const COALESCE_BYTES = 64 * 1024;
/** …or this long after its first line: a slow scan still shows each partition soon after it completes. */
const COALESCE_MS = 100;

/**
 * Text for stdout, written in batches (issue 23: a write and its callback per
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
  print: (partition: ScanReport["partitions"][number]) => Promise<void>,
): Promise<ScanReport["summary"]> {
  for (let next = await stream.partitions.next(); ; next = await stream.partitions.next()) {
    if (next.done) return next.value;
    await print(next.value);
  }
}

/** The `--ndjson` last line: the `--json` report without `partitions` (segscan, engine, options, summary, and node on a node root). */
function ndjsonLastLine(report: ScanReport): string {
  const { partitions: _partitions, ...last } = toJsonReport({ ...report, partitions: [] });
  return JSON.stringify(last) + "\n";
}

/**
 * `--ndjson` text of a whole report (`scan --ndjson --html`): the same lines
 * the stream prints, so on a node root each partition dir's node entry moves
 * onto its partition's line and the last line keeps the dirs no partition covered.
 */
function ndjsonText(report: ScanReport): string {
  const entries = new Map((report.node?.partitions ?? []).map((entry) => [entry.path, entry]));
  const lines = report.partitions.map((partition) => {
    const entry = entries.get(partition.path);
    entries.delete(partition.path);
    return ndjsonPartitionLine(partition, entry);
  });
  const last = report.node === undefined ? report : { ...report, node: { ...report.node, partitions: [...entries.values()] } };
  return lines.join("") + ndjsonLastLine(last);
}

/**
 * `scan --ndjson` (docs/interfaces.md §9.3): one partition per line, exactly as
 * it appears in the `--json` report's `partitions`, in path order; the last
 * line is that report without `partitions` (segscan, engine, options, summary,
 * and on a node root the node section, its metadata scanned before the partitions).
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

/** One partition's `--ndjson` line; on a node root with its partition dir's node entry as `node` (docs/interfaces.md §9.3). */
function ndjsonPartitionLine(partition: ScanReport["partitions"][number], nodeEntry: NodePartitionReport | undefined): string {
  const json = partitionToJson(partition);
  return JSON.stringify(nodeEntry === undefined ? json : { ...json, node: nodePartitionToJson(nodeEntry) }) + "\n";
}

/** The text report, written block by block: the same text `formatReport` makes of the whole report. */
async function printText(stream: ScanStream, paths: readonly string[]): Promise<ScanReport["summary"]> {
  const options = { color: useColor() };
  const empty = reportShell(stream, {
    partitions: 0,
    clean: 0,
    repairable: 0,
    refused: 0,
    failed: 0,
    findings: { warn: 0, failed: 0 },
    bytesScanned: 0,
    elapsedMs: 0,
  });
  // The header goes out with the first partition: a scan cancelled before any
  // partition completed prints nothing on stdout (one cancelled later has
  // printed the partitions it finished, and no summary).
  let pending = formatHeader(empty, options);
  const blocks = new CoalescedOut();
  let summary: ScanReport["summary"];
  try {
    summary = await drain(stream, async (partition) => {
      await blocks.add(pending + "\n\n" + formatPartition(terminalSafe(partition), options));
      pending = "";
    });
  } finally {
    await blocks.flush();
  }
  await out(pending);
  const tail: string[] = [];
  if (summary.partitions === 0) tail.push(NO_PARTITIONS_TEXT);
  if (stream.skipped.length > 0) tail.push(formatSkipped(terminalSafe(stream.skipped), options));
  const report = reportShell(stream, summary);
  tail.push(formatSummary(report, options));
  await out("\n\n" + tail.join("\n\n") + "\n" + scanHints(report, paths));
  return summary;
}
