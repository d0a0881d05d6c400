/** Typed repair/restore errors. Each names the file and, where one applies, the segment and byte position. */
import { JOURNAL_VERSION } from "../format/journal.js";
import type { SalvageRefusalCode } from "../policy/salvage.js";

export interface RepairErrorContext {
  /** The file or directory concerned. */
  path: string;
  /** The segment's start offset, when the error concerns one segment. */
  segment?: bigint;
  /** A byte position or size in `path`, when one applies. */
  position?: number;
}

export class RepairError extends Error {
  override name = "RepairError";
  readonly path: string;
  readonly segment: bigint | undefined;
  readonly position: number | undefined;
  /**
   * Set by the runner on a run that stopped part-way (docs/repair.md §6.2):
   * true when files outside a preserve dir were changed before it stopped, so
   * the CLI exits 9 (1|8), not 8; undefined when the error did not come from a run.
   */
  changed: boolean | undefined = undefined;

  constructor(message: string, context: RepairErrorContext, options?: { cause?: unknown }) {
    super(message, options);
    this.path = context.path;
    this.segment = context.segment;
    this.position = context.position;
  }
}

/** A plan that cannot be built from a report (e.g. a rebuilt index without its entries). */
export class PlanError extends RepairError {
  override name = "PlanError";
}

/**
 * The files no longer match the plan: the fresh scan's plan differs, or a file
 * changed size between the re-scan and the step that would cut it. Nothing of
 * that partition was written (when raised by the re-scan check, nothing at all).
 */
export class StalePlanError extends RepairError {
  override name = "StalePlanError";
  constructor(
    message: string,
    context: RepairErrorContext,
    readonly detail: string,
  ) {
    super(message, context);
  }
}

/** Bytes about to be cut are not what the plan says they are (e.g. an "all-zero" residue holds a nonzero byte). */
export class PreserveError extends RepairError {
  override name = "PreserveError";
}

/**
 * Restore found a state it cannot undo safely: a preserved file's XXH3 or
 * length does not match the journal, a log's size is neither the cut point nor
 * the original size, or both the original and the moved copy of a file exist.
 * Restore stops there; every undo already done is idempotent, so fixing the
 * conflict and running restore again converges.
 */
export class RestoreConflictError extends RepairError {
  override name = "RestoreConflictError";
}

/**
 * The journal cannot be trusted as a record of what was done: a line other
 * than a torn last one does not parse as a record, a `done` or `undone` names
 * no intent written before it. Nothing was changed by the reader; the journal
 * is left exactly where it is.
 */
export class JournalCorruptError extends RepairError {
  override name = "JournalCorruptError";
  constructor(
    message: string,
    context: RepairErrorContext,
    readonly line: number,
  ) {
    super(message, context);
  }
}

/**
 * docs/repair.md §6.2: a journal of another version than this segscan's (one
 * an earlier segscan wrote): it is never read as this version's, so nothing
 * was restored, repaired or deleted, and the journal is left in place. The
 * segscan that wrote it can restore or forget its runs.
 */
export class JournalVersionError extends RepairError {
  override name = "JournalVersionError";
  constructor(
    journalPath: string,
    readonly line: number,
    readonly version: number,
  ) {
    const by = version < JOURNAL_VERSION ? "an earlier" : "a newer";
    super(
      `journal ${journalPath} was written by ${by} segscan (line ${line} is journal version ${version}; this segscan reads version ${JOURNAL_VERSION} only), ` +
        "so nothing was restored or changed and the journal is left in place: restore or forget its runs with the segscan that wrote it; " +
        `once no run in it needs undoing, move ${journalPath} out of its preserve dir (it is the record of what those runs changed and of any offsets a salvage dropped)`,
      { path: journalPath },
    );
  }
}

/**
 * The target may not be repaired as asked: a single `.log` whose partition a
 * full scan refuses (or cannot read), or that is not its partition's tail
 * segment. Nothing was written.
 */
export class TargetRefusedError extends RepairError {
  override name = "TargetRefusedError";
}

/** Why `planSalvage` made no plan: the decision's codes (policy/salvage.ts), and what the command was given. */
export type SalvageRefusal = SalvageRefusalCode | "NotOnePartition" | "LoneSegment";

/** A partition-level command refuses with a code: the message says why and what to do instead. Nothing was written. */
abstract class CodedRefusal<Code extends string> extends RepairError {
  constructor(
    message: string,
    readonly code: Code,
    partitionPath: string,
  ) {
    super(message, { path: partitionPath });
  }
}

/** `planSalvage` refuses: there is nothing salvage may do for this partition (docs/repair.md §6.5). */
export class SalvageRefusedError extends CodedRefusal<SalvageRefusal> {
  override name = "SalvageRefusedError";
}

/** Why `planHeal` made no plan (docs/heal.md "When heal refuses"). */
export type HealRefusal =
  | "NotOnePartition"
  | "MetadataPlane"
  | "SamePartition"
  | "NotHealable"
  | "NotProven"
  | "Divergence"
  | "SegmentBoundary";

/** `planHeal` refuses (docs/heal.md "When heal refuses"). */
export class HealRefusedError extends CodedRefusal<HealRefusal> {
  override name = "HealRefusedError";
}

/** docs/repair.md §6.7: a preserve dir `segscan forget` may not touch (a symbolic link, not a directory). Nothing was changed. */
export class ForgetRefusedError extends RepairError {
  override name = "ForgetRefusedError";
}
