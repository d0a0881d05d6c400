/**
 * Scenario tests for every case of docs/recovery.md §3–5 (each review blocker is one),
 * with exact verdicts, refusal fields and positions, on both engines.
 */
import { mkdirSync, renameSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_LENGTH_AT, MAX_BATCH_BYTES, PROBE_BUDGET_UNITS } from "../src/format/constants.js";
import { writeU64 } from "../src/format/bytes.js";
import { encodeBatch, encodeIndex } from "../src/format/encode.js";
import type { Engine } from "../src/engine/types.js";
import { scanPartition } from "../src/node/scan-path.js";
import { scanPath } from "../src/node/scan-path.js";
import type { ScanOptions } from "../src/recovery/options.js";
import type { PartitionReport, SegmentReport } from "../src/domain/scan.js";
import { formatCount, formatPartition } from "../src/report/format.js";
import { allEngines } from "./helpers/engines.js";
import { loadBothWays } from "./helpers/resident.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** Scans with every engine and two window sizes, asserts the reports agree, returns one. */
async function scan(dir: string, options: ScanOptions = {}): Promise<PartitionReport> {
  const reports = [];
  for (const engine of engines) {
    for (const [windowBytes, io] of [
      [4096, "async"],
      [1 << 20, "blocking"],
    ] as const) {
      const report = await scanPartition(dir, { ...options, engine, windowBytes, io });
      reports.push(report.partitions[0]!);
    }
    // The load without a promise, where it answers, is the promise path's report exactly (a directory only: it loads no lone `.log`).
    if (!dir.endsWith(".log")) await loadBothWays(dir, engine, { ...options, windowBytes: 1 << 20 });
  }
  const strip = (partition: PartitionReport) => ({ ...partition, bytesScanned: 0 });
  for (const other of reports.slice(1)) expect(strip(other)).toEqual(strip(reports[0]!));
  return reports[0]!;
}

describe("clean segments", () => {
  it("a clean indexed chain of two segments serves", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4, 5] });
    const second = buildChain({ counts: [2, 2], startOffset: 12n, seed: 2 });
    writeSegment(dir, 0n, first.log, indexAt(first, [0, 2]));
    writeSegment(dir, 12n, second.log, indexAt(second, [0]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("clean");
    expect(partition.action).toBe("serve");
    expect(partition.refusal).toBeNull();
    const [a, b] = partition.segments;
    expect(a).toMatchObject({
      arm: "indexed",
      outcome: "clean",
      startOffset: 0n,
      endOffset: 11n,
      walkedSize: first.log.length,
      residue: null,
    });
    expect(a!.startTimestamp).toBe(first.batches[0]!.baseTimestamp);
    expect(a!.endTimestamp).toBe(first.batches[2]!.baseTimestamp);
    expect(b).toMatchObject({ startOffset: 12n, endOffset: 15n, messageCount: 4 });
    expect(partition.budget).toEqual({ limitUnits: PROBE_BUDGET_UNITS, spentUnits: 0 });
  });

  it("an empty tail segment (both files empty) is clean", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    writeSegment(dir, 3n, new Uint8Array(0), []);
    const partition = await scan(dir);
    expect(partition.verdict).toBe("clean");
    expect(partition.segments[1]).toMatchObject({ arm: "empty-file", outcome: "clean", walkedSize: 0, endOffset: null });
  });
});

