/**
 * docs/node.md N4, N7: the offset repairs — evidence copy, rewrite to H,
 * complete a torn record, move aside — planned (rewrites only with
 * --clamp-offsets), applied through the journal, converging after a crash at
 * every step (process crash, and power cuts of the durability model keeping
 * any prefix of the unsynced ops: helpers/crash-explorer.ts), and undone byte
 * for byte by restore, also right after a crash and after a crashed restore. purge.gen, superblocks and
 * the snapshot are never changed. The "done when" of the issue end to end
 * through the CLI.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { nodeFindings } from "../src/node/scan.js";
import { encodeOffsetRecord } from "../src/format/partition-files.js";
import { scanPath } from "../src/node/scan-path.js";
import { type PlanStep, type RepairPlan, StalePlanError, applyRepair, nodeRepairFs, planRepair, restore } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import type { RenameHalves } from "./helpers/repair-durability.js";
import { noSyncFs } from "./helpers/repair-scenarios.js";
import { runCli } from "./helpers/cli.js";
import { COMBINATION, journalOrTarget, nodeFiles as files } from "./helpers/crash-cases.js";
import { tempDir } from "./helpers/node-wal.js";
import { tinyNode } from "./helpers/metadata-node.js";

const engine = createTsEngine();
const P1 = "streams/1/topics/1/partitions/1";
const P2 = "streams/1/topics/1/partitions/2";

const node = (fault: string): Promise<string> => tinyNode({ seed: 7, fault });

/** The node's one plan (docs/repair.md §6.2), with its offset steps and left-alone findings picked out. */
async function planFor(root: string, clampOffsets = true) {
  const report = await scanPath(root, { engine, concurrency: 1 });
  const plan = await planRepair(report, { clampOffsets });
  const steps = plan.targets.flatMap((target) =>
    target.steps.filter((step) => step.role === "offset").map((step) => ({ ...step, name: relative(target.dir, step.file) })),
  );
  const left = (why: string) => plan.leftAlone.filter((item) => item.why === why);
  return { plan, report, steps, optIn: left("opt-in"), heldBack: left("held-back") };
}

/** What an offset step does, in one word (clamp-to-head, complete-record, move-aside, evidence-copy). */
function change(step: PlanStep): string {
  if (step.kind !== "replace") return step.kind;
  return step.reason === "offset-ahead-of-head" ? "clamp-to-head" : "complete-record";
}

const applyPlan = (plan: RepairPlan, fs: RepairFs = nodeRepairFs) => applyRepair(plan, { fs, engine, checkWriters: false });

/** Scan, plan (--clamp-offsets) and apply; on `noSyncFs` unless told (the crash loops decide durability through the model). */
async function repairOffsets(root: string, fs: RepairFs = noSyncFs): Promise<void> {
  await applyPlan((await planFor(root)).plan, fs);
}

function restorePartition(root: string, partition: string, fs: RepairFs = noSyncFs) {
  return restore(join(root, partition), { engine, fs, checkWriters: false });
}

interface OffsetTree {
  root: string;
  /** Planned once: every run starts from the same bytes (the scan is the recovery's, not the act's). */
  plan: RepairPlan;
}

/** A node with `fault` for a crash exploration: the model's root is the data dir (partitions and preserve dirs under it). */
function offsetTree(fault: string) {
  return {
    build: async (): Promise<OffsetTree> => {
      const root = await node(fault);
      return { root, plan: (await planFor(root)).plan };
    },
    observe: (tree: OffsetTree) => files(tree.root),
  };
}

/** The planned offset repairs, on `fs`. */
async function applyPlanned(tree: OffsetTree, fs: RepairFs): Promise<void> {
  await applyPlan(tree.plan, fs);
}

/**
 * Where an offset repair is explored (helpers/crash-cases.ts `COMBINATION`):
 * its steps are kinds of the step table (replace, move-aside), explored there
 * with every persistence choice; here at each point that writes the journal or
 * changes the partition dir, a process crash and a power cut keeping only what
 * was fsynced.
 */
const offsetReach = (partition: string): Pick<CrashExploration<OffsetTree>, "choices" | "points"> => ({
  choices: COMBINATION.choices,
  points: (tree, point) => journalOrTarget(join(tree.root, partition), point),
});

/** Restore of an applied offset repair crashed at every step; recovery: restore again; one more restore is a no-op. */
function crashedOffsetRestore(fault: string, partition: string, renames: RenameHalves): CrashExploration<OffsetTree> {
  const tree = offsetTree(fault);
  return {
    ...tree,
    ...offsetReach(partition),
    async build() {
      const built = await tree.build();
      await repairOffsets(built.root);
      return built;
    },
    act: (fs, built) => restorePartition(built.root, partition, fs),
    recover: (built) => restorePartition(built.root, partition),
    async verify(built, { label }) {
      expect((await restorePartition(built.root, partition)).restored, label).toBe(false);
    },
    renames,
  };
}

