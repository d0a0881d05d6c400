/**
 * Oversized batches (docs/format.md §2.2): a header that
 * decodes except that batch_length > maxBatchBytes, and that fits the file, is
 * verified by streaming and kept with an `OversizedBatch` warning; the probe
 * treats such a candidate the same way. Every arm, both engines, two window
 * sizes (a 4 KiB window streams the ~11 KiB batch, a 1 MiB one holds it).
 */
import { formatCount } from "../src/domain/numbers.js";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_CHECKSUM_AT, BATCH_HEADER_BYTES, MAX_BATCH_BYTES } from "../src/format/constants.js";
import { writeU32, writeU64 } from "../src/format/bytes.js";
import { encodeBatch } from "../src/format/encode.js";
import type { Engine } from "../src/engine/types.js";
import { nodeScanFs, type ScanFs } from "../src/io/fs.js";
import { scanPartition } from "../src/node/scan-path.js";
import type { ScanOptions } from "../src/recovery/options.js";
import { formatPartition } from "../src/report/format.js";
import { toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import type { PartitionReport, ScanReport } from "../src/domain/scan.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, concat, indexAt, tempPartition, writeSegment } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** A small cap, so a ~11 KiB batch is oversized. */
const SMALL_CAP = 4096;

/** Scans with every engine and two window sizes, asserts the reports agree and the JSON validates, returns one. */
async function scan(dir: string, options: ScanOptions = {}): Promise<PartitionReport> {
  const reports: ScanReport[] = [];
  for (const engine of engines) {
    for (const windowBytes of [4096, 1 << 20]) reports.push(await scanPartition(dir, { ...options, engine, windowBytes }));
  }
  const strip = (report: ScanReport) => ({ ...report.partitions[0]!, bytesScanned: 0 });
  for (const other of reports.slice(1)) expect(strip(other)).toEqual(strip(reports[0]!));
  const json = JSON.parse(JSON.stringify(toJsonReport(reports[0]!)));
  expect(validateJsonReport(json)).toEqual([]);
  expect(json.partitions[0].segments.every((segment: { warnings: unknown }) => Array.isArray(segment.warnings))).toBe(true);
  return reports[0]!.partitions[0]!;
}

/** Batches of 3, 40 and 3 messages: the middle one (~11 KiB) is over SMALL_CAP, the others are not. */
function chainWithBigMiddle(counts = [3, 40, 3]) {
  const chain = buildChain({ counts });
  const big = chain.batches[1]!;
  expect(big.length).toBeGreaterThan(2 * SMALL_CAP);
  for (const [i, batch] of chain.batches.entries()) if (i !== 1) expect(batch.length).toBeLessThan(SMALL_CAP);
  return { chain, big };
}

const oversizedWarning = (position: number, batchLength: number) => ({
  code: "OversizedBatch",
  position,
  batchLength,
  message: expect.stringMatching(
    new RegExp(`byte ${formatCount(position)} .* ${formatCount(batchLength)} bytes, over the ${formatCount(SMALL_CAP)}-byte batch limit`),
  ),
});

describe("an oversized batch that verifies is kept, with a warning", () => {
  it("tail arm: walked from an index entry before it, and from an entry on it", async () => {
    const { chain, big } = chainWithBigMiddle();
    for (const entries of [[0], [0, 1]]) {
      const dir = tempPartition();
      writeSegment(dir, 0n, chain.log, indexAt(chain, entries));
      const partition = await scan(dir, { maxBatchBytes: SMALL_CAP });
      expect(partition.verdict).toBe("clean");
      const segment = partition.segments[0]!;
      expect(segment).toMatchObject({ outcome: "clean", walkedSize: chain.log.length, endOffset: 45n, residue: null });
      expect(segment.warnings).toEqual([oversizedWarning(big.position, big.length)]);
    }
  });

  it("deep arm: the walk from byte 0 warns, index entries match", async () => {
    const { chain, big } = chainWithBigMiddle();
    const dir = tempPartition();
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 2]));
    const partition = await scan(dir, { maxBatchBytes: SMALL_CAP, verify: "full" });
    expect(partition.verdict).toBe("clean");
    expect(partition.segments[0]).toMatchObject({ outcome: "clean", messageCount: 46, index: { mismatches: 0 } });
    expect(partition.segments[0]!.warnings).toEqual([oversizedWarning(big.position, big.length)]);
  });

  it("index-less arm: kept, warned about, and indexed", async () => {
    const { chain, big } = chainWithBigMiddle();
    const dir = tempPartition();
    writeSegment(dir, 0n, chain.log);
    const partition = await scan(dir, { maxBatchBytes: SMALL_CAP });
    expect(partition.segments[0]).toMatchObject({ arm: "index-less", outcome: "clean", messageCount: 46, walkedSize: chain.log.length });
    expect(partition.segments[0]!.warnings).toEqual([oversizedWarning(big.position, big.length)]);
    // The text report shows it too.
    expect(formatPartition(partition)).toContain(`warning OversizedBatch: ${partition.segments[0]!.warnings[0]!.message}`);
  });

  it("under the default cap the same segment has no warning", async () => {
    const { chain } = chainWithBigMiddle();
    const dir = tempPartition();
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const partition = await scan(dir);
    expect(partition.segments[0]!.warnings).toEqual([]);
  });
});

