/**
 * docs/heal.md "What a heal fills": the ranges of one local segment that a
 * heal fills from a peer, read from the local scan — its scope of loss
 * (docs/recovery.md §3.7: `unreadable` damage, a `torn` tail) and the offsets
 * a salvage recorded as lost (docs/repair.md §6.6: a forward gap where they
 * were). Pure: a function of the report.
 */
import type { PartitionFinding, PartitionReport, SegmentReport, SegmentScopeRange } from "../../domain/scan.js";

export type LossFinding = Extract<PartitionFinding, { code: "SalvageLostOffsets" }>;

/** A local range to fill, before the peer is read. */
export interface LocalRange {
  kind: "unreadable" | "torn" | "salvage-gap" | "held";
  /** Local bytes replaced: `[localFrom, localTo)` (equal for a gap). */
  localFrom: number;
  localTo: number;
  /** Where the verified chain before the range starts (a `proven` or `intact` range): walked to find the left neighbour. */
  keptFrom: number;
  /** The offset the chain at `keptFrom` expects. */
  keptOffset: bigint;
  /** Whether a verified batch follows the range in this segment (the right neighbour), at `localTo`. */
  rightInSegment: boolean;
  /** For `held`: the offsets recorded as lost that the log holds again. */
  held: { firstOffset: bigint; lastOffset: bigint } | null;
}

/** Why a local segment holds something a heal does not fill (the caller refuses with it). */
export class NotHealableRange extends Error {}

/** Every open salvage loss of the partition, one per range (a re-run salvage journals the same range twice). */
export function lossesOf(partition: PartitionReport): LossFinding[] {
  const seen = new Set<string>();
  const losses: LossFinding[] = [];
  for (const finding of partition.findings) {
    if (finding.code !== "SalvageLostOffsets") continue;
    const key = `${finding.segment}:${finding.firstOffset}:${finding.lastOffset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    losses.push(finding);
  }
  return losses;
}

/**
 * The ranges of `segment` to fill, in byte order. Throws `NotHealableRange`
 * for a refusal that is not damage a peer's batches can replace (an index
 * refusal, an offset going backwards, a probe that ran out of budget), or a
 * recorded loss this segment neither lacks as a gap nor holds again.
 */
export function localRanges(segment: SegmentReport, losses: readonly LossFinding[], isTail: boolean): LocalRange[] {
  const id = segment.startOffset;
  if (segment.refusal !== null && segment.refusal.code !== "InteriorDamage") {
    const why =
      segment.refusal.code === "UnverifiedResidue"
        ? "the probe ran out of budget before it settled the bytes after the damage: scan again with a larger --probe-budget"
        : `it is refused ${segment.refusal.code} (${segment.refusal.message}), which is not damaged bytes a peer's batches replace`;
    throw new NotHealableRange(`segment ${id}: ${why}`);
  }
  const ranges = damagedRanges(segment);
  for (const loss of losses) {
    if (loss.segment === id) ranges.push(lossRange(segment, loss, isTail));
  }
  return ranges.sort((a, b) => a.localFrom - b.localFrom);
}

/** The unreadable and torn ranges of the segment's scope, each with the kept range before it (docs/recovery.md §3.7). */
function damagedRanges(segment: SegmentReport): LocalRange[] {
  const ranges: LocalRange[] = [];
  let kept: { from: number; offset: bigint } = { from: 0, offset: segment.startOffset };
  for (const [i, range] of segment.scope.entries()) {
    if (range.kind === "proven" || range.kind === "intact") {
      kept = { from: range.startPosition, offset: keptOffsetOf(segment, range) };
      continue;
    }
    if (range.bytes === 0) continue;
    if (range.kind !== "unreadable" && range.kind !== "torn") continue;
    // A torn range of verified batches without a message is no damage (docs/recovery.md §3.7).
    if (range.kind === "torn" && range.tornEvidence === null) continue;
    const following = segment.scope[i + 1];
    ranges.push({
      kind: range.kind,
      localFrom: range.startPosition,
      localTo: range.endPosition,
      keptFrom: kept.from,
      keptOffset: kept.offset,
      rightInSegment: following !== undefined && following.kind === "intact",
      held: null,
    });
  }
  return ranges;
}

/** The offset a kept range's chain starts at: the segment's start for the proven prefix, else its first offset. */
function keptOffsetOf(segment: SegmentReport, kept: SegmentScopeRange | undefined): bigint {
  return kept === undefined || kept.kind === "proven" ? segment.startOffset : (kept.firstOffset ?? segment.startOffset);
}

/**
 * The range a recorded loss of this segment asks to fill: a forward gap where
 * the salvage dropped it, offsets the log holds again (`held`), or a torn loss
 * past the end of the tail segment; else `NotHealableRange`.
 */
function lossRange(segment: SegmentReport, loss: LossFinding, isTail: boolean): LocalRange {
  const gap = segment.gaps.find((g) => loss.firstOffset !== null && g.expectedOffset === loss.firstOffset);
  if (gap !== undefined) {
    const keptRange = [...segment.scope]
      .reverse()
      .find((r) => (r.kind === "proven" || r.kind === "intact") && r.startPosition <= gap.position);
    return {
      kind: "salvage-gap",
      localFrom: gap.position,
      localTo: gap.position,
      keptFrom: keptRange?.startPosition ?? 0,
      keptOffset: keptOffsetOf(segment, keptRange),
      rightInSegment: true,
      held: null,
    };
  }
  const first = loss.firstOffset;
  const last = loss.lastOffset;
  const holds =
    first !== null &&
    last !== null &&
    segment.outcome === "clean" &&
    segment.refusal === null &&
    segment.endOffset !== null &&
    segment.startOffset <= first &&
    segment.endOffset >= last &&
    !segment.gaps.some((g) => g.expectedOffset <= last && g.foundOffset > first);
  if (holds) {
    return {
      kind: "held",
      localFrom: 0,
      localTo: 0,
      keptFrom: 0,
      keptOffset: segment.startOffset,
      rightInSegment: false,
      held: { firstOffset: first, lastOffset: last },
    };
  }
  // A torn loss at the end of the tail segment: the segment ends where the salvage cut it; the peer's batches extend it.
  const endsBefore = first !== null && (segment.endOffset === null ? segment.startOffset === first : segment.endOffset + 1n === first);
  if (loss.kind === "torn" && isTail && endsBefore && segment.outcome === "clean") {
    const keptRange = [...segment.scope].reverse().find((r) => r.kind === "proven" || r.kind === "intact");
    return {
      kind: "salvage-gap",
      localFrom: segment.messagesSize,
      localTo: segment.messagesSize,
      keptFrom: keptRange?.startPosition ?? 0,
      keptOffset: keptOffsetOf(segment, keptRange),
      rightInSegment: false,
      held: null,
    };
  }
  const offsets = first === null ? "offsets of unknown range" : `offsets ${first}..${last ?? "unknown"}`;
  throw new NotHealableRange(
    `segment ${segment.startOffset}: the salvage record ${loss.path} (line ${loss.line}) names ${offsets} as lost, and this segment neither shows them as a forward gap nor holds them`,
  );
}
