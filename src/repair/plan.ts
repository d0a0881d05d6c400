/**
 * docs/repair.md §6.2: the repair plan. `planRepair` is a function of a scan report:
 * it lists, for every partition whose action is `repair` and for no other, the
 * log truncations, index rewrites, index trims and sweeps that make the next
 * scan say clean. Planning writes nothing and reads only the partition dir's
 * real path, for its preserve dir (`realPreserveDirOf`); a dry run is `formatPlan`.
 *
 * The plan carries each partition's fingerprint (every segment's sizes, proven
 * prefix and outcome, and the sweep list, straight from the report), and
 * `applyRepair` re-scans and refuses a plan that no longer matches the files.
 *
 * Empty segments: the log is cut to its proven prefix (0) and the index is
 * left holding no entry: an index with a partial entry is trimmed to 0 bytes,
 * an absent or 0-byte index stays as it is (both scan as "no whole entry", and
 * a freshly created segment has a 0-byte index, so nothing is created).
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";
import { INDEX_ENTRY_BYTES, INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import type { EngineKind } from "../engine/types.js";
import type {
  PartitionAction,
  PartitionReport,
  PartitionVerdict,
  RebuiltIndexEntry,
  ScanOptionsUsed,
  ScanReport,
  SegmentOutcome,
  SegmentReport,
  SweepCandidate,
} from "../domain/scan.js";
import { PlanError } from "./errors.js";

/** Suffix of the preserve directory beside a partition directory (docs/repair.md §6.2). */
export const PRESERVE_DIR_SUFFIX = ".segscan";

export interface LogTruncation {
  segment: bigint;
  logPath: string;
  outcome: "torn-tail" | "empty";
  fromSize: number;
  /** The proven prefix P. */
  toSize: number;
  /** `[toSize, fromSize)`: all-zero bytes are recorded by length only, any other bytes are copied first. */
  residue: { bytes: number; allZero: boolean };
}

export interface IndexRewrite {
  segment: bigint;
  indexPath: string;
  /** Size of the index being replaced (0 when absent). */
  fromSize: number;
  reason: "index-less" | "mismatches";
  entries: RebuiltIndexEntry[];
}

export interface IndexTrim {
  segment: bigint;
  indexPath: string;
  fromSize: number;
  /** Whole entries only. */
  toSize: number;
}

export interface PlannedSweep {
  path: string;
  kind: SweepCandidate["kind"];
}

export interface SegmentFingerprint {
  segment: bigint;
  logPath: string;
  messagesSize: number;
  indexSize: number;
  walkedSize: number;
  outcome: SegmentOutcome;
}

export interface PartitionFingerprint {
  segments: SegmentFingerprint[];
  sweep: string[];
}

export interface PartitionPlan {
  /** The partition's path as the report gives it (a `.log` path when `singleSegment`). */
  path: string;
  singleSegment: boolean;
  /** The directory holding the segment files. */
  dir: string;
  /** `<dir>.segscan`: preserved bytes, moved files and the journal. */
  preserveDir: string;
  fingerprint: PartitionFingerprint;
  truncations: LogTruncation[];
  indexRewrites: IndexRewrite[];
  indexTrims: IndexTrim[];
  sweeps: PlannedSweep[];
}

/** A partition the plan leaves byte-for-byte untouched, and why. */
export interface SkippedPartition {
  path: string;
  verdict: PartitionVerdict;
  action: PartitionAction;
}

export interface RepairPlan {
  segscan: string;
  engine: EngineKind;
  /** The options of the scan the plan came from; `applyRepair` re-scans with the same. */
  options: ScanOptionsUsed;
  partitions: PartitionPlan[];
  skipped: SkippedPartition[];
}

export function preserveDirOf(partitionDir: string): string {
  return partitionDir.replace(/[\\/]+$/, "") + PRESERVE_DIR_SUFFIX;
}

/**
 * The preserve dir of a partition dir as it is on disk: `<realpath>.segscan`
 * (docs/repair.md §6.2). A partition reached through a symlink (the link
 * itself, or any link above it) keeps its preserve dir beside the real
 * directory, so repairing or restoring via the link or via the real path
 * finds the same journal, and deleting the link orphans nothing. A path that
 * does not resolve (it does not exist) keeps its own spelling.
 */
export function realPreserveDirOf(partitionDir: string): string {
  let real: string;
  try {
    real = realpathSync(partitionDir);
  } catch {
    real = path.resolve(partitionDir);
  }
  return preserveDirOf(real);
}

