/**
 * The scope of loss (docs/recovery.md §3.7): what a segment's bytes prove,
 * range by range, in offsets, messages and bytes, so an operator reads how
 * much is at stake instead of finding it with `dump`. Every range comes from
 * the same walk and probe as the verdict, so both engines and every window
 * size give the same ranges; the survivor walk after a refusal spends its own
 * budget (`ScopeBudget`), never the probe's, so it can never change a verdict.
 */
import { assert } from "../assert.js";
import { U64_MAX } from "../format/constants.js";
import { type BatchHeader, VerifyStatus } from "../format/records.js";
import type { FileWindow } from "../engine/file-window.js";
import type { PartitionScopeRange, SegmentReport, SegmentScopeRange, TornEvidence } from "../domain/scan.js";
import { type ProbeBudget, probeResidue, residueIsAllZero } from "./probe.js";
import { verifyBatchAt } from "./verify.js";
import { type WalkResult, lastOffsetOf, walkBatches } from "./walk.js";

/**
 * Most ranges one segment's scope lists. Each damaged range after a survivor
 * adds two (unreadable, intact); a segment damaged every other batch would
 * otherwise list thousands. The range that would pass the cap becomes one
 * `unreadable` range to the segment's end, its last offset unknown: the
 * report stays small and says honestly that the rest was not mapped.
 */
export const MAX_SCOPE_RANGES_PER_SEGMENT = 32;

/** A walk's failure at its stop: why the batch there did not verify, and its header when that decodes. */
export type WalkFailure = WalkResult["failure"];

/** `value` when it is a u64, else null (the chain's next offset after u64::MAX is 2^64: nothing can carry it). */
const u64OrNull = (value: bigint): bigint | null => (value <= U64_MAX ? value : null);

/** How many offsets `first..last` holds, as a JSON-safe count (null past 2^53 − 1: the offsets say it exactly). */
function offsetSpan(first: bigint, last: bigint): number | null {
  const span = last - first + 1n;
  return span <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(span) : null;
}

/**
 * docs/recovery.md §3.7: what the bytes at a damage position prove about the
 * batch that did not verify there. Only a zero-filled residue and a short
 * batch prove the append never completed; a complete batch whose checksum
 * fails, and any other failure, look the same whether a write was torn or
 * an acknowledged batch rotted.
 */
export function tornEvidenceOf(failure: WalkFailure, allZero: boolean): TornEvidence {
  if (allZero) return "zero-filled";
  if (failure === null) return "unverifiable";
  switch (failure.status) {
    // Fewer than 256 bytes left, or a header that passes the gate (length within the cap) claims more bytes than remain.
    case VerifyStatus.HeaderBeyondFile:
    case VerifyStatus.BatchBeyondFile:
      return "short-batch";
    // The header decodes and the length fits: only a checksum fails.
    case VerifyStatus.FrameChecksum:
    case VerifyStatus.BatchChecksum:
      return failure.header === null ? "unverifiable" : "complete-batch";
    default:
      return "unverifiable";
  }
}

function segmentRange(
  kind: SegmentScopeRange["kind"],
  startPosition: number,
  endPosition: number,
  offsets: Pick<SegmentScopeRange, "firstOffset" | "lastOffset" | "messages">,
  tornEvidence: TornEvidence | null = null,
): SegmentScopeRange {
  return { kind, ...offsets, bytes: endPosition - startPosition, startPosition, endPosition, tornEvidence };
}

const NO_OFFSETS = { firstOffset: null, lastOffset: null, messages: 0 } as const;

/**
 * The proven prefix `[0, walkedSize)`: offsets startOffset..endOffset, its
 * messages when the walk counted them from byte 0 (`prefixMessages`).
 */
export function provenRange(report: SegmentReport, prefixMessages: number | null): SegmentScopeRange {
  const offsets =
    report.endOffset === null || report.walkedSize === 0
      ? NO_OFFSETS
      : { firstOffset: report.startOffset, lastOffset: report.endOffset, messages: prefixMessages };
  return segmentRange("proven", 0, report.walkedSize, offsets);
}

/**
 * Bytes `[start, end)` segscan cannot prove, hiding the offsets from
 * `nextOffset` (the chain's next expected offset) to the survivor's base
 * offset − 1; the last offset is unknown (null) when no survivor bounds them.
 */
