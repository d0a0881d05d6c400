/**
 * The library default (async io) runs on the scan thread with blocking reads
 * (src/node/placement.ts chooses it, src/node/threads.ts runs it). Run against the BUILT package:
 * from the TypeScript sources there is no thread to start, so every scan stays
 * on the caller's thread. Each report must equal the one `io: "blocking"` makes
 * on the caller's thread, for both modes, both engines and a small window;
 * progress, the AbortSignal, errors, a custom ScanFs and an early exit from
 * `scanIter` behave as on the caller's thread.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PartitionReport, ScanReport } from "../src/domain/scan.js";
import { CLI } from "./helpers/cli.js";

type Segscan = typeof import("../src/index.js");
type Placement = typeof import("../src/node/placement.js");

const DIST = fileURLToPath(new URL("../dist/src/", import.meta.url));
let segscan: Segscan;
let placement: Placement;
let dir: string;
let nodeRoot: string;
let plain: string;

const SCENARIOS = ["torn-tail", "zero-tail", "payload-bitflip", "lost-index", "scratch-files", "forward-gap", "buried-bitflip", "hole"];

beforeAll(async () => {
  segscan = (await import(pathToFileURL(join(DIST, "index.js")).href)) as Segscan;
  placement = (await import(pathToFileURL(join(DIST, "node/placement.js")).href)) as Placement;
  dir = mkdtempSync(join(tmpdir(), "segscan-scan-thread-"));
  nodeRoot = join(dir, "node");
  plain = join(dir, "plain");
  const scenarios = SCENARIOS.flatMap((name) => ["--scenario", name]);
  for (const [target, extra] of [
    [nodeRoot, ["--node", "--partitions", "10"]],
    [plain, ["--partitions", "5", "--topics", "2"]],
  ] as const) {
    const gen = spawnSync(process.execPath, [CLI, "gen", target, "--size", "tiny", ...scenarios, ...extra], { encoding: "utf8" });
    expect(gen.stderr).toBe("");
    expect(gen.status).toBe(0);
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const jsonText = (value: unknown): string => JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item));

/** A report without its timing, which differs run to run. */
function timeless(report: ScanReport): ScanReport {
  return { ...report, summary: { ...report.summary, elapsedMs: 0 } };
}

