/**
 * `scan --html <file>` and `report <scan.json|scan.ndjson> --html <file>`: both
 * draw the `scan --json` report shape (docs/interfaces.md §9.3) with the one
 * renderer in ../report/html, so a report saved on one machine draws the same
 * on another. An `--ndjson` report is read as `segscan fleet` reads it.
 */
import { readFile } from "node:fs/promises";
import { renderHtmlReport, type HtmlReportInput } from "../report/html/index.js";
import type { JsonScanReport } from "../report/json.js";
import { formatBytes } from "../report/format.js";
import { warn } from "./context.js";
import { EXIT, OperationalError, UsageError } from "./exit.js";
import { PAGE_TO_STDOUT, checkPagePath, writePageFile } from "./page-file.js";

/** Problems quoted in the error for a file that is not a report; the rest are counted. */
const MAX_PROBLEMS_SHOWN = 5;

/** `--html -`: the page goes to stdout (`report` only; `scan` prints its own report there). */
export const HTML_TO_STDOUT = PAGE_TO_STDOUT;

/**
 * Writes the page next to its destination and renames it into place, so a
 * failed write never leaves a half-written report under the requested name;
 * `-` writes it to stdout. Never inside `reads` (the paths scanned), nor over
 * a file that is not a page (./page-file.ts).
 */
export async function writeHtmlReport(path: string, report: JsonScanReport, reads: readonly string[] = []): Promise<void> {
  const html = renderHtmlReport(report as HtmlReportInput);
  await writePageFile(path, html, "the HTML report", reads);
  if (path === HTML_TO_STDOUT) return;
  warn(
    `wrote the HTML report ${path} (${report.partitions.length} partition${report.partitions.length === 1 ? "" : "s"}, ${formatBytes(Buffer.byteLength(html))})`,
  );
}

async function readInput(file: string): Promise<string> {
  if (file === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_STRING_TOO_LONG" || code === "ERR_FS_FILE_TOO_LARGE") {
      throw new OperationalError(`${file} is too large to read whole (more than one string holds); nothing was written`);
    }
    throw new OperationalError(`cannot read ${file}: ${code ?? (error as Error).message}; nothing was written`);
  }
}

/** Parses and validates a saved `scan --json` report; a file that is not one is a usage error naming its problems. */
async function parseJsonReportText(text: string, file: string): Promise<JsonScanReport> {
  // The schema loads with the first report read, not with `scan --html` (docs/benchmarks.md "Cold code").
  const { validateJsonReport } = await import("../report/json-validate.js");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${file} is not JSON (${(error as Error).message}); give a report saved by \`segscan scan --json\`; nothing was written`,
    );
  }
  let problems: string[];
  try {
    problems = validateJsonReport(value);
  } catch (error) {
    // A value nested deeper than the validator's stack (validateJsonReport bounds the nesting; this is the backstop).
    if (!(error instanceof RangeError)) throw error;
    throw new UsageError(`${file} is not a \`segscan scan --json\` report: it cannot be checked (${error.message}); nothing was written`);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).join("; ");
    const more = problems.length > MAX_PROBLEMS_SHOWN ? ` (and ${problems.length - MAX_PROBLEMS_SHOWN} more)` : "";
    throw new UsageError(`${file} is not a \`segscan scan --json\` report: ${shown}${more}; nothing was written`);
  }
  return value as JsonScanReport;
}

/** Whether a text is a `scan --ndjson` report: its first line is a whole JSON object with a `type` or without `partitions` (as fleet tells them apart). */
function isNdjsonText(text: string): boolean {
  const newline = text.indexOf("\n");
  if (newline < 0) return false;
  try {
    const first: unknown = JSON.parse(text.slice(0, newline));
    return typeof first === "object" && first !== null && !Array.isArray(first) && ("type" in first || !("partitions" in first));
  } catch {
    return false;
  }
}

/** A saved `scan --ndjson` report, read line by line as `segscan fleet` reads it (docs/fleet.md "Inputs"), as the `--json` report it was printed from. */
async function parseNdjsonReportText(text: string, file: string): Promise<JsonScanReport> {
  // Loaded only for an NDJSON report: the fleet reader brings the schema compiler.
  const { scanReportFromNdjson, ReportInputError } = await import("../fleet/source.js");
  try {
    return scanReportFromNdjson(text, file);
  } catch (error) {
    if (error instanceof ReportInputError) throw new UsageError(`${error.message}; nothing was written`);
    throw error;
  }
}

export async function reportCommand(file: string, flags: { html: string }): Promise<number> {
  await checkPagePath(flags.html);
  const text = await readInput(file);
  const name = file === "-" ? "stdin" : file;
  const report = isNdjsonText(text) ? await parseNdjsonReportText(text, name) : await parseJsonReportText(text, name);
  await writeHtmlReport(flags.html, report);
  return EXIT.CLEAN;
}
