/**
 * `segscan dump` of a node's metadata files, as text and JSON (the shapes of
 * ./dump-schema.ts): the WAL one line per entry, kafka-dump-log style
 * (docs/node.md N1), the snapshot its trailer, root fields and counts
 * (docs/node.md N2). Printing only: the entries and the snapshot are read by
 * the scan's own code (src/node/wal/dump.ts, src/node/snapshot.ts).
 */
import { dirname } from "node:path";
import { WAL_OPERATION_NAMES } from "../format/wal.js";
import type { WalDumpEntry, WalDumpResult, WalDumpStop } from "../node/wal/dump.js";
import { SNAPSHOT_MAGIC } from "../format/snapshot.js";
import type { SnapshotInspection } from "../node/snapshot.js";
import { WAL_TAIL_BYTES_WORDS } from "../policy/torn-evidence.js";
import type { JsonSnapshotDump, JsonWalDump, JsonWalDumpEntry } from "./dump-schema.js";
import type { Colors } from "./format.js";
import { findingToJson } from "./node-json.js";
import { escapeControl } from "./terminal-safe.js";
import { formatBytes, formatCount, isoMicros } from "./units.js";

const hexDigits = (value: bigint, digits: number): string => `0x${value.toString(16).padStart(digits, "0")}`;
const hex32 = (value: bigint | number): string => hexDigits(BigInt(value), 8);
const hex64 = (value: bigint): string => hexDigits(value, 16);
const hex128 = (value: bigint): string => hexDigits(value, 32);

function operationName(operation: number): string {
  return WAL_OPERATION_NAMES.get(operation) ?? "unknown";
}

// ---------------------------------------------------------------------------
// The WAL

export function walEntryToJson(entry: WalDumpEntry): JsonWalDumpEntry {
  const h = entry.header;
  return {
    position: entry.position,
    op: h.op.toString(),
    size: h.size,
    operation: h.operation,
    operationName: operationName(h.operation),
    checksum: hex128(h.checksum),
    checksumBody: hex128(h.checksumBody),
    parent: hex128(h.parent),
    cluster: hex128(h.cluster),
    commit: h.commit.toString(),
    view: h.view,
    release: h.release,
    replica: h.replica,
    timestamp: h.timestamp.toString(),
    group: hex64(h.group),
    userId: h.userId,
    verify: entry.verify,
    problem: entry.problem,
  };
}

/** One entry: `position: 0 op: 41 size: 300 operation: 128 (CreateStream) parent: 0x… checksum: 0x… … verify: ok`. */
export function walEntryLine(entry: WalDumpEntry, c: Colors): string {
  const h = entry.header;
  const verify =
    entry.verify === "ok"
      ? c.green("ok")
      : entry.verify === "unsealed"
        ? c.yellow("unsealed")
        : c.red(`${entry.verify} (${entry.problem ?? ""})`);
  const at = isoMicros(h.timestamp);
  return (
    `position: ${entry.position} op: ${h.op} size: ${h.size} operation: ${h.operation} (${operationName(h.operation)}) ` +
    `commit: ${h.commit} parent: ${hex128(h.parent)} checksum: ${hex128(h.checksum)} bodyChecksum: ${hex128(h.checksumBody)} ` +
    `view: ${h.view} replica: ${h.replica} timestamp: ${h.timestamp}${at ? ` (${at})` : ""} verify: ${verify}`
  );
}

function walStopToJson(stop: WalDumpStop | null): JsonWalDump["stopped"] {
  if (stop === null) return null;
  return {
    position: stop.position,
    bytes: stop.bytes,
    reason: stop.reason,
    evidence: stop.evidence,
    claimedOp: stop.claimedOp === null ? null : stop.claimedOp.toString(),
  };
}

/** The JSON document's opening, up to the entries array (entries stream after it, one at a time). */
export function walJsonOpening(file: string, size: number, engine: string): string {
  return `{\n  "kind": "wal",\n  "file": ${JSON.stringify(file)},\n  "size": ${size},\n  "engine": ${JSON.stringify(engine)},\n  "entries": [`;
}

/** The JSON document's closing, after the entries. */
export function walJsonClosing(result: WalDumpResult, anyEntry: boolean): string {
  const stopped = walStopToJson(result.stopped);
  return (
    `${anyEntry ? "\n  " : ""}],\n  "verified": ${result.verified},\n  "unsealed": ${result.unsealed},\n` +
    `  "stopped": ${JSON.stringify(stopped)}\n}\n`
  );
}

/** The text header line. */
export function walTextOpening(file: string, size: number, engine: string): string {
  return `Dumping ${escapeControl(file)} (metadata WAL, ${formatCount(size)} bytes, engine ${engine})\n`;
}

