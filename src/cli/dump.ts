/**
 * `segscan dump <file.log>`: one line per batch (position, base offset, count,
 * timestamps, length, verify result), in the spirit of kafka-dump-log; with
 * `--messages`, one line per frame. Verification goes through an engine window,
 * streaming batches larger than the window. Listing stops at the first header
 * that does not decode (nothing after it can be located), and says so.
 * A `.index` file lists its entries instead.
 */
import { open, type FileHandle } from "node:fs/promises";
import {
  BATCH_HEADER_BYTES, FRAME_CHECKSUMMED_FROM, FRAME_HEADER_BYTES, INDEX_ENTRY_BYTES, INDEX_SUFFIX,
} from "../format/constants.js";
import {
  VERIFY_STATUS_NAMES, VerifyStatus, readBatchHeader, readFrameHeader, readIndexEntry, type BatchHeader,
} from "../format/records.js";
import type { Engine, EngineWindow } from "../engine/types.js";
import { stringifyJson } from "../report/json.js";
import { formatBytes, formatCount, type Colors } from "../report/format.js";

export interface DumpOptions {
  messages: boolean;
  json: boolean;
  engine: Engine;
  windowBytes: number;
  color: Colors;
  write: (text: string) => Promise<void>;
  signal?: AbortSignal;
}

export interface DumpFrame {
  position: number;
  offset: bigint;
  timestamp: bigint;
  id: bigint;
  payloadLength: number;
  userHeadersLength: number;
  frameBytes: number;
  checksum: "ok" | "mismatch" | "reserved-nonzero" | "overrun";
  preview: string;
}

export interface DumpBatch {
  position: number;
  header: BatchHeader;
  verify: string;
  frames?: DumpFrame[];
  /** Frames not listed after a frame that overruns the blob. */
  framesStopped?: string;
}

export interface DumpResult {
  size: number;
  batches: number;
  verified: number;
  /** Why listing stopped before the file end, or null when the batches tile the whole file. */
  stopped: { position: number; reason: string } | null;
}

async function readFully(handle: FileHandle, target: Uint8Array, offset: number, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(target, offset + done, length - done, position + done);
    if (bytesRead === 0) throw new Error(`short read at byte ${position + done}: the file shrank while being dumped`);
    done += bytesRead;
  }
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

const PREVIEW_BYTES = 48;

/** Verifies the batch at `position` (header already decoded in the window at 0). */
async function verifyBatch(
  handle: FileHandle, window: EngineWindow, position: number, batchLength: number,
): Promise<{ status: VerifyStatus; inWindow: boolean }> {
  const view = window.view();
  if (batchLength <= window.capacityBytes) {
    await readFully(handle, view, 0, batchLength, position);
    return { status: window.verifyInWindow(0), inWindow: true };
  }
  window.verifyStart(0);
  let done = BATCH_HEADER_BYTES;
  while (done < batchLength) {
    const length = Math.min(window.capacityBytes, batchLength - done);
    await readFully(handle, view, 0, length, position + done);
    const status = window.verifyFeed(0, length);
    if (status !== VerifyStatus.Ok) return { status, inWindow: false };
    done += length;
  }
  return { status: window.verifyFinish(), inWindow: false };
}

/** Lists the frames of a batch; the bytes come from the window when the batch is in it. */
async function listFrames(
  handle: FileHandle, engine: Engine, window: EngineWindow, inWindow: boolean, position: number, header: BatchHeader,
): Promise<{ frames: DumpFrame[]; stopped?: string }> {
  const frames: DumpFrame[] = [];
  const blobEnd = position + header.batchLength;
  const read = async (at: number, length: number): Promise<Uint8Array> => {
    if (inWindow) return window.view().subarray(at - position, at - position + length);
    const bytes = new Uint8Array(length);
    await readFully(handle, bytes, 0, length, at);
    return bytes;
  };
  let at = position + BATCH_HEADER_BYTES;
  while (at < blobEnd) {
    if (at + FRAME_HEADER_BYTES > blobEnd) return { frames, stopped: `${blobEnd - at} bytes left at ${at}: too short for a frame header` };
    const frame = readFrameHeader(await read(at, FRAME_HEADER_BYTES), 0);
    const end = at + frame.frameBytes;
    let checksum: DumpFrame["checksum"];
    if (end > blobEnd) {
      checksum = "overrun";
    } else if (frame.reserved !== 0n) {
      checksum = "reserved-nonzero";
    } else {
      const hasher = engine.createHasher();
      for (let from = at + FRAME_CHECKSUMMED_FROM; from < end; from += 1 << 20) {
        hasher.update(await read(from, Math.min(1 << 20, end - from)));
      }
      checksum = hasher.digest() === frame.checksum ? "ok" : "mismatch";
    }
    const payloadBytes = Math.max(0, Math.min(frame.payloadLength, PREVIEW_BYTES, blobEnd - at - FRAME_HEADER_BYTES));
    frames.push({
      position: at,
      offset: header.baseOffset + BigInt(frame.offsetDelta),
      timestamp: header.originTimestamp + BigInt(frame.timestampDelta),
      id: frame.id,
      payloadLength: frame.payloadLength,
      userHeadersLength: frame.userHeadersLength,
      frameBytes: frame.frameBytes,
      checksum,
      preview: preview(await read(at + FRAME_HEADER_BYTES, payloadBytes)) + (frame.payloadLength > payloadBytes ? "…" : ""),
    });
    if (checksum === "overrun") return { frames, stopped: `the frame at ${at} claims ${frame.frameBytes} bytes, past the blob end ${blobEnd}` };
    at = end;
  }
  return { frames };
}

