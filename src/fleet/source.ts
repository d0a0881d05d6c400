/**
 * Reading `scan --json` and `scan --ndjson` reports for the merge
 * (docs/fleet.md "Inputs"). A report is validated against the scan report
 * schema (report/schema.ts) before anything of it is used, and one from another
 * segscan version is refused: every such error names the file.
 *
 * An NDJSON report is streamed: its last line (segscan, engine, options,
 * summary, node) is read first from the end of the file, then its partition
 * lines one at a time, so memory holds one line per report. A `--json` report
 * is one JSON value and is read whole.
 */
import { createReadStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { SEGSCAN_VERSION } from "../version.js";
import type { JsonScanReport } from "../report/json.js";
import { schemaProblems, validateJsonReport } from "../report/json-validate.js";
import { NodeJsonSchema } from "../report/node-schema.js";
import { PartitionSchema, ScanReportSchema } from "../report/schema.js";
import { type PartitionLine, partitionIdentity } from "./adapter.js";
import type { ReportHeader } from "./merge.js";
import { ReportInputError } from "./errors.js";

export { ReportInputError } from "./errors.js";

export interface ReportSource {
  file: string;
  /** The node's label: given (`name=path`), else the report's node root. */
  name: string;
  root: string | null;
  format: "json" | "ndjson";
  header: ReportHeader;
  /** Partition lines in the report's order (discovery's path order). */
  lines: AsyncIterator<PartitionLine>;
}

const MAX_PROBLEMS_SHOWN = 5;

const PartitionLineSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal("partition")),
    ...PartitionSchema.properties,
    node: Type.Optional(NodeJsonSchema.properties.partitions.items),
  },
  { additionalProperties: false },
);
const HeaderSchema = Type.Object(
  { type: Type.Optional(Type.Literal("summary")), ...ScanReportSchema.properties, partitions: Type.Optional(Type.Array(PartitionSchema)) },
  { additionalProperties: false },
);
const partitionLineCheck = TypeCompiler.Compile(PartitionLineSchema);

function problemsText(problems: readonly string[]): string {
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).join("; ");
  return problems.length > MAX_PROBLEMS_SHOWN ? `${shown} (and ${problems.length - MAX_PROBLEMS_SHOWN} more)` : shown;
}

function notAReport(file: string, problems: readonly string[] | string): ReportInputError {
  const text = typeof problems === "string" ? problems : problemsText(problems);
  return new ReportInputError(file, `${file} is not a \`segscan scan --json\` or \`--ndjson\` report: ${text}`);
}

function checkVersion(file: string, header: { segscan: string }): void {
  if (header.segscan !== SEGSCAN_VERSION) {
    throw new ReportInputError(
      file,
      `${file} was written by segscan ${header.segscan}; this is segscan ${SEGSCAN_VERSION}: reports of another version are not merged ` +
        "(their fields may differ); scan that node again with this version",
    );
  }
}

function parseJson(file: string, text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw notAReport(file, `${where} is not JSON (${(error as Error).message})`);
  }
}

/** The last non-empty line of a file, read backwards from its end. */
async function lastLine(file: string): Promise<{ text: string; offset: number }> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    const chunk = 64 * 1024;
    let end = size;
    let tail = Buffer.alloc(0);
    while (end > 0) {
      const start = Math.max(0, end - chunk);
      const buffer = Buffer.alloc(end - start);
      await handle.read(buffer, 0, buffer.length, start);
      tail = Buffer.concat([buffer, tail]);
      end = start;
      const trimmed = trimEnd(tail);
      const newline = tail.lastIndexOf(0x0a, trimmed - 1);
      if (newline >= 0) return { text: tail.subarray(newline + 1, trimmed).toString("utf8"), offset: end + newline + 1 };
    }
    return { text: tail.subarray(0, trimEnd(tail)).toString("utf8"), offset: 0 };
  } finally {
    await handle.close();
  }
}

function trimEnd(buffer: Buffer): number {
  let end = buffer.length;
  while (end > 0 && (buffer[end - 1] === 0x0a || buffer[end - 1] === 0x0d || buffer[end - 1] === 0x20)) end--;
  return end;
}

/** Whether the file is NDJSON: its first line is a whole JSON object without `partitions`. */
async function isNdjson(file: string): Promise<boolean> {
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 });
  let first = "";
  try {
    for await (const chunk of stream) {
      first += chunk as string;
      const newline = first.indexOf("\n");
      if (newline >= 0) {
        first = first.slice(0, newline);
        break;
      }
      if (first.length > 64 * 1024 * 1024) break;
    }
  } finally {
    stream.destroy();
  }
  try {
    const value: unknown = JSON.parse(first);
    return typeof value === "object" && value !== null && !Array.isArray(value) && !("partitions" in value);
  } catch {
    return false;
  }
}