/**
 * The offset repair crashed at every step. From each crash state: apply again
 * reaches the uncrashed end state, and restore returns every byte; restore
 * right away returns every byte, after which the repair still converges.
 */
function crashedOffsetRepair(fault: string, partition: string, renames: RenameHalves): CrashExploration<OffsetTree> {
  return {
    ...offsetTree(fault),
    ...offsetReach(partition),
    act: (fs, tree) => applyPlanned(tree, fs),
    recover: (tree) => repairOffsets(tree.root),
    verify: () => undefined,
    restore: (tree) => restorePartition(tree.root, partition),
    also: [
      {
        name: "restore right away",
        recover: (tree) => restorePartition(tree.root, partition),
        async verify(tree, { label, actEnd, before, reference }) {
          expect(reference, `${label}: the restored state`).toEqual(before);
          await repairOffsets(tree.root);
          expect(files(tree.root), `${label}: the repair after the restore`).toEqual(actEnd);
        },
      },
    ],
    renames,
  };
}

const NEVER_CHANGED = (name: string): boolean =>
  name.endsWith("purge.gen") ||
  /superblock\.[ab]$/.test(name) ||
  name.endsWith("snapshot.bin") ||
  name.endsWith(".log") ||
  name.endsWith(".index");

describe("planning", () => {
  it("without --clamp-offsets only the evidence copy is planned; the rewrites are listed as opt-in", async () => {
    const ahead = await planFor(await node("offset-ahead"), false);
    expect(ahead.steps).toEqual([]);
    expect(ahead.optIn).toEqual([expect.objectContaining({ code: "OffsetAheadOfHead" })]);
    const corrupt = await planFor(await node("offset-corrupt"), false);
    expect(corrupt.steps.map(change)).toEqual(["evidence-copy"]);
  });

  it("with --clamp-offsets each finding gets its step", async () => {
    expect((await planFor(await node("offset-ahead"))).steps.map((s) => [change(s), s.name])).toEqual([
      ["clamp-to-head", "offsets/consumers/7"],
    ]);
    expect((await planFor(await node("offset-checksum-torn"))).steps.map(change)).toEqual(["complete-record"]);
    // The empty partition's consumer and group offsets both move.
    expect((await planFor(await node("offset-empty-partition"))).steps.map((s) => [change(s), s.name])).toEqual([
      ["move-aside", "offsets/consumers/7"],
      ["move-aside", "offsets/groups/1"],
    ]);
  });
});

describe.each([
  ["offset-ahead", P1, "OffsetAheadOfHead"],
  ["offset-checksum-torn", P1, "OffsetChecksumTorn"],
  ["offset-empty-partition", P2, "OffsetOnEmptyPartition"],
  ["offset-corrupt", P1, "OffsetCorrupt"],
])("%s", (fault, partition, code) => {
  it("apply fixes the finding (or keeps evidence), touches nothing else, and restore returns every byte", async () => {
    const root = await node(fault);
    const before = files(root);
    await repairOffsets(root, nodeRepairFs);
    const after = files(root);
    for (const name of Object.keys(before).filter(NEVER_CHANGED)) expect(after[name], name).toBe(before[name]);
    const codes = nodeFindings((await scanPath(root, { engine, concurrency: 1 })).node!).map((f) => f.code);
    if (code === "OffsetCorrupt") {
      expect(codes).toContain("OffsetCorrupt");
      expect(after).toEqual(before);
      expect(readdirSync(join(root, `${partition}.segscan`))).toContain("offsets-consumers-7.evidence");
    } else {
      expect(codes).not.toContain(code);
      await restorePartition(root, partition, nodeRepairFs);
      expect(files(root)).toEqual(before);
    }
  });
});

