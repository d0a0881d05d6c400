/**
 * Writes the metadata plane of a node root (docs/node.md N1–N3) beside the
 * generated partitions: `metadata/journal.wal` (chained, sealed prepares with
 * realistic bodies, ops S.. as after a checkpoint), `metadata/snapshot.bin`
 * (msgpack + trailer, at op S), `metadata/superblock.a/.b` paired with it; and
 * injects one named N1–N3 fault.
 */
import { copyFile, mkdir, rm, truncate, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createTsEngine } from "../../engine/ts/engine.js";
import { xxh3_64 } from "../../hash/xxh3.js";
import type { PartitionLayout } from "../types.js";
import type { Severity } from "../../domain/node.js";
import { encodeSuperblockRecord, encodeVsrState } from "../../format/superblock.js";
import { WAL_HEADER_BYTES } from "../../format/wal.js";
import { encodeOffsetRecord as encodeRecord, encodePurgeGeneration } from "../../format/partition-files.js";
import { SNAPSHOT_TRAILER_BYTES } from "../../format/snapshot.js";
import { encodeSnapshotPayload, sealSnapshot, type SnapshotSpec } from "./snapshot.js";
import { buildWal, concat, encodePrepare } from "./wal.js";
import { Prng } from "../prng.js";

/**
 * Stand-in cluster id (Iggy uses the first 16 bytes of BLAKE3 of the cluster
 * name; segscan only compares WAL entries with the superblock, never with a name).
 */
export const SAMPLE_CLUSTER_ID = 0x5a1e_c1a5_7e12_0001_9e37_79b9_7f4a_7c15n;
/** Checkpoint op of the sample snapshot, and how many ops the WAL holds from it. */
export const SAMPLE_SNAPSHOT_OP = 40n;
export const SAMPLE_WAL_OPS = 16;

interface NodeParts {
  walEntries: Uint8Array[];
  /** Raw bytes to write as journal.wal (after faults); null: built from walEntries. */
  walBytes: Uint8Array | null;
  snapshot: Uint8Array | null;
  snapshotSpec: SnapshotSpec;
  slotA: Uint8Array | null;
  slotB: Uint8Array | null;
  /** Extra files relative to the node root. */
  extras: { path: string; bytes: Uint8Array }[];
  partitions: readonly PartitionLayout[];
  random: () => number;
  /** Per-partition files (relative to the node root): offsets and purge.gen (docs/node.md N4, N5); a fault may edit them. */
  partitionFiles: Map<string, Uint8Array | "dir">;
  /** Steps run after every file is written (cut a log, remove a dir). */
  actions: ((root: string) => Promise<void>)[];
  /** The metadata superblock's identity (docs/fleet.md: one per replica of a cluster). */
  identity: NodeIdentity;
}

/** A node's superblock identity (IGGY-NODE-FORMATS §2.3.2): solo by default. */
export interface NodeIdentity {
  cluster: bigint;
  replicaId: number;
  replicaCount: number;
}

export interface NodeFault {
  name: string;
  description: string;
  expected: { severity: Severity; code: string };
  inject(parts: NodeParts): void;
}

const engine = createTsEngine();

function superblock(
  sequence: bigint,
  fields: {
    checkpointOp: bigint;
    checkpointChecksum: bigint;
    commitMax: bigint;
    view?: number;
    logView?: number;
    offsetFrontier?: bigint;
    cluster?: bigint;
    replicaId?: number;
    replicaCount?: number;
  },
  legacy = false,
): Uint8Array {
  return encodeSuperblockRecord(
    sequence,
    encodeVsrState(
      {
        cluster: fields.cluster ?? SAMPLE_CLUSTER_ID,
        replicaId: fields.replicaId ?? 0,
        replicaCount: fields.replicaCount ?? 1,
        view: fields.view ?? 0,
        logView: fields.logView ?? 0,
        commitMax: fields.commitMax,
        checkpointOp: fields.checkpointOp,
        checkpointChecksum: fields.checkpointChecksum,
        offsetFrontier: fields.offsetFrontier ?? 0n,
      },
      legacy,
    ),
    engine,
  );
}

function lastOp(): bigint {
  return SAMPLE_SNAPSHOT_OP + BigInt(SAMPLE_WAL_OPS) - 1n;
}

function pairedSlots(parts: NodeParts, checksum: bigint, fields: Partial<Parameters<typeof superblock>[1]> = {}, legacy = false): void {
  const identity = parts.identity;
  parts.slotA = superblock(1n, { checkpointOp: 0n, checkpointChecksum: 0n, commitMax: SAMPLE_SNAPSHOT_OP - 1n, ...identity });
  parts.slotB = superblock(
    2n,
    { checkpointOp: SAMPLE_SNAPSHOT_OP, checkpointChecksum: checksum, commitMax: lastOp(), ...identity, ...fields },
    legacy,
  );
}

