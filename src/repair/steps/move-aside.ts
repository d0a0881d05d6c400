/**
 * docs/repair.md §6.2, §6.5: `move-aside` moves a file into the preserve dir:
 * a scratch file or an orphan index (role `sweep`), an offset file on an
 * empty partition (role `offset`, docs/node.md N4), or a salvaged segment's
 * index whose entries point into bytes the log rewrite moves (role `index`).
 * The move links the file under its new name, fsyncs the preserve dir, then
 * unlinks the old name and fsyncs its directory, so no crash leaves it under
 * neither name (`moveBetweenDirs`); restore moves it back.
 */
import * as path from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Count, Text, closed, literals } from "../../domain/schema-vocabulary.js";
import { RepairError, StalePlanError } from "../errors.js";
import { freeName, moveBetweenDirs } from "../files.js";
import { RepairIoError } from "../fs-layer.js";
import type { RepairFs } from "../fs-layer.js";
import {
  ConsumerSchema,
  CopyName,
  DirName,
  ObservedSchema,
  type StepKind,
  conflict,
  consumerName,
  journalNameOf,
  preserveBaseOf,
  rangesEqual,
} from "./step.js";

const Role = literals(["sweep", "offset", "index"] as const);
const Reason = literals(["staging", "orphan-index", "offset-on-empty-partition", "salvage"] as const);

export const MoveAsideStepSchema = closed({
  kind: Type.Literal("move-aside"),
  role: Role,
  file: Text,
  reason: Reason,
  /** What it moves (a sweep's: as the plan observed it). */
  size: Count,
  consumer: ConsumerSchema,
  observed: ObservedSchema,
});
export type MoveAsideStep = Static<typeof MoveAsideStepSchema>;

export const MoveAsideOpSchema = closed({
  kind: Type.Literal("move-aside"),
  role: Role,
  reason: Reason,
  /** From the target dir … */
  file: DirName,
  /** … to the preserve dir. */
  to: CopyName,
  size: Count,
});
export type MoveAsideOp = Static<typeof MoveAsideOpSchema>;

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

export const moveAside: StepKind<MoveAsideStep, MoveAsideOp> = {
  schema: MoveAsideStepSchema,

  async prepare(step, ctx) {
    const { fs, target } = ctx;
    const stat = await fs.stat(step.file);
    if (stat === null || !stat.isFile || stat.isSymbolicLink === true) {
      throw new StalePlanError(
        `refusing to move ${step.file} aside: it is gone or not a regular file`,
        { path: step.file },
        "move missing",
      );
    }
    return {
      async execute(intent, touching) {
        const to = await freeName(fs, target.preserveDir, preserveBaseOf(target, step.file));
        const op: MoveAsideOp = {
          kind: "move-aside",
          role: step.role,
          reason: step.reason,
          file: journalNameOf(target, step.file),
          to,
          size: stat.size,
        };
        await intent(op);
        try {
          await moveInto(fs, step.file, path.join(target.preserveDir, to));
        } catch (error) {
          if (!(error instanceof MoveRefusedError)) touching(); // it may have moved part-way (a second name): restore takes it back
          throw error;
        }
        touching();
        return { summary: `moved ${step.file} → ${path.join(target.preserveDir, to)} (${step.reason})`, preserved: to, op };
      },
    };
  },

  journal: {
    schema: MoveAsideOpSchema,
    // The moved file itself: its hash was never taken, and before the move ran it is not there yet.
    copies: (op) => [{ name: op.to, bytes: op.size, xxh3: null, what: "moved file" }],
    touches: (op) => [op.file],

    async undo(op, ctx) {
      const from = path.join(ctx.dir, op.file);
      const to = path.join(ctx.preserveDir, op.to);
      const home = await ctx.fs.stat(from);
      const aside = await ctx.fs.stat(to);
      if (home !== null && aside === null) return null; // never moved, or already back
      // A power cut between the two directory fsyncs of a move can leave the file under both names
      // (the move is durable in one directory, not yet in the other): identical bytes mean it is home.
      if (home !== null && aside !== null && home.size === aside.size && (await rangesEqual(ctx, from, 0, to, 0, home.size))) return null;
      if (home !== null || aside === null) {
        throw conflict(
          ctx,
          home !== null ? `both ${from} and its moved copy ${to} exist` : `${op.file} is neither in ${ctx.dir} nor at ${to}`,
          from,
          null,
        );
      }
      if (aside.size !== op.size) throw conflict(ctx, `${to} holds ${aside.size} bytes, the journal says ${op.size}`, to, null);
      await moveBetweenDirs(ctx.fs, to, from); // into the partition dir, or its offsets dir (docs/node.md N7)
      return `${op.file}: moved back (${op.reason})`;
    },
  },

  describe(step, { name }) {
    if (step.role === "index") {
      return `move ${name} into the preserve dir (salvage: its entries point into bytes the log rewrite moves; a new index is written after the log)`;
    }
    return step.role === "offset"
      ? `move ${name} (${consumerName(step.consumer)}, offset ${step.consumer?.storedOffset} on an empty partition) into the preserve dir: CHANGES WHAT THIS CONSUMER READS NEXT (it starts at the first new message instead of skipping it)`
      : `sweep ${name} (${step.reason}): move into the preserve dir`;
  },
};