describe("an oversized batch that does not verify is damage", () => {
  it("a flipped byte in its body stops the walk there: torn tail, no warning", async () => {
    const { chain, big } = chainWithBigMiddle([3, 40]);
    const log = chain.log.slice();
    log[big.position + 5000]! ^= 0x40;
    const dir = tempPartition();
    writeSegment(dir, 0n, log, indexAt(chain, [0]));
    const segment = (await scan(dir, { maxBatchBytes: SMALL_CAP })).segments[0]!;
    expect(segment).toMatchObject({ outcome: "torn-tail", walkedSize: big.position, endOffset: 2n });
    expect(segment.warnings).toEqual([]);
  });

  it("a length over the cap that does not fit the file is rejected (torn tail)", async () => {
    const { chain, big } = chainWithBigMiddle([3, 40]);
    const dir = tempPartition();
    writeSegment(dir, 0n, chain.log.subarray(0, chain.log.length - 1), indexAt(chain, [0]));
    const segment = (await scan(dir, { maxBatchBytes: SMALL_CAP })).segments[0]!;
    expect(segment).toMatchObject({ outcome: "torn-tail", walkedSize: big.position });
  });
});

describe("the probe treats an oversized candidate the same way", () => {
  it("an oversized survivor past the damage refuses InteriorDamage (it is not cut)", async () => {
    const { chain, big } = chainWithBigMiddle([3, 40]);
    const log = chain.log.slice();
    writeU64(log, BATCH_CHECKSUM_AT, 12345n); // the first batch no longer verifies
    for (const index of [undefined, indexAt(chain, [0])]) {
      const dir = tempPartition();
      writeSegment(dir, 0n, log, index);
      const partition = await scan(dir, { maxBatchBytes: SMALL_CAP });
      if (index === undefined) {
        expect(partition.segments[0]!.refusal).toMatchObject({ code: "InteriorDamage", damagePosition: 0, survivorPosition: big.position });
      } else {
        // Indexed: not one batch verifies at the last entry (position 0).
        expect(partition.segments[0]!.refusal).toMatchObject({ code: "SizeDivergence" });
      }
    }
  });

  it("crafted oversized candidates that never verify are charged their claimed length and exhaust the budget", async () => {
    const chain = buildChain({ counts: [3] });
    const claimed = 3 * SMALL_CAP;
    const residue = new Uint8Array(64 * 1024);
    const crafted = [1000, 9000, 17_000, 25_000, 33_000];
    for (const at of crafted) {
      writeU64(residue, at + 8, 3n); // extends the chain
      writeU64(residue, at + 32, BigInt(claimed)); // over the cap, fits the file
      writeU32(residue, at + 48, 2); // claims messages; the body is zeros: never verifies
    }
    const dir = tempPartition();
    writeSegment(dir, 0n, concat([chain.log, residue]), indexAt(chain, [0]));
    const limit = 30_000;
    const partition = await scan(dir, { maxBatchBytes: SMALL_CAP, probeBudgetUnits: limit });
    const damage = chain.log.length;
    // Every candidate up to the second crafted header costs 1 unit, each crafted one its claimed
    // length too: 9,000 + 2 × 12,288 > 30,000, so the second one exhausts the budget.
    const second = damage + crafted[1]!;
    expect(partition.segments[0]!.refusal).toMatchObject({
      code: "UnverifiedResidue",
      damagePosition: damage,
      stoppedAt: second,
      spentUnits: crafted[1]! + 2 * claimed,
    });
    // The same residue under the default cap: the crafted lengths are ordinary and charged the same.
    const defaultCap = await scan(dir, { probeBudgetUnits: limit });
    expect(defaultCap.segments[0]!.refusal).toEqual(partition.segments[0]!.refusal);
  });
});

