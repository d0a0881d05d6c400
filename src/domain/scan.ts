/**
 * The scan report (docs/interfaces.md §9.3) as library values: u64 offsets and timestamps are
 * bigint, byte positions and sizes are numbers. A domain type: recovery fills
 * it, policy decides on it, repair plans from it, and `toJsonReport`
 * (src/report/json.ts) turns it into the JSON shape with u64 values as decimal strings.
 */
import type { EngineKind } from "../engine/types.js";
import type { ScanError } from "../io/errors.js";
import { type NodeReport, type Severity, worstSeverity } from "./node.js";

export type VerifyMode = "tail" | "full";
export type PartitionVerdict = "clean" | "repairable" | "refused" | "failed";
export type PartitionAction = "serve" | "repair" | "tombstone" | "rebuild-from-peers" | "retry";
export type SegmentArm = "indexed" | "index-less" | "empty-file";
export type SegmentOutcome = "clean" | "torn-tail" | "empty" | "refused";
export type ProbeVerdict = "no-survivor" | "survivor" | "budget-exhausted";

export interface ScanOptionsUsed {
  verify: VerifyMode;
  replicaCount: number;
  probeBudgetUnits: number;
  windowBytes: number;
  /** Present only when a caller overrode MAX_BATCH_BYTES (docs/format.md §2.2: the report records overrides). */
  maxBatchBytes?: number;
}

/** docs/recovery.md §5: every refusal, with its fields. `segment` is the segment's start offset. */
export type Refusal =
  | { code: "InteriorDamage"; message: string; segment: bigint; damagePosition: number; survivorPosition: number }
  | {
      code: "UnverifiedResidue";
      message: string;
      segment: bigint;
      damagePosition: number;
      residueBytes: number;
      limitUnits: number;
      spentUnits: number;
      stoppedAt: number;
    }
  | { code: "OffsetDiscontinuity"; message: string; segment: bigint; position: number; expectedOffset: bigint; foundOffset: bigint }
  | { code: "IndexEntriesNotMonotone"; message: string; segment: bigint; entryIndex: number }
  | { code: "IndexEntryBeforeSegmentStart"; message: string; segment: bigint; firstEntryOffset: bigint }
  | {
      code: "SizeDivergence";
      message: string;
      segment: bigint;
      indexedOffset: bigint;
      indexedPosition: number;
      messagesSize: number;
    }
  | { code: "EmptyNonTailSegment"; message: string; emptyStart: bigint; nextStart: bigint }
  | { code: "Hole"; message: string; previousStart: bigint; previousEnd: bigint; nextStart: bigint }
  | { code: "Overlap"; message: string; previousStart: bigint; previousEnd: bigint; nextStart: bigint };

export type RefusalCode = Refusal["code"];

/** docs/recovery.md §3.6: read failures stop the partition; they are never evidence (defined with ScanFailure, below the report). */
export type { ScanError, ScanErrorCode } from "../io/errors.js";

export interface Residue {
  damagePosition: number;
  bytes: number;
  /**
   * True only when every residue byte was read and found zero. A probe that ran
   * out of budget stops reading, so its residue reports false unless the bytes
   * it read reached the end.
   */
  allZero: boolean;
  probe: ProbeVerdict;
  survivorPosition: number | null;
  spentUnits: number;
}

export interface ForwardGap {
  position: number;
  expectedOffset: bigint;
  foundOffset: bigint;
}

/**
 * Something a scan accepted but wants the operator to know (docs/format.md §2.2).
 * `OversizedBatch`: a batch whose length exceeds `maxBatchBytes` verified (by
 * streaming) and was kept; a server configured with a larger
 * `message_bus.max_message_size` writes such batches.
 */
export interface SegmentWarning {
  code: "OversizedBatch";
  /** Byte position of the batch in the `.log`. */
  position: number;
  /** Its batch_length (header + blob), in bytes. */
  batchLength: number;
  message: string;
}

export interface RebuiltIndexEntry {
  offset: bigint;
  timestamp: bigint;
  position: number;
}

export interface SegmentIndexReport {
  entries: number;
  trailingBytes: number;
  /** True when repair should write a new index (index-less walk, or deep-mode mismatches). */
  rebuilt: boolean;
  rebuiltEntries: number;
  mismatches: number;
}