describe("torn tails (docs/recovery.md §3.5: no-survivor is cut)", () => {
  it("a 4 KiB zero tail is cut at the end of the chain", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    writeSegment(dir, 0n, concat([chain.log, new Uint8Array(4096)]), indexAt(chain, [0, 2]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("repairable");
    expect(partition.action).toBe("repair");
    const segment = partition.segments[0]!;
    expect(segment.outcome).toBe("torn-tail");
    expect(segment.walkedSize).toBe(chain.log.length);
    expect(segment.residue).toEqual({
      damagePosition: chain.log.length,
      bytes: 4096,
      allZero: true,
      probe: "no-survivor",
      survivorPosition: null,
      spentUnits: 4096 - 256,
      tornEvidence: "zero-filled",
    });
    expect(partition.budget.spentUnits).toBe(4096 - 256);
  });

  it("review blocker 2: a zero tail wider than 64 MiB is cut: there is no width gate", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const tailBytes = MAX_BATCH_BYTES + 5 * 1024 * 1024;
    truncateSync(logPath, chain.log.length + tailBytes); // sparse zeros, like a delayed-allocation crash
    const [engine] = engines;
    for (const candidate of engines) {
      const report = await scanPartition(dir, { engine: candidate });
      const segment = report.partitions[0]!.segments[0]!;
      expect(segment.outcome).toBe("torn-tail");
      expect(segment.residue).toMatchObject({ bytes: tailBytes, allZero: true, probe: "no-survivor", spentUnits: tailBytes - 256 });
    }
    expect(engine).toBeDefined();
  });

  it("a tail cut mid-batch is a torn tail", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    const cut = chain.batches[2]!.position + 700;
    writeSegment(dir, 0n, chain.log.subarray(0, cut), indexAt(chain, [0, 1]));
    const partition = await scan(dir);
    const segment = partition.segments[0]!;
    expect(segment).toMatchObject({ outcome: "torn-tail", walkedSize: chain.batches[2]!.position, endOffset: 6n });
    expect(segment.residue).toMatchObject({ damagePosition: chain.batches[2]!.position, bytes: 700, allZero: false, probe: "no-survivor" });
  });

  it("random garbage after the chain is a torn tail with allZero false", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(dir, 0n, concat([chain.log, randomBytes(20_000, 9)]), indexAt(chain, [0]));
    const partition = await scan(dir);
    expect(partition.segments[0]).toMatchObject({ outcome: "torn-tail", walkedSize: chain.log.length });
    expect(partition.segments[0]!.residue).toMatchObject({ allZero: false, probe: "no-survivor", spentUnits: 20_000 - 256 });
  });
});

describe("interior damage (docs/recovery.md §3.5: a survivor refuses)", () => {
  it("a batch_length flipped to 0xFFFFFFFF is rejected without allocation and the intact batch after it is found", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5, 6] });
    const log = chain.log.slice();
    const damaged = chain.batches[2]!;
    writeU64(log, damaged.position + BATCH_LENGTH_AT, 0xffffffffn);
    writeSegment(dir, 0n, log, indexAt(chain, [0, 1]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("refused");
    expect(partition.action).toBe("tombstone");
    expect(partition.refusal).toMatchObject({
      code: "InteriorDamage",
      segment: 0n,
      damagePosition: damaged.position,
      survivorPosition: chain.batches[3]!.position,
    });
    expect(partition.refusal!.message).toContain("was not cut");
    expect(partition.segments[0]!.residue).toMatchObject({ probe: "survivor", survivorPosition: chain.batches[3]!.position });
    // replicaCount > 1: a peer can rebuild it.
    const replicated = (await scanPartition(dir, { engine: engines[0]!, replicaCount: 3 })).partitions[0]!;
    expect(replicated.action).toBe("rebuild-from-peers");
  });

  it("a payload bit flip after the last index entry, followed by an intact batch, refuses", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5, 6] });
    const log = chain.log.slice();
    log[chain.batches[2]!.position + 400]! ^= 0x10;
    writeSegment(dir, 0n, log, indexAt(chain, [0, 1]));
    const partition = await scan(dir);
    expect(partition.refusal).toMatchObject({
      code: "InteriorDamage",
      damagePosition: chain.batches[2]!.position,
      survivorPosition: chain.batches[3]!.position,
    });
  });

  it("damage before the last index entry is seen by deep mode only", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5, 6] });
    const log = chain.log.slice();
    log[chain.batches[1]!.position + 300]! ^= 0x01;
    writeSegment(dir, 0n, log, indexAt(chain, [0, 3]));
    const tail = await scan(dir);
    expect(tail.verdict).toBe("clean");
    const deep = await scan(dir, { verify: "full" });
    expect(deep.verdict).toBe("refused");
    expect(deep.refusal).toMatchObject({
      code: "InteriorDamage",
      damagePosition: chain.batches[1]!.position,
      survivorPosition: chain.batches[2]!.position,
    });
  });
});

describe("continuity (docs/recovery.md §3.4)", () => {
  it("review blocker 3: a forward gap in an indexed, byte-clean segment is absorbed and reported", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5], baseOffsets: [0n, 3n, 100n] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 1]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("clean");
    expect(partition.segments[0]!.gaps).toEqual([{ position: chain.batches[2]!.position, expectedOffset: 7n, foundOffset: 100n }]);
    expect(partition.segments[0]!.endOffset).toBe(104n);
  });

  it("a forward gap in an index-less segment is absorbed too", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4], baseOffsets: [0n, 50n] });
    writeSegment(dir, 0n, chain.log);
    const partition = await scan(dir);
    expect(partition.segments[0]!.gaps).toEqual([{ position: chain.batches[1]!.position, expectedOffset: 3n, foundOffset: 50n }]);
    expect(partition.segments[0]!.outcome).toBe("clean");
  });

  it("a backward step refuses OffsetDiscontinuity", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5], baseOffsets: [0n, 3n, 5n] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 1]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("refused");
    expect(partition.refusal).toMatchObject({
      code: "OffsetDiscontinuity",
      segment: 0n,
      position: chain.batches[2]!.position,
      expectedOffset: 7n,
      foundOffset: 5n,
    });
  });

  it("an index-less segment whose first batch is below the file name's offset refuses", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3], startOffset: 5n });
    writeSegment(dir, 10n, chain.log);
    const partition = await scan(dir);
    expect(partition.refusal).toMatchObject({
      code: "OffsetDiscontinuity",
      segment: 10n,
      position: 0,
      expectedOffset: 10n,
      foundOffset: 5n,
    });
  });
});

