/**
 * docs/repair.md §6.2: the four step kinds of a repair plan, each in two parts
 * that the runner (runner.ts) sequences with the journal:
 *
 * - `prepare` copies whatever the step will destroy into the preserve dir
 *   (copied, fsynced, read back, renamed into place, the dir fsynced) and
 *   builds the journal intent that lets restore undo the step from any
 *   intermediate state. Only the preserve dir is written. Every step of a
 *   target is prepared before any of them changes anything.
 * - `execute` re-checks the file, calls `intent()` (the runner appends the
 *   intent and fsyncs the journal), makes the change and makes it durable.
 *
 * | step           | preserved first                         | change                                   | journal op                    |
 * | -------------- | --------------------------------------- | ---------------------------------------- | ----------------------------- |
 * | truncate       | `[P, size)` (all zero: by length only)  | truncate to P, fsync                     | `truncate-log` (with `proof`) |
 * | replace        | the old file, whole                     | staging, fsync, rename over, fsync dir   | `replace-index`/`-file`/`-log`|
 * | move-aside     | (the file itself is moved)              | rename into the preserve dir, fsync both | `move-aside`                  |
 * | evidence-copy  | the file's first bytes                  | none                                     | (a `preserved` record only)   |
 */
import * as path from "node:path";
import { formatCount } from "../domain/numbers.js";
import type { Engine } from "../engine/types.js";
import { encodeIndex } from "../format/encode.js";
import { encodeOffsetRecord } from "../node/partition-dir.js";
import { PreserveError, RepairError, StalePlanError } from "./errors.js";
import {
  type ByteRanges,
  copyRangeToFile,
  copyRangesToFile,
  digestRange,
  digestRanges,
  freeName,
  hex64,
  moveBetweenDirs,
  preserveRange,
  preserveRangeOrZero,
  storedOffsetNow,
  withFile,
  writeExactly,
} from "./files.js";
import type { RepairFs } from "./fs-layer.js";
import { RepairIoError } from "./fs-layer.js";
import { type SourcedPiece, copyPiecesToFile, digestPieces, sourcedPieces } from "./heal/splice-io.js";
import type { JournalIndexImage, JournalOp, JournalPrefixProof, JournalRecordBody, JournalResidue } from "./journal.js";
import type { EvidenceCopyStep, MoveAsideStep, PlanStep, PlanTarget, ReplaceStep, TruncateStep } from "./plan-types.js";
import { CUT_PROOF_BYTES } from "./limits.js";

export interface StepContext {
  fs: RepairFs;
  engine: Engine;
  chunkBytes: number;
  signal: AbortSignal | undefined;
  target: PlanTarget;
  /** What each offset rewrite writes, as the preflight proved it from the bytes (docs/repair.md §6.2). */
  offsetValues: ReadonlyMap<string, bigint>;
  /** Appends an informational journal record (a `preserved` copy). */
  record(body: JournalRecordBody): Promise<void>;
}

/** What a step did, for the apply result. */
export interface AppliedStep {
  kind: PlanStep["kind"];
  role: PlanStep["role"];
  file: string;
  /** One line: what changed, and where the old bytes are. */
  summary: string;
  /** The preserved copy inside the preserve dir (null: nothing copied, e.g. a zero residue recorded by length). */
  preserved: string | null;
  /** The journal intent the step ran under (null for an evidence copy, which changes nothing). */
  op: JournalOp | null;
}

export interface PreparedStep {
  /**
   * Re-checks the file, calls `intent(op)` (the runner journals it, fsynced)
   * right before the change, calls `touching()` right before the first call
   * that may change the target dir (so a failure before it is known to have
   * changed nothing), makes the change durable, and says what was done. An
   * evidence copy calls neither: it changes nothing.
   */
  execute(intent: (op: JournalOp) => Promise<void>, touching: () => void): Promise<AppliedStep>;
}

