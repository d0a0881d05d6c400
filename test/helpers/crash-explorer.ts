/**
 * Crash exploration: runs an act (apply a plan, cut the WAL,
 * repair offsets, restore) and crashes it at every mutating step k, in both
 * crash models, then recovers and checks that the result converges to the
 * uncrashed one and that restore returns every original byte.
 *
 *   await exploreCrashes({
 *     build: () => ({ root, ... }),          // the tree, built once
 *     observe: (tree) => snapshot(tree.dir), // what must converge
 *     act: (fs, tree) => applyPlan(plan, { fs }),
 *     recover: (tree) => scanPlanApply(tree),
 *     verify, restore,                       // optional checks
 *   });
 *
 * At each k the act runs on `createFaultyFs` over the durability model
 * (helpers/repair-durability.ts), which fails step k (a failing write is also
 * tried torn, half its bytes written). The model then yields one crash state
 * per persistence choice (`defaultChoices`):
 * - "all": every write reached the page cache: the PROCESS crash;
 * - "none": only what was fsynced survives;
 * - every combination of whole prefixes of the unsynced ops of each file and
 *   directory, when there are at most `EXHAUSTIVE_LIMIT` of them;
 * - `SEEDED_MIXES` seeded mixes (random prefixes, writes possibly torn).
 * One more crash point, k = steps + 1, is a power cut right after the act
 * returned: whatever it reported done must already be durable, so the
 * observed state must equal the uncrashed end state before any recovery.
 *
 * For each crash state, written over the tree: stale locks are cleared as
 * an operator would (`clearStaleLocks`), `recover` runs (re-scan + re-plan +
 * apply again, or restore again) on the real filesystem, the observed state
 * must equal the reference (the uncrashed act followed by `recover`), `verify`
 * runs, and `restore` (when given) must bring back the state before the act.
 * Each further recovery in `also` (say, restore right away instead of
 * repairing) then starts from the same crash state, written over the tree
 * again, and is checked the same way against its own reference: one sweep of
 * the act serves every way out of a crash.
 * Crash states are deduplicated by content across the whole exploration:
 * recovery is a function of the bytes on disk, so a state already recovered
 * from is not recovered from again (most k's "none" leaves what the previous
 * k's "none" left).
 *
 * The tree is built once; before every run it is written back from memory,
 * which keeps each (k, choice) to one recovery and its checks.
 */
