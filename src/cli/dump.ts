/**
 * `segscan dump <file.log>`: one line per batch (position, base offset, count,
 * timestamps, length, verify result), in the spirit of kafka-dump-log; with
 * `--messages`, one line per frame, user headers decoded. The batches and frames
 * come from src/recovery/segment-dump.ts, which reads them through the recovery
 * walk's own batch iterator (docs/format.md §2.1), so dump and scan cannot disagree
 * about a batch; this file only prints them. Listing stops at the first header that
 * does not decode (nothing after it can be located), and says so.
 * A `.index` file lists its entries instead; a node's metadata/journal.wal
 * its entries and metadata/snapshot.bin its trailer, header and counts
 * (read by src/node, printed by src/report/metadata-dump.ts). Any other file is
 * a usage error, never listed as segment damage.
 */
import { hex64 } from "../format/bytes.js";
import { basename } from "node:path";
import { INDEX_ENTRY_BYTES, INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import { VERIFY_STATUS_NAMES } from "../format/records.js";
import type { Engine } from "../engine/types.js";
import { nodeScanFs } from "../io/fs.js";
import { FileWindow } from "../engine/file-window.js";
import { readIndexEntriesStreaming } from "../recovery/index-file.js";
import { type DumpBatch, type DumpFrame, type SegmentDumpStop, dumpSegmentBatches } from "../recovery/segment-dump.js";
import { stringifyJson } from "../report/json.js";
import { formatBytes, formatCount, type Colors } from "../report/format.js";
import { escapeControl } from "../report/terminal-safe.js";
import { isoMicros } from "../report/units.js";
import { type WalDumpResult, dumpWal } from "../node/wal/dump.js";
import { type SnapshotInspection, inspectSnapshot } from "../node/snapshot.js";
import {
  snapshotText,
  snapshotToJson,
  walEntryLine,
  walEntryToJson,
  walJsonClosing,
  walJsonOpening,
  walTextClosing,
  walTextOpening,
} from "../report/metadata-dump.js";

export interface DumpOptions {
  messages: boolean;
  json: boolean;
  engine: Engine;
  windowBytes: number;
  color: Colors;
  write: (text: string) => Promise<void>;
  signal?: AbortSignal;
}

function batchLine(batch: DumpBatch, c: Colors): string {
  const h = batch.header;
  const verify = batch.verify === "ok" ? c.green("ok") : c.red(batch.verify);
  const last = h.messageCount > 0 ? (h.baseOffset + BigInt(h.messageCount) - 1n).toString() : "-";
  return (
    `position: ${batch.position} baseOffset: ${h.baseOffset} lastOffset: ${last} count: ${h.messageCount} ` +
    `baseTimestamp: ${h.baseTimestamp}${isoMicros(h.baseTimestamp) ? ` (${isoMicros(h.baseTimestamp)})` : ""} originTimestamp: ${h.originTimestamp} ` +
    `length: ${h.batchLength} partitionId: ${h.partitionId} checksum: 0x${hex64(h.batchChecksum)} verify: ${verify}`
  );
}

/** `key=value` pairs; a kind other than string is named before its value (`attempt=uint32:3`). */
function userHeadersText(frame: DumpFrame, c: Colors): string {
  const side = (kind: string, text: string): string => (kind === "string" ? text : `${kind}:${text}`);
  // A header string is the producer's bytes: its control characters (JSON.stringify leaves DEL and C1) are shown escaped.
  const pairs = frame.userHeaders.map((entry) => escapeControl(`${side(entry.keyKind, entry.key)}=${side(entry.valueKind, entry.value)}`));
  if (frame.userHeadersProblem !== undefined) pairs.push(c.red(`<undecodable: ${frame.userHeadersProblem}>`));
  return pairs.length === 0 ? "" : ` {${pairs.join(", ")}}`;
}

function frameLine(frame: DumpFrame, c: Colors): string {
  const checksum = frame.checksum === "ok" ? c.green("ok") : c.red(frame.checksum);
  return (
    `| offset: ${frame.offset} position: ${frame.position} timestamp: ${frame.timestamp} originTimestamp: ${frame.originTimestamp} ` +
    `id: 0x${frame.id.toString(16).padStart(32, "0")} size: ${frame.frameBytes} payload: ${frame.payloadLength} ` +
    `headers: ${frame.userHeadersLength}${userHeadersText(frame, c)} checksum: ${checksum} ${c.dim(frame.preview)}`
  );
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
    checksum: `0x${hex64(h.batchChecksum)}`,
    verify: batch.verify,
  };
  if (batch.frames) {
    out.messages = batch.frames.map((frame) => ({
      position: frame.position,
      offset: frame.offset.toString(),
      timestamp: frame.timestamp.toString(),
      originTimestamp: frame.originTimestamp.toString(),
      id: `0x${frame.id.toString(16).padStart(32, "0")}`,
      frameBytes: frame.frameBytes,
      payloadLength: frame.payloadLength,
      userHeadersLength: frame.userHeadersLength,
      userHeaders: frame.userHeaders,
      ...(frame.userHeadersProblem === undefined ? {} : { userHeadersProblem: frame.userHeadersProblem }),
      checksum: frame.checksum,
    }));
    if (batch.framesStopped) out.messagesStopped = batch.framesStopped;
  }
  return out;
}