/** The name a journal records for a file of the target: its path under the target dir, `/`-separated. */
export function journalNameOf(target: PlanTarget, file: string): string {
  return path.relative(target.dir, file).split(path.sep).join("/");
}

/** A preserve-dir base name for a file named by its path under the target dir (`offsets/consumers/7` → `offsets-consumers-7`). */
function preserveBaseOf(target: PlanTarget, file: string): string {
  return journalNameOf(target, file).replaceAll("/", "-");
}

/** The file must be a regular file (never a link: docs/repair.md §6.2 rule 6) of the size the plan says. */
async function expectFile(ctx: StepContext, file: string, size: number, segment: string | null, what: string): Promise<void> {
  const stat = await ctx.fs.stat(file);
  const actual = stat?.size ?? 0;
  if (stat?.isSymbolicLink === true) {
    throw new StalePlanError(`refusing to ${what} ${file}: it is now a symbolic link`, { path: file }, "symlink");
  }
  if (actual !== size || (stat !== null && !stat.isFile)) {
    throw new StalePlanError(
      `refusing to ${what} ${file}: it holds ${actual} bytes, the plan says ${size}`,
      { path: file, ...(segment !== null ? { segment: BigInt(segment) } : {}), position: actual },
      `size ${actual}`,
    );
  }
}

/**
 * The file a replace renames over must still be the one whose copy was
 * preserved (its whole XXH3-64), or the rename would drop bytes no copy holds.
 * A file that differs is refused: it stays as it is (docs/repair.md §6.2).
 */
async function expectPreserved(
  ctx: StepContext,
  step: ReplaceStep,
  old: { size: number; xxh3: string },
  chunkBytes: number,
): Promise<void> {
  const now = await digestRange(ctx.fs, ctx.engine, step.file, 0, old.size, chunkBytes);
  if (now.xxh3 === old.xxh3) return;
  throw new StalePlanError(
    `refusing to replace ${step.file}: its bytes are no longer those preserved (XXH3-64 ${now.xxh3}, the copy's ${old.xxh3}); ` +
      "another process replaced or rewrote it during the repair, and it is left as it is",
    { path: step.file, ...(step.segment !== null ? { segment: BigInt(step.segment) } : {}) },
    "replaced during the repair",
  );
}

/**
 * An offset file must still store the offset the plan read: a consumer that
 * committed since (say 900, where the plan read 1500 ahead of the head 971)
 * is left as it is, never overwritten with the head (docs/repair.md §6.2).
 */
async function expectStoredOffset(ctx: StepContext, step: ReplaceStep): Promise<void> {
  const expected = step.consumer?.storedOffset ?? null;
  const now = await storedOffsetNow(ctx.fs, step.file);
  if (now === expected) return;
  throw new StalePlanError(
    `refusing to rewrite ${step.file}: it now stores offset ${now ?? "none"}, the plan read ${expected ?? "none"} (a consumer committed since the plan); it is left as it is`,
    { path: step.file },
    `offset ${now ?? "none"}`,
  );
}

export function prepareStep(step: PlanStep, ctx: StepContext): Promise<PreparedStep> {
  ctx.signal?.throwIfAborted();
  switch (step.kind) {
    case "truncate":
      return prepareTruncate(step, ctx);
    case "replace":
      return prepareReplace(step, ctx);
    case "move-aside":
      return prepareMoveAside(step, ctx);
    case "evidence-copy":
      return prepareEvidence(step, ctx);
  }
}

