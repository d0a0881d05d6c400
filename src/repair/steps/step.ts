/**
 * docs/repair.md §6.2: what a step kind is, and what the kinds share. Each
 * kind is one file of this folder, and the table (./index.ts) is the only
 * list of them; the runner, the preflight, restore, forget and the plan text
 * loop over it. A kind provides:
 *
 * - `schema`: its plan step (the plan's JSON, docs/interfaces.md §9.4); the
 *   step's type derives from it;
 * - `check` (optional): what the preflight proves of the step beyond what it
 *   proves of every step (the file as the plan saw it, an offset file's stored
 *   offset);
 * - `prepare`: copies whatever the step will destroy into the preserve dir
 *   and returns its `execute`, which re-checks the file, journals the intent
 *   (the runner appends and fsyncs it), makes the change durable and says
 *   what it did. Every step of a target is prepared before any changes;
 * - `journal`: its intent's op (null for a step that changes nothing): the op
 *   schema, `undo` (restore, decided from the files, so that an intent whose
 *   step never ran, ran part-way or ran fully is undone alike), the preserved
 *   `copies` the op names (restore checks them before the first undo, forget
 *   keeps them while a restore may need them) and the files of the target dir
 *   its undo may change (restore's writer check);
 * - `describe`: its line of the plan text (a dry run).
 */
import * as path from "node:path";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Count, Text, TornEvidenceSchema, U64, closed, literals, nullable } from "../../domain/schema-vocabulary.js";
import type { Engine } from "../../engine/types.js";
import type { JournalRecordBody } from "../../format/journal.js";
import { RestoreConflictError, StalePlanError } from "../errors.js";
import { assert } from "../../assert.js";
import { type PreservedCopy, digestRange, forEachChunk, preserveRange, readExactly, storedOffsetNow, withFile } from "../files.js";
import type { RepairFs } from "../fs-layer.js";

// ---------------------------------------------------------------------------
// Schema pieces the kinds share

/** XXH3-64 as the journal writes it: 16 lower-case hex digits. */
export const Hash = Type.String({ pattern: "^[0-9a-f]{16}$", description: "XXH3-64 as 16 lower-case hex digits" });
/**
 * A file of the target dir as a journal names it: its path under the dir,
 * `/`-separated — a plain name, or an offset file's `offsets/consumers/<id>`
 * or `offsets/groups/<id>` (docs/node.md N7). Never `.`, `..` or a deeper path.
 */
export const DirName = Type.String({ pattern: "^(offsets/(consumers|groups)/)?(?!\\.\\.?$)[^/\\\\]+$" });
/** A file of the preserve dir as a journal names it: a plain name. */
export const CopyName = Type.String({ pattern: "^(?!\\.\\.?$)[^/\\\\]+$" });
/** A file's content by size and hash. */
export const ImageSchema = closed({ size: Count, xxh3: Hash });
/** A file's content and its copy in the preserve dir. */
export const CopySchema = closed({ size: Count, xxh3: Hash, file: CopyName });
/** What a file looked like when the plan was made (null: it did not exist). */
export const ObservedSchema = nullable(closed({ size: Count, mtimeMs: Type.Number({ minimum: 0 }) }));
/** docs/node.md N4: whose cursor an offset file is, and the offset the scan read (null when the file holds none). */
export const ConsumerSchema = nullable(closed({ kind: literals(["consumer", "group"] as const), id: Count, storedOffset: nullable(U64) }));
export type ConsumerRef = NonNullable<Static<typeof ConsumerSchema>>;
/** A segment's start offset; null for a file of no segment (the WAL, an offset file). */
export const SegmentIdSchema = nullable(U64);

/**
 * docs/repair.md §6.5: one byte range of a salvaged segment's old `.log`, as
 * the scan's scope of loss (docs/recovery.md §3.7) has it. Kept: `proven` (the
 * proven prefix) or `intact` (a verified chain after damage); lost:
 * `unreadable` (`messages`: at most that many) or `torn` (`messages`: what its
 * header claims). The plan records the salvage's ranges, and the log
 * rewrite's intent the ones it drops, which a scan then reports (§6.6).
 */
export const SalvageRangeSchema = closed({
  segment: U64,
  kind: literals(["proven", "intact", "unreadable", "torn"] as const),
  startPosition: Count,
  endPosition: Count,
  bytes: Count,
  firstOffset: nullable(U64),
  lastOffset: nullable(U64),
  messages: nullable(Count),
  tornEvidence: nullable(TornEvidenceSchema),
});
export type SalvageRange = Static<typeof SalvageRangeSchema>;

