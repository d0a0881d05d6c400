/**
 * The WAL residue probe's candidate loop (docs/node.md N1) in TypeScript, with
 * skip-ahead. The same unit accounting as the segment probe (docs/recovery.md
 * §3.5): every candidate costs 1 unit, examined or skipped; the loop stops at
 * the first candidate that passes the cheap checks, or exactly at the candidate
 * whose unit takes the spend past the limit. `scanWalCandidatesPlain` is the
 * definition; the skipping loop and the wasm kernel must match it exactly.
 */
import { readU32, readU64 } from "../../format/bytes.js";
import type { WalCandidateScanRequest, WalCandidateScanResult } from "../types.js";
import { lastNonZero, scanCandidatesOneByOne, scanCandidatesSkippingWith } from "./candidates.js";
import {
  WAL_COMMAND_AT,
  WAL_COMMAND_PREPARE,
  WAL_HEADER_BYTES,
  WAL_OP_AT,
  WAL_RESERVED_AT,
  WAL_RESERVED_FRAME_AT,
  WAL_RESERVED_FRAME_END,
  WAL_SIZE_AT,
  WalHeaderStatus,
  walHeaderStatus,
  walStructurallyComplete,
} from "../../format/wal.js";

/** One candidate's checks: the gate (or Iggy's structural rule), fits the file, op ≥ minOp. */
export function walCandidatePasses(bytes: Uint8Array, at: number, request: WalCandidateScanRequest): boolean {
  if (request.rule === "structural") return walStructurallyComplete(bytes, at, request.fileEndIndex);
  if (request.minOp === null) return false;
  if (walHeaderStatus(bytes, at) !== WalHeaderStatus.Ok) return false;
  if (readU32(bytes, at + WAL_SIZE_AT) > request.fileEndIndex - at) return false;
  return readU64(bytes, at + WAL_OP_AT) >= request.minOp;
}

/** The definition: one candidate at a time, no skipping (the segment probe's loop, WAL checks). */
export function scanWalCandidatesPlain(bytes: Uint8Array, request: WalCandidateScanRequest): WalCandidateScanResult {
  return scanCandidatesOneByOne(request, (candidate) => walCandidatePasses(bytes, candidate, request));
}

/**
 * How far candidates from `candidate` on are ruled out without examining them:
 * - the command byte: candidates c' with byte c'+60 ≠ 6 fail, so the next
 *   candidate worth looking at is the next byte 6 at or past c+60, minus 60;
 * - (verified rule) a nonzero byte q in `reserved` [c+228, c+256) rules out every
 *   c' ≤ q-228, and one in `reserved_frame` [c+62, c+128) every c' ≤ q-62.
 */
function ruledOutUntil(bytes: Uint8Array, candidate: number, request: WalCandidateScanRequest): number {
  if (bytes[candidate + WAL_COMMAND_AT] !== WAL_COMMAND_PREPARE) {
    const limit = request.toIndex - 1 + WAL_COMMAND_AT;
    let q = candidate + WAL_COMMAND_AT + 1;
    while (q <= limit && bytes[q] !== WAL_COMMAND_PREPARE) q++;
    return q - WAL_COMMAND_AT;
  }
  if (request.rule === "structural" || request.minOp === null) return candidate;
  const reservedNonZero = lastNonZero(bytes, candidate + WAL_RESERVED_AT, candidate + WAL_HEADER_BYTES);
  if (reservedNonZero >= 0) return reservedNonZero - WAL_RESERVED_AT + 1;
  const frameNonZero = lastNonZero(bytes, candidate + WAL_RESERVED_FRAME_AT, candidate + WAL_RESERVED_FRAME_END);
  if (frameNonZero >= 0) return frameNonZero - WAL_RESERVED_FRAME_AT + 1;
  return candidate;
}

/** The loop with skip-ahead: identical result to the plain loop, far fewer examinations. */
export function scanWalCandidatesSkipping(bytes: Uint8Array, request: WalCandidateScanRequest): WalCandidateScanResult {
  return scanCandidatesSkippingWith(
    request,
    (candidate) => ruledOutUntil(bytes, candidate, request),
    (candidate) => walCandidatePasses(bytes, candidate, request),
  );
}
