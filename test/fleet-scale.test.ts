/**
 * `fleet` on 3 reports of 10,000 partitions each runs in seconds and
 * flat memory. The reports are synthetic `--ndjson` files (schema-valid lines
 * written from a model, ~70 MB in all); the built CLI merges them in a child
 * whose V8 heap is capped far below the reports' size, so a merge that held
 * the reports would fail. Time and peak RSS are printed, not asserted
 * (docs/fleet.md records a measurement).
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FleetReport } from "../src/fleet/index.js";
import { CLI } from "./helpers/cli.js";
import { trackedTempDir } from "./helpers/fixtures.js";
import { type ModelSegment, writeSyntheticNdjson } from "./helpers/fleet-reports.js";

const PARTITIONS = 10_000;
const HEAP_MB = 40;

/** Replica `r`'s partition `i`: three segments; every 97th partition torn on replica 1, every 89th lagging on replica 2, every 1009th damaged everywhere. */
function model(r: number, i: number): ModelSegment[] {
  const segments: ModelSegment[] = [
    { start: 0n, end: 999n, outcome: "clean" },
    { start: 1000n, end: 1999n, outcome: "clean" },
    { start: 2000n, end: 2999n, outcome: "clean" },
  ];
  if (i % 1009 === 5) segments[1] = { start: 1000n, end: 1499n, outcome: "refused", refusal: "InteriorDamage" };
  else if (r === 1 && i % 97 === 3) segments[2] = { start: 2000n, end: 2900n, outcome: "torn-tail" };
  else if (r === 2 && i % 89 === 7) segments[2] = { start: 2000n, end: 2500n, outcome: "clean" };
  return segments;
}

describe("fleet at scale", () => {
  it("3 × 10,000-partition --ndjson reports merge in a child with a 40 MiB heap", async () => {
    const dir = trackedTempDir("segscan-fleet-scale-");
    const files: string[] = [];
    for (let r = 0; r < 3; r++) {
      const file = join(dir, `n${r}.ndjson`);
      await writeSyntheticNdjson(file, `/nodes/n${r}`, PARTITIONS, (i) => model(r, i));
      files.push(file);
    }
    const inputBytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
    // The child reports its own peak RSS when it exits.
    const wrapper = join(dir, "measure.mjs");
    writeFileSync(
      wrapper,
      `const { run } = await import(${JSON.stringify(new URL("../dist/src/cli/program.js", import.meta.url).href)});\n` +
        "const started = performance.now();\nconst code = await run(process.argv);\n" +
        'process.stderr.write("MEASURE " + JSON.stringify({ ms: Math.round(performance.now() - started), maxRssKiB: process.resourceUsage().maxRSS }) + "\\n");\n' +
        "process.exitCode = code;\n",
    );
    expect(CLI).toContain("dist");
    const output = join(dir, "fleet.json");
    const fd = openSync(output, "w");
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, wrapper, "fleet", ...files.map((f, i) => `n${i}=${f}`), "--json"],
      {
        stdio: ["ignore", fd, "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    closeSync(fd);
    expect(stderr).toMatch(/MEASURE/);
    const measure = JSON.parse(/MEASURE (.*)/.exec(stderr)![1]!) as { ms: number; maxRssKiB: number };
    console.log(
      `fleet 3 × ${PARTITIONS} partitions (${(inputBytes / 2 ** 20).toFixed(1)} MiB of NDJSON): ${measure.ms} ms, peak RSS ${(measure.maxRssKiB / 1024).toFixed(1)} MiB (heap capped at ${HEAP_MB} MiB)`,
    );
    expect(code).toBe(4);
    expect(inputBytes).toBeGreaterThan(HEAP_MB * 2 ** 20);
    const fleet = JSON.parse(readFileSync(output, "utf8")) as FleetReport;
    expect(fleet.summary.partitions).toBe(PARTITIONS);
    const expected = { lost: 0, degraded: 0, lagging: 0 };
    for (let i = 0; i < PARTITIONS; i++) {
      if (i % 1009 === 5) expected.lost++;
      else if (i % 97 === 3) expected.degraded++;
      else if (i % 89 === 7) expected.lagging++;
    }
    // Partition keys sort as strings, so the model's index i is not the key order: count by verdict only.
    expect(fleet.summary.lost).toBe(expected.lost);
    expect(fleet.summary.degraded + fleet.summary.lagging).toBe(expected.degraded + expected.lagging);
    expect(BigInt(fleet.summary.lostOffsets)).toBe(BigInt(expected.lost) * 500n);
  }, 120_000);
});
