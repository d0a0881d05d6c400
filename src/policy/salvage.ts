/**
 * docs/repair.md §6.5: whether a refused partition can be salvaged, as a pure
 * function of its scan report. Salvage keeps every batch that verifies and
 * extends the chain (each segment's proven prefix and the intact ranges after
 * its damaged ones, docs/recovery.md §3.7) and drops only the bytes nothing
 * proves (its unreadable ranges, and a torn tail no verified batch follows),
 * recording their offsets as lost. It acts only where the result is a chain
 * Iggy's boot accepts: every refused segment is `InteriorDamage` mapped to its
 * end, and after the drop each segment ends where the next one starts.
 *
 * `segscan salvage` plans from this decision (src/repair/plan-salvage.ts) and
 * the next step (next-step.ts) names salvage only where it would act, so the
 * two cannot disagree.
 */
import { assert } from "../assert.js";
import { type PartitionReport, type SegmentReport, type SegmentScopeRange, damagedEnd } from "../domain/scan.js";

/** The refusals of the chain between segments (docs/recovery.md §4 step 3). */
const CHAIN_REFUSALS: ReadonlySet<string> = new Set(["Hole", "Overlap", "EmptyNonTailSegment"]);

/** `first..nextStart − 1` as an operator reads it (`offsets 647..658`, or `offset 647` alone). */
const offsetsOf = (first: bigint, nextStart: bigint): string =>
  first === nextStart - 1n ? `offset ${first}` : `offsets ${first}..${nextStart - 1n}`;

/** Why salvage refuses a partition (the CLI prints the message; nothing is planned or changed). */
export type SalvageRefusalCode =
  /** The partition is clean, repairable or failed: `segscan repair` or a new scan is the way, not salvage. */
  | "NotRefused"
  /** The probe ran out of budget: nothing after the damage is proven either way. */
  | "UnverifiedResidue"
  /** `--replicas` > 1: a replica holds the data; rebuild from it. */
  | "Replicas"
  /** A Hole, Overlap or empty segment between intact segments: there is no damaged byte to drop. */
  | "ChainRefusal"
  /** A segment refused before anything after its damage was proven (an index refusal, an offset going backwards). */
  | "NothingProvenAfterDamage"
  /** A segment's scope ends in an unreadable range of unknown end: the survivor walk's budget or the range cap stopped it. */
  | "ScopeNotMapped"
  /** After the drop, a segment would not end where the next one starts (Iggy's boot refuses the hole or overlap). */
  | "ChainBrokenAfterSalvage";

/** What salvage does to one refused segment: the byte ranges it keeps (in order) and the ones it drops. */
export interface SegmentSalvage {
  /** The segment's index in the partition's `segments`. */
  index: number;
  /** The proven prefix (when it holds bytes) and every intact range, in byte order. */
  kept: SegmentScopeRange[];
  /** Every unreadable range, and a torn tail when the segment ends in one, in byte order. */
  lost: SegmentScopeRange[];
}

export type SalvageDecision =
  | { salvageable: true; segments: SegmentSalvage[] }
  | { salvageable: false; code: SalvageRefusalCode; why: string };

/** The report fields the decision reads. */
export type SalvageInput = Pick<PartitionReport, "verdict" | "refusal"> & {
  segments: readonly Pick<SegmentReport, "startOffset" | "outcome" | "refusal" | "scope" | "endOffset" | "walkedSize">[];
};

const refused = (code: SalvageRefusalCode, why: string): SalvageDecision => ({ salvageable: false, code, why });

/** A segment's offset range after salvage: null when it would hold no message. */
interface Bounds {
  start: bigint;
  end: bigint | null;
  bytes: number;
  /** The lost range salvage would drop at the segment's end, when it ends in one. */
  droppedTail: SegmentScopeRange | null;
}

/**
 * docs/repair.md §6.5: salvage's decision for a partition. `replicaCount` is
 * the scan's `--replicas`.
 */
export function decideSalvage(partition: SalvageInput, replicaCount: number): SalvageDecision {
  const early = refusalBeforeSegments(partition, replicaCount);
  if (early !== null) return early;
  const planned = segmentsAfterSalvage(partition);
  if ("salvageable" in planned) return planned;
  const broken = chainRefusal(planned.bounds);
  if (broken !== null) return broken;
  const refusal = partition.refusal;
  // The bounds of segments that are not refused are the ones contiguity judged, so its refusal fails the check above.
  assert(refusal === null || !CHAIN_REFUSALS.has(refusal.code), `a partition refused ${refusal?.code} is never salvageable`);
  return { salvageable: true, segments: planned.salvaged };
}

