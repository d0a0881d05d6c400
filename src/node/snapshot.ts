/**
 * `metadata/snapshot.bin` (docs/node.md N2): the 20-byte trailer (magic
 * `50 4E 53 49` + u128 zero-extended XXH3-64 of the payload), the format
 * version gate, and a msgpack decode (positional arrays) of the fields part 2
 * needs. The payload decodes as Iggy's `rmp_serde::from_slice` does: the first
 * msgpack value, trailing bytes ignored. A structural pass measures that value
 * first (src/node/msgpack-measure.ts), so a length bomb is refused before any
 * JS object is built. A malformed payload is a `refused` finding, never an
 * exception.
 */
import { SNAPSHOT_FORMAT_VERSION, SNAPSHOT_TRAILER_BYTES, readSnapshotTrailer } from "../format/snapshot.js";
import { formatHex64 } from "../domain/numbers.js";
import type { Engine } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import { readSmallFile } from "./files.js";
import { type MsgpackExtent, measureMsgpackValue } from "./msgpack-measure.js";
import type { NodeFinding, SnapshotContents, SnapshotReport, SnapshotTopic } from "../domain/node.js";

/** `MetadataSnapshot` is a positional array of 7 fields: version, created_at, sequence_number, users, streams, client_table, writer_release. */
export const SNAPSHOT_ROOT_FIELDS = 7;
/**
 * The decode needs the whole payload in memory. A metadata snapshot holds
 * names and ids, not messages: 256 MiB is far beyond any real one, and a
 * larger file is reported `failed` (not judged) rather than allocated.
 */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
/**
 * Deepest container nesting decoded. Iggy's format nests about 13 levels
 * (root → streams → items → (id, stream) → topics → (id, topic) → consumer
 * groups → (id, group) → members → …); deeper is no MetadataSnapshot, and the
 * cap leaves room for the format to grow.
 */
export const MAX_SNAPSHOT_NESTING_DEPTH = 64;
/**
 * What one decoded value costs on the V8 heap, measured with
 * `@msgpack/msgpack` 3.x on 64-bit Node: an array or object about 40–64 bytes
 * plus 8 per element slot (a slot is counted with its element); a scalar its
 * 8-byte slot plus up to 24 when boxed (a bigint, a string header, a heap
 * number). String and binary data cost their bytes on top.
 */
export const DECODED_CONTAINER_BYTES = 64;
export const DECODED_SCALAR_BYTES = 32;
/**
 * The largest tree segscan builds from a snapshot, by the estimate above.
 * A real snapshot costs about 256 estimated bytes per partition, so this is
 * about a million partitions, far beyond any node; it keeps a scan inside
 * Node's default heap however the payload's bytes are arranged (20 MB of
 * empty maps would build about 1.3 GB). Above it the snapshot is `failed`
 * `SnapshotTooLarge` (not judged), like a file above MAX_SNAPSHOT_BYTES.
 */
export const MAX_SNAPSHOT_DECODED_BYTES = 256 * 1024 * 1024;

/** The estimated heap a decode of `extent` builds (docs/node.md N2 decode bounds). */
export function estimatedDecodedBytes(extent: MsgpackExtent): number {
  return extent.containers * DECODED_CONTAINER_BYTES + extent.scalars * DECODED_SCALAR_BYTES + extent.rawBytes;
}

class SnapshotShapeError extends Error {}

function array(value: unknown, what: string, minLength = 0): unknown[] {
  if (!Array.isArray(value) || value.length < minLength) {
    throw new SnapshotShapeError(`${what} is not an array of at least ${minLength} elements (a positional struct)`);
  }
  return value;
}

function integer(value: unknown, what: string): bigint {
  if (typeof value === "bigint" && value >= 0n) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw new SnapshotShapeError(`${what} is not an unsigned integer`);
}

function small(value: unknown, what: string): number {
  const n = integer(value, what);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new SnapshotShapeError(`${what} is out of range`);
  return Number(n);
}

/** `Vec<(usize, T)>` → the T values. */
function keyed(value: unknown, what: string): unknown[] {
  return array(value, what).map((pair, i) => array(pair, `${what}[${i}]`, 2)[1]);
}

/** A payload whose first value segscan will not build (docs/node.md N2 decode bounds): `failed`, not judged. */
class SnapshotDecodeLimitError extends Error {
  constructor(
    message: string,
    readonly estimatedBytes: number,
  ) {
    super(message);
  }
}

