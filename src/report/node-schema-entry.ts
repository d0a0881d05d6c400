/**
 * The node section's schema as the package entry exports it (docs/interfaces.md
 * §9.1): ./node-schema.ts, and TypeBox under it, load on first use (docs/benchmarks.md),
 * so importing the package loads no schema. `NodeJsonSchema` is the schema
 * object itself once anything reads it (a proxy that loads it on first access).
 */
import { canRequireModules, loadedOnUse, once, requireFrom } from "../io/lazy.js";

type NodeSchemaModule = typeof import("./node-schema.js");
const imported: NodeSchemaModule | null = canRequireModules(import.meta.url) ? null : await import("./node-schema.js");
const load = once((): NodeSchemaModule => imported ?? requireFrom<NodeSchemaModule>(import.meta.url, "./node-schema.js"));

/** Problems with a parsed node section; empty when it matches the schema. */
export function validateNodeJson(value: unknown, at?: string): string[] {
  return load().validateNodeJson(value, at);
}

export const NodeJsonSchema: NodeSchemaModule["NodeJsonSchema"] = loadedOnUse(() => load().NodeJsonSchema);