function ioError(file: string, error: unknown): ReportInputError {
  return new ReportInputError(file, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

/** Opens a report for the merge: validates its header (and, for `--json`, the whole report) and checks its version. */
export async function openReport(file: string, name: string | undefined): Promise<ReportSource> {
  try {
    return (await isNdjson(file)) ? await openNdjson(file, name) : await openJson(file, name);
  } catch (error) {
    if (error instanceof ReportInputError) throw error;
    throw ioError(file, error);
  }
}

async function openJson(file: string, name: string | undefined): Promise<ReportSource> {
  const value = parseJson(file, await readFile(file, "utf8"), "the file");
  const source = fromReport(value, name, file);
  return { ...source, file };
}

/** A parsed `--json` report as a source: validated, version-checked, its partitions sorted by merge key. */
export function fromReport(value: unknown, name: string | undefined, file: string): ReportSource {
  if (typeof value === "object" && value !== null && "segscan" in value && typeof value.segscan === "string") {
    checkVersion(file, { segscan: value.segscan });
  }
  let problems: string[];
  try {
    problems = validateJsonReport(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    problems = [`it cannot be checked (${error.message})`];
  }
  if (problems.length > 0) throw notAReport(file, problems);
  const report = value as JsonScanReport;
  refuseSeveralNodes(file, report);
  const { partitions, ...header } = report;
  const entries = new Map((report.node?.partitions ?? []).map((entry) => [entry.path, entry]));
  const keyed = partitions.map((partition) => {
    const entry = entries.get(partition.path);
    const line: PartitionLine = entry === undefined ? partition : { ...partition, node: entry };
    return { key: partitionIdentity(partition.path)?.key ?? "", line };
  });
  // One value in memory anyway: sorted by merge key, whatever order the report's paths were given in.
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const lines = keyed.map((entry) => entry.line);
  const root = rootOf(header, lines[0]);
  return { file, name: name ?? root ?? file, root, format: "json", header, lines: iterate(lines) };
}

async function* iterate(lines: PartitionLine[]): AsyncGenerator<PartitionLine> {
  yield* lines;
}

/** A report of several node roots (`nodes`) is several replicas: merged as one, their partitions would pass for one node's. */
function refuseSeveralNodes(file: string, header: { nodes?: readonly { path: string }[] | undefined }): void {
  if (header.nodes === undefined) return;
  throw notAReport(
    file,
    `it covers ${header.nodes.length} node roots (${header.nodes.map((node) => node.path).join(", ")}): ` +
      "fleet merges one node per report, so scan each node root on its own",
  );
}

function rootOf(header: ReportHeader, first: PartitionLine | undefined): string | null {
  if (header.node !== undefined) return header.node.path;
  return first === undefined ? null : (partitionIdentity(first.path)?.root ?? null);
}

async function openNdjson(file: string, name: string | undefined): Promise<ReportSource> {
  const last = await lastLine(file);
  const value = parseJson(file, last.text, "the last line");
  if (typeof value === "object" && value !== null && "segscan" in value && typeof value.segscan === "string")
    checkVersion(file, { segscan: value.segscan });
  const headerProblems = schemaProblems(HeaderSchema as TSchema, value, "$");
  if (headerProblems.length > 0)
    throw notAReport(
      file,
      headerProblems.map((problem) => `last line: ${problem}`),
    );
  const header = value as ReportHeader;
  refuseSeveralNodes(file, header);
  const lines = ndjsonLines(file, header, last.offset);
  const first = await lines.next();
  const pending = first.done ? [] : [first.value];
  const root = rootOf(header, pending[0]);
  const all = (async function* (): AsyncGenerator<PartitionLine> {
    yield* pending;
    for (let next = await lines.next(); !next.done; next = await lines.next()) yield next.value;
  })();
  return { file, name: name ?? root ?? file, root, format: "ndjson", header, lines: all };
}

/** The lines of a text stream (without their `\n` or `\r\n`), many per chunk without a wait. */
async function* readLines(stream: AsyncIterable<string | Buffer>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      yield text.charCodeAt(newline - 1) === 0x0d ? text.slice(start, newline - 1) : text.slice(start, newline);
      start = newline + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== "") yield rest;
}

/** The partition lines before `endOffset` (the last line's start), each validated; the count checked against the summary. */
async function* ndjsonLines(file: string, header: ReportHeader, endOffset: number): AsyncGenerator<PartitionLine> {
  if (endOffset === 0) {
    if (header.summary.partitions !== 0)
      throw notAReport(file, `its last line counts ${header.summary.partitions} partitions but no partition line precedes it`);
    return;
  }
  const stream = createReadStream(file, { encoding: "utf8", start: 0, end: endOffset - 1, highWaterMark: 1024 * 1024 });
  let number = 0;
  const counts = { clean: 0, repairable: 0, refused: 0, failed: 0 };
  try {
    for await (const text of readLines(stream)) {
      number++;
      if (text.trim() === "") continue;
      const value = parseJson(file, text, `line ${number}`);
      if (!partitionLineCheck.Check(value)) {
        throw notAReport(file, schemaProblems(PartitionLineSchema, value, `line ${number}: $`));
      }
      counts[value.verdict]++;
      yield value as PartitionLine;
    }
  } catch (error) {
    if (error instanceof ReportInputError) throw error;
    throw ioError(file, error);
  } finally {
    stream.destroy();
  }
  const total = counts.clean + counts.repairable + counts.refused + counts.failed;
  const summary = header.summary;
  if (total !== summary.partitions || (["clean", "repairable", "refused", "failed"] as const).some((v) => counts[v] !== summary[v])) {
    throw notAReport(
      file,
      `its ${total} partition line(s) (${counts.clean} clean, ${counts.repairable} repairable, ${counts.refused} refused, ${counts.failed} failed) ` +
        `disagree with its summary (${summary.partitions}: ${summary.clean}, ${summary.repairable}, ${summary.refused}, ${summary.failed}): a truncated or edited report`,
    );
  }
}