describe("index validation (docs/recovery.md §3.2)", () => {
  it("entries that do not strictly ascend refuse with the first bad entry's index", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    const entries = indexAt(chain, [0, 2, 1]);
    writeSegment(dir, 0n, chain.log, entries);
    const partition = await scan(dir);
    expect(partition.refusal).toMatchObject({ code: "IndexEntriesNotMonotone", segment: 0n, entryIndex: 2 });
  });

  it("an equal position refuses too", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const entries = indexAt(chain, [0, 1]);
    entries[1] = { ...entries[1]!, position: entries[0]!.position };
    writeSegment(dir, 0n, chain.log, entries);
    expect((await scan(dir)).refusal).toMatchObject({ code: "IndexEntriesNotMonotone", entryIndex: 1 });
  });

  it("timestamps are not validated: clocks rewind", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const entries = indexAt(chain, [0, 1]);
    entries[1] = { ...entries[1]!, timestamp: 5n };
    writeSegment(dir, 0n, chain.log, entries);
    expect((await scan(dir)).verdict).toBe("clean");
  });

  it("a first entry below the segment start refuses", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4], startOffset: 100n });
    const entries = indexAt(chain, [0, 1]);
    entries[0] = { ...entries[0]!, offset: 99n };
    writeSegment(dir, 100n, chain.log, entries);
    expect((await scan(dir)).refusal).toMatchObject({ code: "IndexEntryBeforeSegmentStart", segment: 100n, firstEntryOffset: 99n });
  });

  it("an index pointing at no verifying batch refuses SizeDivergence", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const entries = [...indexAt(chain, [0, 1]), { offset: 7n, timestamp: 0n, position: BigInt(chain.log.length + 4096) }];
    writeSegment(dir, 0n, chain.log, entries);
    for (const verify of ["tail", "full"] as const) {
      expect((await scan(dir, { verify })).refusal).toMatchObject({
        code: "SizeDivergence",
        segment: 0n,
        indexedOffset: 7n,
        indexedPosition: chain.log.length + 4096,
        messagesSize: chain.log.length,
      });
    }
  });

  it("a trailing partial index entry makes the partition repairable", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(dir, 0n, chain.log, concat([encodeIndex(indexAt(chain, [0, 1])), new Uint8Array(10)]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("repairable");
    expect(partition.segments[0]!.index).toEqual({ entries: 2, trailingBytes: 10, rebuilt: false, rebuiltEntries: 0, mismatches: 0 });
  });

  it("deep mode reports index entries that sit on no batch start and rebuilds the index", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    const entries = indexAt(chain, [0, 1, 2]);
    entries[1] = { ...entries[1]!, position: entries[1]!.position + 8n };
    writeSegment(dir, 0n, chain.log, entries);
    const deep = await scan(dir, { verify: "full" });
    expect(deep.verdict).toBe("repairable");
    expect(deep.segments[0]!.index).toMatchObject({ mismatches: 1, rebuilt: true, rebuiltEntries: 1 });
    expect(deep.segments[0]!.messageCount).toBe(12);
    expect((await scan(dir)).verdict).toBe("clean");
  });

  it("without damage, deep and tail mode agree on every bound", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 0, 4, 5], startOffset: 40n });
    writeSegment(dir, 40n, chain.log, indexAt(chain, [0, 2]));
    const tail = (await scan(dir)).segments[0]!;
    const deep = (await scan(dir, { verify: "full" })).segments[0]!;
    for (const field of ["startOffset", "endOffset", "startTimestamp", "endTimestamp", "walkedSize", "outcome"] as const) {
      expect(deep[field]).toEqual(tail[field]);
    }
  });
});