// The crash explorations of the offset repairs. The evidence copy (offset-corrupt) is the step table's own case
// (test/step-kinds-crash.test.ts, helpers/crash-cases.ts `crashedEvidenceCopy`: every point, every persistence choice).
describe.each([
  ["offset-ahead", P1],
  ["offset-checksum-torn", P1],
  ["offset-empty-partition", P2],
])("%s, crashed", (fault, partition) => {
  // Moves between directories link, fsync, unlink, fsync (repair/files.ts moveBetweenDirs): safe under independent rename halves.
  const renames: RenameHalves = "independent";

  it(`a crash at every point that writes the journal or the partition dir (process crash; power cut keeping only what was fsynced; rename halves ${renames}), then apply again: the uncrashed end state, restore returns every byte; or restore right away: every original byte, then the repair still converges`, async () => {
    const report = await exploreCrashes(crashedOffsetRepair(fault, partition, renames));
    expect(report.steps).toBeGreaterThan(3);
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it(`a crash at every such point of restore (rename halves ${renames}), then restore again: every original byte; one more restore is a no-op`, async () => {
    await exploreCrashes(crashedOffsetRestore(fault, partition, renames));
  });
});

describe("refusals", () => {
  it("offsets of a partition refused as a chain (the server would fence it) are not rewritten, even with --clamp-offsets", async () => {
    const root = tempDir();
    const generated = await generateDataDir(root, { size: "tiny", seed: 7, scenario: "hole" });
    await writeNodeMetadata(root, generated.partitions);
    const plan = await planFor(root);
    expect(plan.steps).toEqual([]);
    expect(plan.heldBack.map((item) => item.code)).toEqual(["OffsetOnEmptyPartition", "OffsetOnEmptyPartition"]);
  });

  it("a plan whose offset file changed since the scan is refused and nothing changes", async () => {
    const root = await node("offset-ahead");
    const plan = await planFor(root);
    const path = join(root, P1, "offsets/consumers/7");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path, Buffer.alloc(16, 1));
    const before = files(root);
    await expect(applyPlan(plan.plan)).rejects.toBeInstanceOf(StalePlanError);
    expect(files(root)).toEqual(before);
  });
});

describe("an offset rewrite writes what the bytes prove at step time (docs/repair.md §6.2)", () => {
  it("a consumer commit between the preflight and the step is left as it is, never overwritten with the head", async () => {
    const root = await node("offset-ahead");
    const { plan, steps } = await planFor(root);
    const step = steps.find((s) => s.kind === "replace" && s.reason === "offset-ahead-of-head")!;
    const head = BigInt(step.kind === "replace" && step.content.type === "offset-record" ? step.content.offset : "0");
    const path = step.file;
    const committed = encodeOffsetRecord(head - 3n, (bytes) => engine.xxh3_64(bytes));
    let wrote = false;
    // The journal opens for appending right after the preflight: the consumer commits then.
    const racing: RepairFs = {
      ...nodeRepairFs,
      async open(filePath, mode) {
        if (!wrote && mode === "a" && filePath.endsWith("journal.jsonl")) {
          wrote = true;
          writeFileSync(path, committed);
        }
        return nodeRepairFs.open(filePath, mode);
      },
    };
    await expect(applyPlan(plan, racing)).rejects.toThrow(
      /now stores offset \d+, the plan read \d+ \(a consumer committed since the plan\); it is left as it is/,
    );
    expect(wrote).toBe(true);
    expect(readFileSync(path).equals(Buffer.from(committed))).toBe(true);
  });

  it("a plan edited to write offset 0 is refused before anything changes: the value comes from the head the bytes prove", async () => {
    const root = await node("offset-ahead");
    const { plan } = await planFor(root);
    const before = files(root);
    const edited = JSON.parse(
      JSON.stringify(plan).replace(/"type":"offset-record","offset":"\d+"/, '"type":"offset-record","offset":"0"'),
    ) as RepairPlan;
    expect(JSON.stringify(edited)).toContain('"offset":"0"');
    await expect(applyPlan(edited)).rejects.toThrow(
      /would write offset 0, but the partition's head proven now is \d+.*nothing was changed/,
    );
    expect(files(root)).toEqual(before);
    await applyPlan(plan);
    expect(files(root)).not.toEqual(before);
  });

  it("a torn record edited to another offset is refused: completing it writes the offset the file stores", async () => {
    const root = await node("offset-checksum-torn");
    const { plan } = await planFor(root);
    const before = files(root);
    const edited = JSON.parse(
      JSON.stringify(plan).replace(/"type":"offset-record","offset":"\d+"/, '"type":"offset-record","offset":"5"'),
    ) as RepairPlan;
    await expect(applyPlan(edited)).rejects.toThrow(/would write offset 5, but the file stores offset \d+/);
    expect(files(root)).toEqual(before);
  });
});

describe("the partition lock", () => {
  it("a run holding the partition's lock makes the offset repair refuse, nothing changed", async () => {
    const { acquireLock, LockHeldError } = await import("../src/repair/index.js");
    const root = await node("offset-ahead");
    const plan = await planFor(root);
    const before = files(root);
    const held = await acquireLock(nodeRepairFs, `${join(root, P1)}.segscan`, "test", "test");
    try {
      await expect(applyPlan(plan.plan)).rejects.toBeInstanceOf(LockHeldError);
    } finally {
      await held.release();
    }
    expect(files(root)).toEqual(before);
    await applyPlan(plan.plan);
    expect(files(root)).not.toEqual(before);
  });
});

describe("a torn tail under a committed consumer offset (library)", () => {
  it("segment repair + clamp: the node scans clean of both findings; restore of the partition returns every byte", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const before = files(root);
    const { plan, report, steps } = await planFor(root);
    // Consumer 7 and group 1 both committed through 231, above the cut; one plan cuts the tail and clamps both.
    expect(steps).toEqual([
      expect.objectContaining({
        kind: "replace",
        reason: "offset-ahead-of-head",
        name: "offsets/consumers/7",
        consumer: expect.objectContaining({ storedOffset: "231" }),
      }),
      expect.objectContaining({
        kind: "replace",
        reason: "offset-ahead-of-head",
        name: "offsets/groups/1",
        consumer: expect.objectContaining({ storedOffset: "231" }),
      }),
    ]);
    const head = report.node!.partitions.find((p) => p.path === join(root, P1))!.head.head;
    expect(steps[0]!.kind === "replace" && steps[0]!.content).toEqual({ type: "offset-record", offset: String(head) });
    expect(plan.targets.find((t) => t.path === join(root, P1))!.steps.map((s) => s.kind)).toEqual(["truncate", "replace", "replace"]);
    await applyPlan(plan);
    const after = await scanPath(root, { engine, concurrency: 1 });
    expect(after.node!.verdict).toBe("clean");
    expect(after.partitions.every((p) => p.verdict === "clean")).toBe(true);
    await restorePartition(root, P1, nodeRepairFs);
    expect(files(root)).toEqual(before);
  });
});

