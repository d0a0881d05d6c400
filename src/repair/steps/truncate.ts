/**
 * docs/repair.md §6.2, §6.3: `truncate` cuts a file to its proven prefix P: a
 * segment's torn tail or empty log (role `segment-log`), or the metadata WAL's
 * proven torn tail (role `wal`, docs/node.md N7). Before anything changes,
 * `[P, size)` is copied to `<name>.<P>.residue`, or, all zero, recorded by its
 * length and hash only. The intent carries a proof of the file it cuts (the
 * XXH3-64 of the bytes before P, §6.3); restore re-appends the residue only to
 * that file, and only bytes that are a prefix of the residue may already be
 * back.
 */
import * as path from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Count, Text, U64, closed, literals, nullable } from "../../domain/schema-vocabulary.js";
import { formatCount, formatPlural } from "../../domain/numbers.js";
import { PreserveError, StalePlanError } from "../errors.js";
import { digestRange, forEachChunk, preserveRange, withFile, writeExactly } from "../files.js";
import { CUT_PROOF_BYTES } from "../limits.js";
import {
  CopyName,
  DirName,
  Hash,
  ObservedSchema,
  type StepKind,
  conflict,
  expectFile,
  journalNameOf,
  matches,
  preserveBaseOf,
  rangesEqual,
  segmentContext,
} from "./step.js";

const Role = literals(["segment-log", "wal"] as const);

export const TruncateStepSchema = closed({
  kind: Type.Literal("truncate"),
  role: Role,
  /** The file, as an absolute path inside the target's dir. */
  file: Text,
  /** The segment's start offset, or null for the WAL. */
  segment: nullable(U64),
  /** `empty`: a segment with no whole batch. */
  reason: literals(["torn-tail", "empty", "wal-torn-tail"] as const),
  fromSize: Count,
  /** The proven prefix P. */
  toSize: Count,
  /** `[toSize, fromSize)`: all-zero bytes are recorded by length only, any other bytes are copied first. */
  residue: closed({ bytes: Count, allZero: Type.Boolean() }),
  observed: ObservedSchema,
});
export type TruncateStep = Static<typeof TruncateStepSchema>;

export const TruncateOpSchema = closed({
  kind: Type.Literal("truncate"),
  role: Role,
  file: DirName,
  segment: nullable(U64),
  fromSize: Count,
  toSize: Count,
  /** The cut bytes: copied to `file` in the preserve dir, or (all zero) recorded by length and hash with `file` null. */
  residue: closed({ bytes: Count, allZero: Type.Boolean(), xxh3: Hash, file: nullable(CopyName) }),
  /** docs/repair.md §6.3: the XXH3-64 of `[from, from + bytes)`, the bytes just before the cut point. */
  proof: closed({ from: Count, bytes: Count, xxh3: Hash }),
});
export type TruncateOp = Static<typeof TruncateOpSchema>;

