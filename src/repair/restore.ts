/**
 * docs/repair.md §6.2: `restore` undoes applied repairs from the journal, newest step
 * first, and puts every original byte and file back:
 * - a cut log is re-extended: preserved residue bytes are appended after their
 *   XXH3-64 and length are checked against the journal (an all-zero residue is
 *   re-extended by its length), and the restored range is hashed again;
 * - a swept file is moved back from the preserve dir;
 * - a replaced index, offset file or (salvage, docs/repair.md §6.5) segment
 *   log gets its preserved copy back (via staging + rename), and an index
 *   repair created where there was none is moved into the preserve dir.
 *
 * One restore serves every target kind (docs/repair.md §6.2, docs/node.md N7):
 * a partition dir (segments, scratch files, offset files) or a node's
 * `metadata/` dir (the WAL cut). Before a cut file is re-extended, restore
 * proves it is the file that was cut: its size is between the cut point and
 * the old size, and the bytes just before the cut point hash to the journal's
 * `proof` (docs/repair.md §6.3), so a file replaced since (by a rename with
 * other bytes of the same length, say) is refused, never appended to.
 *
 * Each undo looks at the files, not at the journal's `done` lines, to decide
 * what happened (see apply.ts), so an intent whose step never ran is left
 * alone. Each finished undo appends an `undone` line (fsynced) naming its
 * intent: a restore re-run after a crash skips those and resumes at the step
 * it was in, whose undo is idempotent, so it converges. (Re-running an undo
 * that had finished would be wrong: once an earlier sweep is moved back, a
 * `.staging` file at the path of a later index step is the original file,
 * not the step's scratch.) When done, the
 * journal is renamed `journal.<n>.restored.jsonl`, so a second restore is a
 * no-op. Restore only ever moves files into the preserve dir, never unlinks.
 *
 * Restore is for undoing a repair before the partition was served again: a
 * log that has since grown past its cut point (new appends) is a conflict, and
 * restore stops there with a `RestoreConflictError` rather than guess.
 */
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { shellQuote } from "../domain/command.js";
import { formatCount } from "../domain/numbers.js";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { RepairError, RestoreConflictError } from "./errors.js";
import {
  DEFAULT_CHUNK_BYTES,
  copyRangeToFile,
  digestRange,
  forEachChunk,
  moveAside,
  moveBetweenDirs,
  readExactly,
  withFile,
  writeExactly,
} from "./files.js";
import { RepairIoError, describedFs, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";
import { JOURNAL_NAME, JournalWriter, journalName, readJournalEntries } from "./journal.js";
import type { JournalIndexImage, JournalOp } from "./journal.js";
import { acquireLock, appendLockLeft, refuseWriters, releaseLocks } from "./lock.js";
import { PRESERVE_DIR_SUFFIX, realPreserveDirOf } from "./preserve-dir.js";
import { RESTORE_SEARCH_DEPTH } from "./limits.js";
import { closedRuns } from "../format/journal.js";

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

export interface RestoreResult {
  /** The directory restored: a partition dir, or a node's `metadata/` dir. */
  partitionDir: string;
  /** What to scan to see the result: the partition dir, or the node root for `metadata/`. */
  scanPath: string;
  /** False when there was no journal to restore from (nothing was done). */
  restored: boolean;
  /** Where the journal was moved once every step was undone. */
  restoredJournal: string | null;
  /** One line per step undone (steps that had not happened are not listed). */
  undone: string[];
  /** Whether other writers of the segment files were looked for (false: not on this platform, turned off, or nothing to restore). */
  writerCheck: { checked: boolean; unreadableProcesses: number };
  /** Runs `segscan forget` closed (docs/repair.md §6.7): their steps are not undone. */
  closedRuns: string[];
}

interface Context {
  fs: RepairFs;
  engine: Engine;
  chunkBytes: number;
  dir: string;
  preserveDir: string;
  journalPath: string;
  /** The journal line of the intent being undone (for error messages). */
  line: number;
  signal: AbortSignal | undefined;
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

/** Every file an intent would change, for the writer check (the dir's segment files are watched anyway). */
function filesOf(op: JournalOp, dir: string, journalPath: string): string[] {
  const inDir = (name: string): string => path.join(dir, journalName(name, journalPath));
  switch (op.type) {
    case "truncate-log":
      return [inDir(op.log)];
    case "move-aside":
      return [inDir(op.name)];
    case "replace-index":
      return [inDir(op.index), inDir(op.staging)];
    case "replace-file":
      return [inDir(op.file), inDir(op.staging)];
    case "replace-log":
      return [inDir(op.log), inDir(op.staging)];
  }
}

async function restoreLocked(
  fs: RepairFs,
  dir: string,
  preserveDir: string,
  journalPath: string,
  result: RestoreResult,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const ctx: Context = {
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
  const key = (run: string, seq: number): string => `${run}#${seq}`;
  const alreadyUndone = new Set(entries.flatMap(({ record: r }) => (r.kind === "undone" ? [key(r.of.run, r.of.seq)] : [])));
  // docs/repair.md §6.7: runs `segscan forget` closed are never undone (their copies may be gone); they are the oldest.
  const closed = closedRuns(entries);
  result.closedRuns = [...closed];
  const intents = entries
    .flatMap((entry) =>
      entry.record.kind === "intent" && !alreadyUndone.has(key(entry.record.run, entry.record.seq)) && !closed.has(entry.record.run)
        ? [{ ...entry, record: entry.record }]
        : [],
    )
    .reverse();
  // Every run left is closed: there is nothing restore may undo, and the journal stays where it is (it holds the record).
  if (intents.length === 0 && closed.size > 0) return result;
  // No process may write what restore changes: the dir's segment files, and every file an intent names (the WAL, offset files).
  if (options.checkWriters !== false) {
    const check = await refuseWriters(
      { segmentDirs: [dir], files: intents.flatMap(({ record }) => filesOf(record.op, dir, journalPath)) },
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
  let finished = 0;
  let inProgress: number | null = null;
  try {
    const journal = await JournalWriter.open(fs, preserveDir, `restore-${new Date().toISOString().replace(/[:.]/g, "")}`);
    try {
      for (const { record: intent, line } of intents) {
        options.signal?.throwIfAborted();
        inProgress = line;
        const done = await undo(intent.op, { ...ctx, line });
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
  await fs.syncDir(dir);

  const taken = new Set(
    (await fs.readdir(preserveDir))
      .map((name) => /^journal\.(\d+)\.restored\.jsonl$/.exec(name)?.[1])
      .filter((n) => n !== undefined)
      .map(Number),
  );
  let n = 1;
  while (taken.has(n)) n++;
  const restoredJournal = path.join(preserveDir, `journal.${n}.restored.jsonl`);
  await fs.rename(journalPath, restoredJournal);
  await fs.syncDir(preserveDir);
  return { ...result, restored: true, restoredJournal };
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

function undo(op: JournalOp, ctx: Context): Promise<string | null> {
  switch (op.type) {
    case "truncate-log":
      return undoTruncate(op, ctx);
    case "move-aside":
      return undoMove(op, ctx);
    case "replace-index":
      return undoReplace({ ...op, file: op.index, what: isOffsetName(op.index) ? "offset file" : "index" }, ctx);
    case "replace-file":
      return undoReplace({ ...op, segment: null, what: "offset file" }, ctx);
    case "replace-log":
      return undoReplace({ file: op.log, staging: op.staging, segment: op.segment, old: op.old, new: op.new, what: "log" }, ctx);
  }
}

/** docs/node.md N7: offset files are journaled by their path under the partition dir. */
const isOffsetName = (name: string): boolean => name.startsWith("offsets/");

function conflict(
  ctx: Context,
  message: string,
  filePath: string,
  extra: { segment?: string; position?: number } = {},
): RestoreConflictError {
  return new RestoreConflictError(`cannot restore from ${ctx.journalPath} (the step on line ${ctx.line}): ${message}`, {
    path: filePath,
    ...(extra.segment !== undefined ? { segment: BigInt(extra.segment) } : {}),
    ...(extra.position !== undefined ? { position: extra.position } : {}),
  });
}

/**
 * Refuses before anything is undone when a preserved copy an intent relies on
 * is not the bytes the journal recorded (length and XXH3-64).
 */
async function checkPreserved(op: JournalOp, ctx: Context): Promise<void> {
  if (op.type === "truncate-log" && op.residue.file !== null) {
    const source = path.join(ctx.preserveDir, journalName(op.residue.file, ctx.journalPath));
    if (!(await matches(ctx, source, { size: op.residue.bytes, xxh3: op.residue.xxh3 }))) {
      throw conflict(
        ctx,
        `the preserved residue ${source} is not the ${op.residue.bytes} bytes with XXH3 ${op.residue.xxh3} the journal recorded; nothing was changed`,
        source,
        {
          segment: op.segment,
          position: op.toSize,
        },
      );
    }
  } else if ((op.type === "replace-index" || op.type === "replace-file" || op.type === "replace-log") && op.old !== null) {
    const old = path.join(ctx.preserveDir, journalName(op.old.file, ctx.journalPath));
    const what = op.type === "replace-log" ? "log" : op.type === "replace-file" || isOffsetName(op.index) ? "offset file" : "index";
    if (!(await matches(ctx, old, op.old))) {
      throw conflict(
        ctx,
        `the preserved ${what} ${old} is not the ${op.old.size} bytes with XXH3 ${op.old.xxh3} the journal recorded; nothing was changed`,
        old,
        op.type === "replace-file" ? {} : { segment: op.segment },
      );
    }
  }
}

async function matches(ctx: Context, filePath: string, image: JournalIndexImage): Promise<boolean> {
  const stat = await ctx.fs.stat(filePath);
  if (stat === null || !stat.isFile || stat.size !== image.size) return false;
  return (await digestRange(ctx.fs, ctx.engine, filePath, 0, image.size, ctx.chunkBytes, ctx.signal)).xxh3 === image.xxh3;
}

/** Whether `[aFrom, aFrom + length)` of `a` equals `[bFrom, …)` of `b`, streamed. */
async function rangesEqual(ctx: Context, a: string, aFrom: number, b: string, bFrom: number, length: number): Promise<boolean> {
  const other = new Uint8Array(Math.max(1, Math.min(ctx.chunkBytes, length)));
  let equal = true;
  await withFile(ctx.fs, b, "r", (bFile) =>
    withFile(ctx.fs, a, "r", (aFile) =>
      forEachChunk(aFile, a, aFrom, length, ctx.chunkBytes, async (bytes, at) => {
        if (!equal) return;
        await readExactly(bFile, b, other, bytes.length, bFrom + at);
        for (let i = 0; i < bytes.length; i++) {
          if (bytes[i] !== other[i]) {
            equal = false;
            return;
          }
        }
      }),
    ),
  );
  return equal;
}

async function undoTruncate(op: Extract<JournalOp, { type: "truncate-log" }>, ctx: Context): Promise<string | null> {
  const { fs } = ctx;
  const log = path.join(ctx.dir, journalName(op.log, ctx.journalPath));
  const where = { segment: op.segment };
  const stat = await fs.stat(log);
  if (stat === null) throw conflict(ctx, `${log} is gone, so its cut residue has nowhere to go back to`, log, where);
  const size = stat.size;
  if (size < op.toSize || size > op.fromSize || op.fromSize - op.toSize !== op.residue.bytes) {
    throw conflict(ctx, `${log} holds ${size} bytes; it was cut from ${op.fromSize} to ${op.toSize}, so it changed since the repair`, log, {
      ...where,
      position: size,
    });
  }
  if (op.proof !== undefined) {
    // docs/repair.md §6.3: the bytes before the cut point prove this is the file that was cut.
    const proof = await digestRange(fs, ctx.engine, log, op.proof.from, op.proof.bytes, ctx.chunkBytes);
    if (proof.xxh3 !== op.proof.xxh3) {
      throw conflict(
        ctx,
        `${log} is not the file that was cut: its bytes [${op.proof.from}, ${op.proof.from + op.proof.bytes}) hash to ${proof.xxh3}, the journal recorded ${op.proof.xxh3} (replaced since the repair?); nothing of it was changed`,
        log,
        { ...where, position: op.proof.from },
      );
    }
  }
  const residue = op.residue;
  const source = residue.file === null ? null : path.join(ctx.preserveDir, journalName(residue.file, ctx.journalPath));
  if (source !== null && !(await matches(ctx, source, { size: residue.bytes, xxh3: residue.xxh3 }))) {
    throw conflict(
      ctx,
      `the preserved residue ${source} is not the ${residue.bytes} bytes with XXH3 ${residue.xxh3} the journal recorded`,
      source,
      {
        ...where,
        position: op.toSize,
      },
    );
  }
  // Whatever of the residue is already back (a crashed restore, or a cut that never happened) must be exactly its prefix.
  const have = size - op.toSize;
  if (have > 0) {
    const same =
      source === null
        ? (await digestRange(fs, ctx.engine, log, op.toSize, have, ctx.chunkBytes)).allZero
        : await rangesEqual(ctx, log, op.toSize, source, 0, have);
    if (!same) {
      throw conflict(ctx, `${log} holds bytes past its cut point ${op.toSize} that are not the preserved residue`, log, {
        ...where,
        position: op.toSize,
      });
    }
  }
  if (size === op.fromSize) return null;

  await withFile(fs, log, "r+", async (file) => {
    if (source === null) {
      await file.truncate(op.fromSize); // re-extends with zeros: the all-zero residue, byte for byte
    } else {
      await withFile(fs, source, "r", (input) =>
        forEachChunk(
          input,
          source,
          have,
          residue.bytes - have,
          ctx.chunkBytes,
          (bytes, at) => writeExactly(file, bytes, bytes.length, size + at),
          ctx.signal,
        ),
      );
    }
    await file.sync();
  });
  const back = await digestRange(fs, ctx.engine, log, op.toSize, residue.bytes, ctx.chunkBytes);
  if (back.xxh3 !== residue.xxh3) {
    throw conflict(ctx, `${log} [${op.toSize}, ${op.fromSize}) does not hash to ${residue.xxh3} after re-appending its residue`, log, {
      ...where,
      position: op.toSize,
    });
  }
  const how = source === null ? "zero bytes re-extended" : `bytes re-appended from ${path.basename(source)}`;
  return `${op.log}: ${formatCount(op.toSize)} -> ${formatCount(op.fromSize)} bytes (${formatCount(residue.bytes - have)} ${how})`;
}

async function undoMove(op: Extract<JournalOp, { type: "move-aside" }>, ctx: Context): Promise<string | null> {
  const from = path.join(ctx.dir, journalName(op.name, ctx.journalPath));
  const to = path.join(ctx.preserveDir, journalName(op.to, ctx.journalPath));
  const home = await ctx.fs.stat(from);
  const atHome = home !== null;
  const aside = await ctx.fs.stat(to);
  if (atHome && aside === null) return null; // never moved, or already back
  // A power cut between the two directory fsyncs of a move can leave the file under both names
  // (the move is durable in one directory, not yet in the other): identical bytes mean it is home.
  if (atHome && aside !== null && home.size === aside.size && (await rangesEqual(ctx, from, 0, to, 0, home.size))) return null;
  if (atHome || aside === null) {
    throw conflict(ctx, atHome ? `both ${from} and its moved copy ${to} exist` : `${op.name} is neither in ${ctx.dir} nor at ${to}`, from);
  }
  if (aside.size !== op.size) throw conflict(ctx, `${to} holds ${aside.size} bytes, the journal says ${op.size}`, to);
  await moveBetweenDirs(ctx.fs, to, from); // into the partition dir, or its offsets dir (docs/node.md N7)
  return `${op.name}: moved back (${op.kind})`;
}

interface ReplaceOp {
  file: string;
  staging: string;
  segment: string | null;
  old: (JournalIndexImage & { file: string }) | null;
  new: JournalIndexImage;
  /** How messages name the file: "index" or "offset file". */
  what: string;
}

async function undoReplace(op: ReplaceOp, ctx: Context): Promise<string | null> {
  const { fs } = ctx;
  const target = path.join(ctx.dir, journalName(op.file, ctx.journalPath));
  const staging = path.join(ctx.dir, journalName(op.staging, ctx.journalPath));
  const where = op.segment === null ? {} : { segment: op.segment };
  let changed = false;
  // A staging file left by the crashed step (or by a crashed restore) holds only derived bytes: move it aside.
  if ((await fs.stat(staging)) !== null) {
    await moveAside(fs, staging, ctx.preserveDir, ".discarded");
    changed = true;
  }
  const current = await fs.stat(target);
  if (op.old === null) {
    if (current === null) return changed ? `${op.file}: unfinished rebuilt ${op.what} set aside` : null;
    if (!(await matches(ctx, target, op.new))) {
      throw conflict(ctx, `${target} is not the ${op.what} the repair created (${op.new.size} bytes, XXH3 ${op.new.xxh3})`, target, where);
    }
    await moveAside(fs, target, ctx.preserveDir, ".discarded");
    return `${op.file}: created by the repair, moved aside (no ${op.what} was there before this step)`;
  }
  if (current !== null && (await matches(ctx, target, op.old))) {
    return changed ? `${op.file}: unfinished replacement set aside` : null;
  }
  if (current !== null && !(await matches(ctx, target, op.new))) {
    throw conflict(ctx, `${target} is neither the original ${op.what} nor the one the repair wrote`, target, where);
  }
  const old = path.join(ctx.preserveDir, journalName(op.old.file, ctx.journalPath));
  if (!(await matches(ctx, old, op.old))) {
    throw conflict(
      ctx,
      `the preserved ${op.what} ${old} is not the ${op.old.size} bytes with XXH3 ${op.old.xxh3} the journal recorded`,
      old,
      where,
    );
  }
  await copyRangeToFile(fs, ctx.engine, old, 0, op.old.size, staging, ctx.chunkBytes);
  await fs.rename(staging, target);
  await fs.syncDir(path.dirname(target)); // the partition dir, or its offsets dir (docs/node.md N7)
  return `${op.file}: original ${formatCount(op.old.size)}-byte ${op.what} put back`;
}
