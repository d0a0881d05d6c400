/**
 * The `scan --json` report (SPEC §9.3): u64 offsets and timestamps become
 * decimal strings, byte positions and sizes stay numbers. Library-only fields
 * (`rebuiltIndex`, `ignored`, `bytesScanned` per partition, `singleSegment`)
 * are left out, so the JSON is exactly the documented shape.
 */
import { nodeToJson } from "../node/json.js";
import { type JsonNode, validateNodeJson } from "../node/schema.js";
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
  /** docs/node.md N9: only when the scanned path is a node root. */
  node?: JsonNode;
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
  const json: JsonScanReport = {
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
  if (report.node !== undefined) json.node = nodeToJson(report.node);
  return json;
}

/** JSON text of any value holding bigints (as decimal strings): for plans and dumps. */
export function stringifyJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), indent);
}

// ---------------------------------------------------------------------------
// Shape check of a parsed `scan --json` report (SPEC §9.3), for consumers that
// read a report back and for the tests. Strict: every field is type-checked,
// and no object may carry a key the contract does not name.

const U64_TEXT = /^(0|[1-9][0-9]*)$/;

const REFUSAL_FIELDS: Record<Refusal["code"], Record<string, "u64" | "number">> = {
  InteriorDamage: { segment: "u64", damagePosition: "number", survivorPosition: "number" },
  UnverifiedResidue: {
    segment: "u64", damagePosition: "number", residueBytes: "number", limitUnits: "number", spentUnits: "number", stoppedAt: "number",
  },
  OffsetDiscontinuity: { segment: "u64", position: "number", expectedOffset: "u64", foundOffset: "u64" },
  IndexEntriesNotMonotone: { segment: "u64", entryIndex: "number" },
  IndexEntryBeforeSegmentStart: { segment: "u64", firstEntryOffset: "u64" },
  SizeDivergence: { segment: "u64", indexedOffset: "u64", indexedPosition: "number", messagesSize: "number" },
  EmptyNonTailSegment: { emptyStart: "u64", nextStart: "u64" },
  Hole: { previousStart: "u64", previousEnd: "u64", nextStart: "u64" },
  Overlap: { previousStart: "u64", previousEnd: "u64", nextStart: "u64" },
};