export interface SegmentReport {
  startOffset: bigint;
  /** Last offset held; for a segment with no messages, startOffset - 1 is not representable, so null. */
  endOffset: bigint | null;
  startTimestamp: bigint | null;
  endTimestamp: bigint | null;
  messageCount: number | null;
  logPath: string;
  messagesSize: number;
  indexSize: number;
  arm: SegmentArm;
  outcome: SegmentOutcome;
  /** The proven prefix P. */
  walkedSize: number;
  residue: Residue | null;
  gaps: ForwardGap[];
  /**
   * Always present, usually empty; in ascending position order. Only batches
   * this scan verified are warned about: tail mode walks from the last index
   * entry, deep mode (`verify: "full"`) from byte 0.
   */
  warnings: SegmentWarning[];
  index: SegmentIndexReport;
  refusal: Refusal | null;
  /**
   * The last verified batch that holds messages: its base offset and its header's
   * batch checksum (null: the scan verified none). Two replicas holding a batch at
   * the same base offset must agree on its checksum (docs/fleet.md, divergence).
   */
  lastBatch: { baseOffset: bigint; checksum: bigint } | null;
  /**
   * Deep mode (`verify: "full"`) only: XXH3-64 over the checksums of every batch
   * the walk from byte 0 verified, in file order (each as 8 little-endian bytes);
   * null in tail mode and where no walk ran (an index refusal, an empty file).
   */
  batchChecksumsXxh3: bigint | null;
  /**
   * Library-only (not in the JSON): the entries repair writes when `index.rebuilt`
   * (docs/recovery.md §3.3 index-less arm, or deep-mode re-derivation), and whole-entry count
   * to keep when only a trailing partial entry is trimmed.
   */
  rebuiltIndex: RebuiltIndexEntry[] | null;
}

export interface SweepCandidate {
  path: string;
  kind: "staging" | "orphan-index";
}

/** A file or link discovery or the listing saw and left alone: reported, never opened, never touched. */
export interface IgnoredEntry {
  path: string;
  kind: "bad-segment-name" | "not-regular-file" | "directory-symlink";
  message: string;
}

export interface PartitionReport {
  path: string;
  verdict: PartitionVerdict;
  action: PartitionAction;
  refusal: Refusal | null;
  error: ScanError | null;
  budget: { limitUnits: number; spentUnits: number };
  sweep: SweepCandidate[];
  segments: SegmentReport[];
  /** Entries the listing saw but will not read (a `.log` not named like a segment, a directory link, …). */
  ignored: IgnoredEntry[];
  /** Library-only: bytes this partition's scan read. */
  bytesScanned: number;
  /** True when this report describes one `.log` scanned alone (no sweep, no contiguity). */
  singleSegment: boolean;
}

export interface ScanSummary {
  partitions: number;
  clean: number;
  repairable: number;
  refused: number;
  failed: number;
  bytesScanned: number;
  elapsedMs: number;
}

export interface ScanReport {
  segscan: string;
  engine: EngineKind;
  options: ScanOptionsUsed;
  partitions: PartitionReport[];
  /** Library-only (not in the JSON): directory links discovery did not follow outside any partition. */
  skipped?: IgnoredEntry[];
  summary: ScanSummary;
  /** docs/node.md N9: present when the scanned path is a node root. */
  node?: NodeReport;
}

/**
 * docs/node.md N0, docs/interfaces.md §9.3: the one verdict of a scan — the
 * worst over its partitions' verdicts and, on a node root, the node's own
 * verdict (metadata plane, offsets, cross-check, which already counts every
 * partition). The text report's first line, its summary line, the HTML
 * headline and the JSON's top-level `verdict` all show this value, and the
 * exit status follows it (cli/exit.ts); a refused node finding is never
 * behind "all clean".
 */
export function scanVerdict(report: {
  summary: Pick<ScanSummary, "failed" | "refused" | "repairable">;
  node?: { verdict: Severity } | undefined;
}): Severity {
  const { failed, refused, repairable } = report.summary;
  const partitions: Severity = failed > 0 ? "failed" : refused > 0 ? "refused" : repairable > 0 ? "repairable" : "clean";
  return report.node === undefined ? partitions : worstSeverity([partitions, report.node.verdict]);
}
