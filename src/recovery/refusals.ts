/** docs/recovery.md §5: refusal values, each with a one-sentence message saying what, where, and why nothing was cut. */
import type { Refusal } from "../domain/scan.js";

/** The `.log` file names of the two segments a contiguity refusal is about. */
export interface SegmentPair {
  previous: string;
  next: string;
}

type Fields<C extends Refusal["code"]> = Omit<Extract<Refusal, { code: C }>, "code" | "message">;

export const refuse = {
  interiorDamage: (f: Fields<"InteriorDamage">): Refusal => ({
    code: "InteriorDamage",
    ...f,
    message: `segment ${f.segment}: damage at byte ${f.damagePosition} is followed by a complete, verifying batch at byte ${f.survivorPosition} that extends the chain, so the damage hides durable data and was not cut`,
  }),
  /**
   * docs/recovery.md §4 step 3: damage that runs to the end of a segment that
   * is not the last, with the next segment's verified batch extending the
   * chain: the survivor is in that segment.
   */
  interiorDamageBeforeNextSegment: (
    f: Fields<"InteriorDamage"> & { survivorSegment: bigint },
    context: { residueBytes: number; files: SegmentPair },
  ): Refusal => ({
    code: "InteriorDamage",
    ...f,
    message: `segment ${f.segment}: the ${context.residueBytes} bytes from byte ${f.damagePosition} to the end of ${context.files.previous} do not verify, and segment ${f.survivorSegment} (${context.files.next}) follows with a complete, verifying batch at byte ${f.survivorPosition} that extends the chain: a segment is closed before the next one is written, so these bytes are damage inside the log, not its torn tail, and were not cut`,
  }),
  unverifiedResidue: (f: Fields<"UnverifiedResidue">): Refusal => ({
    code: "UnverifiedResidue",
    ...f,
    message: `segment ${f.segment}: the ${f.residueBytes}-byte residue after byte ${f.damagePosition} could not be proven free of durable batches within the probe budget (${f.spentUnits} of ${f.limitUnits} units, stopped at byte ${f.stoppedAt}), so it was not cut`,
  }),
  offsetDiscontinuity: (f: Fields<"OffsetDiscontinuity">): Refusal => ({
    code: "OffsetDiscontinuity",
    ...f,
    message: `segment ${f.segment}: the verified batch at byte ${f.position} starts at offset ${f.foundOffset}, below the expected ${f.expectedOffset}; adopting it would regress the offset counter and re-mint served offsets, so nothing was cut`,
  }),
  indexEntriesNotMonotone: (f: Fields<"IndexEntriesNotMonotone">): Refusal => ({
    code: "IndexEntriesNotMonotone",
    ...f,
    message: `segment ${f.segment}: index entry ${f.entryIndex} does not strictly ascend in offset and position, so the index cannot be trusted and nothing was cut`,
  }),
  indexEntryBeforeSegmentStart: (f: Fields<"IndexEntryBeforeSegmentStart">): Refusal => ({
    code: "IndexEntryBeforeSegmentStart",
    ...f,
    message: `segment ${f.segment}: the first index entry claims offset ${f.firstEntryOffset}, below the segment's start, so the index cannot be trusted and nothing was cut`,
  }),
  sizeDivergence: (f: Fields<"SizeDivergence">, exactPosition: bigint = BigInt(f.indexedPosition)): Refusal => ({
    code: "SizeDivergence",
    ...f,
    message: `segment ${f.segment}: the last index entry (offset ${f.indexedOffset}, byte ${exactPosition}) points at no verifying batch in the ${f.messagesSize}-byte log, so the index claims data the log does not hold and nothing was cut`,
  }),
  emptyNonTailSegment: (f: Fields<"EmptyNonTailSegment">, files: SegmentPair): Refusal => ({
    code: "EmptyNonTailSegment",
    ...f,
    message: `segment ${f.emptyStart} (${files.previous}) holds no batch but segment ${f.nextStart} (${files.next}) follows it, so offsets would be missing from the chain and nothing was cut`,
  }),
  hole: (f: Fields<"Hole">, files: SegmentPair): Refusal => ({
    code: "Hole",
    ...f,
    message: `segment ${f.nextStart} (${files.next}) starts above ${f.previousEnd} + 1, the end of segment ${f.previousStart} (${files.previous}), so offsets are missing between them and nothing was cut`,
  }),
  overlap: (f: Fields<"Overlap">, files: SegmentPair): Refusal => ({
    code: "Overlap",
    ...f,
    message: `segment ${f.nextStart} (${files.next}) starts at or below ${f.previousEnd}, the end of segment ${f.previousStart} (${files.previous}), so offsets would be served twice and nothing was cut`,
  }),
};
