/**
 * docs/heal.md: `planHeal`, the plan that fills what a replica lacks or holds
 * damaged from a peer replica that proves it: every copied peer batch
 * verifies and continues the chain, the peer's batches on both sides of the
 * range equal this replica's intact neighbours byte for byte (else the
 * replicas diverged and nothing is copied), and the range lies in a segment
 * both replicas drew alike. The result is an ordinary `RepairPlan`: per
 * healed segment a `replace` of its `.log` (content `log-splice`), then of its
 * `.index` (the peer's, or rebuilt, docs/recovery.md §3.3), run and restored
 * with the one protocol. The metadata plane is never copied (docs/node.md).
 */
import { existsSync, realpathSync } from "node:fs";
import * as path from "node:path";
import { INDEX_ENTRY_BYTES, REBUILT_INDEX_STRIDE_BYTES } from "../../format/constants.js";
import type { PartitionReport, ScanReport, SegmentReport } from "../../domain/scan.js";
import { nodeScanFs } from "../../io/fs.js";
import { scanPath } from "../../node/scan-path.js";
import { readIndexEntriesStreaming } from "../../recovery/index-file.js";
import type { ScanOptions } from "../../recovery/options.js";
import { scanPartition } from "../../node/scan-path.js";
import { PlanError } from "../errors.js";
import { type HealRefusal, HealRefusedError } from "../errors.js";

export { type HealRefusal, HealRefusedError } from "../errors.js";
import { digestRange, sourcedPieces, streamPieces } from "../files.js";
import { type RepairFs, nodeRepairFs } from "../fs-layer.js";
import { indexReplaceStep, partitionTargetOf, sweepStepsIn } from "../plan-partition.js";
import type { HealPiece, HealRange, PlanTarget, RepairPlan } from "../schema.js";
import type { PlanStep, ReplaceStep } from "../steps/index.js";
import { partitionCommandPlan, planEngine, refusedPartitionPlan } from "../plan.js";
import { indexPathOf } from "../preserve-dir.js";
import { type LocalRange, NotHealableRange, localRanges, lossesOf } from "./ranges.js";
import { type ExtentBatch, type HealWalkContext, walkExtents } from "./walk.js";

export interface PlanHealOptions extends ScanOptions {
  /** Filesystem layer the plan `lstat`s and hashes through (default node:fs). */
  fs?: RepairFs;
}

/** What planning a heal reads with. */
export interface HealPlanContext extends HealWalkContext {
  fs?: RepairFs;
  chunkBytes?: number;
}

/** The name of a node's metadata plane (docs/node.md N0): never a heal's source or target. */
const METADATA_DIR_NAME = "metadata";
/** Chunk of the plan's streamed hashes (as the runner's). */
const PLAN_CHUNK_BYTES = 1024 * 1024;

const realOf = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
};

/** A partition dir, never the metadata plane or a node root holding it (docs/heal.md). */
function refuseMetadataPlane(dir: string, role: string, named: string): void {
  const real = realOf(dir);
  if (path.basename(real) === METADATA_DIR_NAME || existsSync(path.join(real, METADATA_DIR_NAME))) {
    throw new HealRefusedError(
      `refusing to heal ${named}: the ${role} ${dir} is ${path.basename(real) === METADATA_DIR_NAME ? "a node's metadata plane" : "a node root (it holds metadata/)"}; ` +
        "heal is for partition segments only: the metadata plane is replica-specific and never copied between replicas; " +
        "name one partition directory on each side; nothing was changed",
      "MetadataPlane",
      named,
    );
  }
}

/**
 * The heal plan for one partition directory (`local`: its path, or a scan
 * report of exactly it) from the same partition of a peer replica (`peer`:
 * its directory, mounted or copied here). Both are scanned deep (every batch
 * verified). Throws `HealRefusedError` when heal may not act; returns a plan
 * with no target when there is nothing to fill.
 */
