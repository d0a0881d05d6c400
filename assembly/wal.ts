// Metadata WAL kernels (docs/node.md N1): the prepare-header gate and the
// residue probe's candidate loop with skip-ahead. Semantics are defined by
// src/format/wal.ts and src/engine/ts/wal-candidates.ts (the plain loop); the
// TypeScript wrapper (src/engine/wasm/engine.ts) does the unit arithmetic, as
// for the segment candidate loop.

// @ts-ignore: decorator
@inline const HEADER_BYTES: u32 = 256;
// @ts-ignore: decorator
@inline const MAX_ENTRY_BYTES: u32 = 64 << 20;
// @ts-ignore: decorator
@inline const COMMAND_AT: usize = 60;
// @ts-ignore: decorator
@inline const PREPARE: u8 = 6;

// WalHeaderStatus codes (src/format/wal.ts).
// @ts-ignore: decorator
@inline const OK: i32 = 0;
// @ts-ignore: decorator
@inline const COMMAND_NOT_PREPARE: i32 = 1;
// @ts-ignore: decorator
@inline const OPERATION_INVALID: i32 = 2;
// @ts-ignore: decorator
@inline const SIZE_BELOW_HEADER: i32 = 3;
// @ts-ignore: decorator
@inline const SIZE_OVER_CAP: i32 = 4;
// @ts-ignore: decorator
@inline const RESERVED_NON_ZERO: i32 = 5;
// @ts-ignore: decorator
@inline const UPPER_BYTES_NON_ZERO: i32 = 6;

/** Valid Operation discriminants: 0–3, 64–68, 128–149, 160–162. */
// @ts-ignore: decorator
@inline function validOperation(v: u32): bool {
  return v <= 3 || (v - 64 <= 4) || (v - 128 <= 21) || (v - 160 <= 2);
}

/** reserved_frame [p+62, p+128) and reserved [p+228, p+256) all zero. */
// @ts-ignore: decorator
@inline function walReservedZero(p: usize): bool {
  // [62, 64) then four 16-byte loads cover [64, 128); [228, 256) as 228..244 + 240..256.
  if (load<u16>(p, 62) != 0) return false;
  let r = v128.or(v128.load(p, 64), v128.load(p, 80));
  r = v128.or(r, v128.or(v128.load(p, 96), v128.load(p, 112)));
  r = v128.or(r, v128.or(v128.load(p, 228), v128.load(p, 240)));
  return !v128.any_true(r);
}

/** The prepare-header gate on the 256 bytes at p (the checks in walHeaderStatus, same order). */
export function walHeaderStatus(p: usize): i32 {
  if (load<u8>(p + COMMAND_AT) != PREPARE) return COMMAND_NOT_PREPARE;
  if (!validOperation(<u32>load<u8>(p, 208))) return OPERATION_INVALID;
  const size = load<u32>(p, 48);
  if (size < HEADER_BYTES) return SIZE_BELOW_HEADER;
  if (size > MAX_ENTRY_BYTES) return SIZE_OVER_CAP;
  if (!walReservedZero(p)) return RESERVED_NON_ZERO;
  if ((load<u64>(p, 8) | load<u64>(p, 24) | load<u64>(p, 152)) != 0) return UPPER_BYTES_NON_ZERO;
  return OK;
}

/** Next byte equal to 6 in [q, limit], or limit + 1. */
// @ts-ignore: decorator
@inline function nextPrepareByte(q: usize, limit: usize): usize {
  const six = i8x16.splat(6);
  while (q + 16 <= limit + 1) {
    const m = i8x16.bitmask(i8x16.eq(v128.load(q), six));
    if (m != 0) return q + <usize>ctz(m);
    q += 16;
  }
  while (q <= limit) {
    if (load<u8>(q) == PREPARE) return q;
    q++;
  }
  return limit + 1;
}

/** Last nonzero byte in [from, to), or 0 (callers pass from > 0). */
// @ts-ignore: decorator
@inline function lastNonZero(from: usize, to: usize): usize {
  while (to > from) {
    to--;
    if (load<u8>(to) != 0) return to;
  }
  return 0;
}

/**
 * First candidate in [c, end) that passes: structural != 0 → Iggy's
 * find_complete_entry rule (command 6, valid operation, size in range, fits);
 * else the gate, fits, and op >= minOp. Returns `end` when none does.
 * The caller guarantees the 256 bytes of every candidate are readable.
 */
export function findWalCandidate(c: usize, end: usize, fileEnd: f64, minOp: u64, structural: i32): usize {
  const fileEndI = <i64>fileEnd;
  const lastCommand = end - 1 + COMMAND_AT;
  while (c < end) {
    if (load<u8>(c + COMMAND_AT) != PREPARE) {
      c = nextPrepareByte(c + COMMAND_AT + 1, lastCommand) - COMMAND_AT;
      continue;
    }
    const size = load<u32>(c, 48);
    if (structural != 0) {
      if (validOperation(<u32>load<u8>(c, 208)) && size >= HEADER_BYTES && size <= MAX_ENTRY_BYTES && <i64>c + <i64>size <= fileEndI) {
        return c;
      }
      c++;
      continue;
    }
    const reservedLast = lastNonZero(c + 228, c + 256);
    if (reservedLast != 0) {
      c = reservedLast - 227;
      continue;
    }
    const frameLast = lastNonZero(c + 62, c + 128);
    if (frameLast != 0) {
      c = frameLast - 61;
      continue;
    }
    if (walHeaderStatus(c) == OK && <i64>c + <i64>size <= fileEndI && load<u64>(c, 176) >= minOp) return c;
    c++;
  }
  return end;
}