export interface DumpResult {
  size: number;
  batches: number;
  verified: number;
  /** Why listing stopped before the file end, or null when the batches tile the whole file. */
  stopped: { position: number; reason: string } | null;
}

/** Why listing stopped, in words (the text form adds where to look next). */
function stopReason(stop: SegmentDumpStop, json: boolean): string {
  switch (stop.kind) {
    case "trailing-bytes":
      return `${stop.bytes} trailing bytes: too short for a batch header`;
    case "undecodable":
      return (
        `the header does not decode (${VERIFY_STATUS_NAMES[stop.status]}); ${formatCount(stop.bytes)} bytes from here are not listed` +
        (json ? "" : " (`segscan scan` on this file probes them for surviving batches)")
      );
    case "beyond-file":
      return `the batch claims ${formatCount(stop.claimedBytes)} bytes but only ${formatCount(stop.remainingBytes)} remain`;
  }
}

/** Dumps a `.log`; returns what it saw (the caller picks the exit status). */
export async function dumpLog(path: string, options: DumpOptions): Promise<DumpResult> {
  const { color: c, write } = options;
  const file = await nodeScanFs.open(path);
  const result: DumpResult = { size: 0, batches: 0, verified: 0, stopped: null };
  let engineWindow = null;
  let first = true;
  try {
    result.size = (await nodeScanFs.stat(path)).size;
    engineWindow = options.engine.openWindow(options.windowBytes);
    const window = new FileWindow(file, path, result.size, engineWindow, { signal: options.signal });
    await write(
      options.json
        ? segmentJsonOpening(path, result.size, options.engine.kind)
        : segmentTextOpening(path, result.size, options.engine.kind),
    );
    const counts = await dumpSegmentBatches(window, options, async (batch) => {
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
    });
    result.batches = counts.batches;
    result.verified = counts.verified;
    result.stopped =
      counts.stopped === null ? null : { position: counts.stopped.position, reason: stopReason(counts.stopped, options.json) };
  } finally {
    engineWindow?.close();
    await file.close();
  }
  await write(options.json ? segmentJsonClosing(result, first) : segmentTextClosing(result, c));
  return result;
}

function segmentJsonOpening(path: string, size: number, engine: string): string {
  return `{\n  "kind": "segment",\n  "file": ${JSON.stringify(path)},\n  "size": ${size},\n  "engine": ${JSON.stringify(engine)},\n  "batches": [`;
}

function segmentTextOpening(path: string, size: number, engine: string): string {
  return `Dumping ${escapeControl(path)} (${formatCount(size)} bytes, engine ${engine})\n`;
}

/** `noBatch`: no batch was written, so the array closes on the same line. */
function segmentJsonClosing(result: DumpResult, noBatch: boolean): string {
  const stopped = result.stopped === null ? "null" : stringifyJson(result.stopped, 0);
  return `${noBatch ? "" : "\n  "}],\n  "verified": ${result.verified},\n  "stopped": ${stopped}\n}\n`;
}

function segmentTextClosing(result: DumpResult, c: Colors): string {
  const failed = result.batches - result.verified;
  const summary =
    `${result.batches} batch${result.batches === 1 ? "" : "es"}, ${result.verified} verified, ` +
    (failed > 0 ? c.red(`${failed} failed to verify`) + ", " : "") +
    formatBytes(result.size);
  if (result.stopped === null) return summary + "\n";
  return c.yellow(`listing stopped at byte ${formatCount(result.stopped.position)}: ${result.stopped.reason}`) + "\n" + summary + "\n";
}

/** Index entries printed per write: keeps writes few and the text held small. */
const INDEX_DUMP_CHUNK_ENTRIES = 4096;

