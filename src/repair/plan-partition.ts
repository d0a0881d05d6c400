/**
 * docs/repair.md §6.2: a partition's segment steps, a pure function of its
 * scan report (action `repair` only). Steps come in the order they run: sweeps
 * (move-aside), then log cuts, then index replacements.
 *
 * Empty segments: the log is cut to its proven prefix (0) and the index is
 * left holding no entry: an index with a partial entry is trimmed to 0 bytes,
 * an absent or 0-byte index stays as it is (both scan as "no whole entry", and
 * a freshly created segment has a 0-byte index, so nothing is created).
 */
import * as path from "node:path";
import { INDEX_ENTRY_BYTES, LOG_SUFFIX } from "../format/constants.js";
import type { PartitionReport, SegmentReport } from "../domain/scan.js";
import { PlanError } from "./errors.js";
import type { PartitionFingerprint, PlanTarget } from "./schema.js";
import type { MoveAsideStep, ReplaceStep, TruncateStep } from "./steps/index.js";
import { indexPathOf, realPreserveDirOf } from "./preserve-dir.js";

/**
 * The sweep steps of a partition whose files all lie in `dir`: a repair or a
 * salvage writes only inside the partition dir and its preserve dir.
 */
export function sweepStepsIn(partition: PartitionReport, dir: string): MoveAsideStep[] {
  for (const file of [...partition.segments.map((s) => s.logPath), ...partition.sweep.map((s) => s.path)]) {
    if (path.resolve(path.dirname(file)) !== path.resolve(dir)) {
      throw new PlanError(`${file} is not in the partition directory ${dir}`, { path: file });
    }
  }
  return partition.sweep.map((s) => ({
    kind: "move-aside",
    role: "sweep",
    file: s.path,
    reason: s.kind,
    size: 0,
    consumer: null,
    observed: null,
  }));
}

/** The target of one partition whose action is `repair` (throws `PlanError` for any other). */
export function planPartitionTarget(partition: PartitionReport): PlanTarget {
  if (partition.action !== "repair") {
    throw new PlanError(`partition ${partition.path} is not to be repaired (action ${partition.action})`, { path: partition.path });
  }
  const firstLog = partition.segments[0]?.logPath;
  const dir = partition.singleSegment && firstLog !== undefined ? path.dirname(firstLog) : partition.path;
  const sweeps = sweepStepsIn(partition, dir);
  const cuts: TruncateStep[] = [];
  const indexes: ReplaceStep[] = [];
  for (const segment of partition.segments) planSegment(segment, cuts, indexes);
  return partitionTargetOf(partition, dir, [...sweeps, ...cuts, ...indexes]);
}

/** A partition's target: its steps, in the order they run, changing files of `dir`, and the segment state a re-scan must reproduce. */
export function partitionTargetOf(partition: PartitionReport, dir: string, steps: PlanTarget["steps"]): PlanTarget {
  return {
    kind: "partition",
    path: partition.path,
    singleSegment: partition.singleSegment,
    dir,
    preserveDir: realPreserveDirOf(dir),
    fingerprint: fingerprintOf(partition),
    wal: null,
    steps,
  };
}

/** The segment state a re-scan must reproduce (docs/repair.md §6.2 step 0). */
export function fingerprintOf(partition: PartitionReport): PartitionFingerprint {
  return {
    segments: partition.segments.map((s) => ({
      segment: s.startOffset.toString(),
      logPath: s.logPath,
      messagesSize: s.messagesSize,
      indexSize: s.indexSize,
      walkedSize: s.walkedSize,
      outcome: s.outcome,
    })),
    sweep: partition.sweep.map((s) => s.path),
  };
}