describe("index-less arm (docs/recovery.md §3.3)", () => {
  it("a mid-chain segment with a lost index is walked and its index rebuilt (review finding)", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const middle = buildChain({ counts: Array(40).fill(50), startOffset: 7n, seed: 3, payloadBytes: 600 });
    const last = buildChain({ counts: [2], startOffset: middle.nextOffset, seed: 4 });
    writeSegment(dir, 0n, first.log, indexAt(first, [0]));
    writeSegment(dir, 7n, middle.log); // no index file at all
    writeSegment(dir, middle.nextOffset, last.log, indexAt(last, [0]));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("repairable");
    const segment = partition.segments[1]!;
    expect(segment).toMatchObject({ arm: "index-less", outcome: "clean", endOffset: middle.nextOffset - 1n, messageCount: 2000 });
    // One entry for the first batch with messages, then one per ≥ 1 MiB.
    const expected = [middle.batches[0]!];
    for (const batch of middle.batches) if (batch.position - expected[expected.length - 1]!.position >= 1 << 20) expected.push(batch);
    expect(segment.rebuiltIndex).toEqual(expected.map((b) => ({ offset: b.baseOffset, timestamp: b.baseTimestamp, position: b.position })));
    expect(segment.index).toMatchObject({ rebuilt: true, rebuiltEntries: expected.length });
  });

  it("a log with no whole batch and no survivor is empty", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    writeSegment(dir, 0n, chain.log.subarray(0, 200));
    const partition = await scan(dir);
    expect(partition.segments[0]).toMatchObject({ arm: "index-less", outcome: "empty", walkedSize: 0 });
    expect(partition.verdict).toBe("repairable");
  });

  it("a torn first batch followed by an intact one refuses InteriorDamage", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const log = chain.log.slice();
    log[300]! ^= 0xff;
    writeSegment(dir, 0n, log);
    expect((await scan(dir)).refusal).toMatchObject({
      code: "InteriorDamage",
      damagePosition: 0,
      survivorPosition: chain.batches[1]!.position,
    });
  });
});

describe("the probe budget (docs/recovery.md §3.5)", () => {
  /** Headers that decode, fit and extend the chain but whose blobs never verify. */
  function craftedResidue(count: number, claimedBytes: number, firstOffset: bigint): Uint8Array {
    const residue = new Uint8Array(count * 512);
    for (let i = 0; i < count; i++) {
      const header = encodeBatch({
        baseOffset: firstOffset + BigInt(i),
        baseTimestamp: 1n,
        messages: [{ payload: new Uint8Array(8) }],
      }).subarray(0, 256);
      const crafted = header.slice();
      writeU64(crafted, BATCH_LENGTH_AT, BigInt(claimedBytes));
      residue.set(crafted, i * 512);
    }
    return residue;
  }

  it("a crafted residue of decoding, fitting, chain-extending headers ends in UnverifiedResidue within the budget", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const residue = craftedResidue(64, 4096, chain.nextOffset);
    writeSegment(dir, 0n, concat([chain.log, residue, new Uint8Array(8192)]), indexAt(chain, [0]));
    const limit = 50_000;
    const partition = await scan(dir, { probeBudgetUnits: limit });
    expect(partition.verdict).toBe("refused");
    expect(partition.action).toBe("tombstone");
    const refusal = partition.refusal!;
    expect(refusal).toMatchObject({ code: "UnverifiedResidue", segment: 0n, damagePosition: chain.log.length, limitUnits: limit });
    if (refusal.code !== "UnverifiedResidue") throw new Error("unreachable");
    expect(refusal.spentUnits).toBeGreaterThan(limit);
    expect(refusal.residueBytes).toBe(residue.length + 8192);
    // Exactly: candidate k*512 (k ≥ 1) passes and costs 1 + 4096; others cost 1.
    // Walk the pseudo-code by hand to find the stopping candidate.
    let spent = 0;
    let stoppedAt = -1;
    for (let c = chain.log.length + 1; ; c++) {
      spent += 1;
      const relative = c - chain.log.length;
      if (relative % 512 === 0 && relative / 512 < 64) spent += 4096;
      if (spent > limit) {
        stoppedAt = c;
        break;
      }
    }
    expect(refusal.stoppedAt).toBe(stoppedAt);
    expect(refusal.spentUnits).toBe(spent);
    // Replicas do not help: a budget verdict repeats on every replica.
    expect((await scanPartition(dir, { engine: engines[0]!, probeBudgetUnits: limit, replicaCount: 3 })).partitions[0]!.action).toBe(
      "tombstone",
    );
  });

  it("the default budget is shared by every segment of one load", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3] });
    const second = buildChain({ counts: [4], startOffset: 3n, seed: 5 });
    writeSegment(dir, 0n, concat([first.log, new Uint8Array(3000)]), indexAt(first, [0]));
    writeSegment(dir, 3n, concat([second.log, new Uint8Array(3000)]), indexAt(second, [0]));
    const partition = await scan(dir);
    expect(partition.budget.spentUnits).toBe(2 * (3000 - 256));
    // A limit that the first probe fits in but the second does not.
    const limited = await scan(dir, { probeBudgetUnits: 3000 });
    expect(limited.segments[0]!.outcome).toBe("torn-tail");
    expect(limited.refusal).toMatchObject({
      code: "UnverifiedResidue",
      segment: 3n,
      stoppedAt: second.log.length + 1 + (3000 - 2744),
      spentUnits: 3001,
    });
  });
  it("a budget run out by one segment stops the next segment's probe at its first candidate", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3] });
    const second = buildChain({ counts: [4], startOffset: 3n, seed: 5 });
    writeSegment(dir, 0n, concat([first.log, new Uint8Array(3000)]), indexAt(first, [0]));
    writeSegment(dir, 3n, concat([second.log, new Uint8Array(3000)]), indexAt(second, [0]));
    const partition = await scan(dir, { probeBudgetUnits: 1000 });
    expect(partition.segments[0]!.refusal).toMatchObject({
      code: "UnverifiedResidue",
      stoppedAt: first.log.length + 1001,
      spentUnits: 1001,
    });
    expect(partition.segments[1]!.refusal).toMatchObject({ code: "UnverifiedResidue", stoppedAt: second.log.length + 1, spentUnits: 1002 });
    expect(partition.segments[1]!.residue).toMatchObject({ probe: "budget-exhausted", spentUnits: 1 });
    expect(partition.budget).toEqual({ limitUnits: 1000, spentUnits: 1002 });
    expect(partition.refusal).toMatchObject({ segment: 0n });
  });
});