// ---------------------------------------------------------------------------
// What a kind provides

/** The target a step belongs to, as its kind reads it (docs/repair.md §6.2). */
export interface StepTarget {
  /** The directory whose files the steps change. */
  dir: string;
  /** `<realpath(dir)>.segscan`: preserved bytes, moved files, the journal and the lock. */
  preserveDir: string;
  /** Every step of the target, in the order they run. */
  steps: readonly { kind: string; file: string }[];
  /** A salvage target's record (docs/repair.md §6.5). */
  salvage?: { lost: readonly SalvageRange[] };
  /** A heal target's peer (docs/heal.md): a `log-splice` reads its pieces from there. */
  heal?: { peer: string };
}

export interface StepContext {
  fs: RepairFs;
  engine: Engine;
  chunkBytes: number;
  signal: AbortSignal | undefined;
  target: StepTarget;
  /** What each offset rewrite writes, as the preflight proved it from the bytes (docs/repair.md §6.2). */
  offsetValues: ReadonlyMap<string, bigint>;
  /** Appends an informational journal record (a `preserved` copy). */
  record(body: JournalRecordBody): Promise<void>;
}

/** What a step did, for the apply result (the runner adds its kind, role and file). */
export interface StepDone<Op> {
  /** One line: what changed, and where the old bytes are. */
  summary: string;
  /** The preserved copy inside the preserve dir (null: nothing copied, e.g. a zero residue recorded by length). */
  preserved: string | null;
  /** The journal intent the step ran under (null for a step that changes nothing). */
  op: Op | null;
}

export interface PreparedStep<Op> {
  /**
   * Re-checks the file, calls `intent(op, lost)` (the runner journals it,
   * fsynced) right before the change, calls `touching()` right before the
   * first call that may change the target dir (so a failure before it is
   * known to have changed nothing), makes the change durable, and says what
   * was done. A step that changes nothing calls neither.
   */
  execute(intent: (op: Op, lost?: readonly SalvageRange[]) => Promise<void>, touching: () => void): Promise<StepDone<Op>>;
}

/** What the preflight lends a kind's `check` (docs/repair.md §6.2 step 0). */
export interface CheckContext {
  fs: RepairFs;
  /** The partition's head H as the bytes prove it now (docs/node.md N4), or null when they prove none; read once per target. */
  headNow(): Promise<bigint | null>;
  /** Records the value an offset rewrite of `file` writes: proven here, never read from the plan. */
  prove(file: string, value: bigint): void;
}

/** What restore lends an undo. */
export interface UndoContext {
  fs: RepairFs;
  engine: Engine;
  chunkBytes: number;
  /** The target dir and its preserve dir. */
  dir: string;
  preserveDir: string;
  journalPath: string;
  /** The journal line of the intent being undone (for error messages). */
  line: number;
  signal: AbortSignal | undefined;
}

/** A copy in the preserve dir an op names, with the size (and, when known before the step ran, the hash) the journal recorded. */
export interface CopyRef {
  name: string;
  bytes: number;
  /** Null for a file the step itself moves there (it may not be there yet). */
  xxh3: string | null;
  /** How messages name it: "residue", "index", … */
  what: string;
}

export interface OpKind<Op> {
  schema: TSchema;
  undo(op: Op, ctx: UndoContext): Promise<string | null>;
  copies(op: Op): CopyRef[];
  /** Names (under the target dir) of the files its undo may change. */
  touches(op: Op): string[];
}

/** How the plan text names things: a file of the target as the reader should see it, and any text made terminal-safe. */
export interface DescribeContext {
  name: string;
  printable(text: string): string;
}

export interface StepKind<Step, Op = never> {
  schema: TSchema;
  check?(step: Step, ctx: CheckContext): Promise<void>;
  prepare(step: Step, ctx: StepContext): Promise<PreparedStep<Op>>;
  journal: OpKind<Op> | null;
  describe(step: Step, text: DescribeContext): string;
}

// ---------------------------------------------------------------------------
// Helpers the kinds share

/** The name a journal records for a file of the target: its path under the target dir, `/`-separated. */
export function journalNameOf(target: StepTarget, file: string): string {
  return path.relative(target.dir, file).split(path.sep).join("/");
}

