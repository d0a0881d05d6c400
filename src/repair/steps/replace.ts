/**
 * docs/repair.md §6.2, §6.5: `replace` writes a new file by staging + rename,
 * after copying the old one whole to `<name>.replaced`: a segment index
 * rebuilt or trimmed (role `index`), an offset record rewritten (role
 * `offset`, docs/node.md N4), or a salvaged segment's `.log` rewritten as its
 * kept byte ranges (role `segment-log`, content `log-ranges`). The file is
 * always the whole old one or the whole new one: `<name>.staging` is written
 * and fsynced, renamed over the file, and the directory fsynced. Right before
 * the rename the old file's size and whole XXH3-64 are checked against the
 * copy, so bytes a writer added since are never dropped. An offset rewrite
 * writes the value the preflight proved from the bytes, never the plan's.
 *
 * Restore puts the copy back (through `.staging` and a rename), or moves a
 * file the step created where there was none into the preserve dir.
 */
import * as path from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Count, Text, U64, closed, literals, nullable } from "../../domain/schema-vocabulary.js";
import { formatBytes, formatCount, formatPlural } from "../../domain/numbers.js";
import { INDEX_ENTRY_BYTES } from "../../format/constants.js";
import { encodeIndex } from "../../format/encode.js";
import { hex64 } from "../../format/bytes.js";
import { encodeOffsetRecord } from "../../format/partition-files.js";
import { StalePlanError } from "../errors.js";
import { type SourcedPiece, digestRange, moveAside, piecesOf, sourcedPieces, streamPieces, withFile, writeExactly } from "../files.js";
import {
  ConsumerSchema,
  CopySchema,
  DirName,
  ImageSchema,
  ObservedSchema,
  type StepContext,
  type StepKind,
  type UndoContext,
  conflict,
  consumerName,
  expectFile,
  expectStoredOffset,
  journalNameOf,
  matches,
  preserveBaseOf,
  preserveCopy,
  segmentContext,
} from "./step.js";

/** docs/heal.md: one byte range of a healed log, from the local log or the peer's same-named one. */
export const HealPieceSchema = closed({ source: literals(["local", "peer"] as const), from: Count, to: Count });

const Role = literals(["index", "offset", "segment-log"] as const);

export const ReplaceStepSchema = closed({
  kind: Type.Literal("replace"),
  role: Role,
  file: Text,
  segment: nullable(U64),
  /**
   * An index-less segment, index entries that disagree with the walk, a
   * partial trailing entry, an empty segment's index, an offset finding; a
   * salvage's log rewrite, its index kept to the entries inside the proven
   * prefix (`salvage-prefix`) or rebuilt over the new log (`salvage-rebuilt`).
   */
  reason: literals([
    "index-less",
    "mismatches",
    "partial-entry",
    "empty-segment",
    "offset-ahead-of-head",
    "offset-checksum-torn",
    "salvage",
    "salvage-prefix",
    "salvage-rebuilt",
    "heal",
  ] as const),
  /** Size of the file being replaced (0 when absent, or when an earlier step of the target moves it aside). */
  fromSize: Count,
  content: Type.Union([
    closed({ type: Type.Literal("index-entries"), entries: Type.Array(closed({ offset: U64, position: Count, timestamp: U64 })) }),
    closed({ type: Type.Literal("keep-prefix"), bytes: Count }),
    closed({ type: Type.Literal("offset-record"), offset: U64 }),
    /** The old file's byte ranges `[from, to)`, copied in order (docs/repair.md §6.5). */
    closed({ type: Type.Literal("log-ranges"), ranges: Type.Array(closed({ from: Count, to: Count })) }),
    /** Heal (docs/heal.md): the new log is these ranges, in order, of this log (`local`) or of the peer's same-named `.log` (`peer`). */
    closed({ type: Type.Literal("log-splice"), pieces: Type.Array(HealPieceSchema) }),
  ]),
  consumer: ConsumerSchema,
  observed: ObservedSchema,
});
export type ReplaceStep = Static<typeof ReplaceStepSchema>;

