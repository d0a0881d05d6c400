/**
 * The partition load without a promise (docs/benchmarks.md "Breakdown"): it
 * answers the common partition (clean, index-less, empty, refused on its
 * index) with exactly the promise path's report, bytes read and progress,
 * and declines everything else (a residue to probe, a salvage record that may
 * sit beside it, a failing read), which the promise path then reports.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { type BlockingFile, type ReadableFile, type ScanFs, nodeBlockingScanFs, nodeScanFs, withListing } from "../src/io/fs.js";
import { resolveScanOptions } from "../src/recovery/options.js";
import { loadListedPartition, loadPartitionPreloaded, loadPartitionResident } from "../src/recovery/partition.js";
import { scanPath } from "../src/node/scan-path.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, concat, indexAt, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { loadBothWays } from "./helpers/resident.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** A clean partition of two indexed segments. */
function cleanPartition(dataDir = tempDataDir(), partition = 1): string {
  const dir = tempPartition(partition, dataDir);
  const first = buildChain({ counts: [3, 4, 5, 1] });
  const second = buildChain({ counts: [2, 2], startOffset: 13n, seed: 2 });
  writeSegment(dir, 0n, first.log, indexAt(first, [0, 2]));
  writeSegment(dir, 13n, second.log, indexAt(second, [0]));
  return dir;
}

describe("the resident load answers the common partition as the promise path does", () => {
  it("a clean indexed chain, tail and deep mode, every engine", async () => {
    const dir = cleanPartition();
    for (const engine of engines) {
      for (const verify of ["tail", "full"] as const) {
        const { resident, promise } = await loadBothWays(dir, engine, { verify });
        expect(resident, `${engine.kind} ${verify}`).not.toBeNull();
        expect(promise.verdict).toBe("clean");
        expect(promise.bytesScanned).toBeGreaterThan(0);
      }
    }
  });

  it("a segment with no index is walked whole and its index rebuilt", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [2, 3, 4] });
    writeSegment(dir, 0n, chain.log);
    for (const engine of engines) {
      const { resident, promise } = await loadBothWays(dir, engine);
      expect(resident).not.toBeNull();
      expect(promise.segments[0]).toMatchObject({ arm: "index-less", outcome: "clean" });
      expect(promise.verdict).toBe("repairable");
    }
  });

  it("an index whose last entry lies past the log refuses SizeDivergence, with nothing read", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [2, 3] });
    writeSegment(dir, 0n, chain.log, [...indexAt(chain, [0]), { offset: 9n, timestamp: 0n, position: BigInt(chain.log.length + 10) }]);
    for (const engine of engines) {
      const { resident, promise } = await loadBothWays(dir, engine);
      expect(resident).not.toBeNull();
      expect(promise.refusal?.code).toBe("SizeDivergence");
      expect(promise.bytesScanned).toBe(0);
    }
  });
});

describe("the resident load declines, and the promise path reports", () => {
  it("a torn tail (its residue needs the probe)", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(dir, 0n, concat([chain.log, new Uint8Array(4096)]), indexAt(chain, [0]));
    for (const engine of engines) {
      const { resident, promise } = await loadBothWays(dir, engine);
      expect(resident).toBeNull();
      expect(promise.segments[0]?.outcome).toBe("torn-tail");
    }
  });

  it("a last index entry less than a batch header before the log's end (the promise path reads nothing there)", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const lastEntry = { offset: 3n, timestamp: 0n, position: BigInt(chain.log.length - 100) };
    writeSegment(dir, 0n, chain.log, [...indexAt(chain, [0]), lastEntry]);
    for (const engine of engines) {
      const { resident, promise } = await loadBothWays(dir, engine);
      expect(resident).toBeNull();
      expect(promise.refusal?.code).toBe("SizeDivergence");
      expect(promise.bytesScanned).toBe(0);
    }
  });

  it("a partition whose parent was not listed (a salvage record may sit beside it)", async () => {
    const dir = cleanPartition();
    const engine = engines[0]!;
    const context = { engine, scanFs: nodeBlockingScanFs, options: resolveScanOptions({ engine, io: "blocking" }) };
    const entries = await nodeBlockingScanFs.list(dir);
    expect(loadPartitionResident(dir, context, entries, undefined)).toBeNull();
    expect(loadPartitionResident(dir, context, entries, false)).not.toBeNull();
  });

  it("a read that fails: the partition fails ReadFailure, as through the promise layer", async () => {
    const dir = cleanPartition();
    const failing = (path: string): BlockingFile => {
      const file = nodeBlockingScanFs.openBlocking!(path);
      const fail = (): never => {
        throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
      };
      return {
        size: file.size,
        readBlocking: path.endsWith(".log") ? fail : (target, position) => file.readBlocking(target, position),
        closeBlocking: () => file.closeBlocking(),
        read: async (target, position) => (path.endsWith(".log") ? fail() : file.read(target, position)),
        close: () => file.close(),
      };
    };
    const scanFs: ScanFs = { ...nodeBlockingScanFs, open: async (path) => failing(path), openBlocking: failing };
    const engine = engines[0]!;
    const context = { engine, scanFs, options: resolveScanOptions({ engine, io: "blocking" }) };
    const entries = await nodeBlockingScanFs.list(dir);
    expect(loadPartitionResident(dir, context, entries, false)).toBeNull();
    const { report } = await loadListedPartition(dir, context, false, entries, false);
    expect(report.verdict).toBe("failed");
    expect(report.error?.code).toBe("ReadFailure");
  });
});

