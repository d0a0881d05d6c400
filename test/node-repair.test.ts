/**
 * docs/node.md N7: the WAL torn-tail cut. Apply, then the WAL scans clean;
 * restore returns every byte; a crash at every mutating step (process crash,
 * and power cuts of the durability model keeping any prefix of the unsynced
 * ops: helpers/crash-explorer.ts), followed by scan + plan + apply again,
 * converges to the uncrashed end state and restore still returns the
 * original; so does restore right after a crash, and restore crashed and run
 * again; a stale plan changes nothing.
 */
import { holdOpen } from "./helpers/holder.js";
import { describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { scanNode } from "../src/node/scan.js";
import { scanPath } from "../src/node/scan-path.js";
import { type PlanTarget, type RepairPlan, StalePlanError, applyRepair, nodeRepairFs, planRepair, restore } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import { COMBINATION, journalOrTarget } from "./helpers/crash-cases.js";
import { noSyncFs } from "./helpers/repair-scenarios.js";
import { LockHeldError, WriterOpenError } from "../src/repair/lock.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { tempDir } from "./helpers/node-wal.js";

const engine = createTsEngine();

async function tornNode(fault = "wal-torn-tail"): Promise<{ root: string; wal: string; original: Uint8Array }> {
  const root = tempDir();
  const generated = await generateDataDir(root, { size: "tiny", seed: 3 });
  await writeNodeMetadata(root, generated.partitions, { fault });
  const wal = join(root, "metadata/journal.wal");
  return { root, wal, original: readFileSync(wal) };
}

/** The node's one plan (docs/repair.md §6.2); its metadata target is the WAL cut. */
async function planNode(root: string): Promise<RepairPlan> {
  return planRepair(await scanPath(root, { engine, concurrency: 1 }));
}

const walTarget = (plan: RepairPlan): PlanTarget | undefined => plan.targets.find((target) => target.kind === "metadata");

const applyPlan = (plan: RepairPlan, fs: RepairFs = nodeRepairFs, checkWriters = false) => applyRepair(plan, { fs, engine, checkWriters });

/** scan → plan → apply on `noSyncFs` (fsync a no-op: the crash loops decide durability through the model, not the kernel). */
async function repairNoSync(root: string, fs: RepairFs = noSyncFs): Promise<boolean> {
  const plan = await planNode(root);
  if (walTarget(plan) === undefined) return false;
  await applyPlan(plan, fs);
  return true;
}

function restoreMetadata(root: string, fs: RepairFs = noSyncFs) {
  return restore(join(root, "metadata"), { engine, fs, checkWriters: false });
}

interface WalTree {
  root: string;
  /** Planned once: every run starts from the same bytes (the scan is the recovery's, not the act's). */
  plan: RepairPlan;
}

/** A torn node for a crash exploration: the model's root is the data dir (metadata/ and metadata.segscan/ both under it). */
function walTree(fault: string) {
  return {
    build: async (): Promise<WalTree> => {
      const { root } = await tornNode(fault);
      return { root, plan: await planNode(root) };
    },
    observe: (tree: WalTree) => metadataFiles(tree.root),
  };
}

/** Every file under metadata/ (not the preserve dir), by name. */
function metadataFiles(root: string): Record<string, string> {
  const dir = join(root, "metadata");
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString("hex")]),
  );
}

/** Where the WAL cut is explored: each point that writes the journal or changes metadata/, at the two ends of the durability model. */
const walReach: Pick<CrashExploration<WalTree>, "choices" | "points"> = {
  choices: COMBINATION.choices,
  points: (tree, point) => journalOrTarget(join(tree.root, "metadata"), point),
};

