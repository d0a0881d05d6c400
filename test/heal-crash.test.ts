/**
 * docs/heal.md crash safety, explored like every repair kind
 * (helpers/crash-explorer.ts: the process crash, and power cuts of the
 * durability model) on heals of a generated 3-node cluster's replicas:
 * - a crash at every step of the heal, then the heal again: the uncrashed end
 *   state (the peer's bytes), clean, with no salvage loss left reported;
 *   restore then returns every byte;
 * - the same crash states, then restore right away: every byte; a heal after
 *   it still converges;
 * - a crash at every step of restoring a heal, then restore again: every byte.
 */
import { describe, expect, it } from "vitest";
import { forget } from "../src/repair/index.js";
import { scanPartition } from "../src/node/scan-path.js";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import { COMBINATION } from "./helpers/crash-cases.js";
import {
  type HealFault,
  type HealPair,
  applyHeal,
  healNoSync,
  healPair,
  healPlan,
  restoreHeal,
  salvageLocal,
  segmentFiles,
} from "./helpers/heal-cluster.js";
import { engine, snapshot } from "./helpers/repair-scenarios.js";
import type { RepairPlan } from "../src/repair/index.js";

interface Shape {
  name: string;
  fault: HealFault;
  /** Salvage the damaged replica first (its run closed by forget, so restore undoes the heal alone). */
  salvaged: boolean;
}

/**
 * A heal combines two replaces (the log spliced from the peer's pieces, the
 * index rebuilt), each explored with every persistence choice by its case in
 * the step table (test/step-kinds-crash.test.ts); a heal is explored where it
 * differs from them (`COMBINATION`, helpers/crash-cases.ts: every crash point
 * that writes the journal or changes the replica, with the process crash and
 * the power cut), and a recovery here plans the heal again (both replicas
 * scanned deep, the peer's proof walked), about ten times a repair's re-plan.
 */
const reach = COMBINATION;
/** CI time: an exploration recovers from a few hundred crash states. */
const EXPLORATION_TIMEOUT_MS = 600_000;

const SHAPES: Shape[] = [
  { name: "a torn tail", fault: "torn-on-one", salvaged: false },
  { name: "a salvaged gap", fault: "interior-on-one", salvaged: true },
];

interface PlannedPair extends HealPair {
  plan: RepairPlan;
}

async function planned(shape: Shape): Promise<PlannedPair> {
  const pair = await healPair(shape.fault);
  if (shape.salvaged) {
    await salvageLocal(pair);
    await forget(pair.dir);
  }
  return { ...pair, plan: await healPlan(pair) };
}

async function expectHealed(pair: HealPair, label: string): Promise<void> {
  expect(segmentFiles(pair.dir), label).toEqual(segmentFiles(pair.peer));
  const partition = (await scanPartition(pair.dir, { engine, verify: "full" })).partitions[0]!;
  expect(partition.verdict, label).toBe("clean");
  expect(partition.findings, label).toEqual([]);
}

/**
 * The heal crashed at every step. From each crash state: the heal again (the
 * peer's bytes, clean), restore then returns every byte; and restore right
 * away (every byte), after which the heal still converges.
 */
function crashedHeal(shape: Shape): CrashExploration<PlannedPair> {
  return {
    build: () => planned(shape),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyHeal(tree.plan, fs),
    recover: (tree) => healNoSync(tree),
    verify: (tree, { label }) => expectHealed(tree, label),
    restore: (tree) => restoreHeal(tree.dir),
    also: [
      {
        name: "restore right away",
        recover: (tree) => restoreHeal(tree.dir),
        async verify(tree, { label, actEnd, before, reference }) {
          expect(reference, `${label}: the restored state`).toEqual(before);
          await healNoSync(tree);
          expect(snapshot(tree.dir), `${label}: heal after the restore`).toEqual(actEnd);
        },
      },
    ],
    renames: "independent",
    ...reach,
  };
}

function crashedRestore(shape: Shape): CrashExploration<HealPair> {
  return {
    async build() {
      const pair = await planned(shape);
      await applyHeal(pair.plan);
      return pair;
    },
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => restoreHeal(tree.dir, fs),
    recover: (tree) => restoreHeal(tree.dir),
    async verify(tree, { label }) {
      expect((await restoreHeal(tree.dir)).restored, label).toBe(false);
    },
    renames: "independent",
    ...reach,
  };
}

describe.each(SHAPES)("heal and crashes: $name", (shape) => {
  it(
    "a crash at every step k of the heal (process crash; power cuts), then heal again: the peer's bytes, clean, no loss reported, restore returns every byte; or restore right away: every byte, and a heal after it converges",
    async () => {
      const report = await exploreCrashes(crashedHeal(shape));
      expect(report.steps).toBeGreaterThan(5);
    },
    EXPLORATION_TIMEOUT_MS,
  );

  it(
    "a crash at every step k of restoring a heal, then restore again: every byte; one more restore is a no-op",
    async () => {
      const report = await exploreCrashes(crashedRestore(shape));
      expect(report.steps).toBeGreaterThan(3);
    },
    EXPLORATION_TIMEOUT_MS,
  );
});
