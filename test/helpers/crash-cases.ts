/**
 * The crash explorations the crash test files share (helpers/crash-explorer.ts
 * runs them), and the table of step-kind cases (test/step-kinds-crash.test.ts).
 *
 * Cost and coverage (docs/repair.md §6.2): every step of every kind ends
 * with its change fsynced and its `done` journaled, so at any crash point
 * what is not yet durable belongs to the one step under way (its copy, its
 * intent, its change). Which prefix of those pending ops a power cut keeps
 * is therefore a property of the step kind, not of the plan around it:
 * - each step kind (in each of its journal shapes: a residue copied or
 *   recorded by length, a replaced file kept or absent, a salvage's
 *   log-ranges rewrite, a sweep, an evidence copy) is explored once, at every
 *   crash point, with every persistence choice (`defaultChoices`: the
 *   exhaustive prefix combinations and the seeded torn mixes), through the
 *   table `STEP_KIND_CASES`;
 * - the plans that combine kinds (the other repair scenarios, salvage, heal)
 *   are explored where they differ from their kinds (`COMBINATION`): at
 *   every crash point that writes the journal or changes the target dir
 *   (which steps are done, which are under way, what the re-plan sees),
 *   with the two ends of the model (the process crash, where every write
 *   reached the page cache, and the power cut keeping only what was
 *   fsynced). The points left out take the lock and copy old bytes into the
 *   preserve dir before any intent: the target is untouched there, so the
 *   run after the crash plans what the uncrashed run planned, and what such
 *   a crash leaves in the preserve dir is each kind's own, explored in the
 *   table.
 * Each exploration of an act serves both ways out of its crash states (one
 * sweep of the act, `also` in crash-explorer.ts): run the command again, or
 * restore right away.
 */
import { cpSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { expect } from "vitest";
import { scanPath } from "../../src/node/scan-path.js";
import type { PlanStep, RepairFs, RepairPlan } from "../../src/repair/index.js";
import { JOURNAL_NAME, applyRepair, planRepair, restore } from "../../src/repair/index.js";
import type { CrashExploration, CrashPoint, CrashTree } from "./crash-explorer.js";
import { tinyNode } from "./metadata-node.js";
import { tempDir } from "./node-wal.js";
import type { PersistenceChoice, PendingTarget } from "./repair-durability.js";
import {
  type PartitionTree,
  REPAIRABLE,
  type Scenario,
  applyPlan,
  buildScenario,
  engine,
  noSyncFs,
  partitionTree,
  plannedPartitionTree,
  repairNoSync,
  restoreNoSync,
  scan,
  snapshot,
} from "./repair-scenarios.js";
import { SALVAGEABLE, type SalvageScenario, plannedSalvageTree, salvageOrRepairNoSync } from "./salvage-scenarios.js";

/** Which crash states an exploration reaches (crash-explorer.ts `choices` and `points`); empty: every one. */
export interface Reach<T extends CrashTree> {
  choices?: (k: number, torn: number, pending: readonly PendingTarget[]) => PersistenceChoice[];
  points?: (tree: T, point: CrashPoint) => boolean;
}

/** The process crash and the power cut with nothing unsynced persisted (see the file comment). */
export const CRASH_EXTREMES = (): PersistenceChoice[] => ["all", "none"];

/** A step that writes a journal, or changes something in `dir` (the target, not its preserve dir `<dir>.segscan`). */
export const journalOrTarget = (dir: string, point: CrashPoint): boolean =>
  point.paths.some((p) => p === dir || p.startsWith(`${dir}${sep}`) || basename(p) === JOURNAL_NAME);

/** Where a plan that combines step kinds differs from its kinds' own explorations (see the file comment). */
export const COMBINATION: Reach<CrashTree & { dir: string }> = {
  choices: CRASH_EXTREMES,
  points: (tree, point) => journalOrTarget(tree.dir, point),
};

/** A crash tree whose act applies a plan made once, in `build`. */
export interface PlannedCrashTree extends CrashTree {
  plan: RepairPlan;
}

/** The step kinds of a plan, in order. */
export const planKinds = (plan: RepairPlan): PlanStep["kind"][] => plan.targets.flatMap((target) => target.steps.map((step) => step.kind));

// ---------------------------------------------------------------------------
// repair (docs/repair.md §6.2)

/**
 * Apply crashed at every step. From each crash state: scan + plan + apply
 * again reaches the uncrashed end state, the scan is clean, and restore
 * returns every byte; and restore right away returns every byte, after which
 * repair still reaches the uncrashed end state.
 */
export function crashedRepair(scenario: Scenario, reach: Reach<PartitionTree> = {}): CrashExploration<PlannedCrashTree & PartitionTree> {
  return {
    build: () => plannedPartitionTree(scenario),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyPlan(tree.plan, fs),
    recover: (tree) => repairNoSync(tree.dir, scenario),
    async verify(tree, { label }) {
      expect((await scan(tree.dir, scenario)).partitions[0]!.verdict, label).toBe("clean");
    },
    restore: (tree) => restoreNoSync(tree.dir),
    also: [
      {
        name: "restore right away",
        recover: (tree) => restoreNoSync(tree.dir),
        async verify(tree, { label, actEnd, before, reference }) {
          expect(reference, `${label}: the restored state`).toEqual(before);
          await repairNoSync(tree.dir, scenario);
          expect(snapshot(tree.dir), `${label}: repair after the restore`).toEqual(actEnd);
        },
      },
    ],
    // Moves between directories link, fsync, unlink, fsync (repair/files.ts moveBetweenDirs): safe with independent halves.
    renames: "independent",
    ...reach,
  };
}

/** Restore (of an applied repair) crashed at every step; recovery: restore again (the original bytes); one more restore is a no-op. */
export function crashedRepairRestore(scenario: Scenario, reach: Reach<PartitionTree> = {}): CrashExploration<PartitionTree> {
  return {
    async build() {
      const tree = partitionTree(scenario);
      await repairNoSync(tree.dir, scenario);
      return tree;
    },
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => restoreNoSync(tree.dir, fs),
    recover: (tree) => restoreNoSync(tree.dir),
    async verify(tree, { label }) {
      expect((await restoreNoSync(tree.dir)).restored, label).toBe(false);
    },
    renames: "independent",
    ...reach,
  };
}

// ---------------------------------------------------------------------------
// salvage (docs/repair.md §6.5)

/**
 * Salvage crashed at every step. From each crash state: scan and salvage (or
 * repair) again reaches the uncrashed end state, which scans clean with the
 * lost offsets as gaps, and restore returns every byte; and (with
 * `restoreRightAway`) restore right away returns every byte, after which a
 * salvage still reaches the uncrashed end state.
 */
export function crashedSalvage(
  scenario: SalvageScenario,
  reach: Reach<PartitionTree> = {},
  restoreRightAway = true,
): CrashExploration<PlannedCrashTree & PartitionTree> {
  return {
    build: () => plannedSalvageTree(scenario),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyPlan(tree.plan, fs),
    recover: (tree) => salvageOrRepairNoSync(tree.dir, scenario),
    async verify(tree, { label }) {
      const partition = (await scan(tree.dir, { ...scenario, scanOptions: { verify: "full" } })).partitions[0]!;
      expect(partition.verdict, label).toBe("clean");
      const gaps = partition.segments.flatMap((segment) => segment.gaps.map((gap) => `${gap.expectedOffset}..${gap.foundOffset - 1n}`));
      expect(gaps, label).toEqual(scenario.lost);
    },
    restore: (tree) => restoreNoSync(tree.dir),
    ...(restoreRightAway
      ? {
          also: [
            {
              name: "restore right away",
              recover: (tree: PartitionTree) => restoreNoSync(tree.dir),
              async verify(tree: PartitionTree, { label, actEnd, before, reference }) {
                expect(reference, `${label}: the restored state`).toEqual(before);
                await salvageOrRepairNoSync(tree.dir, scenario);
                expect(snapshot(tree.dir), `${label}: salvage after the restore`).toEqual(actEnd);
              },
            },
          ],
        }
      : {}),
    renames: "independent",
    ...reach,
  };
}

/** Restoring an applied salvage crashed at every step; recovery: restore again (every byte); one more restore is a no-op. */
export function crashedSalvageRestore(scenario: SalvageScenario, reach: Reach<PartitionTree> = {}): CrashExploration<PartitionTree> {
  return {
    async build() {
      const { dir } = buildScenario(scenario);
      await salvageOrRepairNoSync(dir, scenario);
      return { root: dirname(dir), dir };
    },
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => restoreNoSync(tree.dir, fs),
    recover: (tree) => restoreNoSync(tree.dir),
    async verify(tree, { label }) {
      expect((await restoreNoSync(tree.dir)).restored, label).toBe(false);
    },
    renames: "independent",
    ...reach,
  };
}

// ---------------------------------------------------------------------------
// an offset file's evidence copy (docs/node.md N4, N7): a node plan

/** The partition of the generated node whose consumer offset file fails its checksum. */
const CORRUPT_OFFSET_PARTITION = "streams/1/topics/1/partitions/1";

/** Every file under `root` outside the preserve dirs, by path, as hex. */
export function nodeFiles(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (name.endsWith(".segscan")) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[path.slice(root.length + 1)] = readFileSync(path).toString("hex");
    }
  };
  walk(root);
  return out;
}

let corruptOffsetNode: Promise<string> | null = null;

/** A fresh copy of a tiny node whose consumer offset file fails its checksum, generated once per test file. */
async function corruptOffsetNodeCopy(): Promise<string> {
  corruptOffsetNode ??= tinyNode({ seed: 7, fault: "offset-corrupt" });
  const root = tempDir();
  cpSync(await corruptOffsetNode, root, { recursive: true });
  return root;
}

async function nodePlan(root: string): Promise<RepairPlan> {
  return planRepair(await scanPath(root, { engine, concurrency: 1 }), { clampOffsets: true });
}

