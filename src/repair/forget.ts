/**
 * docs/repair.md §6.7: `segscan forget` — when the preserved copies may go.
 * Repair, salvage and restore never delete; forget closes journal runs
 * (restore no longer undoes them) and deletes the copies no restore needs. It
 * keeps a copy while any run naming it stays open (an interrupted restore, an
 * unsettled run, a run after the `--older-than` cutoff, or an earlier open run:
 * runs close oldest first), and anything not segscan's, a link, or a copy of
 * another size than its journal recorded. It never deletes a journal, so the
 * salvage-loss record (§6.6) stays until `--lost-offsets` clears it. The
 * closing is journaled (`forgotten`, fsynced) under the target's lock before
 * the first deletion, so a crash leaves closed runs the next forget finishes.
 */
import { shellQuote } from "../domain/command.js";
import * as path from "node:path";
import { JOURNAL_NAME, RESTORED_JOURNAL_PATTERN, type RecordedLoss, closedRuns, isJournalName, recordedLosses } from "../format/journal.js";
import { ForgetRefusedError } from "./errors.js";
import { describedFs, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";
import { type JournalEntry, type JournalRecord, JournalWriter, readJournalEntries } from "./journal.js";
import { LOCK_NAME, RECLAIM_NAME, acquireLock, appendLockLeft, releaseLocks } from "./lock.js";
import { realPreserveDirOf } from "./preserve-dir.js";
import { opKindOf } from "./steps/index.js";

export interface ForgetOptions {
  fs?: RepairFs;
  /** Close only runs that began at least this long before `now` (default 0: every settled run). */
  olderThanMs?: number;
  /** The time the cutoff counts from (default: now). */
  now?: Date;
  /** What the lock records as the holder's command. */
  command?: string;
}

/** A run forget closes: restore can no longer undo its steps. */
export interface ForgetRun {
  run: string;
  /** Its `begin` time, or null when the journal has none. */
  began: string | null;
  journal: string;
}

/** A preserved copy forget deletes. */
export interface ForgetFile {
  /** Its name in the preserve dir. */
  name: string;
  bytes: number;
  /** `closed`: a closed run's copy; `restored`: a restored journal's; `scratch`: a `.tmp` or `.discarded` file. */
  why: "closed" | "restored" | "scratch";
  /** The run that made it (null: scratch). */
  run: string | null;
  /** The journal the deletion is recorded in (null: there is no journal; scratch only). */
  journal: string | null;
}

/** A file of the preserve dir forget leaves, and why. */
export interface KeptFile {
  name: string;
  why: "restore-needs" | "too-recent" | "not-segscan" | "not-regular" | "size-differs";
  detail: string;
}

export interface ForgetTarget {
  /** The directory whose copies these are (a partition dir, or a node's `metadata/`). */
  dir: string;
  preserveDir: string;
  closes: ForgetRun[];
  deletes: ForgetFile[];
  kept: KeptFile[];
  /** Whether it was carried out (false: a dry run). */
  applied: boolean;
  /** Bytes the deletions free. */
  bytes: number;
}

/** The journals of a preserve dir, read whole (a damaged one refuses, as restore refuses it). */
interface Journals {
  active: JournalEntry[] | null;
  restored: { journal: string; entries: JournalEntry[] }[];
}

const isScratch = (name: string): boolean => name.endsWith(".tmp") || /\.discarded(\.\d+)?$/.test(name);

/** Every preserved file an intent (its step kind's copies) or a `preserved` record names, with the size the journal recorded. */
function filesOf(record: JournalRecord): { name: string; bytes: number }[] {
  if (record.kind === "preserved") return [{ name: record.file, bytes: record.bytes }];
  if (record.kind !== "intent") return [];
  return opKindOf(record.op).copies(record.op);
}

interface Run {
  run: string;
  began: string | null;
  ended: boolean;
  files: { name: string; bytes: number }[];
}

/** The apply runs of a journal in the order they began, each with its files. */
function runsOf(entries: readonly JournalEntry[]): Run[] {
  const runs = new Map<string, Run>();
  for (const { record } of entries) {
    if (record.kind === "begin" && !runs.has(record.run))
      runs.set(record.run, { run: record.run, began: record.time, ended: false, files: [] });
    const run = runs.get(record.run);
    if (run === undefined) continue;
    if (record.kind === "end") run.ended = true;
    run.files.push(...filesOf(record));
  }
  return [...runs.values()];
}

async function readJournals(fs: RepairFs, preserveDir: string, names: readonly string[]): Promise<Journals> {
  const active = names.includes(JOURNAL_NAME) ? await readJournalEntries(fs, path.join(preserveDir, JOURNAL_NAME)) : null;
  const restored: Journals["restored"] = [];
  for (const name of names.filter((n) => RESTORED_JOURNAL_PATTERN.test(n)).sort()) {
    const journal = path.join(preserveDir, name);
    restored.push({ journal, entries: await readJournalEntries(fs, journal) });
  }
  return { active, restored };
}

/** The preserve dir of `dir` (or `dir` itself when it is one), refusing a link: forget deletes only inside a real directory. */
async function preserveDirFor(fs: RepairFs, dir: string): Promise<string> {
  const preserveDir = realPreserveDirOf(path.resolve(dir));
  const stat = await fs.stat(preserveDir);
  if (stat?.isSymbolicLink === true) {
    throw new ForgetRefusedError(
      `refusing to forget in ${preserveDir}: it is a symbolic link, and forget deletes only inside segscan's own preserve dir; nothing was changed`,
      { path: preserveDir },
    );
  }
  if (stat !== null && !stat.isDirectory) {
    throw new ForgetRefusedError(`refusing to forget in ${preserveDir}: it is not a directory; nothing was changed`, { path: preserveDir });
  }
  return preserveDir;
}

const timeOf = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));

