// segscan wasm kernels (docs/engines.md §8): one module, no imports, raw pointers into its
// own linear memory. The TypeScript wrapper (src/engine/wasm/engine.ts) lays out
// memory above heapBase() as assembly/layout.ts describes, asserts that layout and the
// shared constants of assembly/abi.ts at load, and never lets memory grow while a window
// is open.

export { xxh3, xxh3Reset, xxh3Update, xxh3Update64, xxh3Digest } from "./xxh3";
export {
  setMaxBatchBytes, headerStatus, verifyStart, verifyFeed, verifyFinish, verifyInWindow,
} from "./verify";
export { findCandidate, firstNonZero } from "./probe";
export { heapBase, heapAlignBytes, xxh3StateBytes, stateSlotBytes, readAheadPadBytes } from "./layout";
export { walHeaderStatus, findWalCandidate } from "./wal";
export { walkResident, walkResultAddress } from "./walk";
export * from "./abi";
