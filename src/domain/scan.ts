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
/** docs/recovery.md §5: a partition's verdicts, best first (the JSON schemas' union is built from this list). */
export const PARTITION_VERDICTS = ["clean", "repairable", "refused", "failed"] as const;
export type PartitionVerdict = (typeof PARTITION_VERDICTS)[number];
/** docs/repair.md §6.1: what to do with a partition (the JSON schemas' union is built from this list). */
export const PARTITION_ACTIONS = ["serve", "repair", "tombstone", "rebuild-from-peers", "retry"] as const;
export type PartitionAction = (typeof PARTITION_ACTIONS)[number];
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

/**
 * What the bytes at a damage position prove about the batch that did not
 * verify there (docs/recovery.md §3.7), in the metadata WAL's words
 * (`tornEvidence`, docs/node.md N1.1). Only `zero-filled` and `short-batch`
 * prove the append never completed (never fsynced, so never acknowledged);
 * `complete-batch` (the header decodes, the length fits, only a checksum
 * fails) and `unverifiable` cannot be told from corruption of an
 * acknowledged batch.
 */
/** docs/recovery.md §3.7: what the bytes at a damage position prove (the JSON schemas' union is built from this list). */
export const TORN_EVIDENCE = ["zero-filled", "short-batch", "complete-batch", "unverifiable"] as const;
export type TornEvidence = (typeof TORN_EVIDENCE)[number];

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
  /** What the bytes at `damagePosition` prove (docs/recovery.md §3.7): the words a torn tail gets. */
  tornEvidence: TornEvidence;
}

/**
 * The kinds of a scope-of-loss range (docs/recovery.md §3.7), in the order a
 * segment's bytes hold them:
 * - `proven`: the proven prefix, a verified chain from the segment's start
 *   (in a partition's scope: from the partition's start, up to the first
 *   `unreadable` or `missing` range);
 * - `unreadable`: bytes segscan cannot prove, hiding the offsets
 *   `firstOffset..lastOffset` (`lastOffset` null: unknown, no survivor bounds them);
 *   also the damaged end of a segment that is not the last, up to the next
 *   segment's start (docs/recovery.md §4 step 3);
 * - `intact`: a verified chain after damage, from a survivor on;
 * - `torn`: a tail no chain-extending batch follows; a repair cuts it when the
 *   segment's outcome is `torn-tail` or `empty` (its offsets are what the
 *   first header claims, null when it does not decode);
 * - `missing` (partition scope only): offsets no segment holds (a Hole, an
 *   empty segment in the middle of the chain).
 */
export type ScopeKind = "proven" | "unreadable" | "intact" | "torn" | "missing";

/**
 * One range of a partition's scope of loss (docs/recovery.md §3.7): offsets
 * and bytes, without positions (it may span segments).
 */
export interface PartitionScopeRange {
  kind: ScopeKind;
  /** First offset of the range; null when it holds no offset, or (torn) the header does not decode. */
  firstOffset: bigint | null;
  /** Last offset; null when it holds none, or is unknown (see `kind`). */
  lastOffset: bigint | null;
  /**
   * `proven`/`intact`: messages the verified batches hold (null when the scan
   * did not walk them all: tail mode before the last index entry);
   * `unreadable`/`missing`: the offsets in firstOffset..lastOffset (at most that
   * many messages are at stake; null when unknown); `torn`: the message count
   * the first header claims (null when it does not decode).
   */
  messages: number | null;
  bytes: number;
  /**
   * `torn` ranges: what their bytes prove (docs/recovery.md §3.7); null for the
   * other kinds, and for a torn range holding only verified batches without a
   * message (an `empty` segment with no residue).
   */
  tornEvidence: TornEvidence | null;
}

/** One range of a segment's scope of loss: a partition range plus where its bytes lie in the `.log`. */
export interface SegmentScopeRange extends PartitionScopeRange {
  /** Byte position in the `.log` of the range's first byte. */
  startPosition: number;
  /** Byte position just past its last byte (`startPosition + bytes`). */
  endPosition: number;
}

/**
 * The damaged range a segment ends in (docs/recovery.md §3.7): a `torn` range
 * whose bytes do not verify, or an `unreadable` one, holding bytes; null when
 * it ends in verified bytes (or in a torn range of verified empty batches).
 */
