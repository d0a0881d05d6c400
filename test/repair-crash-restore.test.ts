/**
 * docs/repair.md §6.2 crash safety, restore side: restore right after a crashed apply
 * returns the original bytes, and a crash at any step of restore followed by
 * restore again does too.
 */
import { describe, expect, it } from "vitest";
import { InjectedFault, createFaultyFs } from "../src/repair/index.js";
import {
  REPAIRABLE, buildScenario, crashReference, noSyncFs, repairNoSync, restoreNoSync, snapshot,
} from "./helpers/repair-scenarios.js";

describe.each(REPAIRABLE)("restore and crashes: $name", (scenario) => {
  it("a crash at every step k of apply, then restore right away: the original bytes; then repair still converges", async () => {
    const ref = await crashReference(scenario);
    for (let k = 1; k <= ref.applySteps; k++) {
      const label = `k=${k} (${ref.applyLog[k - 1]})`;
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      await expect(repairNoSync(dir, scenario, createFaultyFs(noSyncFs, { failAt: k, tornWriteFraction: 0.5 })), label)
        .rejects.toBeInstanceOf(InjectedFault);
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
      await expect(restoreNoSync(dir, createFaultyFs(noSyncFs, { failAt: k, tornWriteFraction: 0.5 })), `k=${k}`)
        .rejects.toBeInstanceOf(InjectedFault);
      // (A crash at the very last step, the fsync after renaming the journal, leaves nothing to redo.)
      await restoreNoSync(dir);
      expect(snapshot(dir), `k=${k}`).toEqual(before);
      expect((await restoreNoSync(dir)).restored).toBe(false);
    }
  });
});
