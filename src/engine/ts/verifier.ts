/**
 * Batch verification (docs/format.md §2.1 steps 2–3) as a streaming state machine, so a
 * batch larger than the scan window is verified chunk by chunk with constant
 * memory. The whole-in-window path feeds the blob as one chunk: chunking never
 * changes the status, and the check order is the VerifyStatus order.
 */
import {
  BATCH_CHECKSUM_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  FRAME_CHECKSUMMED_FROM,
  FRAME_HEADER_BYTES,
  FRAME_PAYLOAD_LENGTH_AT,
  FRAME_RESERVED_AT,
  FRAME_USER_HEADERS_LENGTH_AT,
  MAX_TRACKED_BATCH_BYTES,
} from "../../format/constants.js";
import { assert } from "../../assert.js";
import { readU32, readU64, readU64Clamped } from "../../format/bytes.js";
import { VerifyStatus } from "../../format/records.js";
import { Xxh3Stream, xxh3_64 } from "../../hash/xxh3.js";

/** Frame checksums are staged here before hashing, so the batch hash sees few, larger updates. */
const CHECKSUM_STAGING_BYTES = 4096;

export class BatchVerifier {
  private readonly batchHasher = new Xxh3Stream();
  private readonly frameHasher = new Xxh3Stream();
  private readonly frameHeader = new Uint8Array(FRAME_HEADER_BYTES);
  private readonly checksumStaging = new Uint8Array(CHECKSUM_STAGING_BYTES);
  private stagedBytes = 0;
  private expectedBatchChecksum = 0n;
  private messageCount = 0;
  private framesSeen = 0;
  /** Blob bytes not yet fed. */
  private blobRemaining = 0;
  /** Bytes of the current frame header collected so far (0 = between frames). */
  private headerFilled = 0;
  /** Body bytes of the current frame still to hash (valid once the header is complete). */
  private bodyRemaining = 0;
  private inBody = false;
  private status: VerifyStatus = VerifyStatus.Ok;

  /** `header` holds the 256 header bytes of a batch whose header decodes. */
  start(header: Uint8Array, at: number): void {
    this.batchHasher.reset();
    this.batchHasher.update(header.subarray(at, at + BATCH_LENGTH_AT + 8));
    this.batchHasher.update(header.subarray(at + BATCH_MESSAGE_COUNT_AT, at + BATCH_MESSAGE_COUNT_AT + 4));
    this.expectedBatchChecksum = readU64(header, at + BATCH_CHECKSUM_AT);
    this.messageCount = readU32(header, at + BATCH_MESSAGE_COUNT_AT);
    // Any u64 length: past MAX_TRACKED_BATCH_BYTES it is counted as that (the wasm engine does the same).
    const batchLength = Math.min(readU64Clamped(header, at + BATCH_LENGTH_AT), MAX_TRACKED_BATCH_BYTES);
    this.blobRemaining = batchLength - BATCH_HEADER_BYTES;
    assert(
      Number.isSafeInteger(this.blobRemaining) && this.blobRemaining >= 0,
      `a decoded batch_length gives 0..2^53 − 257 blob bytes, got ${this.blobRemaining}`,
    );
    this.framesSeen = 0;
    this.headerFilled = 0;
    this.inBody = false;
    this.stagedBytes = 0;
    this.status = VerifyStatus.Ok;
  }

  /** Feeds the next `length` blob bytes at `at`; a non-Ok result is final. */
  feed(bytes: Uint8Array, at: number, length: number): VerifyStatus {
    let cursor = at;
    const end = at + length;
    while (this.status === VerifyStatus.Ok && cursor < end) {
      if (this.inBody) {
        cursor = this.feedBody(bytes, cursor, end);
      } else if (this.headerFilled === 0 && end - cursor >= FRAME_HEADER_BYTES) {
        cursor = this.frameFromContiguous(bytes, cursor, end);
      } else {
        cursor = this.feedHeader(bytes, cursor, end);
      }
    }
    return this.status;
  }

  finish(): VerifyStatus {
    if (this.status !== VerifyStatus.Ok) return this.status;
    if (this.blobRemaining !== 0 || this.inBody || this.headerFilled !== 0) {
      throw new Error("BatchVerifier.finish called before the whole blob was fed");
    }
    if (this.framesSeen !== this.messageCount) return (this.status = VerifyStatus.FrameCountMismatch);
    this.flushChecksums();
    if (this.batchHasher.digest() !== this.expectedBatchChecksum) {
      return (this.status = VerifyStatus.BatchChecksum);
    }
    return VerifyStatus.Ok;
  }

