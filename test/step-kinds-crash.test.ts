/**
 * docs/repair.md §6.2 crash safety, per step kind: every kind of the step
 * table (src/repair/steps/index.ts), in each of its journal shapes, applied
 * and restored with a crash at every mutating step, in both crash models
 * (helpers/crash-explorer.ts: the process crash, a failing write possibly
 * torn; and every power cut of the durability model, helpers/repair-durability.ts,
 * keeping any prefix of each file's and directory's unsynced operations), so
 * a missing or misplaced fsync in any kind fails here:
 * - a crash at every step of apply, then the same command again: the
 *   uncrashed end state (clean); restore then returns every byte;
 * - the same crash states, then restore right away: every byte; the command
 *   after it still reaches the uncrashed end state;
 * - a crash at every step of restore, then restore again: every byte; one
 *   more restore is a no-op.
 * The plans that combine kinds (repair-crash, salvage-crash, heal-crash) are
 * explored at every crash point with the process crash and the power cut
 * (helpers/crash-cases.ts says why that suffices once each kind is here).
 *
 * The sweep's case pins what this model found with independent rename
 * halves: a single rename between two directories persists its halves with
 * two directories, and a power cut before the target's fsync could keep only
 * the removal (the file under neither name). The runner moves by link →
 * fsync the target → unlink → fsync the source instead, so the worst a crash
 * leaves is the file under both names; every exploration runs with
 * independent halves.
 */
import { describe, expect, it } from "vitest";
import { STEP_KINDS } from "../src/repair/steps/index.js";
import { type StepKindCase, STEP_KIND_CASES, planKinds } from "./helpers/crash-cases.js";
import { exploreCrashes } from "./helpers/crash-explorer.js";

describe("the step table's crash coverage", () => {
  it("every kind of the step table has a case here (a kind added without crash exploration fails)", () => {
    const explored = new Set(STEP_KIND_CASES.map((c) => c.kind));
    expect(Object.keys(STEP_KINDS).filter((kind) => !explored.has(kind as StepKindCase["kind"]))).toEqual([]);
  });
});

describe.each(STEP_KIND_CASES)("$kind ($shape): crashes", (kase) => {
  it("a crash at every step k of apply (process crash; every power cut), then the command again: the uncrashed end state, restore returns every byte; or restore right away: every byte, and the command after it converges", async () => {
    const exploration = kase.apply();
    let kinds: string[] = [];
    const report = await exploreCrashes({
      ...exploration,
      async build() {
        const tree = await exploration.build();
        kinds = planKinds(tree.plan);
        return tree;
      },
    });
    // The plan explored holds a step of the case's kind (a case that stopped exercising its kind fails).
    expect(kinds).toContain(kase.kind);
    expect(report.steps).toBeGreaterThan(5);
    // More crash states than crash points: the partial persistence choices reach states "none" and "all" do not.
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it("a crash at every step k of restore (process crash; every power cut), then restore again: every byte; one more restore is a no-op", async () => {
    const report = await exploreCrashes(kase.restore());
    expect(report.steps).toBeGreaterThan(3);
  });
});
