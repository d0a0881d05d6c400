/**
 * docs/format.md §2.1: does a batch verify at a file position? Streams batches larger
 * than the window, including oversized ones (docs/format.md §2.2): a header that decodes
 * except that batch_length exceeds `maxBatchBytes` and that fits the file.
 */
import { BATCH_HEADER_BYTES, BATCH_RESERVED_BYTES, BATCH_RESERVED_START } from "../format/constants.js";
import { type BatchHeader, VerifyStatus, readBatchHeader } from "../format/records.js";
import type { FileWindow } from "../engine/file-window.js";

export type BatchCheck =
  /** `oversized`: batch_length > the window's `maxBatchBytes` (docs/format.md §2.2): accepted, with a warning. */
  { verified: true; header: BatchHeader; oversized: boolean } | { verified: false; status: VerifyStatus; header: BatchHeader | null };

export async function verifyBatchAt(window: FileWindow, position: number): Promise<BatchCheck> {
  const resident = verifyResidentBatch(window, position);
  if (resident) return resident;
  const kernels = window.engineWindow;
  const headerIndex = await window.ensure(position, BATCH_HEADER_BYTES);
  const gate = checkHeader(window, headerIndex, position);
  if (!("batchLength" in gate)) return gate;
  // Nothing is sized from the header: a batch larger than the window (an
  // oversized one always is, by default) passes through it in chunks.
  const status =
    gate.batchLength <= window.capacityBytes
      ? kernels.verifyInWindow(await window.ensure(position, gate.batchLength))
      : await streamVerify(window, position, headerIndex, gate.batchLength);
  return checked(window, gate, status);
}

function checked(window: FileWindow, header: BatchHeader, status: VerifyStatus): BatchCheck {
  return status === VerifyStatus.Ok
    ? { verified: true, header, oversized: header.batchLength > window.engineWindow.limits.maxBatchBytes }
    : { verified: false, status, header };
}

/**
 * The common case without a single await: header and whole batch already in
 * the window. `null` when a read is needed (the caller takes the async path).
 */
export function verifyResidentBatch(window: FileWindow, position: number): BatchCheck | null {
  if (window.fileSize - position < BATCH_HEADER_BYTES) {
    return { verified: false, status: VerifyStatus.HeaderBeyondFile, header: null };
  }
  const index = window.residentOffset(position, BATCH_HEADER_BYTES);
  if (index < 0) return null;
  const gate = checkHeader(window, index, position);
  if (!("batchLength" in gate)) return gate;
  if (window.residentOffset(position, gate.batchLength) < 0) return null;
  return checked(window, gate, window.engineWindow.verifyInWindow(index));
}

/**
 * docs/format.md §2.1 step 1 on a resident header: the decoded header, or why it is not
 * believed. A length over the cap (LengthOverCap) is an oversized batch when it
 * fits the file (one comparison, before anything else is read) and the reserved
 * bytes are zero (docs/format.md §2.2); otherwise it stays LengthOverCap / ReservedNonZero.
 */
function checkHeader(window: FileWindow, index: number, position: number): BatchHeader | BatchCheck {
  const kernels = window.engineWindow;
  const headerStatus = kernels.headerStatus(index);
  if (headerStatus === VerifyStatus.LengthOverCap) {
    const header = readBatchHeader(kernels.view(), index);
    if (header.batchLength > window.fileSize - position) return { verified: false, status: headerStatus, header: null };
    const reservedStart = index + BATCH_RESERVED_START;
    if (kernels.firstNonZero(reservedStart, BATCH_RESERVED_BYTES) !== reservedStart + BATCH_RESERVED_BYTES) {
      return { verified: false, status: VerifyStatus.ReservedNonZero, header: null };
    }
    return header;
  }
  if (headerStatus !== VerifyStatus.Ok) return { verified: false, status: headerStatus, header: null };
  const header = readBatchHeader(kernels.view(), index);
  if (header.batchLength > window.fileSize - position) {
    return { verified: false, status: VerifyStatus.BatchBeyondFile, header };
  }
  return header;
}

/** A batch larger than the window passes through it in window-sized chunks (memory stays bounded). */
async function streamVerify(window: FileWindow, position: number, headerIndex: number, batchLength: number): Promise<VerifyStatus> {
  const kernels = window.engineWindow;
  kernels.verifyStart(headerIndex);
  const batchEnd = position + batchLength;
  for (let fed = position + BATCH_HEADER_BYTES; fed < batchEnd; ) {
    const chunkBytes = Math.min(window.capacityBytes, batchEnd - fed);
    const index = await window.ensure(fed, chunkBytes);
    const status = kernels.verifyFeed(index, chunkBytes);
    if (status !== VerifyStatus.Ok) return status;
    fed += chunkBytes;
  }
  return kernels.verifyFinish();
}