describe("partition contiguity and the first-refusal rule (docs/recovery.md §4)", () => {
  it("a non-tail empty segment refuses EmptyNonTailSegment", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3] });
    const third = buildChain({ counts: [2], startOffset: 5n });
    writeSegment(dir, 0n, first.log, indexAt(first, [0]));
    writeSegment(dir, 3n, new Uint8Array(0), []);
    writeSegment(dir, 5n, third.log, indexAt(third, [0]));
    expect((await scan(dir)).refusal).toMatchObject({ code: "EmptyNonTailSegment", emptyStart: 3n, nextStart: 5n });
  });

  it("a hole and an overlap refuse with both segments' bounds", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const later = buildChain({ counts: [2], startOffset: 9n });
    writeSegment(dir, 0n, first.log, indexAt(first, [0]));
    writeSegment(dir, 9n, later.log, indexAt(later, [0]));
    expect((await scan(dir)).refusal).toMatchObject({ code: "Hole", previousStart: 0n, previousEnd: 6n, nextStart: 9n });

    const overlapping = tempPartition(2);
    const early = buildChain({ counts: [2], startOffset: 5n });
    writeSegment(overlapping, 0n, first.log, indexAt(first, [0]));
    writeSegment(overlapping, 5n, early.log, indexAt(early, [0]));
    expect((await scan(overlapping)).refusal).toMatchObject({ code: "Overlap", previousStart: 0n, previousEnd: 6n, nextStart: 5n });
  });

  it("the lowest-offset refused segment is the partition's refusal and every segment is still reported", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const second = buildChain({ counts: [2, 2], startOffset: 7n, seed: 8 });
    const third = buildChain({ counts: [5], startOffset: 11n, seed: 9 });
    const secondEntries = indexAt(second, [1, 0]);
    writeSegment(dir, 0n, concat([first.log, new Uint8Array(1000)]), indexAt(first, [0]));
    writeSegment(dir, 7n, second.log, secondEntries);
    writeSegment(dir, 11n, third.log.subarray(0, 100), [{ offset: 11n, timestamp: 0n, position: 50n }]);
    const partition = await scan(dir);
    expect(partition.segments.map((segment) => segment.outcome)).toEqual(["torn-tail", "refused", "refused"]);
    expect(partition.refusal).toMatchObject({ code: "IndexEntriesNotMonotone", segment: 7n });
    expect(partition.segments[2]!.refusal).toMatchObject({ code: "SizeDivergence" });
  });

  it("damage in the last batch of a segment that is not the last: a torn tail on its own, a Hole whose bytes are present, unreadable", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4, 5] });
    const second = buildChain({ counts: [2, 2], startOffset: first.nextOffset, seed: 2 });
    const last = first.batches[2]!;
    const log = first.log.slice();
    log[last.position + 256 + 60]! ^= 0x01; // a payload bit of the segment's last batch
    writeSegment(dir, 0n, log, indexAt(first, [0]));
    writeSegment(dir, first.nextOffset, second.log, indexAt(second, [0]));
    for (const verify of ["tail", "full"] as const) {
      const partition = await scan(dir, { verify });
      const [damaged, next] = partition.segments as [SegmentReport, SegmentReport];
      // docs/recovery.md §4: the segment keeps its own outcome; contiguity refuses the partition.
      expect(damaged, verify).toMatchObject({ outcome: "torn-tail", refusal: null, walkedSize: last.position, endOffset: 6n });
      expect(damaged.residue, verify).toMatchObject({ probe: "no-survivor", survivorPosition: null, tornEvidence: "complete-batch" });
      expect(next.outcome, verify).toBe("clean");
      expect(partition.verdict, verify).toBe("refused");
      expect(partition.action, verify).toBe("tombstone");
      expect(partition.refusal, verify).toEqual({
        code: "Hole",
        previousStart: 0n,
        previousEnd: 6n,
        nextStart: 12n,
        message:
          "segment 12 (00000000000000000012.log) starts above 6 + 1, the end of segment 0 (00000000000000000000.log): " +
          `offsets 7..11 are missing from the chain; their bytes are present in the ${formatCount(last.length)} bytes from byte ${formatCount(last.position)} ` +
          "of 00000000000000000000.log (a complete last batch whose checksum fails) but do not verify, so this is damage at the end of a segment " +
          "that is not the last, not a torn tail of the log, and nothing was cut",
      });
      // The scope says what the bytes are: unreadable, hiding the offsets up to the next segment's start.
      expect(damaged.scope.at(-1), verify).toEqual({
        kind: "unreadable",
        firstOffset: last.baseOffset,
        lastOffset: first.nextOffset - 1n,
        messages: 5,
        bytes: last.length,
        startPosition: last.position,
        endPosition: log.length,
        tornEvidence: null,
      });
      // The partition's scope: the bytes are there, unreadable; no offset is "missing" with no bytes.
      expect(
        partition.scope.map((range) => [range.kind, range.firstOffset, range.lastOffset]),
        verify,
      ).toEqual([
        ["proven", 0n, last.baseOffset - 1n],
        ["unreadable", last.baseOffset, first.nextOffset - 1n],
        ["intact", first.nextOffset, second.nextOffset - 1n],
      ]);
      expect(partition.nextStep, verify).toBe(
        "restore this partition from a backup: segscan proves 0..6 here (and 12..15 after the damage), 7..11 cannot be proven; keep these files as evidence",
      );
      const text = formatPartition(partition);
      expect(text, verify).toContain("torn-tail  damage at 2,");
      expect(text, verify).toContain("no survivor in this file; segment 12 follows");
      expect(text, verify).not.toMatch(/missing \d|no bytes|cut at/);
    }
    const replicated = await scan(dir, { replicaCount: 3 });
    expect(replicated.action).toBe("rebuild-from-peers");
    expect(replicated.nextStep).toBe(
      "if a peer holds 7..11 (check with `segscan fleet`), rebuild this partition from it, else restore it from a backup: segscan proves 0..6 here (and 12..15 after the damage)",
    );
  });

  it("the next segment's own damage does not bound the previous one's damaged end: its start does", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const second = buildChain({ counts: [2, 2, 3], startOffset: first.nextOffset, seed: 2 });
    const firstLog = first.log.slice();
    firstLog[first.batches[1]!.position + 256 + 60]! ^= 0x04;
    const secondLog = second.log.slice();
    secondLog[second.batches[0]!.position + 256 + 60]! ^= 0x04; // the next segment's first batch: its survivor is its second
    writeSegment(dir, 0n, firstLog, indexAt(first, [0]));
    writeSegment(dir, first.nextOffset, secondLog); // index-less: walked from byte 0
    for (const verify of ["tail", "full"] as const) {
      const partition = await scan(dir, { verify });
      const [damaged, next] = partition.segments as [SegmentReport, SegmentReport];
      expect(damaged, verify).toMatchObject({ outcome: "torn-tail", refusal: null });
      expect(damaged.scope.at(-1), verify).toMatchObject({ kind: "unreadable", firstOffset: 3n, lastOffset: 6n, messages: 4 });
      expect(next.refusal, verify).toMatchObject({ code: "InteriorDamage", segment: 7n, damagePosition: 0 });
      // The lowest-offset refused segment is the partition's refusal (docs/recovery.md §4 step 4).
      expect(partition.refusal, verify).toEqual(next.refusal);
      expect(
        partition.scope.map((range) => [range.kind, range.firstOffset, range.lastOffset]),
        verify,
      ).toEqual([
        ["proven", 0n, 2n],
        ["unreadable", 3n, 8n],
        ["intact", 9n, 13n],
      ]);
    }
  });

  it("junk after the last batch of a segment that is not the last hides no offset: a torn tail that repair cuts", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const second = buildChain({ counts: [2], startOffset: first.nextOffset, seed: 2 });
    writeSegment(dir, 0n, concat([first.log, new Uint8Array(700)]), indexAt(first, [0]));
    writeSegment(dir, first.nextOffset, second.log, indexAt(second, [0]));
    const partition = await scan(dir);
    const damaged = partition.segments[0]!;
    expect(partition).toMatchObject({ verdict: "repairable", action: "repair", refusal: null });
    expect(damaged).toMatchObject({ outcome: "torn-tail", refusal: null, walkedSize: first.log.length, endOffset: 6n });
    expect(damaged.residue).toMatchObject({ allZero: true, tornEvidence: "zero-filled", probe: "no-survivor" });
    expect(damaged.scope.at(-1)).toMatchObject({
      kind: "torn",
      firstOffset: null,
      lastOffset: null,
      bytes: 700,
      tornEvidence: "zero-filled",
    });
    expect(partition.nextStep).toMatch(
      /^repair: segscan repair \S+ --apply cuts 700 bytes of torn tail: under the crash model \(a completed fsync leaves no zeros\), never fsynced, so never acknowledged/,
    );
    expect(partition.nextCommand).toEqual(["segscan", "repair", partition.path, "--apply"]);
    expect(formatPartition(partition)).toContain(`cut at ${formatCount(first.log.length)}: residue 700 B all zero, no survivor (`);
  });

  it("a segment that is not the last ends torn and the next holds no verified batch: a Hole whose message names the torn bytes", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3, 4] });
    const last = first.batches[1]!;
    // The server rolled a new segment after the last batch, then crashed before anything reached the first's tail.
    writeSegment(dir, 0n, first.log.subarray(0, last.position + 100), indexAt(first, [0]));
    writeSegment(dir, first.nextOffset, new Uint8Array(0), []);
    const partition = await scan(dir);
    expect(partition.segments[0]!).toMatchObject({ outcome: "torn-tail", refusal: null });
    // Nothing verified follows the bytes, so they stay what their own file says: a torn range.
    expect(partition.segments[0]!.scope.at(-1)).toMatchObject({ kind: "torn", tornEvidence: "short-batch", bytes: 100 });
    expect(partition.refusal).toMatchObject({ code: "Hole", previousEnd: 2n, nextStart: first.nextOffset });
    expect(partition.refusal!.message).toContain(
      `offsets 3..6 are missing from the chain; their bytes are present in the 100 bytes from byte ${formatCount(last.position)} of 00000000000000000000.log ` +
        "(a short last batch, the append never completed) but do not verify",
    );
    expect(partition.nextStep).toBe(
      "restore this partition from a backup: segscan proves 0..2 here, 3..6 cannot be proven; keep these files as evidence",
    );
  });

  it("a segment that is not the last whose only batch is damaged: EmptyNonTailSegment, its message names the bytes", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [4] });
    const second = buildChain({ counts: [2], startOffset: first.nextOffset, seed: 2 });
    const log = first.log.slice();
    log[256 + 60]! ^= 0x10;
    writeSegment(dir, 0n, log); // index-less: a walk from byte 0 proves nothing
    writeSegment(dir, first.nextOffset, second.log, indexAt(second, [0]));
    const partition = await scan(dir);
    expect(partition.segments[0]!).toMatchObject({ outcome: "empty", refusal: null, walkedSize: 0 });
    expect(partition.segments[0]!.scope.at(-1)).toMatchObject({ kind: "unreadable", firstOffset: 0n, lastOffset: 3n, bytes: log.length });
    expect(partition.refusal).toEqual({
      code: "EmptyNonTailSegment",
      emptyStart: 0n,
      nextStart: 4n,
      message:
        "segment 0 (00000000000000000000.log) holds no verified batch but segment 4 (00000000000000000004.log) follows it: " +
        `offsets 0..3 are missing from the chain; their bytes are present in the ${formatCount(log.length)} bytes from byte 0 of 00000000000000000000.log ` +
        "(a complete last batch whose checksum fails) but do not verify, so this is damage at the end of a segment " +
        "that is not the last, not a torn tail of the log, and nothing was cut",
    });
    expect(partition.scope.map((range) => [range.kind, range.firstOffset, range.lastOffset])).toEqual([
      ["proven", null, null],
      ["unreadable", 0n, 3n],
      ["intact", 4n, 5n],
    ]);
  });

  it("sweep candidates (.staging, orphan .index) make the partition repairable; other files are never ours", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    writeFileSync(join(dir, "00000000000000000000.index.staging"), "x");
    writeFileSync(join(dir, "00000000000000000099.index"), "orphan");
    writeFileSync(join(dir, "superblock.a"), "not ours");
    writeFileSync(join(dir, "notanumber.log"), "ignored");
    mkdirSync(join(dir, "offsets"));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("repairable");
    expect(partition.sweep).toEqual([
      { path: join(dir, "00000000000000000000.index.staging"), kind: "staging" },
      { path: join(dir, "00000000000000000099.index"), kind: "orphan-index" },
    ]);
    expect(partition.ignored).toEqual([expect.objectContaining({ path: join(dir, "notanumber.log"), kind: "bad-segment-name" })]);
  });
});

