/**
 * The decoder behind `segscan dump` of a segment `.log` (docs/interfaces.md §9.2): batch
 * after batch through the recovery walk's own BatchIterator (./batches.ts), so dump and
 * scan cannot disagree about where a batch starts or whether it verifies; with
 * `messages`, each batch's frames (docs/format.md §1.3), user headers decoded (Iggy's
 * layout, src/format/user-headers.ts). Batches and frames larger than the window stream
 * through it. Listing stops at the first header that does not decode, or that claims
 * more bytes than remain: nothing after it can be located. Presentation is the caller's.
 */
import { assert } from "../assert.js";
import { BATCH_HEADER_BYTES, FRAME_CHECKSUMMED_FROM, FRAME_HEADER_BYTES } from "../format/constants.js";
import { type BatchHeader, VERIFY_STATUS_NAMES, VerifyStatus, readFrameHeader } from "../format/records.js";
import { type UserHeaderKind, decodeUserHeaders, formatUserHeaderField } from "../format/user-headers.js";
import type { FileWindow } from "../engine/file-window.js";
import type { Engine } from "../engine/types.js";
import { abortError } from "../io/errors.js";
import { BatchIterator } from "./batches.js";

/** One decoded user header: each side's Iggy kind and its value as text (strings JSON-quoted, numbers decimal, raw hex). */
export interface DumpUserHeader {
  keyKind: UserHeaderKind;
  key: string;
  valueKind: UserHeaderKind;
  value: string;
}

export interface DumpFrame {
  position: number;
  offset: bigint;
  /** Iggy's message timestamp: the batch's base timestamp. */
  timestamp: bigint;
  /** Iggy's message origin timestamp: the batch's origin timestamp + the frame's timestamp delta. */
  originTimestamp: bigint;
  id: bigint;
  payloadLength: number;
  userHeadersLength: number;
  frameBytes: number;
  checksum: "ok" | "mismatch" | "reserved-nonzero" | "overrun";
  preview: string;
  /** Decoded when the frame's block is whole; `userHeadersProblem` says why decoding stopped. */
  userHeaders: DumpUserHeader[];
  userHeadersProblem?: string;
}

export interface DumpBatch {
  position: number;
  header: BatchHeader;
  verify: string;
  frames?: DumpFrame[];
  /** Frames not listed after a frame that overruns the blob. */
  framesStopped?: string;
}

/** Why a listing stopped before the file's end: what lies at `position`. */
export type SegmentDumpStop =
  /** Fewer bytes than a batch header remain. */
  | { kind: "trailing-bytes"; position: number; bytes: number }
  /** A header that does not decode (`status`): `bytes` from here are not listed. */
  | { kind: "undecodable"; position: number; bytes: number; status: VerifyStatus }
  /** A listed batch claims more bytes than remain. */
  | { kind: "beyond-file"; position: number; claimedBytes: number; remainingBytes: number };

export interface SegmentDumpCounts {
  batches: number;
  verified: number;
  stopped: SegmentDumpStop | null;
}

export interface SegmentDumpOptions {
  /** List each batch's frames too. */
  messages: boolean;
  engine: Engine;
  signal?: AbortSignal | undefined;
}

/** Payload bytes shown per message: one terminal line's worth. */
const PREVIEW_BYTES = 48;
/**
 * Largest user-header block dump decodes. Iggy's entries are at most
 * 2 × (5 + 255) bytes each; a block past this is listed undecoded rather than
 * copied into memory whole (its length comes from an unverified frame header).
 */
const MAX_DECODED_USER_HEADERS_BYTES = 1024 * 1024;

/**
 * Every batch of the file `window` reads, in order, handed to `onBatch` as it is
 * decoded (memory stays one window and one batch's frames); returns the counts and
 * where listing stopped.
 */
export async function dumpSegmentBatches(
  window: FileWindow,
  options: SegmentDumpOptions,
  onBatch: (batch: DumpBatch) => Promise<void>,
): Promise<SegmentDumpCounts> {
  const counts: SegmentDumpCounts = { batches: 0, verified: 0, stopped: null };
  const size = window.fileSize;
  const batches = new BatchIterator(window, 0);
  for (;;) {
    if (options.signal?.aborted) throw abortError(options.signal);
    const next = await batches.next();
    if (next === null) break;
    const { position, check } = next;
    if (check.header === null) {
      const status = check.verified ? VerifyStatus.Ok : check.status;
      counts.stopped =
        status === VerifyStatus.HeaderBeyondFile
          ? { kind: "trailing-bytes", position, bytes: size - position }
          : { kind: "undecodable", position, bytes: size - position, status };
      break;
    }
    const { header } = check;
    const beyondFile = header.batchLength > size - position;
    const batch: DumpBatch = { position, header, verify: VERIFY_STATUS_NAMES[check.verified ? VerifyStatus.Ok : check.status] };
    if (check.verified) counts.verified++;
    if (options.messages && !beyondFile) Object.assign(batch, await listFrames(window, options.engine, position, header));
    counts.batches++;
    await onBatch(batch);
    if (beyondFile) {
      counts.stopped = { kind: "beyond-file", position, claimedBytes: header.batchLength, remainingBytes: size - position };
      break;
    }
  }
  return counts;
}

