/**
 * `superblock.a` / `superblock.b` (docs/node.md N3), in `metadata/` and in each
 * partition dir: each slot's record (src/format/superblock.ts) combined with
 * the two-slot rule: one corrupt slot makes the store unreadable (never fall
 * back). Read-only: a slot is never rewritten.
 */
import { join } from "node:path";
import { SUPERBLOCK_MAX_FILE_BYTES, decodeSuperblockRecord, decodeVsrState } from "../format/superblock.js";
import { formatHex64 } from "../domain/numbers.js";
import type { Engine } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import { leftoverFindings, readSmallFile } from "./files.js";
import { childPath } from "../io/paths.js";
import type { NodeFinding, SlotState, SuperblockReport } from "../domain/node.js";

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
      return decodeSuperblockRecord(file.bytes, engine);
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
  report.findings.push(...(await tmpFindings(directory, scanFs)));
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

/** A `superblock.?.tmp` left by a write that died before its rename: inert, never read (docs/node.md N3). */
async function tmpFindings(directory: string, scanFs: ScanFs): Promise<NodeFinding[]> {
  const findings: NodeFinding[] = [];
  for (const name of ["superblock.a.tmp", "superblock.b.tmp"]) {
    const path = childPath(directory, name);
    if (scanFs.knownAbsent?.(path)) continue; // no finding; skips building the message
    const message = `${path} is left over from a superblock write that died before its rename: inert, never read; left alone`;
    const what = "a superblock write that died before its rename";
    findings.push(...(await leftoverFindings(scanFs, path, { code: "SuperblockTmpPresent", message }, what)));
  }
  return findings;
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