export const truncate: StepKind<TruncateStep, TruncateOp> = {
  schema: TruncateStepSchema,

  async prepare(step, ctx) {
    const { fs, engine, chunkBytes, target } = ctx;
    await expectFile(ctx, step.file, step.fromSize, step.segment, "cut");
    const name = journalNameOf(target, step.file);
    const bytes = step.fromSize - step.toSize;
    const baseName = `${preserveBaseOf(target, step.file)}.${step.toSize}.residue`;
    const kept = await preserveRange(fs, engine, {
      source: step.file,
      from: step.toSize,
      length: bytes,
      preserveDir: target.preserveDir,
      baseName,
      chunkBytes,
      signal: ctx.signal,
      zeroByLength: true,
    });
    if (step.residue.allZero && kept.file !== null) {
      throw new PreserveError(`refusing to cut ${step.file} at ${step.toSize}: the residue the plan calls all zero holds a nonzero byte`, {
        path: step.file,
        position: step.toSize,
      });
    }
    if (kept.file !== null)
      await ctx.record({ kind: "preserved", source: name, from: step.toSize, bytes, xxh3: kept.xxh3, file: kept.file });
    const proofFrom = Math.max(0, step.toSize - CUT_PROOF_BYTES);
    const proof = await digestRange(fs, engine, step.file, proofFrom, step.toSize - proofFrom, chunkBytes, ctx.signal);
    const op: TruncateOp = {
      kind: "truncate",
      role: step.role,
      file: name,
      segment: step.segment,
      fromSize: step.fromSize,
      toSize: step.toSize,
      residue: { bytes, allZero: kept.file === null, xxh3: kept.xxh3, file: kept.file },
      proof: { from: proofFrom, bytes: step.toSize - proofFrom, xxh3: proof.xxh3 },
    };
    return {
      async execute(intent, touching) {
        await withFile(fs, step.file, "r+", async (file) => {
          // The size is checked on the handle that cuts, before the intent, so an intent always describes the file it cuts.
          const size = (await file.stat()).size;
          if (size !== step.fromSize) {
            throw new StalePlanError(
              `refusing to cut ${step.file}: it now holds ${size} bytes, the plan says ${step.fromSize}`,
              { path: step.file, ...segmentContext(step.segment), position: size },
              `size ${size}`,
            );
          }
          await intent(op);
          touching();
          await file.truncate(step.toSize);
          await file.sync();
        });
        const where =
          kept.file === null
            ? `${formatCount(bytes)} zero bytes recorded by length`
            : `${formatCount(bytes)} bytes preserved as ${kept.file}`;
        return {
          summary: `cut ${step.file}: ${formatCount(step.fromSize)} → ${formatCount(step.toSize)} bytes (${where})`,
          preserved: kept.file,
          op,
        };
      },
    };
  },

  journal: {
    schema: TruncateOpSchema,
    copies: (op) =>
      op.residue.file === null ? [] : [{ name: op.residue.file, bytes: op.residue.bytes, xxh3: op.residue.xxh3, what: "residue" }],
    touches: (op) => [op.file],

    async undo(op, ctx) {
      const { fs } = ctx;
      const log = path.join(ctx.dir, op.file);
      const stat = await fs.stat(log);
      if (stat === null) throw conflict(ctx, `${log} is gone, so its cut residue has nowhere to go back to`, log, op.segment);
      const size = stat.size;
      if (size < op.toSize || size > op.fromSize || op.fromSize - op.toSize !== op.residue.bytes) {
        const why = `${log} holds ${size} bytes; it was cut from ${op.fromSize} to ${op.toSize}, so it changed since the repair`;
        throw conflict(ctx, why, log, op.segment, size);
      }
      // docs/repair.md §6.3: the bytes before the cut point prove this is the file that was cut.
      const proof = await digestRange(fs, ctx.engine, log, op.proof.from, op.proof.bytes, ctx.chunkBytes);
      if (proof.xxh3 !== op.proof.xxh3) {
        const range = `[${op.proof.from}, ${op.proof.from + op.proof.bytes})`;
        const why = `${log} is not the file that was cut: its bytes ${range} hash to ${proof.xxh3}, the journal recorded ${op.proof.xxh3} (replaced since the repair?); nothing of it was changed`;
        throw conflict(ctx, why, log, op.segment, op.proof.from);
      }
      const residue = op.residue;
      const source = residue.file === null ? null : path.join(ctx.preserveDir, residue.file);
      if (source !== null && !(await matches(ctx, source, { size: residue.bytes, xxh3: residue.xxh3 }))) {
        const why = `the preserved residue ${source} is not the ${residue.bytes} bytes with XXH3 ${residue.xxh3} the journal recorded`;
        throw conflict(ctx, why, source, op.segment, op.toSize);
      }
      // Whatever of the residue is already back (a crashed restore, or a cut that never happened) must be exactly its prefix.
      const have = size - op.toSize;
      if (have > 0) {
        const same =
          source === null
            ? (await digestRange(fs, ctx.engine, log, op.toSize, have, ctx.chunkBytes)).allZero
            : await rangesEqual(ctx, log, op.toSize, source, 0, have);
        if (!same)
          throw conflict(
            ctx,
            `${log} holds bytes past its cut point ${op.toSize} that are not the preserved residue`,
            log,
            op.segment,
            op.toSize,
          );
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
        const why = `${log} [${op.toSize}, ${op.fromSize}) does not hash to ${residue.xxh3} after re-appending its residue`;
        throw conflict(ctx, why, log, op.segment, op.toSize);
      }
      const how = source === null ? "zero bytes re-extended" : `bytes re-appended from ${path.basename(source)}`;
      return `${op.file}: ${formatCount(op.toSize)} -> ${formatCount(op.fromSize)} bytes (${formatCount(residue.bytes - have)} ${how})`;
    },
  },

  describe(step, { name, printable }) {
    const kept = step.residue.allZero
      ? `${formatPlural(step.residue.bytes, "zero byte")}, recorded by length`
      : `${formatPlural(step.residue.bytes, "byte")}, copied to ${printable(`${path.basename(step.file)}.${step.toSize}.residue`)} first`;
    const why =
      step.reason === "empty"
        ? "empty segment: no whole batch"
        : step.reason === "wal-torn-tail"
          ? "WAL tail: no verified entry follows it"
          : "torn tail";
    return `truncate ${name}: ${formatCount(step.fromSize)} -> ${formatCount(step.toSize)} bytes (${why}; cut ${kept})`;
  },
};
