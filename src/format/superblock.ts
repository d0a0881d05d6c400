/**
 * The superblock record (docs/node.md N3): `superblock.a` / `superblock.b`, in
 * `metadata/` and in each partition dir, hold one record each: magic
 * `4B 4C 42 53`, version 1, sequence, payload_len ≤ 4096, the `VsrState`
 * payload, then XXH3-64 of everything before it. Bytes only: combining the two
 * slots, and what a corrupt slot means, belong to src/node/superblock.ts.
 */
import { hex64, readU32, readU64 } from "./bytes.js";

export const SUPERBLOCK_MAGIC = 0x53424c4b;
export const SUPERBLOCK_VERSION = 1;
/** Record header: magic, version, reserved, sequence, parent_checksum, payload_len. */
export const SUPERBLOCK_HEADER_BYTES = 28;
export const SUPERBLOCK_CHECKSUM_BYTES = 8;
/** Iggy's payload cap; a longer claim is corrupt. */
export const SUPERBLOCK_MAX_PAYLOAD_BYTES = 4096;
/** A slot longer than this is corrupt and never read (Iggy: not even read). */
export const SUPERBLOCK_MAX_FILE_BYTES = SUPERBLOCK_HEADER_BYTES + SUPERBLOCK_MAX_PAYLOAD_BYTES + SUPERBLOCK_CHECKSUM_BYTES;
export const VSR_STATE_BYTES = 66;
/** Written before `offset_frontier` existed; the frontier reads as 0. */
export const VSR_STATE_LEGACY_BYTES = 58;

/** What hashes a record: an engine, or anything with its XXH3-64. */
export interface Xxh3 {
  xxh3_64(bytes: Uint8Array): bigint;
}

/** The `VsrState` payload (docs/node.md N3). */
export interface VsrState {
  cluster: bigint;
  replicaId: number;
  replicaCount: number;
  view: number;
  logView: number;
  commitMax: bigint;
  checkpointOp: bigint;
  checkpointChecksum: bigint;
  offsetFrontier: bigint;
  /** 66 or the legacy 58. */
  payloadBytes: number;
}

/** One slot file's bytes, as the record check reads them. */
export type SuperblockRecord =
  | { kind: "absent" }
  | { kind: "valid"; sequence: bigint; payload: Uint8Array }
  | { kind: "corrupt"; version: number | null; reason: string };

/** Classifies one slot's bytes (docs/node.md N3 record check); an empty file is absent. */
export function decodeSuperblockRecord(bytes: Uint8Array, hasher: Xxh3): SuperblockRecord {
  if (bytes.length === 0) return { kind: "absent" };
  if (bytes.length < SUPERBLOCK_HEADER_BYTES + SUPERBLOCK_CHECKSUM_BYTES)
    return { kind: "corrupt", version: null, reason: `${bytes.length} bytes, shorter than a record` };
  if (readU32(bytes, 0) !== SUPERBLOCK_MAGIC) return { kind: "corrupt", version: null, reason: "magic mismatch" };
  const version = bytes[4]! | (bytes[5]! << 8);
  if (version !== SUPERBLOCK_VERSION) return { kind: "corrupt", version, reason: `version ${version}, expected ${SUPERBLOCK_VERSION}` };
  const payloadBytes = readU32(bytes, 24);
  if (payloadBytes > SUPERBLOCK_MAX_PAYLOAD_BYTES)
    return { kind: "corrupt", version: null, reason: `payload_len ${payloadBytes} over ${SUPERBLOCK_MAX_PAYLOAD_BYTES}` };
  const recordEnd = SUPERBLOCK_HEADER_BYTES + payloadBytes;
  if (bytes.length !== recordEnd + SUPERBLOCK_CHECKSUM_BYTES) {
    return {
      kind: "corrupt",
      version: null,
      reason: `file is ${bytes.length} bytes, a ${payloadBytes}-byte payload needs exactly ${recordEnd + SUPERBLOCK_CHECKSUM_BYTES}`,
    };
  }
  const stored = readU64(bytes, recordEnd);
  const computed = hasher.xxh3_64(bytes.subarray(0, recordEnd));
  if (stored !== computed)
    return { kind: "corrupt", version: null, reason: `checksum mismatch (stored 0x${hex64(stored)}, computed 0x${hex64(computed)})` };
  return { kind: "valid", sequence: readU64(bytes, 8), payload: bytes.slice(SUPERBLOCK_HEADER_BYTES, recordEnd) };
}

/** `VsrState` (66 bytes, or the legacy 58); the reason when it does not decode. */
export function decodeVsrState(payload: Uint8Array): { state: VsrState } | { error: string } {
  if (payload.length !== VSR_STATE_BYTES && payload.length !== VSR_STATE_LEGACY_BYTES) {
    return { error: `VsrState payload is ${payload.length} bytes, expected ${VSR_STATE_BYTES} or ${VSR_STATE_LEGACY_BYTES}` };
  }
  const u128 = (at: number): bigint => (readU64(payload, at + 8) << 64n) | readU64(payload, at);
  const state: VsrState = {
    cluster: u128(0),
    replicaId: payload[16]!,
    replicaCount: payload[17]!,
    view: readU32(payload, 18),
    logView: readU32(payload, 22),
    commitMax: readU64(payload, 26),
    checkpointOp: readU64(payload, 34),
    checkpointChecksum: u128(42),
    offsetFrontier: payload.length === VSR_STATE_BYTES ? readU64(payload, 58) : 0n,
    payloadBytes: payload.length,
  };
  if (state.logView > state.view) return { error: `log_view ${state.logView} is ahead of view ${state.view}` };
  return { state };
}

/** One slot file's bytes (the generator and tests). */
export function encodeSuperblockRecord(sequence: bigint, payload: Uint8Array, hasher: Xxh3): Uint8Array {
  const bytes = new Uint8Array(SUPERBLOCK_HEADER_BYTES + payload.length + SUPERBLOCK_CHECKSUM_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, SUPERBLOCK_MAGIC, true);
  view.setUint16(4, SUPERBLOCK_VERSION, true);
  view.setBigUint64(8, sequence, true);
  view.setUint32(24, payload.length, true);
  bytes.set(payload, SUPERBLOCK_HEADER_BYTES);
  view.setBigUint64(
    SUPERBLOCK_HEADER_BYTES + payload.length,
    hasher.xxh3_64(bytes.subarray(0, SUPERBLOCK_HEADER_BYTES + payload.length)),
    true,
  );
  return bytes;
}

export function encodeVsrState(state: Omit<VsrState, "payloadBytes">, legacy = false): Uint8Array {
  const bytes = new Uint8Array(legacy ? VSR_STATE_LEGACY_BYTES : VSR_STATE_BYTES);
  const view = new DataView(bytes.buffer);
  const mask = (1n << 64n) - 1n;
  view.setBigUint64(0, state.cluster & mask, true);
  view.setBigUint64(8, state.cluster >> 64n, true);
  bytes[16] = state.replicaId;
  bytes[17] = state.replicaCount;
  view.setUint32(18, state.view, true);
  view.setUint32(22, state.logView, true);
  view.setBigUint64(26, state.commitMax, true);
  view.setBigUint64(34, state.checkpointOp, true);
  view.setBigUint64(42, state.checkpointChecksum & mask, true);
  view.setBigUint64(50, state.checkpointChecksum >> 64n, true);
  if (!legacy) view.setBigUint64(58, state.offsetFrontier, true);
  return bytes;
}
