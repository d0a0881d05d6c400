/**
 * The EngineWindow contract, enforced once for both engines (docs/engines.md §8).
 * Each engine extends `CheckedEngineWindow` and implements only the raw kernels;
 * every public method here checks its arguments and the window's state first,
 * so a call outside the contract throws the same error type and message from
 * either engine, and a kernel never sees an index outside its window.
 */
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT, U64_MAX } from "../format/constants.js";
import { readU64Clamped } from "../format/bytes.js";
import { VerifyStatus } from "../format/records.js";
import type {
  CandidateScanRequest,
  CandidateScanResult,
  EngineWindow,
  KernelLimits,
  ResidentWalkRequest,
  ResidentWalkResult,
  WalCandidateScanRequest,
  WalCandidateScanResult,
} from "./types.js";

/** The streaming verification in progress: how much blob is still owed, and the last status. */
interface StreamingVerification {
  blobRemainingBytes: number;
  status: VerifyStatus;
}

export abstract class CheckedEngineWindow implements EngineWindow {
  private closed = false;
  private streaming: StreamingVerification | null = null;

  protected constructor(
    readonly capacityBytes: number,
    readonly limits: KernelLimits,
  ) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < BATCH_HEADER_BYTES) {
      throw new RangeError(`window size must be an integer ≥ ${BATCH_HEADER_BYTES} bytes, got ${capacityBytes}`);
    }
  }

  /** The window's bytes, whatever state the window is in. */
  protected abstract bytes(): Uint8Array;
  protected abstract rawHeaderStatus(index: number): VerifyStatus;
  protected abstract rawVerifyInWindow(index: number): VerifyStatus;
  protected abstract rawVerifyStart(index: number): void;
  protected abstract rawVerifyFeed(index: number, lengthBytes: number): VerifyStatus;
  protected abstract rawVerifyFinish(): VerifyStatus;
  /** Called with `fromIndex < toIndex`, the range checked and bounded by the budget. */
  protected abstract rawScanCandidates(request: CandidateScanRequest): CandidateScanResult;
  protected abstract rawFirstNonZero(index: number, lengthBytes: number): number;
  protected abstract rawWalHeaderStatus(index: number): number;
  /** Called with `fromIndex < toIndex`, the range checked and bounded by the budget. */
  protected abstract rawScanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult;
  /** Called with the indexes checked: integers, fromIndex ≤ heldEndIndex ≤ capacityBytes, expectedOffset a u64. */
  protected abstract rawWalkResident(request: ResidentWalkRequest): ResidentWalkResult;
  protected abstract release(): void;

  view(): Uint8Array {
    this.checkOpen("view");
    return this.bytes();
  }

  headerStatus(index: number): VerifyStatus {
    this.checkRange("headerStatus", index, BATCH_HEADER_BYTES);
    return this.rawHeaderStatus(index);
  }

  verifyInWindow(index: number): VerifyStatus {
    const batchLength = this.checkBatchHeader("verifyInWindow", index);
    if (batchLength > this.capacityBytes - index) {
      throw new RangeError(
        `verifyInWindow: the batch at window index ${index} (${batchLength} bytes) is not whole in the ${this.capacityBytes}-byte window`,
      );
    }
    // The one-shot kernel reuses the streaming verifier's state.
    this.streaming = null;
    return this.rawVerifyInWindow(index);
  }

  verifyStart(index: number): void {
    const batchLength = this.checkBatchHeader("verifyStart", index);
    this.rawVerifyStart(index);
    this.streaming = { blobRemainingBytes: batchLength - BATCH_HEADER_BYTES, status: VerifyStatus.Ok };
  }

  verifyFeed(index: number, lengthBytes: number): VerifyStatus {
    this.checkRange("verifyFeed", index, lengthBytes);
    const streaming = this.streaming;
    if (streaming === null) throw new Error("verifyFeed called without verifyStart");
    if (lengthBytes > streaming.blobRemainingBytes) {
      throw new RangeError(`verifyFeed: ${lengthBytes} bytes fed but only ${streaming.blobRemainingBytes} bytes of the blob remain`);
    }
    if (streaming.status !== VerifyStatus.Ok) return streaming.status;
    streaming.status = this.rawVerifyFeed(index, lengthBytes);
    streaming.blobRemainingBytes -= lengthBytes;
    return streaming.status;
  }

  verifyFinish(): VerifyStatus {
    this.checkOpen("verifyFinish");
    const streaming = this.streaming;
    if (streaming === null) throw new Error("verifyFinish called without verifyStart");
    if (streaming.status !== VerifyStatus.Ok) return streaming.status;
    if (streaming.blobRemainingBytes > 0) {
      throw new Error(`verifyFinish called before the whole blob was fed (${streaming.blobRemainingBytes} bytes remain)`);
    }
    this.streaming = null;
    return this.rawVerifyFinish();
  }

  scanCandidates(request: CandidateScanRequest): CandidateScanResult {
    const toIndex = this.checkCandidateScan("scanCandidates", request);
    if (toIndex <= request.fromIndex) return { status: "done", index: request.toIndex, spentUnits: request.spentUnits };
    return this.rawScanCandidates(toIndex === request.toIndex ? request : { ...request, toIndex });
  }

  walHeaderStatus(index: number): number {
    // A prepare header is 256 bytes, like a batch header (docs/node.md N1).
    this.checkRange("walHeaderStatus", index, BATCH_HEADER_BYTES);
    return this.rawWalHeaderStatus(index);
  }

  scanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult {
    const toIndex = this.checkCandidateScan("scanWalCandidates", request);
    if (toIndex <= request.fromIndex) return { status: "done", index: request.toIndex, spentUnits: request.spentUnits };
    return this.rawScanWalCandidates(toIndex === request.toIndex ? request : { ...request, toIndex });
  }

  /**
   * The checks both candidate loops share; returns the `toIndex` bounded by
   * the budget (docs/recovery.md §3.5): the candidate whose unit takes the spend past the
   * limit is the last one that may be examined.
   */
  private checkCandidateScan(
    operation: string,
    request: { fromIndex: number; toIndex: number; fileEndIndex: number; spentUnits: number; limitUnits: number },
  ): number {
    this.checkOpen(operation);
    const { fromIndex, toIndex, fileEndIndex, spentUnits, limitUnits } = request;
    for (const [name, value] of [
      ["fromIndex", fromIndex],
      ["toIndex", toIndex],
      ["fileEndIndex", fileEndIndex],
    ] as const) {
      if (!Number.isSafeInteger(value)) throw new RangeError(`${operation}: ${name} must be an integer, got ${value}`);
    }
    if (!Number.isSafeInteger(spentUnits) || !Number.isSafeInteger(limitUnits) || limitUnits < 0) {
      throw new RangeError(`${operation}: units must be integers (spent ${spentUnits}, limit ${limitUnits})`);
    }
    if (toIndex <= fromIndex) return toIndex;
    this.checkRange(operation, fromIndex, toIndex - 1 - fromIndex + BATCH_HEADER_BYTES);
    if (fileEndIndex < 0) throw new RangeError(`${operation}: fileEndIndex ${fileEndIndex} is before the window start`);
    const exhaustingIndex = fromIndex + Math.max(0, limitUnits - spentUnits);
    return Math.min(toIndex, exhaustingIndex + 1);
  }

  walkResident(request: ResidentWalkRequest): ResidentWalkResult {
    const operation = "walkResident";
    this.checkOpen(operation);
    const { fromIndex, heldEndIndex, fileEndIndex, stopIndex, expectedOffset } = request;
    // One call per walk of every partition: checked without building arrays (docs/benchmarks.md "Breakdown").
    checkWalkIndex(operation, "fromIndex", fromIndex);
    checkWalkIndex(operation, "heldEndIndex", heldEndIndex);
    checkWalkIndex(operation, "fileEndIndex", fileEndIndex);
    checkWalkIndex(operation, "stopIndex", stopIndex);
    if (heldEndIndex > this.capacityBytes) {
      throw new RangeError(`${operation}: heldEndIndex ${heldEndIndex} is past the ${this.capacityBytes}-byte window`);
    }
    if (fromIndex > heldEndIndex) {
      throw new RangeError(`${operation}: fromIndex ${fromIndex} is past heldEndIndex ${heldEndIndex}`);
    }
    if (typeof expectedOffset !== "bigint" || expectedOffset < 0n || expectedOffset > U64_MAX) {
      throw new RangeError(`${operation}: expectedOffset must be a u64, got ${String(expectedOffset)}`);
    }
    // The kernel verifies with the streaming verifier's state.
    this.streaming = null;
    return this.rawWalkResident(request);
  }

  firstNonZero(index: number, lengthBytes: number): number {
    this.checkRange("firstNonZero", index, lengthBytes);
    return this.rawFirstNonZero(index, lengthBytes);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.streaming = null;
    this.release();
  }

  private checkOpen(operation: string): void {
    if (this.closed) throw new Error(`${operation}: engine window used after close()`);
  }

  /** `[index, index + lengthBytes)` must lie in the window. */
  private checkRange(operation: string, index: number, lengthBytes: number): void {
    this.checkOpen(operation);
    if (
      !(
        Number.isSafeInteger(index) &&
        Number.isSafeInteger(lengthBytes) &&
        index >= 0 &&
        lengthBytes >= 0 &&
        index + lengthBytes <= this.capacityBytes
      )
    ) {
      throw new RangeError(`${operation}: bytes [${index}, ${index + lengthBytes}) are outside the ${this.capacityBytes}-byte window`);
    }
  }

  /** A verifier needs a header in the window with batch_length ≥ 256; returns that length. */
  private checkBatchHeader(operation: string, index: number): number {
    this.checkRange(operation, index, BATCH_HEADER_BYTES);
    const batchLength = readU64Clamped(this.bytes(), index + BATCH_LENGTH_AT);
    if (batchLength < BATCH_HEADER_BYTES) {
      throw new RangeError(
        `${operation}: the header at window index ${index} claims ${batchLength} bytes, below the ${BATCH_HEADER_BYTES}-byte header`,
      );
    }
    return batchLength;
  }
}

/** A resident walk's window index: a non-negative integer, or a RangeError naming it. */
function checkWalkIndex(operation: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${operation}: ${name} must be a non-negative integer, got ${value}`);
  }
}