function flip(bytes: Uint8Array, at: number): void {
  bytes[at] = bytes[at]! ^ 0x5a;
}

/** Rebuilds the WAL entries from ops S.. with per-entry tweaks; `skip` drops ops, `order` reorders. */
function rebuildWal(parts: NodeParts, tweak: (op: bigint) => Partial<Parameters<typeof encodePrepare>[0]> = () => ({})): void {
  const entries: Uint8Array[] = [];
  let parent = 0x1234_5678_9abc_def0n;
  for (let i = 0; i < SAMPLE_WAL_OPS; i++) {
    const op = SAMPLE_SNAPSHOT_OP + BigInt(i);
    const { bytes, checksum } = encodePrepare({
      op,
      parent,
      operation: 128,
      body: new TextEncoder().encode(`\u0000\u0000\u0000\u0000\u0009stream-${op}`),
      cluster: SAMPLE_CLUSTER_ID,
      ...tweak(op),
    });
    entries.push(bytes);
    parent = checksum;
  }
  parts.walEntries = entries;
}

/** docs/node.md N4: the offset record, hashed with the TypeScript XXH3. */
export function encodeOffsetRecord(offset: bigint): Uint8Array {
  return encodeRecord(offset, xxh3_64);
}

/** The sample consumer id and group id of every generated partition. */
export const SAMPLE_CONSUMER_ID = 7;
export const SAMPLE_GROUP_ID = 1;

function lastEndOffset(partition: PartitionLayout): bigint {
  return partition.segments.at(-1)!.endOffset;
}

function consumerPath(partition: PartitionLayout, id = SAMPLE_CONSUMER_ID): string {
  return join(partition.relativePath, "offsets", "consumers", `${id}`);
}

/** Keeps the first `bytes` bytes of consumer 7's offset file in the first partition (a torn or legacy record). */
function keepConsumerOffsetPrefix(parts: NodeParts, bytes: number): void {
  const path = consumerPath(parts.partitions[0]!);
  parts.partitionFiles.set(path, (parts.partitionFiles.get(path) as Uint8Array).slice(0, bytes));
}

/** Re-encodes the snapshot from its spec and re-pairs the superblock with it. */
function reseal(parts: NodeParts): void {
  const payload = encodeSnapshotPayload(parts.snapshotSpec);
  parts.snapshot = sealSnapshot(payload);
  pairedSlots(parts, xxh3_64(payload));
}

function specPartition(parts: NodeParts, index: number): SnapshotSpec["streams"][number]["topics"][number]["partitions"][number] {
  const layout = parts.partitions[index]!;
  return parts.snapshotSpec.streams
    .find((s) => s.id === layout.streamId)!
    .topics.find((t) => t.id === layout.topicId)!
    .partitions.find((p) => p.id === layout.partitionId)!;
}

function purgePath(parts: NodeParts, index: number): string {
  return join(parts.partitions[index]!.relativePath, "purge.gen");
}

