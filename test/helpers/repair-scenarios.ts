/** Repairable (and unrepairable) partitions on disk, snapshots, and the scan → plan → apply pipeline, for the repair tests. */
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { createTsEngine } from "../../src/engine/ts/engine.js";
import type { Engine } from "../../src/engine/types.js";
import { encodeIndex, segmentStem } from "../../src/format/encode.js";
import { scanPartition } from "../../src/node/scan-path.js";
import type { ScanOptions } from "../../src/recovery/options.js";
import type { ScanReport } from "../../src/domain/scan.js";
import { applyRepair, createFaultyFs, nodeRepairFs, planRepair, restore } from "../../src/repair/index.js";
import type { ApplyResult, RepairFs, RepairPlan, RestoreResult } from "../../src/repair/index.js";
import { buildChain, concat, indexAt, randomBytes, tempPartition, writeSegment } from "./fixtures.js";

export const engine: Engine = createTsEngine();
/** Small chunks so every copy, hash and comparison runs over several of them. */
export const CHUNK_BYTES = 1000;

export interface Scenario {
  name: string;
  /** Writes the partition's files into `dir`; returns each log's proven size P by file name. */
  build(dir: string): Record<string, number>;
  scanOptions?: Omit<ScanOptions, "engine">;
  /**
   * Apply moves a file from the partition dir into its preserve dir (a
   * sweep), and restore moves it back: a rename between two directories
   * (the sweep case of step-kinds-crash.test.ts pins the rename-halves finding).
   */
  movesAcrossDirectories?: boolean;
}

const stem = (offset: bigint): string => segmentStem(offset);
const logName = (offset: bigint): string => `${stem(offset)}.log`;

