/**
 * docs/repair.md §6.2 "Restore", §6.3: `restore` undoes applied repairs from
 * the journal, newest step first, and puts every original byte and file back,
 * for a partition dir or a node's `metadata/` dir alike. Each undo (its step
 * kind's, ./steps/) decides from the files, not the `done` lines, what
 * happened; a cut file must prove it is the one that was cut (§6.3). Each
 * finished undo appends an `undone` line (fsynced), so a restore re-run after
 * a crash resumes at the step it was in and never re-runs a finished one (a
 * swept `.staging` moved back is the original then, not scratch). When done
 * the journal becomes `journal.<n>.restored.jsonl`. Restore only moves files
 * into the preserve dir, never unlinks; a log grown past its cut point since
 * is a `RestoreConflictError`, not a guess.
 */
import { shellQuote } from "../domain/command.js";
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { RESTORED_JOURNAL_PATTERN, closedRuns } from "../format/journal.js";
import { RepairError } from "./errors.js";
import { DEFAULT_CHUNK_BYTES } from "./files.js";
import { RepairIoError, describedFs, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";
import { JOURNAL_NAME, type JournalEntry, type JournalRecord, JournalWriter, readJournalEntries } from "./journal.js";
import { RESTORE_SEARCH_DEPTH } from "./limits.js";
import { acquireLock, appendLockLeft, refuseWriters, releaseLocks } from "./lock.js";
import { PRESERVE_DIR_SUFFIX, realPreserveDirOf } from "./preserve-dir.js";
import type { RestoreResult } from "./schema.js";
import { type UndoContext, opKindOf } from "./steps/index.js";
import { conflict, matches } from "./steps/step.js";

export interface RestoreOptions {
  fs?: RepairFs;
  /** Engine whose XXH3-64 checks preserved bytes (default: `createEngine()`). */
  engine?: Engine;
  /** Chunk of every streamed copy, hash and comparison (default 1 MiB). */
  chunkBytes?: number;
  /** Cancels between undo steps (each finished undo is journaled, so restore again resumes). */
  signal?: AbortSignal;
  /** Refuse while another process has a file the restore changes open for writing (default true; Linux only, see `findWriters`). */
  checkWriters?: boolean;
  /** What the lock file records as the holder's command (default: this process's argv). */
  command?: string;
}

export async function restore(partitionDir: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const fs = describedFs(options.fs ?? nodeRepairFs);
  const dir = path.resolve(partitionDir);
  const preserveDir = realPreserveDirOf(dir);
  const journalPath = path.join(preserveDir, JOURNAL_NAME);
  const result: RestoreResult = {
    partitionDir: dir,
    scanPath: path.basename(dir) === METADATA_DIR_NAME ? path.dirname(dir) : dir,
    restored: false,
    restoredJournal: null,
    undone: [],
    writerCheck: { checked: false, unreadableProcesses: 0 },
    closedRuns: [],
  };
  if ((await fs.stat(journalPath)) === null) return result;

  const lock = await acquireLock(fs, preserveDir, `restore ${dir}`, options.command ?? process.argv.join(" "));
  let restored: RestoreResult;
  try {
    restored = await restoreLocked(fs, dir, preserveDir, journalPath, result, options);
  } catch (error) {
    await releaseLocks([lock]).catch((releaseError: unknown) => appendLockLeft(error, releaseError));
    throw error;
  }
  await releaseLocks([lock]);
  return restored;
}

/** The directory name of a node's metadata plane (docs/node.md N0): its restore is scanned from the node root. */
const METADATA_DIR_NAME = "metadata";

async function restoreLocked(
  fs: RepairFs,
  dir: string,
  preserveDir: string,
  journalPath: string,
  result: RestoreResult,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const ctx: UndoContext = {
    fs,
    engine: options.engine ?? (await createEngine()),
    chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    dir,
    preserveDir,
    journalPath,
    line: 0,
    signal: options.signal,
  };
  // A journal with a hole in it refuses here, before anything is changed (readJournalEntries).
  const entries = await readJournalEntries(fs, journalPath).catch((error: unknown) => {
    if (error instanceof RepairIoError) error.message += "; nothing was changed";
    throw error;
  });
  // docs/repair.md §6.7: runs `segscan forget` closed are never undone (their copies may be gone); they are the oldest.
  const closed = closedRuns(entries);
  result.closedRuns = [...closed];
  const intents = pendingIntents(entries, closed);
  // Every run left is closed: there is nothing restore may undo, and the journal stays where it is (it holds the record).
  if (intents.length === 0 && closed.size > 0) return result;
  // No process may write what restore changes: the dir's segment files, and every file an intent names (the WAL, offset files).
  if (options.checkWriters !== false) {
    const check = await refuseWriters(
      {
        segmentDirs: [dir],
        files: intents.flatMap(({ record }) =>
          opKindOf(record.op)
            .touches(record.op)
            .map((name) => path.join(dir, name)),
        ),
      },
      `restore ${dir}`,
    );
    result.writerCheck = { checked: check.checked, unreadableProcesses: check.unreadableProcesses };
  }
  // Every preserved copy an undo may need is checked before the first undo, so a damaged copy refuses with nothing changed.
  for (const { record, line } of intents) {
    await checkPreserved(record.op, { ...ctx, line }).catch((error: unknown) => {
      if ((error as Error | null)?.name === "AbortError") throw cancelledRestore(error as Error, dir, journalPath, 0, intents.length, null);
      if (error instanceof RepairIoError) error.message += "; nothing was changed";
      throw error;
    });
  }
  await undoIntents(ctx, intents, result, options.signal);
  await fs.syncDir(dir);

  const restoredJournal = await retireJournal(fs, preserveDir, journalPath);
  return { ...result, restored: true, restoredJournal };
}

/** An intent of the journal not undone yet. */
type PendingIntent = JournalEntry & { record: Extract<JournalRecord, { kind: "intent" }> };

/**
 * Undoes the intents newest first, marking each `undone` in a restore run of
 * the journal, so a restore stopped part-way resumes where it stopped.
 */
async function undoIntents(
  ctx: UndoContext,
  intents: readonly PendingIntent[],
  result: RestoreResult,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { dir, journalPath } = ctx;
  let finished = 0;
  let inProgress: number | null = null;
  try {
    const journal = await JournalWriter.open(ctx.fs, ctx.preserveDir, `restore-${new Date().toISOString().replace(/[:.]/g, "")}`);
    try {
      for (const { record: intent, line } of intents) {
        signal?.throwIfAborted();
        inProgress = line;
        const done = await opKindOf(intent.op).undo(intent.op, { ...ctx, line });
        if (done !== null) result.undone.push(done);
        await journal.append({ kind: "undone", of: { run: intent.run, seq: intent.seq } });
        finished += 1;
        inProgress = null;
      }
    } finally {
      await journal.close();
    }
  } catch (error) {
    if ((error as Error | null)?.name === "AbortError") {
      throw cancelledRestore(error as Error, dir, journalPath, finished, intents.length, inProgress);
    }
    if (error instanceof RepairError) {
      const where = inProgress === null ? "" : `; the step on line ${inProgress} was being undone`;
      error.message +=
        finished === 0 && inProgress === null
          ? `; no step was undone yet, so ${dir} is as the repair left it`
          : `; restore stopped part-way (${finished} of ${intents.length} steps undone${where}): each finished undo is marked in ${journalPath}, ` +
            `so fixing the cause and running \`${shellQuote(["segscan", "restore", dir])}\` again resumes there`;
    }
    throw error;
  }
}

/** The intents still to undo, newest first: not undone yet, and not of a run `segscan forget` closed. */
function pendingIntents(entries: readonly JournalEntry[], closed: ReadonlySet<string>): PendingIntent[] {
  const key = (run: string, seq: number): string => `${run}#${seq}`;
  const alreadyUndone = new Set(entries.flatMap(({ record: r }) => (r.kind === "undone" ? [key(r.of.run, r.of.seq)] : [])));
  return entries
    .flatMap((entry) =>
      entry.record.kind === "intent" && !alreadyUndone.has(key(entry.record.run, entry.record.seq)) && !closed.has(entry.record.run)
        ? [{ ...entry, record: entry.record }]
        : [],
    )
    .reverse();
}

/** A journal whose every step was undone is renamed `journal.<n>.restored.jsonl` (the first free n), so a second restore is a no-op. */
async function retireJournal(fs: RepairFs, preserveDir: string, journalPath: string): Promise<string> {
  const taken = new Set(
    (await fs.readdir(preserveDir))
      .map((name) => RESTORED_JOURNAL_PATTERN.exec(name)?.[1])
      .filter((n) => n !== undefined)
      .map(Number),
  );
  let n = 1;
  while (taken.has(n)) n++;
  const restoredJournal = path.join(preserveDir, `journal.${n}.restored.jsonl`);
  await fs.rename(journalPath, restoredJournal);
  await fs.syncDir(preserveDir);
  return restoredJournal;
}

/**
 * What a `restore` target names, as directories that have a repair journal
 * (partition dirs, or a node's `metadata/`):
 * - a dir whose preserve dir (beside its real path) holds a journal: that dir;
 * - a preserve dir itself (`<dir>.segscan`): its dir;
 * - any other directory (a data dir or node root): every dir below it that has
 *   a journal: directories named `*.segscan` holding `journal.jsonl` beside
 *   their dir, and, for a symbolic link to a directory (never followed
 *   further), the journal beside the link's real path — where repair put it
 *   (docs/repair.md §6.2 rule 5). At most `RESTORE_SEARCH_DEPTH` levels down,
 *   sorted, each journal once.
 * Empty when there is nothing to restore. A directory that cannot be listed
 * is an error, never "nothing there" (a failed read proves nothing).
 */
export async function findRestorable(target: string, fsLayer: RepairFs = nodeRepairFs): Promise<string[]> {
  const fs = describedFs(fsLayer);
  return findPreserved(target, fs, async (preserveDir) => (await fs.stat(path.join(preserveDir, JOURNAL_NAME))) !== null);
}

/**
 * What a `forget` target names (docs/repair.md §6.7): as `findRestorable`, the
 * directories whose preserve dir exists at all (it may hold only restored
 * journals and copies).
 */
export async function findForgettable(target: string, fsLayer: RepairFs = nodeRepairFs): Promise<string[]> {
  const fs = describedFs(fsLayer);
  return findPreserved(target, fs, async (preserveDir) => (await fs.stat(preserveDir)) !== null);
}

async function findPreserved(target: string, fs: RepairFs, hasJournal: (preserveDir: string) => Promise<boolean>): Promise<string[]> {
  const resolved = path.resolve(target);
  if (resolved.endsWith(PRESERVE_DIR_SUFFIX) && (await hasJournal(resolved))) return [resolved.slice(0, -PRESERVE_DIR_SUFFIX.length)];
  if (await hasJournal(realPreserveDirOf(resolved))) return [resolved];
  const found = new Map<string, string>();
  const add = (dir: string): void => {
    const journal = realPreserveDirOf(dir);
    if (!found.has(journal)) found.set(journal, dir);
  };
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > RESTORE_SEARCH_DEPTH) return;
    for (const name of (await fs.readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const stat = await fs.stat(full); // lstat: a symlink is seen as the link
      if (stat === null) continue; // removed while listing
      if (stat.isSymbolicLink === true) {
        if ((await followsToDirectory(full)) && (await hasJournal(realPreserveDirOf(full)))) add(full);
        continue;
      }
      if (!stat.isDirectory) continue;
      if (name.endsWith(PRESERVE_DIR_SUFFIX)) {
        const home = full.slice(0, -PRESERVE_DIR_SUFFIX.length);
        if ((await hasJournal(full)) && (await fs.stat(home)) !== null) add(home);
      } else {
        await walk(full, depth + 1);
      }
    }
  };
  await walk(resolved, 0);
  return [...found.values()].sort();
}