/** Where the listing stopped (what the bytes there are), then the count line. */
export function walTextClosing(result: WalDumpResult, c: Colors): string {
  const failed = result.entries - result.verified - result.unsealed;
  const counts =
    `${result.entries} entr${result.entries === 1 ? "y" : "ies"}, ${result.verified} verified` +
    (result.unsealed > 0 ? `, ${c.yellow(`${result.unsealed} unsealed (nothing proves their bytes)`)}` : "") +
    (failed > 0 ? `, ${c.red(`${failed} failed to verify`)}` : "") +
    `, ${formatBytes(result.size)}`;
  const stop = result.stopped;
  if (stop === null) return `${counts}\n`;
  return (
    c.yellow(
      `listing stopped at byte ${formatCount(stop.position)}: ${stop.reason}; the last ${formatCount(stop.bytes)} bytes are ` +
        `${WAL_TAIL_BYTES_WORDS[stop.evidence]} (\`segscan scan\` on the node root says whether they are a torn tail)`,
    ) +
    "\n" +
    counts +
    "\n"
  );
}

// ---------------------------------------------------------------------------
// The snapshot

export function snapshotToJson(file: string, engine: "wasm" | "ts", inspection: SnapshotInspection): JsonSnapshotDump {
  const { report, trailer, header } = inspection;
  return {
    kind: "snapshot",
    file,
    size: report.size,
    engine,
    payloadBytes: inspection.payloadBytes,
    trailer:
      trailer === null
        ? null
        : {
            position: trailer.position,
            magic: hex32(SNAPSHOT_MAGIC),
            storedChecksum: hex128(trailer.storedChecksum),
            computedChecksum: hex128(trailer.computedChecksum),
            matches: trailer.storedChecksum === trailer.computedChecksum,
          },
    header:
      header === null
        ? null
        : {
            version: header.version,
            createdAt: header.createdAt === null ? null : header.createdAt.toString(),
            sequenceNumber: header.sequenceNumber.toString(),
            writerRelease: header.writerRelease === null ? null : header.writerRelease.toString(),
            users: header.users,
            clientTable: header.clientTable,
          },
    counts:
      header === null
        ? null
        : {
            streams: report.streams,
            topics: report.topics,
            partitions: report.partitions,
            consumerGroups: inspection.consumerGroups ?? 0,
            messages: (inspection.messages ?? 0n).toString(),
            trailingBytes: inspection.trailingBytes ?? 0,
          },
    // The node root a finding's next step names: the snapshot sits in <root>/metadata/.
    findings: report.findings.map((finding) => findingToJson(finding, dirname(dirname(file)))),
  };
}

/** The snapshot's trailer, root fields, counts and findings, one fact a line. */
export function snapshotText(file: string, engine: "wasm" | "ts", inspection: SnapshotInspection, c: Colors): string {
  const { report, trailer, header } = inspection;
  const lines = [`Dumping ${escapeControl(file)} (metadata snapshot, ${formatCount(report.size)} bytes, engine ${engine})`];
  if (inspection.payloadBytes !== null) lines.push(`payload: ${formatCount(inspection.payloadBytes)} bytes`);
  if (trailer !== null) {
    const matches = trailer.storedChecksum === trailer.computedChecksum;
    lines.push(
      `trailer: position: ${trailer.position} magic: ${hex32(SNAPSHOT_MAGIC)} checksum: ${hex128(trailer.storedChecksum)} ` +
        `computed: ${hex128(trailer.computedChecksum)} verify: ${matches ? c.green("ok") : c.red("checksum-mismatch")}`,
    );
  } else if (inspection.payloadBytes !== null) {
    lines.push(c.yellow("trailer: none (no magic in the last 20 bytes): the whole file is the payload, unverified"));
  }
  if (header !== null) {
    const at = header.createdAt === null ? "" : isoMicros(header.createdAt);
    lines.push(
      `header: version: ${header.version} sequenceNumber: ${header.sequenceNumber} ` +
        `createdAt: ${header.createdAt ?? "-"}${at ? ` (${at})` : ""} writerRelease: ${header.writerRelease ?? "-"} ` +
        `users: ${header.users ? "present" : "absent"} clientTable: ${header.clientTable ? "present" : "absent"}`,
    );
    lines.push(
      `counts: streams: ${formatCount(report.streams)} topics: ${formatCount(report.topics)} partitions: ${formatCount(report.partitions)} ` +
        `consumerGroups: ${formatCount(inspection.consumerGroups ?? 0)} messages: ${formatCount(inspection.messages ?? 0n)}` +
        ((inspection.trailingBytes ?? 0) > 0
          ? ` (${formatCount(inspection.trailingBytes ?? 0)} bytes after the msgpack value, ignored)`
          : ""),
    );
  }
  for (const finding of report.findings) {
    const paint = finding.severity === "refused" || finding.severity === "failed" ? c.red : c.yellow;
    lines.push(paint(`${finding.severity} ${finding.code}: ${escapeControl(finding.message)}`));
  }
  if (report.findings.length === 0) lines.push(c.green("every check passes: sealed, checksum verified, format version 3, decoded"));
  return `${lines.join("\n")}\n`;
}
