/**
 * The package's second entry, `segscan/schemas` (docs/interfaces.md §9.1): the
 * JSON Schemas of its machine outputs as TypeBox objects. Apart from the main
 * entry so that importing `segscan` loads no TypeBox (docs/benchmarks.md
 * "Cold code"); the validators stay in the main entry and load it on first use.
 */
export { NdjsonPartitionLineSchema, NdjsonSummaryLineSchema, ScanReportSchema } from "./report/schema.js";
export { NodeJsonSchema } from "./report/node-schema.js";
export { FleetReportSchema } from "./fleet/schema.js";