/**
 * Measures the payload's first msgpack value without building it and refuses
 * what no MetadataSnapshot can be (a broken structure, nesting past
 * MAX_SNAPSHOT_NESTING_DEPTH, a root that is not an array of at least 7 values
 * led by the version integer) before the library allocates anything; a tree
 * above MAX_SNAPSHOT_DECODED_BYTES is not built at all.
 */
function measurePayload(payload: Uint8Array): MsgpackExtent {
  const measured = measureMsgpackValue(payload, MAX_SNAPSHOT_NESTING_DEPTH);
  if (!measured.ok) throw new SnapshotShapeError(`msgpack structure: ${measured.reason}`);
  const { extent } = measured;
  const { root } = extent;
  if (root.kind !== "array" || root.length < SNAPSHOT_ROOT_FIELDS || root.firstKind !== "integer") {
    const first = root.firstKind === null ? "" : ` led by ${article(root.firstKind)}`;
    const found = root.kind === "array" ? `an array of ${root.length} values${first}` : article(root.kind);
    throw new SnapshotShapeError(
      `its first msgpack value is ${found}, not a MetadataSnapshot (an array of ${SNAPSHOT_ROOT_FIELDS} fields led by the version integer); nothing was built from it`,
    );
  }
  const estimatedBytes = estimatedDecodedBytes(extent);
  if (estimatedBytes > MAX_SNAPSHOT_DECODED_BYTES) {
    throw new SnapshotDecodeLimitError(
      `its first msgpack value would build ${extent.containers} arrays and maps and ${extent.scalars} other values (about ${mebibytes(estimatedBytes)} MiB of heap), more than segscan builds (${mebibytes(MAX_SNAPSHOT_DECODED_BYTES)} MiB, MAX_SNAPSHOT_DECODED_BYTES)`,
      estimatedBytes,
    );
  }
  return extent;
}

function article(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}

function mebibytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(0);
}

/**
 * Decodes the payload's tree (docs/node.md N2): streams → topics → partitions,
 * group ids, messages_count. Like Iggy's `rmp_serde::from_slice`, only the
 * first msgpack value is read; `trailingBytes` counts what follows it.
 */
export async function decodeSnapshotPayload(
  payload: Uint8Array,
): Promise<SnapshotContents & { trailingBytes: number; header: SnapshotHeader }> {
  const extent = measurePayload(payload);
  // msgpack loads with the first snapshot decoded (docs/engines.md §7.7): a scan of a node without one never loads it.
  const { decodeMulti } = await import("@msgpack/msgpack");
  const first = decodeMulti(payload, {
    useBigInt64: true,
    // Each element takes at least one byte: a garbage length header can never allocate more than the payload.
    maxArrayLength: payload.length,
    maxMapLength: payload.length,
    maxStrLength: payload.length,
    maxBinLength: payload.length,
    maxExtLength: payload.length,
  }).next();
  if (first.done === true) throw new SnapshotShapeError("the payload holds no msgpack value");
  const root = array(first.value, "MetadataSnapshot", SNAPSHOT_ROOT_FIELDS);
  const version = small(root[0], "version");
  if (version !== SNAPSHOT_FORMAT_VERSION) throw new SnapshotShapeError(`format version ${version}, expected ${SNAPSHOT_FORMAT_VERSION}`);
  const sequenceNumber = integer(root[2], "sequence_number");
  const streams: SnapshotContents["streams"] = [];
  if (root[4] !== null && root[4] !== undefined) {
    const streamsSnapshot = array(root[4], "streams", 1);
    keyed(streamsSnapshot[0], "streams.items").forEach((streamValue, s) => {
      const stream = array(streamValue, `stream ${s}`, 5);
      const streamId = small(stream[0], `stream ${s} id`);
      const topics: SnapshotTopic[] = keyed(stream[4], `stream ${streamId} topics`).map((topicValue, t) => {
        const where = `stream ${streamId} topic ${t}`;
        const topic = array(topicValue, where, 9);
        const id = small(topic[0], `${where} id`);
        const stats = array(topic[6], `${where} stats`, 2);
        const partitions = array(topic[7], `${where} partitions`).map((partitionValue, p) => {
          const partition = array(partitionValue, `${where} partition ${p}`, 6);
          return {
            streamId,
            topicId: id,
            id: small(partition[0], `${where} partition ${p} id`),
            createdRevision: integer(partition[3], `${where} partition ${p} created_revision`),
            deletedUpToOffset: integer(partition[4], `${where} partition ${p} deleted_up_to_offset`),
            purgeGeneration: integer(partition[5], `${where} partition ${p} purge_generation`),
          };
        });
        const consumerGroupIds = array(topic[8], `${where} consumer_groups`).map((pair, g) =>
          small(array(pair, `${where} consumer group ${g}`, 2)[0], `${where} consumer group ${g} id`),
        );
        return { streamId, id, messagesCount: integer(stats[1], `${where} messages_count`), consumerGroupIds, partitions };
      });
      streams.push({ id: streamId, topics });
    });
  }
  const header: SnapshotHeader = {
    version,
    createdAt: optionalInteger(root[1]),
    sequenceNumber,
    writerRelease: optionalInteger(root[6]),
    users: root[3] !== null && root[3] !== undefined,
    clientTable: root[5] !== null && root[5] !== undefined,
  };
  return { version, sequenceNumber, streams, trailingBytes: payload.length - extent.endPosition, header };
}

