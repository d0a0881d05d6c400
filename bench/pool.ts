/**
 * Worker-pool speed-up (docs/engines.md §7): a deep scan of 64 partitions sequentially
 * and on a pool of 2, for both engines, median of 5 interleaved rounds.
 * `node dist/bench/pool.js` — data is generated once under the bench cache.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createEngine } from "../src/engine/index.js";
import { generateDataDir } from "../src/gen/index.js";
import { scanPath } from "../src/node/scan-path.js";
import { cacheRoot } from "./data.js";

/** 8 topics × 8 partitions × 2 segments of 12 MiB: ≈ 1.6 GiB, enough to amortise worker start-up. */
const POOL_DATA_VERSION = "pool-v1";
const ROUNDS = 5;

async function main(): Promise<void> {
  const dir = join(cacheRoot(), POOL_DATA_VERSION);
  if (!existsSync(dir)) {
    console.error(`bench pool: generating 64 partitions into ${dir}…`);
    await generateDataDir(dir, {
      streams: 1,
      topicsPerStream: 8,
      partitionsPerTopic: 8,
      segmentsPerPartition: 2,
      segmentBytes: 12 * 1024 * 1024,
      flushBytes: 1024 * 1024,
      force: true,
    });
  }
  for (const kind of ["wasm", "ts"] as const) {
    const engine = await createEngine(kind);
    const times: Record<1 | 2, number[]> = { 1: [], 2: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const concurrency of [1, 2] as const) {
        const startedAt = performance.now();
        await scanPath(dir, { engine, verify: "full", concurrency, io: "blocking" }); // workers always read blocking: compare like with like
        times[concurrency].push(performance.now() - startedAt);
      }
    }
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const sequential = median(times[1]);
    const pooled = median(times[2]);
    console.log(
      `${kind}: deep scan of 64 partitions: sequential ${sequential.toFixed(0)} ms, pool of 2 ${pooled.toFixed(0)} ms, speed-up ${(sequential / pooled).toFixed(2)}×`,
    );
  }
}

await main();
