/** docs/recovery.md §5: refusal values, each with a one-sentence message saying what, where, and why nothing was cut. */
import { formatCount } from "../domain/numbers.js";
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
    message: `segment ${f.segment}: damage at byte ${formatCount(f.damagePosition)} is followed by a complete, verifying batch at byte ${formatCount(f.survivorPosition)} that extends the chain, so the damage hides durable data and was not cut`,
  }),
  unverifiedResidue: (f: Fields<"UnverifiedResidue">): Refusal => ({
    code: "UnverifiedResidue",
    ...f,
    message: `segment ${f.segment}: the ${formatCount(f.residueBytes)}-byte residue after byte ${formatCount(f.damagePosition)} could not be proven free of durable batches within the probe budget (${formatCount(f.spentUnits)} of ${formatCount(f.limitUnits)} units, stopped at byte ${formatCount(f.stoppedAt)}), so it was not cut`,
  }),
  offsetDiscontinuity: (f: Fields<"OffsetDiscontinuity">): Refusal => ({
    code: "OffsetDiscontinuity",
    ...f,
    message: `segment ${f.segment}: the verified batch at byte ${formatCount(f.position)} starts at offset ${f.foundOffset}, below the expected ${f.expectedOffset}; adopting it would regress the offset counter and re-mint served offsets, so nothing was cut`,
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
    message: `segment ${f.segment}: the last index entry (offset ${f.indexedOffset}, byte ${formatCount(exactPosition)}) points at no verifying batch in the ${formatCount(f.messagesSize)}-byte log, so the index claims data the log does not hold and nothing was cut`,
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
