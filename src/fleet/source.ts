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
import { constants } from "node:buffer";
import { createReadStream } from "node:fs";
import { type FileHandle, open, readFile, stat } from "node:fs/promises";
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
import { formatCount } from "../report/units.js";

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

/**
 * The longest text read into one string: a line of an `--ndjson` report, or a
 * whole `--json` report. V8 caps a string's length (UTF-16 units); a UTF-8 text
 * of at most this many bytes always fits, a longer one may not.
 */
export const MAX_TEXT_BYTES = constants.MAX_STRING_LENGTH;

/** The chunk read backwards while looking for the last line: the position search never holds more than one. */
const BACKWARD_CHUNK_BYTES = 1024 * 1024;

const isBlank = (byte: number): boolean => byte === 0x0a || byte === 0x0d || byte === 0x20 || byte === 0x09;

function tooLarge(file: string, what: string, bytes: number): ReportInputError {
  return new ReportInputError(
    file,
    `${file}: ${what} is ${formatCount(bytes)} bytes, more than one string holds (${formatCount(MAX_TEXT_BYTES)} bytes): too large to read whole; ` +
      "scan the node with --ndjson (fleet streams it, one partition line at a time)",
    "content",
  );
}

/**
 * The last non-blank line of a file ending at `endOffset`, read backwards from
 * there: first past the trailing blank bytes, then to the newline before the
 * line, one chunk at a time without keeping them (linear in what it passes
 * over), then the line itself in one read.
 */
async function lastLine(file: string, handle: FileHandle, endOffset: number): Promise<{ text: string; offset: number; end: number }> {
  const buffer = Buffer.alloc(Math.min(BACKWARD_CHUNK_BYTES, Math.max(1, endOffset)));
  let position = endOffset;
  let end: number | null = null;
  let start = 0;
  search: while (position > 0) {
    const from = Math.max(0, position - buffer.length);
    const length = position - from;
    await readFully(handle, buffer, length, from);
    let i = length - 1;
    if (end === null) {
      while (i >= 0 && isBlank(buffer[i]!)) i--;
      if (i < 0) {
        position = from;
        continue;
      }
      end = from + i + 1;
    }
    for (; i >= 0; i--) {
      if (buffer[i] === 0x0a) {
        start = from + i + 1;
        break search;
      }
    }
    position = from;
  }
  if (end === null) return { text: "", offset: 0, end: 0 };
  if (end - start > MAX_TEXT_BYTES) throw tooLarge(file, "its last line", end - start);
  const line = Buffer.alloc(end - start);
  await readFully(handle, line, line.length, start);
  return { text: line.toString("utf8"), offset: start, end };
}

/** Reads `length` bytes at `position` into the start of `buffer` (a short read is retried; a file shorter than its size is an error). */
async function readFully(handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) throw new Error(`EOF at byte ${position + done} (the file shrank while it was read)`);
    done += bytesRead;
  }
}

/** How far the first line is read to tell NDJSON from JSON: a partition line longer than this is read as a `--json` report (and fails as one). */
const FIRST_LINE_PROBE_CHARS = 64 * 1024 * 1024;

/** Whether the file is NDJSON: its first line is a whole JSON object with a `type`, or without `partitions`. */
async function isNdjson(file: string): Promise<boolean> {
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 });
  const chunks: string[] = [];
  let length = 0;
  let first: string | null = null;
  try {
    for await (const chunk of stream) {
      const text = chunk as string;
      const newline = text.indexOf("\n");
      if (newline >= 0) {
        chunks.push(text.slice(0, newline));
        first = chunks.join("");
        break;
      }
      chunks.push(text);
      length += text.length;
      if (length > FIRST_LINE_PROBE_CHARS) break;
    }
  } finally {
    stream.destroy();
  }
  first ??= length > FIRST_LINE_PROBE_CHARS ? "" : chunks.join("");
  return isNdjsonFirstLine(first);
}

function isNdjsonFirstLine(first: string): boolean {
  try {
    const value: unknown = JSON.parse(first);
    // A typed line (a node section has `partitions` too) or an untyped partition line.
    return typeof value === "object" && value !== null && !Array.isArray(value) && ("type" in value || !("partitions" in value));
  } catch {
    return false;
  }
}