function unreadableRange(start: number, end: number, nextOffset: bigint | null, survivorBase: bigint | null): SegmentScopeRange {
  if (nextOffset === null) return segmentRange("unreadable", start, end, NO_OFFSETS); // nothing can extend a chain ending at u64::MAX
  if (survivorBase === null) return segmentRange("unreadable", start, end, { firstOffset: nextOffset, lastOffset: null, messages: null });
  // A survivor at the very next offset: the damage hid bytes but no offset (a damaged empty batch, inserted junk).
  if (survivorBase <= nextOffset) return segmentRange("unreadable", start, end, NO_OFFSETS);
  const lastOffset = survivorBase - 1n;
  return segmentRange("unreadable", start, end, { firstOffset: nextOffset, lastOffset, messages: offsetSpan(nextOffset, lastOffset) });
}

/** What the first header of a torn range claims: its offsets and message count when it decodes, else unknown. */
function claimedOffsets(header: BatchHeader | null): Pick<SegmentScopeRange, "firstOffset" | "lastOffset" | "messages"> {
  if (header === null) return { firstOffset: null, lastOffset: null, messages: null };
  if (header.messageCount === 0) return NO_OFFSETS;
  const lastOffset = header.baseOffset + BigInt(header.messageCount) - 1n;
  // A header claiming offsets past u64::MAX claims nothing a consumer could hold: unknown.
  if (lastOffset > U64_MAX) return { firstOffset: null, lastOffset: null, messages: null };
  return { firstOffset: header.baseOffset, lastOffset, messages: header.messageCount };
}

/** A tail `[start, end)` no chain-extending batch follows: what its first header claims, and what its bytes prove. */
export function tornRange(start: number, end: number, failure: WalkFailure, allZero: boolean): SegmentScopeRange {
  return segmentRange("torn", start, end, claimedOffsets(failure?.header ?? null), tornEvidenceOf(failure, allZero));
}

/**
 * The scope of a segment no walk settled: an empty file (one empty proven
 * range), or a refusal before any walk (an index that cannot be trusted, a
 * last entry on no batch): nothing proven, the whole log unreadable from the
 * segment's start offset, its end unknown.
 */
export function unwalkedScope(report: SegmentReport): SegmentScopeRange[] {
  const proven = provenRange(report, 0);
  if (report.outcome !== "refused") return [proven];
  return [proven, unreadableRange(report.walkedSize, report.messagesSize, report.startOffset, null)];
}

/**
 * The survivor walk's own budget (docs/recovery.md §3.7): a separate account
 * of `limitUnits` (the probe budget's limit) per refused segment. Walking a
 * verified batch costs its bytes; a probe after a second damage costs what
 * the damage probe's candidates cost (§3.5). The walk never spends the
 * partition's probe budget, so it changes no verdict; the reads it adds are
 * bounded by this limit (plus one window and one batch) whatever the file size.
 */
export type ScopeBudget = ProbeBudget;

/** Where a refused segment's walk stopped and the probe found a survivor (docs/recovery.md §3.5). */
export interface SurvivorStart {
  damagePosition: number;
  /** The chain's next expected offset at the damage (the probe's floor), null past u64::MAX. */
  nextOffset: bigint | null;
  survivorPosition: number;
}

/**
 * The header of the batch the probe proved at `position`. It verified, so it
 * verifies again, unless the file changed under the scan: then null, and the
 * scope says no more than "unknown" from the damage on.
 */
async function survivorHeader(window: FileWindow, position: number): Promise<BatchHeader | null> {
  const check = await verifyBatchAt(window, position);
  return check.verified ? check.header : null;
}

/**
 * docs/recovery.md §3.7: from each survivor, the chain of verified batches it
 * starts, to the segment's end or the next damage; after a damage, the same
 * probe as §3.5 looks for the next survivor. Ranges follow the proven range in
 * byte order: unreadable, intact, then again, ending in an intact range at the
 * file end, a `torn` tail no survivor follows, or an `unreadable` range of
 * unknown end (the scope budget or the range cap ran out).
 */
