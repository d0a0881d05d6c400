/**
 * Decoders for the three on-disk records (docs/format.md §1.2, §1.3, §1.5). These are the
 * reference decoders used by `dump`, tests and repair; the engines' hot loops
 * implement the same checks on window memory.
 */
import {
  BATCH_BASE_OFFSET_AT,
  BATCH_BASE_TIMESTAMP_AT,
  BATCH_CHECKSUM_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  BATCH_ORIGIN_TIMESTAMP_AT,
  BATCH_PARTITION_ID_AT,
  BATCH_RESERVED_START,
  FRAME_CHECKSUM_AT,
  FRAME_HEADER_BYTES,
  FRAME_ID_AT,
  FRAME_OFFSET_DELTA_AT,
  FRAME_PAYLOAD_LENGTH_AT,
  FRAME_RESERVED_AT,
  FRAME_TIMESTAMP_DELTA_AT,
  FRAME_USER_HEADERS_LENGTH_AT,
  INDEX_ENTRY_BYTES,
  MAX_BATCH_BYTES,
} from "./constants.js";
import { readU128, readU32, readU64, readU64Clamped } from "./bytes.js";

export interface BatchHeader {
  partitionId: bigint;
  baseOffset: bigint;
  baseTimestamp: bigint;
  originTimestamp: bigint;
  /**
   * Header + blob, in bytes; ≤ MAX_BATCH_BYTES once decoded, or (an oversized
   * batch, docs/format.md §2.2) ≤ the file size; Infinity for a u64 past 2^53.
   */
  batchLength: number;
  batchChecksum: bigint;
  messageCount: number;
}

/**
 * Why a batch is not believed. Order matters: it is the order in which the
 * checks of docs/format.md §2.1 run, and both engines report the first that fails.
 */
export enum VerifyStatus {
  Ok = 0,
  /** Fewer than 256 bytes remain in the file at this position. */
  HeaderBeyondFile = 1,
  LengthBelowHeader = 2,
  LengthOverCap = 3,
  ReservedNonZero = 4,
  /** position + batch_length > file size. */
  BatchBeyondFile = 5,
  /** More frames than message_count, or fewer when the blob ends. */
  FrameCountMismatch = 6,
  /** A frame header does not fit in what remains of the blob. */
  FrameHeaderOverrun = 7,
  FrameReservedNonZero = 8,
  /** A frame ends past the blob end. */
  FrameOverrun = 9,
  FrameChecksum = 10,
  BatchChecksum = 11,
}

export const VERIFY_STATUS_NAMES: Record<VerifyStatus, string> = {
  [VerifyStatus.Ok]: "ok",
  [VerifyStatus.HeaderBeyondFile]: "header-beyond-file",
  [VerifyStatus.LengthBelowHeader]: "length-below-header",
  [VerifyStatus.LengthOverCap]: "length-over-cap",
  [VerifyStatus.ReservedNonZero]: "reserved-nonzero",
  [VerifyStatus.BatchBeyondFile]: "batch-beyond-file",
  [VerifyStatus.FrameCountMismatch]: "frame-count-mismatch",
  [VerifyStatus.FrameHeaderOverrun]: "frame-header-overrun",
  [VerifyStatus.FrameReservedNonZero]: "frame-reserved-nonzero",
  [VerifyStatus.FrameOverrun]: "frame-overrun",
  [VerifyStatus.FrameChecksum]: "frame-checksum",
  [VerifyStatus.BatchChecksum]: "batch-checksum",
};

/**
 * The header decode gate of docs/format.md §1.2, in the order the engines apply it:
 * length floor, length cap (one comparison, before anything is read or sized
 * from it), then the 204 reserved bytes. `bytes` must hold ≥ 256 bytes at `at`.
 */
export function headerDecodeStatus(bytes: Uint8Array, at: number, maxBatchBytes: number = MAX_BATCH_BYTES): VerifyStatus {
  const batchLength = readU64Clamped(bytes, at + BATCH_LENGTH_AT);
  if (batchLength < BATCH_HEADER_BYTES) return VerifyStatus.LengthBelowHeader;
  if (batchLength > maxBatchBytes) return VerifyStatus.LengthOverCap;
  for (let i = at + BATCH_RESERVED_START; i < at + BATCH_HEADER_BYTES; i++) {
    if (bytes[i] !== 0) return VerifyStatus.ReservedNonZero;
  }
  return VerifyStatus.Ok;
}

/** Reads the header fields; call only after `headerDecodeStatus` said Ok. */
export function readBatchHeader(bytes: Uint8Array, at: number): BatchHeader {
  return {
    partitionId: readU64(bytes, at + BATCH_PARTITION_ID_AT),
    baseOffset: readU64(bytes, at + BATCH_BASE_OFFSET_AT),
    baseTimestamp: readU64(bytes, at + BATCH_BASE_TIMESTAMP_AT),
    originTimestamp: readU64(bytes, at + BATCH_ORIGIN_TIMESTAMP_AT),
    batchLength: readU64Clamped(bytes, at + BATCH_LENGTH_AT),
    batchChecksum: readU64(bytes, at + BATCH_CHECKSUM_AT),
    messageCount: readU32(bytes, at + BATCH_MESSAGE_COUNT_AT),
  };
}

export interface FrameHeader {
  checksum: bigint;
  /** u128 message id. */
  id: bigint;
  offsetDelta: number;
  timestampDelta: number;
  userHeadersLength: number;
  payloadLength: number;
  reserved: bigint;
  /** 48 + payload + user headers. */
  frameBytes: number;
}

export function readFrameHeader(bytes: Uint8Array, at: number): FrameHeader {
  const userHeadersLength = readU32(bytes, at + FRAME_USER_HEADERS_LENGTH_AT);
  const payloadLength = readU32(bytes, at + FRAME_PAYLOAD_LENGTH_AT);
  return {
    checksum: readU64(bytes, at + FRAME_CHECKSUM_AT),
    id: readU128(bytes, at + FRAME_ID_AT),
    offsetDelta: readU32(bytes, at + FRAME_OFFSET_DELTA_AT),
    timestampDelta: readU32(bytes, at + FRAME_TIMESTAMP_DELTA_AT),
    userHeadersLength,
    payloadLength,
    reserved: readU64(bytes, at + FRAME_RESERVED_AT),
    frameBytes: FRAME_HEADER_BYTES + payloadLength + userHeadersLength,
  };
}

export interface IndexEntry {
  offset: bigint;
  timestamp: bigint;
  /** Byte position of the chunk's first batch in the .log (u64 on disk). */
  position: bigint;
}

export function readIndexEntry(bytes: Uint8Array, at: number): IndexEntry {
  return {
    offset: readU64(bytes, at),
    timestamp: readU64(bytes, at + 8),
    position: readU64(bytes, at + 16),
  };
}

/** Whole entries of an index file image; a trailing partial entry is a torn write (docs/format.md §1.5). */
export function readIndexEntries(indexBytes: Uint8Array): { entries: IndexEntry[]; trailingBytes: number } {
  const whole = Math.floor(indexBytes.length / INDEX_ENTRY_BYTES);
  const entries: IndexEntry[] = [];
  for (let i = 0; i < whole; i++) entries.push(readIndexEntry(indexBytes, i * INDEX_ENTRY_BYTES));
  return { entries, trailingBytes: indexBytes.length - whole * INDEX_ENTRY_BYTES };
}