export const ReplaceOpSchema = closed({
  kind: Type.Literal("replace"),
  role: Role,
  /** Written as `<file>.staging`, then renamed over `file`. */
  file: DirName,
  segment: nullable(U64),
  /** The replaced file and its copy in the preserve dir; null when there was none (the step creates the file). */
  old: nullable(CopySchema),
  new: ImageSchema,
});
export type ReplaceOp = Static<typeof ReplaceOpSchema>;

const WHAT: Record<ReplaceStep["role"], string> = { index: "index", offset: "offset file", "segment-log": "log" };

/**
 * What a replace writes: these bytes, or the concatenation of file pieces —
 * a kept prefix, a salvage's kept ranges (`salvage`), a heal's local and peer
 * pieces (`heal`) — streamed, sparse except for a heal.
 */
type NewContent = { bytes: Uint8Array } | { pieces: SourcedPiece[]; sparse: boolean; checked: "salvage" | "heal" | null };

function newContent(step: ReplaceStep, ctx: StepContext): NewContent {
  switch (step.content.type) {
    case "log-splice": {
      // docs/heal.md: pieces of this log and of the peer's same-named log; the peer is only read.
      const peer = ctx.target.heal?.peer;
      if (peer === undefined)
        throw new StalePlanError(`refusing to heal ${step.file}: the plan names no peer to copy from`, { path: step.file }, "no peer");
      return { pieces: sourcedPieces(step.file, peer, step.content.pieces), sparse: false, checked: "heal" };
    }
    case "log-ranges":
      return { pieces: piecesOf(step.file, step.content.ranges), sparse: true, checked: "salvage" };
    case "keep-prefix":
      return { pieces: [{ file: step.file, from: 0, to: step.content.bytes }], sparse: true, checked: null };
    case "index-entries":
      return {
        bytes: encodeIndex(
          step.content.entries.map((e) => ({ offset: BigInt(e.offset), position: BigInt(e.position), timestamp: BigInt(e.timestamp) })),
        ),
      };
    case "offset-record": {
      // The value the preflight proved (the head, or the stored offset), never the plan's own field.
      const value = ctx.offsetValues.get(step.file);
      if (value === undefined || value.toString() !== step.content.offset) {
        const why = `refusing to rewrite ${step.file}: the plan's offset ${step.content.offset} is not one the preflight proved`;
        throw new StalePlanError(why, { path: step.file }, "offset not proven");
      }
      return { bytes: encodeOffsetRecord(value, (bytes) => ctx.engine.xxh3_64(bytes)) };
    }
  }
}

/**
 * The image a streamed replace will have: the XXH3-64 of its pieces. A
 * salvage's kept ranges and a heal's local pieces must lie inside the log, in
 * order, without overlap (docs/repair.md §6.5, docs/heal.md).
 */
async function piecesImage(
  ctx: StepContext,
  step: ReplaceStep,
  content: Extract<NewContent, { pieces: unknown }>,
): Promise<{ size: number; xxh3: string }> {
  let end = 0;
  for (const piece of content.checked === null ? [] : content.pieces) {
    if (!(piece.to > piece.from && (piece.file !== step.file || (piece.from >= end && piece.to <= step.fromSize)))) {
      const why =
        content.checked === "salvage"
          ? `refusing to salvage ${step.file}: its kept range [${piece.from}, ${piece.to}) is not inside the ${step.fromSize}-byte log after the previous one`
          : `refusing to heal ${step.file}: its piece [${piece.from}, ${piece.to}) of ${piece.file} is not a range after the previous one`;
      throw new StalePlanError(why, { path: step.file, position: piece.from }, "bad range");
    }
    if (piece.file === step.file) end = piece.to;
  }
  const digest = await streamPieces(ctx.fs, ctx.engine, content.pieces, ctx.chunkBytes, content.checked === null ? undefined : ctx.signal);
  return { size: digest.bytes, xxh3: digest.xxh3 };
}

/**
 * The file a replace renames over must still be the one whose copy was
 * preserved (its whole XXH3-64), or the rename would drop bytes no copy holds.
 * A file that differs is refused: it stays as it is (docs/repair.md §6.2).
 */