export function damagedEnd(segment: Pick<SegmentReport, "scope">): SegmentScopeRange | null {
  const last = segment.scope[segment.scope.length - 1];
  if (last === undefined || last.bytes === 0) return null;
  if (last.kind === "unreadable" || (last.kind === "torn" && last.tornEvidence !== null)) return last;
  return null;
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
   * The scope of loss (docs/recovery.md §3.7): ranges tiling `[0, messagesSize)`
   * in byte order, always starting with the `proven` range `[0, walkedSize)`.
   */
  scope: SegmentScopeRange[];
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

/**
 * Something recorded beside a partition's bytes that the operator must know
 * (docs/repair.md §6.6), from the repair journals in its preserve dir:
 *
 * - `SalvageLostOffsets` (warn): a `segscan salvage --apply` dropped these
 *   offsets and recorded them as lost (one finding per lost range). The bytes
 *   left are consistent, so the partition's verdict follows them; the finding
 *   makes the scan's verdict at least `warn` and leads the report until a
 *   restore puts the bytes back or the operator clears it (`segscan forget
 *   <partition> --lost-offsets --apply`).
 * - `SalvageRecordUnreadable` (failed): a journal (or the preserve dir) exists
 *   and cannot be read or trusted, so whether offsets were recorded as lost
 *   is unknown; never read as "nothing lost".
 */
export type PartitionFinding =
  | {
      severity: "warn";
      code: "SalvageLostOffsets";
      /** The journal the loss was read from. */
      path: string;
      message: string;
      nextStep: string;
      /** The journal line of the salvage step's intent, its run and the run's start time (null: the journal has no begin line). */
      line: number;
      run: string;
      salvagedAt: string | null;
      /** The segment (its start offset) the range was dropped from. */
      segment: bigint;
      /** `unreadable`: bytes nothing proved, hiding these offsets; `torn`: a tail no batch followed, what its header claimed. */
      kind: "unreadable" | "torn";
      /** The offsets recorded as lost (null where the journal knows none). */
      firstOffset: bigint | null;
      lastOffset: bigint | null;
      /** At most this many messages (null: unknown). */
      messages: number | null;
      /** Bytes dropped from the old `.log` (kept in its preserved copy until `segscan forget`). */
      bytes: number;
      /** False when the salvage step's `done` line is missing (it may not have taken effect). */
      completed: boolean;
      /** The command `nextStep` names: the one that clears the record, as an argv (a dry run; `--apply` carries it out). */
      nextCommand: string[];
    }
  | {
      severity: "failed";
      code: "SalvageRecordUnreadable";
      /** The journal or preserve dir that could not be read. */
      path: string;
      message: string;
      nextStep: string;
      /** Its step names no command (the journal must be fixed by hand first). */
      nextCommand: null;
    };

export type PartitionFindingCode = PartitionFinding["code"];

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
  /**
   * The partition's scope of loss (docs/recovery.md §3.7): its segments'
   * ranges in offset order, merged across segments, always starting with the
   * `proven` range; empty for a `failed` partition (nothing was concluded).
   */
  scope: PartitionScopeRange[];
  /** What the operator does next, one line (docs/repair.md §6.4, `partitionNext` in src/policy/next-step.ts); a command in it is shell-quoted. */
  nextStep: string;
  /** What the partition's preserve dir records beside its bytes (docs/repair.md §6.6); usually empty. */
  findings: PartitionFinding[];
  /** The command `nextStep` names, as an argv array with the real path (`["segscan", "repair", "/p", "--apply"]`); null when it names none. */
  nextCommand: string[] | null;
}

export interface ScanSummary {
  partitions: number;
  clean: number;
  repairable: number;
  refused: number;
  failed: number;
  /** Partition findings by severity (docs/repair.md §6.6), so a streamed scan's verdict counts them too. */
  findings: PartitionFindingCounts;
  bytesScanned: number;
  elapsedMs: number;
}

/** How many partition findings a scan holds of each severity they take. */
export interface PartitionFindingCounts {
  warn: number;
  failed: number;
}

/** A summary's finding counts, plus those of one partition. */
export function countFindings(counts: PartitionFindingCounts, findings: readonly PartitionFinding[]): void {
  for (const finding of findings) counts[finding.severity]++;
}

export interface ScanReport {
  segscan: string;
  engine: EngineKind;
  options: ScanOptionsUsed;
  partitions: PartitionReport[];
  /** Library-only (not in the JSON): directory links discovery did not follow outside any partition. */
  skipped?: IgnoredEntry[];
  summary: ScanSummary;
  /** docs/node.md N9: the node section, when the scan met exactly one node root (given, or found below a given path). */
  node?: NodeReport;
  /** docs/node.md N0: one node section per node root, in the order met, when the scan met several (then `node` is absent). */
  nodes?: NodeReport[];
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
  summary: Pick<ScanSummary, "failed" | "refused" | "repairable"> & { findings?: PartitionFindingCounts | undefined };
  node?: { verdict: Severity } | undefined;
  nodes?: readonly { verdict: Severity }[] | undefined;
}): Severity {
  const { failed, refused, repairable, findings } = report.summary;
  const partitions: Severity = failed > 0 ? "failed" : refused > 0 ? "refused" : repairable > 0 ? "repairable" : "clean";
  // docs/repair.md §6.6: a recorded loss is never behind "clean", an unreadable record never behind anything but failed.
  const recorded: Severity = (findings?.failed ?? 0) > 0 ? "failed" : (findings?.warn ?? 0) > 0 ? "warn" : "clean";
  return worstSeverity([partitions, recorded, ...scanNodes(report).map((node) => node.verdict)]);
}

/** docs/node.md N0: every node section of a scan, `node` or each of `nodes` (none for a scan that met no node root). */
export function scanNodes<Node>(report: { node?: Node | undefined; nodes?: readonly Node[] | undefined }): readonly Node[] {
  if (report.nodes !== undefined) return report.nodes;
  return report.node === undefined ? [] : [report.node];
}
