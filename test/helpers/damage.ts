/**
 * Damage injection for the recovery property tests, and a small, deliberately
 * naive reference model of docs/format.md §2.1 / §3.2 (tail mode) / §3.3 / §3.4 / §3.5 to
 * hold the real scanner to: one candidate at a time, no windows, no skip-ahead,
 * the whole file in memory.
 */
import { xxh3_64 } from "../../src/hash/xxh3.js";
import type { IndexEntry } from "../../src/format/records.js";
import { type BuiltChain, concat, randomBytes } from "./fixtures.js";

// ---------------------------------------------------------------------------
// Damage

export type DamageKind = "flip" | "zero" | "hole" | "garbage" | "stale";

/** Raw, shrinkable choices; `resolveDamage` maps them onto a concrete chain. */
export interface DamageSpec {
  kind: DamageKind;
  /** Aim positions at a batch start (+ a small offset) instead of anywhere: headers get hit far more often. */
  anchored: boolean;
  a: number;
  b: number;
  /** Length of a zeroed range or inserted garbage (1..). */
  length: number;
  /** Bit choices for "flip" (1..8 of them). */
  bits: readonly number[];
  seed: number;
}

export interface IntactBatch {
  /** Index in the original chain. */
  index: number;
  /** Position in the damaged log. */
  position: number;
  end: number;
  baseOffset: bigint;
  messageCount: number;
}

export interface DamagedLog {
  log: Uint8Array;
  description: string;
  /** False when the damage changed no byte (a zeroed range over zeros, bit flips that cancel). */
  changed: boolean;
  /**
   * Original batches that are byte-identical in the damaged log and lie after the first
   * damaged byte (so the walk cannot have proven them before reaching the damage).
   */
  intactAfter: IntactBatch[];
}

/** A position in [lo, hi] (hi >= lo), either anywhere or near a batch start. */
function pick(chain: BuiltChain, raw: number, anchored: boolean, lo: number, hi: number, fine: number): number {
  if (hi <= lo) return lo;
  if (anchored) {
    const starts = chain.batches.map((batch) => batch.position).filter((p) => p >= lo && p <= hi);
    if (starts.length > 0) return Math.min(hi, starts[raw % starts.length]! + (fine % 300));
  }
  return lo + (raw % (hi - lo + 1));
}

/**
 * Applies one damage strictly before the chain's last batch: every damaged or inserted byte
 * lies before the last batch's (original) start, so the last batch always survives intact.
 * Needs a chain of at least 2 batches. `notBefore` keeps the damage at or after a byte
 * (ignored when no byte before the last batch is left).
 */
