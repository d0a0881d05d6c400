// Metadata WAL kernels (docs/node.md N1): the prepare-header gate and the
// residue probe's candidate loop with skip-ahead. Semantics are defined by
// src/format/wal.ts and src/engine/ts/wal-candidates.ts (the plain loop); the
// TypeScript wrapper (src/engine/wasm/engine.ts) does the unit arithmetic, as
// for the segment candidate loop. Field positions and status codes: assembly/abi.ts.

import {
  WAL_CHECKSUM_AT, WAL_CHECKSUM_BODY_AT, WAL_COMMAND_AT as COMMAND_AT, WAL_COMMAND_PREPARE as PREPARE,
  WAL_HEADER_BYTES as HEADER_BYTES, WAL_HEADER_COMMAND_NOT_PREPARE as COMMAND_NOT_PREPARE, WAL_HEADER_OK as OK,
  WAL_HEADER_OPERATION_INVALID as OPERATION_INVALID, WAL_HEADER_RESERVED_NON_ZERO as RESERVED_NON_ZERO,
  WAL_HEADER_SIZE_BELOW_HEADER as SIZE_BELOW_HEADER, WAL_HEADER_SIZE_OVER_CAP as SIZE_OVER_CAP,
  WAL_HEADER_UPPER_BYTES_NON_ZERO as UPPER_BYTES_NON_ZERO, WAL_MAX_ENTRY_BYTES as MAX_ENTRY_BYTES, WAL_OP_AT,
  WAL_OPERATION_AT, WAL_PARENT_AT, WAL_RESERVED_AT, WAL_RESERVED_FRAME_AT, WAL_RESERVED_FRAME_END, WAL_SIZE_AT,
} from "./abi";

/** The upper halves of the u128 checksum, checksum_body and parent fields (docs/node.md N1): zero in a prepare. */
// @ts-ignore: decorator
@inline const CHECKSUM_UPPER_AT: usize = WAL_CHECKSUM_AT + 8;
// @ts-ignore: decorator
@inline const CHECKSUM_BODY_UPPER_AT: usize = WAL_CHECKSUM_BODY_AT + 8;
// @ts-ignore: decorator
@inline const PARENT_UPPER_AT: usize = WAL_PARENT_AT + 8;

/** Valid Operation discriminants: 0–3, 64–68, 128–149, 160–162. */
// @ts-ignore: decorator
@inline function validOperation(v: u32): bool {
  return v <= 3 || (v - 64 <= 4) || (v - 128 <= 21) || (v - 160 <= 2);
}

/** reserved_frame [p+62, p+128) and reserved [p+228, p+256) all zero. */
// @ts-ignore: decorator
@inline function walReservedZero(p: usize): bool {
  // [62, 64) then four 16-byte loads cover [64, 128); [228, 256) as 228..244 + 240..256.
  if (load<u16>(p, WAL_RESERVED_FRAME_AT) != 0) return false;
  let r = v128.or(v128.load(p, WAL_RESERVED_FRAME_AT + 2), v128.load(p, WAL_RESERVED_FRAME_AT + 18));
  r = v128.or(r, v128.or(v128.load(p, WAL_RESERVED_FRAME_AT + 34), v128.load(p, WAL_RESERVED_FRAME_END - 16)));
  r = v128.or(r, v128.or(v128.load(p, WAL_RESERVED_AT), v128.load(p, <usize>HEADER_BYTES - 16)));
  return !v128.any_true(r);
}

/** The prepare-header gate on the 256 bytes at p (the checks in walHeaderStatus, same order). */
export function walHeaderStatus(p: usize): i32 {
  if (load<u8>(p + COMMAND_AT) != PREPARE) return COMMAND_NOT_PREPARE;
  if (!validOperation(<u32>load<u8>(p, WAL_OPERATION_AT))) return OPERATION_INVALID;
  const size = load<u32>(p, WAL_SIZE_AT);
  if (size < HEADER_BYTES) return SIZE_BELOW_HEADER;
  if (size > MAX_ENTRY_BYTES) return SIZE_OVER_CAP;
  if (!walReservedZero(p)) return RESERVED_NON_ZERO;
  if ((load<u64>(p, CHECKSUM_UPPER_AT) | load<u64>(p, CHECKSUM_BODY_UPPER_AT) | load<u64>(p, PARENT_UPPER_AT)) != 0) {
    return UPPER_BYTES_NON_ZERO;
  }
  return OK;
}

/** Next byte equal to PREPARE in [q, limit], or limit + 1. */
// @ts-ignore: decorator
@inline function nextPrepareByte(q: usize, limit: usize): usize {
  const prepare = i8x16.splat(PREPARE);
  while (q + 16 <= limit + 1) {
    const m = i8x16.bitmask(i8x16.eq(v128.load(q), prepare));
    if (m != 0) return q + <usize>ctz(m);
    q += 16;
  }
  while (q <= limit) {
    if (load<u8>(q) == PREPARE) return q;
    q++;
  }
  return limit + 1;
}

/** Last nonzero byte in [from, to), or 0: unambiguous, as every caller passes from > 0. */
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
    const size = load<u32>(c, WAL_SIZE_AT);
    if (structural != 0) {
      if (validOperation(<u32>load<u8>(c, WAL_OPERATION_AT)) && size >= HEADER_BYTES && size <= MAX_ENTRY_BYTES && <i64>c + <i64>size <= fileEndI) {
        return c;
      }
      c++;
      continue;
    }
    // A nonzero byte q in reserved rules out every candidate up to q - WAL_RESERVED_AT; one in reserved_frame,
    // every candidate up to q - WAL_RESERVED_FRAME_AT (each still holds q in the same field).
    const reservedLast = lastNonZero(c + WAL_RESERVED_AT, c + <usize>HEADER_BYTES);
    if (reservedLast != 0) {
      c = reservedLast - (WAL_RESERVED_AT - 1);
      continue;
    }
    const frameLast = lastNonZero(c + WAL_RESERVED_FRAME_AT, c + WAL_RESERVED_FRAME_END);
    if (frameLast != 0) {
      c = frameLast - (WAL_RESERVED_FRAME_AT - 1);
      continue;
    }
    if (walHeaderStatus(c) == OK && <i64>c + <i64>size <= fileEndI && load<u64>(c, WAL_OP_AT) >= minOp) return c;
    c++;
  }
  return end;
}