/** The refusals that need no segment walked: not refused, a probe out of budget, replicas, a chain refusal with nothing to drop. */
function refusalBeforeSegments(partition: SalvageInput, replicaCount: number): SalvageDecision | null {
  if (partition.verdict !== "refused") {
    const why =
      partition.verdict === "repairable"
        ? "the partition is repairable, not refused: segscan repair cuts its provably torn tails and drops nothing durable"
        : partition.verdict === "clean"
          ? "the partition is clean: every byte is proven"
          : "the scan failed, so nothing was concluded: fix what stopped it and scan again";
    return refused("NotRefused", why);
  }
  const budget = partition.segments.find((segment) => segment.refusal?.code === "UnverifiedResidue");
  if (budget?.refusal?.code === "UnverifiedResidue") {
    return refused(
      "UnverifiedResidue",
      `the probe ran out of budget at byte ${budget.refusal.stoppedAt} of segment ${budget.startOffset} before it settled the residue, ` +
        "so nothing after the damage is proven either way; scan (and salvage) again with a larger --probe-budget",
    );
  }
  if (replicaCount > 1) {
    return refused(
      "Replicas",
      `${replicaCount} replicas hold this partition: rebuild it from a replica, which still holds the offsets salvage would record as lost`,
    );
  }
  const refusal = partition.refusal;
  if (refusal !== null && (refusal.code === "Hole" || refusal.code === "Overlap" || refusal.code === "EmptyNonTailSegment")) {
    // A Hole or an empty segment whose first segment ends in damaged bytes: those bytes are there, and the chain
    // check below says what dropping them would leave (docs/repair.md §6.5). Otherwise every byte verifies.
    const previous = partition.segments.find(
      (segment) => segment.startOffset === (refusal.code === "EmptyNonTailSegment" ? refusal.emptyStart : refusal.previousStart),
    );
    if (refusal.code === "Overlap" || previous === undefined || damagedEnd(previous) === null) {
      return refused(
        "ChainRefusal",
        `the partition is refused ${refusal.code} between segments whose bytes all verify: salvage drops damaged bytes inside a segment, ` +
          "and there are none to drop",
      );
    }
  }
  return null;
}

/** Each segment's kept and lost ranges and its bounds after salvage, or the refusal of a segment salvage cannot drop from. */
function segmentsAfterSalvage(partition: SalvageInput): { salvaged: SegmentSalvage[]; bounds: Bounds[] } | SalvageDecision {
  const salvaged: SegmentSalvage[] = [];
  const bounds: Bounds[] = [];
  for (const [index, segment] of partition.segments.entries()) {
    if (segment.outcome !== "refused") {
      // Its ordinary repair cuts a torn tail (docs/repair.md §6.2): the damaged bytes it ends in, when it does.
      const bytes = segment.outcome === "empty" ? 0 : segment.walkedSize;
      bounds.push({ start: segment.startOffset, end: bytes > 0 ? segment.endOffset : null, bytes, droppedTail: damagedEnd(segment) });
      continue;
    }
    const code = segment.refusal?.code ?? "unknown";
    if (code !== "InteriorDamage") {
      return refused(
        "NothingProvenAfterDamage",
        `segment ${segment.startOffset} is refused ${code}, before any batch after its damage was proven: there is nothing to salvage in it`,
      );
    }
    const last = segment.scope[segment.scope.length - 1];
    // Damage that runs to the end of a segment the next one's chain follows ends in an unreadable range the
    // next segment bounds (docs/recovery.md §4 step 3): mapped, and the chain check below judges it. An
    // unreadable range of unknown end is one the survivor walk did not map.
    const unmapped = (range: SegmentScopeRange): boolean =>
      range.kind === "unreadable" && (index + 1 === partition.segments.length || (range.firstOffset !== null && range.lastOffset === null));
    if (last === undefined || unmapped(last)) {
      return refused(
        "ScopeNotMapped",
        `the survivor walk of segment ${segment.startOffset} stopped at byte ${last?.startPosition ?? 0} before the segment's end ` +
          "(its budget ran out, or the segment holds more damaged ranges than a scope lists), so the bytes after it were never " +
          "looked at; scan again with a larger --probe-budget (if the scope still ends there, restore the partition from a backup)",
      );
    }
    const kept = segment.scope.filter((range) => (range.kind === "proven" && range.bytes > 0) || range.kind === "intact");
    const lost = segment.scope.filter((range) => range.kind === "unreadable" || range.kind === "torn");
    salvaged.push({ index, kept, lost });
    const end = [...kept].reverse().find((range) => range.lastOffset !== null)?.lastOffset ?? null;
    const droppedTail = lost.at(-1) === last && last.bytes > 0 ? last : null;
    bounds.push({ start: segment.startOffset, end, bytes: kept.reduce((sum, range) => sum + range.bytes, 0), droppedTail });
  }
  return { salvaged, bounds };
}

/** Iggy's ensure_contiguous_chain on the segments as salvage leaves them (docs/recovery.md §4 step 3). */
function chainRefusal(bounds: readonly Bounds[]): SalvageDecision | null {
  for (let i = 1; i < bounds.length; i++) {
    const previous = bounds[i - 1];
    const next = bounds[i];
    assert(previous !== undefined && next !== undefined, "i - 1 and i lie inside the bounds");
    const broken = (what: string, refusedShape = "a hole between segments"): SalvageDecision =>
      refused(
        "ChainBrokenAfterSalvage",
        `after salvage, segment ${previous.start} would ${what} and the next segment starts at offset ${next.start}: ` +
          `Iggy's boot refuses ${refusedShape} (ensure_contiguous_chain)`,
      );
    // The damaged bytes salvage (or the segment's repair) drops at its end, and the offsets that would leave in no segment.
    const dropped = (tail: SegmentScopeRange, first: bigint): string =>
      `the ${tail.bytes} damaged byte${tail.bytes === 1 ? "" : "s"} at [${tail.startPosition}, ${tail.endPosition}) it drops at its end ` +
      `leave ${offsetsOf(first, next.start)} in no segment`;
    const tail = previous.droppedTail;
    if (previous.bytes === 0 || previous.end === null) {
      return broken(tail === null ? "hold no message" : `hold no message (${dropped(tail, previous.start)})`);
    }
    if (next.start > previous.end + 1n) {
      return broken(
        `end at offset ${previous.end} (${tail === null ? "the tail cut or dropped there claims offsets no byte after it holds" : dropped(tail, previous.end + 1n)})`,
      );
    }
    if (next.start <= previous.end) return broken(`end at offset ${previous.end}, at or past the next segment's start`, "that chain");
  }
  return null;
}
