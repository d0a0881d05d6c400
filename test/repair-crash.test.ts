/**
 * docs/repair.md §6.2 crash safety: a crash at any mutating step of apply, followed by
 * scan + plan + apply again, converges to the same end state as an uncrashed
 * apply, nothing is lost, and restore still returns the original bytes.
 * Every crash point is explored by helpers/crash-explorer.ts in both crash
 * models: the process crash (every write reached the file, a failing write
 * possibly torn) and the power cut of the durability model
 * (helpers/repair-durability.ts), where any prefix of each file's and each
 * directory's unsynced operations may have persisted, so a missing or
 * misplaced fsync fails it.
 * (Crashes during restore, and restore right after a crash: repair-crash-restore.test.ts.)
 */
import { dirname } from "node:path";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InjectedFault, createFaultyFs } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { type CrashExploration, crashOnce, exploreCrashes } from "./helpers/crash-explorer.js";
import type { RenameHalves } from "./helpers/repair-durability.js";
import {
  type PlannedTree,
  REPAIRABLE,
  type Scenario,
  buildScenario,
  crashReference,
  applyPlan,
  noSyncFs,
  plannedPartitionTree,
  repairNoSync,
  restoreNoSync,
  scan,
  snapshot,
} from "./helpers/repair-scenarios.js";

/** Apply crashed at every step; recovery: scan + plan + apply again; then the scan is clean and restore returns every byte. */
function crashedApply(scenario: Scenario, renames: RenameHalves): CrashExploration<PlannedTree> {
  return {
    build: () => plannedPartitionTree(scenario),
    observe: (tree) => snapshot(tree.dir),
    act: (fs, tree) => applyPlan(tree.plan, fs),
    recover: (tree) => repairNoSync(tree.dir, scenario),
    async verify(tree, { label }) {
      expect((await scan(tree.dir, scenario)).partitions[0]!.verdict, label).toBe("clean");
    },
    restore: (tree) => restoreNoSync(tree.dir),
    renames,
  };
}

describe.each(REPAIRABLE)("crash during apply: $name", (scenario) => {
  // Moves between directories link, fsync, unlink, fsync (repair/files.ts moveBetweenDirs): explored with independent halves.
  const renames: RenameHalves = "independent";

  it(`a crash at every step k (process crash; power cut keeping any prefix of the unsynced ops, rename halves ${renames}), then scan + plan + apply again: the uncrashed end state; restore returns every byte`, async () => {
    const report = await exploreCrashes(crashedApply(scenario, renames));
    expect(report.steps).toBeGreaterThan(5);
    // More crash states than crash points: the partial persistence choices reach states "none" and "all" do not.
    expect(report.states).toBeGreaterThan(report.runs);
  });
});

/**
 * A sweep moves a file between two directories. A single rename persists its
 * two halves with two directories, and a power cut before the target's fsync
 * could keep only the removal (the file under neither name): found by this
 * model with independent rename halves. The runner moves by link → fsync the
 * target → unlink → fsync the source instead, so the worst a crash leaves is
 * the file under both names; these explorations run with independent halves
 * for every scenario, and this one pins the scenario that found it.
 */
describe.each(REPAIRABLE.filter((scenario) => scenario.movesAcrossDirectories))(
  "moves across directories, crash during apply: $name",
  (scenario) => {
    it("with independent rename halves no swept file is ever lost", async () => {
      await exploreCrashes(crashedApply(scenario, "independent"));
    });
  },
);

describe("repeated crashes", () => {
  const scenario = REPAIRABLE.find((s) => s.name.startsWith("three segments"))!;

  /**
   * Any sequence of crashed applies (`crashOnce` runs one, crashing at step
   * `k`), then a whole apply, ends where an uncrashed apply ends, and restore
   * undoes every run.
   */
  async function convergesAfterCrashes<C extends { k: number; torn: number }>(
    crash: fc.Arbitrary<C>,
    crashOnce: (dir: string, crash: C) => Promise<void>,
  ): Promise<void> {
    const ref = await crashReference(scenario);
    await fc.assert(
      fc.asyncProperty(fc.array(crash, { minLength: 1, maxLength: 4 }), async (crashes) => {
        const { dir } = buildScenario(scenario);
        const before = snapshot(dir);
        for (const one of crashes) await crashOnce(dir, one);
        await repairNoSync(dir, scenario);
        expect(snapshot(dir)).toEqual(ref.end);
        await restoreNoSync(dir);
        expect(snapshot(dir)).toEqual(before);
      }),
      { numRuns: 40 },
    );
  }

  it("any sequence of crashed applies, then a whole one, converges; restore undoes every run", async () => {
    const steps = (await crashReference(scenario)).applySteps;
    // A later crash point may lie past the end of a run that has less left to do: that run just finishes.
    await convergesAfterCrashes(
      fc.record({ k: fc.integer({ min: 1, max: steps }), torn: fc.constantFrom(0, 0.3, 0.9) }),
      async (dir, crash) => {
        const fs: RepairFs = createFaultyFs(noSyncFs, { failAt: crash.k, tornWriteFraction: crash.torn });
        await repairNoSync(dir, scenario, fs).catch((error: unknown) => {
          if (!(error instanceof InjectedFault)) throw error;
        });
      },
    );
  });

  it("any sequence of power cuts (any prefix of the unsynced ops persisted), then a whole apply, converges; restore undoes every run", async () => {
    const steps = (await crashReference(scenario)).applySteps;
    await convergesAfterCrashes(
      fc.record({
        k: fc.integer({ min: 1, max: steps }),
        torn: fc.constantFrom(0, 0.3, 0.9),
        choice: fc.oneof(fc.constantFrom("none" as const, "all" as const), fc.record({ seed: fc.nat() })),
      }),
      async (dir, crash) => {
        // This scenario sweeps a staging file: moved by link + unlink, safe under independent rename halves.
        await crashOnce(dirname(dir), (fs) => repairNoSync(dir, scenario, fs), crash, "independent");
      },
    );
  });
});
