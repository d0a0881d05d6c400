/** What a scrub can find (docs/scrub.md §4, §4.1), and the event stream it yields. */
import type { FindingValue, Severity } from "../domain/node.js";

export const FINDING_CODES = [
  /** A complete batch inside the verified range whose batch checksum does not match (bit rot). */
  "BatchChecksumFailure",
  /** A frame (message) checksum inside a batch does not match. */
  "FrameChecksumFailure",
  /** A batch header that does not decode (length out of range, reserved bytes not zero). */
  "BatchHeaderInvalid",
  /** Frames that do not tile the batch (count, overrun, reserved bytes). */
  "FrameLayoutInvalid",
  /** A sealed segment that ends inside a batch. */
  "TruncatedBatch",
  /**
   * The active segment ends in bytes that do not verify, no verified batch
   * follows them, and it has been left alone for the settle time: no append
   * is in progress, so this is what `scan` reports as a torn tail (docs/scrub.md §1).
   */
  "TornTail",
  /** A verified batch below the offset the chain had reached. */
  "OffsetDiscontinuity",
  /** An index entry that does not sit on a verified batch start with the same base offset. */
  "IndexEntryMismatch",
  /** A settled segment's index (sealed, or active and left alone for the settle time) whose size is not a whole number of entries. */
  "IndexTrailingBytes",
  /** A sealed segment (immutable) whose size, mtime, inode or bytes changed since it was verified. */
  "SealedSegmentChanged",
  /** A segment that became shorter while the scrub read it. */
  "SegmentShrank",
  /** A file or directory that could not be opened, listed or read. */
  "UnreadableFile",
] as const;

export type FindingCode = (typeof FINDING_CODES)[number];

/**
 * The node items a scrub of a node root checks (docs/scrub.md §1.1), the
 * `item` label of the node metrics: a fixed set, so the label stays bounded.
 * `layout` is the partition tree itself (orphan, missing and fenced dirs, a
 * missing metadata/, an unlistable streams/ dir).
 */
export const NODE_ITEMS = ["wal", "snapshot", "superblock", "partition-superblock", "offsets", "purge-gen", "layout"] as const;
export type NodeItem = (typeof NODE_ITEMS)[number];

/** The severities a node finding can have (docs/node.md N0), mildest first. */
export const NODE_SEVERITIES = ["info", "warn", "repairable", "refused", "failed"] as const;
export type NodeSeverity = (typeof NODE_SEVERITIES)[number];

/** Node severities that make a finding count (exit 4, or 8 for `failed`): the node verdicts `scan` exits non-zero on. */
export const COUNTED_NODE_SEVERITIES: ReadonlySet<Severity> = new Set(["repairable", "refused", "failed"]);

export interface ScrubFinding {
  /** A segment code (FINDING_CODES), or for a node finding (`item` set) its docs/node.md code. */
  code: FindingCode | (string & {});
  /** The file the finding is about (a `.log`, its `.index`, or a directory). */
  path: string;
  /** Byte position in `path` (a batch start, an index entry's byte), or null when the whole file is meant. */
  position: number | null;
  /** The segment (`.log`) it belongs to, when it belongs to one. */
  segmentPath: string | null;
  message: string;
  /** Node findings only (docs/scrub.md §1.1): the node item it is about. */
  item?: NodeItem;
  /** Node findings only: its docs/node.md severity. `info` and `warn` are reported but exit 0, as with `scan`. */
  severity?: NodeSeverity;
  /**
   * Node findings: the code-specific fields of docs/node.md (u64 values are
   * bigint; `--json` prints them as strings). `TornTail`: `tornEvidence` and `residueBytes`.
   */
  details?: Record<string, FindingValue>;
  /** What to do next, one sentence; a segscan command in it is shell-quoted (`nextStepArgv`, pasteable as printed). */
  nextStep?: string;
  /** The command `nextStep` names, as an argv array (for machines: no quoting to undo). */
  nextStepArgv?: string[];
}

/** Why a node finding seen this pass is not reported yet (docs/scrub.md §1.1); the next pass judges it again. */
export type DeferReason =
  /** The file was modified within the settle time: the server may be writing it (a WAL append, a checkpoint, unflushed messages). */
  | "settling"
  /** The first look saw it, a second look right after did not: a write in progress, not damage. */
  | "unconfirmed";

export const DEFER_REASONS: readonly DeferReason[] = ["settling", "unconfirmed"];

export interface NodeDeferredEvent {
  type: "node-deferred";
  item: NodeItem;
  code: string;
  severity: NodeSeverity;
  path: string;
  reason: DeferReason;
  message: string;
}

/** The node check of a pass is done (a node root only): how many node findings it reported and deferred. */
export interface NodeCheckedEvent {
  type: "node-checked";
  path: string;
  /** Node findings reported, of any severity. */
  findings: number;
  deferred: number;
  /** 1, or 2 when the first look found something and a second look confirmed it. */
  looks: number;
}

