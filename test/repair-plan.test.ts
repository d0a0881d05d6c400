/** docs/repair.md §6.2 planning from hand-built reports, plan JSON, and the fs and journal layers repair stands on. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PartitionReport, ScanReport, SegmentReport } from "../src/domain/scan.js";
import {
  InjectedFault,
  JOURNAL_NAME,
  PlanError,
  type PlanStep,
  createFaultyFs,
  firstDifference,
  nodeRepairFs,
  parsePlan,
  planRepair,
  readJournal,
} from "../src/repair/index.js";
import { formatPlan } from "../src/report/repair-format.js";
import { planPartitionTarget } from "../src/repair/plan-partition.js";
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
    lastBatch: null,
    batchChecksumsXxh3: null,
    rebuiltIndex: null,
    index: { entries: 1, trailingBytes: 0, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
    scope: [],
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
    scope: [],
    nextStep: "repair",
    findings: [],
    nextCommand: null,
    ...overrides,
  };
}

function report(partitions: PartitionReport[]): ScanReport {
  return {
    segscan: "1.0.0",
    engine: "ts",
    options: { verify: "tail", replicaCount: 1, probeBudgetUnits: 100, windowBytes: 4096 },
    partitions,
    summary: {
      partitions: partitions.length,
      clean: 0,
      repairable: 0,
      refused: 0,
      failed: 0,
      findings: { warn: 0, failed: 0 },
      bytesScanned: 0,
      elapsedMs: 0,
    },
  };
}

const residue = (damagePosition: number, bytes: number, allZero: boolean) => ({
  damagePosition,
  bytes,
  allZero,
  probe: "no-survivor" as const,
  survivorPosition: null,
  spentUnits: bytes,
  tornEvidence: allZero ? ("zero-filled" as const) : ("short-batch" as const),
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

  const ofKind = <K extends PlanStep["kind"]>(list: readonly PlanStep[], kind: K) =>
    list.filter((step): step is Extract<PlanStep, { kind: K }> => step.kind === kind);

  it("plans only partitions whose action is repair, and lists the rest as untouched", async () => {
    const plan = await planRepair(report([refused, torn, failed, peers, clean]));
    expect(plan.targets.map((p) => p.path)).toEqual([DIR]);
    expect(plan.skipped.map((p) => p.action)).toEqual(["tombstone", "retry", "rebuild-from-peers", "serve"]);
    expect(plan.options).toEqual({ ...report([]).options, clampOffsets: false });
    expect(plan.nodeRoot).toBeNull();
  });

  it("derives cuts, rewrites, trims and sweeps in apply order, and the fingerprint", async () => {
    const plan = await planRepair(report([torn]));
    const target = plan.targets[0]!;
    expect(target.preserveDir).toBe(`${DIR}.segscan`);
    expect(target.steps.map((step) => step.kind)).toEqual(["move-aside", "move-aside", "truncate", "truncate", "replace", "replace"]);
    expect(ofKind(target.steps, "truncate")).toEqual([
      {
        kind: "truncate",
        role: "segment-log",
        file: `${DIR}/00000000000000000000.log`,
        segment: "0",
        reason: "torn-tail",
        fromSize: 1000,
        toSize: 600,
        residue: { bytes: 400, allZero: false },
        observed: null,
      },
      {
        kind: "truncate",
        role: "segment-log",
        file: `${DIR}/00000000000000000020.log`,
        segment: "20",
        reason: "torn-tail",
        fromSize: 1000,
        toSize: 700,
        residue: { bytes: 300, allZero: true },
        observed: null,
      },
    ]);
    const [rewrite, trim] = ofKind(target.steps, "replace");
    expect(rewrite).toMatchObject({
      role: "index",
      file: `${DIR}/00000000000000000000.index`,
      segment: "0",
      fromSize: 10,
      reason: "index-less",
      content: { type: "index-entries", entries: [{ offset: "0", timestamp: big.toString(), position: 0 }] },
    });
    expect(trim).toMatchObject({
      file: `${DIR}/00000000000000000010.index`,
      segment: "10",
      fromSize: 53,
      reason: "partial-entry",
      content: { type: "keep-prefix", bytes: 48 },
    });
    expect(ofKind(target.steps, "move-aside").map((s) => s.reason)).toEqual(["staging", "orphan-index"]);
    expect(target.fingerprint!.segments.map((s) => [s.messagesSize, s.indexSize, s.walkedSize])).toEqual([
      [1000, 10, 600],
      [1000, 53, 1000],
      [1000, 24, 700],
    ]);
  });

  it("an empty segment: cut to its proven prefix; a partial index entry is trimmed to 0; no index is created", async () => {
    const withIndex = segment({
      startOffset: 5n,
      arm: "index-less",
      indexSize: 7,
      walkedSize: 0,
      outcome: "empty",
      residue: residue(512, 488, true),
      index: { entries: 0, trailingBytes: 7, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
    });
    const p = planPartitionTarget(partition({ segments: [withIndex] })).steps;
    // The residue the probe saw starts past zero-message batches; the cut starts at 0, so the bytes are copied, not assumed zero.
    expect(ofKind(p, "truncate")[0]).toMatchObject({
      fromSize: 1000,
      toSize: 0,
      reason: "empty",
      residue: { bytes: 1000, allZero: false },
    });
    expect(ofKind(p, "replace")).toEqual([
      expect.objectContaining({ file: `${DIR}/00000000000000000005.index`, fromSize: 7, content: { type: "keep-prefix", bytes: 0 } }),
    ]);
    const noIndex = planPartitionTarget(
      partition({ segments: [{ ...withIndex, indexSize: 0, index: { ...withIndex.index, trailingBytes: 0 } }] }),
    ).steps;
    expect(ofKind(noIndex, "replace")).toEqual([]);
  });

  it("refuses reports it cannot plan safely, naming the file", () => {
    const bad = (s: SegmentReport) => () => planPartitionTarget(partition({ segments: [s] }));
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
    expect(() => planPartitionTarget(refused)).toThrow(/action tombstone/);
    try {
      bad(segment({ startOffset: 7n, walkedSize: 2000 }))();
    } catch (error) {
      expect(error).toBeInstanceOf(PlanError);
      expect((error as PlanError).path).toBe(`${DIR}/00000000000000000007.log`);
      expect((error as PlanError).segment).toBe(7n);
      expect((error as PlanError).position).toBe(2000);
    }
  });

  it("is plain JSON (u64 values as decimal strings): a JSON round trip is the same plan, and parsePlan accepts it", async () => {
    const plan = await planRepair(report([torn, refused]));
    expect(() => JSON.stringify(plan)).not.toThrow();
    const back = JSON.parse(JSON.stringify(plan)) as unknown;
    expect(back).toEqual(plan);
    expect(parsePlan(back)).toEqual(plan);
    expect(() => parsePlan({ ...plan, version: 1 })).toThrow(/version 1/);
    expect(() => parsePlan({ ...plan, targets: [{ ...plan.targets[0], steps: [{ kind: "truncate", file: "/etc/passwd" }] }] })).toThrow(
      /not a file inside/,
    );
  });

  it("prints the steps in apply order", async () => {
    const text = formatPlan(await planRepair(report([torn, refused])));
    const order = [
      "sweep x.index.staging",
      "truncate 00000000000000000000.log: 1,000 -> 600",
      "copied to 00000000000000000000.log.600.residue",
      "truncate 00000000000000000020.log: 1,000 -> 700 bytes (torn tail; cut 300 zero bytes, recorded by length)",
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
    expect(formatPlan(await planRepair(report([clean])))).toMatch(/nothing to repair/);
  });

  it("firstDifference names the first difference", () => {
    const a = planPartitionTarget(torn);
    expect(firstDifference(a, planPartitionTarget(torn))).toBeNull();
    const grown = { ...torn, segments: torn.segments.map((s, i) => (i === 1 ? { ...s, messagesSize: 1001, walkedSize: 1001 } : s)) };
    expect(firstDifference(a, planPartitionTarget(grown))).toBe(".fingerprint.segments[1].messagesSize: planned 1000, found 1001");
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