/** One segment's steps (a segment that is not refused): its log cut, and its index rewrite or trim. */
export function planSegment(segment: SegmentReport, cuts: TruncateStep[], indexes: ReplaceStep[]): void {
  const segmentId = segment.startOffset.toString();
  const context = { path: segment.logPath, segment: segment.startOffset };
  if (!segment.logPath.endsWith(LOG_SUFFIX)) {
    throw new PlanError(`segment ${segmentId} has a log path without the ${LOG_SUFFIX} suffix`, context);
  }
  if (segment.outcome === "refused") {
    throw new PlanError(`segment ${segmentId} is refused, yet its partition's action is repair`, context);
  }
  if (segment.walkedSize > segment.messagesSize || segment.walkedSize < 0) {
    throw new PlanError(`segment ${segmentId}: proven prefix ${segment.walkedSize} is outside the log's ${segment.messagesSize} bytes`, {
      ...context,
      position: segment.walkedSize,
    });
  }
  const cut = cutStep(segment, segmentId, context);
  if (cut !== null) cuts.push(cut);
  const index = indexStep(segment, segmentId);
  if (index !== null) indexes.push(index);
}

/** The segment's log cut to its proven prefix, or null when the whole log is proven. */
function cutStep(segment: SegmentReport, segmentId: string, context: { path: string; segment: bigint }): TruncateStep | null {
  if (segment.walkedSize >= segment.messagesSize) return null;
  if (segment.outcome === "clean") {
    throw new PlanError(`segment ${segmentId} is clean but proven only to ${segment.walkedSize} of ${segment.messagesSize} bytes`, {
      ...context,
      position: segment.walkedSize,
    });
  }
  const bytes = segment.messagesSize - segment.walkedSize;
  const residue = segment.residue;
  // The report's residue starts at the cut point; anything else (an empty
  // outcome cut below its residue) is copied whole rather than assumed zero.
  const allZero = residue !== null && residue.damagePosition === segment.walkedSize && residue.bytes === bytes && residue.allZero;
  return {
    kind: "truncate",
    role: "segment-log",
    file: segment.logPath,
    segment: segmentId,
    reason: segment.outcome === "empty" ? "empty" : "torn-tail",
    fromSize: segment.messagesSize,
    toSize: segment.walkedSize,
    residue: { bytes, allZero },
    observed: null,
  };
}

/** A replace of the segment's index (its `.index` beside the log) with `content`. */
export function indexReplaceStep(segment: SegmentReport, reason: ReplaceStep["reason"], content: ReplaceStep["content"]): ReplaceStep {
  return {
    kind: "replace",
    role: "index",
    file: indexPathOf(segment.logPath),
    segment: segment.startOffset.toString(),
    reason,
    fromSize: segment.indexSize,
    content,
    consumer: null,
    observed: null,
  };
}

/** The segment's index rewrite (rebuilt entries) or trim (a partial entry, an empty segment's index), or null. */
function indexStep(segment: SegmentReport, segmentId: string): ReplaceStep | null {
  const indexPath = indexPathOf(segment.logPath);
  if (segment.outcome === "empty") {
    return segment.indexSize > 0 ? indexReplaceStep(segment, "empty-segment", { type: "keep-prefix", bytes: 0 }) : null;
  }
  if (segment.index.rebuilt) {
    if (segment.rebuiltIndex === null) {
      throw new PlanError(`segment ${segmentId} needs a rebuilt index but the report holds no entries`, {
        path: indexPath,
        segment: segment.startOffset,
      });
    }
    return indexReplaceStep(segment, segment.index.mismatches > 0 ? "mismatches" : "index-less", {
      type: "index-entries",
      entries: segment.rebuiltIndex.map((e) => ({ offset: e.offset.toString(), position: e.position, timestamp: e.timestamp.toString() })),
    });
  }
  if (segment.index.trailingBytes > 0) {
    const keep = segment.indexSize - segment.index.trailingBytes;
    if (keep < 0 || keep % INDEX_ENTRY_BYTES !== 0) {
      throw new PlanError(
        `segment ${segmentId}: index of ${segment.indexSize} bytes cannot lose ${segment.index.trailingBytes} trailing bytes and keep whole entries`,
        { path: indexPath, segment: segment.startOffset, position: keep },
      );
    }
    return indexReplaceStep(segment, "partial-entry", { type: "keep-prefix", bytes: keep });
  }
  return null;
}
