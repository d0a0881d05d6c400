// The damage-probe candidate search (docs/recovery.md §3.5) with skip-ahead.
//
// Unit charging is pure arithmetic (every candidate costs 1 unit, examined or
// skipped), so the kernel only has to find the FIRST candidate in [c, end) that
// passes the pre-verification checks; the wrapper derives the stopping
// candidate and spentUnits from it and from the budget (see
// src/engine/wasm/engine.ts). Skip-ahead rules candidates out in bulk:
//   - a nonzero byte q rules out every c with c+52 <= q < c+256 (its reserved
//     region covers q), so a candidate whose byte c+255 is nonzero moves on to
//     c+204 at once (on random data nearly every probe);
//   - a candidate whose 8-byte batch_length field is zero claims length 0, and so
//     does every later candidate whose field lies in the same run of zeros: the
//     next nonzero byte is found with v128 any_true over 64-byte blocks.

import { reservedZero } from "./verify";
import {
  BATCH_BASE_OFFSET_AT, BATCH_HEADER_BYTES, BATCH_LENGTH_AT, BATCH_MESSAGE_COUNT_AT, BATCH_RESERVED_START,
} from "./abi";

// @ts-ignore: decorator
@inline const HEADER_BYTES: u64 = <u64>BATCH_HEADER_BYTES;
/** Last byte of a candidate's header (inside its reserved region). */
// @ts-ignore: decorator
@inline const HEADER_LAST: usize = BATCH_HEADER_BYTES - 1;
/** A nonzero last header byte rules out this candidate and the next RESERVED_SPAN - 1 ones. */
// @ts-ignore: decorator
@inline const RESERVED_SPAN: usize = BATCH_HEADER_BYTES - BATCH_RESERVED_START;
/** End of the batch_length field: the zero-run skip works on the field's last byte. */
// @ts-ignore: decorator
@inline const LENGTH_FIELD_END: usize = BATCH_LENGTH_AT + 8;

/** First nonzero byte in [p, limit), or limit. May read up to 63 bytes past limit. */
export function firstNonZero(p: usize, limit: usize): usize {
  // Bytewise up to a 16-byte boundary.
  while (p < limit && (p & 15) != 0) {
    if (load<u8>(p) != 0) return p;
    p++;
  }
  while (p < limit) {
    const a = v128.load(p);
    const b = v128.load(p, 16);
    const c = v128.load(p, 32);
    const d = v128.load(p, 48);
    if (v128.any_true(v128.or(v128.or(a, b), v128.or(c, d)))) break;
    p += 64;
  }
  while (p < limit) {
    if (load<u8>(p) != 0) return p;
    p++;
  }
  return limit;
}

/** Last nonzero byte in [from, to), or 0 if none: unambiguous, as every caller passes from > 0. */
// @ts-ignore: decorator
@inline function lastNonZero(from: usize, to: usize): usize {
  assert(from > 0, "lastNonZero: from > 0");
  while (to > from) {
    to--;
    if (load<u8>(to) != 0) return to;
  }
  return 0;
}

/**
 * First candidate c in [c, end) whose header decodes except for the length cap
 * (batch_length >= 256, reserved bytes zero), whose batch fits
 * (c + batch_length <= fileEnd), whose message_count > 0 and whose
 * base_offset >= minBase (u64). Returns `end` when none does.
 *
 * There is no maxBatchBytes comparison: a length over the cap that fits the
 * file is an oversized batch (docs/format.md §2.2), handed to the verifier by streaming
 * and charged its length; one that does not fit fails the fileEnd comparison.
 * The caller guarantees that the 256 bytes of every candidate are readable.
 */
export function findCandidate(c: usize, end: usize, fileEnd: f64, minBase: u64): usize {
  const fileEndI = <i64>fileEnd;
  while (c < end) {
    if (load<u8>(c + HEADER_LAST) != 0) {
      c += RESERVED_SPAN;
      continue;
    }
    if (!reservedZero(c)) {
      const q = lastNonZero(c + BATCH_RESERVED_START, c + HEADER_LAST);
      c = q - (BATCH_RESERVED_START - 1);
      continue;
    }
    const len = load<u64>(c, BATCH_LENGTH_AT);
    if (len == 0) {
      // Every candidate whose length field lies in this run of zeros claims length 0.
      const q = firstNonZero(c + LENGTH_FIELD_END, end + LENGTH_FIELD_END - 1);
      c = q - (LENGTH_FIELD_END - 1);
      continue;
    }
    if (
      len >= HEADER_BYTES &&
      len <= <u64>fileEndI && // first, so that c + len below cannot wrap
      <i64>c + <i64>len <= fileEndI &&
      load<u32>(c, BATCH_MESSAGE_COUNT_AT) != 0 &&
      load<u64>(c, BATCH_BASE_OFFSET_AT) >= minBase
    ) {
      return c;
    }
    c++;
  }
  return end;
}
