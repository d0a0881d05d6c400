/**
 * docs/repair.md §6.5 crash safety of salvage, explored like every repair kind
 * (helpers/crash-explorer.ts: the process crash, and power cuts of the
 * durability model keeping any prefix of each file's and directory's unsynced
 * operations) on every shape of the salvage plan (helpers/salvage-scenarios.ts):
 * - a crash at every step of apply, then scan and salvage again (or repair,
 *   when the crash left an index-less segment): the uncrashed end state, which
 *   scans clean; restore then returns every byte;
 * - a crash at every step of apply, then restore right away: every byte; a
 *   salvage after that still reaches the uncrashed end state;
 * - a crash at every step of restore, then restore again: every byte.
 */
import { describe, expect, it } from "vitest";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import { type PartitionTree, applyPlan, buildScenario, restoreNoSync, scan, snapshot } from "./helpers/repair-scenarios.js";
import {
  type PlannedSalvageTree,
  SALVAGEABLE,
  type SalvageScenario,
  plannedSalvageTree,
  salvageOrRepairNoSync,
} from "./helpers/salvage-scenarios.js";
import { dirname } from "node:path";

function crashedSalvage(scenario: SalvageScenario): CrashExploration<PlannedSalvageTree> {
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
    renames: "independent",
  };
}

function restoreAfterCrashedSalvage(scenario: SalvageScenario): CrashExploration<PlannedSalvageTree> {
  return {
    build: () => plannedSalvageTree(scenario),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyPlan(tree.plan, fs),
    recover: (tree) => restoreNoSync(tree.dir),
    async verify(tree, { label, actEnd }) {
      await salvageOrRepairNoSync(tree.dir, scenario);
      expect(snapshot(tree.dir), `${label}: salvage after the restore`).toEqual(actEnd);
    },
    renames: "independent",
  };
}

function crashedRestore(scenario: SalvageScenario): CrashExploration<PartitionTree> {
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
  };
}

describe.each(SALVAGEABLE)("salvage and crashes: $name", (scenario) => {
  it("a crash at every step k of the salvage (process crash; power cuts), then scan and salvage (or repair) again: the uncrashed end state, clean with the lost offsets as gaps; restore returns every byte", async () => {
    const report = await exploreCrashes(crashedSalvage(scenario));
    expect(report.steps).toBeGreaterThan(5);
    expect(report.states).toBeGreaterThan(report.runs);
  });
});

/**
 * The restore side on the shapes whose steps touch more than the log (CI time:
 * each exploration recovers from a few hundred crash states; the log step
 * alone is the first step of each of these too).
 */
describe.each(SALVAGEABLE.filter((scenario) => scenario.steps.length > 1))("restoring a salvage and crashes: $name", (scenario) => {
  it("a crash at every step k of the salvage, then restore right away: every byte; a salvage after it still converges", async () => {
    await exploreCrashes(restoreAfterCrashedSalvage(scenario));
  });

  it("a crash at every step k of restoring a salvage, then restore again: every byte; one more restore is a no-op", async () => {
    const report = await exploreCrashes(crashedRestore(scenario));
    expect(report.steps).toBeGreaterThan(3);
  });
});
