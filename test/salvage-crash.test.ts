/**
 * docs/repair.md §6.5 crash safety of salvage on every shape of the salvage
 * plan (helpers/salvage-scenarios.ts) beyond the step table's salvage case
 * (test/step-kinds-crash.test.ts: the log step alone, with every persistence
 * choice). Every crash point is explored by helpers/crash-explorer.ts with
 * the process crash and the power cut keeping only what was fsynced (each
 * step kind's partial persistence is explored by its case in the step table:
 * helpers/crash-cases.ts says why that suffices):
 * - a crash at every step of apply, then scan and salvage again (or repair,
 *   when the crash left an index-less segment): the uncrashed end state, which
 *   scans clean with the lost offsets as gaps; restore then returns every byte;
 * - the same crash states, then restore right away: every byte; a salvage
 *   after that still reaches the uncrashed end state;
 * - a crash at every step of restore, then restore again: every byte.
 */
import { describe, expect, it } from "vitest";
import { COMBINATION, crashedSalvage, crashedSalvageRestore, inStepKindTable } from "./helpers/crash-cases.js";
import { exploreCrashes } from "./helpers/crash-explorer.js";
import { SALVAGEABLE } from "./helpers/salvage-scenarios.js";

describe.each(SALVAGEABLE.filter((scenario) => !inStepKindTable(scenario)))("salvage and crashes: $name", (scenario) => {
  it("a crash at every step k of the salvage (process crash; power cut), then scan and salvage (or repair) again: the uncrashed end state, clean with the lost offsets as gaps, restore returns every byte; or restore right away: every byte, and a salvage after it converges", async () => {
    const report = await exploreCrashes(crashedSalvage(scenario, COMBINATION));
    expect(report.steps).toBeGreaterThan(5);
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it("a crash at every step k of restoring a salvage (process crash; power cut), then restore again: every byte; one more restore is a no-op", async () => {
    const report = await exploreCrashes(crashedSalvageRestore(scenario, COMBINATION));
    expect(report.steps).toBeGreaterThan(3);
  });
});