const applyNodePlan = (plan: RepairPlan, fs: RepairFs = noSyncFs) => applyRepair(plan, { fs, engine, checkWriters: false });
const repairNode = async (root: string): Promise<void> => void (await applyNodePlan(await nodePlan(root)));
const restoreOffsets = (root: string, fs: RepairFs = noSyncFs) =>
  restore(join(root, CORRUPT_OFFSET_PARTITION), { engine, fs, checkWriters: false });

/**
 * The evidence copy crashed at every step (the model's root is the node's
 * data dir). From each crash state: the repair again keeps the evidence
 * (nothing else changes), and restore returns every byte; restore right away
 * returns every byte, after which the repair still converges.
 */
export function crashedEvidenceCopy(): CrashExploration<PlannedCrashTree> {
  return {
    async build() {
      const root = await corruptOffsetNodeCopy();
      return { root, plan: await nodePlan(root) };
    },
    observe: (tree) => nodeFiles(tree.root),
    act: (fs, tree) => applyNodePlan(tree.plan, fs),
    recover: (tree) => repairNode(tree.root),
    verify(tree, { label }) {
      expect(readdirSync(join(tree.root, `${CORRUPT_OFFSET_PARTITION}.segscan`)), label).toContain("offsets-consumers-7.evidence");
    },
    restore: (tree) => restoreOffsets(tree.root),
    also: [
      {
        name: "restore right away",
        recover: (tree) => restoreOffsets(tree.root),
        async verify(tree, { label, actEnd, before, reference }) {
          expect(reference, `${label}: the restored state`).toEqual(before);
          await repairNode(tree.root);
          expect(nodeFiles(tree.root), `${label}: the repair after the restore`).toEqual(actEnd);
        },
      },
    ],
    renames: "independent",
  };
}

/** Restore of an applied evidence copy crashed at every step; recovery: restore again; one more restore is a no-op. */
export function crashedEvidenceCopyRestore(): CrashExploration<CrashTree> {
  return {
    async build() {
      const root = await corruptOffsetNodeCopy();
      await repairNode(root);
      return { root };
    },
    observe: (tree) => nodeFiles(tree.root),
    act: (fs, tree) => restoreOffsets(tree.root, fs),
    recover: (tree) => restoreOffsets(tree.root),
    async verify(tree, { label }) {
      expect((await restoreOffsets(tree.root)).restored, label).toBe(false);
    },
    renames: "independent",
  };
}

// ---------------------------------------------------------------------------
// the table: each step kind, in each of its journal shapes, explored once with every persistence choice

export interface StepKindCase {
  /** The kind of the step table (src/repair/steps/index.ts) this case explores. */
  kind: PlanStep["kind"];
  /** Which of the kind's journal shapes. */
  shape: string;
  /** The repair or salvage scenario it runs on (its other explorations skip it), or null for a node plan. */
  scenario: string | null;
  /** Apply crashed at every step, with every persistence choice (both ways out). */
  apply(): CrashExploration<PlannedCrashTree>;
  /** Restore of the applied plan crashed at every step, with every persistence choice. */
  restore(): CrashExploration<CrashTree>;
}

const repairable = (name: string): Scenario => {
  const scenario = REPAIRABLE.find((s) => s.name === name);
  if (scenario === undefined) throw new Error(`no repair scenario named ${JSON.stringify(name)}`);
  return scenario;
};
const salvageable = (name: string): SalvageScenario => {
  const scenario = SALVAGEABLE.find((s) => s.name === name);
  if (scenario === undefined) throw new Error(`no salvage scenario named ${JSON.stringify(name)}`);
  return scenario;
};

const repairCase = (kind: PlanStep["kind"], shape: string, name: string): StepKindCase => ({
  kind,
  shape,
  scenario: name,
  apply: () => crashedRepair(repairable(name)),
  restore: () => crashedRepairRestore(repairable(name)),
});

export const STEP_KIND_CASES: readonly StepKindCase[] = [
  repairCase("truncate", "the residue copied into the preserve dir", "non-zero garbage tail"),
  repairCase("truncate", "an all-zero residue recorded by its length", "zero tail"),
  repairCase("replace", "a file rebuilt where there was none", "index-less segment (rebuilt index)"),
  repairCase("replace", "the old file kept in the preserve dir", "partial trailing index entry"),
  {
    kind: "replace",
    shape: "a salvage's log rewrite, its intent naming the lost ranges",
    scenario: "a non-tail segment's interior damage, its index kept (tail mode)",
    apply: () => crashedSalvage(salvageable("a non-tail segment's interior damage, its index kept (tail mode)")),
    restore: () => crashedSalvageRestore(salvageable("a non-tail segment's interior damage, its index kept (tail mode)")),
  },
  repairCase("move-aside", "files swept into the preserve dir (a move between directories)", "staging and orphan index sweep"),
  {
    kind: "evidence-copy",
    shape: "an offset file copied as evidence, nothing changed",
    scenario: null,
    apply: () => crashedEvidenceCopy(),
    restore: () => crashedEvidenceCopyRestore(),
  },
];

/** Whether a repair or salvage scenario is a case of the table (explored there with every persistence choice). */
export const inStepKindTable = (scenario: Scenario): boolean => STEP_KIND_CASES.some((c) => c.scenario === scenario.name);
