/**
 * The whole-node report (docs/node.md N0, N9) as library values: u64 values are
 * bigint, byte positions and sizes numbers. A domain type: the node pass fills
 * it, `nodeToJson` (src/report/node-json.ts) turns it into the JSON shape with u64
 * values as decimal strings.
 */
import type { SuperblockRecord, VsrState } from "../format/superblock.js";

export type { VsrState } from "../format/superblock.js";

/** docs/node.md N0: every finding's severity, worst last. */
export type Severity = "clean" | "info" | "warn" | "repairable" | "refused" | "failed";
export const SEVERITY_ORDER: readonly Severity[] = ["clean", "info", "warn", "repairable", "refused", "failed"];

export function worstSeverity(severities: Iterable<Severity>): Severity {
  let worst = 0;
  for (const severity of severities) worst = Math.max(worst, SEVERITY_ORDER.indexOf(severity));
  return SEVERITY_ORDER[worst]!;
}

export type FindingValue = string | number | bigint | boolean | null;

/** A node finding: stable `code`, the file it concerns, a message saying what and why, and code-specific fields. */
export interface NodeFinding {
  severity: Severity;
  code: string;
  path: string;
  message: string;
  [field: string]: FindingValue;
}

export type WalProbeVerdict = "no-survivor" | "survivor" | "budget-exhausted";

export interface WalResidue {
  damagePosition: number;
  bytes: number;
  /** Why the entry at damagePosition did not verify. */
  reason: string;
  probe: WalProbeVerdict;
  /** Every residue byte is zero: space the file grew into and never wrote (docs/node.md N1.1). */
  allZero: boolean;
  survivorPosition: number | null;
  /** The candidate where the budget ran out (budget-exhausted only). */
  stoppedAt: number | null;
  spentUnits: number;
}

/** What Iggy's own boot scan and replay (docs/node.md N1, N8) would do with these bytes. */
export interface IggyWalDecision {
  /** "boot": the scan accepts every byte; "truncate-tail": it cuts at `position`; "refuse": boot fails. */
  scan: "boot" | "truncate-tail" | "refuse";
  position: number | null;
  reason: string;
  /** Replay would `truncate_from` this op (gap or chain break), deleting every later op. */
  truncateFromOp: bigint | null;
  opsLost: number;
}

export interface WalReport {
  path: string;
  size: number;
  entries: number;
  ops: { first: bigint; last: bigint } | null;
  unsealed: { headers: number; bodies: number };
  walkedSize: number;
  residue: WalResidue | null;
  budget: { limitUnits: number; spentUnits: number };
  iggy: IggyWalDecision;
  findings: NodeFinding[];
  /** Library-only: every verified entry's op and operation (docs/node.md N6 cross-check). */
  operations: { op: bigint; operation: number }[];
}

export interface SnapshotPartition {
  streamId: number;
  topicId: number;
  id: number;
  createdRevision: bigint;
  purgeGeneration: bigint;
  deletedUpToOffset: bigint;
}

export interface SnapshotTopic {
  streamId: number;
  id: number;
  messagesCount: bigint;
  consumerGroupIds: number[];
  partitions: SnapshotPartition[];
}

export interface SnapshotContents {
  version: number;
  sequenceNumber: bigint;
  streams: { id: number; topics: SnapshotTopic[] }[];
}

export interface SnapshotReport {
  path: string;
  present: boolean;
  size: number;
  sealed: boolean;
  /** XXH3-64 of the payload (sealed) or the whole file (unsealed): what the superblock pairs with. */
  checksum: bigint | null;
  sequenceNumber: bigint | null;
  streams: number;
  topics: number;
  partitions: number;
  /** Library-only: the decoded tree part 2 needs. */
  contents: SnapshotContents | null;
  findings: NodeFinding[];
}

/** A superblock slot: its record (docs/node.md N3), or a read that failed. */
export type SlotState = SuperblockRecord | { kind: "failed"; reason: string };

export interface SuperblockReport {
  directory: string;
  /** "empty": both slots absent. */
  state: "present" | "empty" | "unreadable" | "undecodable" | "failed";
  slotA: string;
  slotB: string;
  sequence: bigint | null;
  vsr: VsrState | null;
  findings: NodeFinding[];
}