export function indexPathOf(logPath: string): string {
  return logPath.slice(0, logPath.length - LOG_SUFFIX.length) + INDEX_SUFFIX;
}

export function planRepair(report: ScanReport): RepairPlan {
  const partitions: PartitionPlan[] = [];
  const skipped: SkippedPartition[] = [];
  for (const partition of report.partitions) {
    if (partition.action === "repair") partitions.push(planPartition(partition));
    else skipped.push({ path: partition.path, verdict: partition.verdict, action: partition.action });
  }
  return { segscan: report.segscan, engine: report.engine, options: { ...report.options }, partitions, skipped };
}

/** The plan of one partition whose action is `repair` (throws `PlanError` for any other). */
export function planPartition(partition: PartitionReport): PartitionPlan {
  if (partition.action !== "repair") {
    throw new PlanError(`partition ${partition.path} is not to be repaired (action ${partition.action})`, { path: partition.path });
  }
  const firstLog = partition.segments[0]?.logPath;
  const dir = partition.singleSegment && firstLog !== undefined ? path.dirname(firstLog) : partition.path;
  const plan: PartitionPlan = {
    path: partition.path,
    singleSegment: partition.singleSegment,
    dir,
    preserveDir: realPreserveDirOf(dir),
    fingerprint: {
      segments: partition.segments.map((s) => ({
        segment: s.startOffset,
        logPath: s.logPath,
        messagesSize: s.messagesSize,
        indexSize: s.indexSize,
        walkedSize: s.walkedSize,
        outcome: s.outcome,
      })),
      sweep: partition.sweep.map((s) => s.path),
    },
    truncations: [],
    indexRewrites: [],
    indexTrims: [],
    sweeps: partition.sweep.map((s) => ({ path: s.path, kind: s.kind })),
  };
  // Repair writes only inside the partition dir and its preserve dir.
  for (const file of [...partition.segments.map((s) => s.logPath), ...partition.sweep.map((s) => s.path)]) {
    if (path.resolve(path.dirname(file)) !== path.resolve(dir)) {
      throw new PlanError(`${file} is not in the partition directory ${dir}`, { path: file });
    }
  }
  for (const segment of partition.segments) planSegment(segment, plan);
  return plan;
}

function planSegment(segment: SegmentReport, plan: PartitionPlan): void {
  const context = { path: segment.logPath, segment: segment.startOffset };
  if (!segment.logPath.endsWith(LOG_SUFFIX)) {
    throw new PlanError(`segment ${segment.startOffset} has a log path without the ${LOG_SUFFIX} suffix`, context);
  }
  if (segment.outcome === "refused") {
    throw new PlanError(`segment ${segment.startOffset} is refused, yet its partition's action is repair`, context);
  }
  if (segment.walkedSize > segment.messagesSize || segment.walkedSize < 0) {
    throw new PlanError(
      `segment ${segment.startOffset}: proven prefix ${segment.walkedSize} is outside the log's ${segment.messagesSize} bytes`,
      { ...context, position: segment.walkedSize },
    );
  }
  const indexPath = indexPathOf(segment.logPath);

  if (segment.walkedSize < segment.messagesSize) {
    if (segment.outcome === "clean") {
      throw new PlanError(
        `segment ${segment.startOffset} is clean but proven only to ${segment.walkedSize} of ${segment.messagesSize} bytes`,
        { ...context, position: segment.walkedSize },
      );
    }
    const bytes = segment.messagesSize - segment.walkedSize;
    const residue = segment.residue;
    // The report's residue starts at the cut point; anything else (an empty
    // outcome cut below its residue) is copied whole rather than assumed zero.
    const allZero = residue !== null && residue.damagePosition === segment.walkedSize && residue.bytes === bytes && residue.allZero;
    plan.truncations.push({
      segment: segment.startOffset,
      logPath: segment.logPath,
      outcome: segment.outcome,
      fromSize: segment.messagesSize,
      toSize: segment.walkedSize,
      residue: { bytes, allZero },
    });
  }

  if (segment.outcome === "empty") {
    if (segment.indexSize > 0) {
      plan.indexTrims.push({ segment: segment.startOffset, indexPath, fromSize: segment.indexSize, toSize: 0 });
    }
    return;
  }
  if (segment.index.rebuilt) {
    if (segment.rebuiltIndex === null) {
      throw new PlanError(`segment ${segment.startOffset} needs a rebuilt index but the report holds no entries`, {
        path: indexPath,
        segment: segment.startOffset,
      });
    }
    plan.indexRewrites.push({
      segment: segment.startOffset,
      indexPath,
      fromSize: segment.indexSize,
      reason: segment.index.mismatches > 0 ? "mismatches" : "index-less",
      entries: segment.rebuiltIndex.map((e) => ({ ...e })),
    });
  } else if (segment.index.trailingBytes > 0) {
    const toSize = segment.indexSize - segment.index.trailingBytes;
    if (toSize < 0 || toSize % INDEX_ENTRY_BYTES !== 0) {
      throw new PlanError(
        `segment ${segment.startOffset}: index of ${segment.indexSize} bytes cannot lose ${segment.index.trailingBytes} trailing bytes and keep whole entries`,
        { path: indexPath, segment: segment.startOffset, position: toSize },
      );
    }
    plan.indexTrims.push({ segment: segment.startOffset, indexPath, fromSize: segment.indexSize, toSize });
  }
}