export interface SegmentVerifiedEvent {
  type: "segment-verified";
  path: string;
  sealed: boolean;
  /** Where this verification started: 0, or where an earlier pass stopped on a still-active segment. */
  fromPosition: number;
  /** Bytes proven from byte 0 after this verification. */
  verifiedBytes: number;
  /** The size the segment had when the scrub reached it (the bytes considered). */
  frozenSize: number;
  batches: number;
  messages: number;
  /** XXH3-64 of a clean sealed segment's bytes (16 hex digits), else null. */
  xxh3: string | null;
  /** Bytes of a batch still being appended at the end of an active segment (normal; not verified). */
  inFlightBytes: number;
  findings: number;
}

export interface SegmentSkippedEvent {
  type: "segment-skipped";
  path: string;
  reason: "unchanged" | "deleted";
  message: string;
}

export interface FindingEvent {
  type: "finding";
  finding: ScrubFinding;
}

export interface StateIgnoredEvent {
  type: "state-ignored";
  path: string;
  message: string;
}

export interface PassSummary {
  startedAt: string;
  finishedAt: string;
  elapsedMs: number;
  /** False when the pass was stopped (signal) before visiting every segment. */
  complete: boolean;
  segmentsVerified: number;
  segmentsSkipped: number;
  segmentsDeleted: number;
  /** Bytes proven by this pass's walks. */
  bytesVerified: number;
  /** Bytes read from disk (log and index), the figure the rate limit applies to. */
  bytesRead: number;
  /** Bytes read per second of the pass. */
  bytesPerSecond: number;
  findingsByCode: Record<FindingCode, number>;
  findings: number;
  statePath: string | null;
  /** When the last pass that visited every segment finished (this one, when complete). */
  lastFullPassAt: string | null;
  /**
   * When the last complete pass finished that read every file it meant to (no
   * UnreadableFile, no `failed` node finding): this one, or an earlier one the
   * state remembers. Findings about the bytes do not make a pass fail.
   */
  lastSuccessAt: string | null;
  /** Cumulative over every pass the state file remembers. */
  totals: { bytesVerified: number; segmentsVerified: number; passesCompleted: number };
  /**
   * Partitions with a segment finding this pass (path order), and how many
   * findings each: the metrics' `partition` label (docs/scrub.md §5).
   */
  failingPartitions: { partition: string; findings: number }[];
  /** The node check (docs/scrub.md §1.1), or null when the path is no node root (or the pass stopped before it). */
  node: NodeCheckSummary | null;
}

export interface NodeCheckSummary {
  /** Node findings reported, by item and severity (every pair present, 0 included). */
  findings: Record<NodeItem, Record<NodeSeverity, number>>;
  /** The counted ones (repairable, refused, failed) in report order: item, code, severity and path (metrics' path labels). */
  failing: { item: NodeItem; code: string; severity: NodeSeverity; path: string }[];
  deferred: Record<DeferReason, number>;
}

export interface PassCompleteEvent {
  type: "pass-complete";
  summary: PassSummary;
}

export type ScrubEvent =
  | SegmentVerifiedEvent
  | SegmentSkippedEvent
  | FindingEvent
  | StateIgnoredEvent
  | NodeDeferredEvent
  | NodeCheckedEvent
  | PassCompleteEvent;

export function zeroFindingCounts(): Record<FindingCode, number> {
  return Object.fromEntries(FINDING_CODES.map((code) => [code, 0])) as Record<FindingCode, number>;
}

export function emptyNodeCheckSummary(): NodeCheckSummary {
  const bySeverity = (): Record<NodeSeverity, number> =>
    Object.fromEntries(NODE_SEVERITIES.map((severity) => [severity, 0])) as Record<NodeSeverity, number>;
  return {
    findings: Object.fromEntries(NODE_ITEMS.map((item) => [item, bySeverity()])) as Record<NodeItem, Record<NodeSeverity, number>>,
    failing: [],
    deferred: { settling: 0, unconfirmed: 0 },
  };
}

/**
 * What a pass's findings mean for the exit status (docs/scrub.md §4):
 * `problems` (exit 4) are segment findings other than UnreadableFile and node
 * findings that are `repairable` or `refused`; `failures` (exit 8) are
 * UnreadableFile and `failed` node findings. Node `info` and `warn` findings
 * are neither: reported, exit 0, as `scan` treats them.
 */
export function passOutcome(summary: PassSummary): { problems: number; failures: number } {
  const segmentFindings = FINDING_CODES.reduce((sum, code) => sum + summary.findingsByCode[code], 0);
  const node = summary.node;
  const nodeCount = (severity: NodeSeverity): number =>
    node === null ? 0 : NODE_ITEMS.reduce((sum, item) => sum + node.findings[item][severity], 0);
  return {
    problems: segmentFindings - summary.findingsByCode.UnreadableFile + nodeCount("repairable") + nodeCount("refused"),
    failures: summary.findingsByCode.UnreadableFile + nodeCount("failed"),
  };
}
