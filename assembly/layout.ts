// The memory layout the TypeScript wrapper (src/engine/wasm/engine.ts) must
// respect. It reads these through exported functions at load and asserts them,
// instead of hard-coding what the kernels need.

import { XXH3_STATE_BYTES } from "./xxh3";

/** The wrapper's first byte above the static data is aligned to this (a cache line, and v128 loads). */
// @ts-ignore: decorator
@inline export const HEAP_ALIGN_BYTES: usize = 64;
/**
 * Bytes a state slot takes in the wrapper's layout: one XXH3 streaming state
 * (XXH3_STATE_BYTES) rounded up to HEAP_ALIGN_BYTES so the next slot stays aligned.
 */
// @ts-ignore: decorator
@inline export const STATE_SLOT_BYTES: usize = (XXH3_STATE_BYTES + HEAP_ALIGN_BYTES - 1) & ~(HEAP_ALIGN_BYTES - 1);
/**
 * Bytes past the end of a window (or staging area) the kernels may read:
 * firstNonZero loads whole 64-byte blocks, and the candidate search reads a
 * candidate's 256-byte header. Kept mapped (and never used for data) by the wrapper.
 */
// @ts-ignore: decorator
@inline export const READ_AHEAD_PAD_BYTES: usize = 256;

/** First free byte above the static data, HEAP_ALIGN_BYTES-aligned. */
export function heapBase(): usize {
  return (__heap_base + HEAP_ALIGN_BYTES - 1) & ~(HEAP_ALIGN_BYTES - 1);
}

export function heapAlignBytes(): usize {
  return HEAP_ALIGN_BYTES;
}

/** Bytes of one streaming XXH3 state block. */
export function xxh3StateBytes(): usize {
  return XXH3_STATE_BYTES;
}

export function stateSlotBytes(): usize {
  return STATE_SLOT_BYTES;
}

export function readAheadPadBytes(): usize {
  return READ_AHEAD_PAD_BYTES;
}