export function resolveDamage(chain: BuiltChain, spec: DamageSpec, notBefore = 0): DamagedLog {
  const { batches } = chain;
  const original = chain.log;
  const limit = batches[batches.length - 1]!.position; // first byte that must stay intact
  const from = notBefore < limit ? notBefore : 0; // damage only at or after this byte (e.g. the last index entry)
  let log: Uint8Array;
  let description: string;
  // For length-changing damage: original bytes [cutFrom, cutTo) are replaced by `inserted`.
  let cutFrom = 0;
  let cutTo = 0;
  let insertedBytes = 0;
  let preservesLength = false;
  switch (spec.kind) {
    case "flip": {
      const start = pick(chain, spec.a, spec.anchored, from, limit - 1, spec.b);
      const span = 1 + (spec.length % Math.max(1, Math.min(4096, limit - start)));
      log = original.slice();
      const flipped: string[] = [];
      for (const raw of spec.bits) {
        const bit = raw % (span * 8);
        const at = start + Math.floor(bit / 8);
        log[at]! ^= 1 << (bit % 8);
        flipped.push(`${at}.${bit % 8}`);
      }
      description = `flip bits ${flipped.join(",")}`;
      preservesLength = true;
      break;
    }
    case "zero": {
      const start = pick(chain, spec.a, spec.anchored, from, limit - 1, spec.b);
      const end = Math.min(limit, start + spec.length);
      log = original.slice();
      log.fill(0, start, end);
      description = `zero [${start}, ${end})`;
      preservesLength = true;
      break;
    }
    case "hole": {
      cutFrom = pick(chain, spec.a, spec.anchored, from, limit - 1, spec.length);
      cutTo = pick(chain, spec.b, spec.anchored, cutFrom + 1, limit, spec.length >> 3);
      log = concat([original.subarray(0, cutFrom), original.subarray(cutTo)]);
      description = `cut out [${cutFrom}, ${cutTo})`;
      break;
    }
    case "garbage": {
      cutFrom = cutTo = pick(chain, spec.a, spec.anchored, from, limit, spec.b);
      const garbage = randomBytes(spec.length, spec.seed);
      insertedBytes = garbage.length;
      log = concat([original.subarray(0, cutFrom), garbage, original.subarray(cutFrom)]);
      description = `insert ${garbage.length} random bytes (seed ${spec.seed}) at ${cutFrom}`;
      break;
    }
    case "stale": {
      // A copy of an older batch (one that ends at or before the insertion point).
      const older = spec.seed % (batches.length - 1);
      const copied = batches[older]!;
      const copy = original.subarray(copied.position, copied.position + copied.length);
      cutFrom = cutTo = pick(chain, spec.a, spec.anchored, Math.max(from, copied.position + copied.length), limit, spec.b);
      insertedBytes = copy.length;
      log = concat([original.subarray(0, cutFrom), copy, original.subarray(cutFrom)]);
      description = `insert a copy of batch ${older} (offset ${copied.baseOffset}) at ${cutFrom}`;
      break;
    }
  }

  const intactAfter: IntactBatch[] = [];
  let changed: boolean;
  if (preservesLength) {
    let first = -1;
    for (let i = 0; i < original.length; i++)
      if (log[i] !== original[i]) {
        first = i;
        break;
      }
    changed = first >= 0;
    if (changed) {
      batches.forEach((batch, index) => {
        const end = batch.position + batch.length;
        if (batch.position < first) return;
        for (let i = batch.position; i < end; i++) if (log[i] !== original[i]) return;
        intactAfter.push({ index, position: batch.position, end, baseOffset: batch.baseOffset, messageCount: batch.messageCount });
      });
    }
  } else {
    changed = true;
    const delta = insertedBytes - (cutTo - cutFrom);
    batches.forEach((batch, index) => {
      if (batch.position < cutTo) return; // before or overlapping the damage
      // An insertion exactly at a batch start leaves that batch intact after it.
      intactAfter.push({
        index,
        position: batch.position + delta,
        end: batch.position + delta + batch.length,
        baseOffset: batch.baseOffset,
        messageCount: batch.messageCount,
      });
    });
  }
  return { log, description, changed, intactAfter };
}

// ---------------------------------------------------------------------------
// Reference model

const MAX_BATCH_BYTES = 64n * 1024n * 1024n;
const HEADER = 256;

function u32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0, true);
}

function u64(bytes: Uint8Array, at: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset + at, 8).getBigUint64(0, true);
}

export interface RefHeader {
  baseOffset: bigint;
  length: number;
  messageCount: number;
}

/** docs/format.md §1.2: header decodes (length bounds, reserved bytes zero). Returns the header or null. */
export function refDecode(bytes: Uint8Array, p: number): RefHeader | null {
  if (p + HEADER > bytes.length) return null;
  const length = u64(bytes, p + 32);
  if (length < BigInt(HEADER) || length > MAX_BATCH_BYTES) return null;
  for (let i = p + 52; i < p + HEADER; i++) if (bytes[i] !== 0) return null;
  return { baseOffset: u64(bytes, p + 8), length: Number(length), messageCount: u32(bytes, p + 48) };
}

/**
 * Why the batch at `p` does not verify (docs/format.md §2.1), in the classes the scope
 * of loss tells apart (docs/recovery.md §3.7): "ok", "short" (fewer than 256 bytes
 * left, or a header within the cap claiming more than remain), "checksum" (the
 * header decodes and the frames tile: only a checksum fails), "other".
 */
export type RefVerdict = "ok" | "short" | "checksum" | "other";

export function refCheck(bytes: Uint8Array, p: number): RefVerdict {
  if (p + HEADER > bytes.length) return "short";
  const header = refDecode(bytes, p);
  if (header === null) return "other";
  if (p + header.length > bytes.length) return "short";
  const end = p + header.length;
  const summed: Uint8Array[] = [bytes.slice(p, p + 40), bytes.slice(p + 48, p + 52)];
  let cursor = p + HEADER;
  for (let i = 0; i < header.messageCount; i++) {
    if (cursor + 48 > end) return "other";
    if (u64(bytes, cursor + 40) !== 0n) return "other";
    const frameEnd = cursor + 48 + u32(bytes, cursor + 36) + u32(bytes, cursor + 32);
    if (frameEnd > end) return "other";
    if (xxh3_64(bytes.subarray(cursor + 8, frameEnd)) !== u64(bytes, cursor)) return "checksum";
    summed.push(bytes.slice(cursor, cursor + 8));
    cursor = frameEnd;
  }
  if (cursor !== end) return "other";
  return xxh3_64(concat(summed)) === u64(bytes, p + 40) ? "ok" : "checksum";
}