export async function survivorScope(
  window: FileWindow,
  proven: SegmentScopeRange,
  start: SurvivorStart,
  budget: ScopeBudget,
): Promise<SegmentScopeRange[]> {
  const ranges: SegmentScopeRange[] = [proven];
  const size = window.fileSize;
  let { damagePosition, nextOffset, survivorPosition } = start;
  for (;;) {
    assert(damagePosition < survivorPosition && survivorPosition < size, "a survivor lies after its damage, inside the log");
    const survivor = await survivorHeader(window, survivorPosition);
    if (survivor === null) {
      ranges.push(unreadableRange(damagePosition, size, nextOffset, null));
      return ranges;
    }
    ranges.push(unreadableRange(damagePosition, survivorPosition, nextOffset, survivor.baseOffset));
    // The survivor itself is proven already (the probe verified it): it is walked whatever the budget has left.
    const remainingUnits = Math.max(1, budget.limitUnits - budget.spentUnits);
    const walk = await walkBatches(window, {
      fromPosition: survivorPosition,
      expectedOffset: survivor.baseOffset,
      rebuildIndex: false,
      untilPosition: Math.min(size, survivorPosition + remainingUnits),
    });
    budget.spentUnits += walk.stopPosition - survivorPosition;
    const intactEnd = walk.stopPosition;
    ranges.push(
      segmentRange("intact", survivorPosition, intactEnd, {
        firstOffset: survivor.baseOffset,
        // The survivor carries messages (a probe candidate must), so the walk found a batch with messages.
        lastOffset: lastOffsetOf(walk.lastWithMessages!),
        messages: walk.messageCount,
      }),
    );
    if (intactEnd >= size) return ranges;
    const chainNext = u64OrNull(walk.expectedOffset);
    // Stopped by the budget (no failure, no discontinuity), or one more damaged range would pass the cap.
    const budgetStop = walk.failure === null && walk.discontinuity === null;
    if (budgetStop || ranges.length + 2 > MAX_SCOPE_RANGES_PER_SEGMENT) {
      ranges.push(unreadableRange(intactEnd, size, chainNext, null));
      return ranges;
    }
    // A batch that does not verify, or one that goes backwards: either way the chain breaks here.
    const probe = await probeResidue(window, intactEnd, walk.expectedOffset, budget);
    if (probe.verdict === "survivor") {
      damagePosition = intactEnd;
      nextOffset = chainNext;
      survivorPosition = probe.survivorPosition!;
      continue;
    }
    if (probe.verdict === "budget-exhausted") {
      ranges.push(unreadableRange(intactEnd, size, chainNext, null));
      return ranges;
    }
    ranges.push(tornRange(intactEnd, size, walk.failure, await residueIsAllZero(window, probe)));
    return ranges;
  }
}

/**
 * docs/recovery.md §4 step 3: the damaged end `torn` of a segment that is not
 * the last, once the next segment, starting at `nextStart`, shows the server
 * wrote past it: the same bytes, `unreadable`, hiding the offsets from
 * `nextOffset` (the chain's next expected offset) to `nextStart` − 1.
 */
export function sealedTailRange(torn: SegmentScopeRange, nextOffset: bigint, nextStart: bigint): SegmentScopeRange {
  assert(nextStart > nextOffset, "a sealed tail hides at least one offset");
  return unreadableRange(torn.startPosition, torn.endPosition, nextOffset, nextStart);
}

/** The refusal-specific part of a walked segment's scope when no survivor was found: the rest is unreadable, its end unknown. */
export function unknownRestScope(proven: SegmentScopeRange, report: SegmentReport, nextOffset: bigint | null): SegmentScopeRange[] {
  return [proven, unreadableRange(report.walkedSize, report.messagesSize, nextOffset, null)];
}

/**
 * The invariants every segment's scope keeps (docs/recovery.md §3.7): the
 * proven range `[0, walkedSize)` first, then ranges that tile the log to its
 * size in byte order, never more than MAX_SCOPE_RANGES_PER_SEGMENT.
 */
export function assertScopeTiles(report: SegmentReport): void {
  const scope = report.scope;
  const where = `the scope of ${report.logPath}`;
  assert(scope.length >= 1 && scope.length <= MAX_SCOPE_RANGES_PER_SEGMENT, `${where} holds 1..${MAX_SCOPE_RANGES_PER_SEGMENT} ranges`);
  assert(scope[0]!.kind === "proven" && scope[0]!.endPosition === report.walkedSize, `${where} starts with the proven prefix`);
  let position = 0;
  for (const range of scope) {
    assert(range.startPosition === position && range.endPosition >= position, `${where} tiles the log in byte order`);
    position = range.endPosition;
  }
  assert(position === report.messagesSize, `${where} ends at the log's size ${report.messagesSize}`);
}

// ---------------------------------------------------------------------------
// The partition's scope

/** A partition range from a segment's (positions dropped). */
function fromSegment(range: SegmentScopeRange, kind: PartitionScopeRange["kind"] = range.kind): PartitionScopeRange {
  return {
    kind,
    firstOffset: range.firstOffset,
    lastOffset: range.lastOffset,
    messages: range.messages,
    bytes: range.bytes,
    tornEvidence: range.tornEvidence,
  };
}

