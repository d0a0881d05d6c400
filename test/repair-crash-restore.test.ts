/**
 * docs/repair.md §6.2 crash safety, restore side: restore right after a crashed apply
 * returns the original bytes, and a crash at any step of restore followed by
 * restore again does too. Each matrix also runs on the durability model
 * (helpers/repair-durability.ts), where a crash loses every write not yet
 * fsynced (file data and directory entries).
 */
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { InjectedFault, createFaultyFs } from "../src/repair/index.js";
import {
  REPAIRABLE,
  buildScenario,
  crashReference,
  noSyncFs,
  repairNoSync,
  restoreNoSync,
  snapshot,
  powerCutDuringApply,
} from "./helpers/repair-scenarios.js";
import { createDurabilityModelFs } from "./helpers/repair-durability.js";

describe.each(REPAIRABLE)("restore and crashes: $name", (scenario) => {
  it("a crash at every step k of apply, then restore right away: the original bytes; then repair still converges", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.applySteps; k++) {
      const label = `k=${k} (${ref.applyLog[k - 1]})`;
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await expect(
        repairNoSync(dir, scenario, createFaultyFs(noSyncFs, { failAt: k, tornWriteFraction: 0.5 })),
        label,
      ).rejects.toBeInstanceOf(InjectedFault);
      await restoreNoSync(dir);
      expect(snapshot(dir), label).toEqual(before);
      await repairNoSync(dir, scenario);
      expect(snapshot(dir), label).toEqual(ref.end);
    }
  });

  it("a crash at every step k of restore, then restore again: the original bytes; one more restore is a no-op", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.restoreSteps; k++) {
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await repairNoSync(dir, scenario);
      await expect(restoreNoSync(dir, createFaultyFs(noSyncFs, { failAt: k, tornWriteFraction: 0.5 })), `k=${k}`).rejects.toBeInstanceOf(
        InjectedFault,
      );
      // (A crash at the very last step, the fsync after renaming the journal, leaves nothing to redo.)
      await restoreNoSync(dir);
      expect(snapshot(dir), `k=${k}`).toEqual(before);
      expect((await restoreNoSync(dir)).restored).toBe(false);
    }
  });

  it("power cut (unsynced writes lost) at every step k of apply, then restore: the original bytes; then repair converges", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.applySteps; k++) {
      const label = `k=${k} (${ref.applyLog[k - 1]})`;
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await powerCutDuringApply(dir, scenario, k);
      await restoreNoSync(dir);
      expect(snapshot(dir), label).toEqual(before);
      await repairNoSync(dir, scenario);
      expect(snapshot(dir), label).toEqual(ref.end);
    }
  });

  it("power cut (unsynced writes lost) at every step k of restore, then restore again: the original bytes", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.restoreSteps; k++) {
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await repairNoSync(dir, scenario);
      const model = createDurabilityModelFs(dirname(dir));
      await expect(restoreNoSync(dir, createFaultyFs(model, { failAt: k, tornWriteFraction: 0.5 })), `k=${k}`).rejects.toBeInstanceOf(
        InjectedFault,
      );
      model.crash();
      await restoreNoSync(dir);
      expect(snapshot(dir), `k=${k}`).toEqual(before);
      expect((await restoreNoSync(dir)).restored).toBe(false);
    }
  });
});