/** docs/format.md §2.1, written out plainly. */
export function refVerify(bytes: Uint8Array, p: number): RefHeader | null {
  return refCheck(bytes, p) === "ok" ? refDecode(bytes, p) : null;
}

/** docs/recovery.md §3.7: what the bytes at a damage position prove (`allZero`: the residue's, as the report has it). */
export function refTornEvidence(
  bytes: Uint8Array,
  p: number,
  allZero: boolean,
): "zero-filled" | "short-batch" | "complete-batch" | "unverifiable" {
  if (allZero) return "zero-filled";
  const verdict = refCheck(bytes, p);
  return verdict === "short" ? "short-batch" : verdict === "checksum" ? "complete-batch" : "unverifiable";
}

export interface RefWalk {
  stop: number;
  verified: number;
  /** Messages in the walked batches. */
  messages: number;
  /** The offset the next batch must carry. */
  expected: bigint;
  /** The walk stopped on a batch that does not verify. */
  failed: boolean;
  /** Last offset of the last batch with messages, or null. */
  chainEnd: bigint | null;
  discontinuity: { position: number; expectedOffset: bigint; foundOffset: bigint } | null;
  gaps: { position: number; expectedOffset: bigint; foundOffset: bigint }[];
}

export function refWalk(bytes: Uint8Array, from: number, expected: bigint, until = bytes.length): RefWalk {
  const walk: RefWalk = { stop: from, verified: 0, messages: 0, expected, failed: false, chainEnd: null, discontinuity: null, gaps: [] };
  let position = from;
  while (position < Math.min(until, bytes.length)) {
    const header = refVerify(bytes, position);
    if (header === null) {
      walk.failed = true;
      break;
    }
    if (header.baseOffset < expected) {
      walk.discontinuity = { position, expectedOffset: expected, foundOffset: header.baseOffset };
      break;
    }
    if (header.baseOffset > expected) walk.gaps.push({ position, expectedOffset: expected, foundOffset: header.baseOffset });
    if (header.messageCount > 0) {
      expected = header.baseOffset + BigInt(header.messageCount);
      walk.chainEnd = expected - 1n;
      walk.messages += header.messageCount;
    }
    walk.verified++;
    position += header.length;
  }
  walk.stop = position;
  walk.expected = expected;
  return walk;
}

export interface RefProbe {
  verdict: "no-survivor" | "survivor" | "budget-exhausted";
  survivorPosition: number | null;
  stoppedAt: number | null;
  /** Running total after this probe. */
  spentTotal: number;
}

/** docs/recovery.md §3.5's pseudocode, literally. `spent` is the load's running total before this probe. */
export function refProbe(bytes: Uint8Array, damage: number, minBase: bigint, spent: number, limit: number): RefProbe {
  for (let c = damage + 1; c + HEADER <= bytes.length; c++) {
    spent += 1;
    const header = refDecode(bytes, c);
    if (header !== null && c + header.length <= bytes.length && header.messageCount > 0 && header.baseOffset >= minBase) {
      if (refVerify(bytes, c) !== null) return { verdict: "survivor", survivorPosition: c, stoppedAt: null, spentTotal: spent };
      spent += header.length;
    }
    if (spent > limit) return { verdict: "budget-exhausted", survivorPosition: null, stoppedAt: c, spentTotal: spent };
  }
  return { verdict: "no-survivor", survivorPosition: null, stoppedAt: null, spentTotal: spent };
}

/** What the reference model says one segment recovers to (tail mode, index assumed valid). */
export interface RefSegment {
  outcome: "clean" | "torn-tail" | "empty" | "refused";
  walkedSize: number;
  refusal: string | null;
  walk: RefWalk | null;
  probe: RefProbe | null;
  damagePosition: number | null;
  minBase: bigint | null;
}

/**
 * docs/recovery.md §3.1–3.5 for one segment in tail mode, given a VALID index (or none). `spent` is
 * the load's running budget total before this segment.
 */
