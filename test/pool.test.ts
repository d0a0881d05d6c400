/**
 * docs/engines.md §7 concurrency: many partitions on a worker pool give the same report,
 * in the same order, as a sequential scan. Runs the compiled package (the
 * pool's workers are compiled JavaScript), which `npm test` builds first.
 */
import { truncateSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type * as Segscan from "../src/index.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

const dist = (await import(new URL("../dist/src/index.js", import.meta.url).href)) as typeof Segscan;

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
      truncateSync(logPath, chain.log.length + 24 * 1024 * 1024); // pushes the total past POOL_MIN_BYTES
    }
  }
  return dataDir;
}

describe("worker pool (docs/engines.md §7)", () => {
  for (const engine of ["ts", "wasm"] as const) {
    it(`gives the sequential report in the same order (${engine})`, async () => {
      const dataDir = makeDataDir(12);
      const options = { engine: await dist.createEngine(engine) };
      const sequential = await dist.scanPath(dataDir, { ...options, concurrency: 1 });
      const pooled = await dist.scanPath(dataDir, { ...options, concurrency: 2 });
      expect(pooled.partitions).toEqual(sequential.partitions);
      expect({ ...pooled.summary, elapsedMs: 0 }).toEqual({ ...sequential.summary, elapsedMs: 0 });
      expect(pooled.summary).toMatchObject({ partitions: 12, clean: 3, repairable: 9 });
    });
  }

  it("is cancellable", async () => {
    const dataDir = makeDataDir(8);
    const controller = new AbortController();
    controller.abort();
    await expect(dist.scanPath(dataDir, { concurrency: 2, signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
  });
});