export function isEmptyPlan(plan: RepairPlan): boolean {
  return plan.partitions.length === 0;
}

/** Any value with bigints turned into decimal strings (the JSON form of docs/interfaces.md §9.3). */
export type Jsonified<T> = T extends bigint
  ? string
  : T extends (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;

function jsonify(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(jsonify);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = jsonify(inner);
    return out;
  }
  return value;
}

/** The plan as JSON-safe data: u64 values as decimal strings, sizes and positions as numbers. */
export function planToJson(plan: RepairPlan): Jsonified<RepairPlan> {
  return jsonify(plan) as Jsonified<RepairPlan>;
}

/**
 * The first difference between two partition plans, as a JSON path with both
 * values, or null when they are the same plan.
 */
export function diffPartitionPlans(expected: PartitionPlan, actual: PartitionPlan): string | null {
  return firstDifference(jsonify(expected), jsonify(actual), "");
}

function firstDifference(a: unknown, b: unknown, at: string): string | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const d = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
      if (d !== null) return d;
    }
    return null;
  }
  return Object.is(a, b) ? null : `${at || "."}: planned ${JSON.stringify(a)}, found ${JSON.stringify(b)}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The human form of a plan: what a dry run prints. */
export function formatPlan(plan: RepairPlan): string {
  const lines: string[] = [];
  if (plan.partitions.length === 0) {
    lines.push("Repair plan: nothing to repair.");
  } else {
    lines.push(`Repair plan: ${plural(plan.partitions.length, "partition")} to repair.`);
  }
  for (const p of plan.partitions) {
    lines.push("", `partition ${p.path}`, `  preserve into ${p.preserveDir}${path.sep} (journal: journal.jsonl)`);
    for (const s of p.sweeps) {
      lines.push(`  sweep ${path.basename(s.path)} (${s.kind}): move into the preserve dir`);
    }
    for (const t of p.truncations) {
      const name = path.basename(t.logPath);
      const kept = t.residue.allZero
        ? `${plural(t.residue.bytes, "zero byte")}, recorded by length`
        : `${plural(t.residue.bytes, "byte")}, copied to ${name}.${t.toSize}.residue first`;
      const why = t.outcome === "empty" ? "empty segment: no whole batch" : "torn tail";
      lines.push(`  truncate ${name}: ${t.fromSize} -> ${t.toSize} bytes (${why}; cut ${kept})`);
    }
    for (const r of p.indexRewrites) {
      const why = r.reason === "index-less" ? "rebuilt from the walk" : "index disagreed with the walk";
      const old = r.fromSize > 0 ? `; the old ${r.fromSize}-byte index is kept` : "";
      lines.push(
        `  rewrite ${path.basename(r.indexPath)}: ${plural(r.entries.length, "entry")}, ${r.entries.length * INDEX_ENTRY_BYTES} bytes (${why}${old})`,
      );
    }
    for (const t of p.indexTrims) {
      lines.push(
        `  trim ${path.basename(t.indexPath)}: ${t.fromSize} -> ${t.toSize} bytes (partial trailing entry; the old index is kept)`,
      );
    }
  }
  if (plan.skipped.length > 0) {
    // Problems are listed one by one; clean partitions only by count (a data dir can hold thousands).
    const problems = plan.skipped.filter((s) => s.verdict !== "clean");
    const cleanCount = plan.skipped.length - problems.length;
    lines.push("", "left untouched:");
    for (const s of problems) lines.push(`  ${s.path}: ${s.verdict}, action ${s.action}`);
    if (cleanCount > 0) lines.push(`  ${cleanCount} clean partition${cleanCount === 1 ? "" : "s"}: action serve`);
  }
  return lines.join("\n") + "\n";
}