function ioError(file: string, error: unknown): ReportInputError {
  return new ReportInputError(file, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, "io");
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
  const { size } = await stat(file);
  if (size > MAX_TEXT_BYTES) throw tooLarge(file, "the report (one JSON value)", size);
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

// ---------------------------------------------------------------------------
// The lines of an `--ndjson` report. Every line may carry a `type` (`partition`,
// `node`, `summary`); older reports have none, and then the last line is the
// summary line and every other line a partition line. A `node` line (the node
// section on a line of its own) comes first or just before the summary line.

type JsonNode = NonNullable<ReportHeader["node"]>;
type Line = { kind: "partition"; line: PartitionLine } | { kind: "node"; node: JsonNode };

const nodeCheck = TypeCompiler.Compile(NodeJsonSchema);

/** A line's JSON value and its `type` (null: none), the `type` taken off so the value is what the scan report schema describes. */
function typed(file: string, text: string, where: string): { type: string | null; value: unknown } {
  const value = parseJson(file, text, where);
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("type" in value)) return { type: null, value };
  const { type, ...rest } = value as { type: unknown };
  if (typeof type !== "string") throw notAReport(file, `${where}: $.type is not a string`);
  return { type, value: rest };
}

/** A line before the summary line: a partition (validated with its node entry) or the node section. */
function lineOf(file: string, text: string, where: string): Line {
  const { type, value } = typed(file, text, where);
  if (type === "node") {
    if (!nodeCheck.Check(value)) throw notAReport(file, schemaProblems(NodeJsonSchema, value, `${where}: $`));
    return { kind: "node", node: value };
  }
  if (type !== null && type !== "partition") {
    throw notAReport(
      file,
      `${where}: a line of type "${type}" before the summary line (this segscan reads partition and node lines there)`,
    );
  }
  if (!partitionLineCheck.Check(value)) throw notAReport(file, schemaProblems(PartitionLineSchema, value, `${where}: $`));
  return { kind: "partition", line: value as PartitionLine };
}

/** The summary line: the report without its partitions, validated and version-checked. */
function summaryOf(file: string, text: string): { header: ReportHeader; typed: boolean } {
  if (text.trim() === "") throw notAReport(file, "it holds no line");
  const { type, value } = typed(file, text, "the last line");
  if (type === "partition" || type === "node") {
    throw notAReport(file, `its last line is a ${type} line, not the summary line: a truncated report`);
  }
  if (typeof value === "object" && value !== null && "segscan" in value && typeof value.segscan === "string")
    checkVersion(file, { segscan: value.segscan });
  const headerProblems = schemaProblems(HeaderSchema as TSchema, value, "$");
  if (headerProblems.length > 0)
    throw notAReport(
      file,
      headerProblems.map((problem) => `last line: ${problem}`),
    );
  return { header: value as ReportHeader, typed: type !== null };
}

/** Sets the node section a `node` line carries; a report has one at most. */
function attachNode(file: string, header: ReportHeader, node: JsonNode, where: string): void {
  if (header.node !== undefined) throw notAReport(file, `${where}: a second node section (a report has one)`);
  header.node = node;
}

async function openNdjson(file: string, name: string | undefined): Promise<ReportSource> {
  const handle = await open(file, "r");
  let header: ReportHeader;
  let partitionsEnd: number;
  try {
    const { size } = await handle.stat();
    const last = await lastLine(file, handle, size);
    const summary = summaryOf(file, last.text);
    header = summary.header;
    refuseSeveralNodes(file, header);
    partitionsEnd = last.offset;
    if (summary.typed && header.node === undefined && last.offset > 0) {
      // A typed report may carry its node section on the line before the summary line.
      const before = await lastLine(file, handle, last.offset);
      if (before.text !== "" && typed(file, before.text, "the line before the last").type === "node") {
        const line = lineOf(file, before.text, "the line before the last");
        if (line.kind === "node") attachNode(file, header, line.node, "the line before the last");
        partitionsEnd = before.offset;
      }
    }
  } finally {
    await handle.close();
  }
  const lines = ndjsonLines(file, header, partitionsEnd);
  const first = await lines.next();
  const pending = first.done ? [] : [first.value];
  const root = rootOf(header, pending[0]);
  const all = (async function* (): AsyncGenerator<PartitionLine> {
    yield* pending;
    for (let next = await lines.next(); !next.done; next = await lines.next()) yield next.value;
  })();
  return { file, name: name ?? root ?? file, root, format: "ndjson", header, lines: all };
}

/** The lines of a text stream (without their `\n` or `\r\n`), many per chunk without a wait; a line longer than one string holds is an error. */
async function* readLines(file: string, stream: AsyncIterable<string | Buffer>): AsyncGenerator<string> {
  let rest = "";
  let number = 0;
  for await (const chunk of stream) {
    const piece = chunk as string;
    if (rest.length + piece.length > MAX_TEXT_BYTES) throw tooLarge(file, `line ${number + 1}`, rest.length + piece.length);
    const text = rest + piece;
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      number++;
      yield text.charCodeAt(newline - 1) === 0x0d ? text.slice(start, newline - 1) : text.slice(start, newline);
      start = newline + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== "") yield rest;
}