export function refSegment(log: Uint8Array, startOffset: bigint, index: readonly IndexEntry[], spent: number, limit: number): RefSegment {
  const result: RefSegment = {
    outcome: "clean",
    walkedSize: 0,
    refusal: null,
    walk: null,
    probe: null,
    damagePosition: null,
    minBase: null,
  };
  if (index.length === 0 && log.length === 0) return result;
  let walk: RefWalk;
  if (index.length > 0) {
    const last = index[index.length - 1]!;
    if (last.position >= BigInt(log.length)) return { ...result, outcome: "refused", refusal: "SizeDivergence" };
    walk = refWalk(log, Number(last.position), last.offset);
    if (walk.verified === 0 && walk.discontinuity === null) return { ...result, outcome: "refused", refusal: "SizeDivergence", walk };
  } else {
    walk = refWalk(log, 0, startOffset);
  }
  result.walk = walk;
  result.walkedSize = walk.stop;
  if (walk.discontinuity) return { ...result, outcome: "refused", refusal: "OffsetDiscontinuity" };
  if (walk.stop < log.length) {
    result.damagePosition = walk.stop;
    // A tail walk that proved only empty batches: the chain end is the last message before the last entry (docs/recovery.md §3.2 step 4).
    let chainEnd = walk.chainEnd;
    if (chainEnd === null && index.length > 0) chainEnd = refWalk(log, 0, startOffset, Number(index[index.length - 1]!.position)).chainEnd;
    result.minBase = chainEnd === null ? startOffset : chainEnd + 1n;
    result.probe = refProbe(log, walk.stop, result.minBase, spent, limit);
    if (result.probe.verdict === "survivor") return { ...result, outcome: "refused", refusal: "InteriorDamage" };
    if (result.probe.verdict === "budget-exhausted") return { ...result, outcome: "refused", refusal: "UnverifiedResidue" };
    result.outcome = "torn-tail";
  }
  if (index.length === 0 && walk.chainEnd === null) {
    result.outcome = "empty";
    result.walkedSize = 0;
  }
  return result;
}

// ---------------------------------------------------------------------------
// The scope of loss (docs/recovery.md §3.7), written out plainly

export interface RefRange {
  kind: "proven" | "unreadable" | "intact" | "torn";
  startPosition: number;
  endPosition: number;
  firstOffset: bigint | null;
  lastOffset: bigint | null;
  messages: number | null;
  tornEvidence: "zero-filled" | "short-batch" | "complete-batch" | "unverifiable" | null;
}

const U64_MAX = (1n << 64n) - 1n;
/** docs/recovery.md §3.7 (src/recovery/scope.ts MAX_SCOPE_RANGES_PER_SEGMENT). */
export const REF_MAX_SCOPE_RANGES = 32;

function refUnreadable(start: number, end: number, next: bigint, survivorBase: bigint | null): RefRange {
  const base = { kind: "unreadable" as const, startPosition: start, endPosition: end, tornEvidence: null };
  if (next > U64_MAX || (survivorBase !== null && survivorBase <= next))
    return { ...base, firstOffset: null, lastOffset: null, messages: 0 };
  if (survivorBase === null) return { ...base, firstOffset: next, lastOffset: null, messages: null };
  return { ...base, firstOffset: next, lastOffset: survivorBase - 1n, messages: Number(survivorBase - next) };
}

function refTorn(bytes: Uint8Array, start: number, end: number, at: number, allZero: boolean): RefRange {
  const header = refDecode(bytes, at);
  const claims =
    header === null
      ? { firstOffset: null, lastOffset: null, messages: null }
      : header.messageCount === 0
        ? { firstOffset: null, lastOffset: null, messages: 0 }
        : header.baseOffset + BigInt(header.messageCount) - 1n > U64_MAX
          ? { firstOffset: null, lastOffset: null, messages: null }
          : {
              firstOffset: header.baseOffset,
              lastOffset: header.baseOffset + BigInt(header.messageCount) - 1n,
              messages: header.messageCount,
            };
  return { kind: "torn", startPosition: start, endPosition: end, ...claims, tornEvidence: refTornEvidence(bytes, at, allZero) };
}

/**
 * The ranges after the proven one, for a refused segment (tail mode): from the
 * first survivor, walk; after each damage, probe again; all on a scope budget
 * of `limit` units of its own. `ref` is refSegment's answer, `residueAllZero`
 * the report's (a budget-exhausted probe may not have read every byte).
 */
