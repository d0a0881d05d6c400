/**
 * docs/engines.md §7 concurrency: many partitions on a worker pool give the same report,
 * in the same order, as a sequential scan, and a cancelled pooled scan stops
 * its workers. Runs the compiled package (the pool's workers are compiled
 * JavaScript; the global setup builds it). `Worker` is wrapped to count the
 * workers started and exited, so each test proves the pool really ran.
 */
import { truncateSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type * as Segscan from "../src/index.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

const workers = vi.hoisted(() => ({ started: 0, exited: 0 }));

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

const dist = (await import(new URL("../dist/src/index.js", import.meta.url).href)) as typeof Segscan;

/** Sparse zero tail per partition of kind 3: three of them pass the pool's 64 MiB threshold (POOL_MIN_BYTES). */
const SPARSE_TAIL_BYTES = 24 * 1024 * 1024;

function makeDataDir(partitions: number): string {
  const dataDir = tempDataDir();
  for (let p = 1; p <= partitions; p++) {
    const dir = tempPartition(p, dataDir);
    const chain = buildChain({ counts: [5, 6, 7, 8], seed: p });
    const kind = p % 4;
    if (kind === 0) writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 2]));
    if (kind === 1) writeSegment(dir, 0n, concat([chain.log, randomBytes(3000, p)]), indexAt(chain, [0]));
    if (kind === 2) writeSegment(dir, 0n, chain.log);
    if (kind === 3) {
      const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [1]));
      truncateSync(logPath, chain.log.length + SPARSE_TAIL_BYTES);
    }
  }
  return dataDir;
}

afterEach(async () => {
  // Whatever a test started has stopped before the next one counts.
  await vi.waitFor(() => expect(workers.exited).toBe(workers.started), { timeout: 10_000 });
  workers.started = 0;
  workers.exited = 0;
});

describe("worker pool (docs/engines.md §7)", () => {
  for (const engine of ["ts", "wasm"] as const) {
    it(`gives the sequential report in the same order (${engine})`, async () => {
      const dataDir = makeDataDir(12);
      // Blocking io keeps the scan on this thread, where the pool's workers are counted (the default, async io, runs it on the scan thread).
      const options = { engine: await dist.createEngine(engine), io: "blocking" as const };
      const sequential = await dist.scanPath(dataDir, { ...options, concurrency: 1 });
      expect(workers.started).toBe(0);
      const pooled = await dist.scanPath(dataDir, { ...options, concurrency: 2 });
      expect(workers.started).toBe(2);
      expect(pooled.partitions).toEqual(sequential.partitions);
      expect({ ...pooled.summary, elapsedMs: 0 }).toEqual({ ...sequential.summary, elapsedMs: 0 });
      expect(pooled.summary).toMatchObject({ partitions: 12, clean: 3, repairable: 9 });
    });
  }

  it("is cancellable while its workers run: rejects with AbortError and stops every worker", async () => {
    const dataDir = makeDataDir(12);
    const controller = new AbortController();
    let progressEvents = 0;
    const scan = dist.scanPath(dataDir, {
      concurrency: 2,
      io: "blocking",
      signal: controller.signal,
      onProgress: () => {
        // Progress comes from the workers once they scan: cancel then, mid-pool.
        if (++progressEvents === 1) controller.abort();
      },
    });
    await expect(scan).rejects.toMatchObject({ name: "AbortError" });
    expect(progressEvents).toBeGreaterThan(0);
    expect(workers.started).toBe(2);
    await vi.waitFor(() => expect(workers.exited).toBe(2), { timeout: 10_000 });
  });

  it("a signal aborted before the scan rejects without starting a worker", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(dist.scanPath(makeDataDir(12), { concurrency: 2, io: "blocking", signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(workers.started).toBe(0);
  });
});
