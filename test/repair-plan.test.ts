/** docs/repair.md §6.2 planning from hand-built reports, plan JSON, and the fs and journal layers repair stands on. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PartitionReport, ScanReport, SegmentReport } from "../src/domain/scan.js";
import {
  InjectedFault,
  JOURNAL_NAME,
  PlanError,
  createFaultyFs,
  diffPartitionPlans,
  formatPlan,
  nodeRepairFs,
  planPartition,
  planRepair,
  planToJson,
  readJournal,
} from "../src/repair/index.js";
import { JournalWriter } from "../src/repair/journal.js";
import { tempDataDir } from "./helpers/fixtures.js";

const DIR = "/data/streams/1/topics/1/partitions/1";

function segment(overrides: Partial<SegmentReport> & { startOffset: bigint }): SegmentReport {
  const stem = overrides.startOffset.toString().padStart(20, "0");
  return {
    endOffset: null,
    startTimestamp: null,
    endTimestamp: null,
    messageCount: 0,
    logPath: `${DIR}/${stem}.log`,
    messagesSize: 1000,
    indexSize: 24,
    arm: "indexed",
    outcome: "clean",
    walkedSize: 1000,
    residue: null,
    gaps: [],
    warnings: [],
    refusal: null,
    rebuiltIndex: null,
    index: { entries: 1, trailingBytes: 0, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
    ...overrides,
  };
}

function partition(overrides: Partial<PartitionReport>): PartitionReport {
  return {
    path: DIR,
    verdict: "repairable",
    action: "repair",
    refusal: null,
    error: null,
    budget: { limitUnits: 100, spentUnits: 0 },
    sweep: [],
    segments: [],
    ignored: [],
    bytesScanned: 0,
    singleSegment: false,
    ...overrides,
  };
}

function report(partitions: PartitionReport[]): ScanReport {
  return {
    segscan: "1.0.0",
    engine: "ts",
    options: { verify: "tail", replicaCount: 1, probeBudgetUnits: 100, windowBytes: 4096 },
    partitions,
    summary: { partitions: partitions.length, clean: 0, repairable: 0, refused: 0, failed: 0, bytesScanned: 0, elapsedMs: 0 },
  };
}

const residue = (damagePosition: number, bytes: number, allZero: boolean) => ({
  damagePosition,
  bytes,
  allZero,
  probe: "no-survivor" as const,
  survivorPosition: null,
  spentUnits: bytes,
});

describe("planRepair", () => {
  const big = 2n ** 63n + 5n;
  const torn = partition({
    sweep: [
      { path: `${DIR}/x.index.staging`, kind: "staging" },
      { path: `${DIR}/00000000000000000099.index`, kind: "orphan-index" },
    ],
    segments: [
      segment({
        startOffset: 0n,
        arm: "index-less",
        indexSize: 10,
        walkedSize: 600,
        outcome: "torn-tail",
        residue: residue(600, 400, false),
        index: { entries: 0, trailingBytes: 10, rebuilt: true, rebuiltEntries: 1, mismatches: 0 },
        rebuiltIndex: [{ offset: 0n, timestamp: big, position: 0 }],
      }),
      segment({
        startOffset: 10n,
        indexSize: 53,
        index: { entries: 2, trailingBytes: 5, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
      }),
      segment({ startOffset: 20n, walkedSize: 700, outcome: "torn-tail", residue: residue(700, 300, true) }),
    ],
  });
  const refused = partition({
    path: "/data/p2",
    verdict: "refused",
    action: "tombstone",
    refusal: { code: "InteriorDamage", message: "m", segment: 0n, damagePosition: 1, survivorPosition: 2 },
  });
  const failed = partition({
    path: "/data/p3",
    verdict: "failed",
    action: "retry",
    error: { code: "ReadFailure", path: "/data/p3/x.log", message: "EIO" },
  });
  const peers = partition({ path: "/data/p4", verdict: "refused", action: "rebuild-from-peers" });
  const clean = partition({ path: "/data/p5", verdict: "clean", action: "serve" });

  it("plans only partitions whose action is repair, and lists the rest as untouched", () => {
    const plan = planRepair(report([refused, torn, failed, peers, clean]));
    expect(plan.partitions.map((p) => p.path)).toEqual([DIR]);
    expect(plan.skipped.map((p) => p.action)).toEqual(["tombstone", "retry", "rebuild-from-peers", "serve"]);
    expect(plan.options).toEqual(report([]).options);
  });

  it("derives truncations, rewrites, trims and sweeps, and the fingerprint", () => {
    const p = planRepair(report([torn])).partitions[0]!;
    expect(p.preserveDir).toBe(`${DIR}.segscan`);
    expect(p.truncations).toEqual([
      {
        segment: 0n,
        logPath: `${DIR}/00000000000000000000.log`,
        outcome: "torn-tail",
        fromSize: 1000,
        toSize: 600,
        residue: { bytes: 400, allZero: false },
      },
      {
        segment: 20n,
        logPath: `${DIR}/00000000000000000020.log`,
        outcome: "torn-tail",
        fromSize: 1000,
        toSize: 700,
        residue: { bytes: 300, allZero: true },
      },
    ]);
    expect(p.indexRewrites).toEqual([
      {
        segment: 0n,
        indexPath: `${DIR}/00000000000000000000.index`,
        fromSize: 10,
        reason: "index-less",
        entries: [{ offset: 0n, timestamp: big, position: 0 }],
      },
    ]);
    expect(p.indexTrims).toEqual([{ segment: 10n, indexPath: `${DIR}/00000000000000000010.index`, fromSize: 53, toSize: 48 }]);
    expect(p.sweeps.map((s) => s.kind)).toEqual(["staging", "orphan-index"]);
    expect(p.fingerprint.segments.map((s) => [s.messagesSize, s.indexSize, s.walkedSize])).toEqual([
      [1000, 10, 600],
      [1000, 53, 1000],
      [1000, 24, 700],
    ]);
  });

  it("an empty segment: cut to its proven prefix; a partial index entry is trimmed to 0; no index is created", () => {
    const withIndex = segment({
      startOffset: 5n,
      arm: "index-less",
      indexSize: 7,
      walkedSize: 0,
      outcome: "empty",
      residue: residue(512, 488, true),
      index: { entries: 0, trailingBytes: 7, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
    });
    const p = planPartition(partition({ segments: [withIndex] }));
    // The residue the probe saw starts past zero-message batches; the cut starts at 0, so the bytes are copied, not assumed zero.
    expect(p.truncations[0]).toMatchObject({ fromSize: 1000, toSize: 0, outcome: "empty", residue: { bytes: 1000, allZero: false } });
    expect(p.indexTrims).toEqual([{ segment: 5n, indexPath: `${DIR}/00000000000000000005.index`, fromSize: 7, toSize: 0 }]);
    expect(p.indexRewrites).toEqual([]);
    const noIndex = planPartition(
      partition({ segments: [{ ...withIndex, indexSize: 0, index: { ...withIndex.index, trailingBytes: 0 } }] }),
    );
    expect(noIndex.indexTrims).toEqual([]);
    expect(noIndex.indexRewrites).toEqual([]);
  });

  it("refuses reports it cannot plan safely, naming the file", () => {
    const bad = (s: SegmentReport) => () => planPartition(partition({ segments: [s] }));
    expect(
      bad(segment({ startOffset: 0n, index: { entries: 0, trailingBytes: 0, rebuilt: true, rebuiltEntries: 0, mismatches: 0 } })),
    ).toThrow(PlanError);
    expect(bad(segment({ startOffset: 0n, walkedSize: 10 }))).toThrow(/clean but proven only to 10/);
    expect(
      bad(
        segment({
          startOffset: 0n,
          indexSize: 30,
          index: { entries: 1, trailingBytes: 5, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
        }),
      ),
    ).toThrow(/whole entries/);
    expect(() => planPartition(refused)).toThrow(/action tombstone/);
    try {
      bad(segment({ startOffset: 7n, walkedSize: 2000 }))();
    } catch (error) {
      expect(error).toBeInstanceOf(PlanError);
      expect((error as PlanError).path).toBe(`${DIR}/00000000000000000007.log`);
      expect((error as PlanError).segment).toBe(7n);
      expect((error as PlanError).position).toBe(2000);
    }
  });

  it("serialises with u64 values as decimal strings, and prints the steps in apply order", () => {
    const plan = planRepair(report([torn, refused]));
    const json = planToJson(plan);
    expect(json.partitions[0]!.indexRewrites[0]!.entries[0]).toEqual({ offset: "0", timestamp: big.toString(), position: 0 });
    expect(json.partitions[0]!.truncations[1]!.segment).toBe("20");
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    const text = formatPlan(plan);
    const order = [
      "sweep x.index.staging",
      "truncate 00000000000000000000.log: 1000 -> 600",
      "copied to 00000000000000000000.log.600.residue",
      "truncate 00000000000000000020.log: 1000 -> 700 bytes (torn tail; cut 300 zero bytes, recorded by length)",
      "rewrite 00000000000000000000.index: 1 entry, 24 bytes",
      "trim 00000000000000000010.index: 53 -> 48 bytes",
      "/data/p2: refused, action tombstone",
    ];
    let at = -1;
    for (const line of order) {
      const next = text.indexOf(line);
      expect(next, line).toBeGreaterThan(at);
      at = next;
    }
    expect(formatPlan(planRepair(report([clean])))).toMatch(/nothing to repair/);
  });

  it("diffPartitionPlans names the first difference", () => {
    const a = planPartition(torn);
    expect(diffPartitionPlans(a, planPartition(torn))).toBeNull();
    const grown = { ...torn, segments: torn.segments.map((s, i) => (i === 1 ? { ...s, messagesSize: 1001, walkedSize: 1001 } : s)) };
    expect(diffPartitionPlans(a, planPartition(grown))).toBe(".fingerprint.segments[1].messagesSize: planned 1000, found 1001");
  });
});

describe("fault-injecting fs", () => {
  it("counts mutating steps, fails step k, then refuses everything (a dead process)", async () => {
    const dir = tempDataDir();
    const file = join(dir, "f");
    const faulty = createFaultyFs(nodeRepairFs, { failAt: 3, tornWriteFraction: 0.5 });
    const handle = await faulty.open(file, "w"); // step 1
    await handle.write(new Uint8Array([1, 2, 3, 4]), 0, 4, 0); // step 2
    await expect(handle.write(new Uint8Array([5, 6, 7, 8]), 0, 4, 4)).rejects.toBeInstanceOf(InjectedFault); // step 3, torn
    expect(faulty.crashed).toBe(true);
    await expect(handle.sync()).rejects.toBeInstanceOf(InjectedFault);
    await expect(faulty.stat(file)).rejects.toBeInstanceOf(InjectedFault);
    await handle.close();
    expect([...readFileSync(file)]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(faulty.log).toEqual([`open(w) ${file}`, "write f", "write f"]);
  });

  it("reads are not steps", async () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, "f"), "abc");
    const faulty = createFaultyFs(nodeRepairFs);
    const handle = await faulty.open(join(dir, "f"), "r");
    expect(await handle.read(new Uint8Array(3), 0, 3, 0)).toBe(3);
    await handle.close();
    expect(await faulty.stat(join(dir, "missing"))).toBeNull();
    expect(faulty.steps).toBe(0);
  });
});

describe("journal", () => {
  it("skips a torn last line, and a writer continues on a fresh line", async () => {
    const dir = tempDataDir();
    const path = join(dir, JOURNAL_NAME);
    const first = await JournalWriter.open(nodeRepairFs, dir, "r1");
    await first.append({ kind: "end", time: "t" });
    await first.close();
    writeFileSync(path, readFileSync(path, "utf8") + '{"v":1,"run":"r1","seq":2,"kind":"int');
    expect((await readJournal(nodeRepairFs, path)).map((r) => r.kind)).toEqual(["end"]);
    const second = await JournalWriter.open(nodeRepairFs, dir, "r2");
    await second.append({ kind: "end", time: "u" });
    await second.close();
    expect((await readJournal(nodeRepairFs, path)).map((r) => r.run)).toEqual(["r1", "r2"]);
    expect(existsSync(path)).toBe(true);
  });
});