/** Whether a symbolic link resolves to a directory (a dangling link does not). */
async function followsToDirectory(link: string): Promise<boolean> {
  try {
    return (await fsp.stat(link)).isDirectory();
  } catch {
    return false;
  }
}

/** The error a cancelled restore rejects with: an AbortError saying how far it got. */
function cancelledRestore(
  reason: Error,
  dir: string,
  journalPath: string,
  finished: number,
  total: number,
  inProgress: number | null,
): Error {
  const again = `\`${shellQuote(["segscan", "restore", dir])}\` again finishes the rest`;
  const done =
    finished === 0 && inProgress === null
      ? `no step was undone, so ${dir} is as the repair left it`
      : `${finished} of ${total} steps were undone, each marked in ${journalPath}` +
        (inProgress === null ? "" : `, and the step on line ${inProgress} was stopped part-way (its undo resumes where it stopped)`) +
        `; ${again}`;
  const error = new Error(`restore cancelled: ${done}; \`${shellQuote(["segscan", "scan", dir])}\` shows the state`, { cause: reason });
  error.name = "AbortError";
  return error;
}

/**
 * Refuses before anything is undone when a preserved copy an intent relies on
 * is not the bytes the journal recorded (length and XXH3-64).
 */
async function checkPreserved(op: Parameters<typeof opKindOf>[0], ctx: UndoContext): Promise<void> {
  for (const copy of opKindOf(op).copies(op)) {
    if (copy.xxh3 === null) continue;
    const file = path.join(ctx.preserveDir, copy.name);
    if (await matches(ctx, file, { size: copy.bytes, xxh3: copy.xxh3 })) continue;
    const why = `the preserved ${copy.what} ${file} is not the ${copy.bytes} bytes with XXH3 ${copy.xxh3} the journal recorded; nothing was changed`;
    throw conflict(ctx, why, file, "segment" in op ? op.segment : null);
  }
}
