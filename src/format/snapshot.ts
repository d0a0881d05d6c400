/**
 * `metadata/snapshot.bin`'s trailer (docs/node.md N2): the msgpack payload is
 * followed by 20 bytes, the magic `50 4E 53 49` and the payload's XXH3-64
 * zero-extended to a u128. Bytes only: decoding the payload and judging the
 * file belong to src/node/snapshot.ts.
 */
import { readU32, readU64 } from "./bytes.js";

export const SNAPSHOT_TRAILER_BYTES = 20;
/** Trailer magic as the u32 LE Iggy writes (bytes `50 4E 53 49` on disk). */
export const SNAPSHOT_MAGIC = 0x49534e50;
/** Iggy's SNAPSHOT_FORMAT_VERSION: anything else fails its load. */
export const SNAPSHOT_FORMAT_VERSION = 3;

/** The trailer at the end of `bytes`: its position and the stored checksum; null when the last 20 bytes do not start with the magic. */
export function readSnapshotTrailer(bytes: Uint8Array): { position: number; storedChecksum: bigint } | null {
  const position = bytes.length - SNAPSHOT_TRAILER_BYTES;
  if (position < 0 || readU32(bytes, position) !== SNAPSHOT_MAGIC) return null;
  return { position, storedChecksum: (readU64(bytes, position + 12) << 64n) | readU64(bytes, position + 4) };
}

/** `payload` with its trailer, as Iggy writes the file (`xxh3_64`: the payload's XXH3-64). */
export function sealSnapshot(payload: Uint8Array, xxh3_64: (bytes: Uint8Array) => bigint): Uint8Array {
  const bytes = new Uint8Array(payload.length + SNAPSHOT_TRAILER_BYTES);
  bytes.set(payload);
  const view = new DataView(bytes.buffer);
  view.setUint32(payload.length, SNAPSHOT_MAGIC, true);
  view.setBigUint64(payload.length + 4, xxh3_64(payload), true);
  return bytes;
}