export interface BootForecastEntry {
  effect:
    | "refuse-boot"
    | "truncate-wal-tail"
    | "truncate-wal-from-op"
    | "run-without-committed-ops"
    | "unlink-offset-file"
    | "clamp-offset"
    | "re-purge-partition"
    | "quarantine-partition"
    | "tombstone-partition"
    | "recreate-partition-empty"
    | "sweep-scratch";
  path: string;
  destructive: boolean;
  detail: string;
}

/** docs/node.md N4: one `offsets/{consumers,groups}/<u32>` file. */
export interface OffsetReport {
  kind: "consumer" | "group";
  id: number;
  path: string;
  /** Bytes in the file (null: it could not be read). */
  size: number | null;
  /** The stored last-consumed offset (null: torn, or not read). */
  offset: bigint | null;
  /** Whether a 16-byte record's checksum verified. */
  checksummed: boolean;
  /** The partition head H it is compared with (null: the partition is empty, or H is unknown). */
  head: bigint | null;
  findings: NodeFinding[];
}

/** docs/node.md N4: the partition head H as Iggy computes it at boot, after the segment repair segscan would plan. */
export interface PartitionHead {
  /** The last offset the segments prove (after the planned repair), or null when they prove none. */
  lastProvenOffset: bigint | null;
  /** `offset_frontier` of the partition superblock (0: absent or unreadable). */
  offsetFrontier: bigint;
  /** H, or null when the partition is empty. */
  head: bigint | null;
  /** False when the segments' end is unknown (the partition's scan failed): no offset is compared. */
  known: boolean;
  /** True when Iggy would quarantine the segments (a chain refusal) and rebuild the partition empty. */
  quarantined: boolean;
}

/** docs/node.md N5: `purge.gen` against the snapshot. */
export interface PurgeGenerationReport {
  path: string;
  present: boolean;
  size: number | null;
  generation: bigint | null;
  createdRevision: bigint | null;
  /** The snapshot's purge_generation G and created_revision R (null: no snapshot entry). */
  expectedGeneration: bigint | null;
  expectedRevision: bigint | null;
  findings: NodeFinding[];
}

export interface NodePartitionReport {
  path: string;
  superblock: SuperblockReport | null;
  /** The head the offsets were compared with (docs/node.md N4). */
  head: PartitionHead;
  purgeGeneration: PurgeGenerationReport | null;
  offsets: OffsetReport[];
  /** `<p>.fenced.<n>/` siblings (docs/node.md N6): evidence, never read by the server. */
  fenced: string[];
  findings: NodeFinding[];
}

export interface NodeReport {
  path: string;
  verdict: Severity;
  metadata: {
    present: boolean;
    wal: WalReport | null;
    snapshot: SnapshotReport | null;
    superblock: SuperblockReport | null;
    /** Findings about the metadata dir itself (scratch files, a missing dir). */
    findings: NodeFinding[];
  };
  partitions: NodePartitionReport[];
  /** Directories listed but never judged (docs/node.md N0): state/, runtime/, logs/. */
  notDurable: string[];
  crossCheck: { orphanDirs: string[]; missingDirs: string[]; inconclusiveStreams: number[] };
  bootForecast: BootForecastEntry[];
}

/** Every finding of the node section (metadata items and partition dirs). */
export function nodeFindings(report: NodeReport): NodeFinding[] {
  return [
    ...report.metadata.findings,
    ...(report.metadata.snapshot?.findings ?? []),
    ...(report.metadata.superblock?.findings ?? []),
    ...(report.metadata.wal?.findings ?? []),
    ...report.partitions.flatMap(partitionDirFindings),
  ];
}

/** Every finding of one partition dir's entry. */
export function partitionDirFindings(partition: NodePartitionReport): NodeFinding[] {
  return [
    ...(partition.superblock?.findings ?? []),
    ...(partition.purgeGeneration?.findings ?? []),
    ...partition.offsets.flatMap((offset) => offset.findings),
    ...partition.findings,
  ];
}