function iso(micros: bigint): string {
  // Only for plausible µs timestamps (years 1970..9999).
  if (micros <= 0n || micros >= 253402300800000000n) return "";
  const millis = Number(micros / 1000n);
  const date = new Date(millis).toISOString();
  return date.slice(0, -1) + (micros % 1000n).toString().padStart(3, "0") + "Z";
}

function batchLine(batch: DumpBatch, c: Colors): string {
  const h = batch.header;
  const verify = batch.verify === "ok" ? c.green("ok") : c.red(batch.verify);
  const last = h.messageCount > 0 ? (h.baseOffset + BigInt(h.messageCount) - 1n).toString() : "-";
  return `position: ${batch.position} baseOffset: ${h.baseOffset} lastOffset: ${last} count: ${h.messageCount} ` +
    `baseTimestamp: ${h.baseTimestamp}${iso(h.baseTimestamp) ? ` (${iso(h.baseTimestamp)})` : ""} originTimestamp: ${h.originTimestamp} ` +
    `length: ${h.batchLength} partitionId: ${h.partitionId} checksum: 0x${h.batchChecksum.toString(16).padStart(16, "0")} verify: ${verify}`;
}

function frameLine(frame: DumpFrame, c: Colors): string {
  const checksum = frame.checksum === "ok" ? c.green("ok") : c.red(frame.checksum);
  return `| offset: ${frame.offset} position: ${frame.position} timestamp: ${frame.timestamp} id: 0x${frame.id.toString(16).padStart(32, "0")} ` +
    `size: ${frame.frameBytes} payload: ${frame.payloadLength} headers: ${frame.userHeadersLength} checksum: ${checksum} ${c.dim(frame.preview)}`;
}

function batchJson(batch: DumpBatch): Record<string, unknown> {
  const h = batch.header;
  const out: Record<string, unknown> = {
    position: batch.position,
    baseOffset: h.baseOffset.toString(),
    lastOffset: h.messageCount > 0 ? (h.baseOffset + BigInt(h.messageCount) - 1n).toString() : null,
    messageCount: h.messageCount,
    baseTimestamp: h.baseTimestamp.toString(),
    originTimestamp: h.originTimestamp.toString(),
    batchLength: h.batchLength,
    partitionId: h.partitionId.toString(),
    checksum: `0x${h.batchChecksum.toString(16).padStart(16, "0")}`,
    verify: batch.verify,
  };
  if (batch.frames) {
    out.messages = batch.frames.map((frame) => ({
      position: frame.position,
      offset: frame.offset.toString(),
      timestamp: frame.timestamp.toString(),
      id: `0x${frame.id.toString(16).padStart(32, "0")}`,
      frameBytes: frame.frameBytes,
      payloadLength: frame.payloadLength,
      userHeadersLength: frame.userHeadersLength,
      checksum: frame.checksum,
    }));
    if (batch.framesStopped) out.messagesStopped = batch.framesStopped;
  }
  return out;
}

