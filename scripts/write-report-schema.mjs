// Writes docs/report.schema.json, docs/repair.schema.json, docs/restore.schema.json, docs/fleet.schema.json and
// docs/dump.schema.json from the one definition of each (src/report/schema.ts,
// src/report/repair-json.ts, src/fleet/schema.ts, src/report/dump-schema.ts,
// compiled to dist/ by `npm run schema`). test/report-schema.test.ts and
// test/repair-schema.test.ts fail when a committed file differs from what this writes.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { repairJsonSchemaText, restoreJsonSchemaText } from "../dist/src/report/repair-json.js";
import { reportJsonSchemaText } from "../dist/src/report/schema.js";
import { fleetJsonSchemaText } from "../dist/src/fleet/schema.js";
import { dumpJsonSchemaText } from "../dist/src/report/dump-schema.js";

for (const [name, text] of [
  ["report.schema.json", reportJsonSchemaText()],
  ["repair.schema.json", repairJsonSchemaText()],
  ["restore.schema.json", restoreJsonSchemaText()],
  ["fleet.schema.json", fleetJsonSchemaText()],
  ["dump.schema.json", dumpJsonSchemaText()],
]) {
  const target = fileURLToPath(new URL(`../docs/${name}`, import.meta.url));
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