/**
 * What `forget` would do in the preserve dir of `dir`, changing nothing: the
 * runs it closes, the copies it deletes, and every other file with why it
 * stays.
 */
export async function planForget(dir: string, options: ForgetOptions = {}): Promise<ForgetTarget> {
  const fs = describedFs(options.fs ?? nodeRepairFs);
  return planIn(fs, path.resolve(dir), await preserveDirFor(fs, dir), options);
}

async function planIn(fs: RepairFs, dir: string, preserveDir: string, options: ForgetOptions): Promise<ForgetTarget> {
  const target: ForgetTarget = { dir, preserveDir, closes: [], deletes: [], kept: [], applied: false, bytes: 0 };
  if ((await fs.stat(preserveDir)) === null) return target;
  const names = (await fs.readdir(preserveDir)).sort();
  const journals = await readJournals(fs, preserveDir, names);
  const cutoff = (options.now ?? new Date()).getTime() - (options.olderThanMs ?? 0);
  const young = (began: string | null): boolean => !(timeOf(began) <= cutoff);

  /** Why each name must stay (the first reason found), and what may go. */
  const needed = new Map<string, KeptFile>();
  const deletable = new Map<string, JournaledCopy>();
  const keep = (name: string, why: KeptFile["why"], detail: string): void => {
    if (!needed.has(name)) needed.set(name, { name, why, detail });
  };
  const activePath = path.join(preserveDir, JOURNAL_NAME);
  const restoredPaths = journals.restored.map((journal) => journal.journal);
  const home = journals.active !== null ? activePath : (restoredPaths.at(-1) ?? null);

  const active = journals.active;
  if (active !== null) {
    const closed = closedRuns(active);
    const runs = runsOf(active);
    const lastEnded = runs.map((run) => run.ended).lastIndexOf(true);
    // Once a run stays open, every later one does too (runs close oldest first); `open` says why.
    let open = interruptedRestore(active, dir);
    for (const [i, run] of runs.entries()) {
      if (closed.has(run.run)) {
        for (const file of run.files) deletable.set(file.name, { bytes: file.bytes, why: "closed", run: run.run, journal: activePath });
        continue;
      }
      if (open === null && i > lastEnded) {
        open = {
          why: "restore-needs",
          detail: `run ${run.run} never finished (a crash or a cancel) and no later run did: a restore or a new repair still reads its copies to decide what its last step did`,
        };
      }
      if (open === null && young(run.began)) {
        open = {
          why: "too-recent",
          detail: `run ${run.run} began ${run.began ?? "at an unknown time"}, after the --older-than cutoff (runs close oldest first)`,
        };
      }
      if (open !== null) {
        for (const file of run.files) keep(file.name, open.why, open.detail);
        continue;
      }
      target.closes.push({ run: run.run, began: run.began, journal: activePath });
      for (const file of run.files) deletable.set(file.name, { bytes: file.bytes, why: "closed", run: run.run, journal: activePath });
    }
  }
  for (const { journal, entries } of journals.restored) {
    for (const run of runsOf(entries)) {
      if (young(run.began)) {
        for (const file of run.files)
          keep(file.name, "too-recent", `run ${run.run} began ${run.began ?? "at an unknown time"}, after the --older-than cutoff`);
        continue;
      }
      for (const file of run.files) {
        if (!deletable.has(file.name)) deletable.set(file.name, { bytes: file.bytes, why: "restored", run: run.run, journal });
      }
    }
  }

  await sortFiles(fs, target, names, { needed, deletable, cutoff, home });
  target.bytes = target.deletes.reduce((sum, file) => sum + file.bytes, 0);
  return target;
}

