/** docs/interfaces.md §9.1: services on Deno import segscan; the wasm loads and a scan gives Node's report. */
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type * as Segscan from "../src/index.js";
import { buildChain, concat, indexAt, tempDataDir, tempPartition, trackedTempDir, writeSegment } from "./helpers/fixtures.js";

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

describe("the README's Deno example", () => {
  it("runs as written from a temp dir outside the checkout, the checkout beside it as ./segscan", async () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const section = readme.slice(readme.indexOf("### Deno"));
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example, "README.md has a ### Deno section with a ts block").toBeDefined();
    const runLine = /^\/\/ (deno run [^\n]*) scan\.ts$/m.exec(example!)?.[1];
    expect(runLine, "the example's first comment says how to run it").toBeDefined();
    const dataDir = tempDataDir();
    const chain = buildChain({ counts: [4, 5, 6] });
    writeSegment(tempPartition(1, dataDir), 0n, concat([chain.log, new Uint8Array(5000)]), indexAt(chain, [0]));
    const outside = trackedTempDir("segscan-deno-readme-");
    const checkout = fileURLToPath(new URL("..", import.meta.url));
    expect(relative(checkout, outside).startsWith("..")).toBe(true);
    symlinkSync(checkout, join(outside, "segscan"));
    writeFileSync(join(outside, "scan.ts"), example!.replace('"/var/lib/iggy"', JSON.stringify(dataDir)));
    const flags = runLine!.split(/\s+/).slice(2); // after "deno run"
    const output = execFileSync(deno, ["run", "--quiet", ...flags, "scan.ts"], {
      cwd: outside,
      encoding: "utf8",
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    });
    const report = JSON.parse(output) as { engine: string; summary: { partitions: number; repairable: number } };
    expect(report.engine).toBe("wasm");
    expect(report.summary).toMatchObject({ partitions: 1, repairable: 1 });
  }, 120_000);
});