export function refScopeAfterProven(
  bytes: Uint8Array,
  ref: RefSegment,
  startOffset: bigint,
  limit: number,
  residueAllZero: boolean,
): RefRange[] {
  const size = bytes.length;
  const P = ref.walkedSize;
  if (ref.refusal === "SizeDivergence") return [refUnreadable(0, size, startOffset, null)];
  if (ref.refusal === "OffsetDiscontinuity") return [refUnreadable(P, size, ref.walk!.discontinuity!.expectedOffset, null)];
  if (ref.refusal === "UnverifiedResidue") return [refUnreadable(P, size, ref.minBase!, null)];
  if (ref.outcome === "torn-tail") return [refTorn(bytes, P, size, ref.damagePosition!, residueAllZero)];
  if (ref.outcome === "empty") {
    if (ref.damagePosition === null) {
      return [{ kind: "torn", startPosition: 0, endPosition: size, firstOffset: null, lastOffset: null, messages: 0, tornEvidence: null }];
    }
    return [refTorn(bytes, 0, size, ref.damagePosition, residueAllZero)];
  }
  if (ref.refusal !== "InteriorDamage") return [];
  const ranges: RefRange[] = [];
  let spent = 0;
  let damage = ref.damagePosition!;
  let next = ref.minBase!;
  let survivor = ref.probe!.survivorPosition!;
  for (;;) {
    const base = refDecode(bytes, survivor)!.baseOffset;
    ranges.push(refUnreadable(damage, survivor, next, base));
    const walk = refWalk(bytes, survivor, base, Math.min(size, survivor + Math.max(1, limit - spent)));
    spent += walk.stop - survivor;
    ranges.push({
      kind: "intact",
      startPosition: survivor,
      endPosition: walk.stop,
      firstOffset: base,
      lastOffset: walk.chainEnd,
      messages: walk.messages,
      tornEvidence: null,
    });
    if (walk.stop >= size) return ranges;
    if ((!walk.failed && walk.discontinuity === null) || ranges.length + 1 + 2 > REF_MAX_SCOPE_RANGES) {
      ranges.push(refUnreadable(walk.stop, size, walk.expected, null));
      return ranges;
    }
    const probe = refProbe(bytes, walk.stop, walk.expected, spent, limit);
    spent = probe.spentTotal;
    if (probe.verdict === "survivor") {
      damage = walk.stop;
      next = walk.expected;
      survivor = probe.survivorPosition!;
      continue;
    }
    if (probe.verdict === "budget-exhausted") {
      ranges.push(refUnreadable(walk.stop, size, walk.expected, null));
      return ranges;
    }
    ranges.push(
      refTorn(
        bytes,
        walk.stop,
        size,
        walk.stop,
        bytes.subarray(walk.stop).every((byte) => byte === 0),
      ),
    );
    return ranges;
  }
}

// ---------------------------------------------------------------------------
// The end of a segment that is not the last (docs/recovery.md §4 step 3), written out plainly

/** One segment as the reference model recovers it, with its scope after the proven range. */
export interface RefPartitionSegment {
  startOffset: bigint;
  ref: RefSegment;
  /** First offset of the proven range, null when it holds none. */
  provenFirst: bigint | null;
  /** The scope after the proven range (refScopeAfterProven). */
  rest: RefRange[];
}

/**
 * A non-last segment whose scope ends in a torn range that is damage (a torn
 * tail, an empty segment's residue, or the end of a survivor walk) keeps its
 * outcome and refusal; only that range is made unreadable, when the next
 * segment holds a verified range with offsets and starts above the chain's
 * next offset: its offsets run from there to the next segment's start − 1.
 * Starting right at the chain's next offset, the damaged end hides no offset
 * and stays a torn tail.
 */
export function refSealedTails(segments: RefPartitionSegment[]): void {
  segments.forEach((segment, i) => {
    const next = segments[i + 1];
    const torn = segment.rest.at(-1);
    if (next === undefined || torn?.kind !== "torn" || torn.tornEvidence === null) return;
    const nextVerified =
      next.provenFirst !== null ||
      next.rest.some((range) => range.kind === "intact" && range.firstOffset !== null && range.endPosition > range.startPosition);
    if (!nextVerified) return;
    const before = segment.rest.at(-2);
    // Past the intact chain before the torn range, else the damage probe's floor.
    const chainNext = before?.kind === "intact" ? before.lastOffset! + 1n : segment.ref.minBase!;
    if (next.startOffset <= chainNext) return;
    segment.rest = [...segment.rest.slice(0, -1), refUnreadable(torn.startPosition, torn.endPosition, chainNext, next.startOffset)];
  });
}
