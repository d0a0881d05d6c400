/**
 * docs/repair.md §6.2: the repair plan's types — one value for the whole node,
 * plain JSON data (every u64 a decimal string). The planners (plan.ts,
 * plan-partition.ts, plan-node.ts) build it; the runner (runner.ts) applies it.
 */
import type { EngineKind } from "../engine/types.js";
import type { PartitionAction, PartitionVerdict, ScanOptionsUsed, TornEvidence } from "../domain/scan.js";

/** Version of the plan's JSON shape; `parsePlan` refuses any other. */
export const PLAN_VERSION = 2;

/** What a file looked like when the plan was made (null: it did not exist). */
export type ObservedFile = { size: number; mtimeMs: number } | null;

/** A cut of a proven torn tail: a segment's `.log` or the metadata WAL (docs/repair.md §6.2, docs/node.md N7). */
export interface TruncateStep {
  kind: "truncate";
  /** "segment-log": a partition's `.log`; "wal": `metadata/journal.wal`. */
  role: "segment-log" | "wal";
  /** The file, as an absolute path inside the target's dir. */
  file: string;
  /** The segment's start offset (decimal), or null for the WAL. */
  segment: string | null;
  /** "torn-tail", "empty" (a segment with no whole batch) or "wal-torn-tail". */
  reason: "torn-tail" | "empty" | "wal-torn-tail";
  fromSize: number;
  /** The proven prefix P. */
  toSize: number;
  /** `[toSize, fromSize)`: all-zero bytes are recorded by length only, any other bytes are copied first. */
  residue: { bytes: number; allZero: boolean };
  observed: ObservedFile;
}

/**
 * A file replaced whole by staging + rename: a segment index, an offset record
 * (docs/node.md N4), or (salvage, docs/repair.md §6.5) a segment's `.log`
 * rewritten as its kept byte ranges.
 */
export interface ReplaceStep {
  kind: "replace";
  role: "index" | "offset" | "segment-log";
  file: string;
  segment: string | null;
  /**
   * Why: an index-less segment, index entries that disagree with the walk, a
   * partial trailing entry, an offset finding; salvage: the log rewritten
   * (`salvage`), its index kept to the entries inside the proven prefix
   * (`salvage-prefix`) or rebuilt over the new log (`salvage-rebuilt`).
   */
  reason:
    | "index-less"
    | "mismatches"
    | "partial-entry"
    | "empty-segment"
    | "offset-ahead-of-head"
    | "offset-checksum-torn"
    | "salvage"
    | "salvage-prefix"
    | "salvage-rebuilt"
    | "heal";
  /** Size of the file being replaced (0 when absent, or when an earlier step of the target moves it aside). */
  fromSize: number;
  content:
    | { type: "index-entries"; entries: { offset: string; position: number; timestamp: string }[] }
    | { type: "keep-prefix"; bytes: number }
    | { type: "offset-record"; offset: string }
    /** The old file's byte ranges `[from, to)`, copied in order (docs/repair.md §6.5). */
    | { type: "log-ranges"; ranges: { from: number; to: number }[] }
    /**
     * Heal (docs/heal.md): the new log is these byte ranges, in order, of this
     * file (`local`) or of the same-named `.log` in the target's peer partition
     * dir (`peer`, `PlanTarget.heal.peer`).
     */
    | { type: "log-splice"; pieces: HealPiece[] };
  /** For offset files: whose cursor, and the offset the scan read (decimal; null when torn). */
  consumer: ConsumerRef | null;
  observed: ObservedFile;
}

/**
 * A file moved into the preserve dir: a scratch file, an offset file on an
 * empty partition, or (salvage, docs/repair.md §6.5) an index whose entries
 * point into bytes the log rewrite moves, before a new one is written.
 */
export interface MoveAsideStep {
  kind: "move-aside";
  role: "sweep" | "offset" | "index";
  file: string;
  reason: "staging" | "orphan-index" | "offset-on-empty-partition" | "salvage";
  size: number;
  consumer: ConsumerRef | null;
  observed: ObservedFile;
}

/** A copy into the preserve dir of a file the server's next boot will unlink (docs/node.md N4): nothing changes. */
export interface EvidenceCopyStep {
  kind: "evidence-copy";
  role: "offset";
  file: string;
  reason: "offset-corrupt";
  size: number;
  /** How many leading bytes are copied (an offset record is 16 bytes; a huge file's tail is not an offset). */
  copyBytes: number;
  consumer: ConsumerRef | null;
  observed: ObservedFile;
}

export interface ConsumerRef {
  kind: "consumer" | "group";
  id: number;
  /** The stored offset the scan read (decimal), or null when the file holds none. */
  storedOffset: string | null;
}

export type PlanStep = TruncateStep | ReplaceStep | MoveAsideStep | EvidenceCopyStep;

/** The segment state a partition's re-scan must reproduce before anything is changed. */
export interface SegmentFingerprint {
  segment: string;
  logPath: string;
  messagesSize: number;
  indexSize: number;
  walkedSize: number;
  outcome: string;
}

export interface PartitionFingerprint {
  segments: SegmentFingerprint[];
  sweep: string[];
}

/** What the metadata target's re-scan needs to reproduce the WAL verdict (docs/node.md N1). */
export interface WalScanContext {
  snapshotOp: string;
  snapshotOpKnown: boolean;
  superblockCluster: string | null;
  commitMax: string | null;
  replicaCount: number | null;
}

