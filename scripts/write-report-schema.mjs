// Writes docs/report.schema.json from the one report schema (src/report/schema.ts,
// compiled to dist/ by `npm run schema`). test/report-schema.test.ts fails when
// the committed file differs from what this writes.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { reportJsonSchemaText } from "../dist/src/report/schema.js";

const target = fileURLToPath(new URL("../docs/report.schema.json", import.meta.url));
writeFileSync(target, reportJsonSchemaText());
console.log(`wrote ${target}`);
