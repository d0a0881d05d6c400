/**
 * docs/repair.md §6.2: carrying out a repair plan, with nothing lost, even by a cut.
 *
 * ## Order of work, per partition
 * 0. Before anything is written anywhere, every partition of the plan is
 *    re-scanned with the plan's own scan options and re-planned; any
 *    difference (a size, a proven prefix, an outcome, a sweep candidate) throws
 *    `StalePlanError` and nothing at all is written. A journal showing an
 *    interrupted restore also refuses (finish the restore first).
 * 1. Preserve. `<dir>.segscan/` is created (parent fsynced) and the journal
 *    opened. Each residue `[P, size)` is either verified all zero (recorded by
 *    length and XXH3 only) or streamed to `<stem>.log.<P>.residue` via a
 *    `.tmp` copy that is fsynced, read back against its hash, renamed into
 *    place, and the dir fsynced. Every index to be replaced is copied the same
 *    way to `<stem>.index.replaced`. (So a residue that is not what the plan
 *    says stops the repair before the partition dir is touched.) Then sweep
 *    candidates are moved there (rename, both dirs fsynced). Only then is
 *    anything cut.
 * 2. Truncate each `.log` to P (size re-checked on the open handle first); fsync.
 * 3. Write each new index as `<stem>.index.staging`, fsync, rename it over
 *    `<stem>.index`, fsync the dir.
 *
 * ## Journal and crash safety
 * Every step that changes the partition dir (move-aside, truncate-log,
 * replace-index) appends an `intent` line to `journal.jsonl` and fsyncs it
 * BEFORE the step, and a `done` line after the step is durable. The intent
 * carries everything needed to undo the step from any intermediate state: the
 * sizes before and after, the preserved file's name, length and XXH3-64, and
 * the size and XXH3-64 of both the old and the new index. `restore` undoes the
 * intents newest first and decides from the files themselves, not from the
 * `done` lines, whether a step happened (a log at P is re-extended, a log still
 * at its old size is checked and left; a moved file is moved back only if it is
 * in the preserve dir and absent from the partition), so an intent whose step
 * never ran, ran halfway or ran fully are all undone correctly. Restore marks
 * each finished undo with an `undone` line, so a crashed restore resumes where
 * it stopped (see restore.ts); apply refuses while such a restore is unfinished.
 *
 * A crash at any point leaves: at most a `.tmp` copy in the preserve dir
 * (overwritten by the next run, never read as evidence); a complete preserved copy not yet referenced (reused, because an
 * identical file under the same name is accepted); a log already cut (the next
 * scan proves it clean); a `<stem>.index.staging` (the next scan lists it as a
 * sweep, the next apply moves it aside before writing its own, and restore
 * moves it back then away again); and `<stem>.index` is always either the
 * whole old or the whole new index, because the replaced index is preserved by
 * copy and the new one arrives by an atomic rename over it. (Moving the old
 * index away first, as the issue suggested, would open a window where the
 * segment has no index: a crash there makes the next scan take the index-less
 * arm and rebuild different entries than a trim would keep, so the runs would
 * not converge.) So scan + plan + apply again reaches the same partition
 * contents as an uncrashed apply, and the journal then holds both runs; restore
 * undoes the second, then the first.
 *
 * An aborted `signal` stops between steps, which is the same as a crash.
 */