/** An interrupted restore must resume, and reads every copy: no run may close. */
function interruptedRestore(active: readonly JournalEntry[], dir: string): { why: KeptFile["why"]; detail: string } | null {
  if (!active.some(({ record }) => record.kind === "undone")) return null;
  const restore = shellQuote(["segscan", "restore", dir]);
  return {
    why: "restore-needs",
    detail: `the journal records an interrupted restore, which must resume and reads every copy (\`${restore}\`)`,
  };
}

/** A copy a journal names, which forget may delete. */
interface JournaledCopy {
  bytes: number;
  why: ForgetFile["why"];
  run: string | null;
  journal: string;
}

/**
 * Sorts each file of the preserve dir into `target.deletes` or `target.kept`:
 * a file a run still needs stays, as does anything not a regular file or not
 * the copy a journal recorded; scratch files go once older than the cutoff.
 */
async function sortFiles(
  fs: RepairFs,
  target: ForgetTarget,
  names: readonly string[],
  known: { needed: ReadonlyMap<string, KeptFile>; deletable: ReadonlyMap<string, JournaledCopy>; cutoff: number; home: string | null },
): Promise<void> {
  const { needed, deletable, cutoff, home } = known;
  for (const name of names) {
    if (isJournalName(name) || name === LOCK_NAME || name === RECLAIM_NAME) continue;
    const stat = await fs.stat(path.join(target.preserveDir, name));
    if (stat === null) continue;
    const listed = needed.get(name);
    if (listed !== undefined) {
      target.kept.push(listed);
      continue;
    }
    if (stat.isSymbolicLink === true || !stat.isFile) {
      target.kept.push({ name, why: "not-regular", detail: "not a regular file: forget deletes only segscan's own copies" });
      continue;
    }
    const journaled = deletable.get(name);
    if (journaled !== undefined) {
      if (stat.size !== journaled.bytes) {
        target.kept.push({
          name,
          why: "size-differs",
          detail: `it holds ${stat.size} bytes, its journal recorded ${journaled.bytes}: not the copy segscan made`,
        });
        continue;
      }
      target.deletes.push({ name, bytes: stat.size, why: journaled.why, run: journaled.run, journal: journaled.journal });
      continue;
    }
    if (isScratch(name)) {
      if (stat.mtimeMs !== undefined && stat.mtimeMs > cutoff) {
        target.kept.push({ name, why: "too-recent", detail: "written after the --older-than cutoff" });
        continue;
      }
      target.deletes.push({ name, bytes: stat.size, why: "scratch", run: null, journal: home });
      continue;
    }
    target.kept.push({ name, why: "not-segscan", detail: "no journal names it: not segscan's, left alone" });
  }
}

/**
 * Carries `planForget` out under the target's lock: the plan is made again
 * under the lock, the closing journaled (fsynced) before the first deletion,
 * then each copy deleted and the preserve dir fsynced.
 */
export async function forget(dir: string, options: ForgetOptions = {}): Promise<ForgetTarget> {
  const fs = describedFs(options.fs ?? nodeRepairFs);
  const resolved = path.resolve(dir);
  const preserveDir = await preserveDirFor(fs, dir);
  if ((await fs.stat(preserveDir)) === null) return planIn(fs, resolved, preserveDir, options);
  const lock = await acquireLock(fs, preserveDir, `forget preserved copies of ${resolved}`, options.command ?? process.argv.join(" "));
  let target: ForgetTarget;
  try {
    target = await planIn(fs, resolved, preserveDir, options);
    if (target.deletes.length > 0 || target.closes.length > 0) await carryOut(fs, target);
    target.applied = true;
  } catch (error) {
    await releaseLocks([lock]).catch((releaseError: unknown) => appendLockLeft(error, releaseError));
    throw error;
  }
  await releaseLocks([lock]);
  return target;
}

