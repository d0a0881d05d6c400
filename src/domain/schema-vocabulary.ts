/**
 * The words every JSON schema of segscan is written in, defined once: the
 * scan report (docs/interfaces.md §9.3), the node section (docs/node.md N9),
 * the repair plan, apply result and journal ops (§9.4, docs/repair.md §6.2),
 * restore's output, dump's documents and the fleet report (docs/fleet.md).
 * It imports TypeBox, so only a schema loads it: a scan never does.
 *
 * - `U64`: a u64 as a decimal string (a JSON number loses integers above
 *   2^53). The pattern bounds it to 20 digits for any JSON Schema validator;
 *   the `u64` format, which segscan's validators check, bounds it to 2^64 - 1.
 * - `U128`: the same for a u128 (a VSR cluster id, docs/node.md N1): at most
 *   39 digits, and below 2^128 by its `u128` format.
 * - `Count`: byte positions, sizes and counts as JSON numbers, at most 2^53 - 1
 *   so that they parse back exactly.
 * - `Text`: any string.
 */
import { FormatRegistry, type TLiteral, type TObject, type TProperties, type TSchema, type TUnion, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SEVERITY_ORDER } from "./node.js";
import { PARTITION_ACTIONS, PARTITION_VERDICTS, TORN_EVIDENCE } from "./scan.js";

const U64_TEXT = /^(0|[1-9][0-9]{0,19})$/;
const U64_LIMIT = 1n << 64n;
FormatRegistry.Set("u64", (value) => U64_TEXT.test(value) && BigInt(value) < U64_LIMIT);
const U128_TEXT = /^(0|[1-9][0-9]{0,38})$/;
const U128_LIMIT = 1n << 128n;
FormatRegistry.Set("u128", (value) => U128_TEXT.test(value) && BigInt(value) < U128_LIMIT);

export const U64 = Type.String({ pattern: U64_TEXT.source, format: "u64", description: "u64 as a decimal string" });
export const U128 = Type.String({ pattern: U128_TEXT.source, format: "u128", description: "u128 as a decimal string" });
export const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
export const Text = Type.String();

/** An object that names every key it may hold (`additionalProperties: false`): a key the contract does not name is an error. */
export const closed = <T extends TProperties>(properties: T, description?: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const literals = <const T extends readonly string[]>(values: T): TUnion<TLiteral<T[number]>[]> =>
  Type.Union(values.map((value) => Type.Literal(value)));

/** docs/recovery.md §5, docs/repair.md §6.1: a partition's verdict and what to do with it. */
export const VerdictSchema = literals(PARTITION_VERDICTS);
export const ActionSchema = literals(PARTITION_ACTIONS);
/** docs/node.md N0: a finding's severity, and a node's or a scan's verdict. */
export const SeveritySchema = literals(SEVERITY_ORDER);
/** docs/recovery.md §3.7: what the bytes at a damage position prove (the torn-tail words follow it). */
export const TornEvidenceSchema: TUnion<TLiteral<(typeof TORN_EVIDENCE)[number]>[]> = Type.Union(
  TORN_EVIDENCE.map((value) => Type.Literal(value)),
  {
    description:
      "zero-filled and short-batch prove the append never completed; complete-batch and unverifiable cannot be told from corruption",
  },
);
export const EngineKindSchema = literals(["wasm", "ts"] as const);

/** The options a scan ran with (docs/interfaces.md §9.3); a repair plan carries them for its re-scans. */
export const scanOptionsFields = {
  verify: literals(["tail", "full"] as const),
  replicaCount: Count,
  probeBudgetUnits: Count,
  windowBytes: Count,
  /** Only when a caller overrode MAX_BATCH_BYTES (docs/format.md §2.2). */
  maxBatchBytes: Type.Optional(Count),
};

/** How much of an offending value a problem quotes: enough to recognise it, never a whole document. */
const FOUND_TEXT_CHARS = 80;

/** The first way `value` breaks `schema`, as `<at><json path>: <what>`, or null when it conforms. */
export function firstSchemaProblem(schema: TSchema, value: unknown, at: string): string | null {
  const error = Value.Errors(schema, value).First();
  if (error === undefined) return null;
  const path = error.path
    .split("/")
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join("");
  const found = error.value === undefined ? "" : ` (found ${JSON.stringify(error.value).slice(0, FOUND_TEXT_CHARS)})`;
  return `${at}${path}: ${error.message}${found}`;
}
