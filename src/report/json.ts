/**
 * The `scan --json` report (SPEC §9.3): u64 offsets and timestamps become
 * decimal strings, byte positions and sizes stay numbers. Library-only fields
 * (`rebuiltIndex`, `ignored`, `bytesScanned` per partition, `singleSegment`)
 * are left out, so the JSON is exactly the documented shape.
 */
import type {
  ForwardGap, PartitionReport, Refusal, Residue, ScanError, ScanReport, SegmentReport,
} from "./types.js";

export interface JsonScanOptions {
  verify: "tail" | "full";
  replicaCount: number;
  probeBudgetUnits: number;
  windowBytes: number;
  /** Only when a caller overrode MAX_BATCH_BYTES (SPEC §2.2). */
  maxBatchBytes?: number;
}

/** A refusal with bigint fields as decimal strings; `code` and `message` always present. */
export type JsonRefusal = { code: Refusal["code"]; message: string } & Record<string, string | number>;

export interface JsonResidue {
  damagePosition: number;
  bytes: number;
  allZero: boolean;
  probe: Residue["probe"];
  survivorPosition: number | null;
  spentUnits: number;
}

export interface JsonGap {
  position: number;
  expectedOffset: string;
  foundOffset: string;
}

export interface JsonSegment {
  startOffset: string;
  endOffset: string | null;
  startTimestamp: string | null;
  endTimestamp: string | null;
  messageCount: number | null;
  logPath: string;
  messagesSize: number;
  indexSize: number;
  arm: SegmentReport["arm"];
  outcome: SegmentReport["outcome"];
  walkedSize: number;
  residue: JsonResidue | null;
  gaps: JsonGap[];
  index: { entries: number; trailingBytes: number; rebuilt: boolean; rebuiltEntries: number; mismatches: number };
  refusal: JsonRefusal | null;
}

export interface JsonPartition {
  path: string;
  verdict: PartitionReport["verdict"];
  action: PartitionReport["action"];
  refusal: JsonRefusal | null;
  error: { code: ScanError["code"]; path: string; message: string } | null;
  budget: { limitUnits: number; spentUnits: number };
  sweep: { path: string; kind: "staging" | "orphan-index" }[];
  segments: JsonSegment[];
}

export interface JsonScanReport {
  segscan: string;
  engine: ScanReport["engine"];
  options: JsonScanOptions;
  partitions: JsonPartition[];
  summary: {
    partitions: number; clean: number; repairable: number; refused: number; failed: number;
    bytesScanned: number; elapsedMs: number;
  };
}

/** Refusal → JSON: every bigint field (offsets, `segment`) as a decimal string, positions as numbers. */
export function refusalToJson(refusal: Refusal): JsonRefusal {
  const out: JsonRefusal = { code: refusal.code, message: refusal.message };
  for (const [key, value] of Object.entries(refusal)) {
    if (key === "code" || key === "message") continue;
    if (typeof value === "bigint") out[key] = value.toString();
    else if (typeof value === "number" || typeof value === "string") out[key] = value;
  }
  return out;
}

function residueToJson(residue: Residue): JsonResidue {
  return {
    damagePosition: residue.damagePosition,
    bytes: residue.bytes,
    allZero: residue.allZero,
    probe: residue.probe,
    survivorPosition: residue.survivorPosition,
    spentUnits: residue.spentUnits,
  };
}

function gapToJson(gap: ForwardGap): JsonGap {
  return { position: gap.position, expectedOffset: gap.expectedOffset.toString(), foundOffset: gap.foundOffset.toString() };
}

const u64OrNull = (value: bigint | null): string | null => (value === null ? null : value.toString());

export function segmentToJson(segment: SegmentReport): JsonSegment {
  return {
    startOffset: segment.startOffset.toString(),
    endOffset: u64OrNull(segment.endOffset),
    startTimestamp: u64OrNull(segment.startTimestamp),
    endTimestamp: u64OrNull(segment.endTimestamp),
    messageCount: segment.messageCount,
    logPath: segment.logPath,
    messagesSize: segment.messagesSize,
    indexSize: segment.indexSize,
    arm: segment.arm,
    outcome: segment.outcome,
    walkedSize: segment.walkedSize,
    residue: segment.residue === null ? null : residueToJson(segment.residue),
    gaps: segment.gaps.map(gapToJson),
    index: {
      entries: segment.index.entries,
      trailingBytes: segment.index.trailingBytes,
      rebuilt: segment.index.rebuilt,
      rebuiltEntries: segment.index.rebuiltEntries,
      mismatches: segment.index.mismatches,
    },
    refusal: segment.refusal === null ? null : refusalToJson(segment.refusal),
  };
}

export function partitionToJson(partition: PartitionReport): JsonPartition {
  return {
    path: partition.path,
    verdict: partition.verdict,
    action: partition.action,
    refusal: partition.refusal === null ? null : refusalToJson(partition.refusal),
    error: partition.error === null
      ? null
      : { code: partition.error.code, path: partition.error.path, message: partition.error.message },
    budget: { limitUnits: partition.budget.limitUnits, spentUnits: partition.budget.spentUnits },
    sweep: partition.sweep.map((candidate) => ({ path: candidate.path, kind: candidate.kind })),
    segments: partition.segments.map(segmentToJson),
  };
}

export function toJsonReport(report: ScanReport): JsonScanReport {
  const options: JsonScanOptions = {
    verify: report.options.verify,
    replicaCount: report.options.replicaCount,
    probeBudgetUnits: report.options.probeBudgetUnits,
    windowBytes: report.options.windowBytes,
  };
  if (report.options.maxBatchBytes !== undefined) options.maxBatchBytes = report.options.maxBatchBytes;
  return {
    segscan: report.segscan,
    engine: report.engine,
    options,
    partitions: report.partitions.map(partitionToJson),
    summary: {
      partitions: report.summary.partitions,
      clean: report.summary.clean,
      repairable: report.summary.repairable,
      refused: report.summary.refused,
      failed: report.summary.failed,
      bytesScanned: report.summary.bytesScanned,
      elapsedMs: report.summary.elapsedMs,
    },
  };
}

/** JSON text of any value holding bigints (as decimal strings): for plans and dumps. */
export function stringifyJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), indent);
}
