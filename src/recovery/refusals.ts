/** docs/recovery.md §5: refusal values, each with a one-sentence message saying what, where, and why nothing was cut. */
import { formatCount } from "../domain/numbers.js";
import type { Refusal, TornEvidence } from "../domain/scan.js";
import { offsetsText } from "../policy/next-step.js";
import { TORN_BATCH_BYTES_WORDS } from "../policy/torn-evidence.js";

/** The `.log` file names of the two segments a contiguity refusal is about. */
export interface SegmentPair {
  previous: string;
  next: string;
}

type Fields<C extends Refusal["code"]> = Omit<Extract<Refusal, { code: C }>, "code" | "message">;

/**
 * The damaged range a segment that is not the last ends in (docs/recovery.md
 * §4 step 3): where its bytes lie in the `.log` and what they prove (null
 * when no probe said it).
 */
export interface DamagedEnd {
  startPosition: number;
  endPosition: number;
  evidence: TornEvidence | null;
}

/**
 * "offsets 7..11 are missing from the chain; their bytes are present at …":
 * the offsets `first..nextStart − 1` a contiguity refusal is about, what the
 * damaged end that holds their bytes is, and why that is no torn tail of the
 * log (the words of a Hole and an EmptyNonTailSegment, docs/recovery.md §4 step 3).
 */
function damagedEndWords(first: bigint, nextStart: bigint, damaged: DamagedEnd, logName: string): string {
  const one = first === nextStart - 1n;
  const offsets = offsetsText({ firstOffset: first, lastOffset: nextStart - 1n });
  const bytes = damaged.endPosition - damaged.startPosition;
  const what = damaged.evidence === null ? "" : ` (${TORN_BATCH_BYTES_WORDS[damaged.evidence]})`;
  // "the 100 bytes from byte 1,158", not "[1,158, 1,258)": with thousands separators a bracketed pair no longer reads as two numbers.
  return (
    `${one ? "offset" : "offsets"} ${offsets} ${one ? "is" : "are"} missing from the chain; ${one ? "its" : "their"} bytes are present ` +
    `in the ${formatCount(bytes)} byte${bytes === 1 ? "" : "s"} from byte ${formatCount(damaged.startPosition)} of ${logName}${what} but do not verify, ` +
    "so this is damage at the end of a segment that is not the last, not a torn tail of the log, and nothing was cut"
  );
}

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
  emptyNonTailSegment: (f: Fields<"EmptyNonTailSegment">, files: SegmentPair, damaged: DamagedEnd | null = null): Refusal => ({
    code: "EmptyNonTailSegment",
    ...f,
    message:
      damaged === null
        ? `segment ${f.emptyStart} (${files.previous}) holds no batch but segment ${f.nextStart} (${files.next}) follows it, so offsets would be missing from the chain and nothing was cut`
        : `segment ${f.emptyStart} (${files.previous}) holds no verified batch but segment ${f.nextStart} (${files.next}) follows it: ` +
          damagedEndWords(f.emptyStart, f.nextStart, damaged, files.previous),
  }),
  hole: (f: Fields<"Hole">, files: SegmentPair, damaged: DamagedEnd | null = null): Refusal => ({
    code: "Hole",
    ...f,
    message:
      damaged === null
        ? `segment ${f.nextStart} (${files.next}) starts above ${f.previousEnd} + 1, the end of segment ${f.previousStart} (${files.previous}), so offsets are missing between them and nothing was cut`
        : `segment ${f.nextStart} (${files.next}) starts above ${f.previousEnd} + 1, the end of segment ${f.previousStart} (${files.previous}): ` +
          damagedEndWords(f.previousEnd + 1n, f.nextStart, damaged, files.previous),
  }),
  overlap: (f: Fields<"Overlap">, files: SegmentPair): Refusal => ({
    code: "Overlap",
    ...f,
    message: `segment ${f.nextStart} (${files.next}) starts at or below ${f.previousEnd}, the end of segment ${f.previousStart} (${files.previous}), so offsets would be served twice and nothing was cut`,
  }),
};