async function prepareTruncate(step: TruncateStep, ctx: StepContext): Promise<PreparedStep> {
  const { fs, engine, chunkBytes, target } = ctx;
  await expectFile(ctx, step.file, step.fromSize, step.segment, "cut");
  const name = journalNameOf(target, step.file);
  const bytes = step.fromSize - step.toSize;
  const kept = await preserveRangeOrZero(
    fs,
    engine,
    step.file,
    step.toSize,
    bytes,
    target.preserveDir,
    `${preserveBaseOf(target, step.file)}.${step.toSize}.residue`,
    chunkBytes,
    ctx.signal,
    true,
  );
  if (step.residue.allZero && kept.file !== null) {
    throw new PreserveError(`refusing to cut ${step.file} at ${step.toSize}: the residue the plan calls all zero holds a nonzero byte`, {
      path: step.file,
      position: step.toSize,
    });
  }
  if (kept.file !== null) {
    await ctx.record({ kind: "preserved", source: name, from: step.toSize, bytes, xxh3: kept.xxh3, file: kept.file });
  }
  const residue: JournalResidue = { bytes, allZero: kept.file === null, xxh3: kept.xxh3, file: kept.file };
  const proofFrom = Math.max(0, step.toSize - CUT_PROOF_BYTES);
  const proof: JournalPrefixProof = {
    from: proofFrom,
    bytes: step.toSize - proofFrom,
    xxh3: (await digestRange(fs, engine, step.file, proofFrom, step.toSize - proofFrom, chunkBytes, ctx.signal)).xxh3,
  };
  const op: JournalOp = {
    type: "truncate-log",
    segment: step.segment ?? "0",
    log: name,
    fromSize: step.fromSize,
    toSize: step.toSize,
    residue,
    proof,
  };
  return {
    async execute(intent, touching) {
      await withFile(fs, step.file, "r+", async (file) => {
        // The size is checked on the handle that cuts, before the intent, so an intent always describes the file it cuts.
        const size = (await file.stat()).size;
        if (size !== step.fromSize) {
          throw new StalePlanError(
            `refusing to cut ${step.file}: it now holds ${size} bytes, the plan says ${step.fromSize}`,
            { path: step.file, ...(step.segment !== null ? { segment: BigInt(step.segment) } : {}), position: size },
            `size ${size}`,
          );
        }
        await intent(op);
        touching();
        await file.truncate(step.toSize);
        await file.sync();
      });
      const where =
        residue.file === null
          ? `${formatCount(bytes)} zero bytes recorded by length`
          : `${formatCount(bytes)} bytes preserved as ${residue.file}`;
      return {
        kind: "truncate",
        role: step.role,
        file: step.file,
        summary: `cut ${step.file}: ${formatCount(step.fromSize)} → ${formatCount(step.toSize)} bytes (${where})`,
        preserved: residue.file,
        op,
      };
    },
  };
}

/**
 * The bytes a replace writes, or (keep-prefix) how many leading bytes of the
 * old file it keeps, or (log-ranges, salvage) which byte ranges of it.
 */
function newContent(
  step: ReplaceStep,
  ctx: StepContext,
): { bytes: Uint8Array } | { keep: number } | { ranges: ByteRanges } | { pieces: SourcedPiece[] } {
  const { engine } = ctx;
  switch (step.content.type) {
    case "log-ranges":
      return { ranges: step.content.ranges };
    case "log-splice": {
      // docs/heal.md: pieces of this log and of the peer's same-named log; the peer is only read.
      const peer = ctx.target.heal?.peer;
      if (peer === undefined) {
        throw new StalePlanError(`refusing to heal ${step.file}: the plan names no peer to copy from`, { path: step.file }, "no peer");
      }
      return { pieces: sourcedPieces(step.file, peer, step.content.pieces) };
    }
    case "index-entries":
      return {
        bytes: encodeIndex(
          step.content.entries.map((e) => ({ offset: BigInt(e.offset), position: BigInt(e.position), timestamp: BigInt(e.timestamp) })),
        ),
      };
    case "keep-prefix":
      return { keep: step.content.bytes };
    case "offset-record": {
      // The value the preflight proved (the head, or the stored offset), never the plan's own field.
      const value = ctx.offsetValues.get(step.file);
      if (value === undefined || value.toString() !== step.content.offset) {
        throw new StalePlanError(
          `refusing to rewrite ${step.file}: the plan's offset ${step.content.offset} is not one the preflight proved`,
          { path: step.file },
          "offset not proven",
        );
      }
      return { bytes: encodeOffsetRecord(value, (bytes) => engine.xxh3_64(bytes)) };
    }
  }
}