async function carryOut(fs: RepairFs, target: ForgetTarget): Promise<void> {
  const { preserveDir } = target;
  // Each journal records what is closed and deleted of its own, before anything is deleted.
  const byJournal = new Map<string, { runs: string[]; files: string[] }>();
  const recordIn = (journal: string): { runs: string[]; files: string[] } => {
    let entry = byJournal.get(journal);
    if (entry === undefined) {
      entry = { runs: [], files: [] };
      byJournal.set(journal, entry);
    }
    return entry;
  };
  for (const run of target.closes) recordIn(run.journal).runs.push(run.run);
  for (const file of target.deletes) if (file.journal !== null) recordIn(file.journal).files.push(file.name);
  const time = new Date().toISOString();
  const run = `forget-${time.replace(/[:.]/g, "")}`;
  for (const [journal, { runs, files }] of byJournal) {
    const writer = await JournalWriter.openAt(fs, journal, run);
    try {
      await writer.append({ kind: "forgotten", time, runs, files });
    } finally {
      await writer.close();
    }
  }
  for (const file of target.deletes) await fs.unlink(path.join(preserveDir, file.name));
  await fs.syncDir(preserveDir);
}

// ---------------------------------------------------------------------------
// The salvage-loss record (docs/repair.md §6.6)

/** One recorded loss and the journal that holds it. */
export interface ClearedLoss extends RecordedLoss {
  journal: string;
}

export interface LossClearing {
  dir: string;
  preserveDir: string;
  /** The losses the scan reports now (and that clearing removes from its report). */
  losses: ClearedLoss[];
  applied: boolean;
}

async function lossesIn(fs: RepairFs, dir: string, preserveDir: string): Promise<LossClearing> {
  const clearing: LossClearing = { dir, preserveDir, losses: [], applied: false };
  if ((await fs.stat(preserveDir)) === null) return clearing;
  const names = (await fs.readdir(preserveDir))
    .filter(isJournalName)
    .sort((a, b) => (a === JOURNAL_NAME ? 1 : b === JOURNAL_NAME ? -1 : a < b ? -1 : 1));
  for (const name of names) {
    const journal = path.join(preserveDir, name);
    for (const loss of recordedLosses(await readJournalEntries(fs, journal))) clearing.losses.push({ ...loss, journal });
  }
  return clearing;
}

/**
 * docs/repair.md §6.6: the offsets salvages recorded as lost in the preserve
 * dir of `dir`, and (with `apply`) their clearing: one `loss-cleared` line
 * per journal, naming the intents, under the target's lock. Nothing else is
 * changed; the scan then no longer reports those losses.
 */
export async function clearLostOffsets(dir: string, options: ForgetOptions & { apply?: boolean } = {}): Promise<LossClearing> {
  const fs = describedFs(options.fs ?? nodeRepairFs);
  const resolved = path.resolve(dir);
  const preserveDir = await preserveDirFor(fs, dir);
  if (options.apply !== true || (await fs.stat(preserveDir)) === null) return lossesIn(fs, resolved, preserveDir);
  const lock = await acquireLock(fs, preserveDir, `clear the recorded losses of ${resolved}`, options.command ?? process.argv.join(" "));
  let clearing: LossClearing;
  try {
    clearing = await lossesIn(fs, resolved, preserveDir);
    const byJournal = new Map<string, { run: string; seq: number }[]>();
    for (const loss of clearing.losses) {
      const refs = byJournal.get(loss.journal) ?? [];
      if (!refs.some((ref) => ref.run === loss.run && ref.seq === loss.seq)) refs.push({ run: loss.run, seq: loss.seq });
      byJournal.set(loss.journal, refs);
    }
    const time = new Date().toISOString();
    for (const [journal, of] of byJournal) {
      const writer = await JournalWriter.openAt(fs, journal, `forget-${time.replace(/[:.]/g, "")}`);
      try {
        await writer.append({ kind: "loss-cleared", time, of });
      } finally {
        await writer.close();
      }
    }
    clearing.applied = true;
  } catch (error) {
    await releaseLocks([lock]).catch((releaseError: unknown) => appendLockLeft(error, releaseError));
    throw error;
  }
  await releaseLocks([lock]);
  return clearing;
}