describe("scanPath discovery (docs/interfaces.md §9.2)", () => {
  it("finds partitions under a data dir in path order, and scans one .log alone", async () => {
    const dataDir = tempDataDir();
    const chain = buildChain({ counts: [3] });
    for (const partition of [2, 1, 10]) {
      writeSegment(tempPartition(partition, dataDir), 0n, chain.log, indexAt(chain, [0]));
    }
    const report = await scanPath(dataDir, { engine: engines[0]! });
    expect(report.partitions.map((p) => p.path.split("/").pop())).toEqual(["1", "10", "2"]);
    expect(report.summary).toMatchObject({ partitions: 3, clean: 3, repairable: 0, refused: 0, failed: 0 });

    const lonely = tempPartition(7, dataDir);
    const { logPath } = writeSegment(lonely, 0n, concat([chain.log, new Uint8Array(500)]), indexAt(chain, [0]));
    writeSegment(lonely, 9n, chain.log); // a hole that a single-.log scan does not check
    const single = await scanPath(logPath, { engine: engines[0]! });
    expect(single.partitions).toHaveLength(1);
    expect(single.partitions[0]).toMatchObject({ path: logPath, verdict: "repairable", singleSegment: true, sweep: [] });
  });
});

describe("review findings", () => {
  it("a symlinked .log is scanned through its link, and its .index is no orphan", async () => {
    const dir = tempPartition();
    const first = buildChain({ counts: [3] });
    const tail = buildChain({ counts: [4], startOffset: 3n, seed: 3 });
    writeSegment(dir, 0n, first.log, indexAt(first, [0]));
    const { logPath } = writeSegment(dir, 3n, tail.log, indexAt(tail, [0]));
    const elsewhere = join(tempDataDir(), "moved.log");
    renameSync(logPath, elsewhere);
    symlinkSync(elsewhere, logPath);
    const partition = await scan(dir);
    expect(partition.sweep).toEqual([]);
    expect(partition.verdict).toBe("clean");
    expect(partition.segments.map((segment) => segment.endOffset)).toEqual([2n, 6n]);
  });

  it("a dangling .log link fails the partition instead of hiding the segment", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    writeFileSync(join(dir, "00000000000000000003.index"), new Uint8Array(0));
    symlinkSync(join(dir, "nowhere.log"), join(dir, "00000000000000000003.log"));
    const partition = await scan(dir);
    expect(partition.verdict).toBe("failed");
    expect(partition.error).toMatchObject({ code: "OpenFailure" });
    expect(partition.sweep).toEqual([]);
  });

  it("tail and deep mode use the same chain end as the probe floor after an empty-only tail chunk", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [5, 5, 0] });
    const replayed = buildChain({ counts: [2], startOffset: 3n, seed: 4 });
    const log = concat([chain.log, new Uint8Array(300).fill(0xab), replayed.log]);
    writeSegment(dir, 0n, log, indexAt(chain, [0, 2]));
    for (const verify of ["tail", "full"] as const) {
      const segment = (await scan(dir, { verify })).segments[0]!;
      expect(segment).toMatchObject({ outcome: "torn-tail", endOffset: 9n, walkedSize: chain.log.length });
      expect(segment.residue).toMatchObject({ probe: "no-survivor" });
    }
  });

  it("an index position past 2^53 is reported clamped, with the exact value in the message", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    writeSegment(dir, 0n, chain.log, [...indexAt(chain, [0]), { offset: 3n, timestamp: 0n, position: (1n << 64n) - 1n }]);
    const refusal = (await scan(dir)).refusal!;
    expect(refusal).toMatchObject({ code: "SizeDivergence", indexedPosition: Number.MAX_SAFE_INTEGER });
    expect(refusal.message).toContain("18,446,744,073,709,551,615");
  });
});
