/**
 * The engine seam (docs/engines.md §8). An engine owns the hot loops: XXH3-64, the header
 * decode gate with the reserved-byte prefilter, the damage-probe candidate loop
 * with skip-ahead, and frame tiling + checksum verification. Everything around
 * them (file windows, budget policy, continuity, classification, repair) is
 * TypeScript and engine-agnostic.
 *
 * Both engines must return identical values for identical inputs: the
 * differential tests compare every method below.
 */
import type { VerifyStatus } from "../format/records.js";

export type EngineKind = "wasm" | "ts";

export interface Engine {
  readonly kind: EngineKind;
  /** XXH3-64, seed 0, default secret, over any bytes (any length, any byteOffset). */
  xxh3_64(bytes: Uint8Array): bigint;
  /** Streaming XXH3-64 with constant memory, e.g. for hashing preserved residue. */
  createHasher(): Hasher;
  /**
   * A scan window of `windowBytes` in engine memory. File bytes are read straight
   * into `window.view()`; the kernels then run on them without a copy. The wasm
   * engine gives every window its own linear memory sized once at open, so memory
   * never grows (and no view is detached) while a read into it is in flight.
   */
  openWindow(windowBytes: number, limits?: Partial<KernelLimits>): EngineWindow;
}

export interface Hasher {
  update(bytes: Uint8Array): void;
  digest(): bigint;
}

export interface KernelLimits {
  /** docs/format.md §2.2 `MAX_BATCH_BYTES`, or a caller's explicit override. */
  maxBatchBytes: number;
}

/**
 * Outcome of one candidate-scan call over a window (docs/recovery.md §3.5). Positions in the
 * candidate API are window byte indexes (`…Index`: 0 is the window's first
 * byte); `minBaseOffset` alone is a message offset.
 */
export type CandidateScanStatus =
  /** The candidate at `index` passed every pre-verification check; its 1 unit is already charged. */
  | "passed"
  /** Charging the candidate at `index` took `spentUnits` past the limit. */
  | "exhausted"
  /** Every candidate in the range was ruled out; `index` is the range end. */
  | "done";

export interface CandidateScanResult {
  status: CandidateScanStatus;
  /** Window index of the stopping candidate (or the range end for "done"). */
  index: number;
  /** Units spent so far, including every candidate of this call. */
  spentUnits: number;
}

export interface CandidateScanRequest {
  /** Window index of the first candidate. */
  fromIndex: number;
  /**
   * Window index just past the last candidate to examine. The caller
   * guarantees `toIndex - 1 + 256 <= bytes held in the window`.
   */
  toIndex: number;
  /**
   * The file size as a window index (file size − window start): a candidate
   * fits when `c + batch_length <= fileEndIndex`. Never negative.
   */
  fileEndIndex: number;
  /**
   * Lowest base_offset (a message offset) that extends the chain (inclusive):
   * chain end + 1, or the segment's start offset when no batch with messages
   * was proven. `null` when nothing can extend it (chain end is u64::MAX).
   */
  minBaseOffset: bigint | null;
  spentUnits: number;
  limitUnits: number;
}

/**
 * The metadata WAL probe's candidate scan (docs/node.md N1). `rule`:
 * "verified" — the prepare-header gate, fits the file, op ≥ `minOp` (segscan's
 * survivor pre-check; `minOp` null: nothing can pass); "structural" — Iggy's own
 * `find_complete_entry` rule (command 6, valid operation, size in range, fits;
 * no reserved bytes, no checksum), for the boot forecast.
 */
export interface WalCandidateScanRequest {
  rule: "verified" | "structural";
  /** Window index of the first candidate. */
  fromIndex: number;
  /** Window index past the last candidate; the caller guarantees `toIndex - 1 + 256 <= bytes held`. */
  toIndex: number;
  /** File size as a window index: a candidate fits when `c + size <= fileEndIndex`. */
  fileEndIndex: number;
  minOp: bigint | null;
  spentUnits: number;
  limitUnits: number;
}

export interface WalCandidateScanResult {
  status: CandidateScanStatus;
  /** Window index of the stopping candidate (or `toIndex` for "done"). */
  index: number;
  spentUnits: number;
}

/**
 * The resident batch walk (docs/recovery.md §3.4): the common case of the recovery
 * walk (src/recovery/walk.ts) in one call. All `…Index` values are window byte
 * indexes; `expectedOffset` is a message offset.
 */
export interface ResidentWalkRequest {
  /** Window index of the first batch to try. */
  fromIndex: number;
  /** Window index just past the bytes held (≤ capacityBytes, ≥ fromIndex). Nothing at or past it is read. */
  heldEndIndex: number;
  /** The file size as a window index: a batch walks only if `index + batch_length ≤ fileEndIndex`. */
  fileEndIndex: number;
  /** No batch that STARTS at or past this index is walked (the caller's next per-batch stop). */
  stopIndex: number;
  /** The offset the next batch must carry exactly (docs/recovery.md §3.4), a u64. */
  expectedOffset: bigint;
}