/**
 * The image a salvaged log will have: the XXH3-64 of its kept ranges, which
 * must lie inside the file, in order, without overlap (a plan that says
 * otherwise is refused before anything is written).
 */
async function rangesImage(ctx: StepContext, step: ReplaceStep, ranges: ByteRanges): Promise<JournalIndexImage> {
  let end = 0;
  for (const range of ranges) {
    if (!(range.from >= end && range.to > range.from && range.to <= step.fromSize)) {
      throw new StalePlanError(
        `refusing to salvage ${step.file}: its kept range [${range.from}, ${range.to}) is not inside the ${step.fromSize}-byte log after the previous one`,
        { path: step.file, position: range.from },
        "bad range",
      );
    }
    end = range.to;
  }
  const digest = await digestRanges(ctx.fs, ctx.engine, step.file, ranges, ctx.chunkBytes, ctx.signal);
  return { size: digest.bytes, xxh3: digest.xxh3 };
}

/**
 * The image a healed log will have (docs/heal.md): the XXH3-64 of its pieces;
 * each local piece must lie inside the log, in order.
 */
async function piecesImage(ctx: StepContext, step: ReplaceStep, pieces: readonly SourcedPiece[]): Promise<JournalIndexImage> {
  let end = 0;
  for (const piece of pieces) {
    if (!(piece.to > piece.from && (piece.file !== step.file || (piece.from >= end && piece.to <= step.fromSize)))) {
      throw new StalePlanError(
        `refusing to heal ${step.file}: its piece [${piece.from}, ${piece.to}) of ${piece.file} is not a range after the previous one`,
        { path: step.file, position: piece.from },
        "bad range",
      );
    }
    if (piece.file === step.file) end = piece.to;
  }
  const digest = await digestPieces(ctx.fs, ctx.engine, pieces, ctx.chunkBytes, ctx.signal);
  return { size: digest.bytes, xxh3: digest.xxh3 };
}

/**
 * Whether an earlier step of the target moves `step.file` aside (salvage moves
 * an index aside before its log is rewritten, docs/repair.md §6.5): the replace
 * then creates the file, as one that did not exist.
 */
function movedAsideEarlier(step: ReplaceStep, target: PlanTarget): boolean {
  const at = target.steps.indexOf(step);
  return target.steps.slice(0, Math.max(0, at)).some((earlier) => earlier.kind === "move-aside" && earlier.file === step.file);
}