/**
 * docs/repair.md §6.5: one byte range of a salvaged segment's old `.log`, as
 * the scan's scope of loss (docs/recovery.md §3.7) has it: what it holds, and
 * where.
 */
export interface SalvageRange {
  /** The segment's start offset (decimal). */
  segment: string;
  /** Kept: `proven` (the proven prefix) or `intact` (a verified chain after damage); lost: `unreadable` or `torn`. */
  kind: "proven" | "intact" | "unreadable" | "torn";
  /** Byte positions in the old `.log`: `[startPosition, endPosition)`. */
  startPosition: number;
  endPosition: number;
  bytes: number;
  /** The offsets the range holds or hides (decimal); null where it holds none or they are unknown. */
  firstOffset: string | null;
  lastOffset: string | null;
  /** Kept: messages in it (null when the scan did not count them); unreadable: offsets it hides (at most that many messages); torn: what its header claims. */
  messages: number | null;
  /** Torn ranges: what their bytes prove (docs/recovery.md §3.7); null otherwise. */
  tornEvidence: TornEvidence | null;
}

/** docs/repair.md §6.5: what a salvage keeps and what it records as lost, over every salvaged segment, in offset order. */
export interface SalvageRecord {
  kept: SalvageRange[];
  lost: SalvageRange[];
}

/** docs/heal.md: one byte range of a healed log, from the local file or the peer's same-named `.log`. */
export interface HealPiece {
  source: "local" | "peer";
  from: number;
  to: number;
}

/**
 * docs/heal.md: one range of offsets a heal fills from the peer: what the
 * local replica held there, and where the peer's batches that prove it lie.
 */
export interface HealRange {
  /** The segment's start offset (decimal). */
  segment: string;
  /**
   * What the local replica holds there: `unreadable` (damage with intact
   * batches after it), `torn` (a tail no batch follows), `salvage-gap` (offsets
   * a salvage recorded as lost: a forward gap), `held` (offsets a salvage
   * recorded as lost that the local log holds again, equal to the peer's:
   * an earlier heal that stopped before its end).
   */
  kind: "unreadable" | "torn" | "salvage-gap" | "held";
  /** The offsets filled (decimal). */
  firstOffset: string;
  lastOffset: string;
  /** The local bytes replaced: `[localFrom, localTo)` of the old `.log` (equal for a gap). */
  localFrom: number;
  localTo: number;
  /** The peer's batches copied: `[peerFrom, peerTo)` of its `.log`, and how many. */
  peerFrom: number;
  peerTo: number;
  batches: number;
}

/** docs/heal.md: what a heal copies from which peer. */
export interface HealRecord {
  /** The peer partition dir, as a real absolute path; it is only read. */
  peer: string;
  ranges: HealRange[];
}

export interface PlanTarget {
  /** "partition": a partition dir (segments, scratch, offsets); "metadata": the node's `metadata/` dir. */
  kind: "partition" | "metadata";
  /** As the report names it: a partition dir, a lone `.log`, or the metadata dir. */
  path: string;
  /** True when the report describes one `.log` scanned alone. */
  singleSegment: boolean;
  /** The directory whose files the steps change. */
  dir: string;
  /** `<realpath(dir)>.segscan`: preserved bytes, moved files, the journal and the lock. */
  preserveDir: string;
  /** Partition targets with segment steps: what the re-scan must reproduce (null otherwise). */
  fingerprint: PartitionFingerprint | null;
  /** Metadata targets: the WAL scan's context (null otherwise). */
  wal: WalScanContext | null;
  steps: PlanStep[];
  /** Present only on a salvage target (docs/repair.md §6.5, `planSalvage`): what it keeps and records as lost. */
  salvage?: SalvageRecord;
  /** Present only on a heal target (docs/heal.md, `planHeal`): the ranges it fills from which peer. */
  heal?: HealRecord;
}

/** A partition the plan leaves byte for byte untouched, and why. */
export interface SkippedPartition {
  path: string;
  verdict: PartitionVerdict;
  action: PartitionAction;
}

/** A node finding the plan does not act on, and why (docs/node.md N7). */
export interface LeftAlone {
  path: string;
  code: string;
  why: "opt-in" | "held-back" | "symlink" | "not-repairable";
  message: string;
}

/** One boot-forecast effect, as the report's JSON has it (docs/node.md N8). */
export interface ForecastEffect {
  effect: string;
  path: string;
  destructive: boolean;
  detail: string;
}

export interface PlanOptions extends ScanOptionsUsed {
  /** docs/node.md N4: rewrite or move offset files (it changes what a consumer reads next). */
  clampOffsets: boolean;
}

export interface RepairPlan {
  version: typeof PLAN_VERSION;
  segscan: string;
  engine: EngineKind;
  /** The options of the scan the plan came from; `applyRepair` re-scans with the same. */
  options: PlanOptions;
  /** The node root when the scan was of one (docs/node.md N0), else null. */
  nodeRoot: string | null;
  targets: PlanTarget[];
  skipped: SkippedPartition[];
  leftAlone: LeftAlone[];
  /** Node roots: which boot-forecast effects the plan removes and which remain (docs/node.md N8). */
  forecast: { removes: ForecastEffect[]; remains: ForecastEffect[] } | null;
}
