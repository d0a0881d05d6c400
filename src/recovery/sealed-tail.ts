/**
 * docs/recovery.md §4 step 3: the damaged end of a segment that is not the last.
 *
 * A segment is recovered on its own (§3): damage that runs to its end with no
 * survivor in its own file is a torn tail, and the segment keeps that outcome
 * (`torn-tail`, `empty`, or its earlier refusal). Contiguity then judges the
 * chain between segments: when the cut would leave offsets that the next
 * segment's start says were written, the partition is refused `Hole` (or
 * `EmptyNonTailSegment`). What this module adds is the words: the bytes of
 * those offsets are there, in the damaged end of the segment, so its scope
 * range says `unreadable` with the offsets it hides instead of a `torn` tail
 * followed by offsets `missing` between the segments.
 *
 * Decided from the segments' reports alone, after every segment was
 * recovered: no byte is read again and the probe budget is not touched, so
 * both engines and every window size decide it alike, and no verdict or
 * refusal code changes.
 */
import type { SegmentReport } from "../domain/scan.js";
import { sealedTailRange } from "./scope.js";

/** Whether the segment holds a verified range that holds offsets: its proven prefix, or an intact chain after its own damage. */
function holdsVerifiedOffsets(segment: SegmentReport): boolean {
  return segment.scope.some(
    (range) => (range.kind === "proven" || range.kind === "intact") && range.bytes > 0 && range.firstOffset !== null,
  );
}

/**
 * The offset the chain expects at the start of the segment's torn range: past
 * the intact chain before it, or past the proven prefix's last message (the
 * damage probe's floor, docs/recovery.md §3.5), or the segment's start when
 * it proves no message.
 */
function chainNextBefore(segment: SegmentReport, tornIndex: number): bigint {
  const before = segment.scope[tornIndex - 1];
  if (before?.kind === "intact" && before.lastOffset !== null) return before.lastOffset + 1n;
  return segment.lastBatch !== null && segment.endOffset !== null ? segment.endOffset + 1n : segment.startOffset;
}

/**
 * Says, in place, what the damaged end of every segment but the last is when
 * the next segment's verified chain follows it and starts above the chain's
 * next offset: its `torn` range becomes `unreadable`, hiding the offsets from
 * the chain's next offset to the next segment's start − 1 (bounded by where
 * the next segment starts, not by its first verified batch, which may sit
 * after damage of its own). A damaged end that hides no offset (junk after the
 * last batch, the next segment starting right at the chain's next offset)
 * stays the torn tail a repair cuts.
 */
export function settleSealedTails(segments: readonly SegmentReport[]): void {
  for (let i = 0; i + 1 < segments.length; i++) {
    const segment = segments[i]!;
    const next = segments[i + 1]!;
    const tornIndex = segment.scope.length - 1;
    const torn = segment.scope[tornIndex];
    // Only damage: a torn range of verified batches without a message (an `empty` segment with no residue) is none.
    if (torn === undefined || torn.kind !== "torn" || torn.tornEvidence === null) continue;
    // A next segment that holds nothing verified (a freshly rolled empty file, one refused before anything was
    // proven) does not show that the server wrote past these bytes: they stay what their own file says.
    if (!holdsVerifiedOffsets(next)) continue;
    const chainNext = chainNextBefore(segment, tornIndex);
    // At or below the chain's next offset the damaged end hides no offset (or the segments overlap): a torn tail.
    if (next.startOffset <= chainNext) continue;
    segment.scope = [...segment.scope.slice(0, tornIndex), sealedTailRange(torn, chainNext, next.startOffset)];
  }
}
