/**
 * The damage-probe candidate loop (docs/recovery.md §3.5) in TypeScript, with skip-ahead.
 * The semantics are those of the plain loop in `scanCandidatesPlain`: every
 * candidate costs 1 unit; the loop stops at the first candidate that passes the
 * pre-verification checks, or at exactly the candidate whose unit takes the
 * spend past the limit. Skip-ahead only rules candidates out in bulk.
 */
import {
  BATCH_BASE_OFFSET_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  BATCH_RESERVED_START,
} from "../../format/constants.js";
import { readU32, readU64, readU64Clamped } from "../../format/bytes.js";
import { VerifyStatus, headerDecodeStatus } from "../../format/records.js";
import type { CandidateScanRequest, CandidateScanResult } from "../types.js";

/** Bytes of the batch_length field: a candidate whose field is all zero claims length 0. */
const LENGTH_FIELD_END = BATCH_LENGTH_AT + 8;

/**
 * Candidates are decoded with no length cap: a length over `maxBatchBytes`
 * that fits the file is an oversized batch (docs/format.md §2.2), handed to the verifier
 * by streaming and charged its length; one that does not fit fails the
 * file-end comparison below.
 */
const NO_LENGTH_CAP = Number.POSITIVE_INFINITY;

/**
 * The full check of one candidate: decodes (the length cap aside), fits the
 * file, carries messages, extends the chain.
 */
export function candidatePasses(bytes: Uint8Array, at: number, request: CandidateScanRequest): boolean {
  if (request.minBaseOffset === null) return false;
  if (headerDecodeStatus(bytes, at, NO_LENGTH_CAP) !== VerifyStatus.Ok) return false;
  if (readU64Clamped(bytes, at + BATCH_LENGTH_AT) > request.fileEndIndex - at) return false;
  if (readU32(bytes, at + BATCH_MESSAGE_COUNT_AT) === 0) return false;
  return readU64(bytes, at + BATCH_BASE_OFFSET_AT) >= request.minBaseOffset;
}

/** The unit accounting every candidate loop shares (docs/recovery.md §3.5), one candidate at a time. */
interface CandidateRange {
  fromIndex: number;
  toIndex: number;
  spentUnits: number;
  limitUnits: number;
}

/**
 * The plain loop, the definition the skipping loops and the kernels are held
 * to: 1 unit per candidate; stop at the first that `passes`, or at the one
 * whose unit takes the spend past the limit.
 */
export function scanCandidatesOneByOne(
  range: CandidateRange,
  passes: (candidate: number) => boolean,
): { status: "passed" | "exhausted" | "done"; index: number; spentUnits: number } {
  let spentUnits = range.spentUnits;
  for (let candidate = range.fromIndex; candidate < range.toIndex; candidate++) {
    spentUnits += 1;
    if (passes(candidate)) return { status: "passed", index: candidate, spentUnits };
    if (spentUnits > range.limitUnits) return { status: "exhausted", index: candidate, spentUnits };
  }
  return { status: "done", index: range.toIndex, spentUnits };
}

/** The definition: one candidate at a time, no skipping. Tests hold the engines to it. */
export function scanCandidatesPlain(bytes: Uint8Array, request: CandidateScanRequest): CandidateScanResult {
  return scanCandidatesOneByOne(request, (candidate) => candidatePasses(bytes, candidate, request));
}

/** Last nonzero byte in [from, to), or -1. */
export function lastNonZero(bytes: Uint8Array, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (bytes[i] !== 0) return i;
  return -1;
}

/** First nonzero byte in [from, to), or `to`. */
function firstNonZero(bytes: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return i;
  return to;
}

/**
 * The unit accounting of a skip-ahead loop, shared by the segment and WAL
 * probes: `ruledOutUntil(c)` says how far candidates from c on fail without
 * being examined (c itself when none is ruled out). Skipped candidates cost 1
 * unit each, like examined ones, so the result equals `scanCandidatesOneByOne`.
 */
export function scanCandidatesSkippingWith(
  range: CandidateRange,
  ruledOutUntil: (candidate: number) => number,
  passes: (candidate: number) => boolean,
): { status: "passed" | "exhausted" | "done"; index: number; spentUnits: number } {
  const { toIndex, limitUnits } = range;
  let spentUnits = range.spentUnits;
  let candidate = range.fromIndex;
  while (candidate < toIndex) {
    const until = ruledOutUntil(candidate);
    if (until > candidate) {
      const skipped = Math.min(until, toIndex) - candidate;
      if (spentUnits + skipped > limitUnits) {
        // A budget already overspent on entry (an earlier segment ran it out) stops at the first candidate.
        const stoppedAt = candidate + Math.max(0, limitUnits - spentUnits);
        return { status: "exhausted", index: stoppedAt, spentUnits: Math.max(spentUnits, limitUnits) + 1 };
      }
      spentUnits += skipped;
      candidate += skipped;
      continue;
    }
    spentUnits += 1;
    if (passes(candidate)) return { status: "passed", index: candidate, spentUnits };
    if (spentUnits > limitUnits) return { status: "exhausted", index: candidate, spentUnits };
    candidate += 1;
  }
  return { status: "done", index: toIndex, spentUnits };
}

/**
 * How far the segment probe rules candidates out (docs/recovery.md §3.5 skip-ahead):
 * a nonzero byte q in this candidate's reserved region rules out every
 * candidate up to q - 52 (each still has q inside its own reserved region);
 * with the reserved region zero, every candidate whose batch_length field lies
 * in the zero run that starts at this candidate's field claims length 0.
 */
function segmentRuledOutUntil(bytes: Uint8Array, candidate: number, toIndex: number): number {
  const reservedNonZero = lastNonZero(bytes, candidate + BATCH_RESERVED_START, candidate + BATCH_HEADER_BYTES);
  if (reservedNonZero >= 0) return reservedNonZero - BATCH_RESERVED_START + 1;
  const zeroRunEnd = firstNonZero(bytes, candidate + BATCH_LENGTH_AT, toIndex - 1 + LENGTH_FIELD_END);
  return zeroRunEnd - LENGTH_FIELD_END + 1;
}

/** The same loop with skip-ahead (docs/recovery.md §3.5): identical result, far fewer decodes. */
export function scanCandidatesSkipping(bytes: Uint8Array, request: CandidateScanRequest): CandidateScanResult {
  return scanCandidatesSkippingWith(
    request,
    (candidate) => segmentRuledOutUntil(bytes, candidate, request.toIndex),
    (candidate) => candidatePasses(bytes, candidate, request),
  );
}
