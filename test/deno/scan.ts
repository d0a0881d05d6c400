// Run by test/deno.test.ts under Deno: import the compiled package, scan, print the JSON report.
import { createEngine, scanPath, toJsonReport } from "../../dist/src/index.js";

const [path, engineKind] = Deno.args;
const engine = await createEngine(engineKind as "wasm" | "ts");
const report = await scanPath(path!, { engine, concurrency: 1 });
console.log(JSON.stringify({ ...toJsonReport(report), summary: { ...toJsonReport(report).summary, elapsedMs: 0 } }));