describe("a layer spread from the blocking one", () => {
  it("with an open of its own: the resident load declines, so that open is the one used", async () => {
    const dir = cleanPartition();
    const engine = engines[0]!;
    const denied = (): Promise<never> => Promise.reject(Object.assign(new Error("EACCES: permission denied, open"), { code: "EACCES" }));
    const scanFs: ScanFs = { ...nodeBlockingScanFs, open: denied };
    const context = { engine, scanFs, options: resolveScanOptions({ engine, io: "blocking" }) };
    const entries = await nodeBlockingScanFs.list(dir);
    expect(loadPartitionResident(dir, context, entries, false)).toBeNull();
    const { report } = await loadListedPartition(dir, context, false, entries, false);
    expect(report.error?.code).toBe("OpenFailure");
  });
});

describe("a layer spread from the async one", () => {
  it("with an open of its own: the preloaded load declines, so that open is the one used", async () => {
    const dir = cleanPartition();
    const engine = engines[0]!;
    const denied = (): Promise<never> => Promise.reject(Object.assign(new Error("EACCES: permission denied, open"), { code: "EACCES" }));
    const scanFs: ScanFs = { ...nodeScanFs, open: denied };
    const context = { engine, scanFs, options: resolveScanOptions({ engine, io: "async" }) };
    const entries = await nodeScanFs.list(dir);
    expect(await loadPartitionPreloaded(dir, context, entries, false)).toBeNull();
    const { report } = await loadListedPartition(dir, context, false, entries, false);
    expect(report.error?.code).toBe("OpenFailure");
  });

  it("unchanged: the preloaded load answers (a wrapping layer keeps it)", async () => {
    const dir = cleanPartition();
    const engine = engines[0]!;
    const context = { engine, scanFs: withListing(nodeScanFs, dir, new Set()), options: resolveScanOptions({ engine, io: "async" }) };
    const entries = await nodeScanFs.list(dir);
    expect(await loadPartitionPreloaded(dir, context, entries, false)).not.toBeNull();
  });

  it("a read that fails declines, and the promise path reports ReadFailure", async () => {
    const dir = cleanPartition();
    const failingRead = async (path: string): Promise<ReadableFile> => {
      const file = await nodeScanFs.open(path);
      return {
        size: file.size,
        read: async (target, position) => {
          if (path.endsWith(".log")) throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
          return file.read(target, position);
        },
        close: () => file.close(),
      };
    };
    const scanFs: ScanFs = { ...nodeScanFs, openRetryable: failingRead, open: failingRead };
    const engine = engines[0]!;
    const context = { engine, scanFs, options: resolveScanOptions({ engine, io: "async" }) };
    const entries = await nodeScanFs.list(dir);
    expect(await loadPartitionPreloaded(dir, context, entries, false)).toBeNull();
    const { report } = await loadListedPartition(dir, context, false, entries, false);
    expect(report.error?.code).toBe("ReadFailure");
  });
});

describe("a scan of a data dir", () => {
  it("gives the same report with blocking io (resident loads) and async io", async () => {
    const dataDir = tempDataDir();
    for (let p = 1; p <= 5; p++) cleanPartition(dataDir, p);
    const torn = tempPartition(6, dataDir);
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(torn, 0n, concat([chain.log, new Uint8Array(300)]), indexAt(chain, [0]));
    for (const engine of engines) {
      for (const verify of ["tail", "full"] as const) {
        const blocking = await scanPath(dataDir, { engine, verify, io: "blocking" });
        const async = await scanPath(dataDir, { engine, verify, io: "async" });
        expect(blocking.partitions).toEqual(async.partitions);
        expect(blocking.partitions.map((partition) => partition.verdict)).toEqual([...Array(5).fill("clean"), "repairable"]);
      }
    }
  });
});