/** Counts the bytes read from `.log` files and the largest single read. */
function countingFs(): { fs: ScanFs; logBytesRead: number; largestRead: number } {
  const counter = {
    logBytesRead: 0,
    largestRead: 0,
    fs: {
      ...nodeScanFs,
      async open(path: string) {
        const file = await nodeScanFs.open(path);
        return {
          async read(target: Uint8Array, position: number) {
            const count = await file.read(target, position);
            if (path.endsWith(".log")) counter.logBytesRead += count;
            counter.largestRead = Math.max(counter.largestRead, target.length);
            return count;
          },
          close: () => file.close(),
        };
      },
    } satisfies ScanFs,
  };
  return counter;
}

describe("a real batch over MAX_BATCH_BYTES (65 MiB)", () => {
  it("scans clean with an OversizedBatch warning, read once through a 1 MiB window", async () => {
    const MiB = 1024 * 1024;
    const payloadBytes = 13 * MiB + 64 * 1024;
    // Five large payloads (one byte pattern each, so encoding stays cheap): 65.3 MiB in one batch.
    const messages = [1, 2, 3, 4, 5].map((fill) => ({ payload: new Uint8Array(payloadBytes).fill(fill) }));
    const before = buildChain({ counts: [3] });
    const big = encodeBatch({ partitionId: 1n, baseOffset: 3n, baseTimestamp: 1_700_000_000_100_000n, messages });
    expect(big.length).toBeGreaterThan(MAX_BATCH_BYTES);
    expect(big.length).toBeLessThan(66 * MiB);
    const after = buildChain({ counts: [2], startOffset: 8n, seed: 3 });
    const dir = tempPartition();
    const log = concat([before.log, big, after.log]);
    writeSegment(dir, 0n, log, indexAt(before, [0]));
    const windowBytes = MiB;
    for (const engine of engines) {
      const counter = countingFs();
      const report = await scanPartition(dir, { engine, windowBytes }, counter.fs);
      const segment = report.partitions[0]!.segments[0]!;
      expect(report.partitions[0]!.verdict).toBe("clean");
      expect(segment).toMatchObject({ outcome: "clean", walkedSize: log.length, endOffset: 9n, residue: null });
      expect(segment.warnings).toEqual([
        {
          code: "OversizedBatch",
          position: before.log.length,
          batchLength: big.length,
          message: expect.stringContaining(`over the ${formatCount(MAX_BATCH_BYTES)}-byte batch limit`),
        },
      ]);
      // Memory bounded by the window: no read (and so no buffer) larger than it; every byte read once.
      expect(counter.largestRead).toBeLessThanOrEqual(windowBytes);
      expect(counter.logBytesRead).toBeLessThanOrEqual(log.length + BATCH_HEADER_BYTES);
    }
  });
});
