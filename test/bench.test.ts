/**
 * Smoke test of the benchmark suite (docs/benchmarks.md §10) in --quick mode: every task runs,
 * every row has the documented shape and a reference row, every scan reached
 * the answer its data set must give (no WARNING notes), and --json prints the
 * rows. Timings are machine-dependent and never asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchRow, runBench } from "../bench/run.js";

let cache: string;
let previousCache: string | undefined;

beforeAll(async () => {
  cache = await mkdtemp(join(tmpdir(), "segscan-bench-test-"));
  previousCache = process.env["SEGSCAN_BENCH_CACHE"];
  process.env["SEGSCAN_BENCH_CACHE"] = cache;
});
afterAll(async () => {
  if (previousCache === undefined) delete process.env["SEGSCAN_BENCH_CACHE"];
  else process.env["SEGSCAN_BENCH_CACHE"] = previousCache;
  await rm(cache, { recursive: true, force: true });
});

describe("bench --quick", () => {
  it("prints the rows as JSON, one reference row per task, and no unexpected scan report", async () => {
    const output: string[] = [];
    const progress: string[] = [];
    const rows = await runBench({ json: true, quick: true, log: (line) => output.push(line), progress: (line) => progress.push(line) });

    expect(JSON.parse(output.join("\n"))).toEqual(rows);
    expect(progress.filter((line) => line.includes("WARNING"))).toEqual([]);
    const tasks = new Map<string, BenchRow[]>();
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(["bytesPerOp", "engine", "mbPerSec", "ratio", "reference", "task"]);
      expect(row.bytesPerOp).toBeGreaterThan(0);
      expect(row.mbPerSec).toBeGreaterThan(0);
      expect(row.ratio).toBeGreaterThan(0);
      tasks.set(row.task, [...(tasks.get(row.task) ?? []), row]);
    }
    expect([...tasks.keys()]).toEqual([
      "xxh3-64 16MiB",
      "xxh3-64 1024×1KiB",
      "deep-verify 16MiB",
      "probe zeros 16MiB",
      "probe random 16MiB",
      "probe crafted 16MiB",
      "wal verify 16MiB",
      "wal probe 16MiB",
    ]);
    for (const [task, taskRows] of tasks) {
      const engines = taskRows.map((row) => row.engine);
      expect(engines, task).toEqual(expect.arrayContaining(["wasm", "ts"]));
      const reference = taskRows[0]!.reference;
      expect(
        taskRows.every((row) => row.reference === reference),
        task,
      ).toBe(true);
      const referenceRow = taskRows.find((row) => row.engine === reference);
      expect(referenceRow?.ratio, task).toBe(1);
    }
    expect(tasks.get("deep-verify 16MiB")!.map((row) => row.reference)[0]).toBe("raw-read");
  });

  it("prints a table with the machine line when not in JSON mode", async () => {
    const output: string[] = [];
    await runBench({ json: false, quick: true, log: (line) => output.push(line), progress: () => {} });
    expect(output[0]).toMatch(/^segscan bench — machine: .+, \d+ cores .*Node v\d+/);
    expect(output.some((line) => /^task\s+engine\s+bytes\/op\s+MB\/s\s+ratio/.test(line))).toBe(true);
    expect(output.some((line) => /^deep-verify 16MiB\s+wasm\s+\d+/.test(line))).toBe(true);
  });
});
