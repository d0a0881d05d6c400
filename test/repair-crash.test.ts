/**
 * docs/repair.md §6.2 crash safety of the repair plans that combine steps or
 * shapes beyond the step table's cases (test/step-kinds-crash.test.ts), on
 * every other repairable scenario (helpers/repair-scenarios.ts). Every crash
 * point of apply and of restore is explored by helpers/crash-explorer.ts with
 * the process crash (every write reached the file, a failing write possibly
 * torn) and the power cut keeping only what was fsynced; the partial
 * persistence of each step kind's unsynced ops is explored by its case in the
 * step table (helpers/crash-cases.ts says why that suffices):
 * - a crash at every step of apply, then scan + plan + apply again: the
 *   uncrashed end state, which scans clean, nothing lost; restore then
 *   returns every byte;
 * - the same crash states, then restore right away: the original bytes; then
 *   repair still converges;
 * - a crash at every step of restore, then restore again: the original
 *   bytes; one more restore is a no-op;
 * - any sequence of crashed applies (process crashes, power cuts with any
 *   persistence mix), then a whole apply, converges, and restore undoes
 *   every run.
 */
import { dirname } from "node:path";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InjectedFault, createFaultyFs } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { COMBINATION, crashedRepair, crashedRepairRestore, inStepKindTable } from "./helpers/crash-cases.js";
import { crashOnce, exploreCrashes } from "./helpers/crash-explorer.js";
import { REPAIRABLE, buildScenario, crashReference, noSyncFs, repairNoSync, restoreNoSync, snapshot } from "./helpers/repair-scenarios.js";

describe.each(REPAIRABLE.filter((scenario) => !inStepKindTable(scenario)))("crashes: $name", (scenario) => {
  it("a crash at every step k of apply (process crash; power cut), then scan + plan + apply again: the uncrashed end state, restore returns every byte; or restore right away: the original bytes, and repair after it converges", async () => {
    const report = await exploreCrashes(crashedRepair(scenario, COMBINATION));
    expect(report.steps).toBeGreaterThan(5);
    // More crash states than crash points: the power cut reaches states the process crash does not.
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it("a crash at every step k of restore (process crash; power cut), then restore again: the original bytes; one more restore is a no-op", async () => {
    const report = await exploreCrashes(crashedRepairRestore(scenario, COMBINATION));
    expect(report.steps).toBeGreaterThan(3);
  });
});

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