type Counts = { clean: number; repairable: number; refused: number; failed: number };

/** The partition lines' verdicts against the summary's: a truncated or edited report disagrees. */
function checkCounts(file: string, counts: Counts, summary: ReportHeader["summary"]): void {
  const total = counts.clean + counts.repairable + counts.refused + counts.failed;
  if (total !== summary.partitions || (["clean", "repairable", "refused", "failed"] as const).some((v) => counts[v] !== summary[v])) {
    throw notAReport(
      file,
      `its ${total} partition line(s) (${counts.clean} clean, ${counts.repairable} repairable, ${counts.refused} refused, ${counts.failed} failed) ` +
        `disagree with its summary (${summary.partitions}: ${summary.clean}, ${summary.repairable}, ${summary.refused}, ${summary.failed}): a truncated or edited report`,
    );
  }
}

/**
 * The partition lines before `endOffset` (the summary line's start, or the
 * node line's before it), each validated; a node line first sets the node
 * section; the count checked against the summary.
 */
async function* ndjsonLines(file: string, header: ReportHeader, endOffset: number): AsyncGenerator<PartitionLine> {
  const counts: Counts = { clean: 0, repairable: 0, refused: 0, failed: 0 };
  if (endOffset > 0) {
    const stream = createReadStream(file, { encoding: "utf8", start: 0, end: endOffset - 1, highWaterMark: 1024 * 1024 });
    let number = 0;
    try {
      for await (const text of readLines(file, stream)) {
        number++;
        if (text.trim() === "") continue;
        const line = lineOf(file, text, `line ${number}`);
        if (line.kind === "node") {
          // Before any partition: the merge reads the node section (its root, its coverage) before it merges.
          if (counts.clean + counts.repairable + counts.refused + counts.failed > 0) {
            throw notAReport(file, `line ${number}: a node line after partition lines (it comes first, or just before the summary line)`);
          }
          attachNode(file, header, line.node, `line ${number}`);
          continue;
        }
        counts[line.line.verdict]++;
        yield line.line;
      }
    } catch (error) {
      if (error instanceof ReportInputError) throw error;
      throw ioError(file, error);
    } finally {
      stream.destroy();
    }
  }
  checkCounts(file, counts, header.summary);
}

/** Path order as discovery walks a node root: component by component (the node section lists its partition dirs so). */
function comparePaths(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  }
  return x.length - y.length;
}

/**
 * A whole `scan --ndjson` report as the `scan --json` report it was printed
 * from (`segscan report` draws either): every line read and validated as
 * `fleet` reads it, each partition's node entry back in the node section.
 */
export function scanReportFromNdjson(text: string, file: string): JsonScanReport {
  const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  let lastIndex = lines.length - 1;
  while (lastIndex >= 0 && lines[lastIndex]!.trim() === "") lastIndex--;
  const { header } = summaryOf(file, lastIndex < 0 ? "" : lines[lastIndex]!);
  const partitions: JsonScanReport["partitions"] = [];
  const entries: JsonNode["partitions"] = [];
  const counts: Counts = { clean: 0, repairable: 0, refused: 0, failed: 0 };
  for (let i = 0; i < lastIndex; i++) {
    if (lines[i]!.trim() === "") continue;
    const line = lineOf(file, lines[i]!, `line ${i + 1}`);
    if (line.kind === "node") {
      attachNode(file, header, line.node, `line ${i + 1}`);
      continue;
    }
    const { node, ...partition } = line.line;
    counts[partition.verdict]++;
    partitions.push(partition);
    if (node !== undefined) entries.push(node);
  }
  checkCounts(file, counts, header.summary);
  const report: JsonScanReport = { ...header, partitions };
  if (header.node !== undefined) {
    report.node = { ...header.node, partitions: [...entries, ...header.node.partitions].sort((a, b) => comparePaths(a.path, b.path)) };
  } else if (entries.length > 0) {
    throw notAReport(file, "its partition lines carry node entries but no line holds the node section");
  }
  // Key order as `scan --json` writes it, so the page drawn from it is the same.
  const { segscan, engine, verdict, options, summary, node } = report;
  const ordered = { segscan, engine, verdict, options, partitions, summary, ...(node === undefined ? {} : { node }) };
  const problems = validateJsonReport(ordered);
  if (problems.length > 0) throw notAReport(file, problems);
  return ordered as JsonScanReport;
}

/** Whether a text is an `--ndjson` report rather than one `--json` value: its first line is a JSON object without `partitions`. */
export function looksLikeNdjson(text: string): boolean {
  const newline = text.indexOf("\n");
  return newline >= 0 && isNdjsonFirstLine(text.slice(0, newline));
}
