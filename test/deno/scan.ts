// Run by test/deno.test.ts under Deno: import the compiled package, scan, print the JSON report.
import { createEngine, scanPath, toJsonReport } from "../../dist/src/index.js";

// `Deno` is a global under Deno only; the cast keeps `npm run typecheck` (Node types) honest.
const [path, engineKind] = (globalThis as unknown as { Deno: { args: string[] } }).Deno.args;
const engine = await createEngine(engineKind as "wasm" | "ts");
const report = await scanPath(path!, { engine, concurrency: 1 });
console.log(JSON.stringify({ ...toJsonReport(report), summary: { ...toJsonReport(report).summary, elapsedMs: 0 } }));