const NODE_FAULTS_LIST: NodeFault[] = [
  {
    name: "wal-torn-tail",
    description: "the last WAL entry (op 55, above the superblock's commit_max 54) is cut short: a crash mid-append",
    expected: { severity: "repairable", code: "WalTornTail" },
    inject: (parts) => {
      tearLastEntry(parts, WAL_HEADER_BYTES + Math.floor((parts.walEntries.at(-1)!.length - WAL_HEADER_BYTES) / 2));
      commitBelowTornOp(parts);
    },
  },
  {
    name: "wal-torn-tail-stale-copy",
    description: "the last WAL entry (op 55, above commit_max 54) cut short, then a stale copy of an older entry's bytes (recycled blocks)",
    expected: { severity: "repairable", code: "WalTornTail" },
    inject: (parts) => {
      tearLastEntry(parts, WAL_HEADER_BYTES + 3);
      parts.walEntries.push(parts.walEntries[2]!.slice());
      commitBelowTornOp(parts);
    },
  },
  {
    name: "wal-committed-torn",
    description: "the last WAL entry is cut short, but its op 55 is at the superblock's commit_max 55: committed, so it was fsynced once",
    expected: { severity: "refused", code: "WalCommittedOpsLost" },
    inject: (parts) => tearLastEntry(parts, WAL_HEADER_BYTES + 3),
  },
  {
    name: "wal-committed-lost",
    description: "the WAL's last 4 entries are gone (cut at an entry boundary) while commit_max is 55: ops 52..55 committed and lost",
    expected: { severity: "refused", code: "WalCommittedOpsLost" },
    inject: (parts) => void parts.walEntries.splice(-4),
  },
  {
    name: "wal-emptied",
    description: "journal.wal is empty while commit_max is 55 above the snapshot's op 40",
    expected: { severity: "refused", code: "WalCommittedOpsLost" },
    inject: (parts) => {
      parts.walEntries = [];
    },
  },
  {
    name: "wal-committed-lost-cluster",
    description: "the WAL's last 4 entries are gone on a replica of a 3-replica cluster (the peers re-supply ops 52..55)",
    expected: { severity: "warn", code: "WalCommittedOpsLost" },
    inject: (parts) => {
      parts.walEntries.splice(-4);
      pairedSlots(parts, snapshotChecksum(parts), { replicaCount: parts.identity.replicaCount > 1 ? parts.identity.replicaCount : 3 });
    },
  },
  {
    name: "wal-zero-tail",
    description: "64 KiB of zeros after the last WAL entry (preallocated, never written)",
    expected: { severity: "repairable", code: "WalTornTail" },
    inject: (parts) => parts.walEntries.push(new Uint8Array(64 * 1024)),
  },
  {
    name: "wal-interior-damage",
    description: "a byte of a middle WAL entry's body flipped; verified entries follow",
    expected: { severity: "refused", code: "WalInteriorDamage" },
    inject: (parts) => flip(parts.walEntries[5]!, WAL_HEADER_BYTES + 2),
  },
  {
    name: "wal-gap",
    description: "one op missing from the middle of the WAL",
    expected: { severity: "refused", code: "WalGap" },
    inject: (parts) => void parts.walEntries.splice(7, 1),
  },
  {
    name: "wal-chain-break",
    description: "an op whose parent is not its predecessor's checksum, not file-adjacent to it",
    expected: { severity: "refused", code: "WalChainBreak" },
    inject: (parts) => {
      rebuildWal(parts, (op) => (op === SAMPLE_SNAPSHOT_OP + 9n ? { parent: 0xdead_beefn } : {}));
      // Move op S+9 after op S+10 so the walk's file-order chain rule does not see the pair.
      const [moved] = parts.walEntries.splice(9, 1);
      parts.walEntries.splice(10, 0, moved!);
    },
  },
  {
    name: "wal-snapshot-hole",
    description: "the WAL resumes two ops after the snapshot op",
    expected: { severity: "refused", code: "WalSnapshotHole" },
    inject: (parts) => void parts.walEntries.splice(0, 3),
  },
  {
    name: "wal-duplicate-op",
    description: "the last op written twice with different bodies",
    expected: { severity: "refused", code: "WalDuplicateOp" },
    inject: (parts) => {
      const op = lastOp();
      const parentEntry = parts.walEntries.at(-2)!;
      const parent = xxh3ChecksumOf(parentEntry);
      parts.walEntries.push(
        encodePrepare({ op, parent, operation: 129, body: new TextEncoder().encode("renamed"), cluster: SAMPLE_CLUSTER_ID }).bytes,
      );
    },
  },
  {
    name: "wal-duplicate-identical",
    description: "the last WAL entry written twice, byte for byte",
    expected: { severity: "info", code: "WalDuplicateIdentical" },
    inject: (parts) => void parts.walEntries.push(parts.walEntries.at(-1)!.slice()),
  },
  {
    name: "wal-unsealed",
    description: "three WAL entries written unsealed (checksums 0, as by an older build)",
    expected: { severity: "warn", code: "WalUnsealed" },
    inject: (parts) => rebuildWal(parts, (op) => (op >= lastOp() - 2n ? { sealHeader: false, sealBody: false } : {})),
  },
  {
    name: "wal-foreign-group",
    description: "a WAL entry stamped with a consensus group other than the metadata group",
    expected: { severity: "warn", code: "WalGroupMismatch" },
    inject: (parts) => rebuildWal(parts, (op) => (op === SAMPLE_SNAPSHOT_OP + 3n ? { group: 7n } : {})),
  },
  {
    name: "wal-cluster-mismatch",
    description: "WAL entries name a cluster other than the superblock's",
    expected: { severity: "warn", code: "WalClusterMismatch" },
    inject: (parts) => rebuildWal(parts, () => ({ cluster: 99n })),
  },
  {
    name: "wal-tmp",
    description: "a journal.wal.tmp left by a rewrite that died before its rename",
    expected: { severity: "info", code: "WalTmpPresent" },
    inject: (parts) => void parts.extras.push({ path: "metadata/journal.wal.tmp", bytes: concat(parts.walEntries.slice(0, 3)) }),
  },
  {
    name: "snapshot-unsealed",
    description: "snapshot.bin without its trailer (a pre-trailer snapshot), paired by whole-file checksum",
    expected: { severity: "warn", code: "SnapshotUnsealed" },
    inject: (parts) => {
      const payload = encodeSnapshotPayload(parts.snapshotSpec);
      parts.snapshot = payload;
      pairedSlots(parts, xxh3_64(payload));
    },
  },
  {
    name: "snapshot-magic-damaged",
    description: "a byte of snapshot.bin's trailer magic flipped (read as unsealed), while the superblock lags at checkpoint op 30",
    expected: { severity: "warn", code: "SnapshotUnsealed" },
    inject: (parts) => {
      flip(parts.snapshot!, parts.snapshot!.length - SNAPSHOT_TRAILER_BYTES);
      pairedSlots(parts, 0n, { checkpointOp: SAMPLE_SNAPSHOT_OP - 10n });
    },
  },
  {
    name: "snapshot-corrupt",
    description: "a byte of snapshot.bin's payload flipped (trailer mismatch)",
    expected: { severity: "refused", code: "SnapshotCorrupt" },
    inject: (parts) => flip(parts.snapshot!, 10),
  },
  {
    name: "snapshot-version",
    description: "snapshot.bin in format version 2 (resealed)",
    expected: { severity: "refused", code: "SnapshotCorrupt" },
    inject: (parts) => {
      const payload = encodeSnapshotPayload({ ...parts.snapshotSpec, version: 2 });
      parts.snapshot = sealSnapshot(payload);
      pairedSlots(parts, xxh3_64(payload));
    },
  },
  {
    name: "snapshot-garbage",
    description: "snapshot.bin's payload is not msgpack, under a valid trailer",
    expected: { severity: "refused", code: "SnapshotCorrupt" },
    inject: (parts) => {
      const payload = new Uint8Array(300);
      for (let i = 0; i < payload.length; i++) payload[i] = Math.floor(parts.random() * 256);
      payload[0] = 0xc1; // never used in msgpack
      parts.snapshot = sealSnapshot(payload);
      pairedSlots(parts, xxh3_64(payload));
    },
  },
  {
    name: "snapshot-missing",
    description: "snapshot.bin deleted while the superblock records a checkpoint",
    expected: { severity: "refused", code: "CheckpointAheadOfSnapshot" },
    inject: (parts) => {
      parts.snapshot = null;
    },
  },
  {
    name: "snapshot-tmp",
    description: "a snapshot.bin.tmp left by a write that died before its rename",
    expected: { severity: "info", code: "SnapshotTmpPresent" },
    inject: (parts) => void parts.extras.push({ path: "metadata/snapshot.bin.tmp", bytes: parts.snapshot!.subarray(0, 50) }),
  },
  {
    name: "superblock-corrupt-slot",
    description: "a byte of metadata superblock.a flipped (the other slot is fine)",
    expected: { severity: "refused", code: "SuperblockUnreadable" },
    inject: (parts) => flip(parts.slotA!, 40),
  },
  {
    name: "superblock-undecodable",
    description: "the newest metadata superblock holds a 60-byte VsrState",
    expected: { severity: "refused", code: "SuperblockUndecodable" },
    inject: (parts) => {
      parts.slotB = encodeSuperblockRecord(2n, new Uint8Array(60), engine);
    },
  },
  {
    name: "superblock-log-view-ahead",
    description: "the newest metadata superblock has log_view > view",
    expected: { severity: "refused", code: "SuperblockUndecodable" },
    inject: (parts) => pairedSlots(parts, snapshotChecksum(parts), { view: 1, logView: 3 }),
  },
  {
    name: "superblock-legacy",
    description: "the newest metadata superblock uses the legacy 58-byte VsrState (accepted)",
    expected: { severity: "clean", code: "" },
    inject: (parts) => pairedSlots(parts, snapshotChecksum(parts), {}, true),
  },
  {
    name: "checkpoint-mismatch",
    description: "the superblock pairs with the snapshot's op but records another checksum",
    expected: { severity: "refused", code: "CheckpointMismatch" },
    inject: (parts) => pairedSlots(parts, 0x0bad_c0den),
  },
  {
    name: "checkpoint-ahead",
    description: "the superblock's checkpoint_op is past the snapshot's op",
    expected: { severity: "refused", code: "CheckpointAheadOfSnapshot" },
    inject: (parts) => pairedSlots(parts, snapshotChecksum(parts), { checkpointOp: SAMPLE_SNAPSHOT_OP + 5n }),
  },
  {
    name: "superblock-tmp",
    description: "a superblock.a.tmp left by a write that died before its rename",
    expected: { severity: "info", code: "SuperblockTmpPresent" },
    inject: (parts) => void parts.extras.push({ path: "metadata/superblock.a.tmp", bytes: parts.slotA!.subarray(0, 20) }),
  },
  {
    name: "partition-superblock-corrupt",
    description: "the first partition's superblock.a does not verify",
    expected: { severity: "refused", code: "PartitionSuperblockUnreadable" },
    inject: (parts) => {
      const slot = superblock(1n, { checkpointOp: 0n, checkpointChecksum: 0n, commitMax: 0n, offsetFrontier: 1n });
      flip(slot, 30);
      parts.extras.push({ path: join(parts.partitions[0]!.relativePath, "superblock.a"), bytes: slot });
    },
  },
  {
    name: "partition-frontier-ahead",
    description: "the first partition's superblock says offsets were minted past the segments' end",
    expected: { severity: "info", code: "OffsetFrontierAhead" },
    inject: (parts) => {
      const slot = superblock(1n, { checkpointOp: 0n, checkpointChecksum: 0n, commitMax: 0n, offsetFrontier: 1n << 40n });
      parts.extras.push({ path: join(parts.partitions[0]!.relativePath, "superblock.a"), bytes: slot });
    },
  },
  {
    name: "offset-ahead-of-torn-tail",
    description:
      "the first partition's last batches are torn while consumer 7 had committed its last offset (offsets persist eagerly, messages flush later)",
    expected: { severity: "repairable", code: "OffsetAheadOfHead" },
    inject: (parts) => {
      const layout = parts.partitions[0]!;
      const segment = layout.segments.at(-1)!;
      // Tear a batch of the last flushed chunk halfway (the later ones never reached the disk);
      // not the chunk's first, which the last index entry points at.
      const count = segment.batches.length;
      const torn = segment.batches[Math.min(count - 1, Math.max(segment.chunkStarts.at(-1)! + 1, count - 3))]!;
      parts.partitionFiles.set(consumerPath(layout), encodeOffsetRecord(lastEndOffset(layout)));
      parts.actions.push((root) =>
        truncate(join(root, layout.relativePath, `${segment.stem}.log`), torn.position + Math.floor(torn.length / 2)),
      );
    },
  },
  {
    name: "offset-ahead",
    description: "consumer 7 of the first partition stored an offset 50 past the segments' end",
    expected: { severity: "repairable", code: "OffsetAheadOfHead" },
    inject: (parts) =>
      void parts.partitionFiles.set(consumerPath(parts.partitions[0]!), encodeOffsetRecord(lastEndOffset(parts.partitions[0]!) + 50n)),
  },
  {
    name: "offset-legacy",
    description: "consumer 7's offset file is the legacy 8-byte record",
    expected: { severity: "info", code: "OffsetUnsealed" },
    inject: (parts) => keepConsumerOffsetPrefix(parts, 8),
  },
  {
    name: "offset-checksum-torn",
    description: "consumer 7's offset file stops 4 bytes into its checksum (12 bytes)",
    expected: { severity: "repairable", code: "OffsetChecksumTorn" },
    inject: (parts) => keepConsumerOffsetPrefix(parts, 12),
  },
  {
    name: "offset-torn",
    description: "consumer 7's offset file holds 5 bytes (a crash mid-write)",
    expected: { severity: "warn", code: "OffsetTorn" },
    inject: (parts) => keepConsumerOffsetPrefix(parts, 5),
  },
  {
    name: "offset-corrupt",
    description: "a bit of consumer 7's offset value flipped (checksum mismatch: the server unlinks it at boot)",
    expected: { severity: "refused", code: "OffsetCorrupt" },
    inject: (parts) => {
      const path = consumerPath(parts.partitions[0]!);
      const bytes = (parts.partitionFiles.get(path) as Uint8Array).slice();
      bytes[1] = bytes[1]! ^ 0x10;
      parts.partitionFiles.set(path, bytes);
    },
  },
  {
    name: "offset-oversized",
    description: "consumer 7's offset file holds 4 bytes past its 16-byte record",
    expected: { severity: "warn", code: "OffsetOversized" },
    inject: (parts) => {
      const path = consumerPath(parts.partitions[0]!);
      parts.partitionFiles.set(path, concat([parts.partitionFiles.get(path) as Uint8Array, new Uint8Array(4)]));
    },
  },
  {
    name: "offset-bad-name",
    description: "a file named `alice` among the consumer offsets",
    expected: { severity: "warn", code: "OffsetNameInvalid" },
    inject: (parts) =>
      void parts.partitionFiles.set(join(parts.partitions[0]!.relativePath, "offsets", "consumers", "alice"), encodeOffsetRecord(1n)),
  },
  {
    name: "offset-subdir",
    description: "a directory among the consumer offsets",
    expected: { severity: "warn", code: "OffsetSubdirectory" },
    inject: (parts) => void parts.partitionFiles.set(join(parts.partitions[0]!.relativePath, "offsets", "consumers", "12"), "dir"),
  },
  {
    name: "offsets-dir-unreadable",
    description: "the first partition's offsets/groups is a file, so it cannot be listed (the server's boot fails)",
    expected: { severity: "failed", code: "OffsetsDirUnreadable" },
    inject: (parts) => {
      const groups = join(parts.partitions[0]!.relativePath, "offsets", "groups");
      for (const key of [...parts.partitionFiles.keys()]) if (key.startsWith(groups)) parts.partitionFiles.delete(key);
      parts.partitionFiles.set(groups, new Uint8Array(3));
    },
  },
  {
    name: "offset-group-unknown",
    description: "an offset file for consumer group 9, which the topic does not have",
    expected: { severity: "info", code: "OffsetGroupUnknown" },
    inject: (parts) =>
      void parts.partitionFiles.set(join(parts.partitions[0]!.relativePath, "offsets", "groups", "9"), encodeOffsetRecord(0n)),
  },
  {
    name: "offset-empty-partition",
    description: "the second partition holds one empty segment, and consumer 7 has an offset there",
    expected: { severity: "repairable", code: "OffsetOnEmptyPartition" },
    inject: (parts) => {
      const layout = parts.partitions[1]!;
      parts.partitionFiles.set(consumerPath(layout), encodeOffsetRecord(3n));
      parts.actions.push(async (root) => {
        for (const segment of layout.segments) {
          await rm(join(root, layout.relativePath, `${segment.stem}.log`), { force: true });
          await rm(join(root, layout.relativePath, `${segment.stem}.index`), { force: true });
        }
        await writeFile(join(root, layout.relativePath, `${"0".padStart(20, "0")}.log`), new Uint8Array(0));
        await writeFile(join(root, layout.relativePath, `${"0".padStart(20, "0")}.index`), new Uint8Array(0));
      });
    },
  },
  {
    name: "purge-pending",
    description: "the snapshot says purge generation 2; the first partition's purge.gen says 1 (this incarnation)",
    expected: { severity: "warn", code: "PurgePending" },
    inject: (parts) => {
      const partition = specPartition(parts, 0);
      partition.purgeGeneration = 2n;
      reseal(parts);
      parts.partitionFiles.set(purgePath(parts, 0), encodePurgeGeneration(1n, partition.createdRevision));
    },
  },
  {
    name: "purge-lost",
    description: "the snapshot says purge generation 1 but the first partition's purge.gen is gone, and it holds messages",
    expected: { severity: "refused", code: "PurgeGenerationLost" },
    inject: (parts) => {
      specPartition(parts, 0).purgeGeneration = 1n;
      reseal(parts);
      parts.partitionFiles.delete(purgePath(parts, 0));
    },
  },
  {
    name: "purge-short",
    description: "the snapshot says purge generation 1 but the first partition's purge.gen holds 9 bytes",
    expected: { severity: "refused", code: "PurgeGenerationLost" },
    inject: (parts) => {
      const partition = specPartition(parts, 0);
      partition.purgeGeneration = 1n;
      reseal(parts);
      parts.partitionFiles.set(purgePath(parts, 0), encodePurgeGeneration(1n, partition.createdRevision).slice(0, 9));
    },
  },
  {
    name: "purge-ahead",
    description: "the first partition's purge.gen says generation 5; the snapshot says 0",
    expected: { severity: "refused", code: "PurgeGenerationAhead" },
    inject: (parts) =>
      void parts.partitionFiles.set(purgePath(parts, 0), encodePurgeGeneration(5n, specPartition(parts, 0).createdRevision)),
  },
  {
    name: "purge-stale-revision",
    description:
      "the first partition's purge.gen belongs to another incarnation (created_revision differs); the snapshot's generation is 0",
    expected: { severity: "info", code: "PurgeRevisionStale" },
    inject: (parts) => void parts.partitionFiles.set(purgePath(parts, 0), encodePurgeGeneration(3n, 999n)),
  },
  {
    name: "purge-oversized",
    description: "the first partition's purge.gen holds 4 bytes past its 16",
    expected: { severity: "warn", code: "PurgeGenerationOversized" },
    inject: (parts) => {
      const path = purgePath(parts, 0);
      parts.partitionFiles.set(path, concat([parts.partitionFiles.get(path) as Uint8Array, new Uint8Array(4)]));
    },
  },
  {
    name: "fenced-dir",
    description: "a `<p>.fenced.0/` sibling holding a copy of the first partition's first segment (log and index)",
    expected: { severity: "info", code: "FencedDir" },
    inject: (parts) => {
      const layout = parts.partitions[0]!;
      parts.actions.push(async (root) => {
        const fenced = join(root, `${layout.relativePath}.fenced.0`);
        await mkdir(fenced, { recursive: true });
        const segment = layout.segments[0]!;
        for (const suffix of [".log", ".index"]) {
          await copyFile(join(root, layout.relativePath, `${segment.stem}${suffix}`), join(fenced, `${segment.stem}${suffix}`));
        }
      });
    },
  },
  {
    name: "orphan-dir",
    description: "a partition dir (id 99) the metadata does not list; the WAL after the snapshot only creates streams",
    expected: { severity: "warn", code: "OrphanPartitionDir" },
    inject: (parts) => {
      rebuildWal(parts);
      const layout = parts.partitions[0]!;
      parts.actions.push((root) => mkdir(join(root, dirname(layout.relativePath), "99"), { recursive: true }).then(() => undefined));
    },
  },
  {
    name: "orphan-dir-inconclusive",
    description: "a partition dir the snapshot does not list, while a WAL op after the snapshot creates partitions (body not decoded)",
    expected: { severity: "info", code: "CrossCheckInconclusive" },
    inject: (parts) => {
      rebuildWal(parts, (op) => (op === SAMPLE_SNAPSHOT_OP + 4n ? { operation: 65 } : {}));
      const layout = parts.partitions[0]!;
      parts.actions.push((root) => mkdir(join(root, dirname(layout.relativePath), "99"), { recursive: true }).then(() => undefined));
    },
  },
  {
    name: "missing-dir",
    description: "the second partition's directory is gone while its topic counts messages (the server would recreate it empty)",
    expected: { severity: "refused", code: "MissingPartitionDir" },
    inject: (parts) => {
      rebuildWal(parts);
      const layout = parts.partitions[1]!;
      for (const key of [...parts.partitionFiles.keys()]) if (key.startsWith(layout.relativePath)) parts.partitionFiles.delete(key);
      parts.actions.push((root) => rm(join(root, layout.relativePath), { recursive: true, force: true }));
    },
  },
  {
    name: "missing-dir-empty-topic",
    description: "the snapshot lists a topic with no messages whose partition has no directory",
    expected: { severity: "warn", code: "MissingPartitionDir" },
    inject: (parts) => {
      rebuildWal(parts);
      parts.snapshotSpec.streams[0]!.topics.push({
        id: 90,
        messagesCount: 0n,
        consumerGroupIds: [],
        partitions: [{ id: 1, createdRevision: 90n, purgeGeneration: 0n, deletedUpToOffset: 0n }],
      });
      reseal(parts);
    },
  },
];

