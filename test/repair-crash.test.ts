/**
 * docs/repair.md §6.2 crash safety: a crash at any mutating step of apply, followed by
 * scan + plan + apply again, converges to the same end state as an uncrashed
 * apply, nothing is lost, and restore still returns the original bytes.
 * The matrix runs twice: once where a crash only stops the process (every
 * write reached the file), and once on the durability model
 * (helpers/repair-durability.ts) where a crash LOSES every write not yet
 * fsynced, file data and directory entries alike, so a missing or misplaced
 * fsync fails it.
 * (Crashes during restore, and restore right after a crash: repair-crash-restore.test.ts.)
 */
import { dirname } from "node:path";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InjectedFault, createFaultyFs } from "../src/repair/index.js";
import {
  REPAIRABLE,
  buildScenario,
  crashReference,
  noSyncFs,
  repairNoSync,
  restoreNoSync,
  scan,
  snapshot,
  powerCutDuringApply,
} from "./helpers/repair-scenarios.js";
import { createDurabilityModelFs } from "./helpers/repair-durability.js";

describe.each(REPAIRABLE)("crash during apply: $name", (scenario) => {
  it("a crash at every step k, then scan + plan + apply again: the uncrashed end state; restore returns every byte", async () => {
    const ref = await crashReference(scenario);
    expect(ref.applySteps).toBeGreaterThan(5);
    for (let k = 1; k <= ref.applySteps; k++) {
      // A failing write may also be torn: half its bytes reach the file.
      for (const tornWriteFraction of ref.applyLog[k - 1]!.startsWith("write") ? [0, 0.5] : [0]) {
        const label = `k=${k} (${ref.applyLog[k - 1]}) torn=${tornWriteFraction}`;
        const { dir } = buildScenario(scenario);
        const before = snapshot(dir);
        await expect(repairNoSync(dir, scenario, createFaultyFs(noSyncFs, { failAt: k, tornWriteFraction })), label).rejects.toBeInstanceOf(
          InjectedFault,
        );

        await repairNoSync(dir, scenario);
        expect(snapshot(dir), label).toEqual(ref.end);
        expect((await scan(dir, scenario)).partitions[0]!.verdict, label).toBe("clean");
        await restoreNoSync(dir);
        expect(snapshot(dir), label).toEqual(before);
      }
    }
  });
});

describe.each(REPAIRABLE)("power cut during apply (unsynced writes lost): $name", (scenario) => {
  it("a crash at every step k keeps only what was fsynced; scan + plan + apply converges; restore returns every byte", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.applySteps; k++) {
      const label = `k=${k} (${ref.applyLog[k - 1]})`;
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await powerCutDuringApply(dir, scenario, k);

      await repairNoSync(dir, scenario);
      expect(snapshot(dir), label).toEqual(ref.end);
      expect((await scan(dir, scenario)).partitions[0]!.verdict, label).toBe("clean");
      await restoreNoSync(dir);
      expect(snapshot(dir), label).toEqual(before);
    }
  });
});

describe("repeated crashes", () => {
  const scenario = REPAIRABLE.find((s) => s.name.startsWith("three segments"))!;

  /**
   * Any sequence of crashed applies (`crashOnce` runs one, crashing at step
   * `k`), then a whole apply, ends where an uncrashed apply ends, and restore
   * undoes every run.
   */
  async function convergesAfterCrashes(crashOnce: (dir: string, crash: { k: number; torn: number }) => Promise<void>): Promise<void> {
    const ref = await crashReference(scenario);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ k: fc.integer({ min: 1, max: ref.applySteps }), torn: fc.constantFrom(0, 0.3, 0.9) }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (crashes) => {
          const { dir } = buildScenario(scenario);
          const before = snapshot(dir);
          for (const crash of crashes) await crashOnce(dir, crash);
          await repairNoSync(dir, scenario);
          expect(snapshot(dir)).toEqual(ref.end);
          await restoreNoSync(dir);
          expect(snapshot(dir)).toEqual(before);
        },
      ),
      { numRuns: 40 },
    );
  }

  /** Runs one apply that may crash; true when it did. */
  const crashedApply = (dir: string, fs: Parameters<typeof repairNoSync>[2]): Promise<boolean> =>
    repairNoSync(dir, scenario, fs).then(
      () => false,
      (error: unknown) => {
        if (!(error instanceof InjectedFault)) throw error;
        return true;
      },
    );

  it("any sequence of crashed applies, then a whole one, converges; restore undoes every run", async () => {
    // A later crash point may lie past the end of a run that has less left to do: that run just finishes.
    await convergesAfterCrashes(async (dir, crash) => {
      await crashedApply(dir, createFaultyFs(noSyncFs, { failAt: crash.k, tornWriteFraction: crash.torn }));
    });
  });

  it("any sequence of power cuts (unsynced writes lost), then a whole apply, converges; restore undoes every run", async () => {
    await convergesAfterCrashes(async (dir, crash) => {
      const model = createDurabilityModelFs(dirname(dir));
      if (await crashedApply(dir, createFaultyFs(model, { failAt: crash.k, tornWriteFraction: crash.torn }))) model.crash();
    });
  });
});