describe("the library default scans on the scan thread, and its reports are the blocking ones (docs/engines.md §7.6)", () => {
  it("is used for async io with the real filesystem and this package's engines only", async () => {
    const engine = await segscan.createEngine("ts");
    const place = (options: Parameters<Placement["placeScan"]>[0], io: "async" | "blocking", scanFs?: typeof segscan.nodeScanFs) =>
      placement.placeScan(options, { io }, scanFs);
    expect(place({}, "async")).toEqual({ where: "scan-thread", options: {} });
    expect(place({ engine, verify: "full" }, "async")).toEqual({ where: "scan-thread", options: { engine: "ts", verify: "full" } });
    expect(place({}, "blocking")).toEqual({ where: "caller" });
    expect(place({}, "async", segscan.nodeScanFs)).toEqual({ where: "caller" });
    expect(place({ engine: { ...engine } }, "async")).toEqual({ where: "caller" });
  });

  for (const verify of ["tail", "full"] as const) {
    for (const engineKind of ["wasm", "ts"] as const) {
      for (const windowBytes of [undefined, 4096]) {
        it(`scanPath ${verify}, ${engineKind}, window ${windowBytes ?? "default"}: node root and plain data dir`, async () => {
          for (const root of [nodeRoot, plain]) {
            const options = { verify, engine: engineKind, concurrency: 1, ...(windowBytes === undefined ? {} : { windowBytes }) };
            const blocking = await segscan.scanPath(root, { ...options, io: "blocking" });
            const asyncDefault = await segscan.scanPath(root, options);
            expect(blocking.summary.partitions).toBeGreaterThan(8);
            expect(timeless(asyncDefault)).toEqual(timeless(blocking));
            // Key order too: a caller's JSON.stringify of the report gives the same text.
            expect(jsonText(timeless(asyncDefault))).toBe(jsonText(timeless(blocking)));
          }
        });
      }
    }
  }

  it("scanPartition runs there too: the same report for every partition, tail and deep", async () => {
    const report = await segscan.scanPath(plain, { io: "blocking", concurrency: 1 });
    for (const partition of report.partitions.slice(0, 6)) {
      for (const verify of ["tail", "full"] as const) {
        const blocking = await segscan.scanPartition(partition.path, { verify, io: "blocking" });
        const asyncDefault = await segscan.scanPartition(partition.path, { verify });
        expect(timeless(asyncDefault)).toEqual(timeless(blocking));
      }
    }
    const notPartition = await segscan.scanPartition(plain).catch((error: unknown) => error);
    expect(notPartition).toBeInstanceOf(TypeError);
    expect((notPartition as Error).message).toBe(
      ((await segscan.scanPartition(plain, { io: "blocking" }).catch((error: unknown) => error)) as Error).message,
    );
  });

  it("scanIter streams the same partitions and returns the same summary", async () => {
    for (const root of [nodeRoot, plain]) {
      const collect = async (
        iterator: AsyncGenerator<PartitionReport, unknown>,
      ): Promise<{ partitions: PartitionReport[]; summary: unknown }> => {
        const partitions: PartitionReport[] = [];
        for (let next = await iterator.next(); ; next = await iterator.next()) {
          if (next.done) return { partitions, summary: { ...(next.value as object), elapsedMs: 0 } };
          partitions.push(next.value);
        }
      };
      const blocking = await collect(segscan.scanIter(root, { io: "blocking", concurrency: 1 }));
      const asyncDefault = await collect(segscan.scanIter(root, { concurrency: 1 }));
      expect(asyncDefault).toEqual(blocking);
    }
  });

  it("a scanIter loop left early stops the thread's scan, and the next scan runs", async () => {
    let seen = 0;
    for await (const _partition of segscan.scanIter(plain, { concurrency: 1 })) {
      seen++;
      if (seen === 2) break;
    }
    expect(seen).toBe(2);
    const report = await segscan.scanPath(plain, { concurrency: 1 });
    expect(report.summary.partitions).toBe(10);
  });

  it("relays progress: the same events as on the caller's thread", async () => {
    const events = async (io: "async" | "blocking"): Promise<string[]> => {
      const seen: string[] = [];
      await segscan.scanPath(plain, { io, concurrency: 1, onProgress: (event) => seen.push(JSON.stringify(event)) });
      return seen;
    };
    const blocking = await events("blocking");
    expect(blocking.length).toBeGreaterThan(10);
    expect(await events("async")).toEqual(blocking);
  });

  it("an AbortSignal cancels with the caller's abort error; an aborted signal rejects before anything is scanned", async () => {
    const reason = Object.assign(new Error("stop now"), { name: "AbortError" });
    const aborted = AbortSignal.abort(reason);
    await expect(segscan.scanPath(plain, { signal: aborted })).rejects.toBe(reason);
    const controller = new AbortController();
    const scan = segscan.scanPath(nodeRoot, {
      signal: controller.signal,
      concurrency: 1,
      onProgress: () => controller.abort(reason),
    });
    await expect(scan).rejects.toBe(reason);
    const iterate = async (): Promise<void> => {
      const later = new AbortController();
      for await (const _partition of segscan.scanIter(plain, { signal: later.signal, concurrency: 1 })) later.abort();
    };
    await expect(iterate()).rejects.toMatchObject({ name: "AbortError" });
  });

  it("errors come back with their class and message", async () => {
    const log = join(dir, "not-a-log.txt");
    spawnSync(process.execPath, ["-e", `require("node:fs").writeFileSync(${JSON.stringify(log)}, "x")`]);
    const onThread = await segscan.scanPath(log).catch((error: unknown) => error);
    const inThread = await segscan.scanPath(log, { io: "blocking" }).catch((error: unknown) => error);
    expect(onThread).toBeInstanceOf(TypeError);
    expect((onThread as Error).message).toBe((inThread as Error).message);
    const iterated = await (async () => {
      for await (const _partition of segscan.scanIter(log)) void _partition;
    })().catch((error: unknown) => error);
    expect(iterated).toBeInstanceOf(TypeError);
    // A missing path is a failed partition, not an error, on both.
    const missing = join(dir, "missing");
    expect(timeless(await segscan.scanPath(missing))).toEqual(timeless(await segscan.scanPath(missing, { io: "blocking" })));
  });

  it("a process started with heap flags (a Worker refuses them in execArgv) scans on the thread, capped like the process", async () => {
    // The thread reports its own heap cap: --max-old-space-size=64 becomes its resource limit.
    const script = `
      const segscan = await import(${JSON.stringify(pathToFileURL(join(DIST, "index.js")).href)});
      const report = await segscan.scanPath(${JSON.stringify(nodeRoot)});
      const { Worker } = await import("node:worker_threads");
      const { workerOptions } = await import(${JSON.stringify(pathToFileURL(join(DIST, "node/threads.js")).href)});
      const limit = await new Promise((resolve, reject) => {
        const probe = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)", { ...workerOptions(), eval: true });
        probe.once("message", resolve);
        probe.once("error", reject);
      });
      console.log(JSON.stringify({ summary: { ...report.summary, elapsedMs: 0 }, partitions: report.partitions.length, threadLimitMiB: Math.round(limit / 2 ** 20), options: workerOptions() }));
    `;
    const run = spawnSync(process.execPath, ["--max-old-space-size=64", "--max-semi-space-size=2", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout) as {
      summary: unknown;
      partitions: number;
      threadLimitMiB: number;
      options: { execArgv: string[] };
    };
    expect(result.partitions).toBe(10);
    expect(result.summary).toEqual(JSON.parse(JSON.stringify(timeless(await segscan.scanPath(nodeRoot, { io: "blocking" })).summary)));
    expect(result.options.execArgv).toEqual([]);
    // V8's limit is the old generation cap plus the young generation: far below the default of ≥ 2 GiB.
    expect(result.threadLimitMiB).toBeLessThan(128);
  });

  it("a custom ScanFs or engine stays on the caller's thread", async () => {
    const calls: string[] = [];
    const counting = {
      ...segscan.nodeScanFs,
      list: (path: string) => {
        calls.push(path);
        return segscan.nodeScanFs.list(path);
      },
    };
    const report = await segscan.scanPath(nodeRoot, { concurrency: 1, engine: "ts" }, counting);
    expect(calls.length).toBeGreaterThan(10);
    const engine = await segscan.createEngine("ts");
    const hashed: number[] = [];
    const custom = {
      ...engine,
      xxh3_64: (bytes: Uint8Array) => {
        hashed.push(bytes.length);
        return engine.xxh3_64(bytes);
      },
    };
    const withCustom = await segscan.scanPath(nodeRoot, { concurrency: 1, engine: custom });
    // The metadata superblock was hashed with the caller's engine, on the caller's thread.
    expect(hashed.length).toBeGreaterThan(0);
    expect(timeless(withCustom)).toEqual(timeless(report));
  });
});