async function prepareReplace(step: ReplaceStep, ctx: StepContext): Promise<PreparedStep> {
  const { fs, engine, chunkBytes, target } = ctx;
  const created = movedAsideEarlier(step, target);
  if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
  const name = journalNameOf(target, step.file);
  const exists = !created && (await fs.stat(step.file)) !== null;
  let old: (JournalIndexImage & { file: string }) | null = null;
  if (exists) {
    const copy = await preserveRange(
      fs,
      engine,
      step.file,
      0,
      step.fromSize,
      target.preserveDir,
      `${preserveBaseOf(target, step.file)}.replaced`,
      chunkBytes,
      ctx.signal,
    );
    await ctx.record({ kind: "preserved", source: name, from: 0, bytes: copy.bytes, xxh3: copy.xxh3, file: copy.file });
    old = { size: copy.bytes, xxh3: copy.xxh3, file: copy.file };
  }
  // docs/repair.md §6.2: an offset file must still store what the plan read, now, before anything is copied or written.
  if (step.role === "offset") await expectStoredOffset(ctx, step);
  const content = newContent(step, ctx);
  const image: JournalIndexImage =
    "bytes" in content
      ? { size: content.bytes.length, xxh3: hex64(engine.xxh3_64(content.bytes)) }
      : "ranges" in content
        ? await rangesImage(ctx, step, content.ranges)
        : "pieces" in content
          ? await piecesImage(ctx, step, content.pieces)
          : { size: content.keep, xxh3: (await digestRange(fs, engine, step.file, 0, content.keep, chunkBytes)).xxh3 };
  if ((step.role === "offset" || step.role === "segment-log") && old === null) {
    throw new StalePlanError(`refusing to rewrite ${step.file}: it is gone`, { path: step.file }, `${step.role} file missing`);
  }
  const staging = `${step.file}.staging`;
  const op: JournalOp =
    step.role === "offset"
      ? { type: "replace-file", file: name, staging: `${name}.staging`, old: old!, new: image }
      : step.role === "segment-log"
        ? {
            type: "replace-log",
            segment: step.segment ?? "0",
            log: name,
            staging: `${name}.staging`,
            old: old!,
            new: image,
            kept:
              "pieces" in content
                ? // docs/heal.md: the local bytes a heal keeps; the peer's are in the new image.
                  content.pieces.filter((piece) => piece.file === step.file).map(({ from, to }) => ({ from, to }))
                : (content as { ranges: ByteRanges }).ranges.map(({ from, to }) => ({ from, to })),
            lost: (target.salvage?.lost ?? []).filter((range) => range.segment === step.segment),
          }
        : { type: "replace-index", segment: step.segment ?? "0", index: name, staging: `${name}.staging`, old, new: image };
  return {
    async execute(intent, touching) {
      // A file an earlier step moved aside must still be absent: the replace creates it.
      if (created && (await fs.stat(step.file)) !== null) {
        throw new StalePlanError(
          `refusing to write ${step.file}: an earlier step moved it aside, yet a file is there again`,
          { path: step.file },
          "file reappeared",
        );
      }
      // A file that grew since its preserved copy was made (a writer appended) would lose those bytes to the rename.
      if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
      // A consumer that committed since the copy (a new offset, same size) must not be overwritten (docs/repair.md §6.2).
      if (step.role === "offset") await expectStoredOffset(ctx, step);
      await intent(op);
      touching(); // the staging file is created in the target dir
      if ("bytes" in content) {
        await withFile(fs, staging, "w", async (file) => {
          await writeExactly(file, content.bytes, content.bytes.length, 0, staging);
          await file.sync();
        });
      } else if ("pieces" in content) {
        const written = await copyPiecesToFile(fs, engine, content.pieces, staging, chunkBytes, ctx.signal);
        if (written.xxh3 !== image.xxh3 || written.bytes !== image.size) {
          throw new StalePlanError(
            `refusing to heal ${step.file}: the bytes it splices (this log's and the peer's) changed while healing`,
            { path: step.file, ...(step.segment !== null ? { segment: BigInt(step.segment) } : {}) },
            "log changed",
          );
        }
      } else if ("ranges" in content) {
        const written = await copyRangesToFile(fs, engine, step.file, content.ranges, staging, chunkBytes, ctx.signal);
        if (written.xxh3 !== image.xxh3 || written.bytes !== image.size) {
          throw new StalePlanError(
            `refusing to salvage ${step.file}: the bytes it keeps changed while salvaging`,
            { path: step.file, ...(step.segment !== null ? { segment: BigInt(step.segment) } : {}) },
            "log changed",
          );
        }
      } else {
        const written = await copyRangeToFile(fs, engine, step.file, 0, content.keep, staging, chunkBytes);
        if (written.xxh3 !== image.xxh3) {
          throw new StalePlanError(
            `refusing to trim ${step.file}: its first ${content.keep} bytes changed while repairing`,
            { path: step.file, position: content.keep },
            "index changed",
          );
        }
      }
      // Checked again right before the rename: bytes appended while the staging file was written are in no copy,
      // and a file swapped in by a rename (same size, other bytes) is not the one preserved.
      if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
      if (!created && old !== null) await expectPreserved(ctx, step, old, chunkBytes);
      await fs.rename(staging, step.file);
      await fs.syncDir(path.dirname(step.file));
      const what =
        step.role === "offset"
          ? `offset record (${step.reason})`
          : step.role === "segment-log" && step.content.type === "log-splice"
            ? "log (heal: the damaged or missing batches filled from the peer)"
            : step.role === "segment-log"
              ? `log of ${formatCount(step.fromSize - image.size)} fewer bytes (salvage: the bytes nothing proves are dropped)`
              : `index (${step.reason})`;
      return {
        kind: "replace",
        role: step.role,
        file: step.file,
        summary: `wrote ${step.file}: ${formatCount(image.size)} bytes, new ${what}${old === null ? "" : `; the old file is kept as ${old.file}`}`,
        preserved: old?.file ?? null,
        op,
      };
    },
  };
}

