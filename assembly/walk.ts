// The resident batch walk (docs/recovery.md §3.4, docs/engines.md §8): the common case of
// src/recovery/walk.ts's loop in one call. From a window position it walks batch after
// batch while each one is whole in the bytes held, decodes (docs/format.md §1.2, within
// the length cap), verifies (docs/format.md §2.1) and carries exactly the expected base
// offset. Everything else (a read, a gap, a discontinuity, an oversized or failing
// batch, a position the caller must see) stops the walk; the caller continues there.
//
// No BigInt crosses per batch: u64 fields are read natively, and the result is written
// to a small static area (WALK_RESULT, its slots in assembly/abi.ts) that the wrapper reads
// once per call.

import { headerStatus, verifyInWindow } from "./verify";
import {
  BATCH_BASE_OFFSET_AT, BATCH_BASE_TIMESTAMP_AT, BATCH_HEADER_BYTES, BATCH_LENGTH_AT, BATCH_MESSAGE_COUNT_AT, VERIFY_OK as OK,
  WALK_BATCHES, WALK_EXPECTED_OFFSET, WALK_FIRST_AT, WALK_FIRST_BASE_OFFSET, WALK_FIRST_BASE_TIMESTAMP, WALK_FIRST_MESSAGE_COUNT,
  WALK_LAST_AT, WALK_LAST_BASE_OFFSET, WALK_LAST_BASE_TIMESTAMP, WALK_LAST_MESSAGE_COUNT, WALK_MESSAGES, WALK_RESULT_SLOTS,
  WALK_STOP,
} from "./abi";

/** The result area: static data below the heap, so the wrapper's layout above heapBase() is untouched. */
const WALK_RESULT: usize = memory.data(<i32>(WALK_RESULT_SLOTS * 8), 16);

export function walkResultAddress(): usize {
  return WALK_RESULT;
}

// @ts-ignore: decorator
@inline function putF64(slot: usize, value: f64): void {
  store<f64>(WALK_RESULT + (slot << 3), value);
}

// @ts-ignore: decorator
@inline function putU64(slot: usize, value: u64): void {
  store<u64>(WALK_RESULT + (slot << 3), value);
}

/**
 * Walks batches from address `p`. The wrapper passes addresses already bounded:
 * `heldEnd` is just past the bytes held; `batchEnd` = min(file end, heldEnd): a batch
 * must end at or before it; `stopAt` ≤ heldEnd: no batch starting at or past it is
 * walked. `expected` is the offset the first batch must carry. Nothing at or past
 * heldEnd is read (a header is read only when its 256 bytes are below heldEnd).
 */
export function walkResident(p: usize, heldEnd: usize, batchEnd: usize, stopAt: usize, expected: u64): void {
  let batches: u32 = 0;
  let messages: u64 = 0;
  let firstAt: usize = 0;
  let lastAt: usize = 0;
  let anyWithMessages = false;
  // u64 arithmetic throughout: an address plus a length can pass 2^32.
  while (p < stopAt && <u64>p + <u64>BATCH_HEADER_BYTES <= <u64>heldEnd) {
    if (headerStatus(p) != OK) break;
    // Decoded: 256 ≤ batch_length ≤ maxBatchBytes (< 2^53), so the sum cannot wrap.
    const length = load<u64>(p, BATCH_LENGTH_AT);
    if (<u64>p + length > <u64>batchEnd) break;
    // The continuity rule before the (costly) verification: the result is the same.
    if (load<u64>(p, BATCH_BASE_OFFSET_AT) != expected) break;
    const count = load<u32>(p, BATCH_MESSAGE_COUNT_AT);
    const next = expected + <u64>count;
    // base_offset + message_count past u64: the caller's (stop before the batch).
    if (next < expected) break;
    if (verifyInWindow(p) != OK) break;
    if (count > 0) {
      if (!anyWithMessages) firstAt = p;
      anyWithMessages = true;
      lastAt = p;
      expected = next;
    }
    messages += <u64>count;
    batches++;
    p += <usize>length;
  }
  putF64(WALK_STOP, <f64>p);
  putF64(WALK_BATCHES, <f64>batches);
  putF64(WALK_MESSAGES, <f64>messages);
  putU64(WALK_EXPECTED_OFFSET, expected);
  putF64(WALK_FIRST_AT, anyWithMessages ? <f64>firstAt : -1);
  putF64(WALK_LAST_AT, anyWithMessages ? <f64>lastAt : -1);
  if (anyWithMessages) {
    putU64(WALK_FIRST_BASE_OFFSET, load<u64>(firstAt, BATCH_BASE_OFFSET_AT));
    putU64(WALK_FIRST_BASE_TIMESTAMP, load<u64>(firstAt, BATCH_BASE_TIMESTAMP_AT));
    putF64(WALK_FIRST_MESSAGE_COUNT, <f64>load<u32>(firstAt, BATCH_MESSAGE_COUNT_AT));
    putU64(WALK_LAST_BASE_OFFSET, load<u64>(lastAt, BATCH_BASE_OFFSET_AT));
    putU64(WALK_LAST_BASE_TIMESTAMP, load<u64>(lastAt, BATCH_BASE_TIMESTAMP_AT));
    putF64(WALK_LAST_MESSAGE_COUNT, <f64>load<u32>(lastAt, BATCH_MESSAGE_COUNT_AT));
  }
}