/** A field segscan only shows (never judges): its value when it is an unsigned integer, else null. */
function optionalInteger(value: unknown): bigint | null {
  if (typeof value === "bigint" && value >= 0n) return value;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
}

/**
 * The root fields of a MetadataSnapshot (docs/node.md N2) that `segscan dump`
 * shows: the three it reads as a scan does (version, sequence_number), and
 * those it only shows (created_at, writer_release; whether users and the
 * client table are present; their insides are not decoded).
 */
export interface SnapshotHeader {
  version: number;
  /** `created_at`, µs since the epoch; null when it is not an unsigned integer. */
  createdAt: bigint | null;
  sequenceNumber: bigint;
  /** `writer_release`; null when it is not an unsigned integer. */
  writerRelease: bigint | null;
  users: boolean;
  clientTable: boolean;
}

/** The 20-byte trailer as it was found (docs/node.md N2). */
export interface SnapshotTrailer {
  /** Byte position of the trailer: the file's size − 20. */
  position: number;
  storedChecksum: bigint;
  /** XXH3-64 of the payload before it. */
  computedChecksum: bigint;
}

/** A snapshot as `segscan dump` shows it: the scan's report and what it read on the way (docs/node.md N2). */
export interface SnapshotInspection {
  report: SnapshotReport;
  /** Null when the file has no trailer magic in its last 20 bytes (unsealed: the whole file is the payload), or was not read. */
  trailer: SnapshotTrailer | null;
  /** Bytes read as the payload (the file without its trailer); null when the file was not read. */
  payloadBytes: number | null;
  /** Null when the payload was not decoded (a checksum mismatch, a decode failure, a file too large). */
  header: SnapshotHeader | null;
  /** Bytes after the payload's first msgpack value, which Iggy ignores; null when not decoded. */
  trailingBytes: number | null;
  /** Consumer groups over every topic; null when not decoded. */
  consumerGroups: number | null;
  /** The topics' `messages_count` summed; null when not decoded. */
  messages: bigint | null;
}

function corrupt(path: string, detail: string): NodeFinding {
  return {
    severity: "refused",
    code: "SnapshotCorrupt",
    path,
    message: `${path}: ${detail}; the server refuses to boot on it, and nothing can rebuild a snapshot`,
  };
}

export async function scanSnapshot(path: string, scanFs: ScanFs, engine: Engine): Promise<SnapshotReport> {
  return (await inspectSnapshot(path, scanFs, engine)).report;
}

