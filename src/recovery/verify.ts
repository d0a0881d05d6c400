/** SPEC §2.1: does a batch verify at a file position? Streams batches larger than the window. */
import { BATCH_HEADER_BYTES } from "../format/constants.js";
import { type BatchHeader, VerifyStatus, readBatchHeader } from "../format/records.js";
import type { FileWindow } from "../io/window.js";

export type BatchCheck =
  | { verified: true; header: BatchHeader }
  | { verified: false; status: VerifyStatus; header: BatchHeader | null };

export async function verifyBatchAt(window: FileWindow, position: number): Promise<BatchCheck> {
  const resident = verifyResidentBatch(window, position);
  if (resident) return resident;
  const kernels = window.engineWindow;
  const headerOffset = await window.ensure(position, BATCH_HEADER_BYTES);
  const gate = checkHeader(window, headerOffset, position);
  if (!("batchLength" in gate)) return gate;
  const status = gate.batchLength <= window.capacityBytes
    ? kernels.verifyInWindow(await window.ensure(position, gate.batchLength))
    : await streamVerify(window, position, headerOffset, gate.batchLength);
  return status === VerifyStatus.Ok ? { verified: true, header: gate } : { verified: false, status, header: gate };
}

/**
 * The common case without a single await: header and whole batch already in
 * the window. `null` when a read is needed (the caller takes the async path).
 */
export function verifyResidentBatch(window: FileWindow, position: number): BatchCheck | null {
  if (window.fileSize - position < BATCH_HEADER_BYTES) {
    return { verified: false, status: VerifyStatus.HeaderBeyondFile, header: null };
  }
  const offset = window.residentOffset(position, BATCH_HEADER_BYTES);
  if (offset < 0) return null;
  const gate = checkHeader(window, offset, position);
  if (!("batchLength" in gate)) return gate;
  if (window.residentOffset(position, gate.batchLength) < 0) return null;
  const status = window.engineWindow.verifyInWindow(offset);
  return status === VerifyStatus.Ok ? { verified: true, header: gate } : { verified: false, status, header: gate };
}

/** SPEC §2.1 step 1 on a resident header: the decoded header, or why it is not believed. */
function checkHeader(window: FileWindow, offset: number, position: number): BatchHeader | BatchCheck {
  const kernels = window.engineWindow;
  const headerStatus = kernels.headerStatus(offset);
  if (headerStatus !== VerifyStatus.Ok) return { verified: false, status: headerStatus, header: null };
  const header = readBatchHeader(kernels.view(), offset);
  if (header.batchLength > window.fileSize - position) {
    return { verified: false, status: VerifyStatus.BatchBeyondFile, header };
  }
  return header;
}

/** A batch larger than the window passes through it in window-sized chunks (memory stays bounded). */
async function streamVerify(window: FileWindow, position: number, headerOffset: number, batchLength: number): Promise<VerifyStatus> {
  const kernels = window.engineWindow;
  kernels.verifyStart(headerOffset);
  const batchEnd = position + batchLength;
  for (let fed = position + BATCH_HEADER_BYTES; fed < batchEnd; ) {
    const chunkBytes = Math.min(window.capacityBytes, batchEnd - fed);
    const offset = await window.ensure(fed, chunkBytes);
    const status = kernels.verifyFeed(offset, chunkBytes);
    if (status !== VerifyStatus.Ok) return status;
    fed += chunkBytes;
  }
  return kernels.verifyFinish();
}