/** A move refused before anything moved (EXDEV: another filesystem). */
class MoveRefusedError extends RepairError {
  override name = "RepairError";
}

/** A move from the target dir into the preserve dir; EXDEV (another filesystem) is refused by name, nothing moved. */
async function moveInto(fs: RepairFs, from: string, to: string): Promise<void> {
  try {
    await moveBetweenDirs(fs, from, to);
  } catch (error) {
    if (error instanceof RepairIoError && error.code === "EXDEV") {
      throw new MoveRefusedError(
        `cannot move ${from} to ${to}: the two are on different filesystems (EXDEV) and repair only moves files by link or rename ` +
          `within one filesystem; ${from} was not moved`,
        { path: from },
        { cause: error },
      );
    }
    throw error;
  }
}

async function prepareMoveAside(step: MoveAsideStep, ctx: StepContext): Promise<PreparedStep> {
  const { fs, target } = ctx;
  const name = journalNameOf(target, step.file);
  const stat = await fs.stat(step.file);
  if (stat === null || !stat.isFile || stat.isSymbolicLink === true) {
    throw new StalePlanError(`refusing to move ${step.file} aside: it is gone or not a regular file`, { path: step.file }, "move missing");
  }
  return {
    async execute(intent, touching) {
      const to = await freeName(fs, target.preserveDir, preserveBaseOf(target, step.file));
      const op: JournalOp = { type: "move-aside", kind: step.reason, name, to, size: stat.size };
      await intent(op);
      try {
        await moveInto(fs, step.file, path.join(target.preserveDir, to));
      } catch (error) {
        if (!(error instanceof MoveRefusedError)) touching(); // it may have moved part-way (a second name): restore takes it back
        throw error;
      }
      touching();
      return {
        kind: "move-aside",
        role: step.role,
        file: step.file,
        summary: `moved ${step.file} → ${path.join(target.preserveDir, to)} (${step.reason})`,
        preserved: to,
        op,
      };
    },
  };
}

async function prepareEvidence(step: EvidenceCopyStep, ctx: StepContext): Promise<PreparedStep> {
  const { fs, engine, chunkBytes, target } = ctx;
  await expectFile(ctx, step.file, step.size, null, "copy");
  const copy = await preserveRange(
    fs,
    engine,
    step.file,
    0,
    step.copyBytes,
    target.preserveDir,
    `${preserveBaseOf(target, step.file)}.evidence`,
    chunkBytes,
    ctx.signal,
  );
  await ctx.record({
    kind: "preserved",
    source: journalNameOf(target, step.file),
    from: 0,
    bytes: copy.bytes,
    xxh3: copy.xxh3,
    file: copy.file,
  });
  const partial = step.copyBytes < step.size ? ` (its first ${formatCount(step.copyBytes)} of ${formatCount(step.size)} bytes)` : "";
  return {
    async execute() {
      return {
        kind: "evidence-copy",
        role: step.role,
        file: step.file,
        summary: `copied ${step.file}${partial} into the preserve dir as ${copy.file} (evidence; the file is left in place)`,
        preserved: copy.file,
        op: null,
      };
    },
  };
}
