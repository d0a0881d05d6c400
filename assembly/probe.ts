// The damage-probe candidate search (SPEC 3.5) with skip-ahead.
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

import { maxBatchBytes, reservedZero } from "./verify";

// @ts-ignore: decorator
@inline const HEADER_BYTES: u64 = 256;

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

/** Last nonzero byte in [from, to), or 0 if none (callers pass from > 0). */
// @ts-ignore: decorator
@inline function lastNonZero(from: usize, to: usize): usize {
  while (to > from) {
    to--;
    if (load<u8>(to) != 0) return to;
  }
  return 0;
}

/**
 * First candidate c in [c, end) whose header decodes (length cap: maxBatchBytes),
 * whose batch fits (c + batch_length <= fileEnd), whose message_count > 0 and
 * whose base_offset >= minBase (u64). Returns `end` when none does.
 * The caller guarantees that the 256 bytes of every candidate are readable.
 */
export function findCandidate(c: usize, end: usize, fileEnd: f64, minBase: u64): usize {
  const fileEndI = <i64>fileEnd;
  const maxLen = maxBatchBytes;
  while (c < end) {
    if (load<u8>(c + 255) != 0) {
      c += 204;
      continue;
    }
    if (!reservedZero(c)) {
      const q = lastNonZero(c + 52, c + 255);
      c = q - 51;
      continue;
    }
    const len = load<u64>(c, 32);
    if (len == 0) {
      // Every candidate whose length field lies in this run of zeros claims length 0.
      const q = firstNonZero(c + 40, end + 39);
      c = q - 39;
      continue;
    }
    if (
      len >= HEADER_BYTES &&
      len <= maxLen &&
      <i64>c + <i64>len <= fileEndI &&
      load<u32>(c, 48) != 0 &&
      load<u64>(c, 8) >= minBase
    ) {
      return c;
    }
    c++;
  }
  return end;
}
