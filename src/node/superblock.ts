/**
 * `superblock.a` / `superblock.b` (docs/node.md N3), in `metadata/` and in each
 * partition dir: one record per file (magic `4B 4C 42 53`, version 1, sequence,
 * payload_len ≤ 4096, `VsrState` payload, trailing XXH3-64), combined with the
 * two-slot rule: one corrupt slot makes the store unreadable (never fall back).
 * Read-only: a slot is never rewritten.
 */
import { join } from "node:path";
import { readU32, readU64 } from "../format/bytes.js";
import { formatHex64 } from "../domain/numbers.js";
import type { Engine } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import { leftoverFindings, readSmallFile } from "./files.js";
import { childPath } from "../io/paths.js";
import type { NodeFinding, SlotState, SuperblockReport, VsrState } from "../domain/node.js";

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

/** Classifies one slot's bytes (docs/node.md N3 record check). */
export function classifySlot(bytes: Uint8Array, engine: Engine): SlotState {
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
  const computed = engine.xxh3_64(bytes.subarray(0, recordEnd));
  if (stored !== computed)
    return {
      kind: "corrupt",
      version: null,
      reason: `checksum mismatch (stored ${formatHex64(stored)}, computed ${formatHex64(computed)})`,
    };
  return { kind: "valid", sequence: readU64(bytes, 8), payload: bytes.slice(SUPERBLOCK_HEADER_BYTES, recordEnd) };
}

/** `VsrState` (66 bytes, or the legacy 58); `null` with the reason when it does not decode. */
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

async function readSlot(scanFs: ScanFs, path: string, engine: Engine): Promise<SlotState> {
  const file = await readSmallFile(scanFs, path, SUPERBLOCK_MAX_FILE_BYTES);
  switch (file.kind) {
    case "absent":
      return { kind: "absent" };
    case "too-large":
      return { kind: "corrupt", version: null, reason: `${file.size} bytes, longer than any record (${SUPERBLOCK_MAX_FILE_BYTES})` };
    case "not-file":
      return { kind: "corrupt", version: null, reason: file.message };
    case "failed":
      return { kind: "failed", reason: file.message };
    case "read":
      return classifySlot(file.bytes, engine);
  }
}

function describeSlot(slot: SlotState): string {
  switch (slot.kind) {
    case "absent":
      return "absent";
    case "valid":
      return `valid, sequence ${slot.sequence}`;
    case "corrupt":
      return `corrupt (${slot.reason})`;
    case "failed":
      return `unreadable (${slot.reason})`;
  }
}

/**
 * Reads both slots of the store in `directory` and combines them (docs/node.md
 * N3): both valid → the higher sequence (a tie goes to A); one valid and one
 * absent → that one; both absent → empty; any corrupt slot → unreadable.
 * `plane` chooses the finding codes. Pairing with the snapshot is the caller's.
 */
