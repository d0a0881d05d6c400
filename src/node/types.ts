/**
 * The whole-node report (docs/node.md N0, N9) as library values: u64 values are
 * bigint, byte positions and sizes numbers. `nodeToJson` (src/node/json.ts)
 * turns it into the JSON shape with u64 values as decimal strings.
 */

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

export type SlotState =
  | { kind: "absent" }
  | { kind: "valid"; sequence: bigint; payload: Uint8Array }
  | { kind: "corrupt"; version: number | null; reason: string }
  | { kind: "failed"; reason: string };

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

export interface NodePartitionReport {
  path: string;
  superblock: SuperblockReport | null;
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
