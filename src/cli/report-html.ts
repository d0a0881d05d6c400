/**
 * `scan --html <file>` and `report <scan.json> --html <file>`: both draw the
 * `scan --json` report shape (docs/interfaces.md §9.3) with the one renderer
 * in ../report/html, so a report saved on one machine draws the same on another.
 */
import { readFile } from "node:fs/promises";
import { renderHtmlReport, type HtmlReportInput } from "../report/html/index.js";
import { validateJsonReport, type JsonScanReport } from "../report/json.js";
import { formatBytes } from "../report/format.js";
import { warn } from "./context.js";
import { EXIT, OperationalError, UsageError } from "./exit.js";
import { PAGE_TO_STDOUT, writePageFile } from "./page-file.js";

/** Problems quoted in the error for a file that is not a report; the rest are counted. */
const MAX_PROBLEMS_SHOWN = 5;

/** `--html -`: the page goes to stdout (`report` only; `scan` prints its own report there). */
export const HTML_TO_STDOUT = PAGE_TO_STDOUT;

/**
 * Writes the page next to its destination and renames it into place, so a
 * failed write never leaves a half-written report under the requested name;
 * `-` writes it to stdout.
 */
export async function writeHtmlReport(path: string, report: JsonScanReport): Promise<void> {
  const html = renderHtmlReport(report as HtmlReportInput);
  await writePageFile(path, html, "the HTML report");
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
    throw new OperationalError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; nothing was written`,
    );
  }
}

/** Parses and validates a saved `scan --json` report; a file that is not one is a usage error naming its problems. */
export function parseJsonReportText(text: string, file: string): JsonScanReport {
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

export async function reportCommand(file: string, flags: { html: string }): Promise<number> {
  const report = parseJsonReportText(await readInput(file), file === "-" ? "stdin" : file);
  await writeHtmlReport(flags.html, report);
  return EXIT.CLEAN;
}