describe.each(["wal-torn-tail", "wal-zero-tail"])("WAL torn-tail cut (%s)", (fault) => {
  it("apply cuts to the proven prefix, the node scans clean, restore returns every byte", async () => {
    const { root, wal, original } = await tornNode(fault);
    const before = await scanNode(root, { engine });
    expect(before.verdict).toBe("repairable");
    const plan = await planNode(root);
    const cut = walTarget(plan)!.steps[0]!;
    expect(cut).toMatchObject({ kind: "truncate", role: "wal", file: wal });
    const result = await applyPlan(plan);
    expect(readFileSync(wal).length).toBe(cut.kind === "truncate" ? cut.toSize : -1);
    expect(result.targets[0]!.steps[0]!.preserved === null).toBe(fault === "wal-zero-tail");
    expect((await scanNode(root, { engine })).verdict).toBe("clean");
    const restored = await restore(join(root, "metadata"), { engine });
    expect(restored.restored).toBe(true);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
  });

  // The cut is a truncate, a kind of the step table (test/step-kinds-crash.test.ts: both of its journal shapes, every
  // point, every persistence choice); here where the plan differs from it (helpers/crash-cases.ts `COMBINATION`).
  it("a crash at every point that writes the journal or metadata/ (process crash; power cut keeping only what was fsynced), then scan + plan + apply again: the uncrashed end state, restore returns every byte; or restore right away: every original byte, then the cut still converges", async () => {
    const report = await exploreCrashes({
      ...walTree(fault),
      ...walReach,
      act: (fs, tree) => applyPlan(tree.plan, fs),
      recover: (tree) => repairNoSync(tree.root),
      async verify(tree, { label }) {
        expect((await scanNode(tree.root, { engine })).verdict, label).toBe("clean");
      },
      restore: (tree) => restoreMetadata(tree.root),
      also: [
        {
          name: "restore right away",
          recover: (tree) => restoreMetadata(tree.root),
          async verify(tree, { label, actEnd, before, reference }) {
            expect(reference, `${label}: the restored state`).toEqual(before);
            await repairNoSync(tree.root);
            expect(metadataFiles(tree.root), `${label}: the cut after the restore`).toEqual(actEnd);
          },
        },
      ],
    });
    expect(report.steps).toBeGreaterThan(5);
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it("a crash at every such point of restoring the cut, then restore again: every original byte; one more restore is a no-op", async () => {
    const tree = walTree(fault);
    const report = await exploreCrashes({
      ...tree,
      ...walReach,
      async build() {
        const built = await tree.build();
        await repairNoSync(built.root);
        return built;
      },
      act: (fs, built) => restoreMetadata(built.root, fs),
      recover: (built) => restoreMetadata(built.root),
      async verify(built, { label }) {
        expect((await restoreMetadata(built.root)).restored, label).toBe(false);
      },
    });
    expect(report.steps).toBeGreaterThan(3);
  });
});

describe("refusals", () => {
  it("a held lock in metadata.segscan/ refuses the cut (one writer at a time) and nothing changes", async () => {
    const { root, wal, original } = await tornNode();
    const plan = await planNode(root);
    const preserveDir = walTarget(plan)!.preserveDir;
    expect(preserveDir).toBe(join(root, "metadata.segscan"));
    mkdirSync(preserveDir, { recursive: true });
    const lockInfo = { pid: 999_999, host: "elsewhere", started: new Date().toISOString(), command: "segscan repair" };
    writeFileSync(join(preserveDir, "lock"), `${JSON.stringify(lockInfo)}\n`);
    await expect(applyPlan(plan)).rejects.toBeInstanceOf(LockHeldError);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
  });

  it("a plan whose WAL changed since the scan is refused and nothing changes", async () => {
    const { root, wal } = await tornNode();
    const plan = await planNode(root);
    appendFileSync(wal, new Uint8Array(10));
    const changed = readFileSync(wal);
    await expect(applyPlan(plan)).rejects.toBeInstanceOf(StalePlanError);
    expect(Buffer.compare(readFileSync(wal), changed)).toBe(0);
  });

  it("no cut is planned for interior damage, a gap, or a clean WAL", async () => {
    for (const fault of ["wal-interior-damage", "wal-gap", undefined]) {
      const root = tempDir();
      const generated = await generateDataDir(root, { size: "tiny", seed: 3 });
      await writeNodeMetadata(root, generated.partitions, fault === undefined ? {} : { fault });
      expect(walTarget(await planNode(root))).toBeUndefined();
    }
  });

  it("a torn tail beside a refused WAL finding is not cut (the WAL as a whole is refused)", async () => {
    const { root, wal } = await tornNode("wal-gap");
    const bytes = readFileSync(wal);
    writeFileSync(wal, Buffer.concat([bytes, Buffer.alloc(300)]));
    const node = await scanNode(root, { engine });
    expect(node.metadata.wal!.findings.map((f) => f.code).sort()).toEqual(["WalGap", "WalTornTail"]);
    const plan = await planNode(root);
    expect(walTarget(plan)).toBeUndefined();
    expect(plan.leftAlone).toContainEqual(expect.objectContaining({ path: wal, code: "WalTornTail", why: "not-repairable" }));
  });
});

describe.runIf(process.platform === "linux")("the WAL cut and a process writing the WAL (Linux /proc)", () => {
  it("refuses while another process has journal.wal open for writing, changing nothing; a reader does not stop it", async () => {
    const { root, wal, original } = await tornNode();
    const before = metadataFiles(root);
    const writer = await holdOpen(wal, "r+");
    try {
      const error = await applyPlan(await planNode(root), nodeRepairFs, true).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WriterOpenError);
      expect((error as Error).message).toContain(`pid ${writer.pid} has ${wal} open O_RDWR`);
      expect(metadataFiles(root)).toEqual(before);
      expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
    } finally {
      writer.stop();
    }
    const reader = await holdOpen(wal, "r");
    try {
      await applyPlan(await planNode(root), nodeRepairFs, true);
      expect((await scanNode(root, { engine })).verdict).toBe("clean");
    } finally {
      reader.stop();
    }
  });
});