import { readFileSync, readdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";
import { InjectedFault, LOCK_NAME, createFaultyFs } from "../../src/repair/index.js";
import type { RepairFs } from "../../src/repair/index.js";
import {
  type DurabilityModelFs,
  type PendingTarget,
  type PersistenceChoice,
  type RenameHalves,
  createDurabilityModelFs,
  describeChoice,
  readTree,
  treeFingerprint,
  writeTree,
} from "./repair-durability.js";

/**
 * A crash point whose pending ops allow at most this many combinations of
 * whole prefixes (the product over its files and directories of ops + 1) is
 * explored exhaustively (CrashMonkey style: every combination, so a bad one
 * cannot hide behind an unlucky seed). Most crash points have a handful of
 * unsynced ops in two or three places; the larger ones (a residue copied in
 * many chunks before its fsync) get "none", "all" and the seeded mixes.
 * CI time: each DISTINCT crash state costs one recovery and its checks, and
 * duplicates are skipped, so the bound limits the worst crash point, not the
 * typical one.
 */
export const EXHAUSTIVE_LIMIT = 32;

/**
 * Seeded random persistence mixes per crash point, beyond the exhaustive
 * combinations (or "none" and "all" where there are too many). They also
 * tear writes (part of a write's bytes persisted), which the combinations do
 * not. CI time: every distinct crash state costs one recovery plus its
 * checks (a scan, an apply, a restore: tens of milliseconds) and the crash
 * files explore a few hundred crash points; 3 mixes keep each file within
 * tens of seconds on a shared 2-core runner. Sixteen mixes found nothing 3
 * did not, on today's code; the property tests of repeated crashes draw
 * further seeds.
 */
export const SEEDED_MIXES = 3;

/**
 * The persistence choices at crash point k: "all" (the process crash),
 * "none", every combination of whole prefixes when there are at most
 * `EXHAUSTIVE_LIMIT`, and `SEEDED_MIXES` seeds derived from k.
 */
export function defaultChoices(k: number, torn: number, pending: readonly PendingTarget[]): PersistenceChoice[] {
  const seeds = Array.from({ length: SEEDED_MIXES }, (_, i) => ({ seed: k * 1009 + i * 31 + (torn > 0 ? 17 : 0) }));
  const sizes = pending.map((target) => target.ops.length + 1);
  if (sizes.reduce((product, size) => product * size, 1) > EXHAUSTIVE_LIMIT) return ["all", "none", ...seeds];
  const combinations: PersistenceChoice[] = [];
  const odometer = sizes.map(() => 0);
  for (;;) {
    combinations.push({ prefixes: [...odometer] });
    let digit = 0;
    while (digit < sizes.length && ++odometer[digit]! === sizes[digit]) odometer[digit++] = 0;
    if (digit === sizes.length) break;
  }
  return ["all", "none", ...combinations, ...seeds];
}

/** Relative path → hex of every file (or "<dir>"): what the checks compare. */
export type Snapshot = Record<string, string>;

export interface CrashTree {
  /** Every path the act writes lies under it (the durability model's root). */
  root: string;
}

export interface VerifyContext {
  label: string;
  /** Observed before the act. */
  before: Snapshot;
  /** Observed after the uncrashed act. */
  actEnd: Snapshot;
  /** Observed after the uncrashed act and `recover`: what every recovery must reach. */
  reference: Snapshot;
}

/** One way out of a crash state, and what it must reach. */
export interface Recovery<T extends CrashTree> {
  /** Names it in a failing state's label (a recovery in `also`). */
  name?: string;
  /** What runs after a crash, on the real filesystem: re-scan + re-plan + apply again, or restore again. */
  recover(tree: T): Promise<unknown>;
  /** More checks after `recover` (the scan is clean, one more restore is a no-op, …). */
  verify?(tree: T, context: VerifyContext): Promise<void> | void;
  /** After `recover` (and `verify`): undo everything; the observed state must then equal the state before the act. */
  restore?(tree: T): Promise<unknown>;
}

export interface CrashExploration<T extends CrashTree> extends Recovery<T> {
  /** Builds the tree on disk, once (it is written back from memory before every run). */
  build(): T | Promise<T>;
  /** The state compared (e.g. the partition's files; not the journal, whose lines carry times and run ids). */
  observe(tree: T): Snapshot;
  /** The act under test, every filesystem call through `fs` (e.g. `(fs) => applyPlan(plan, { fs })`). */
  act(fs: RepairFs, tree: T): Promise<unknown>;
  /**
   * Further recoveries, each run from every crash state too (the state
   * written back before each), each against its own reference (the uncrashed
   * act followed by it): e.g. repair again, and restore right away.
   */
  also?: readonly Recovery<T>[];
  /** Persistence choices at crash point k, given what is pending there (default `defaultChoices`). */
  choices?(k: number, torn: number, pending: readonly PendingTarget[]): PersistenceChoice[];
  /** Torn fractions tried when step k is a write (default [0, 0.5]). */
  tornFractions?: readonly number[];
  /**
   * How the halves of a rename between directories persist (default
   * "independent": possibly neither, see `RenameHalves`).
   */
  renames?: RenameHalves;
  /** Skip the power cut after the act returned (k = steps + 1). */
  skipAfterReturn?: boolean;
  /**
   * Which crash points to explore (default: every one). A plan that combines
   * step kinds is explored where it differs from its kinds' own explorations
   * (helpers/crash-cases.ts `wherePlansDiffer`); the power cut after the act
   * returned is always explored.
   */
  points?(tree: T, point: CrashPoint): boolean;
  /**
   * "throw" (default): the first crash state that does not recover fails the
   * exploration, its label naming k, the step, the torn fraction, the
   * persistence choice and what persisted. "collect": every such failure is
   * listed in the report instead (for diagnosing a durability bug).
   */
  onFailure?: "throw" | "collect";
}

/** A mutating step of the uncrashed act, as `points` sees it. */
export interface CrashPoint {
  /** 1-based, as the faulty layer counts it. */
  k: number;
  /** The faulty layer's "op target" line (names only). */
  op: string;
  /** The full paths the step changes: the file or directory, or both sides of a rename or link. */
  paths: readonly string[];
}

export interface ExplorationReport {
  /** Mutating steps of the uncrashed act, and their "op target" log. */
  steps: number;
  log: readonly string[];
  /** (k, torn) runs of the act. */
  runs: number;
  /** Crash states recovered from (distinct by content); each by `recover` and by every recovery in `also`. */
  states: number;
  /** Crash states skipped as already recovered from. */
  duplicates: number;
  /** Crash points left out by `points`. */
  skippedPoints: number;
  /** Stale locks cleared before a recovery (relative paths, with their label). */
  locksCleared: string[];
  /** With `onFailure: "collect"`: each crash state that did not recover, labelled, with what went wrong. */
  failures: string[];
}

/**
 * The operator's rule for a stale lock (docs/repair.md rule 2): check that the
 * holder it names is gone, then remove it. The only run that can have left a
 * lock here is the crashed act, which ran in this process, so a lock naming
 * this pid (or an unreadable one: its data did not persist) is that run's and
 * is removed; a lock naming any other holder throws: the harness does not
 * clear a lock it cannot account for. Returns the removed locks, relative to `root`.
 */
export function clearStaleLocks(root: string): string[] {
  const removed: string[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (!statSync(full).isDirectory()) continue;
      if (name.endsWith(".segscan")) {
        const lock = join(full, LOCK_NAME);
        let text: string | null = null;
        try {
          text = readFileSync(lock, "utf8");
        } catch {
          // no lock here
        }
        if (text !== null) {
          let pid: unknown = null;
          try {
            pid = (JSON.parse(text) as { pid?: unknown }).pid;
          } catch {
            // unreadable (empty, or a prefix of its line): "an unreadable holder", cleared the same way
          }
          if (pid !== null && pid !== process.pid)
            throw new Error(`${lock} names pid ${String(pid)}, not the crashed run: not clearing it`);
          rmSync(lock);
          removed.push(relative(root, lock));
        }
      }
      visit(full);
    }
  };
  visit(root);
  return removed;
}