  /** Checks that run the moment a new frame starts, before any of its bytes are read. */
  private beginFrame(): boolean {
    if (this.framesSeen === this.messageCount) {
      this.status = VerifyStatus.FrameCountMismatch;
    } else if (this.blobRemaining < FRAME_HEADER_BYTES) {
      this.status = VerifyStatus.FrameHeaderOverrun;
    }
    return this.status === VerifyStatus.Ok;
  }

  /** Checks a complete frame header; returns the body length, or -1 on failure. */
  private acceptHeader(header: Uint8Array, at: number): number {
    if (readU32(header, at + FRAME_RESERVED_AT) !== 0 || readU32(header, at + FRAME_RESERVED_AT + 4) !== 0) {
      this.status = VerifyStatus.FrameReservedNonZero;
      return -1;
    }
    const bodyBytes = readU32(header, at + FRAME_PAYLOAD_LENGTH_AT) + readU32(header, at + FRAME_USER_HEADERS_LENGTH_AT);
    if (bodyBytes > this.blobRemaining - FRAME_HEADER_BYTES) {
      this.status = VerifyStatus.FrameOverrun;
      return -1;
    }
    return bodyBytes;
  }

  /** Fast path: the frame header starts at `at` and all 48 bytes are present. */
  private frameFromContiguous(bytes: Uint8Array, at: number, end: number): number {
    if (!this.beginFrame()) return end;
    const bodyBytes = this.acceptHeader(bytes, at);
    if (bodyBytes < 0) return end;
    const frameEnd = at + FRAME_HEADER_BYTES + bodyBytes;
    if (frameEnd <= end) {
      const checksum = xxh3_64(bytes.subarray(at + FRAME_CHECKSUMMED_FROM, frameEnd));
      this.blobRemaining -= FRAME_HEADER_BYTES + bodyBytes;
      this.completeFrame(bytes, at, checksum);
      return frameEnd;
    }
    // The body continues in a later chunk: keep the stored checksum and stream the rest.
    this.frameHeader.set(bytes.subarray(at, at + 8), 0);
    this.frameHasher.reset();
    this.frameHasher.update(bytes.subarray(at + FRAME_CHECKSUMMED_FROM, at + FRAME_HEADER_BYTES));
    this.blobRemaining -= FRAME_HEADER_BYTES;
    this.bodyRemaining = bodyBytes;
    this.inBody = true;
    return at + FRAME_HEADER_BYTES;
  }

  /** Slow path: collect a frame header split across chunks. */
  private feedHeader(bytes: Uint8Array, at: number, end: number): number {
    if (this.headerFilled === 0 && !this.beginFrame()) return end;
    const take = Math.min(FRAME_HEADER_BYTES - this.headerFilled, end - at);
    this.frameHeader.set(bytes.subarray(at, at + take), this.headerFilled);
    this.headerFilled += take;
    if (this.headerFilled < FRAME_HEADER_BYTES) return at + take;
    this.headerFilled = 0;
    const bodyBytes = this.acceptHeader(this.frameHeader, 0);
    if (bodyBytes < 0) return end;
    this.frameHasher.reset();
    this.frameHasher.update(this.frameHeader.subarray(FRAME_CHECKSUMMED_FROM));
    this.blobRemaining -= FRAME_HEADER_BYTES;
    this.bodyRemaining = bodyBytes;
    this.inBody = true;
    if (bodyBytes === 0) this.feedBody(bytes, at + take, at + take); // an empty-body frame is complete with its header
    return at + take;
  }

  private feedBody(bytes: Uint8Array, at: number, end: number): number {
    const take = Math.min(this.bodyRemaining, end - at);
    this.frameHasher.update(bytes.subarray(at, at + take));
    this.bodyRemaining -= take;
    this.blobRemaining -= take;
    if (this.bodyRemaining === 0) {
      this.inBody = false;
      this.completeFrame(this.frameHeader, 0, this.frameHasher.digest());
    }
    return at + take;
  }

  /** The frame's stored checksum is the 8 bytes at `storedAt`. */
  private completeFrame(stored: Uint8Array, storedAt: number, computedChecksum: bigint): void {
    if (readU64(stored, storedAt) !== computedChecksum) {
      this.status = VerifyStatus.FrameChecksum;
      return;
    }
    this.framesSeen++;
    if (this.stagedBytes === CHECKSUM_STAGING_BYTES) this.flushChecksums();
    this.checksumStaging.set(stored.subarray(storedAt, storedAt + 8), this.stagedBytes);
    this.stagedBytes += 8;
  }

  private flushChecksums(): void {
    if (this.stagedBytes > 0) this.batchHasher.update(this.checksumStaging.subarray(0, this.stagedBytes));
    this.stagedBytes = 0;
  }
}