/** Dumps a `.log`; returns what it saw (the caller picks the exit status). */
export async function dumpLog(path: string, options: DumpOptions): Promise<DumpResult> {
  const { color: c, write } = options;
  const handle = await open(path, "r");
  const window = options.engine.openWindow(options.windowBytes);
  const result: DumpResult = { size: 0, batches: 0, verified: 0, stopped: null };
  let first = true;
  try {
    result.size = (await handle.stat()).size;
    if (options.json) {
      await write(`{\n  "file": ${JSON.stringify(path)},\n  "size": ${result.size},\n  "engine": ${JSON.stringify(options.engine.kind)},\n  "batches": [`);
    } else {
      await write(`Dumping ${path} (${formatCount(result.size)} bytes, engine ${options.engine.kind})\n`);
    }
    let position = 0;
    while (position < result.size) {
      if (options.signal?.aborted) {
        const error = new Error("dump cancelled");
        error.name = "AbortError";
        throw error;
      }
      if (result.size - position < BATCH_HEADER_BYTES) {
        result.stopped = { position, reason: `${result.size - position} trailing bytes: too short for a batch header` };
        break;
      }
      await readFully(handle, window.view(), 0, BATCH_HEADER_BYTES, position);
      const decode = window.headerStatus(0);
      if (decode !== VerifyStatus.Ok) {
        result.stopped = {
          position,
          reason: `the header does not decode (${VERIFY_STATUS_NAMES[decode]}); ${formatCount(result.size - position)} bytes from here are not listed` +
            (options.json ? "" : " (`segscan scan` on this file probes them for surviving batches)"),
        };
        break;
      }
      const header = readBatchHeader(window.view(), 0);
      const batch: DumpBatch = { position, header, verify: "" };
      let inWindow = false;
      if (position + header.batchLength > result.size) {
        batch.verify = VERIFY_STATUS_NAMES[VerifyStatus.BatchBeyondFile];
      } else {
        const verified = await verifyBatch(handle, window, position, header.batchLength);
        batch.verify = VERIFY_STATUS_NAMES[verified.status];
        inWindow = verified.inWindow;
        if (verified.status === VerifyStatus.Ok) result.verified++;
        if (options.messages) {
          const listed = await listFrames(handle, options.engine, window, inWindow, position, header);
          batch.frames = listed.frames;
          if (listed.stopped !== undefined) batch.framesStopped = listed.stopped;
        }
      }
      result.batches++;
      if (options.json) {
        const text = stringifyJson(batchJson(batch), 2).replace(/\n/g, "\n    ");
        await write(`${first ? "" : ","}\n    ${text}`);
        first = false;
      } else {
        let text = batchLine(batch, c) + "\n";
        for (const frame of batch.frames ?? []) text += frameLine(frame, c) + "\n";
        if (batch.framesStopped) text += c.yellow(`| frames stop here: ${batch.framesStopped}`) + "\n";
        await write(text);
      }
      if (position + header.batchLength > result.size) {
        result.stopped = {
          position,
          reason: `the batch claims ${formatCount(header.batchLength)} bytes but only ${formatCount(result.size - position)} remain`,
        };
        break;
      }
      position += header.batchLength;
    }
  } finally {
    window.close();
    await handle.close();
  }
  if (options.json) {
    await write(`${first ? "" : "\n  "}],\n  "verified": ${result.verified},\n  "stopped": ${result.stopped === null ? "null" : stringifyJson(result.stopped, 0)}\n}\n`);
  } else {
    const summary = `${result.batches} batch${result.batches === 1 ? "" : "es"}, ${result.verified} verified, ${formatBytes(result.size)}`;
    if (result.stopped) {
      await write(c.yellow(`listing stopped at byte ${formatCount(result.stopped.position)}: ${result.stopped.reason}`) + "\n" + summary + "\n");
    } else {
      await write(summary + "\n");
    }
  }
  return result;
}

/** Dumps a `.index`: one line per whole entry, and any trailing partial entry. */
export async function dumpIndex(path: string, options: Pick<DumpOptions, "json" | "write" | "color">): Promise<{ entries: number; trailingBytes: number }> {
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    const whole = Math.floor(size / INDEX_ENTRY_BYTES);
    const trailingBytes = size - whole * INDEX_ENTRY_BYTES;
    const entries: { offset: string; timestamp: string; position: string }[] = [];
    const chunk = new Uint8Array(INDEX_ENTRY_BYTES * 4096);
    if (!options.json) await options.write(`Dumping ${path} (${formatCount(size)} bytes, ${whole} entries)\n`);
    for (let i = 0; i < whole; i += 4096) {
      const count = Math.min(4096, whole - i);
      await readFully(handle, chunk, 0, count * INDEX_ENTRY_BYTES, i * INDEX_ENTRY_BYTES);
      let text = "";
      for (let k = 0; k < count; k++) {
        const entry = readIndexEntry(chunk, k * INDEX_ENTRY_BYTES);
        if (options.json) entries.push({ offset: entry.offset.toString(), timestamp: entry.timestamp.toString(), position: entry.position.toString() });
        else text += `entry: ${i + k} offset: ${entry.offset} timestamp: ${entry.timestamp} position: ${entry.position}\n`;
      }
      if (!options.json) await options.write(text);
    }
    if (options.json) {
      await options.write(stringifyJson({ file: path, size, entries, trailingBytes }) + "\n");
    } else if (trailingBytes > 0) {
      await options.write(options.color.yellow(`${trailingBytes} trailing bytes: a partial entry (torn index write)`) + "\n");
    }
    return { entries: whole, trailingBytes };
  } finally {
    await handle.close();
  }
}

export function isIndexPath(path: string): boolean {
  return path.endsWith(INDEX_SUFFIX);
}