/** Runs `act` on `fs`; returns the error it threw (null when it returned). */
async function outcome(act: () => Promise<unknown>): Promise<unknown> {
  try {
    await act();
    return null;
  } catch (error) {
    return error;
  }
}

/** Runs one stage of a recovery; an error it throws gets the crash state's label in front. */
async function stage(label: string, what: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error && !error.message.startsWith(label)) error.message = `${label}: ${what} failed: ${error.message}`;
    throw error;
  }
}

/** Every file's mtime under `root`, rounded to whole milliseconds (what `utimes` with a Date can set back, within its float error). */
function fileMtimes(root: string): Map<string, Date> {
  const out = new Map<string, Date>();
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const stat = statSync(full);
      if (stat.isDirectory()) visit(full);
      else out.set(full, new Date(Math.round(stat.mtimeMs)));
    }
  };
  visit(root);
  return out;
}

/**
 * `inner` with every mutating call's full paths recorded, in the order the
 * faulty layer above it counts them (it counts a step right before passing
 * the call down).
 */
function recordingPaths(inner: RepairFs, paths: string[][]): RepairFs {
  const recorded =
    <A extends unknown[], R>(pathsOf: (...args: A) => string[], call: (...args: A) => R) =>
    (...args: A): R => {
      paths.push(pathsOf(...args));
      return call(...args);
    };
  return {
    ...inner,
    async open(filePath, mode) {
      if (mode !== "r") paths.push([filePath]);
      const file = await inner.open(filePath, mode);
      return {
        ...file,
        read: (...args) => file.read(...args),
        stat: () => file.stat(),
        close: () => file.close(),
        write(...args) {
          paths.push([filePath]);
          return file.write(...args);
        },
        truncate(size) {
          paths.push([filePath]);
          return file.truncate(size);
        },
        sync() {
          paths.push([filePath]);
          return file.sync();
        },
      };
    },
    mkdir: recorded(
      (dirPath) => [dirPath],
      (dirPath: string) => inner.mkdir(dirPath),
    ),
    rename: recorded(
      (from, to) => [from, to],
      (from: string, to: string) => inner.rename(from, to),
    ),
    link: recorded(
      (from, to) => [from, to],
      (from: string, to: string) => inner.link(from, to),
    ),
    syncDir: recorded(
      (dirPath) => [dirPath],
      (dirPath: string) => inner.syncDir(dirPath),
    ),
    unlink: recorded(
      (filePath) => [filePath],
      (filePath: string) => inner.unlink(filePath),
    ),
    rmdir: recorded(
      (dirPath) => [dirPath],
      (dirPath: string) => inner.rmdir(dirPath),
    ),
  };
}

