/**
 * docs/repair.md §6.2 crash safety, restore side: restore right after a crashed apply
 * returns the original bytes (and repair then still converges), and a crash
 * at any step of restore followed by restore again does too. Every crash point
 * is explored by helpers/crash-explorer.ts: the process crash, and power cuts
 * of the durability model keeping any prefix of each file's and directory's
 * unsynced operations.
 */
import { describe, expect, it } from "vitest";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import type { RenameHalves } from "./helpers/repair-durability.js";
import {
  type PartitionTree,
  type PlannedTree,
  REPAIRABLE,
  type Scenario,
  applyPlan,
  partitionTree,
  plannedPartitionTree,
  repairNoSync,
  restoreNoSync,
  snapshot,
} from "./helpers/repair-scenarios.js";

/** Apply crashed at every step; recovery: restore right away (the original bytes); then repair still converges. */
function restoreAfterCrashedApply(scenario: Scenario, renames: RenameHalves): CrashExploration<PlannedTree> {
  return {
    build: () => plannedPartitionTree(scenario),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyPlan(tree.plan, fs),
    recover: (tree) => restoreNoSync(tree.dir),
    async verify(tree, { label, actEnd }) {
      await repairNoSync(tree.dir, scenario);
      expect(snapshot(tree.dir), `${label}: repair after the restore`).toEqual(actEnd);
    },
    renames,
  };
}

/** Restore (of an applied repair) crashed at every step; recovery: restore again (the original bytes); one more restore is a no-op. */
function crashedRestore(scenario: Scenario, renames: RenameHalves): CrashExploration<PartitionTree> {
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
    renames,
  };
}

describe.each(REPAIRABLE)("restore and crashes: $name", (scenario) => {
  // Moves between directories link, fsync, unlink, fsync: explored with independent rename halves.
  const renames: RenameHalves = "independent";

  it(`a crash at every step k of apply (process crash; power cut keeping any prefix, rename halves ${renames}), then restore right away: the original bytes; then repair still converges`, async () => {
    const report = await exploreCrashes(restoreAfterCrashedApply(scenario, renames));
    expect(report.steps).toBeGreaterThan(5);
  });

  it(`a crash at every step k of restore (process crash; power cut keeping any prefix, rename halves ${renames}), then restore again: the original bytes; one more restore is a no-op`, async () => {
    const report = await exploreCrashes(crashedRestore(scenario, renames));
    expect(report.steps).toBeGreaterThan(3);
  });
});
