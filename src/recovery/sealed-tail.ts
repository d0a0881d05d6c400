/**
 * docs/recovery.md §4 step 3: the end of a segment that is not the last.
 *
 * A segment is recovered on its own (§3), so damage that runs to its end with
 * no survivor after it in the same file reads as a torn tail. But the server
 * closes a segment before it writes the next one: when the next segment holds
 * a verified batch that extends the chain, that batch was written after the
 * damaged bytes and is durable, exactly as a survivor inside the file would
 * be (§3.5). Those bytes are damage inside the log with its bytes present,
 * not its torn tail: their scope range is `unreadable`, hiding the offsets up
 * to where the next segment's chain starts (not `torn`, and not a `Hole` of
 * missing bytes between the two segments), and a segment that was `torn-tail`
 * or `empty` is refused `InteriorDamage`, the survivor named in the next
 * segment. Decided from the segments' reports alone, after every segment was
 * recovered: no byte is read again and the probe budget is not touched, so
 * both engines and every window size decide it alike.
 */
import { basename } from "node:path";
import type { SegmentReport, SegmentScopeRange } from "../domain/scan.js";
import { refuse } from "./refusals.js";
import { sealedTailRange } from "./scope.js";
import { keepPrefixMismatches } from "./segment.js";

/** The next segment's first verified range that holds offsets: its proven prefix, or the first intact chain after its own damage. */
function firstVerifiedRange(segment: SegmentReport): SegmentScopeRange | null {
  return (
    segment.scope.find((range) => (range.kind === "proven" || range.kind === "intact") && range.bytes > 0 && range.firstOffset !== null) ??
    null
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

/** Settles, in place, the damaged end of every segment but the last that a verified, chain-extending batch of the next segment follows. */
export function settleSealedTails(segments: readonly SegmentReport[]): void {
  for (let i = 0; i + 1 < segments.length; i++) {
    const segment = segments[i]!;
    const next = segments[i + 1]!;
    const tornIndex = segment.scope.length - 1;
    const torn = segment.scope[tornIndex];
    // Only damage: a torn range of verified batches without a message (an `empty` segment with no residue) is none.
    if (torn === undefined || torn.kind !== "torn" || torn.tornEvidence === null) continue;
    const chainNext = chainNextBefore(segment, tornIndex);
    const survivor = firstVerifiedRange(next);
    // A next segment that holds nothing verified, or starts inside this one's chain (an Overlap), follows no damage here;
    // past u64::MAX (a chain ending there) nothing can extend the chain, so no survivor either.
    if (survivor === null || survivor.firstOffset === null || survivor.firstOffset < chainNext) continue;
    segment.scope = [...segment.scope.slice(0, tornIndex), sealedTailRange(torn, chainNext, survivor.firstOffset)];
    // A segment refused for damage before its end keeps that refusal: only its end is said differently.
    if (segment.outcome === "refused") continue;
    segment.outcome = "refused";
    segment.messageCount = null;
    segment.refusal = refuse.interiorDamageBeforeNextSegment(
      {
        segment: segment.startOffset,
        damagePosition: torn.startPosition,
        survivorPosition: survivor.startPosition,
        survivorSegment: next.startOffset,
      },
      { residueBytes: torn.bytes, files: { previous: basename(segment.logPath), next: basename(next.logPath) } },
    );
    // No repair rewrites a refused segment's index, and entries past the damage are the damage's doing (docs/recovery.md §3.2).
    keepPrefixMismatches(segment, segment.indexMismatchesInPrefix ?? segment.index.mismatches);
    delete segment.indexMismatchesInPrefix;
  }
}