/** Crashes the act at every mutating step k in both crash models and checks recovery from every crash state (see the file comment). */
export async function exploreCrashes<T extends CrashTree>(spec: CrashExploration<T>): Promise<ExplorationReport> {
  const tree = await spec.build();
  const { root } = tree;
  const pristine = readTree(root);
  const mtimes = fileMtimes(root);
  const reset = (): DurabilityModelFs => {
    writeTree(root, pristine);
    const model = createDurabilityModelFs(root, { initial: pristine, renames: spec.renames });
    // The tree as it was built, mtimes included: a plan made once in `build` records them (docs/repair.md §6.2).
    for (const [file, mtime] of mtimes) utimesSync(file, mtime, mtime);
    return model;
  };
  const before = spec.observe(tree);

  // The uncrashed run: its steps, its end state, and the end state after each recovery.
  const stepPaths: string[][] = [];
  const counting = createFaultyFs(recordingPaths(reset(), stepPaths));
  await spec.act(counting, tree);
  const actEnd = spec.observe(tree);
  const actEndTree = spec.also === undefined ? null : readTree(root);
  const recoveries: { recovery: Recovery<T>; reference: Snapshot; named: string }[] = [];
  for (const [i, recovery] of [spec, ...(spec.also ?? [])].entries()) {
    if (i > 0) writeTree(root, actEndTree!);
    await recovery.recover(tree);
    recoveries.push({
      recovery,
      reference: spec.observe(tree),
      named: i === 0 ? "" : ` (recovery ${i + 1}${recovery.name ? `: ${recovery.name}` : ""})`,
    });
  }
  const { steps, log } = counting;
  if (stepPaths.length !== steps) throw new Error(`recorded ${stepPaths.length} steps' paths, the faulty layer counted ${steps}`);

  const report: ExplorationReport = {
    steps,
    log,
    runs: 0,
    states: 0,
    duplicates: 0,
    skippedPoints: 0,
    locksCleared: [],
    failures: [],
  };
  const seen = new Set<string>();
  const choicesAt = spec.choices ?? defaultChoices;
  const lastK = spec.skipAfterReturn ? steps : steps + 1;
  for (let k = 1; k <= lastK; k++) {
    const afterReturn = k > steps;
    if (!afterReturn && spec.points !== undefined && !spec.points(tree, { k, op: log[k - 1]!, paths: stepPaths[k - 1]! })) {
      report.skippedPoints += 1;
      continue;
    }
    const torns = !afterReturn && log[k - 1]!.startsWith("write") ? (spec.tornFractions ?? [0, 0.5]) : [0];
    for (const torn of torns) {
      const model = reset();
      const crashing = createFaultyFs(model, afterReturn ? {} : { failAt: k, tornWriteFraction: torn });
      const at = afterReturn
        ? `after the act returned (${steps} steps)`
        : `k=${k}/${steps} (${log[k - 1]!.replaceAll(`${root}/`, "")}) torn=${torn}`;
      const failure = await outcome(() => spec.act(crashing, tree));
      report.runs += 1;
      if (afterReturn) {
        if (failure !== null) throw failure;
      } else if (!(failure instanceof InjectedFault)) {
        throw new Error(`${at}: the act did not stop at the injected fault (${String(failure)})`);
      }
      for (const choice of choicesAt(k, torn, model.pending())) {
        const state = model.crashState(choice);
        const fingerprint = treeFingerprint(state.tree);
        if (seen.has(fingerprint) && !afterReturn) {
          report.duplicates += 1;
          continue;
        }
        seen.add(fingerprint);
        report.states += 1;
        for (const [i, { recovery, reference, named }] of recoveries.entries()) {
          writeTree(root, state.tree);
          let label = `${at} persistence=${describeChoice(choice)} [${state.persisted.join("; ")}]${named}`;
          try {
            // Whatever the act returned having done must have been durable when it returned.
            if (afterReturn && i === 0) expect(spec.observe(tree), `${label}: not durable when the act returned`).toEqual(actEnd);
            const locks = clearStaleLocks(root);
            if (locks.length > 0) {
              label += ` stale locks cleared: ${locks.join(", ")}`;
              report.locksCleared.push(...locks.map((lock) => `${lock} (${at} ${describeChoice(choice)})${named}`));
            }
            await stage(label, "recovery", () => recovery.recover(tree));
            expect(spec.observe(tree), `${label}: recovery did not converge`).toEqual(reference);
            await stage(label, "verify", async () => recovery.verify?.(tree, { label, before, actEnd, reference }));
            if (recovery.restore !== undefined) {
              await stage(label, "restore", () => recovery.restore!(tree));
              expect(spec.observe(tree), `${label}: restore did not return every byte`).toEqual(before);
            }
          } catch (error) {
            if (spec.onFailure !== "collect") throw error;
            const message = (error as Error).message.split("\n")[0]!;
            report.failures.push(message.startsWith(label) ? message : `${label}: ${message}`);
          }
        }
      }
    }
  }
  return report;
}

export interface PowerCut {
  /** The mutating step that fails. */
  k: number;
  /** Fraction of a failing write that is written (torn). */
  torn?: number;
  choice?: PersistenceChoice;
}

/**
 * One act on `root` that crashes at step `cut.k` and leaves the crash state
 * `cut.choice` chooses (default "none"), stale locks cleared. Returns false
 * when the act finished before step k (nothing crashed). For sequences of
 * crashes (the repeated-crash properties).
 */
export async function crashOnce(
  root: string,
  act: (fs: RepairFs) => Promise<unknown>,
  cut: PowerCut,
  renames?: RenameHalves,
): Promise<boolean> {
  const model = createDurabilityModelFs(root, { renames });
  const failure = await outcome(() => act(createFaultyFs(model, { failAt: cut.k, tornWriteFraction: cut.torn ?? 0 })));
  if (failure === null) return false;
  if (!(failure instanceof InjectedFault)) throw failure;
  model.crash(cut.choice ?? "none");
  clearStaleLocks(root);
  return true;
}
