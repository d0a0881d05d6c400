/**
 * The `scan --json` report (docs/interfaces.md §9.3): u64 offsets and timestamps become
 * decimal strings, byte positions and sizes stay numbers. Library-only fields
 * (`rebuiltIndex`, `bytesScanned` per partition, `singleSegment`, `skipped`) are left
 * out, so the JSON is exactly the shape report/schema.ts defines (the JSON
 * types come from there; ./json-validate.ts checks against it: printing a report
 * loads no schema, docs/benchmarks.md "Cold code").
 */
import { nodeToJson } from "./node-json.js";
import type {
  JsonGap,
  JsonPartition,
  JsonPartitionFinding,
  JsonPartitionScopeRange,
  JsonRefusal,
  JsonResidue,
  JsonScanOptions,
  JsonScanReport,
  JsonSegment,
  JsonSegmentScopeRange,
} from "./schema.js";
import {
  type ForwardGap,
  type PartitionFinding,
  type PartitionReport,
  type PartitionScopeRange,
  type Refusal,
  type Residue,
  type ScanReport,
  type SegmentReport,
  type SegmentScopeRange,
  scanVerdict,
} from "../domain/scan.js";

export type {
  JsonGap,
  JsonIgnoredEntry,
  JsonPartition,
  JsonPartitionFinding,
  JsonPartitionScopeRange,
  JsonRefusal,
  JsonResidue,
  JsonScanError,
  JsonScanOptions,
  JsonScanReport,
  JsonSegment,
  JsonSegmentScopeRange,
  JsonSegmentWarning,
} from "./schema.js";

/** Refusal → JSON: every bigint field (offsets, `segment`) as a decimal string, positions as numbers. */
export function refusalToJson(refusal: Refusal): JsonRefusal {
  const out: Record<string, string | number> = { code: refusal.code, message: refusal.message };
  for (const [key, value] of Object.entries(refusal)) {
    if (key === "code" || key === "message") continue;
    if (typeof value === "bigint") out[key] = value.toString();
    else if (typeof value === "number" || typeof value === "string") out[key] = value;
  }
  // Same keys as the library refusal of this code, bigint fields as strings: REFUSAL_SCHEMAS[code]'s shape.
  return out as JsonRefusal;
}

function residueToJson(residue: Residue): JsonResidue {
  return {
    damagePosition: residue.damagePosition,
    bytes: residue.bytes,
    allZero: residue.allZero,
    probe: residue.probe,
    survivorPosition: residue.survivorPosition,
    spentUnits: residue.spentUnits,
    tornEvidence: residue.tornEvidence,
  };
}

function gapToJson(gap: ForwardGap): JsonGap {
  return { position: gap.position, expectedOffset: gap.expectedOffset.toString(), foundOffset: gap.foundOffset.toString() };
}

const u64OrNull = (value: bigint | null): string | null => (value === null ? null : value.toString());

/** A partition scope range (docs/recovery.md §3.7): offsets as decimal strings. */
export function scopeRangeToJson(range: PartitionScopeRange): JsonPartitionScopeRange {
  return {
    kind: range.kind,
    firstOffset: u64OrNull(range.firstOffset),
    lastOffset: u64OrNull(range.lastOffset),
    messages: range.messages,
    bytes: range.bytes,
    tornEvidence: range.tornEvidence,
  };
}

/** A segment scope range: the partition range's fields, then its positions. */
export function segmentScopeRangeToJson(range: SegmentScopeRange): JsonSegmentScopeRange {
  return { ...scopeRangeToJson(range), startPosition: range.startPosition, endPosition: range.endPosition };
}

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
    warnings: segment.warnings.map((warning) => ({
      code: warning.code,
      position: warning.position,
      batchLength: warning.batchLength,
      message: warning.message,
    })),
    index: {
      entries: segment.index.entries,
      trailingBytes: segment.index.trailingBytes,
      rebuilt: segment.index.rebuilt,
      rebuiltEntries: segment.index.rebuiltEntries,
      mismatches: segment.index.mismatches,
    },
    refusal: segment.refusal === null ? null : refusalToJson(segment.refusal),
    lastBatch:
      segment.lastBatch === null
        ? null
        : { baseOffset: segment.lastBatch.baseOffset.toString(), checksum: segment.lastBatch.checksum.toString() },
    batchChecksumsXxh3: u64OrNull(segment.batchChecksumsXxh3),
    scope: segment.scope.map(segmentScopeRangeToJson),
  };
}

/** A partition finding (docs/repair.md §6.6): its u64 fields as decimal strings. */
export function partitionFindingToJson(finding: PartitionFinding): JsonPartitionFinding {
  if (finding.code === "SalvageRecordUnreadable") {
    return {
      severity: finding.severity,
      code: finding.code,
      path: finding.path,
      message: finding.message,
      nextStep: finding.nextStep,
      nextCommand: null,
    };
  }
  return {
    severity: finding.severity,
    code: finding.code,
    path: finding.path,
    message: finding.message,
    nextStep: finding.nextStep,
    line: finding.line,
    run: finding.run,
    salvagedAt: finding.salvagedAt,
    segment: finding.segment.toString(),
    kind: finding.kind,
    firstOffset: u64OrNull(finding.firstOffset),
    lastOffset: u64OrNull(finding.lastOffset),
    messages: finding.messages,
    bytes: finding.bytes,
    completed: finding.completed,
    nextCommand: [...finding.nextCommand],
  };
}

export function partitionToJson(partition: PartitionReport): JsonPartition {
  return {
    path: partition.path,
    verdict: partition.verdict,
    action: partition.action,
    refusal: partition.refusal === null ? null : refusalToJson(partition.refusal),
    error: partition.error === null ? null : { code: partition.error.code, path: partition.error.path, message: partition.error.message },
    budget: { limitUnits: partition.budget.limitUnits, spentUnits: partition.budget.spentUnits },
    sweep: partition.sweep.map((candidate) => ({ path: candidate.path, kind: candidate.kind })),
    segments: partition.segments.map(segmentToJson),
    ignored: partition.ignored.map((entry) => ({ path: entry.path, kind: entry.kind, message: entry.message })),
    scope: partition.scope.map(scopeRangeToJson),
    nextStep: partition.nextStep,
    findings: partition.findings.map(partitionFindingToJson),
    nextCommand: partition.nextCommand === null ? null : [...partition.nextCommand],
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
  const json: JsonScanReport = {
    segscan: report.segscan,
    engine: report.engine,
    verdict: scanVerdict(report),
    options,
    partitions: report.partitions.map(partitionToJson),
    summary: {
      partitions: report.summary.partitions,
      clean: report.summary.clean,
      repairable: report.summary.repairable,
      refused: report.summary.refused,
      failed: report.summary.failed,
      findings: { warn: report.summary.findings.warn, failed: report.summary.findings.failed },
      bytesScanned: report.summary.bytesScanned,
      elapsedMs: report.summary.elapsedMs,
    },
  };
  if (report.node !== undefined) json.node = nodeToJson(report.node);
  if (report.nodes !== undefined) json.nodes = report.nodes.map(nodeToJson);
  return json;
}

/** JSON text of any value holding bigints (as decimal strings): for plans and dumps. */
export function stringifyJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), indent);
}