/** Dumps a `.index`: one line per whole entry (read by the scan's own index reader), and any trailing partial entry. */
export async function dumpIndex(
  path: string,
  options: Pick<DumpOptions, "json" | "write" | "color">,
): Promise<{ entries: number; trailingBytes: number }> {
  const size = (await nodeScanFs.stat(path)).size;
  const whole = Math.floor(size / INDEX_ENTRY_BYTES);
  const trailingBytes = size - whole * INDEX_ENTRY_BYTES;
  const entries: { offset: string; timestamp: string; position: string }[] = [];
  if (!options.json) await options.write(`Dumping ${escapeControl(path)} (${formatCount(size)} bytes, ${whole} entries)\n`);
  let text = "";
  let index = 0;
  for await (const entry of readIndexEntriesStreaming(nodeScanFs, path, size)) {
    if (options.json) {
      entries.push({ offset: entry.offset.toString(), timestamp: entry.timestamp.toString(), position: entry.position.toString() });
    } else {
      text += `entry: ${index} offset: ${entry.offset} timestamp: ${entry.timestamp} position: ${entry.position}\n`;
      if ((index + 1) % INDEX_DUMP_CHUNK_ENTRIES === 0 || index + 1 === whole) {
        await options.write(text);
        text = "";
      }
    }
    index++;
  }
  if (options.json) {
    await options.write(stringifyJson({ kind: "index", file: path, size, entries, trailingBytes }) + "\n");
  } else if (trailingBytes > 0) {
    await options.write(options.color.yellow(`${trailingBytes} trailing bytes: a partial entry (torn index write)`) + "\n");
  }
  return { entries: whole, trailingBytes };
}

/** What `segscan dump` reads a file as, by its name (docs/interfaces.md §9.2); null: none of them. */
export type DumpKind = "segment" | "index" | "wal" | "snapshot";

/** The metadata WAL and snapshot by their names in a node's metadata/ (a `.tmp` is the same format mid-rewrite, docs/node.md N1, N2). */
const WAL_NAMES = new Set(["journal.wal", "journal.wal.tmp"]);
const SNAPSHOT_NAMES = new Set(["snapshot.bin", "snapshot.bin.tmp"]);

export function dumpKindOf(path: string): DumpKind | null {
  const name = basename(path);
  if (name.endsWith(INDEX_SUFFIX)) return "index";
  if (name.endsWith(LOG_SUFFIX)) return "segment";
  if (WAL_NAMES.has(name)) return "wal";
  if (SNAPSHOT_NAMES.has(name)) return "snapshot";
  return null;
}

/** The usage error's words for a file dump does not read: what it is not, and what dump takes. */
export function notASegmentText(path: string): string {
  return (
    `${path} is not a segment (a .log or its .index), nor a node's metadata/journal.wal or metadata/snapshot.bin: ` +
    "dump reads only those, by name, so it does not list other bytes as segment damage; nothing was read"
  );
}

/** Dumps the metadata WAL: one line (or JSON object) per entry, read by the scan's own reader; returns what it saw. */
export async function dumpWalFile(path: string, options: DumpOptions): Promise<WalDumpResult> {
  const { color: c, write } = options;
  const size = (await nodeScanFs.stat(path)).size;
  let anyEntry = false;
  await write(options.json ? walJsonOpening(path, size, options.engine.kind) : walTextOpening(path, size, options.engine.kind));
  const result = await dumpWal(path, {
    engine: options.engine,
    scanFs: nodeScanFs,
    windowBytes: options.windowBytes,
    signal: options.signal,
    onEntry: async (entry) => {
      if (options.json) {
        await write(`${anyEntry ? "," : ""}\n    ${stringifyJson(walEntryToJson(entry), 0)}`);
      } else {
        await write(`${walEntryLine(entry, c)}\n`);
      }
      anyEntry = true;
    },
  });
  await write(options.json ? walJsonClosing(result, anyEntry) : walTextClosing(result, c));
  return result;
}

/** Dumps the metadata snapshot: trailer, root fields, counts and the scan's findings; returns the inspection. */
export async function dumpSnapshotFile(
  path: string,
  options: Pick<DumpOptions, "json" | "write" | "color" | "engine">,
): Promise<SnapshotInspection> {
  const inspection = await inspectSnapshot(path, nodeScanFs, options.engine);
  await options.write(
    options.json
      ? `${stringifyJson(snapshotToJson(path, options.engine.kind, inspection))}\n`
      : snapshotText(path, options.engine.kind, inspection, options.color),
  );
  return inspection;
}