/** A walked batch with message_count > 0. */
export interface ResidentWalkBatch {
  /** Window index of its header. */
  index: number;
  baseOffset: bigint;
  baseTimestamp: bigint;
  messageCount: number;
}

export interface ResidentWalkResult {
  /** Window index of the first batch NOT walked: the caller continues there with its per-batch path. */
  stopIndex: number;
  /** Batches walked. */
  batches: number;
  /** Sum of their message_count. */
  messages: number;
  /** The offset the next batch must carry, after the walked batches. */
  expectedOffset: bigint;
  /** The first walked batch with message_count > 0. */
  firstWithMessages: ResidentWalkBatch | null;
  /** The last walked batch with message_count > 0. */
  lastWithMessages: ResidentWalkBatch | null;
}

/**
 * A scan window. Both engines implement it through `CheckedEngineWindow`
 * (src/engine/window.ts), which enforces the contract below in one place: a
 * call outside it throws the same error from either engine — `RangeError` for
 * an index or length outside the window (or a batch not whole in it), `Error`
 * for a window used after `close()` or a streaming verification called out of
 * order. Results for calls inside the contract are identical across engines.
 */
export interface EngineWindow {
  readonly capacityBytes: number;
  readonly limits: KernelLimits;
  /** The window's bytes (length `capacityBytes`). Stable for the window's life. */
  view(): Uint8Array;
  /**
   * The docs/format.md §1.2 decode gate on the 256 bytes at window index `index`: Ok,
   * LengthBelowHeader, LengthOverCap or ReservedNonZero (in that order of checking).
   */
  headerStatus(index: number): VerifyStatus;
  /**
   * Verifies (docs/format.md §2.1 steps 2–3) a batch whose header is at `index` and whose
   * whole `batch_length` (≥ 256) bytes are in the window. The length may exceed
   * `limits.maxBatchBytes` (an oversized batch, docs/format.md §2.2); the caller checked
   * the rest of the header.
   */
  verifyInWindow(index: number): VerifyStatus;
  /**
   * Streaming verification of a batch larger than the window: `verifyStart` with
   * the header at `index` (batch_length ≥ 256, any size), then `verifyFeed` with
   * the blob's bytes in order (any chunking, never past the blob end), then
   * `verifyFinish` once the whole blob was fed. A non-Ok status from
   * `verifyFeed` is final (stop feeding; `verifyFinish` returns it). Chunking
   * never changes the result.
   */
  verifyStart(index: number): void;
  verifyFeed(index: number, lengthBytes: number): VerifyStatus;
  verifyFinish(): VerifyStatus;
  /**
   * The damage-probe candidate loop (docs/recovery.md §3.5) over window indexes: each
   * candidate costs 1 unit whether examined or skipped; stops at the first that
   * passes the checks (decodes — the length cap aside —, fits the file,
   * message_count > 0, base_offset ≥ minBaseOffset) or where the budget runs
   * out. No candidate past the one that exhausts the budget is examined or
   * read. Skip-ahead changes speed only.
   */
  scanCandidates(request: CandidateScanRequest): CandidateScanResult;
  /**
   * Window index of the first nonzero byte in `[index, index + lengthBytes)`,
   * or `index + lengthBytes` when all are zero (a residue of zeros is recorded
   * by its length only, docs/repair.md §6.2).
   */
  firstNonZero(index: number, lengthBytes: number): number;
  /**
   * docs/node.md N1 prepare-header gate on the 256 bytes at window `index`: a
   * `WalHeaderStatus` (src/format/wal.ts). "Fits the file" and the
   * checksums are the caller's.
   */
  walHeaderStatus(index: number): number;
  /** The WAL probe's candidate loop (docs/node.md N1), same unit accounting as `scanCandidates`. */
  scanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult;
  /**
   * Walks batches from `fromIndex` while each one, at index i: starts before
   * `stopIndex`; has its 256 header bytes held (i + 256 ≤ heldEndIndex); decodes
   * (`headerStatus` Ok, so batch_length ≤ `limits.maxBatchBytes`); ends within both
   * the file and the bytes held; verifies (`verifyInWindow` Ok); and carries
   * base_offset == the expected offset. A batch with message_count > 0 moves the
   * expected offset to base_offset + message_count; one whose sum would pass u64
   * is not walked. Stops at the first batch that fails any of these (the caller's
   * per-batch path decides what it is); never reads at or past `heldEndIndex`.
   * Ends any streaming verification in progress.
   */
  walkResident(request: ResidentWalkRequest): ResidentWalkResult;
  /** Releases engine memory; any later call (but `close`) throws. */
  close(): void;
}
