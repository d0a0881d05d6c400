/**
 * docs/repair.md §6.5: `planSalvage`, the plan for the last copy of a refused
 * partition: keep every batch that verifies and extends the chain, drop only
 * the bytes nothing proves, and record their offsets as lost. It is an
 * ordinary `RepairPlan` (one partition target with a `salvage` field), so
 * `applyRepair` runs it and `restore` undoes it. Each salvaged `.log` is
 * rewritten in place as its kept ranges, and its `.index` kept to (or rebuilt
 * over) the proven prefix before the log, or moved aside and rebuilt after it
 * when the prefix holds no entry: the shape Iggy's boot walk accepts, and one
 * a crash between the steps leaves re-planning the same (§6.5 "The on-disk
 * shape, and why Iggy accepts it"). Planning writes nothing.
 */
import * as path from "node:path";
import { INDEX_ENTRY_BYTES, LOG_SUFFIX } from "../format/constants.js";
import type { Engine, EngineWindow } from "../engine/types.js";
import { FileWindow } from "../engine/file-window.js";
import { nodeScanFs, type ScanFs } from "../io/fs.js";
import { scanPath } from "../node/scan-path.js";
import type { PartitionReport, RebuiltIndexEntry, ScanReport, SegmentReport, SegmentScopeRange } from "../domain/scan.js";
import { type SegmentSalvage, decideSalvage } from "../policy/salvage.js";
import { readIndexEntriesStreaming } from "../recovery/index-file.js";
import type { ScanOptions } from "../recovery/options.js";
import { walkBatches } from "../recovery/walk.js";
import { PlanError } from "./errors.js";
import { type RepairFs, nodeRepairFs } from "./fs-layer.js";
import { indexReplaceStep, partitionTargetOf, planSegment, sweepStepsIn } from "./plan-partition.js";
import type { PlanTarget, RepairPlan } from "./schema.js";
import type { PlanStep, ReplaceStep, SalvageRange, TruncateStep } from "./steps/index.js";
import { partitionCommandPlan, planEngine, refusedPartitionPlan } from "./plan.js";
import { indexPathOf } from "./preserve-dir.js";
import { type SalvageRefusal, SalvageRefusedError } from "./errors.js";

export { SalvageRefusedError } from "./errors.js";

export type { SalvageRefusal } from "./errors.js";

export interface PlanSalvageOptions extends ScanOptions {
  /** Filesystem layer the plan `lstat`s through (default node:fs). */
  fs?: RepairFs;
}

/** What planning a salvaged segment reads with. */
export interface SalvagePlanContext {
  engine: Engine;
  replicaCount: number;
  verify: "tail" | "full";
  windowBytes: number;
  maxBatchBytes?: number;
  scanFs?: ScanFs;
  signal?: AbortSignal;
}

/**
 * The salvage plan for one partition: a scan report of exactly one partition
 * dir, or its path (scanned first with `options`). Throws
 * `SalvageRefusedError` when salvage may not act (docs/repair.md §6.5).
 */