const holdsNothing = (range: PartitionScopeRange): boolean =>
  range.firstOffset === null && range.lastOffset === null && range.messages === 0;

/** Whether `next` continues `previous` of the same kind: no offsets in one of them, or the very next offset. */
function continues(previous: PartitionScopeRange, next: PartitionScopeRange): boolean {
  if (previous.kind !== next.kind || previous.kind === "torn" || previous.kind === "missing") return false;
  if (holdsNothing(next) || holdsNothing(previous)) return true;
  return previous.lastOffset !== null && next.firstOffset !== null && next.firstOffset === previous.lastOffset + 1n;
}

function append(ranges: PartitionScopeRange[], range: PartitionScopeRange): void {
  // A range of no offsets and no bytes (an empty segment's proven prefix) says nothing.
  if (holdsNothing(range) && range.bytes === 0) return;
  const previous = ranges[ranges.length - 1];
  if (previous === undefined || !continues(previous, range)) {
    ranges.push(range);
    return;
  }
  const previousEmpty = holdsNothing(previous);
  const rangeEmpty = holdsNothing(range);
  ranges[ranges.length - 1] = {
    kind: previous.kind,
    firstOffset: previousEmpty ? range.firstOffset : previous.firstOffset,
    lastOffset: rangeEmpty ? previous.lastOffset : range.lastOffset,
    messages: previous.messages === null || range.messages === null ? null : previous.messages + range.messages,
    bytes: previous.bytes + range.bytes,
    tornEvidence: null,
  };
}

/**
 * docs/recovery.md §3.7: the partition's scope from its segments' (in offset
 * order). Proven ranges stay `proven` up to the first unreadable or missing
 * offset (or the first segment that does not start where the chain expects
 * it); after that, verified ranges are `intact`. Offsets no segment holds
 * between two segments are `missing`; an unreadable range whose end its
 * segment could not bound ends where the next segment starts. Adjacent
 * ranges of one kind that continue each other merge.
 */
export function partitionScope(segments: readonly SegmentReport[], failed: boolean): PartitionScopeRange[] {
  if (failed) return [];
  assert(segments.length > 0, "a partition that did not fail holds a segment");
  const ranges: PartitionScopeRange[] = [
    { kind: "proven", firstOffset: null, lastOffset: null, messages: 0, bytes: 0, tornEvidence: null },
  ];
  let damaged = false;
  /** The offset the chain expects next: past every offset a range accounted for (null before the first). */
  let expected: bigint | null = null;
  segments.forEach((segment, i) => {
    const nextStart = segments[i + 1]?.startOffset ?? null;
    const holdsOffsets = segment.scope.some((range) => range.firstOffset !== null && range.kind !== "torn");
    if (expected !== null && holdsOffsets) {
      if (segment.startOffset > expected) {
        const lastOffset = segment.startOffset - 1n;
        append(ranges, {
          kind: "missing",
          firstOffset: expected,
          lastOffset,
          messages: offsetSpan(expected, lastOffset),
          bytes: 0,
          tornEvidence: null,
        });
        damaged = true;
      } else if (segment.startOffset < expected) {
        damaged = true; // an overlap: this segment's offsets are not the chain's continuation
      }
    }
    for (const range of segment.scope) {
      let partitionRange = fromSegment(range, range.kind === "proven" && damaged ? "intact" : range.kind);
      if (range.kind === "unreadable") {
        damaged = true;
        // Unknown in its segment, bounded in the partition: the next segment starts the offsets after it.
        if (range.firstOffset !== null && range.lastOffset === null && nextStart !== null && nextStart > range.firstOffset) {
          const lastOffset = nextStart - 1n;
          partitionRange = { ...partitionRange, lastOffset, messages: offsetSpan(range.firstOffset, lastOffset) };
        }
      }
      if (range.kind !== "torn") {
        const end = partitionRange.lastOffset ?? (partitionRange.firstOffset === null ? null : U64_MAX);
        if (end !== null && (expected === null || end + 1n > expected)) expected = end + 1n;
      }
      append(ranges, partitionRange);
    }
    // A first segment that holds no offset (an empty one, or only a torn tail) still starts the chain
    // at its name's offset: a later segment starting above it leaves offsets missing (EmptyNonTailSegment).
    if (expected === null && !holdsOffsets) expected = segment.startOffset;
  });
  return ranges;
}
