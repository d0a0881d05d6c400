/**
 * docs/repair.md §6.2: the table of step kinds, the one list of them. The
 * runner, the preflight, restore, forget and the plan text loop over it, and
 * a plan step's `kind` is the same word as its journal op's. A new kind is one
 * file of this folder (./step.ts says what it provides) and its entry here.
 *
 * | kind            | preserved first                         | change                                   | journal op    |
 * | --------------- | --------------------------------------- | ---------------------------------------- | ------------- |
 * | `truncate`      | `[P, size)` (all zero: by length only)  | truncate to P, fsync                     | `truncate`    |
 * | `replace`       | the old file, whole                     | staging, fsync, rename over, fsync dir   | `replace`     |
 * | `move-aside`    | (the file itself is moved)              | link into the preserve dir, unlink, fsyncs | `move-aside` |
 * | `evidence-copy` | the file's first bytes                  | none                                     | none          |
 */
import { type Static, Type } from "@sinclair/typebox";
import { firstSchemaProblem } from "../../domain/schema-vocabulary.js";
import type { JournalEntry } from "../../format/journal.js";
import { EvidenceCopyStepSchema, evidenceCopy } from "./evidence-copy.js";
import { MoveAsideOpSchema, MoveAsideStepSchema, moveAside } from "./move-aside.js";
import { ReplaceOpSchema, ReplaceStepSchema, replace } from "./replace.js";
import type { OpKind, StepKind } from "./step.js";
import { TruncateOpSchema, TruncateStepSchema, truncate } from "./truncate.js";

export const PlanStepSchema = Type.Union([TruncateStepSchema, ReplaceStepSchema, MoveAsideStepSchema, EvidenceCopyStepSchema]);
export const JournalOpSchema = Type.Union([TruncateOpSchema, ReplaceOpSchema, MoveAsideOpSchema]);
export type PlanStep = Static<typeof PlanStepSchema>;
export type JournalOp = Static<typeof JournalOpSchema>;
type StepOf<K> = Extract<PlanStep, { kind: K }>;
type OpOf<K> = Extract<JournalOp, { kind: K }>;

/** Every step kind, by the name its plan steps and journal ops carry (a kind missing here does not compile). */
export const STEP_KINDS: { readonly [K in PlanStep["kind"]]: StepKind<StepOf<K>, OpOf<K>> } = {
  truncate,
  replace,
  "move-aside": moveAside,
  "evidence-copy": evidenceCopy,
};

/** The kind of a plan step. */
export function stepKindOf<S extends PlanStep>(step: S): StepKind<S, OpOf<S["kind"]>> {
  return STEP_KINDS[step.kind] as unknown as StepKind<S, OpOf<S["kind"]>>;
}

/** How a journal op is undone (every op's kind journals ops; a kind that changes nothing journals none). */
export function opKindOf<O extends JournalOp>(op: O): OpKind<O> {
  return STEP_KINDS[op.kind].journal as unknown as OpKind<O>;
}

const kindNamed = (kind: unknown): StepKind<unknown, unknown> | null =>
  typeof kind === "string" && Object.hasOwn(STEP_KINDS, kind) ? (STEP_KINDS[kind as PlanStep["kind"]] as StepKind<unknown, unknown>) : null;

/** The first way a plan step breaks its kind's schema, as `<at>…: <what>`, or null. */
export function planStepProblem(step: unknown, at: string): string | null {
  const kind = kindNamed((step as { kind?: unknown } | null)?.kind);
  if (kind === null) return `${at}.kind: not a step kind (${Object.keys(STEP_KINDS).join(", ")})`;
  return firstSchemaProblem(kind.schema, step, at);
}

/**
 * The first intent of a journal whose op this segscan cannot act on: no kind
 * of the table, or not its kind's op schema (docs/repair.md §6.2). Acting on
 * an op read wrong could skip an undo or undo the wrong file.
 */
export function journalOpProblem(entries: readonly JournalEntry[]): { line: number; why: string } | null {
  for (const { record, line } of entries) {
    if (record.kind !== "intent") continue;
    const journal = kindNamed(record.op.kind)?.journal ?? null;
    if (journal === null) return { line, why: `is an intent of no step kind that journals one (${JSON.stringify(record.op.kind)})` };
    const problem = firstSchemaProblem(journal.schema, record.op, "op");
    if (problem !== null) return { line, why: `is an intent this segscan cannot act on (${problem})` };
  }
  return null;
}

export type { EvidenceCopyStep } from "./evidence-copy.js";
export type { MoveAsideOp, MoveAsideStep } from "./move-aside.js";
export type { ReplaceOp, ReplaceStep } from "./replace.js";
export type { ConsumerRef, SalvageRange, StepContext, StepDone, StepTarget, UndoContext } from "./step.js";
export type { TruncateOp, TruncateStep } from "./truncate.js";
export { SalvageRangeSchema, journalNameOf } from "./step.js";
