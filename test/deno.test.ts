/** docs/interfaces.md §9.1: services on Deno import segscan; the wasm loads and a scan gives Node's report. */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type * as Segscan from "../src/index.js";
import { buildChain, concat, indexAt, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

const dist = (await import(new URL("../dist/src/index.js", import.meta.url).href)) as typeof Segscan;
const deno = fileURLToPath(new URL("../node_modules/.bin/deno", import.meta.url));
const script = fileURLToPath(new URL("./deno/scan.ts", import.meta.url));

describe("Deno", () => {
  for (const engine of ["wasm", "ts"] as const) {
    it(`scans under Deno with the ${engine} engine and matches Node`, async () => {
      const dataDir = tempDataDir();
      const chain = buildChain({ counts: [4, 5, 6] });
      writeSegment(tempPartition(1, dataDir), 0n, concat([chain.log, new Uint8Array(5000)]), indexAt(chain, [0]));
      writeSegment(tempPartition(2, dataDir), 0n, chain.log);
      const output = execFileSync(deno, ["run", "--quiet", "--allow-read", "--allow-env", "--allow-sys", script, dataDir, engine], {
        encoding: "utf8",
        env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      });
      const fromDeno = JSON.parse(output);
      const fromNode = dist.toJsonReport(await dist.scanPath(dataDir, { engine: await dist.createEngine(engine), concurrency: 1 }));
      expect(fromDeno).toEqual(JSON.parse(JSON.stringify({ ...fromNode, summary: { ...fromNode.summary, elapsedMs: 0 } })));
      expect(fromDeno.engine).toBe(engine);
      expect(fromDeno.summary.repairable).toBe(2);
    }, 120_000);
  }
});