async function expectPreserved(ctx: StepContext, step: ReplaceStep, old: { size: number; xxh3: string }): Promise<void> {
  const now = await digestRange(ctx.fs, ctx.engine, step.file, 0, old.size, ctx.chunkBytes);
  if (now.xxh3 === old.xxh3) return;
  throw new StalePlanError(
    `refusing to replace ${step.file}: its bytes are no longer those preserved (XXH3-64 ${now.xxh3}, the copy's ${old.xxh3}); ` +
      "another process replaced or rewrote it during the repair, and it is left as it is",
    { path: step.file, ...segmentContext(step.segment) },
    "replaced during the repair",
  );
}

/** Whether an earlier step of the target moves `step.file` aside (docs/repair.md §6.5): the replace then creates the file. */
function movedAsideEarlier(step: ReplaceStep, ctx: StepContext): boolean {
  const steps = ctx.target.steps;
  const at = steps.indexOf(step);
  return steps.slice(0, Math.max(0, at)).some((earlier) => earlier.kind === "move-aside" && earlier.file === step.file);
}

/**
 * Undoes a replace from the files (docs/repair.md §6.2): a staging file left
 * by a crash is set aside; a file the step created is moved aside; a file
 * that is the new image gets its preserved copy back. A file that is neither
 * the old nor the new image is a conflict, left as it is.
 */
export async function undoReplace(op: ReplaceOp, what: string, ctx: UndoContext): Promise<string | null> {
  const { fs } = ctx;
  const target = path.join(ctx.dir, op.file);
  const staging = `${target}.staging`;
  let changed = false;
  // A staging file left by the crashed step (or by a crashed restore) holds only derived bytes: move it aside.
  if ((await fs.stat(staging)) !== null) {
    await moveAside(fs, staging, ctx.preserveDir, ".discarded");
    changed = true;
  }
  const current = await fs.stat(target);
  if (op.old === null) {
    if (current === null) return changed ? `${op.file}: unfinished rebuilt ${what} set aside` : null;
    if (!(await matches(ctx, target, op.new))) {
      throw conflict(
        ctx,
        `${target} is not the ${what} the repair created (${op.new.size} bytes, XXH3 ${op.new.xxh3})`,
        target,
        op.segment,
      );
    }
    await moveAside(fs, target, ctx.preserveDir, ".discarded");
    return `${op.file}: created by the repair, moved aside (no ${what} was there before this step)`;
  }
  if (current !== null && (await matches(ctx, target, op.old))) return changed ? `${op.file}: unfinished replacement set aside` : null;
  if (current !== null && !(await matches(ctx, target, op.new))) {
    throw conflict(ctx, `${target} is neither the original ${what} nor the one the repair wrote`, target, op.segment);
  }
  const old = path.join(ctx.preserveDir, op.old.file);
  if (!(await matches(ctx, old, op.old))) {
    const why = `the preserved ${what} ${old} is not the ${op.old.size} bytes with XXH3 ${op.old.xxh3} the journal recorded`;
    throw conflict(ctx, why, old, op.segment);
  }
  await streamPieces(fs, ctx.engine, [{ file: old, from: 0, to: op.old.size }], ctx.chunkBytes, undefined, { path: staging, sparse: true });
  await fs.rename(staging, target);
  await fs.syncDir(path.dirname(target)); // the partition dir, or its offsets dir (docs/node.md N7)
  return `${op.file}: original ${formatCount(op.old.size)}-byte ${what} put back`;
}