import * as path from "node:path";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { encodeIndex } from "../format/encode.js";
import type { ScanOptions } from "../recovery/options.js";
import { scanPartition, scanPartitionPaths as scanPath } from "../recovery/scan.js";
import type { PartitionReport } from "../domain/scan.js";
import { PreserveError, RepairError, StalePlanError, TargetRefusedError } from "./errors.js";
import {
  DEFAULT_CHUNK_BYTES,
  copyRangeToFile,
  digestRange,
  freeName,
  hex64,
  newRunId,
  preserveRange,
  withFile,
  writeExactly,
} from "./files.js";
import { RepairIoError, describedFs, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";
import { JOURNAL_NAME, JournalWriter, readJournal } from "./journal.js";
import { acquireLock, refuseWriters } from "./lock.js";
import type { HeldLock } from "./lock.js";
import type { JournalIndexImage, JournalResidue } from "./journal.js";
import { diffPartitionPlans, planPartition } from "./plan.js";
import type { PartitionPlan, RepairPlan } from "./plan.js";

/** Re-scans one planned partition (the default calls `scanPartition`, or `scanPath` for a single `.log`). */
export type PartitionScanner = (partition: PartitionPlan, options: ScanOptions) => Promise<PartitionReport>;

export interface ApplyOptions {
  signal?: AbortSignal;
  /** Filesystem layer (default: node:fs). */
  fs?: RepairFs;
  /** Engine for the re-scan and the XXH3-64 of preserved bytes (default: `createEngine(plan.engine)`). */
  engine?: Engine;
  /** The re-scan behind the stale-plan check. */
  scan?: PartitionScanner;
  /** Chunk of every streamed copy and hash (default 1 MiB). */
  chunkBytes?: number;
  /**
   * Refuse while another process has a segment file of a partition open for
   * writing (default true; Linux only, see `findWriters`). Tests that apply
   * thousands of times turn the /proc walk off.
   */
  checkWriters?: boolean;
  /** What the lock file records as the holder's command (default: this process's argv). */
  command?: string;
}

export interface AppliedTruncation {
  segment: bigint;
  logPath: string;
  fromSize: number;
  toSize: number;
  /** `file` is inside the preserve dir, or null for an all-zero residue recorded by length. */
  residue: JournalResidue;
}

export interface AppliedIndexReplacement {
  segment: bigint;
  indexPath: string;
  /** The replaced index's copy inside the preserve dir, or null when there was no index. */
  oldFile: string | null;
  newSize: number;
}

export interface AppliedPartition {
  path: string;
  dir: string;
  preserveDir: string;
  journalPath: string;
  run: string;
  truncations: AppliedTruncation[];
  indexReplacements: AppliedIndexReplacement[];
  swept: { from: string; to: string }[];
}

export interface ApplyResult {
  partitions: AppliedPartition[];
  /**
   * Whether other writers of the segment files were looked for (false: not on
   * this platform, or turned off) and how many processes could not be looked at.
   */
  writerCheck: { checked: boolean; unreadableProcesses: number };
}

const defaultScanner: PartitionScanner = async (partition, options) => {
  const report = partition.singleSegment ? await scanPath([partition.path], options) : await scanPartition(partition.path, options);
  const found = report.partitions.find((p) => p.path === partition.path);
  if (found === undefined) {
    throw new StalePlanError(`re-scanning ${partition.path} did not report that partition`, { path: partition.path }, "partition missing");
  }
  return found;
};

interface Context {
  fs: RepairFs;
  engine: Engine;
  chunkBytes: number;
  signal: AbortSignal | undefined;
  /** Whether the partition being applied has been changed yet (a file moved, cut or staged in its dir). */
  touched: boolean;
}

/**
 * Re-scans every partition of `plan`, refuses the whole plan if any partition's
 * fresh plan differs, then applies each partition in turn (docs/repair.md §6.2). Only
 * partitions whose action was `repair` are in a plan, so no other partition is
 * ever written.
 */
export async function applyRepair(plan: RepairPlan, options: ApplyOptions = {}): Promise<ApplyResult> {
  const engine = options.engine ?? (await createEngine(plan.engine));
  const ctx: Context = {
    fs: describedFs(options.fs ?? nodeRepairFs),
    engine,
    chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    signal: options.signal,
    touched: false,
  };
  const scan = options.scan ?? defaultScanner;
  const scanOptions = planScanOptions(plan, engine, options.signal);

  // One run at a time per partition: every lock is taken before anything is
  // re-scanned or written, and released on every way out (docs/repair.md §6.2).
  const command = options.command ?? process.argv.join(" ");
  const locks: HeldLock[] = [];
  const writerCheck = { checked: options.checkWriters !== false, unreadableProcesses: 0 };
  try {
    for (const preserveDir of [...new Set(plan.partitions.map((p) => p.preserveDir))].sort()) {
      const partition = plan.partitions.find((p) => p.preserveDir === preserveDir)!;
      locks.push(await acquireLock(preserveDir, `repair ${partition.dir}`, command));
    }
    if (options.checkWriters !== false) {
      for (const dir of new Set(plan.partitions.map((p) => p.dir))) {
        const check = await refuseWriters(dir, `repair ${dir}`);
        writerCheck.checked &&= check.checked;
        writerCheck.unreadableProcesses = Math.max(writerCheck.unreadableProcesses, check.unreadableProcesses);
      }
    }
    for (const partition of plan.partitions) {
      ctx.signal?.throwIfAborted();
      await checkStillPlanned(partition);
    }

    const partitions: AppliedPartition[] = [];
    for (const partition of plan.partitions) {
      ctx.touched = false;
      try {
        partitions.push(await applyPartition(partition, ctx));
      } catch (error) {
        throw withChangeState(error, partition, ctx, partitions);
      }
    }
    return { partitions, writerCheck };
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }

  /** The stale-plan check of one partition (step 0); nothing has been written when it throws. */
  async function checkStillPlanned(partition: PartitionPlan): Promise<void> {
    const journalPath = path.join(partition.preserveDir, JOURNAL_NAME);
    try {
      if (partition.singleSegment) await refuseLoneSegment(partition, scanOptions);
      const fresh = await scan(partition, scanOptions);
      if (fresh.action !== "repair") {
        const why =
          fresh.error !== null
            ? ` (${fresh.error.code}: ${fresh.error.message})`
            : fresh.refusal !== null
              ? ` (${fresh.refusal.code})`
              : "";
        throw new StalePlanError(
          `refusing a stale plan: ${partition.path} is now ${fresh.verdict} with action ${fresh.action}${why}; nothing was changed; scan and plan again`,
          { path: partition.path },
          `action ${fresh.action}`,
        );
      }
      if ((await readJournal(ctx.fs, journalPath)).some((r) => r.kind === "undone")) {
        throw new RepairError(
          `refusing to repair ${partition.path}: a restore of it was interrupted (journal ${journalPath}); nothing was changed; run restore again first`,
          { path: partition.path },
        );
      }
      const diff = diffPartitionPlans(partition, planPartition(fresh));
      if (diff !== null) {
        throw new StalePlanError(
          `refusing a stale plan for ${partition.path}: the files changed since it was made (${diff}); nothing was changed; scan and plan again`,
          { path: partition.path },
          diff,
        );
      }
    } catch (error) {
      if (error instanceof RepairIoError) error.message += "; nothing was changed";
      throw error;
    }
  }
}

/**
 * Appends to a repair error what was changed when it struck (docs/repair.md
 * §6.2: every error says whether anything was changed): nothing in the
 * partition, or a part-way repair whose every completed step is journaled;
 * and which partitions were repaired in full before it.
 */
function withChangeState(error: unknown, partition: PartitionPlan, ctx: Context, done: readonly AppliedPartition[]): unknown {
  const journalPath = path.join(partition.preserveDir, JOURNAL_NAME);
  if ((error as Error | null)?.name === "AbortError") {
    const state = ctx.touched
      ? `${partition.dir} is part-way repaired and the journal ${journalPath} records every completed step ` +
        `(run \`segscan repair --apply\` again to finish, or \`segscan restore ${partition.dir}\` to undo)`
      : `nothing in ${partition.dir} was changed`;
    const before = done.length > 0 ? `; repaired in full before the cancel: ${done.map((p) => p.path).join(", ")}` : "";
    const cancelled = new Error(`cancelled while applying: ${state}${before}; \`segscan scan\` shows the state`, { cause: error });
    cancelled.name = "AbortError";
    return cancelled;
  }
  if (!(error instanceof RepairError)) return error;
  error.message += ctx.touched
    ? `; ${partition.dir} is part-way repaired: the journal ${journalPath} records every completed step; ` +
      `run \`segscan repair --apply\` again to finish, or \`segscan restore ${partition.dir}\` to undo`
    : `; nothing in ${partition.dir} was changed (the preserve dir ${partition.preserveDir} holds only copies)`;
  if (done.length > 0) error.message += `; repaired in full before this: ${done.map((p) => p.path).join(", ")}`;
  return error;
}

/**
 * Refuses, before anything is written, a partition whose preserve dir is on
 * another filesystem than the partition dir (e.g. the partition dir is a
 * mount point): sweeps, and restore's undo of a created index, move files
 * between the two by rename, which cannot cross filesystems (EXDEV). Layers
 * that report no device id are covered by the EXDEV check on the rename itself.
 */
async function refuseCrossFilesystem(fs: RepairFs, dir: string, preserveDir: string): Promise<void> {
  const home = await fs.stat(dir);
  const preserveParent = (await fs.stat(preserveDir)) ?? (await fs.stat(path.dirname(preserveDir)));
  if (home?.dev === undefined || preserveParent?.dev === undefined || home.dev === preserveParent.dev) return;
  throw new RepairError(
    `refusing to repair ${dir}: its preserve dir ${preserveDir} is (or would be) on another filesystem (device ${preserveParent.dev}, ` +
      `the partition's is ${home.dev}), and repair moves files between the two by rename, which cannot cross filesystems; ` +
      `nothing was changed (is ${dir} a mount point? repair needs ${preserveDir} on the same filesystem)`,
    { path: preserveDir },
  );
}

/** A rename from the partition dir into the preserve dir; EXDEV (another filesystem) is refused by name, nothing moved. */
async function renameInto(fs: RepairFs, from: string, to: string): Promise<void> {
  try {
    await fs.rename(from, to);
  } catch (error) {
    if (error instanceof RepairIoError && error.code === "EXDEV") {
      throw new RepairError(
        `cannot move ${from} to ${to}: the two are on different filesystems (EXDEV) and repair only moves files by rename ` +
          `within one filesystem; ${from} was not moved`,
        { path: from },
        { cause: error },
      );
    }
    throw error;
  }
}

/** The scan options a plan was made with (every re-scan of apply uses them). */
export function planScanOptions(plan: RepairPlan, engine: Engine, signal?: AbortSignal): ScanOptions {
  return {
    engine,
    verify: plan.options.verify,
    replicaCount: plan.options.replicaCount,
    probeBudgetUnits: plan.options.probeBudgetUnits,
    windowBytes: plan.options.windowBytes,
    ...(plan.options.maxBatchBytes !== undefined ? { maxBatchBytes: plan.options.maxBatchBytes } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/**
 * A `.log` given alone is scanned alone, so its report cannot see its
 * partition's refusal. Before repairing it, the whole partition (its
 * directory) is scanned: a refused or failed partition is evidence and is cut
 * nowhere, and only the tail segment may ever be cut, so a `.log` that is not
 * the tail is refused as well (docs/repair.md §6.2). Throws
 * `TargetRefusedError`; nothing was written.
 */
export async function refuseLoneSegment(partition: PartitionPlan, options: ScanOptions): Promise<void> {
  const whole = (await scanPartition(partition.dir, options)).partitions[0];
  const log = partition.fingerprint.segments[0]?.logPath ?? partition.path;
  if (whole === undefined) {
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: scanning its partition ${partition.dir} reported nothing; nothing was changed`,
      {
        path: log,
      },
    );
  }
  if (whole.verdict === "refused" || whole.verdict === "failed") {
    const why =
      whole.refusal !== null
        ? `${whole.refusal.code}: ${whole.refusal.message}`
        : whole.error !== null
          ? `${whole.error.code}: ${whole.error.message}`
          : whole.verdict;
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: its partition ${partition.dir} is ${whole.verdict} as a whole (${why}); ` +
        `a refused partition is kept byte for byte as evidence, so none of its segments is cut; nothing was changed ` +
        `(\`segscan scan ${partition.dir}\` shows the refusal)`,
      { path: log },
    );
  }
  const tail = whole.segments.at(-1);
  if (tail !== undefined && path.resolve(tail.logPath) !== path.resolve(log)) {
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: it is not the tail segment of its partition ${partition.dir} (the tail is ${path.basename(tail.logPath)}), ` +
        `and only a partition's tail may be cut or re-indexed segment by segment; nothing was changed ` +
        `(repair the partition instead: \`segscan repair ${partition.dir}\`)`,
      { path: log },
    );
  }
}

interface Replacement {
  segment: bigint;
  indexPath: string;
  fromSize: number;
  /** The new index bytes (a rewrite), or how many leading bytes of the old one to keep (a trim). */
  content: { bytes: Uint8Array } | { keep: number };
  old: (JournalIndexImage & { file: string }) | null;
  image: JournalIndexImage;
}

/** Guards a step against a file changed since the re-scan (an absent file counts as 0 bytes, like the scan's index size). */
async function expectSize(ctx: Context, filePath: string, size: number, segment: bigint, what: string): Promise<void> {
  const stat = await ctx.fs.stat(filePath);
  const actual = stat?.size ?? 0;
  if (actual !== size || (stat !== null && !stat.isFile)) {
    throw new StalePlanError(
      `refusing to ${what} ${filePath}: it holds ${actual} bytes, the plan says ${size}`,
      {
        path: filePath,
        segment,
        position: actual,
      },
      `size ${actual}`,
    );
  }
}

async function applyPartition(plan: PartitionPlan, ctx: Context): Promise<AppliedPartition> {
  const { fs, engine, chunkBytes } = ctx;
  const step = (): void => ctx.signal?.throwIfAborted();
  const run = newRunId();
  const dir = plan.dir;
  const preserveDir = plan.preserveDir;
  const result: AppliedPartition = {
    path: plan.path,
    dir,
    preserveDir,
    journalPath: path.join(preserveDir, JOURNAL_NAME),
    run,
    truncations: [],
    indexReplacements: [],
    swept: [],
  };

  step();
  await refuseCrossFilesystem(fs, dir, preserveDir);
  await fs.mkdir(preserveDir);
  await fs.syncDir(path.dirname(preserveDir));
  const journal = await JournalWriter.open(fs, preserveDir, run);
  try {
    await journal.append({
      kind: "begin",
      time: new Date().toISOString(),
      partition: plan.path,
      plan: {
        truncations: plan.truncations.length,
        indexRewrites: plan.indexRewrites.length,
        indexTrims: plan.indexTrims.length,
        sweeps: plan.sweeps.length,
      },
    });

    // 1. Preserve: residues and replaced indexes are copied (only the preserve dir is written),
    //    then sweep candidates are moved aside.
    const residues: JournalResidue[] = [];
    for (const cut of plan.truncations) {
      step();
      await expectSize(ctx, cut.logPath, cut.fromSize, cut.segment, "cut");
      const bytes = cut.fromSize - cut.toSize;
      const logName = path.basename(cut.logPath);
      if (cut.residue.allZero) {
        const digest = await digestRange(fs, engine, cut.logPath, cut.toSize, bytes, chunkBytes, ctx.signal);
        if (!digest.allZero) {
          throw new PreserveError(
            `refusing to cut ${cut.logPath} at ${cut.toSize}: the residue the plan calls all zero holds a nonzero byte`,
            { path: cut.logPath, segment: cut.segment, position: cut.toSize },
          );
        }
        residues.push({ bytes, allZero: true, xxh3: digest.xxh3, file: null });
      } else {
        const copy = await preserveRange(
          fs,
          engine,
          cut.logPath,
          cut.toSize,
          bytes,
          preserveDir,
          `${logName}.${cut.toSize}.residue`,
          chunkBytes,
          ctx.signal,
        );
        await journal.append({ kind: "preserved", source: logName, from: cut.toSize, bytes, xxh3: copy.xxh3, file: copy.file });
        residues.push({ bytes, allZero: false, xxh3: copy.xxh3, file: copy.file });
      }
    }

    const replacements: Replacement[] = [];
    const planned: Omit<Replacement, "old" | "image">[] = [
      ...plan.indexRewrites.map((r) => ({
        segment: r.segment,
        indexPath: r.indexPath,
        fromSize: r.fromSize,
        content: { bytes: encodeIndex(r.entries.map((e) => ({ ...e, position: BigInt(e.position) }))) },
      })),
      ...plan.indexTrims.map((t) => ({ segment: t.segment, indexPath: t.indexPath, fromSize: t.fromSize, content: { keep: t.toSize } })),
    ];
    for (const r of planned) {
      step();
      await expectSize(ctx, r.indexPath, r.fromSize, r.segment, "replace");
      const exists = (await fs.stat(r.indexPath)) !== null;
      let old: Replacement["old"] = null;
      if (exists) {
        const copy = await preserveRange(
          fs,
          engine,
          r.indexPath,
          0,
          r.fromSize,
          preserveDir,
          `${path.basename(r.indexPath)}.replaced`,
          chunkBytes,
          ctx.signal,
        );
        await journal.append({
          kind: "preserved",
          source: path.basename(r.indexPath),
          from: 0,
          bytes: copy.bytes,
          xxh3: copy.xxh3,
          file: copy.file,
        });
        old = { size: copy.bytes, xxh3: copy.xxh3, file: copy.file };
      }
      const image =
        "bytes" in r.content
          ? { size: r.content.bytes.length, xxh3: hex64(engine.xxh3_64(r.content.bytes)) }
          : { size: r.content.keep, xxh3: (await digestRange(fs, engine, r.indexPath, 0, r.content.keep, chunkBytes)).xxh3 };
      replacements.push({ ...r, old, image });
    }

    for (const sweep of plan.sweeps) {
      step();
      const stat = await fs.stat(sweep.path);
      if (stat === null || !stat.isFile) {
        throw new StalePlanError(`refusing to sweep ${sweep.path}: it is gone or not a file`, { path: sweep.path }, "sweep missing");
      }
      const name = path.basename(sweep.path);
      const to = await freeName(fs, preserveDir, name);
      const seq = await journal.append({ kind: "intent", op: { type: "move-aside", kind: sweep.kind, name, to, size: stat.size } });
      await renameInto(fs, sweep.path, path.join(preserveDir, to));
      ctx.touched = true;
      await fs.syncDir(preserveDir);
      await fs.syncDir(dir);
      await journal.append({ kind: "done" }, seq);
      result.swept.push({ from: sweep.path, to: path.join(preserveDir, to) });
    }

    // 2. Cut each log to its proven prefix.
    for (const [i, cut] of plan.truncations.entries()) {
      step();
      const residue = residues[i]!;
      await withFile(fs, cut.logPath, "r+", async (file) => {
        // The size is checked on the handle that cuts, before the intent, so an intent always describes the file it cuts.
        const size = (await file.stat()).size;
        if (size !== cut.fromSize) {
          throw new StalePlanError(
            `refusing to cut ${cut.logPath}: it now holds ${size} bytes, the plan says ${cut.fromSize}`,
            {
              path: cut.logPath,
              segment: cut.segment,
              position: size,
            },
            `size ${size}`,
          );
        }
        const seq = await journal.append({
          kind: "intent",
          op: {
            type: "truncate-log",
            segment: cut.segment.toString(),
            log: path.basename(cut.logPath),
            fromSize: cut.fromSize,
            toSize: cut.toSize,
            residue,
          },
        });
        await file.truncate(cut.toSize);
        ctx.touched = true;
        await file.sync();
        await journal.append({ kind: "done" }, seq);
      });
      result.truncations.push({ segment: cut.segment, logPath: cut.logPath, fromSize: cut.fromSize, toSize: cut.toSize, residue });
    }

    // 3. New indexes: staging, fsync, rename over, fsync the dir.
    for (const r of replacements) {
      step();
      const indexName = path.basename(r.indexPath);
      const staging = `${r.indexPath}.staging`;
      const seq = await journal.append({
        kind: "intent",
        op: {
          type: "replace-index",
          segment: r.segment.toString(),
          index: indexName,
          staging: path.basename(staging),
          old: r.old,
          new: r.image,
        },
      });
      ctx.touched = true; // the staging file is created in the partition dir
      if ("bytes" in r.content) {
        const bytes = r.content.bytes;
        await withFile(fs, staging, "w", async (file) => {
          await writeExactly(file, bytes, bytes.length, 0);
          await file.sync();
        });
      } else {
        const written = await copyRangeToFile(fs, engine, r.indexPath, 0, r.content.keep, staging, chunkBytes);
        if (written !== r.image.xxh3) {
          throw new StalePlanError(
            `refusing to trim ${r.indexPath}: its first ${r.content.keep} bytes changed while repairing`,
            {
              path: r.indexPath,
              segment: r.segment,
              position: r.content.keep,
            },
            "index changed",
          );
        }
      }
      await fs.rename(staging, r.indexPath);
      await fs.syncDir(dir);
      await journal.append({ kind: "done" }, seq);
      result.indexReplacements.push({ segment: r.segment, indexPath: r.indexPath, oldFile: r.old?.file ?? null, newSize: r.image.size });
    }

    await journal.append({ kind: "end", time: new Date().toISOString() });
  } finally {
    await journal.close();
  }
  return result;
}
