/**
 * The shape check of a parsed `scan --json` report (docs/interfaces.md §9.3)
 * against the one schema (report/schema.ts). Loaded on the first
 * `validateJsonReport` call (./json.ts), so printing a report loads no schema.
 */
import type { TSchema } from "@sinclair/typebox";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import type { Severity } from "../domain/node.js";
import { scanVerdict } from "../domain/scan.js";
import type { JsonScanReport } from "./schema.js";
import { NdjsonPartitionLineSchema, NdjsonSummaryLineSchema, REFUSAL_SCHEMAS, RefusalSchema, ScanReportSchema } from "./schema.js";

// ---------------------------------------------------------------------------
// Shape check of a parsed `scan --json` report (docs/interfaces.md §9.3) against the one
// schema (report/schema.ts), for consumers that read a report back and for the
// tests. Strict: every field is type-checked, u64 values are decimal strings
// below 2^64, refusal fields are checked by code, and no object may carry a
// key the contract does not name.

/** `/partitions/0/refusal` → `$.partitions[0].refusal`. */
function jsonPath(pointer: string): string {
  return (
    "$" +
    pointer
      .split("/")
      .slice(1)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, "/").replace(/~0/g, "~")}`))
      .join("")
  );
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The allowed strings when a schema is a union of string literals (an enum), else null. */
function enumLiterals(schema: object): string[] | null {
  if (!("anyOf" in schema)) return null;
  if (!Array.isArray(schema.anyOf)) return null;
  const values = schema.anyOf.map((member: { const?: unknown }) => member.const);
  return values.every((value) => typeof value === "string") ? (values as string[]) : null;
}

/** Problems with one value under a schema, one line per problem, named by JSON path. */
export function schemaProblems(schema: TSchema, value: unknown, at: string): string[] {
  const problems: string[] = [];
  // One problem per field: a value can break several keywords (pattern and format, required and type).
  const reported = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    const path = at + jsonPath(error.path).slice(1);
    if (reported.has(path)) continue;
    reported.add(path);
    const target = error.value;
    // A union of refusals says only "no member matched": check against the member its code names.
    if (error.schema === RefusalSchema) {
      if (isObject(target) && typeof target.code === "string" && Object.hasOwn(REFUSAL_SCHEMAS, target.code)) {
        problems.push(...schemaProblems(REFUSAL_SCHEMAS[target.code as keyof typeof REFUSAL_SCHEMAS], target, path));
      } else {
        problems.push(`${path}: expected a refusal with a known code, got ${JSON.stringify(target)}`);
      }
      continue;
    }
    // A nullable field (`X | null`) that is not null: report what is wrong with it as an X.
    if (error.type === ValueErrorType.Union && target !== null && "anyOf" in error.schema && Array.isArray(error.schema.anyOf)) {
      const members = (error.schema.anyOf as TSchema[]).filter((member) => member.type !== "null");
      if (members.length === 1 && members.length < error.schema.anyOf.length) {
        problems.push(...schemaProblems(members[0]!, target, path));
        continue;
      }
    }
    if (error.type === ValueErrorType.ObjectAdditionalProperties) {
      problems.push(`${path}: not part of the report contract`);
      continue;
    }
    if (error.type === ValueErrorType.ObjectRequiredProperty) {
      problems.push(`${path}: missing`);
      continue;
    }
    const literals = enumLiterals(error.schema);
    if (literals !== null) {
      problems.push(`${path}: expected one of ${literals.join("|")}, got ${JSON.stringify(target)}`);
      continue;
    }
    problems.push(`${path}: ${error.message}, got ${JSON.stringify(target)}`);
  }
  return problems;
}

/**
 * Deepest nesting of arrays and objects a report may have. A report nests about
 * fewer than 10 levels (report → node → partitions → entry → findings → …); the schema
 * check recurses per level, so a crafted file nested thousands deep would
 * overflow the stack: it is refused by this bound first, with its path.
 */
export const MAX_REPORT_NESTING = 64;

/** How deep `value` nests arrays and objects, counted without recursion, stopping once past `limit`. */
function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: next, depth } = stack.pop()!;
    if (typeof next !== "object" || next === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(next) ? next : Object.values(next)) stack.push({ value: child, depth: depth + 1 });
  }
  return deepest;
}

/**
 * Problems with a parsed JSON value as a docs/interfaces.md §9.3 report: every field's type,
 * enum values, u64 decimal strings, refusal fields by code, no extra keys, and
 * the summary counts against the partitions. Empty when the shape is right.
 */
export function validateJsonReport(value: unknown): string[] {
  if (nestingDepth(value, MAX_REPORT_NESTING) > MAX_REPORT_NESTING) {
    return [`$: nests arrays and objects more than ${MAX_REPORT_NESTING} levels deep (a report nests fewer than 10)`];
  }
  const problems = schemaProblems(ScanReportSchema, value, "$");
  if (problems.length === 0) {
    const report = value as JsonScanReport;
    const { partitions, summary } = report;
    if (summary.partitions !== partitions.length)
      problems.push(`$.summary.partitions: ${summary.partitions} but ${partitions.length} partitions`);
    for (const verdict of ["clean", "repairable", "refused", "failed"] as const) {
      const count = partitions.filter((partition) => partition.verdict === verdict).length;
      if (summary[verdict] !== count) problems.push(`$.summary.${verdict}: ${summary[verdict]} but ${count} partitions are ${verdict}`);
    }
    const findings = { warn: 0, failed: 0 };
    for (const partition of partitions) for (const finding of partition.findings) findings[finding.severity]++;
    for (const severity of ["warn", "failed"] as const) {
      if (summary.findings[severity] !== findings[severity])
        problems.push(`$.summary.findings.${severity}: ${summary.findings[severity]} but the partitions hold ${findings[severity]}`);
    }
    // The node schema checked the node verdict is one of the six severities.
    // From the partitions themselves, so a wrong summary count is named once (above), not twice.
    const counted = {
      failed: partitions.filter((p) => p.verdict === "failed").length,
      refused: partitions.filter((p) => p.verdict === "refused").length,
      repairable: partitions.filter((p) => p.verdict === "repairable").length,
      findings,
    };
    if (report.node !== undefined && report.nodes !== undefined)
      problems.push("$.nodes: beside $.node (one node root is `node`, several are `nodes`)");
    const verdict = scanVerdict({
      summary: counted,
      node: report.node === undefined ? undefined : { verdict: report.node.verdict as Severity },
      nodes: report.nodes?.map((node) => ({ verdict: node.verdict as Severity })),
    });
    if (report.verdict !== verdict) problems.push(`$.verdict: ${report.verdict} but the partitions and the node make ${verdict}`);
  }
  return problems;
}

/**
 * Problems with the parsed lines of a `scan --ndjson` report (docs/interfaces.md
 * §9.3): every line but the last a `type: "partition"` line, the last the
 * `type: "summary"` line, each checked against its schema, and the lines
 * together against the `--json` report's rules (counts, verdict). Empty when right.
 */
export function validateNdjsonReport(lines: readonly unknown[]): string[] {
  if (lines.length === 0) return ["no line: the last line is the summary"];
  const problems: string[] = [];
  for (const [index, line] of lines.slice(0, -1).entries()) {
    problems.push(...schemaProblems(NdjsonPartitionLineSchema, line, `line ${index + 1}: $`));
  }
  problems.push(...schemaProblems(NdjsonSummaryLineSchema, lines.at(-1), `line ${lines.length}: $`));
  if (problems.length > 0) return problems;
  // Together they are the --json report, each partition's node entry moved back into its node's section.
  const partitions = lines.slice(0, -1).map((line) => {
    const { type: _type, node: _node, ...partition } = line as Record<string, unknown>;
    return partition;
  });
  const { type: _type, ...summary } = lines.at(-1) as Record<string, unknown>;
  return validateJsonReport({ ...summary, partitions }).map((problem) => problem.replace(/^\$/, "lines"));
}
