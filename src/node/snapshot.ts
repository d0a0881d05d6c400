/**
 * `metadata/snapshot.bin` (docs/node.md N2): the 20-byte trailer (magic
 * `50 4E 53 49` + u128 zero-extended XXH3-64 of the payload), the format
 * version gate, and a msgpack decode (positional arrays) of the fields part 2
 * needs. A malformed payload is a `refused` finding, never an exception.
 */
import { decode } from "@msgpack/msgpack";
import { readU32, readU64 } from "../format/bytes.js";
import type { Engine } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import { readSmallFile } from "./files.js";
import type { NodeFinding, SnapshotContents, SnapshotReport, SnapshotTopic } from "../domain/node.js";

export const SNAPSHOT_TRAILER_BYTES = 20;
/** Trailer magic as the u32 LE Iggy writes (bytes `50 4E 53 49` on disk). */
export const SNAPSHOT_MAGIC = 0x49534e50;
/** Iggy's SNAPSHOT_FORMAT_VERSION: anything else fails its load. */
export const SNAPSHOT_FORMAT_VERSION = 3;
/**
 * The decode needs the whole payload in memory. A metadata snapshot holds
 * names and ids, not messages: 256 MiB is far beyond any real one, and a
 * larger file is reported `failed` (not judged) rather than allocated.
 */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;

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

/** Decodes the payload's tree (docs/node.md N2): streams → topics → partitions, group ids, messages_count. */
export function decodeSnapshotPayload(payload: Uint8Array): SnapshotContents {
  const root = array(
    decode(payload, {
      useBigInt64: true,
      // Each element takes at least one byte: a garbage length header can never allocate more than the payload.
      maxArrayLength: payload.length,
      maxMapLength: payload.length,
      maxStrLength: payload.length,
      maxBinLength: payload.length,
      maxExtLength: payload.length,
    }),
    "MetadataSnapshot",
    7,
  );
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
  return { version, sequenceNumber, streams };
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
  const file = await readSmallFile(scanFs, path, MAX_SNAPSHOT_BYTES);
  if (file.kind === "absent") return report;
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
    return report;
  }
  if (file.kind !== "read") {
    report.findings.push({ severity: "failed", code: "SnapshotReadFailure", path, message: file.message });
    return report;
  }
  const bytes = file.bytes;
  report.size = bytes.length;
  const trailerAt = bytes.length - SNAPSHOT_TRAILER_BYTES;
  let payload = bytes;
  if (bytes.length >= SNAPSHOT_TRAILER_BYTES && readU32(bytes, trailerAt) === SNAPSHOT_MAGIC) {
    report.sealed = true;
    payload = bytes.subarray(0, trailerAt);
    const stored = (readU64(bytes, trailerAt + 12) << 64n) | readU64(bytes, trailerAt + 4);
    const computed = engine.xxh3_64(payload);
    report.checksum = stored;
    if (stored !== computed) {
      report.findings.push({
        ...corrupt(path, `trailer checksum 0x${stored.toString(16)} does not match the payload's XXH3-64 0x${computed.toString(16)}`),
        stored: stored,
        computed,
      });
      return report;
    }
  } else {
    report.checksum = engine.xxh3_64(bytes);
    report.findings.push({
      severity: "warn",
      code: "SnapshotUnsealed",
      path,
      message: `${path} has no trailer (a pre-trailer snapshot): the server accepts it unverified; only a superblock pairing at the same op can prove its bytes`,
    });
  }
  try {
    const contents = decodeSnapshotPayload(payload);
    report.contents = contents;
    report.sequenceNumber = contents.sequenceNumber;
    report.streams = contents.streams.length;
    report.topics = contents.streams.reduce((sum, stream) => sum + stream.topics.length, 0);
    report.partitions = contents.streams.reduce(
      (sum, stream) => sum + stream.topics.reduce((n, topic) => n + topic.partitions.length, 0),
      0,
    );
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    report.findings.push(corrupt(path, `the payload does not decode as a format-${SNAPSHOT_FORMAT_VERSION} metadata snapshot (${detail})`));
  }
  return report;
}