type Check = (value: unknown, at: string, problems: string[]) => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const num: Check = (value, at, problems) => {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) problems.push(`${at}: expected a non-negative integer number, got ${JSON.stringify(value)}`);
};
const anyNumber: Check = (value, at, problems) => {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) problems.push(`${at}: expected a non-negative number, got ${JSON.stringify(value)}`);
};
const str: Check = (value, at, problems) => {
  if (typeof value !== "string") problems.push(`${at}: expected a string, got ${JSON.stringify(value)}`);
};
const bool: Check = (value, at, problems) => {
  if (typeof value !== "boolean") problems.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`);
};
const u64: Check = (value, at, problems) => {
  if (typeof value !== "string" || !U64_TEXT.test(value) || BigInt(value) >= 1n << 64n) {
    problems.push(`${at}: expected a u64 as a decimal string, got ${JSON.stringify(value)}`);
  }
};
const oneOf = (...allowed: string[]): Check => (value, at, problems) => {
  if (typeof value !== "string" || !allowed.includes(value)) problems.push(`${at}: expected one of ${allowed.join("|")}, got ${JSON.stringify(value)}`);
};
const nullable = (check: Check): Check => (value, at, problems) => {
  if (value !== null) check(value, at, problems);
};
const arrayOf = (check: Check): Check => (value, at, problems) => {
  if (!Array.isArray(value)) {
    problems.push(`${at}: expected an array, got ${JSON.stringify(value)}`);
    return;
  }
  value.forEach((item, i) => check(item, `${at}[${i}]`, problems));
};
const object = (fields: Record<string, Check>, optional: Record<string, Check> = {}): Check => (value, at, problems) => {
  if (!isObject(value)) {
    problems.push(`${at}: expected an object, got ${JSON.stringify(value)}`);
    return;
  }
  for (const [key, check] of Object.entries(fields)) {
    if (!(key in value)) problems.push(`${at}.${key}: missing`);
    else check(value[key], `${at}.${key}`, problems);
  }
  for (const [key, check] of Object.entries(optional)) {
    if (key in value) check(value[key], `${at}.${key}`, problems);
  }
  for (const key of Object.keys(value)) {
    if (!(key in fields) && !(key in optional)) problems.push(`${at}.${key}: not part of the report contract`);
  }
};

const refusalCheck: Check = (value, at, problems) => {
  if (!isObject(value) || typeof value.code !== "string" || !(value.code in REFUSAL_FIELDS)) {
    problems.push(`${at}: expected a refusal with a known code, got ${JSON.stringify(value)}`);
    return;
  }
  const fields: Record<string, Check> = { code: str, message: str };
  for (const [key, kind] of Object.entries(REFUSAL_FIELDS[value.code as Refusal["code"]])) fields[key] = kind === "u64" ? u64 : num;
  object(fields)(value, at, problems);
  if (typeof value.message === "string" && value.message.trim().length === 0) problems.push(`${at}.message: empty`);
};

const segmentCheck = object({
  startOffset: u64, endOffset: nullable(u64), startTimestamp: nullable(u64), endTimestamp: nullable(u64),
  messageCount: nullable(num), logPath: str, messagesSize: num, indexSize: num,
  arm: oneOf("indexed", "index-less", "empty-file"),
  outcome: oneOf("clean", "torn-tail", "empty", "refused"),
  walkedSize: num,
  residue: nullable(object({
    damagePosition: num, bytes: num, allZero: bool, probe: oneOf("no-survivor", "survivor", "budget-exhausted"),
    survivorPosition: nullable(num), spentUnits: num,
  })),
  gaps: arrayOf(object({ position: num, expectedOffset: u64, foundOffset: u64 })),
  index: object({ entries: num, trailingBytes: num, rebuilt: bool, rebuiltEntries: num, mismatches: num }),
  refusal: nullable(refusalCheck),
});

const partitionCheck = object({
  path: str,
  verdict: oneOf("clean", "repairable", "refused", "failed"),
  action: oneOf("serve", "repair", "tombstone", "rebuild-from-peers", "retry"),
  refusal: nullable(refusalCheck),
  error: nullable(object({ code: str, path: str, message: str })),
  budget: object({ limitUnits: num, spentUnits: num }),
  sweep: arrayOf(object({ path: str, kind: oneOf("staging", "orphan-index") })),
  segments: arrayOf(segmentCheck),
});

const reportCheck = object({
  segscan: str,
  engine: oneOf("wasm", "ts"),
  options: object({ verify: oneOf("tail", "full"), replicaCount: num, probeBudgetUnits: num, windowBytes: num }, { maxBatchBytes: num }),
  partitions: arrayOf(partitionCheck),
  summary: object({
    partitions: num, clean: num, repairable: num, refused: num, failed: num, bytesScanned: num, elapsedMs: anyNumber,
  }),
}, { node: (value, at, problems) => problems.push(...validateNodeJson(value, at)) });

/**
 * Problems with a parsed JSON value as a SPEC §9.3 report: every field's type,
 * enum values, u64 decimal strings, refusal fields by code, no extra keys, and
 * the summary counts against the partitions. Empty when the shape is right.
 */
export function validateJsonReport(value: unknown): string[] {
  const problems: string[] = [];
  reportCheck(value, "$", problems);
  if (problems.length === 0 && isObject(value) && Array.isArray(value.partitions) && isObject(value.summary)) {
    const partitions = value.partitions as JsonPartition[];
    const summary = value.summary as JsonScanReport["summary"];
    if (summary.partitions !== partitions.length) problems.push(`$.summary.partitions: ${summary.partitions} but ${partitions.length} partitions`);
    for (const verdict of ["clean", "repairable", "refused", "failed"] as const) {
      const count = partitions.filter((partition) => partition.verdict === verdict).length;
      if (summary[verdict] !== count) problems.push(`$.summary.${verdict}: ${summary[verdict]} but ${count} partitions are ${verdict}`);
    }
  }
  return problems;
}