export const replace: StepKind<ReplaceStep, ReplaceOp> = {
  schema: ReplaceStepSchema,

  /**
   * docs/repair.md §6.2: an offset rewrite writes what the bytes prove, never
   * what the plan says. A clamp writes the partition's head H, proven again
   * now; completing a torn record writes the offset the file stores. The
   * plan's value must be that one, or the plan is refused (an edited plan, or
   * a head that moved since the scan).
   */
  async check(step, ctx) {
    if (step.content.type !== "offset-record") return;
    const stored = step.consumer?.storedOffset ?? null;
    let value: bigint | null;
    let what: string;
    if (step.reason === "offset-ahead-of-head") {
      value = await ctx.headNow();
      what = value === null ? "the partition proves no head now" : `the partition's head proven now is ${value}`;
      if (value !== null && stored !== null && BigInt(stored) <= value) {
        throw new StalePlanError(
          `refusing a stale plan: ${step.file} stores offset ${stored}, which is not ahead of the head ${value} the partition proves now; nothing to clamp; scan and plan again`,
          { path: step.file },
          `head ${value}`,
        );
      }
    } else {
      value = stored === null ? null : BigInt(stored);
      what = value === null ? "the file stores no offset" : `the file stores offset ${value}`;
    }
    if (value === null || step.content.offset !== value.toString()) {
      throw new StalePlanError(
        `refusing the plan for ${step.file}: it would write offset ${step.content.offset}, but ${what}; a rewrite writes only what the bytes prove (scan and plan again)`,
        { path: step.file },
        `offset ${step.content.offset}`,
      );
    }
    ctx.prove(step.file, value);
  },

  async prepare(step, ctx) {
    const { fs, engine, chunkBytes, target } = ctx;
    const created = movedAsideEarlier(step, ctx);
    if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
    const name = journalNameOf(target, step.file);
    let old: ReplaceOp["old"] = null;
    if (!created && (await fs.stat(step.file)) !== null) {
      const base = `${preserveBaseOf(target, step.file)}.replaced`;
      const copy = await preserveCopy(ctx, step.file, 0, step.fromSize, base);
      old = { size: copy.bytes, xxh3: copy.xxh3, file: copy.file };
    }
    // docs/repair.md §6.2: an offset file must still store what the plan read, now, before anything is copied or written.
    if (step.role === "offset") await expectStoredOffset(fs, step.file, step.consumer);
    const content = newContent(step, ctx);
    const image =
      "bytes" in content
        ? { size: content.bytes.length, xxh3: hex64(engine.xxh3_64(content.bytes)) }
        : await piecesImage(ctx, step, content);
    if (step.role !== "index" && old === null) {
      throw new StalePlanError(`refusing to rewrite ${step.file}: it is gone`, { path: step.file }, `${step.role} file missing`);
    }
    const staging = `${step.file}.staging`;
    const op: ReplaceOp = { kind: "replace", role: step.role, file: name, segment: step.segment, old, new: image };
    // docs/repair.md §6.6: a salvage's log rewrite gives up the ranges its segment loses; its intent records them.
    const lost = step.role === "segment-log" ? (target.salvage?.lost ?? []).filter((range) => range.segment === step.segment) : [];
    return {
      async execute(intent, touching) {
        // A file an earlier step moved aside must still be absent: the replace creates it.
        if (created && (await fs.stat(step.file)) !== null) {
          const why = `refusing to write ${step.file}: an earlier step moved it aside, yet a file is there again`;
          throw new StalePlanError(why, { path: step.file }, "file reappeared");
        }
        // A file that grew since its preserved copy was made (a writer appended) would lose those bytes to the rename.
        if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
        // A consumer that committed since the copy (a new offset, same size) must not be overwritten (docs/repair.md §6.2).
        if (step.role === "offset") await expectStoredOffset(fs, step.file, step.consumer);
        await intent(op, lost);
        touching(); // the staging file is created in the target dir
        if ("bytes" in content) {
          await withFile(fs, staging, "w", async (file) => {
            await writeExactly(file, content.bytes, content.bytes.length, 0, staging);
            await file.sync();
          });
        } else {
          const signal = content.checked === null ? undefined : ctx.signal;
          const written = await streamPieces(fs, engine, content.pieces, chunkBytes, signal, { path: staging, sparse: content.sparse });
          if (written.xxh3 !== image.xxh3 || written.bytes !== image.size) {
            const why = `refusing to replace ${step.file}: the bytes it keeps changed while ${content.checked === "salvage" ? "salvaging" : "repairing"}`;
            throw new StalePlanError(why, { path: step.file, ...segmentContext(step.segment) }, `${WHAT[step.role]} changed`);
          }
        }
        // Checked again right before the rename: bytes appended while the staging file was written are in no copy,
        // and a file swapped in by a rename (same size, other bytes) is not the one preserved.
        if (!created) await expectFile(ctx, step.file, step.fromSize, step.segment, "replace");
        if (old !== null) await expectPreserved(ctx, step, old);
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
        const kept = old === null ? "" : `; the old file is kept as ${old.file}`;
        return { summary: `wrote ${step.file}: ${formatCount(image.size)} bytes, new ${what}${kept}`, preserved: old?.file ?? null, op };
      },
    };
  },

  journal: {
    schema: ReplaceOpSchema,
    undo: (op, ctx) => undoReplace(op, WHAT[op.role], ctx),
    copies: (op) => (op.old === null ? [] : [{ name: op.old.file, bytes: op.old.size, xxh3: op.old.xxh3, what: WHAT[op.role] }]),
    touches: (op) => [op.file, `${op.file}.staging`],
  },

  describe(step, { name, printable }) {
    const oldKept = step.fromSize > 0 ? `; the old ${formatCount(step.fromSize)}-byte index is kept` : "";
    switch (step.content.type) {
      case "offset-record": {
        const to = step.content.offset;
        const who = consumerName(step.consumer);
        return step.reason === "offset-ahead-of-head"
          ? `rewrite ${name} (${who}) from ${step.consumer?.storedOffset} to the head ${to}: CHANGES WHAT THIS CONSUMER READS NEXT (it resumes at ${BigInt(to) + 1n}, re-reading the re-minted offsets); the old file is preserved first`
          : `rewrite ${name} (${who}) as a whole 16-byte record with the same offset ${to} (its checksum was torn); the old file is preserved first`;
      }
      case "log-ranges": {
        const ranges = step.content.ranges;
        const size = ranges.reduce((sum, range) => sum + range.to - range.from, 0);
        const kept = ranges.map((range) => `[${formatCount(range.from)}, ${formatCount(range.to)})`).join(" + ");
        return (
          `rewrite ${name} (salvage): keep bytes ${kept} = ${formatCount(size)} of ${formatCount(step.fromSize)}, ` +
          `dropping ${formatPlural(step.fromSize - size, "byte")} nothing proves; the old log is copied whole to ${printable(path.basename(step.file))}.replaced ` +
          `first (${formatBytes(step.fromSize)} of free space) and the new one written beside it (${formatBytes(size)})`
        );
      }
      case "keep-prefix": {
        const why =
          step.reason === "empty-segment"
            ? "the segment holds no whole batch"
            : step.reason === "salvage-prefix"
              ? `salvage: keeps the ${formatPlural(step.content.bytes / INDEX_ENTRY_BYTES, "entry", "entries")} inside the proven prefix; the others point into bytes that move`
              : "partial trailing entry";
        return `trim ${name}: ${formatCount(step.fromSize)} -> ${formatCount(step.content.bytes)} bytes (${why}; the old index is kept)`;
      }
      case "log-splice": {
        const pieces = step.content.pieces;
        const size = pieces.reduce((sum, piece) => sum + piece.to - piece.from, 0);
        const parts = pieces.map((piece) => `${piece.source} [${formatCount(piece.from)}, ${formatCount(piece.to)})`);
        return (
          `rewrite ${name} (heal): ${parts.join(" + ")} = ${formatCount(size)} bytes (was ${formatCount(step.fromSize)}); ` +
          `the old log is copied whole to ${printable(path.basename(step.file))}.replaced first (${formatBytes(step.fromSize)} of free space)`
        );
      }
      case "index-entries": {
        const entries = `${formatPlural(step.content.entries.length, "entry", "entries")}, ${formatCount(step.content.entries.length * INDEX_ENTRY_BYTES)} bytes`;
        if (step.reason === "heal") return `write ${name}: ${entries} (heal: the index over the healed log${oldKept})`;
        if (step.reason === "salvage-prefix" || step.reason === "salvage-rebuilt") {
          const over = step.reason === "salvage-prefix" ? "the proven prefix" : "the new log, as for an index-less segment";
          return `write ${name}: ${entries} (salvage: rebuilt over ${over}${oldKept})`;
        }
        const why = step.reason === "index-less" ? "rebuilt from the walk" : "index disagreed with the walk";
        return `rewrite ${name}: ${entries} (${why}${oldKept})`;
      }
    }
  },
};
