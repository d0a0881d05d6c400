/**
 * The resident batch walk (docs/recovery.md §3.4, docs/engines.md §8) in TypeScript: the
 * same walk as assembly/walk.ts. It stops at the first batch that is not whole
 * in the bytes held, does not decode within the length cap, does not verify, or
 * does not carry exactly the expected offset; the caller's per-batch path takes
 * over there.
 */
import {
  BATCH_BASE_OFFSET_AT,
  BATCH_BASE_TIMESTAMP_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  U64_MAX,
} from "../../format/constants.js";
import { readU32, readU64, readU64Clamped } from "../../format/bytes.js";
import { VerifyStatus, headerDecodeStatus } from "../../format/records.js";
import type { ResidentWalkBatch, ResidentWalkRequest, ResidentWalkResult } from "../types.js";

/**
 * `verifyInWindow` verifies the batch at a window index (docs/format.md §2.1); the
 * request's indexes were checked by CheckedEngineWindow.
 */
export function walkResidentBatches(
  bytes: Uint8Array,
  maxBatchBytes: number,
  request: ResidentWalkRequest,
  verifyInWindow: (index: number) => VerifyStatus,
): ResidentWalkResult {
  const { heldEndIndex } = request;
  const batchEndIndex = Math.min(request.fileEndIndex, heldEndIndex);
  let index = request.fromIndex;
  let expectedOffset = request.expectedOffset;
  let batches = 0;
  let messages = 0;
  let firstAt = -1;
  let lastAt = -1;
  while (index < request.stopIndex && index + BATCH_HEADER_BYTES <= heldEndIndex) {
    if (headerDecodeStatus(bytes, index, maxBatchBytes) !== VerifyStatus.Ok) break;
    const batchLength = readU64Clamped(bytes, index + BATCH_LENGTH_AT);
    if (index + batchLength > batchEndIndex) break;
    if (readU64(bytes, index + BATCH_BASE_OFFSET_AT) !== expectedOffset) break;
    const messageCount = readU32(bytes, index + BATCH_MESSAGE_COUNT_AT);
    const nextOffset = expectedOffset + BigInt(messageCount);
    // base_offset + message_count past u64: the caller's (stop before the batch).
    if (nextOffset > U64_MAX) break;
    if (verifyInWindow(index) !== VerifyStatus.Ok) break;
    if (messageCount > 0) {
      if (firstAt < 0) firstAt = index;
      lastAt = index;
      expectedOffset = nextOffset;
    }
    messages += messageCount;
    batches++;
    index += batchLength;
  }
  return {
    stopIndex: index,
    batches,
    messages,
    expectedOffset,
    firstWithMessages: firstAt < 0 ? null : walkedBatch(bytes, firstAt),
    lastWithMessages: lastAt < 0 ? null : walkedBatch(bytes, lastAt),
  };
}

function walkedBatch(bytes: Uint8Array, index: number): ResidentWalkBatch {
  return {
    index,
    baseOffset: readU64(bytes, index + BATCH_BASE_OFFSET_AT),
    baseTimestamp: readU64(bytes, index + BATCH_BASE_TIMESTAMP_AT),
    messageCount: readU32(bytes, index + BATCH_MESSAGE_COUNT_AT),
  };
}
