import type { Command } from "commander";
import {
  checkNames,
  type FleetPartition,
  fleetExitCode,
  fleetOutcomeLine,
  formatFleetPartition,
  formatFleetProblems,
  formatFleetSummary,
  formatFleetVerdict,
  isNotable,
  openReport,
  ReportInputError,
  type ReportSource,
  renderFleetHtml,
  runFleet,
} from "../fleet/index.js";
import { colorEnabled, out, warn } from "./context.js";
import { EXIT, OperationalError, UsageError } from "./exit.js";
import { PAGE_TO_STDOUT, checkPagePath, writePageFile } from "./page-file.js";

export interface FleetFlags {
  json?: boolean;
  html?: string;
}

const JSON_BLOCK_CHARS = 1 << 20;

/** `name=path` or `path`. A path that itself contains `=` can be given as `./a=b.json` (no name) or `name=./a=b.json`. */
export function parseReportArgument(argument: string): { name: string | undefined; file: string } {
  const at = argument.indexOf("=");
  if (at <= 0 || argument.startsWith("./") || argument.startsWith("/")) return { name: undefined, file: argument };
  const name = argument.slice(0, at);
  const file = argument.slice(at + 1);
  if (file === "") throw new UsageError(`"${argument}": give the report after the name, as name=path`);
  return { name, file };
}

async function writePage(path: string, html: string): Promise<void> {
  await writePageFile(path, html, "the HTML page");
  if (path !== PAGE_TO_STDOUT) warn(`wrote the cluster page ${path}`);
}

/** `ReportInputError`s of `step` as the CLI error `as` (an unreadable report is operational, two equal node labels a usage error). */
async function reportInput<T>(step: () => T | Promise<T>, as: new (message: string) => Error): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ReportInputError) throw new as(error.message);
    throw error;
  }
}

export async function fleetCommand(reports: string[], flags: FleetFlags, _command: Command): Promise<number> {
  if (flags.json && flags.html === "-") throw new UsageError("--json and --html - both write stdout: give --html a file");
  // A page never replaces a file that is not a page (a report given by mistake): refused before the merge.
  if (flags.html !== undefined) await checkPagePath(flags.html);
  const specs = reports.map(parseReportArgument);
  const sources = await reportInput(async () => {
    const opened: ReportSource[] = [];
    for (const spec of specs) opened.push(await openReport(spec.file, spec.name));
    return opened;
  }, OperationalError);
  await reportInput(() => checkNames(sources), UsageError);
  const textOut = !flags.json && flags.html !== "-";
  const color = colorEnabled(process.stdout) && textOut;
  const notable: FleetPartition[] = [];
  const textLines: string[] = [];
  const json = flags.json ? new JsonPartitions() : null;
  // Streamed: the nodes first, each partition as it is merged, the metadata and summary last.
  if (json !== null) await out(`{\n"partitions": [\n`);
  // A line that is not a partition of a report: the JSON on stdout stops where it was (exit 8 says so).
  const result = await reportInput(
    () =>
      runFleet(sources, async (partition) => {
        await json?.add(partition);
        if (isNotable(partition)) {
          if (flags.html !== undefined) notable.push(partition);
          if (textOut) textLines.push(formatFleetPartition(partition, color));
        }
      }),
    OperationalError,
  );
  if (json !== null) {
    await out(
      `${json.pending}\n],\n"segscan": ${JSON.stringify(result.segscan)},\n"verdict": ${JSON.stringify(result.verdict)},\n` +
        `"nodes": ${JSON.stringify(result.nodes)},\n"metadata": ${JSON.stringify(result.metadata)},\n` +
        `"summary": ${JSON.stringify(result.summary)},\n"nextSteps": ${JSON.stringify(result.nextSteps)},\n` +
        `"warnings": ${JSON.stringify(result.warnings)}\n}\n`,
    );
  } else if (textOut) {
    // Problems first (docs/fleet.md "Outputs"): the verdict, the cluster's findings, the partitions; the summary last.
    const blocks = [formatFleetVerdict(result.verdict, result.summary, color)];
    const problems = formatFleetProblems(result.metadata, result.nextSteps, result.warnings, color);
    if (problems !== "") blocks.push(problems);
    if (textLines.length > 0) blocks.push(textLines.join("\n"));
    blocks.push(formatFleetSummary(result.nodes, result.metadata, result.summary, color));
    blocks.push(fleetOutcomeLine(result.verdict, result.summary, color));
    await out(`${blocks.join("\n\n")}\n`);
  }
  let code = fleetExitCode(result.summary);
  if (flags.html !== undefined) {
    try {
      await writePage(flags.html, renderFleetHtml({ ...result, partitions: notable }));
    } catch (error) {
      if (!(error instanceof OperationalError)) throw error;
      warn(error.message);
      code |= EXIT.OPERATIONAL;
    }
  }
  return code;
}

/** `fleet --json`'s partitions, written in blocks of about 1 MiB: one write per partition would wait on stdout 10,000s of times. */
class JsonPartitions {
  pending = "";
  private first = true;

  async add(partition: FleetPartition): Promise<void> {
    this.pending += `${this.first ? "" : ",\n"}${JSON.stringify(partition)}`;
    this.first = false;
    if (this.pending.length < JSON_BLOCK_CHARS) return;
    await out(this.pending);
    this.pending = "";
  }
}