/** The snapshot scan (docs/node.md N2), with the trailer, the header fields and the counts it read on the way. */
export async function inspectSnapshot(path: string, scanFs: ScanFs, engine: Engine): Promise<SnapshotInspection> {
  const report: SnapshotReport = {
    path,
    present: false,
    size: 0,
    sealed: false,
    checksum: null,
    sequenceNumber: null,
    streams: 0,
    topics: 0,
    partitions: 0,
    contents: null,
    findings: [],
  };
  const inspection: SnapshotInspection = {
    report,
    trailer: null,
    payloadBytes: null,
    header: null,
    trailingBytes: null,
    consumerGroups: null,
    messages: null,
  };
  const file = await readSmallFile(scanFs, path, MAX_SNAPSHOT_BYTES);
  if (file.kind === "absent") return inspection;
  report.present = true;
  if (file.kind === "too-large") {
    report.size = file.size;
    report.findings.push({
      severity: "failed",
      code: "SnapshotTooLarge",
      path,
      message: `${path} is ${file.size} bytes, more than segscan decodes (${MAX_SNAPSHOT_BYTES}); it was not judged`,
      size: file.size,
    });
    return inspection;
  }
  if (file.kind !== "read") {
    report.findings.push({ severity: "failed", code: "SnapshotReadFailure", path, message: file.message });
    return inspection;
  }
  const bytes = file.bytes;
  report.size = bytes.length;
  const trailer = readSnapshotTrailer(bytes);
  let payload = bytes;
  if (trailer !== null) {
    report.sealed = true;
    payload = bytes.subarray(0, trailer.position);
    const stored = trailer.storedChecksum;
    const computed = engine.xxh3_64(payload);
    report.checksum = stored;
    inspection.trailer = { position: trailer.position, storedChecksum: stored, computedChecksum: computed };
    if (stored !== computed) {
      report.findings.push({
        ...corrupt(path, `trailer checksum ${formatHex64(stored)} does not match the payload's XXH3-64 ${formatHex64(computed)}`),
        stored: stored,
        computed,
      });
      inspection.payloadBytes = payload.length;
      return inspection;
    }
  } else {
    // docs/node.md N2: no magic, whatever destroyed it: the whole file is the payload, as Iggy reads it.
    report.checksum = engine.xxh3_64(bytes);
  }
  inspection.payloadBytes = payload.length;
  await decodeInto(inspection, payload, bytes.length);
  return inspection;
}

/** Decodes the snapshot's payload into `inspection` (docs/node.md N2), or records why it was not judged or does not decode. */
async function decodeInto(inspection: SnapshotInspection, payload: Uint8Array, fileBytes: number): Promise<void> {
  const { report } = inspection;
  const path = report.path;
  let trailingBytes = 0;
  // Loaded before the decode's try: a decoder that cannot load is an error of segscan's, never a finding about the file.
  await import("@msgpack/msgpack");
  try {
    const { trailingBytes: trailing, header, ...contents } = await decodeSnapshotPayload(payload);
    trailingBytes = trailing;
    const topics = contents.streams.flatMap((stream) => stream.topics);
    Object.assign(inspection, {
      header,
      trailingBytes,
      consumerGroups: topics.reduce((sum, topic) => sum + topic.consumerGroupIds.length, 0),
      messages: topics.reduce((sum, topic) => sum + topic.messagesCount, 0n),
    });
    report.contents = contents;
    report.sequenceNumber = contents.sequenceNumber;
    report.streams = contents.streams.length;
    report.topics = contents.streams.reduce((sum, stream) => sum + stream.topics.length, 0);
    report.partitions = contents.streams.reduce(
      (sum, stream) => sum + stream.topics.reduce((n, topic) => n + topic.partitions.length, 0),
      0,
    );
  } catch (error) {
    if (error instanceof SnapshotDecodeLimitError) {
      report.findings.push({
        severity: "failed",
        code: "SnapshotTooLarge",
        path,
        message: `${path}: ${error.message}; it was not judged`,
        size: fileBytes,
        estimatedDecodedBytes: error.estimatedBytes,
        limitDecodedBytes: MAX_SNAPSHOT_DECODED_BYTES,
      });
      return;
    }
    const detail = error instanceof Error ? error.message : String(error);
    report.findings.push(corrupt(path, `the payload does not decode as a format-${SNAPSHOT_FORMAT_VERSION} metadata snapshot (${detail})`));
    return;
  }
  if (!report.sealed) report.findings.push(unsealedFinding(path, fileBytes, trailingBytes));
}

/** docs/node.md N2: no trailer magic; Iggy decodes the first value of the whole file and boots on it. */
function unsealedFinding(path: string, size: number, trailingBytes: number): NodeFinding {
  const trailing =
    trailingBytes === 0
      ? ""
      : ` The ${trailingBytes} bytes after its msgpack value are ignored, by the server as by segscan (a damaged magic leaves the ${SNAPSHOT_TRAILER_BYTES}-byte trailer there).`;
  return {
    severity: "warn",
    code: "SnapshotUnsealed",
    path,
    message: `${path} has no trailer magic in its last ${SNAPSHOT_TRAILER_BYTES} bytes (a pre-trailer snapshot, or a damaged magic): the whole ${size}-byte file is the payload, and the server accepts it unverified, with a warning; only a superblock pairing at the same op can prove its bytes.${trailing}`,
    trailingBytes,
  };
}
