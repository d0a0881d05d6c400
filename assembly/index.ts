// segscan wasm kernels (SPEC 8): one module, no imports, raw pointers into its
// own linear memory. The TypeScript wrapper (src/engine/wasm/engine.ts) lays out
// memory above heapBase() and never lets it grow while a window is open.

import { XXH3_STATE_BYTES } from "./xxh3";

export { xxh3, xxh3Reset, xxh3Update, xxh3Update64, xxh3Digest } from "./xxh3";
export {
  setMaxBatchBytes, headerStatus, verifyStart, verifyFeed, verifyFinish, verifyInWindow,
} from "./verify";
export { findCandidate, firstNonZero } from "./probe";

/** First free byte above the static data, 64-byte aligned. */
export function heapBase(): usize {
  return (__heap_base + 63) & ~<usize>63;
}

/** Bytes of one streaming XXH3 state block (16-byte aligned). */
export function xxh3StateBytes(): usize {
  return XXH3_STATE_BYTES;
}
export { walHeaderStatus, findWalCandidate } from "./wal";
