/**
 * Refused partitions salvage acts on (docs/repair.md §6.5), small enough for the
 * crash explorer, and the scan → salvage → apply pipeline the salvage tests share.
 * Each scenario exercises one shape of the plan: the log step alone, an index
 * rebuilt over the proven prefix first, an index trimmed to its prefix entries
 * first, the index moved aside and rebuilt over the new log, and a salvage
 * beside ordinary repair steps (a sweep, a torn tail cut).
 */
import { dirname, join } from "node:path";
import { writeFileSync } from "node:fs";
import { BATCH_HEADER_BYTES, FRAME_HEADER_BYTES } from "../../src/format/constants.js";
import type { PlanStep, RepairFs, RepairPlan } from "../../src/repair/index.js";
import { planRepair, planSalvage } from "../../src/repair/index.js";
import { type BuiltChain, buildChain, concat, indexAt, randomBytes, writeSegment } from "./fixtures.js";
import { type PartitionTree, type Scenario, applyPlan, buildScenario, clearStaleLock, engine, noSyncFs, scan } from "./repair-scenarios.js";

export interface SalvageScenario extends Scenario {
  /** The step shapes the plan must hold, in order: `kind/role/content-or-reason`. */
  steps: string[];
  /** The offsets the salvage records as lost, `first..last`. */
  lost: string[];
}

/** The chain's log with one payload bit flipped in each of `batches` (a frame checksum then fails there). */
export function flipped(chain: BuiltChain, batches: readonly number[]): Uint8Array {
  const log = chain.log.slice();
  for (const i of batches) log[chain.batches[i]!.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + 20]! ^= 0x10;
  return log;
}

const lastOf = (chain: BuiltChain, i: number): bigint => chain.batches[i]!.baseOffset + BigInt(chain.batches[i]!.messageCount) - 1n;
const offsets = (chain: BuiltChain, i: number): string => `${chain.batches[i]!.baseOffset}..${lastOf(chain, i)}`;

export const SALVAGEABLE: SalvageScenario[] = (() => {
  const a = buildChain({ counts: [2, 3, 2, 2], seed: 31 });
  const b = buildChain({ counts: [2, 2], seed: 32, startOffset: a.nextOffset });
  const c = buildChain({ counts: [2, 2, 3, 2, 2, 2], seed: 33 });
  const d = buildChain({ counts: [3, 2, 2, 3], seed: 34 });
  const e = buildChain({ counts: [2, 3, 2, 2, 2], seed: 35 });
  const f = buildChain({ counts: [2, 2, 3], seed: 36, startOffset: a.nextOffset });
  return [
    {
      name: "a non-tail segment's interior damage, its index kept (tail mode)",
      steps: ["replace/segment-log/log-ranges"],
      lost: [offsets(a, 1)],
      build(dir) {
        writeSegment(dir, 0n, flipped(a, [1]), indexAt(a, [0]));
        writeSegment(dir, a.nextOffset, b.log, indexAt(b, [0]));
        return {};
      },
    },
    {
      name: "two damaged ranges in an index-less tail segment: the index rebuilt over the proven prefix first",
      steps: ["replace/index/index-entries", "replace/segment-log/log-ranges"],
      lost: [offsets(c, 1), offsets(c, 3)],
      build(dir) {
        writeSegment(dir, 0n, flipped(c, [1, 3]));
        return {};
      },
    },
    {
      name: "deep mode, the first batch damaged: the index moved aside, the log rewritten, the index rebuilt over it",
      scanOptions: { verify: "full" },
      steps: ["move-aside/index/salvage", "replace/segment-log/log-ranges", "replace/index/index-entries"],
      lost: [offsets(d, 0)],
      build(dir) {
        writeSegment(dir, 0n, flipped(d, [0]), indexAt(d, [0, 2]));
        return {};
      },
    },
    {
      name: "deep mode, damage before the last index entry: the index trimmed to its prefix entries first",
      scanOptions: { verify: "full" },
      steps: ["replace/index/keep-prefix", "replace/segment-log/log-ranges"],
      lost: [offsets(e, 2)],
      build(dir) {
        writeSegment(dir, 0n, flipped(e, [2]), indexAt(e, [0, 1, 3]));
        return {};
      },
    },
    {
      name: "beside ordinary repair work: a staging file swept, the tail segment's torn tail cut",
      movesAcrossDirectories: true,
      steps: ["move-aside/sweep/staging", "truncate/segment-log/torn-tail", "replace/segment-log/log-ranges"],
      lost: [offsets(a, 1)],
      build(dir) {
        writeSegment(dir, 0n, flipped(a, [1]), indexAt(a, [0]));
        const last = f.batches[2]!;
        writeSegment(dir, a.nextOffset, concat([f.log.subarray(0, last.position + 200), randomBytes(300, 6)]), indexAt(f, [0]));
        writeFileSync(join(dir, "00000000000000000000.index.staging"), randomBytes(40, 7));
        return {};
      },
    },
  ];
})();

/** A step's shape as the scenarios name it. */
export function stepShape(step: PlanStep): string {
  const detail = step.kind === "replace" ? step.content.type : step.reason;
  return `${step.kind}/${step.role}/${detail}`;
}

/** The salvage plan of a scenario's partition (scanned with its options). */
export async function salvagePlan(dir: string, scenario: Scenario): Promise<RepairPlan> {
  return planSalvage(await scan(dir, scenario), { engine });
}

export interface PlannedSalvageTree extends PartitionTree {
  plan: RepairPlan;
}

/** The scenario on disk with its salvage plan, made once: every run of the act starts from the same bytes. */
export async function plannedSalvageTree(scenario: Scenario): Promise<PlannedSalvageTree> {
  const { dir } = buildScenario(scenario);
  return { root: dirname(dir), dir, plan: await salvagePlan(dir, scenario) };
}

/**
 * What an operator does after a crashed salvage (docs/repair.md §6.5): clear
 * the killed run's stale lock, scan, and salvage again while the partition is
 * refused, or repair it once it is only repairable (a salvage stopped after
 * its log step leaves an index-less segment).
 */
export async function salvageOrRepairNoSync(dir: string, scenario: Scenario, fs: RepairFs = noSyncFs): Promise<void> {
  clearStaleLock(dir);
  const report = await scan(dir, scenario);
  const verdict = report.partitions[0]!.verdict;
  if (verdict === "refused") await applyPlan(await planSalvage(report, { engine }), fs);
  else if (verdict === "repairable") await applyPlan(await planRepair(report), fs);
}