/** Cuts the last WAL entry to its first `keptBytes` bytes (a torn append). */
function tearLastEntry(parts: NodeParts, keptBytes: number): void {
  const last = parts.walEntries.pop()!;
  parts.walEntries.push(last.subarray(0, keptBytes));
}

/** The superblock last recorded commit_max one below the torn last op (docs/node.md N1.1: that op may never have committed). */
function commitBelowTornOp(parts: NodeParts): void {
  pairedSlots(parts, snapshotChecksum(parts), { commitMax: lastOp() - 1n });
}

function snapshotChecksum(parts: NodeParts): bigint {
  return xxh3_64(parts.snapshot!.subarray(0, parts.snapshot!.length - 20));
}

function xxh3ChecksumOf(entry: Uint8Array): bigint {
  return new DataView(entry.buffer, entry.byteOffset).getBigUint64(0, true);
}

/** A valid partition superblock slot (offset_frontier 0: nothing minted past the segments). */
export function samplePartitionSuperblock(sequence: bigint): Uint8Array {
  return superblock(sequence, { checkpointOp: 0n, checkpointChecksum: 0n, commitMax: 0n });
}

export const NODE_FAULTS: readonly NodeFault[] = NODE_FAULTS_LIST;

export function getNodeFault(name: string): NodeFault {
  const fault = NODE_FAULTS.find((candidate) => candidate.name === name);
  if (fault === undefined) throw new RangeError(`unknown node fault "${name}"; \`segscan gen --list\` shows them`);
  return fault;
}