export async function planSalvage(source: ScanReport | string, options: PlanSalvageOptions = {}): Promise<RepairPlan> {
  const report = typeof source === "string" ? await scanPath(source, options) : source;
  const named = typeof source === "string" ? source : (report.partitions[0]?.path ?? "the scanned path");
  const partition = report.partitions.length === 1 ? report.partitions[0] : undefined;
  if (partition === undefined) {
    throw new SalvageRefusedError(
      `salvage takes one partition directory; ${named} holds ${report.partitions.length} partitions: name the refused one`,
      "NotOnePartition",
      named,
    );
  }
  const engine = await planEngine(report, options);
  const target = await planSalvageTarget(partition, {
    engine,
    replicaCount: report.options.replicaCount,
    verify: report.options.verify,
    windowBytes: report.options.windowBytes,
    ...(report.options.maxBatchBytes !== undefined ? { maxBatchBytes: report.options.maxBatchBytes } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  return partitionCommandPlan(report, report.options, [target], options.fs ?? nodeRepairFs);
}

/**
 * A salvage plan that does nothing, for a refusal: the partition in
 * `leftAlone` with the refusal's code and message, so `salvage --json`
 * still prints the one repair shape (docs/interfaces.md §9.4).
 */
export function refusedSalvagePlan(report: ScanReport, error: SalvageRefusedError): RepairPlan {
  return refusedPartitionPlan(report, { path: error.path, code: `Salvage${error.code}`, message: error.message });
}

/** The salvage target of one partition (preflight re-plans with it from a fresh scan). */
export async function planSalvageTarget(partition: PartitionReport, context: SalvagePlanContext): Promise<PlanTarget> {
  const refuse = (code: SalvageRefusal, why: string): never => {
    throw new SalvageRefusedError(`refusing to salvage ${partition.path}: ${why}; nothing was changed`, code, partition.path);
  };
  if (partition.singleSegment) {
    refuse(
      "LoneSegment",
      `a .log given alone is scanned without its partition; salvage takes the partition directory ${path.dirname(partition.path)}`,
    );
  }
  const decision = decideSalvage(partition, context.replicaCount);
  if (!decision.salvageable) return refuse(decision.code, decision.why);
  const dir = partition.path;
  const sweeps = sweepStepsIn(partition, dir);
  const cuts: TruncateStep[] = [];
  const indexes: ReplaceStep[] = [];
  const salvageSteps: PlanStep[] = [];
  const kept: SalvageRange[] = [];
  const lost: SalvageRange[] = [];
  for (const [index, segment] of partition.segments.entries()) {
    const salvaged = decision.segments.find((s) => s.index === index);
    if (salvaged === undefined) {
      planSegment(segment, cuts, indexes);
      continue;
    }
    salvageSteps.push(...(await planSegmentSalvage(segment, salvaged, context)));
    kept.push(...salvaged.kept.map((range) => salvageRange(segment, range)));
    lost.push(...salvaged.lost.map((range) => salvageRange(segment, range)));
  }
  // Sweeps first (a leftover `.staging` must not be taken for a step's own), then the other segments' cuts, the salvage, their index work.
  return { ...partitionTargetOf(partition, dir, [...sweeps, ...cuts, ...salvageSteps, ...indexes]), salvage: { kept, lost } };
}

/** A scope range as the plan records it (u64 values as decimal strings). */
function salvageRange(segment: SegmentReport, range: SegmentScopeRange): SalvageRange {
  if (range.kind === "missing") {
    throw new PlanError(`segment ${segment.startOffset}: a segment's scope holds no missing range`, {
      path: segment.logPath,
      segment: segment.startOffset,
    });
  }
  return {
    segment: segment.startOffset.toString(),
    kind: range.kind,
    startPosition: range.startPosition,
    endPosition: range.endPosition,
    bytes: range.bytes,
    firstOffset: range.firstOffset?.toString() ?? null,
    lastOffset: range.lastOffset?.toString() ?? null,
    messages: range.messages,
    tornEvidence: range.tornEvidence,
  };
}

const entryJson = (e: RebuiltIndexEntry): { offset: string; position: number; timestamp: string } => ({
  offset: e.offset.toString(),
  position: e.position,
  timestamp: e.timestamp.toString(),
});

/** One salvaged segment's steps, in the order they run (see the file comment for why this order converges). */
async function planSegmentSalvage(segment: SegmentReport, salvage: SegmentSalvage, context: SalvagePlanContext): Promise<PlanStep[]> {
  const segmentId = segment.startOffset.toString();
  const where = { path: segment.logPath, segment: segment.startOffset };
  if (!segment.logPath.endsWith(LOG_SUFFIX)) {
    throw new PlanError(`segment ${segmentId} has a log path without the ${LOG_SUFFIX} suffix`, where);
  }
  const prefixEnd = segment.walkedSize;
  const ranges = salvage.kept.map((range) => ({ from: range.startPosition, to: range.endPosition }));
  const first = ranges[0];
  if (first === undefined || (first.from !== 0 && prefixEnd > 0)) {
    throw new PlanError(`segment ${segmentId}: the kept ranges do not start with the proven prefix [0, ${prefixEnd})`, where);
  }
  const indexPath = indexPathOf(segment.logPath);
  const wholeEntries = Math.floor(segment.indexSize / INDEX_ENTRY_BYTES);
  const replaceIndex = (reason: ReplaceStep["reason"], fromSize: number, content: ReplaceStep["content"]): ReplaceStep => ({
    ...indexReplaceStep(segment, reason, content),
    fromSize,
  });
  const log: ReplaceStep = {
    kind: "replace",
    role: "segment-log",
    file: segment.logPath,
    segment: segmentId,
    reason: "salvage",
    fromSize: segment.messagesSize,
    content: { type: "log-ranges", ranges },
    consumer: null,
    observed: null,
  };

  const keep = await trustedEntries(segment, context, prefixEnd);
  if (keep > 0) {
    const trim = keep < wholeEntries || segment.indexSize % INDEX_ENTRY_BYTES !== 0;
    return [
      ...(trim ? [replaceIndex("salvage-prefix", segment.indexSize, { type: "keep-prefix", bytes: keep * INDEX_ENTRY_BYTES })] : []),
      log,
    ];
  }
  const prefix = await prefixEntries(segment, context);
  if (prefix.length > 0)
    return [replaceIndex("salvage-prefix", segment.indexSize, { type: "index-entries", entries: prefix.map(entryJson) }), log];
  // No entry inside the prefix: the index is set aside, the log rewritten, then the index written over the new log.
  const rebuilt = await rebuiltEntries(segment, ranges, context);
  const steps: PlanStep[] = [];
  if (wholeEntries > 0) {
    steps.push({
      kind: "move-aside",
      role: "index",
      file: indexPath,
      reason: "salvage",
      size: segment.indexSize,
      consumer: null,
      observed: null,
    });
  }
  steps.push(
    log,
    replaceIndex("salvage-rebuilt", wholeEntries > 0 ? 0 : segment.indexSize, { type: "index-entries", entries: rebuilt.map(entryJson) }),
  );
  return steps;
}

/**
 * The index's entries inside the proven prefix, when the scan trusts them:
 * tail mode trusts every entry (all lie before the damage, which the walk from
 * the last one found), deep mode those it matched; 0 otherwise.
 */
async function trustedEntries(segment: SegmentReport, context: SalvagePlanContext, prefixEnd: number): Promise<number> {
  if (segment.arm !== "indexed" || segment.index.mismatches !== 0) return 0;
  const indexPath = indexPathOf(segment.logPath);
  const wholeEntries = Math.floor(segment.indexSize / INDEX_ENTRY_BYTES);
  const keep = await entriesBefore(context.scanFs ?? nodeScanFs, indexPath, segment.indexSize, prefixEnd);
  if (context.verify === "tail" && keep !== wholeEntries) {
    throw new PlanError(
      `segment ${segment.startOffset}: ${wholeEntries - keep} index entries lie at or past the damage at byte ${prefixEnd}, which a tail walk cannot have found`,
      { path: indexPath, segment: segment.startOffset, position: prefixEnd },
    );
  }
  return keep;
}

/** How many whole entries of the index sit at a position below `end` (entries ascend in position: validated by the scan). */
async function entriesBefore(scanFs: ScanFs, indexPath: string, indexSize: number, end: number): Promise<number> {
  let count = 0;
  for await (const entry of readIndexEntriesStreaming(scanFs, indexPath, indexSize)) {
    if (entry.position >= BigInt(end)) break;
    count++;
  }
  return count;
}

function openWindow(context: SalvagePlanContext): EngineWindow {
  return context.engine.openWindow(
    context.windowBytes,
    context.maxBatchBytes === undefined ? {} : { maxBatchBytes: context.maxBatchBytes },
  );
}

/**
 * The entries segscan's index-less rebuild (docs/recovery.md §3.3) writes for
 * the proven prefix `[0, walkedSize)`: the walk from byte 0 the index-less arm
 * makes, stopped at the prefix end; it must verify to there.
 */
async function prefixEntries(segment: SegmentReport, context: SalvagePlanContext): Promise<RebuiltIndexEntry[]> {
  if (segment.walkedSize === 0) return [];
  const scanFs = context.scanFs ?? nodeScanFs;
  const file = await scanFs.open(segment.logPath);
  const engineWindow = openWindow(context);
  try {
    const window = new FileWindow(file, segment.logPath, segment.messagesSize, engineWindow, { signal: context.signal });
    const walk = await walkBatches(window, {
      fromPosition: 0,
      untilPosition: segment.walkedSize,
      expectedOffset: segment.startOffset,
      rebuildIndex: true,
    });
    if (walk.stopPosition !== segment.walkedSize || walk.failure !== null || walk.discontinuity !== null) {
      throw new PlanError(
        `segment ${segment.startOffset}: its proven prefix [0, ${segment.walkedSize}) no longer verifies (it stops at byte ${walk.stopPosition}); scan and plan again`,
        { path: segment.logPath, segment: segment.startOffset, position: walk.stopPosition },
      );
    }
    return walk.rebuiltIndex ?? [];
  } finally {
    engineWindow.close();
    await file.close();
  }
}

/**
 * The entries segscan's index-less rebuild (docs/recovery.md §3.3) writes for
 * a log holding `ranges` of this segment's log, in order: an entry at the first
 * batch with messages, then at each batch with messages that starts a stride or
 * more past the previous entry, positions in the new log. Each range is walked
 * again and must verify to its end (the file changed under the plan otherwise).
 */
async function rebuiltEntries(
  segment: SegmentReport,
  ranges: readonly { from: number; to: number }[],
  context: SalvagePlanContext,
): Promise<RebuiltIndexEntry[]> {
  const scanFs = context.scanFs ?? nodeScanFs;
  const file = await scanFs.open(segment.logPath);
  const engineWindow = openWindow(context);
  const entries: RebuiltIndexEntry[] = [];
  try {
    const window = new FileWindow(file, segment.logPath, segment.messagesSize, engineWindow, { signal: context.signal });
    let newPosition = 0;
    let expectedOffset = segment.startOffset;
    for (const range of ranges) {
      // The walk's own rebuild, continued across the ranges in the new log's positions.
      const walk = await walkBatches(window, {
        fromPosition: range.from,
        untilPosition: range.to,
        expectedOffset,
        rebuildIndex: true,
        rebuildFrom: { lastIndexedPosition: entries.at(-1)?.position ?? -1, positionShift: newPosition - range.from },
      });
      if (walk.stopPosition !== range.to || walk.failure !== null || walk.discontinuity !== null) {
        throw new PlanError(
          `segment ${segment.startOffset}: the bytes [${range.from}, ${range.to}) the scan proved no longer verify (they stop at byte ${walk.stopPosition}); scan and plan again`,
          { path: segment.logPath, segment: segment.startOffset, position: walk.stopPosition },
        );
      }
      entries.push(...(walk.rebuiltIndex ?? []));
      expectedOffset = walk.expectedOffset;
      newPosition += range.to - range.from;
    }
  } finally {
    engineWindow.close();
    await file.close();
  }
  return entries;
}

/** Whether a plan target is a salvage (docs/repair.md §6.5). */
export function isSalvageTarget(target: PlanTarget): boolean {
  return target.salvage !== undefined;
}