describe("done when (CLI)", () => {
  it("scan names the consumer, stored offset, head and re-minted offsets; repair --clamp-offsets --apply fixes it; restore puts every byte back", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const before = files(root);
    const scan = await runCli(["scan", root, "--verbose"]);
    expect(scan.code).toBe(4);
    expect(scan.stdout).toMatch(
      /OffsetAheadOfHead .*consumer 7 stored offset 231 but the partition head is (\d+) \(after the torn-tail cut this plan makes\): offsets \d+\.\.231 will be re-minted/,
    );
    expect(scan.stdout).toContain("If iggy-server starts now:");
    const json = JSON.parse((await runCli(["scan", root, "--json"])).stdout);
    const offset = json.node.partitions.find((p: { path: string }) => p.path.endsWith(P1)).offsets.find((o: { id: number }) => o.id === 7);
    expect(offset).toMatchObject({ kind: "consumer", offset: "231" });
    expect(json.node.bootForecast).toContainEqual(expect.objectContaining({ effect: "clamp-offset" }));

    const dry = await runCli(["repair", root]);
    expect(dry.stdout).toContain("OffsetAheadOfHead");
    expect(dry.stdout).toMatch(/left alone:\n\s+OffsetAheadOfHead at .*: repair --clamp-offsets rewrites it/);
    expect(files(root)).toEqual(before);
    const planned = await runCli(["repair", root, "--clamp-offsets"]);
    expect(planned.stdout).toContain("CHANGES WHAT THIS CONSUMER READS NEXT");
    expect(planned.stdout).toMatch(/this plan removes:\n\s+clamp-offset streams\/1\/topics\/1\/partitions\/1\/offsets\/consumers\/7/);

    const jsonPlan = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json"])).stdout);
    const offsetSteps = (jsonPlan.plan as RepairPlan).targets.flatMap((t) => t.steps).filter((s) => s.role === "offset");
    expect(offsetSteps.map((s) => [change(s), s.kind === "truncate" ? null : s.consumer?.storedOffset])).toEqual([
      ["clamp-to-head", "231"],
      ["clamp-to-head", "231"],
    ]);
    expect(files(root)).toEqual(before);
    const applied = await runCli(["repair", root, "--clamp-offsets", "--apply"]);
    expect(applied.stderr).toBe("");
    // Repaired, and nothing is left: the offset findings this run fixed no longer count (exit 1, not 5).
    expect(applied.code).toBe(1);
    const rescan = await runCli(["scan", root]);
    expect(rescan.code).toBe(0);
    expect(rescan.stdout).not.toContain("OffsetAheadOfHead");

    const restored = await runCli(["restore", root]);
    expect(restored.code).toBe(0);
    expect(files(root)).toEqual(before);
  });
});
