/**
 * docs/interfaces.md §9.4: the one `repair --json` shape, dry run and apply
 * alike: `{ report, plan, applied, after }` — the scan report the plan came
 * from, the plan (docs/repair.md §6.2), what `--apply` did (null on a dry run)
 * and the re-scan after it (null on a dry run). `docs/repair.schema.json` is
 * generated from it (`npm run schema`).
 */
import type { Static } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { ApplyResultSchema, RepairPlanSchema, RestoreJsonSchema } from "../repair/schema.js";
import { schemaProblems, validateJsonReport } from "./json-validate.js";
import { ScanReportSchema } from "./schema.js";

export const RepairJsonSchema = Type.Object(
  {
    report: ScanReportSchema,
    plan: RepairPlanSchema,
    applied: Type.Union([ApplyResultSchema, Type.Null()]),
    after: Type.Union([ScanReportSchema, Type.Null()]),
  },
  { additionalProperties: false, description: "segscan repair --json (docs/interfaces.md §9.4)" },
);

export type JsonRepairOutput = Static<typeof RepairJsonSchema>;

/** Problems of a `repair --json` document against the schema (empty: valid), with the reports' own consistency checks. */
export function validateRepairJson(value: unknown): string[] {
  const problems = schemaProblems(RepairJsonSchema, value, "$");
  if (problems.length > 0) return problems;
  const output = value as JsonRepairOutput;
  problems.push(...validateJsonReport(output.report).map((p) => p.replace(/^\$/, "$.report")));
  if (output.after !== null) problems.push(...validateJsonReport(output.after).map((p) => p.replace(/^\$/, "$.after")));
  if ((output.applied === null) !== (output.after === null))
    problems.push("$.applied and $.after: both null (dry run) or both set (apply)");
  return problems;
}

/** `docs/repair.schema.json`: the repair output schema as JSON Schema (draft 2020-12) text. */
export function repairJsonSchemaText(): string {
  const document = { $schema: "https://json-schema.org/draft/2020-12/schema", title: "segscan repair --json", ...RepairJsonSchema };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** Problems of a `restore --json` document against its schema (empty: valid). */
export function validateRestoreJson(value: unknown): string[] {
  return schemaProblems(RestoreJsonSchema, value, "$");
}

/** `docs/restore.schema.json`: the restore output schema as JSON Schema (draft 2020-12) text. */
export function restoreJsonSchemaText(): string {
  const document = { $schema: "https://json-schema.org/draft/2020-12/schema", title: "segscan restore --json", ...RestoreJsonSchema };
  return `${JSON.stringify(document, null, 2)}\n`;
}