export async function planHeal(local: ScanReport | string, peer: string, options: PlanHealOptions = {}): Promise<RepairPlan> {
  const scanOptions: ScanOptions = { ...options, verify: "full" };
  delete (scanOptions as PlanHealOptions).fs;
  const named = typeof local === "string" ? local : (local.partitions[0]?.path ?? "the scanned path");
  if (typeof local === "string") refuseMetadataPlane(local, "partition", named);
  refuseMetadataPlane(peer, "peer", named);
  const report = typeof local === "string" ? await scanPath(local, scanOptions) : local;
  const partition = report.partitions.length === 1 ? report.partitions[0] : undefined;
  if (partition === undefined || partition.singleSegment || report.node !== undefined) {
    throw new HealRefusedError(
      `heal takes one partition directory; ${named} holds ${report.partitions.length === 1 ? "a .log given alone" : `${report.partitions.length} partitions`}: name the damaged partition's directory (heal is for partition segments only; the metadata plane is never copied)`,
      "NotOnePartition",
      named,
    );
  }
  if (realOf(partition.path) === realOf(peer)) {
    throw new HealRefusedError(
      `refusing to heal ${partition.path} from ${peer}: they are the same directory (${realOf(peer)}); name the peer replica's copy of this partition; nothing was changed`,
      "SamePartition",
      partition.path,
    );
  }
  const engine = await planEngine(report, options);
  const peerReport = await scanPartition(realOf(peer), { ...scanOptions, engine });
  const peerPartition = peerReport.partitions[0];
  if (peerPartition === undefined) {
    throw new HealRefusedError(
      `refusing to heal ${partition.path}: the peer ${peer} holds no partition; nothing was changed`,
      "NotProven",
      partition.path,
    );
  }
  const options_ = { ...report.options, verify: "full" as const };
  const target = await planHealTarget(partition, peerPartition, {
    engine,
    windowBytes: report.options.windowBytes,
    ...(report.options.maxBatchBytes !== undefined ? { maxBatchBytes: report.options.maxBatchBytes } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    fs: options.fs ?? nodeRepairFs,
  });
  return partitionCommandPlan(report, options_, target === null ? [] : [target], options.fs ?? nodeRepairFs);
}

/** A plan that does nothing, for a refusal: the partition in `leftAlone` with the refusal's code (`Heal<code>`) and message. */
export function refusedHealPlan(report: ScanReport, error: HealRefusedError): RepairPlan {
  return refusedPartitionPlan(report, { path: error.path, code: `Heal${error.code}`, message: error.message });
}

/** Whether a plan target is a heal (docs/heal.md). */
export function isHealTarget(target: PlanTarget): boolean {
  return target.heal !== undefined;
}

/** A local range with its neighbours and the peer's bytes that fill it. */
interface ProvenRange {
  local: LocalRange;
  firstOffset: bigint;
  lastOffset: bigint;
  peerFrom: number;
  peerTo: number;
  batches: number;
}

/**
 * The heal target of one partition from the peer's copy of it (preflight
 * re-plans with it from fresh scans of both), or null when there is nothing
 * to fill. Throws `HealRefusedError`.
 */
export async function planHealTarget(
  partition: PartitionReport,
  peer: PartitionReport,
  context: HealPlanContext,
): Promise<PlanTarget | null> {
  const refuse = (code: HealRefusal, why: string): never => {
    throw new HealRefusedError(`refusing to heal ${partition.path} from ${peer.path}: ${why}; nothing was changed`, code, partition.path);
  };
  if (partition.verdict === "failed") {
    refuse("NotHealable", `its scan failed (${partition.error?.code ?? "read error"}): fix the read error and scan again`);
  }
  if (peer.verdict === "failed") refuse("NotProven", `the peer's scan failed (${peer.error?.code ?? "read error"}), so it proves nothing`);
  const refusal = partition.refusal;
  if (refusal !== null && (refusal.code === "Hole" || refusal.code === "Overlap" || refusal.code === "EmptyNonTailSegment")) {
    refuse("NotHealable", `it is refused ${refusal.code} between segments (${refusal.message}): heal fills batches inside segments`);
  }
  const losses = lossesOf(partition);
  const planning: SegmentPlanning = {
    peer,
    context,
    fs: context.fs ?? nodeRepairFs,
    chunk: context.chunkBytes ?? PLAN_CHUNK_BYTES,
    refuse,
  };
  const logSteps: PlanStep[] = [];
  const indexSteps: PlanStep[] = [];
  const healed: HealRange[] = [];
  for (const [i, segment] of partition.segments.entries()) {
    const next = partition.segments[i + 1] ?? null;
    let ranges: LocalRange[];
    try {
      ranges = localRanges(segment, losses, next === null);
    } catch (error) {
      if (!(error instanceof NotHealableRange)) throw error;
      return refuse("NotHealable", error.message);
    }
    const planned = await planHealSegment(planning, segment, next, ranges);
    if (planned.log !== null) logSteps.push(planned.log);
    if (planned.index !== null) indexSteps.push(planned.index);
    healed.push(...planned.healed);
  }
  const dir = partition.path;
  // A `.staging` left by a heal that stopped part-way is swept even when nothing else is left to do (docs/heal.md).
  const sweeps = sweepStepsIn(partition, dir);
  if (logSteps.length === 0 && indexSteps.length === 0 && sweeps.length === 0) return null;
  // Sweeps first (a leftover `.staging` must not be taken for a step's own); each log before its index (docs/heal.md).
  return {
    ...partitionTargetOf(partition, dir, [...sweeps, ...logSteps, ...indexSteps]),
    heal: { peer: realOf(peer.path), ranges: healed },
  };
}

/** What planning one segment's heal reads with. */
interface SegmentPlanning {
  peer: PartitionReport;
  context: HealPlanContext;
  fs: RepairFs;
  chunk: number;
  refuse: (code: HealRefusal, why: string) => never;
}

/**
 * One segment's heal: its log splice (when a range is filled from the peer),
 * its index (the peer's when the healed log is the peer's byte for byte, else
 * rebuilt over the splice), and the ranges the heal records.
 */
async function planHealSegment(
  planning: SegmentPlanning,
  segment: SegmentReport,
  next: SegmentReport | null,
  ranges: readonly LocalRange[],
): Promise<{ log: ReplaceStep | null; index: ReplaceStep | null; healed: HealRange[] }> {
  const { peer, context, fs, chunk, refuse } = planning;
  const peerSegment = peer.segments.find((s) => s.startOffset === segment.startOffset) ?? null;
  if (ranges.length === 0) {
    // A segment whose log is the peer's byte for byte but whose index is not (a heal stopped between its two steps).
    const same =
      peerSegment !== null &&
      (await sameBytes(fs, context, segment.logPath, segment.messagesSize, peerSegment.logPath, peerSegment.messagesSize, chunk));
    return { log: null, index: same ? await peerIndexStep(fs, context, segment, peerSegment, chunk, true) : null, healed: [] };
  }
  if (peerSegment === null) {
    const holder = [...peer.segments].reverse().find((s) => s.startOffset <= segment.startOffset);
    return refuse(
      "SegmentBoundary",
      `this replica's segment ${segment.startOffset} (${path.basename(segment.logPath)}) has no segment of the same start on the peer` +
        (holder === undefined ? "" : `, whose segment ${holder.startOffset} (${path.basename(holder.logPath)}) holds those offsets`) +
        ": the two replicas drew segment boundaries differently, and heal copies batches only within a segment both drew alike",
    );
  }
  const proven: ProvenRange[] = [];
  for (const range of ranges) {
    if (range.kind !== "held") proven.push(await proveRange(peer, segment, next, peerSegment, range, context, refuse));
  }
  const pieces = splicePieces(segment, proven);
  const spliced = await walkSplice(segment, peerSegment, pieces, context, refuse);
  const equalsPeer =
    spliced.bytes === peerSegment.messagesSize &&
    (await streamPieces(fs, context.engine, sourcedPieces(segment.logPath, peer.path, pieces), chunk)).xxh3 ===
      (await digestRange(fs, context.engine, peerSegment.logPath, 0, peerSegment.messagesSize, chunk)).xxh3;
  const segmentId = segment.startOffset.toString();
  if (proven.length === 0 && !equalsPeer) {
    refuse("NotProven", `segment ${segmentId} holds offsets a salvage recorded as lost again, but its log is not the peer's byte for byte`);
  }
  const log: ReplaceStep | null =
    proven.length === 0
      ? null
      : {
          kind: "replace",
          role: "segment-log",
          file: segment.logPath,
          segment: segmentId,
          reason: "heal",
          fromSize: segment.messagesSize,
          content: { type: "log-splice", pieces },
          consumer: null,
          observed: null,
        };
  const index =
    (equalsPeer ? await peerIndexStep(fs, context, segment, peerSegment, chunk, false) : null) ?? indexReplace(segment, spliced.rebuilt);
  return { log, index, healed: healedRanges(segmentId, ranges, proven) };
}

/** The ranges a heal records for one segment: those the log holds again (`held`), then those filled from the peer. */
function healedRanges(segmentId: string, ranges: readonly LocalRange[], proven: readonly ProvenRange[]): HealRange[] {
  const held = ranges.flatMap((range) => (range.held === null ? [] : [range.held]));
  return [
    ...held.map((range) => ({
      segment: segmentId,
      kind: "held" as const,
      firstOffset: range.firstOffset.toString(),
      lastOffset: range.lastOffset.toString(),
      localFrom: 0,
      localTo: 0,
      peerFrom: 0,
      peerTo: 0,
      batches: 0,
    })),
    ...proven.map((range) => ({
      segment: segmentId,
      kind: range.local.kind,
      firstOffset: range.firstOffset.toString(),
      lastOffset: range.lastOffset.toString(),
      localFrom: range.local.localFrom,
      localTo: range.local.localTo,
      peerFrom: range.peerFrom,
      peerTo: range.peerTo,
      batches: range.batches,
    })),
  ];
}

/** Whether two files hold the same bytes (same size, same XXH3-64). */
async function sameBytes(
  fs: RepairFs,
  context: HealPlanContext,
  a: string,
  aSize: number,
  b: string,
  bSize: number,
  chunk: number,
): Promise<boolean> {
  if (aSize !== bSize) return false;
  const [x, y] = [await digestRange(fs, context.engine, a, 0, aSize, chunk), await digestRange(fs, context.engine, b, 0, bSize, chunk)];
  return x.xxh3 === y.xxh3;
}

/** The peer segment's index as this segment's (its log is the peer's byte for byte), when the peer's deep scan trusts every entry. */
async function peerIndexStep(
  fs: RepairFs,
  context: HealPlanContext,
  segment: SegmentReport,
  peerSegment: SegmentReport,
  chunk: number,
  onlyWhenDifferent: boolean,
): Promise<ReplaceStep | null> {
  const trusted =
    peerSegment.arm === "indexed" &&
    peerSegment.refusal === null &&
    peerSegment.outcome === "clean" &&
    peerSegment.index.mismatches === 0 &&
    peerSegment.index.trailingBytes === 0;
  if (!trusted) return null;
  const localIndex = indexPathOf(segment.logPath);
  const peerIndex = indexPathOf(peerSegment.logPath);
  if (onlyWhenDifferent && (await sameBytes(fs, context, localIndex, segment.indexSize, peerIndex, peerSegment.indexSize, chunk)))
    return null;
  const entries = [];
  for await (const entry of readIndexEntriesStreaming(context.scanFs ?? nodeScanFs, peerIndex, peerSegment.indexSize)) {
    entries.push({ offset: entry.offset.toString(), position: Number(entry.position), timestamp: entry.timestamp.toString() });
  }
  if (entries.length * INDEX_ENTRY_BYTES !== peerSegment.indexSize) return null;
  return indexReplaceStep(segment, "heal", { type: "index-entries", entries });
}

function indexReplace(segment: SegmentReport, entries: { offset: bigint; position: number; timestamp: bigint }[]): ReplaceStep {
  return indexReplaceStep(segment, "heal", {
    type: "index-entries",
    entries: entries.map((e) => ({ offset: e.offset.toString(), position: e.position, timestamp: e.timestamp.toString() })),
  });
}

/** Whether two batches (of the local log and the peer's) hold the same bytes. */
async function sameBatch(fs: RepairFs, context: HealPlanContext, a: string, x: ExtentBatch, b: string, y: ExtentBatch): Promise<boolean> {
  if (x.end - x.position !== y.end - y.position || x.checksum !== y.checksum) return false;
  const chunk = context.chunkBytes ?? PLAN_CHUNK_BYTES;
  const [p, q] = [
    await digestRange(fs, context.engine, a, x.position, x.end - x.position, chunk),
    await digestRange(fs, context.engine, b, y.position, y.end - y.position, chunk),
  ];
  return p.xxh3 === q.xxh3;
}

/**
 * One local range with the peer's proof of it: the left neighbour (the last
 * verified batch before the range) and the right one (the first after it, in
 * this segment) equal the peer's batches at the same offsets byte for byte,
 * and the peer's batches between them verify and continue the chain exactly.
 */
async function proveRange(
  peer: PartitionReport,
  segment: SegmentReport,
  next: SegmentReport | null,
  peerSegment: SegmentReport,
  range: LocalRange,
  context: HealPlanContext,
  refuse: (code: HealRefusal, why: string) => never,
): Promise<ProvenRange> {
  const id = segment.startOffset;
  const { left: l, right: r, firstOffset } = await localNeighbours(segment, range, context);
  // The offset the filled range must end before: the right neighbour's, or (a damaged end of a segment that is not the last) the next segment's start.
  const bound = r !== null ? r.baseOffset : next !== null ? next.startOffset : null;
  const offsets = bound === null ? `${firstOffset}..` : `${firstOffset}..${bound - 1n}`;
  const { peerLeft: pl, peerRight: pr, peerStop } = await peerNeighbours(peer, segment, peerSegment, l, r, offsets, context, refuse);
  const peerLog = peerSegment.logPath;
  const peerFrom = pl === null ? 0 : pl.end;
  const peerTo = pr !== null ? pr.position : peerStop;
  if (peerTo < peerFrom) refuse("NotProven", `segment ${id}: the peer's batches for offsets ${offsets} are out of order`);
  // The peer's batches between the neighbours: each verifies, and they continue the chain exactly, with no offset missing.
  let batches = 0;
  const between = await walkExtents(context, peerLog, peerSegment.messagesSize, peerFrom, peerTo, firstOffset, () => {
    batches++;
  });
  if (between.stopPosition !== peerTo || between.failure !== null || between.discontinuity !== null) {
    refuse(
      "NotProven",
      `segment ${id}: the peer's bytes [${peerFrom}, ${peerTo}) for offsets ${offsets} do not verify to their end (they stop at byte ${between.stopPosition})`,
    );
  }
  const gap = between.gaps[0];
  if (gap !== undefined) {
    refuse(
      "NotProven",
      `segment ${id}: the peer lacks offsets ${gap.expectedOffset}..${gap.foundOffset - 1n} too (a forward gap at its byte ${gap.position}), so it cannot prove offsets ${offsets}`,
    );
  }
  if (bound !== null && between.expectedOffset !== bound) {
    if (r === null && next !== null) {
      const peerNext = peer.segments.find((s) => s.startOffset > segment.startOffset);
      refuse(
        "SegmentBoundary",
        `this replica's segment ${id} ends where its segment ${next.startOffset} (${path.basename(next.logPath)}) starts, but the peer's segment ${id} ends before offset ${between.expectedOffset}` +
          (peerNext === undefined ? "" : ` and its next segment is ${peerNext.startOffset} (${path.basename(peerNext.logPath)})`) +
          ": the two replicas drew segment boundaries differently",
      );
    }
    refuse("NotProven", `segment ${id}: the peer's batches reach offset ${between.expectedOffset}, not ${bound}`);
  }
  if (batches === 0 && (bound === null || firstOffset < bound)) {
    refuse(
      "NotProven",
      `segment ${id}: the peer holds no batch after offset ${firstOffset - 1n} in this segment either, so it proves nothing of offsets ${offsets}`,
    );
  }
  return { local: range, firstOffset, lastOffset: between.expectedOffset - 1n, peerFrom, peerTo, batches };
}

/**
 * The range's neighbours in this log: the last verified batch before it (the
 * bytes from its kept start must still verify up to it) and the first after
 * it in this segment; `firstOffset` is the offset the range starts at.
 */
async function localNeighbours(
  segment: SegmentReport,
  range: LocalRange,
  context: HealPlanContext,
): Promise<{ left: ExtentBatch | null; right: ExtentBatch | null; firstOffset: bigint }> {
  const id = segment.startOffset;
  let left: ExtentBatch | null = null;
  const before = await walkExtents(
    context,
    segment.logPath,
    segment.messagesSize,
    range.keptFrom,
    range.localFrom,
    range.keptOffset,
    (b) => {
      left = b;
    },
  );
  if (before.stopPosition !== range.localFrom || before.failure !== null || before.discontinuity !== null) {
    throw new PlanError(
      `segment ${id}: the verified bytes [${range.keptFrom}, ${range.localFrom}) before the range no longer verify (they stop at byte ${before.stopPosition}); scan and plan again`,
      { path: segment.logPath, segment: id, position: before.stopPosition },
    );
  }
  let right: ExtentBatch | null = null;
  if (range.rightInSegment) {
    await walkExtents(context, segment.logPath, segment.messagesSize, range.localTo, segment.messagesSize, 0n, (b) => {
      right ??= b;
    });
    if (right === null) {
      throw new PlanError(`segment ${id}: no verified batch at byte ${range.localTo} after the range; scan and plan again`, {
        path: segment.logPath,
        segment: id,
        position: range.localTo,
      });
    }
  }
  return { left, right, firstOffset: before.expectedOffset };
}

/**
 * The peer's batches at the offsets of this log's neighbours (its segment
 * walked from its start), each equal to the local one byte for byte, or the
 * heal is refused (docs/heal.md); `peerStop` is where the peer's walk ended.
 */
async function peerNeighbours(
  peer: PartitionReport,
  segment: SegmentReport,
  peerSegment: SegmentReport,
  l: ExtentBatch | null,
  r: ExtentBatch | null,
  offsets: string,
  context: HealPlanContext,
  refuse: (code: HealRefusal, why: string) => never,
): Promise<{ peerLeft: ExtentBatch | null; peerRight: ExtentBatch | null; peerStop: number }> {
  const fs = context.fs ?? nodeRepairFs;
  const id = segment.startOffset;
  let peerLeft: ExtentBatch | null = null;
  let peerRight: ExtentBatch | null = null;
  const peerWalk = await walkExtents(
    context,
    peerSegment.logPath,
    peerSegment.messagesSize,
    0,
    peerSegment.messagesSize,
    peerSegment.startOffset,
    (b) => {
      if (l !== null && b.baseOffset === l.baseOffset && b.messageCount === l.messageCount) peerLeft = b;
      if (r !== null && peerRight === null && b.baseOffset === r.baseOffset) peerRight = b;
    },
  );
  const pl = peerLeft as ExtentBatch | null;
  const pr = peerRight as ExtentBatch | null;
  const peerLog = peerSegment.logPath;
  if (l !== null) {
    if (pl === null) {
      return refuse(
        "NotProven",
        `segment ${id}: the peer's segment holds no verified batch at offset ${l.baseOffset}, this replica's last intact batch before offsets ${offsets}, so it cannot prove what follows it`,
      );
    }
    if (!(await sameBatch(fs, context, segment.logPath, l, peerLog, pl))) {
      refuse(
        "Divergence",
        `segment ${id}: divergence: the peer's batch at offset ${l.baseOffset} (byte ${pl.position}) is not this replica's intact batch there (byte ${l.position}) byte for byte, ` +
          "so the replicas diverged before the damaged range and the peer's batches are not this replica's lost ones (`segscan fleet` compares the replicas)",
      );
    }
  }
  if (r !== null) {
    if (pr === null) {
      const holder = peer.segments.find((s) => s.startOffset > segment.startOffset && s.startOffset <= r.baseOffset);
      if (holder !== undefined) {
        refuse(
          "SegmentBoundary",
          `offsets ${offsets} lie inside this replica's segment ${id} (${path.basename(segment.logPath)}), but the peer's segment ${id} ends before offset ${r.baseOffset} and its segment ${holder.startOffset} (${path.basename(holder.logPath)}) starts there: the two replicas drew segment boundaries differently`,
        );
      }
      return refuse(
        "NotProven",
        `segment ${id}: the peer's segment holds no verified batch at offset ${r.baseOffset}, this replica's first intact batch after offsets ${offsets}`,
      );
    }
    if (!(await sameBatch(fs, context, segment.logPath, r, peerLog, pr))) {
      refuse(
        "Divergence",
        `segment ${id}: divergence: the peer's batch at offset ${r.baseOffset} (byte ${pr.position}) is not this replica's intact batch there (byte ${r.position}) byte for byte, so the replicas diverged around the damaged range`,
      );
    }
  }
  return { peerLeft: pl, peerRight: pr, peerStop: peerWalk.stopPosition };
}

/** The new log: local prefix, the peer's batches, local bytes between, …, local suffix (empty pieces dropped). */
function splicePieces(segment: SegmentReport, ranges: readonly ProvenRange[]): HealPiece[] {
  const pieces: HealPiece[] = [];
  let at = 0;
  for (const range of ranges) {
    if (range.local.localFrom > at) pieces.push({ source: "local", from: at, to: range.local.localFrom });
    if (range.peerTo > range.peerFrom) pieces.push({ source: "peer", from: range.peerFrom, to: range.peerTo });
    at = range.local.localTo;
  }
  if (segment.messagesSize > at) pieces.push({ source: "local", from: at, to: segment.messagesSize });
  return pieces;
}

/**
 * Walks the spliced log piece by piece: each piece must verify to its end and
 * the chain must run on across every seam with no offset missing. Returns its
 * size and the index entries segscan's rebuild writes for it
 * (docs/recovery.md §3.3: the first batch with messages, then one per stride).
 */
async function walkSplice(
  segment: SegmentReport,
  peerSegment: SegmentReport,
  pieces: readonly HealPiece[],
  context: HealPlanContext,
  refuse: (code: HealRefusal, why: string) => never,
): Promise<{ bytes: number; rebuilt: { offset: bigint; position: number; timestamp: bigint }[] }> {
  const rebuilt: { offset: bigint; position: number; timestamp: bigint }[] = [];
  let newPosition = 0;
  let lastIndexed = -1;
  let expected = segment.startOffset;
  for (const [i, piece] of pieces.entries()) {
    const [file, size] =
      piece.source === "local" ? [segment.logPath, segment.messagesSize] : [peerSegment.logPath, peerSegment.messagesSize];
    const shift = newPosition - piece.from;
    const walk = await walkExtents(context, file, size, piece.from, piece.to, expected, (batch) => {
      const position = batch.position + shift;
      if (batch.messageCount > 0 && (lastIndexed < 0 || position - lastIndexed >= REBUILT_INDEX_STRIDE_BYTES)) {
        rebuilt.push({ offset: batch.baseOffset, timestamp: batch.baseTimestamp, position });
        lastIndexed = position;
      }
    });
    if (walk.stopPosition !== piece.to || walk.failure !== null || walk.discontinuity !== null) {
      refuse(
        "NotProven",
        `segment ${segment.startOffset}: the healed log's ${piece.source === "local" ? "local" : "peer's"} bytes [${piece.from}, ${piece.to}) do not verify in the spliced chain (they stop at byte ${walk.stopPosition})`,
      );
    }
    if (i > 0 && walk.gaps.some((gap) => gap.position === piece.from)) {
      refuse(
        "NotProven",
        `segment ${segment.startOffset}: the spliced chain is not continuous at the seam before byte ${piece.from} of the ${piece.source === "local" ? "local" : "peer's"} log`,
      );
    }
    expected = walk.expectedOffset;
    newPosition += piece.to - piece.from;
  }
  return { bytes: newPosition, rebuilt };
}
