/**
 * Builds valid records (docs/format.md §1.2–1.5) with both checksums. Tests, the sample
 * generator and repair's index rewrite all encode through here.
 */
import {
  BATCH_BASE_OFFSET_AT,
  SEGMENT_NAME_DIGITS,
  BATCH_BASE_TIMESTAMP_AT,
  BATCH_CHECKSUM_AT,
  BATCH_CHECKSUM_PREFIX_BYTES,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  BATCH_ORIGIN_TIMESTAMP_AT,
  BATCH_PARTITION_ID_AT,
  FRAME_CHECKSUMMED_FROM,
  FRAME_HEADER_BYTES,
  FRAME_ID_AT,
  FRAME_OFFSET_DELTA_AT,
  FRAME_PAYLOAD_LENGTH_AT,
  FRAME_TIMESTAMP_DELTA_AT,
  FRAME_USER_HEADERS_LENGTH_AT,
  INDEX_ENTRY_BYTES,
} from "./constants.js";
import { writeU32, writeU64 } from "./bytes.js";
import type { IndexEntry } from "./records.js";
import { xxh3_64 } from "../hash/xxh3.js";

export interface MessageInput {
  /** u128 message id; defaults to 0. */
  id?: bigint;
  /** Defaults to the message's index in its batch. */
  offsetDelta?: number;
  /** µs after the batch's origin timestamp; defaults to 0. */
  timestampDelta?: number;
  payload: Uint8Array;
  userHeaders?: Uint8Array;
}

export interface BatchInput {
  partitionId?: bigint;
  baseOffset: bigint;
  baseTimestamp: bigint;
  /** Defaults to baseTimestamp. */
  originTimestamp?: bigint;
  messages: readonly MessageInput[];
}

export function frameBytes(message: MessageInput): number {
  return FRAME_HEADER_BYTES + message.payload.length + (message.userHeaders?.length ?? 0);
}

/** Writes one frame at `at` in `target`, checksum included. Returns the frame's size. */
function writeFrame(target: Uint8Array, at: number, message: MessageInput, indexInBatch: number): number {
  const userHeaders = message.userHeaders ?? new Uint8Array(0);
  const size = frameBytes(message);
  const id = BigInt.asUintN(128, message.id ?? 0n);
  writeU64(target, at + FRAME_ID_AT, id & 0xffffffffffffffffn);
  writeU64(target, at + FRAME_ID_AT + 8, id >> 64n);
  writeU32(target, at + FRAME_OFFSET_DELTA_AT, message.offsetDelta ?? indexInBatch);
  writeU32(target, at + FRAME_TIMESTAMP_DELTA_AT, message.timestampDelta ?? 0);
  writeU32(target, at + FRAME_USER_HEADERS_LENGTH_AT, userHeaders.length);
  writeU32(target, at + FRAME_PAYLOAD_LENGTH_AT, message.payload.length);
  // Reserved u64 at 40..48 stays zero (fresh buffer).
  target.set(message.payload, at + FRAME_HEADER_BYTES);
  target.set(userHeaders, at + FRAME_HEADER_BYTES + message.payload.length);
  writeU64(target, at, xxh3_64(target.subarray(at + FRAME_CHECKSUMMED_FROM, at + size)));
  return size;
}

/** One whole batch record: header (both checksums) + frames. */
export function encodeBatch(input: BatchInput): Uint8Array {
  const blobBytes = input.messages.reduce((sum, message) => sum + frameBytes(message), 0);
  const batchLength = BATCH_HEADER_BYTES + blobBytes;
  const batch = new Uint8Array(batchLength);
  writeU64(batch, BATCH_PARTITION_ID_AT, input.partitionId ?? 0n);
  writeU64(batch, BATCH_BASE_OFFSET_AT, input.baseOffset);
  writeU64(batch, BATCH_BASE_TIMESTAMP_AT, input.baseTimestamp);
  writeU64(batch, BATCH_ORIGIN_TIMESTAMP_AT, input.originTimestamp ?? input.baseTimestamp);
  writeU64(batch, BATCH_LENGTH_AT, BigInt(batchLength));
  writeU32(batch, BATCH_MESSAGE_COUNT_AT, input.messages.length);

  const checksummed = new Uint8Array(BATCH_CHECKSUM_PREFIX_BYTES + 8 * input.messages.length);
  checksummed.set(batch.subarray(0, BATCH_LENGTH_AT + 8), 0);
  checksummed.set(batch.subarray(BATCH_MESSAGE_COUNT_AT, BATCH_MESSAGE_COUNT_AT + 4), BATCH_LENGTH_AT + 8);
  let at = BATCH_HEADER_BYTES;
  input.messages.forEach((message, i) => {
    const size = writeFrame(batch, at, message, i);
    checksummed.set(batch.subarray(at, at + 8), BATCH_CHECKSUM_PREFIX_BYTES + 8 * i);
    at += size;
  });
  writeU64(batch, BATCH_CHECKSUM_AT, xxh3_64(checksummed));
  return batch;
}

export function encodeIndexEntry(entry: IndexEntry): Uint8Array {
  const bytes = new Uint8Array(INDEX_ENTRY_BYTES);
  writeU64(bytes, 0, entry.offset);
  writeU64(bytes, 8, entry.timestamp);
  writeU64(bytes, 16, entry.position);
  return bytes;
}

export function encodeIndex(entries: readonly IndexEntry[]): Uint8Array {
  const bytes = new Uint8Array(entries.length * INDEX_ENTRY_BYTES);
  entries.forEach((entry, i) => {
    bytes.set(encodeIndexEntry(entry), i * INDEX_ENTRY_BYTES);
  });
  return bytes;
}

/** Segment file stem: the start offset zero-padded to 20 digits (docs/format.md §1.1). */
export function segmentStem(startOffset: bigint): string {
  return startOffset.toString().padStart(SEGMENT_NAME_DIGITS, "0");
}