/** A preserve-dir base name for a file named by its path under the target dir (`offsets/consumers/7` → `offsets-consumers-7`). */
export function preserveBaseOf(target: StepTarget, file: string): string {
  return journalNameOf(target, file).replaceAll("/", "-");
}

/**
 * Copies `[from, from + length)` of a step's file into the target's preserve
 * dir as `baseName` (files.ts `preserveRange`) and journals the copy as a
 * `preserved` record, before the step changes anything.
 */
export async function preserveCopy(ctx: StepContext, file: string, from: number, length: number, baseName: string): Promise<PreservedCopy> {
  const { fs, engine, chunkBytes, signal, target } = ctx;
  const request = { source: file, from, length, preserveDir: target.preserveDir, baseName, chunkBytes, signal, zeroByLength: false };
  const copy = await preserveRange(fs, engine, request);
  assert(copy.file !== null, "a range preserved without zeroByLength is kept as a file");
  await ctx.record({ kind: "preserved", source: journalNameOf(target, file), from, bytes: copy.bytes, xxh3: copy.xxh3, file: copy.file });
  return copy;
}

/** A segment id as an error's context (none for the WAL or an offset file). */
export const segmentContext = (segment: string | null): { segment?: bigint } => (segment === null ? {} : { segment: BigInt(segment) });

/** The file must be a regular file (never a link: docs/repair.md §6.2 rule 6) of the size the plan says. */
export async function expectFile(ctx: StepContext, file: string, size: number, segment: string | null, what: string): Promise<void> {
  const stat = await ctx.fs.stat(file);
  const actual = stat?.size ?? 0;
  if (stat?.isSymbolicLink === true) {
    throw new StalePlanError(`refusing to ${what} ${file}: it is now a symbolic link`, { path: file }, "symlink");
  }
  if (actual !== size || (stat !== null && !stat.isFile)) {
    throw new StalePlanError(
      `refusing to ${what} ${file}: it holds ${actual} bytes, the plan says ${size}`,
      { path: file, ...segmentContext(segment), position: actual },
      `size ${actual}`,
    );
  }
}

/**
 * An offset file must still store the offset the plan read: a consumer that
 * committed since (say 900, where the plan read 1500 ahead of the head 971)
 * is left as it is, never overwritten (docs/repair.md §6.2). The preflight
 * checks it, and a rewrite again before its copy and right before its intent.
 */
export async function expectStoredOffset(fs: RepairFs, file: string, consumer: ConsumerRef | null): Promise<void> {
  const expected = consumer?.storedOffset ?? null;
  const now = await storedOffsetNow(fs, file);
  if (now === expected) return;
  throw new StalePlanError(
    `refusing to change ${file}: it now stores offset ${now ?? "none"}, the plan read ${expected ?? "none"} (a consumer committed since the plan); it is left as it is (scan and plan again)`,
    { path: file },
    `offset ${now ?? "none"}`,
  );
}

/** `kind id` of an offset file's consumer, for the plan text. */
export function consumerName(consumer: ConsumerRef | null): string {
  return consumer === null ? "" : `${consumer.kind} ${consumer.id}`;
}

/** A restore conflict at the intent being undone: nothing of `filePath` is changed. */
export function conflict(
  ctx: UndoContext,
  message: string,
  filePath: string,
  segment: string | null,
  position?: number,
): RestoreConflictError {
  return new RestoreConflictError(`cannot restore from ${ctx.journalPath} (the step on line ${ctx.line}): ${message}`, {
    path: filePath,
    ...segmentContext(segment),
    ...(position !== undefined ? { position } : {}),
  });
}

/** Whether a file is a regular file holding exactly `image` (its length and XXH3-64). */
export async function matches(ctx: UndoContext, filePath: string, image: { size: number; xxh3: string }): Promise<boolean> {
  const stat = await ctx.fs.stat(filePath);
  if (stat === null || !stat.isFile || stat.size !== image.size) return false;
  return (await digestRange(ctx.fs, ctx.engine, filePath, 0, image.size, ctx.chunkBytes, ctx.signal)).xxh3 === image.xxh3;
}

/** Whether `[aFrom, aFrom + length)` of `a` equals `[bFrom, …)` of `b`, streamed. */
export async function rangesEqual(ctx: UndoContext, a: string, aFrom: number, b: string, bFrom: number, length: number): Promise<boolean> {
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

export { Count, Text, U64, closed, literals, nullable };