export interface GeneratedNode {
  root: string;
  snapshotOp: bigint;
  walOps: { first: bigint; last: bigint };
  fault: NodeFault | null;
}

/** The snapshot of the streams, topics and partitions written (docs/node.md). */
function snapshotSpecOf(partitions: readonly PartitionLayout[]): SnapshotSpec {
  const snapshotSpec: SnapshotSpec = { sequenceNumber: SAMPLE_SNAPSHOT_OP, streams: [] };
  for (const partition of partitions) {
    let stream = snapshotSpec.streams.find((s) => s.id === partition.streamId);
    if (stream === undefined) {
      stream = { id: partition.streamId, topics: [] };
      snapshotSpec.streams.push(stream);
    }
    let topic = stream.topics.find((t) => t.id === partition.topicId);
    if (topic === undefined) {
      topic = { id: partition.topicId, messagesCount: 0n, consumerGroupIds: [1], partitions: [] };
      stream.topics.push(topic);
    }
    topic.messagesCount += BigInt(partition.segments.reduce((sum, segment) => sum + segment.messages, 0));
    topic.partitions.push({
      id: partition.partitionId,
      createdRevision: BigInt(partition.partitionId),
      purgeGeneration: 0n,
      deletedUpToOffset: 0n,
    });
  }
  return snapshotSpec;
}

