/**
 * Both cores (docs/engines.md §7.5): a scan of large partitions loads on
 * worker threads by default (the CLI's concurrency is the CPU count), through
 * the one protocol of src/node/threads.ts, and its report is the one-thread
 * report in order and content, node section included; many small partitions
 * stay on one thread (measured slower on two). Runs
 * the compiled package (the workers are compiled JavaScript). The decision is
 * checked on its own; the equality on a generated node root, with the
 * decision forced to two threads (a node of a thousand partitions would take
 * minutes to generate on the test machine), both engines, tail and deep.
 * `Worker` is wrapped to count the workers, so each case proves where it ran.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ScanReport } from "../src/domain/scan.js";
import type * as Segscan from "../src/index.js";
import type * as Placement from "../src/node/placement.js";
import { CLI } from "./helpers/cli.js";

const workers = vi.hoisted(() => ({ started: 0, exited: 0, forceThreads: 0 }));

vi.mock("node:worker_threads", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:worker_threads")>();
  class CountingWorker extends actual.Worker {
    constructor(...args: ConstructorParameters<typeof actual.Worker>) {
      super(...args);
      workers.started++;
      this.once("exit", () => {
        workers.exited++;
      });
    }
  }
  return { ...actual, Worker: CountingWorker };
});

// The decision, forced to `forceThreads` when set; otherwise the real one.
vi.mock("../dist/src/node/placement.js", async (importOriginal) => {
  const actual = await importOriginal<typeof Placement>();
  return {
    ...actual,
    loadThreads: async (...args: Parameters<typeof actual.loadThreads>) =>
      workers.forceThreads > 0 ? workers.forceThreads : actual.loadThreads(...args),
  };
});

const dist = (await import(new URL("../dist/src/index.js", import.meta.url).href)) as typeof Segscan;
const placement = (await import(new URL("../dist/src/node/placement.js", import.meta.url).href)) as typeof Placement;

let dir: string;
let nodeRoot: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "segscan-both-cores-"));
  nodeRoot = join(dir, "node");
  const scenarios = ["torn-tail", "hole", "lost-index", "payload-bitflip", "scratch-files", "zero-tail"].flatMap((name) => [
    "--scenario",
    name,
  ]);
  const gen = spawnSync(
    process.execPath,
    [CLI, "gen", nodeRoot, "--node", "--size", "tiny", "--topics", "3", "--partitions", "4", ...scenarios],
    {
      encoding: "utf8",
    },
  );
  expect(gen.stderr).toBe("");
  expect(gen.status).toBe(0);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

afterEach(async () => {
  workers.forceThreads = 0;
  await vi.waitFor(() => expect(workers.exited).toBe(workers.started), { timeout: 10_000 });
  workers.started = 0;
  workers.exited = 0;
});

/** A report without its timing, which differs run to run. */
function timeless(report: ScanReport): ScanReport {
  return { ...report, summary: { ...report.summary, elapsedMs: 0 } };
}

/** A sample of `readable` partitions of `bytesEach` log bytes, all of the scan's targets. */
function sample(readable: number, bytesEach: number): Placement.TargetSample {
  return {
    count: async (upTo) => ({ readable: Math.min(readable, upTo), complete: readable <= upTo }),
    logBytes: async (upTo) => Math.min(readable, upTo) * bytesEach,
  };
}

describe("both cores (docs/engines.md §7.5)", () => {
  it("small partitions stay on one thread whatever their count; large ones go to `concurrency` threads by the bytes rule", async () => {
    const threads = (concurrency: number, readable: number, bytesEach: number, scanFs = dist.nodeBlockingScanFs) =>
      placement.loadThreads({ concurrency }, scanFs, sample(readable, bytesEach));
    const small = 200 * 1024;
    expect(await threads(2, 1024, small)).toBe(1);
    expect(await threads(2, 50_000, small)).toBe(1);
    expect(await threads(2, 2, small)).toBe(1);
    // Large partitions still go by the bytes rule; `concurrency: 1` and a caller's ScanFs never go.
    expect(await threads(2, 3, 64 * 1024 * 1024)).toBe(2);
    expect(await threads(1, 50_000, small)).toBe(1);
    expect(await threads(2, 50_000, small, { ...dist.nodeBlockingScanFs })).toBe(1);
  });

  for (const engine of ["wasm", "ts"] as const) {
    for (const verify of ["tail", "full"] as const) {
      it(`two threads give the one-thread report of a node root, in order and content (${engine}, ${verify})`, async () => {
        const options = { engine, verify, io: "blocking" } as const;
        const one = await dist.scanPath(nodeRoot, { ...options, concurrency: 1 });
        expect(workers.started).toBe(0);
        workers.forceThreads = 2;
        const two = await dist.scanPath(nodeRoot, { ...options, concurrency: 2 });
        expect(workers.started).toBe(2);
        expect(one.partitions.length).toBe(12);
        expect(one.node).toBeDefined();
        expect(timeless(two)).toEqual(timeless(one));
        // Streamed: the same partitions in the same order, and the same summary and node section.
        const streamed = [];
        const iterator = dist.scanIter(nodeRoot, { ...options, concurrency: 2 });
        let next = await iterator.next();
        for (; !next.done; next = await iterator.next()) streamed.push(next.value);
        expect(streamed).toEqual(one.partitions);
        expect({ ...next.value, elapsedMs: 0 }).toEqual({ ...one.summary, elapsedMs: 0, node: one.node });
      });
    }
  }
});