export async function scanSuperblock(
  directory: string,
  scanFs: ScanFs,
  engine: Engine,
  plane: "metadata" | "partition",
): Promise<SuperblockReport> {
  const pathA = childPath(directory, "superblock.a");
  const pathB = childPath(directory, "superblock.b");
  const [a, b] = [await readSlot(scanFs, pathA, engine), await readSlot(scanFs, pathB, engine)];
  const report: SuperblockReport = {
    directory,
    state: "empty",
    slotA: describeSlot(a),
    slotB: describeSlot(b),
    sequence: null,
    vsr: null,
    findings: [],
  };
  // Built only for a finding: most partition dirs hold no superblock.
  const store = (): string => (plane === "metadata" ? `metadata superblock in ${directory}` : `partition superblock in ${directory}`);
  const refusedCode = plane === "metadata" ? "SuperblockUnreadable" : "PartitionSuperblockUnreadable";
  const consequence =
    plane === "metadata" ? "the server refuses to boot" : "the server tombstones this partition at boot (its segments stay, unserved)";
  for (const [slot, path] of [
    [a, pathA],
    [b, pathB],
  ] as const) {
    if (slot.kind === "failed") {
      report.state = "failed";
      report.findings.push({ severity: "failed", code: "SuperblockReadFailure", path, message: slot.reason });
    }
  }
  for (const name of ["superblock.a.tmp", "superblock.b.tmp"]) {
    const path = childPath(directory, name);
    if (scanFs.knownAbsent?.(path)) continue; // no finding; skips building the message
    const message = `${path} is left over from a superblock write that died before its rename: inert, never read; left alone`;
    report.findings.push(
      ...(await leftoverFindings(
        scanFs,
        path,
        { code: "SuperblockTmpPresent", message },
        "a superblock write that died before its rename",
      )),
    );
  }
  if (report.state === "failed") return report;
  if (a.kind === "corrupt" || b.kind === "corrupt") {
    report.state = "unreadable";
    const corruptPath = a.kind === "corrupt" ? pathA : pathB;
    report.findings.push({
      severity: "refused",
      code: refusedCode,
      path: corruptPath,
      message: `${store()}: slot A ${describeSlot(a)}, slot B ${describeSlot(b)}; a slot that does not verify may have held the newer sequence, so neither slot is trusted and ${consequence}. Never rewrite a slot`,
    });
    return report;
  }
  const chosen =
    a.kind === "valid" && b.kind === "valid" ? (a.sequence >= b.sequence ? a : b) : a.kind === "valid" ? a : b.kind === "valid" ? b : null;
  if (chosen === null || chosen.kind !== "valid") return report; // both absent: empty
  report.sequence = chosen.sequence;
  const decoded = decodeVsrState(chosen.payload);
  if ("error" in decoded) {
    report.state = "undecodable";
    report.findings.push({
      severity: "refused",
      code: plane === "metadata" ? "SuperblockUndecodable" : "PartitionSuperblockUnreadable",
      path: chosen === a ? pathA : pathB,
      message: `${store()}: ${decoded.error}; ${consequence}`,
    });
    return report;
  }
  report.state = "present";
  report.vsr = decoded.state;
  return report;
}

/** docs/node.md N3 pairing of the metadata superblock with the snapshot (S = its op, or 0 without one). */
export function pairingFindings(
  superblock: SuperblockReport,
  snapshot: { present: boolean; sequenceNumber: bigint | null; checksum: bigint | null; path: string; corrupt: boolean },
): NodeFinding[] {
  const vsr = superblock.vsr;
  if (vsr === null) return [];
  const path = join(superblock.directory, "superblock.a");
  const snapshotOp = snapshot.sequenceNumber ?? 0n;
  if (snapshot.corrupt) return []; // SnapshotCorrupt already refuses; its op is unknown
  if (vsr.checkpointOp > snapshotOp) {
    const what = snapshot.present ? `the snapshot is at op ${snapshotOp}` : `${snapshot.path} is missing`;
    return [
      {
        severity: "refused",
        code: "CheckpointAheadOfSnapshot",
        path,
        message: `the superblock's checkpoint_op is ${vsr.checkpointOp} but ${what}: a lost or reverted snapshot; the server refuses to boot`,
        checkpointOp: vsr.checkpointOp,
        snapshotOp,
      },
    ];
  }
  if (snapshot.present && vsr.checkpointOp === snapshotOp && snapshot.checksum !== null && vsr.checkpointChecksum !== snapshot.checksum) {
    return [
      {
        severity: "refused",
        code: "CheckpointMismatch",
        path,
        message: `the superblock pairs with op ${snapshotOp} but records checksum ${formatHex64(vsr.checkpointChecksum)} while the snapshot's is ${formatHex64(snapshot.checksum)}: the snapshot is not the one checkpointed; the server refuses to boot`,
        checkpointOp: vsr.checkpointOp,
        expectedChecksum: vsr.checkpointChecksum,
        snapshotChecksum: snapshot.checksum,
      },
    ];
  }
  return [];
}

/** Builds one slot file's bytes (the generator and tests). */
export function encodeSuperblockRecord(sequence: bigint, payload: Uint8Array, engine: Engine): Uint8Array {
  const bytes = new Uint8Array(SUPERBLOCK_HEADER_BYTES + payload.length + SUPERBLOCK_CHECKSUM_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, SUPERBLOCK_MAGIC, true);
  view.setUint16(4, SUPERBLOCK_VERSION, true);
  view.setBigUint64(8, sequence, true);
  view.setUint32(24, payload.length, true);
  bytes.set(payload, SUPERBLOCK_HEADER_BYTES);
  view.setBigUint64(
    SUPERBLOCK_HEADER_BYTES + payload.length,
    engine.xxh3_64(bytes.subarray(0, SUPERBLOCK_HEADER_BYTES + payload.length)),
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