/** The node's files as the fault left them: metadata/, extra files, and the files under the partitions. */
async function writeParts(root: string, parts: NodeParts): Promise<void> {
  const metadata = join(root, "metadata");
  await mkdir(metadata, { recursive: true });
  await writeFile(join(metadata, "journal.wal"), parts.walBytes ?? concat(parts.walEntries));
  if (parts.snapshot !== null) await writeFile(join(metadata, "snapshot.bin"), parts.snapshot);
  else await rm(join(metadata, "snapshot.bin"), { force: true });
  if (parts.slotA !== null) await writeFile(join(metadata, "superblock.a"), parts.slotA);
  if (parts.slotB !== null) await writeFile(join(metadata, "superblock.b"), parts.slotB);
  for (const extra of parts.extras) await writeFile(join(root, extra.path), extra.bytes);
  for (const [relative, content] of parts.partitionFiles) {
    const path = join(root, relative);
    if (content === "dir") {
      await mkdir(path, { recursive: true });
    } else {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
    }
  }
}

/** Writes `metadata/` under `root` for the given partitions, with at most one fault. */
export async function writeNodeMetadata(
  root: string,
  partitions: readonly PartitionLayout[],
  options: { seed?: number; fault?: string; identity?: NodeIdentity } = {},
): Promise<GeneratedNode> {
  const generator = new Prng(options.seed ?? 1, 0x4e4f4445);
  const random = (): number => generator.u32() / 2 ** 32;
  const snapshotSpec = snapshotSpecOf(partitions);
  const wal = buildWal({
    firstOp: SAMPLE_SNAPSHOT_OP,
    count: SAMPLE_WAL_OPS,
    random,
    cluster: SAMPLE_CLUSTER_ID,
    parentOfFirst: 0x1234_5678_9abc_def0n,
  });
  const payload = encodeSnapshotPayload(snapshotSpec);
  const parts: NodeParts = {
    walEntries: wal.entries.map((entry) => wal.bytes.slice(entry.position, entry.position + entry.size)),
    walBytes: null,
    snapshot: sealSnapshot(payload),
    snapshotSpec,
    slotA: null,
    slotB: null,
    extras: [],
    partitions,
    random,
    partitionFiles: new Map(),
    actions: [],
    identity: options.identity ?? { cluster: SAMPLE_CLUSTER_ID, replicaId: 0, replicaCount: 1 },
  };
  for (const partition of partitions) {
    // A consumer halfway through, the topic's group at the end, and this incarnation's purge.gen (generation 0).
    const end = lastEndOffset(partition);
    parts.partitionFiles.set(consumerPath(partition), encodeOffsetRecord(end / 2n));
    parts.partitionFiles.set(join(partition.relativePath, "offsets", "groups", `${SAMPLE_GROUP_ID}`), encodeOffsetRecord(end));
    parts.partitionFiles.set(join(partition.relativePath, "purge.gen"), encodePurgeGeneration(0n, BigInt(partition.partitionId)));
  }
  pairedSlots(parts, xxh3_64(payload));
  const fault = options.fault === undefined ? null : getNodeFault(options.fault);
  fault?.inject(parts);
  await writeParts(root, parts);
  for (const action of parts.actions) await action(root);
  return { root, snapshotOp: SAMPLE_SNAPSHOT_OP, walOps: { first: SAMPLE_SNAPSHOT_OP, last: lastOp() }, fault };
}
