/**
 * The small files of a partition dir beside its segments (docs/node.md N4,
 * N5): each consumer's and group's offset record under `offsets/`, and
 * `purge.gen`. Bytes only: comparing them with the partition's head and the
 * snapshot belongs to src/node/partition-dir.ts.
 */
import { readU64 } from "./bytes.js";

/** docs/node.md N4: the offsets dir, and its two kinds of record by subdir. */
export const OFFSETS_DIR = "offsets";
export const OFFSET_KINDS = [
  { kind: "consumer", dir: "consumers" },
  { kind: "group", dir: "groups" },
] as const;
/** docs/node.md N4: u64 LE offset + u64 LE XXH3-64 of those 8 bytes. */
export const OFFSET_RECORD_BYTES = 16;
/** docs/node.md N4: the legacy record, the bare u64 offset. */
export const LEGACY_OFFSET_RECORD_BYTES = 8;

/** docs/node.md N4: the offset record of `offset` (`hash`: an engine's XXH3-64, or the TypeScript one). */
export function encodeOffsetRecord(offset: bigint, hash: (bytes: Uint8Array) => bigint): Uint8Array {
  const bytes = new Uint8Array(OFFSET_RECORD_BYTES);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, offset, true);
  view.setBigUint64(8, hash(bytes.subarray(0, 8)), true);
  return bytes;
}

/** The fields of an offset record's leading bytes: the offset (≥ 8 bytes) and the stored checksum (≥ 16 bytes); null where the bytes are too few. */
export function readOffsetRecord(bytes: Uint8Array): { offset: bigint | null; storedChecksum: bigint | null } {
  return {
    offset: bytes.length >= LEGACY_OFFSET_RECORD_BYTES ? readU64(bytes, 0) : null,
    storedChecksum: bytes.length >= OFFSET_RECORD_BYTES ? readU64(bytes, 8) : null,
  };
}

/** docs/node.md N5: `purge.gen`, generation + created_revision, u64 LE each. */
export const PURGE_GENERATION_FILE = "purge.gen";
export const PURGE_GENERATION_BYTES = 16;

export function encodePurgeGeneration(generation: bigint, createdRevision: bigint): Uint8Array {
  const bytes = new Uint8Array(PURGE_GENERATION_BYTES);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, generation, true);
  view.setBigUint64(8, createdRevision, true);
  return bytes;
}

/** `purge.gen`'s fields from its leading bytes; null when they are fewer than a record. */
export function readPurgeGeneration(bytes: Uint8Array): { generation: bigint; createdRevision: bigint } | null {
  if (bytes.length < PURGE_GENERATION_BYTES) return null;
  return { generation: readU64(bytes, 0), createdRevision: readU64(bytes, 8) };
}