/** Printable preview of a payload: UTF-8-ish text with control bytes escaped. */
function preview(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) {
    if (byte >= 0x20 && byte < 0x7f && byte !== 0x5c) out += String.fromCharCode(byte);
    else if (byte === 0x5c) out += "\\\\";
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

/** Copies `[position, position + lengthBytes)` out of the window, a window-load at a time. */
async function copyBytes(window: FileWindow, position: number, lengthBytes: number): Promise<Uint8Array> {
  const out = new Uint8Array(lengthBytes);
  await window.forEachChunk(position, lengthBytes, (chunk, doneBytes) => out.set(chunk, doneBytes));
  return out;
}

/** Hashes `[from, to)` through the window (frames larger than the window stream). */
async function hashRange(window: FileWindow, engine: Engine, from: number, to: number): Promise<bigint> {
  const hasher = engine.createHasher();
  await window.forEachChunk(from, to - from, (chunk) => hasher.update(chunk));
  return hasher.digest();
}

async function userHeadersOf(
  window: FileWindow,
  at: number,
  lengthBytes: number,
): Promise<Pick<DumpFrame, "userHeaders" | "userHeadersProblem">> {
  if (lengthBytes === 0) return { userHeaders: [] };
  if (lengthBytes > MAX_DECODED_USER_HEADERS_BYTES) {
    return { userHeaders: [], userHeadersProblem: `${lengthBytes} bytes: over the ${MAX_DECODED_USER_HEADERS_BYTES} dump decodes` };
  }
  const decoded = decodeUserHeaders(await copyBytes(window, at, lengthBytes));
  const userHeaders = decoded.entries.map(({ key, value }) => ({
    keyKind: key.kind,
    key: formatUserHeaderField(key),
    valueKind: value.kind,
    value: formatUserHeaderField(value),
  }));
  return decoded.ok ? { userHeaders } : { userHeaders, userHeadersProblem: decoded.problem };
}

/** Lists the frames of a batch whose blob lies inside the file. */
async function listFrames(
  window: FileWindow,
  engine: Engine,
  position: number,
  header: BatchHeader,
): Promise<Pick<DumpBatch, "frames" | "framesStopped">> {
  const frames: DumpFrame[] = [];
  const blobEnd = position + header.batchLength;
  assert(blobEnd <= window.fileSize, "frames are listed only for a batch inside the file");
  for (let at = position + BATCH_HEADER_BYTES; at < blobEnd; ) {
    if (at + FRAME_HEADER_BYTES > blobEnd) {
      return { frames, framesStopped: `${blobEnd - at} bytes left at ${at}: too short for a frame header` };
    }
    const frame = await frameAt(window, engine, header, at, blobEnd);
    frames.push(frame);
    if (frame.checksum === "overrun") {
      return { frames, framesStopped: `the frame at ${at} claims ${frame.frameBytes} bytes, past the blob end ${blobEnd}` };
    }
    at += frame.frameBytes;
  }
  return { frames };
}

/** The frame whose header is at `at`, inside a blob that ends at `blobEnd`. */
async function frameAt(window: FileWindow, engine: Engine, header: BatchHeader, at: number, blobEnd: number): Promise<DumpFrame> {
  const frameOffset = await window.ensure(at, FRAME_HEADER_BYTES);
  const frame = readFrameHeader(window.engineWindow.view(), frameOffset);
  const end = at + frame.frameBytes;
  let checksum: DumpFrame["checksum"];
  if (end > blobEnd) checksum = "overrun";
  else if (frame.reserved !== 0n) checksum = "reserved-nonzero";
  else checksum = (await hashRange(window, engine, at + FRAME_CHECKSUMMED_FROM, end)) === frame.checksum ? "ok" : "mismatch";
  const payloadAt = at + FRAME_HEADER_BYTES;
  const previewBytes = Math.max(0, Math.min(frame.payloadLength, PREVIEW_BYTES, blobEnd - payloadAt));
  const headersAt = payloadAt + frame.payloadLength;
  return {
    position: at,
    offset: header.baseOffset + BigInt(frame.offsetDelta),
    timestamp: header.baseTimestamp,
    originTimestamp: header.originTimestamp + BigInt(frame.timestampDelta),
    id: frame.id,
    payloadLength: frame.payloadLength,
    userHeadersLength: frame.userHeadersLength,
    frameBytes: frame.frameBytes,
    checksum,
    preview: preview(await copyBytes(window, payloadAt, previewBytes)) + (frame.payloadLength > previewBytes ? "…" : ""),
    ...(checksum === "overrun"
      ? { userHeaders: [], userHeadersProblem: "the frame overruns the blob" }
      : await userHeadersOf(window, headersAt, frame.userHeadersLength)),
  };
}