export const REPAIRABLE: Scenario[] = [
  {
    name: "zero tail",
    build(dir) {
      const chain = buildChain({ counts: [3, 2, 4], seed: 11 });
      writeSegment(dir, 0n, concat([chain.log, new Uint8Array(5000)]), indexAt(chain, [0, 2]));
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "torn mid-batch tail",
    build(dir) {
      const chain = buildChain({ counts: [3, 2, 4, 5], seed: 12 });
      const last = chain.batches[3]!;
      writeSegment(dir, 0n, chain.log.subarray(0, last.position + Math.floor(last.length * 0.6)), indexAt(chain, [0, 2]));
      return { [logName(0n)]: last.position };
    },
  },
  {
    name: "non-zero garbage tail",
    build(dir) {
      const chain = buildChain({ counts: [3, 2], seed: 13 });
      writeSegment(dir, 0n, concat([chain.log, randomBytes(3333, 99)]), indexAt(chain, [0, 1]));
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "index-less segment (rebuilt index)",
    build(dir) {
      const chain = buildChain({ counts: [3, 2, 4], seed: 14 });
      writeSegment(dir, 0n, chain.log);
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "index-less segment with a partial entry and a torn tail",
    build(dir) {
      const chain = buildChain({ counts: [2, 2], seed: 15 });
      writeSegment(dir, 0n, concat([chain.log, randomBytes(1500, 7)]), randomBytes(10, 3));
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "partial trailing index entry",
    build(dir) {
      const chain = buildChain({ counts: [3, 2], seed: 16 });
      writeSegment(dir, 0n, chain.log, concat([encodeIndex(indexAt(chain, [0, 1])), randomBytes(13, 5)]));
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "staging and orphan index sweep",
    movesAcrossDirectories: true,
    build(dir) {
      const chain = buildChain({ counts: [3, 2], seed: 17 });
      writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
      writeFileSync(join(dir, `${stem(0n)}.index.staging`), randomBytes(100, 1));
      writeFileSync(join(dir, `${stem(9999n)}.index`), randomBytes(48, 2));
      writeFileSync(join(dir, "superblock.a"), randomBytes(64, 3));
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "empty tail segment (garbage log, partial index entry)",
    build(dir) {
      const chain = buildChain({ counts: [3, 2], seed: 18 });
      writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
      writeSegment(dir, chain.nextOffset, randomBytes(700, 4), randomBytes(7, 5));
      return { [logName(0n)]: chain.log.length, [logName(chain.nextOffset)]: 0 };
    },
  },
  {
    name: "empty tail segment (zeros only, no index)",
    build(dir) {
      const chain = buildChain({ counts: [4], seed: 19 });
      writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
      writeSegment(dir, chain.nextOffset, new Uint8Array(2500));
      return { [logName(0n)]: chain.log.length, [logName(chain.nextOffset)]: 0 };
    },
  },
  {
    name: "deep mode: index entry disagrees with the walk",
    scanOptions: { verify: "full" },
    build(dir) {
      const chain = buildChain({ counts: [3, 2, 4], seed: 20 });
      const entries = indexAt(chain, [0, 1, 2]);
      entries[1] = { ...entries[1]!, offset: entries[1]!.offset + 1n };
      writeSegment(dir, 0n, chain.log, entries);
      return { [logName(0n)]: chain.log.length };
    },
  },
  {
    name: "three segments: index-less non-tail, torn tail with partial entry, staging",
    movesAcrossDirectories: true,
    build(dir) {
      const a = buildChain({ counts: [3, 2], seed: 21 });
      const b = buildChain({ counts: [2, 3, 1], seed: 22, startOffset: a.nextOffset });
      const c = buildChain({ counts: [2, 2, 2], seed: 23, startOffset: b.nextOffset });
      writeSegment(dir, 0n, a.log);
      writeSegment(dir, a.nextOffset, b.log, indexAt(b, [0, 2]));
      const last = c.batches[2]!;
      writeSegment(
        dir,
        b.nextOffset,
        concat([c.log.subarray(0, last.position + 300), new Uint8Array(900)]),
        concat([encodeIndex(indexAt(c, [0, 1])), randomBytes(5, 9)]),
      );
      writeFileSync(join(dir, `${stem(b.nextOffset)}.index.staging`), randomBytes(30, 8));
      return { [logName(0n)]: a.log.length, [logName(a.nextOffset)]: b.log.length, [logName(b.nextOffset)]: last.position };
    },
  },
];

/** Builds `scenario` in a fresh temp partition dir. */
export function buildScenario(scenario: Scenario): { dir: string; proven: Record<string, number> } {
  const dir = tempPartition();
  return { dir, proven: scenario.build(dir) };
}

export interface PartitionTree {
  /** The durability model's root: the partition's parent, which also holds its preserve dir. */
  root: string;
  /** The partition dir. */
  dir: string;
}

/** Builds `scenario` for a crash exploration (helpers/crash-explorer.ts). */
export function partitionTree(scenario: Scenario): PartitionTree {
  const { dir } = buildScenario(scenario);
  return { root: dirname(dir), dir };
}

export interface PlannedTree extends PartitionTree {
  plan: RepairPlan;
}

/** `partitionTree` with its plan, made once: every run of the act starts from the same bytes. */
export async function plannedPartitionTree(scenario: Scenario): Promise<PlannedTree> {
  const tree = partitionTree(scenario);
  return { ...tree, plan: await planRepair(await scan(tree.dir, scenario)) };
}

/** Every file under `root` (recursively), relative name → bytes as hex; directories as "<dir>". */
export function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = relative(root, full);
      if (statSync(full).isDirectory()) {
        out[rel] = "<dir>";
        visit(full);
      } else {
        out[rel] = readFileSync(full).toString("hex");
      }
    }
  };
  if (existsSync(root)) visit(root);
  return out;
}

export async function scan(dir: string, scenario?: Scenario): Promise<ScanReport> {
  return scanPartition(dir, { ...(scenario?.scanOptions ?? {}), engine });
}

/** scan → plan → apply, as an operator's `repair --apply` would. */
export async function repair(dir: string, scenario?: Scenario, fs?: RepairFs): Promise<ApplyResult> {
  return applyPlan(await planRepair(await scan(dir, scenario)), fs);
}

/** Applies a plan (apply re-scans first and refuses a stale one). */
export function applyPlan(plan: RepairPlan, fs?: RepairFs): Promise<ApplyResult> {
  // The /proc walk for other writers is tested on its own (repair-lock.test.ts); the loops apply thousands of times.
  return applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false, ...(fs ? { fs } : {}) });
}

/**
 * node:fs with fsync turned into a no-op, for the crash loops: a simulated
 * crash stops the process, not the kernel, so durability is not what those
 * tests observe, and thousands of real fsyncs would only make them slow. The
 * fault-injecting layer above it still counts every sync as a step.
 */
export const noSyncFs: RepairFs = {
  ...nodeRepairFs,
  async open(filePath, mode) {
    const file = await nodeRepairFs.open(filePath, mode);
    return { ...file, sync: async () => {} };
  },
  syncDir: async () => {},
};

/**
 * What an operator does after a crashed run (docs/repair.md §6.2 rule 2): the
 * killed run's lock is stale — its pid is gone — so it is removed by hand.
 */
export function clearStaleLock(dir: string): void {
  rmSync(join(`${dir}.segscan`, "lock"), { force: true });
}

/**
 * scan → plan → apply for the crash loops: on `noSyncFs`, or on a
 * fault-injecting layer above it. A run after a crash first clears the killed
 * run's stale lock, as the operator would.
 */
export function repairNoSync(dir: string, scenario: Scenario, fs: RepairFs = noSyncFs): Promise<ApplyResult> {
  clearStaleLock(dir);
  return repair(dir, scenario, fs);
}

export function restoreNoSync(dir: string, fs: RepairFs = noSyncFs): Promise<RestoreResult> {
  clearStaleLock(dir);
  return restore(dir, { engine, fs, chunkBytes: CHUNK_BYTES, checkWriters: false });
}

export interface CrashReference {
  /** The partition after an uncrashed apply. */
  end: Record<string, string>;
  applySteps: number;
  /** "op target" of each mutating apply step, in order. */
  applyLog: readonly string[];
  restoreSteps: number;
}

/** The uncrashed run of `scenario`: its end state and how many mutating steps apply and restore take. */
export async function crashReference(scenario: Scenario): Promise<CrashReference> {
  const { dir } = buildScenario(scenario);
  const counting = createFaultyFs(noSyncFs);
  await repairNoSync(dir, scenario, counting);
  const end = snapshot(dir);
  const restoring = createFaultyFs(noSyncFs);
  await restoreNoSync(dir, restoring);
  return { end, applySteps: counting.steps, applyLog: counting.log, restoreSteps: restoring.steps };
}

/** The steps of an apply result by kind, with what their journal intents recorded (for the repair tests). */
export function appliedSteps(result: ApplyResult, targetIndex = 0) {
  const target = result.targets[targetIndex]!;
  const cuts = target.steps.flatMap((step) =>
    step.op?.kind === "truncate"
      ? [{ logPath: step.file, fromSize: step.op.fromSize, toSize: step.op.toSize, residue: step.op.residue }]
      : [],
  );
  const swept = target.steps.flatMap((step) =>
    step.op?.kind === "move-aside" ? [{ from: step.file, to: join(target.preserveDir, step.op.to) }] : [],
  );
  const replaced = target.steps.flatMap((step) =>
    step.op?.kind === "replace" && step.op.role !== "segment-log" ? [{ file: step.file, oldFile: step.op.old?.file ?? null }] : [],
  );
  return { target, cuts, swept, replaced };
}
