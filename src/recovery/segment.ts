/**
 * One segment's recovery (docs/recovery.md §3): choose the arm, walk, probe the residue,
 * and say what is proven. Pure over its inputs apart from reads through the
 * window; it never writes.
 */
import { BATCH_HEADER_BYTES, INDEX_ENTRY_BYTES, U64_MAX } from "../format/constants.js";
import type { IndexEntry } from "../format/records.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import type { BlockingFile, ReadableFile, ScanFs } from "../io/fs.js";
import { FileWindow } from "../engine/file-window.js";
import type { EngineWindow } from "../engine/types.js";
import { formatCount } from "../domain/numbers.js";
import type { Refusal, Residue, SegmentReport, SegmentScopeRange, VerifyMode } from "../domain/scan.js";
import {
  INDEX_CHUNK_ENTRIES,
  readIndexEntries,
  readIndexEntriesBlocking,
  readIndexEntriesStreaming,
  readIndexEntriesWhole,
  validateIndex,
  validateIndexEntries,
} from "./index-file.js";
import { type ProbeBudget, probeResidue, residueIsAllZero } from "./probe.js";
import { refuse } from "./refusals.js";
import { assertScopeTiles, provenRange, survivorScope, tornEvidenceOf, tornRange, unknownRestScope, unwalkedScope } from "./scope.js";
import { verifyBatchAt, verifyResidentBatch } from "./verify.js";
import {
  BatchChecksumDigest,
  IndexEntryMatcher,
  type ProvenBatch,
  type WalkOptions,
  type WalkResult,
  lastOffsetOf,
  walkBatches,
  walkResidentBatches,
} from "./walk.js";

export interface SegmentFiles {
  startOffset: bigint;
  logPath: string;
  /** The `.index` beside the log (it may not exist; then indexSize is 0). */
  indexPath: string;
  logSize: number;
  indexSize: number;
}

export interface SegmentContext {
  scanFs: ScanFs;
  engineWindow: EngineWindow;
  budget: ProbeBudget;
  verify: VerifyMode;
  signal: AbortSignal | undefined;
  onRead: (bytesRead: number) => void;
}

/**
 * The report a segment's recovery fills, with its arm; an empty segment's is
 * complete already (docs/recovery.md §3.1: P = 0 = size).
 */
function startReport(files: SegmentFiles): { report: SegmentReport; wholeEntries: number } {
  const wholeEntries = Math.floor(files.indexSize / INDEX_ENTRY_BYTES);
  const report = blankReport(files, wholeEntries);
  if (wholeEntries === 0 && files.logSize === 0) report.scope = unwalkedScope(report);
  else report.arm = wholeEntries > 0 ? "indexed" : "index-less";
  return { report, wholeEntries };
}

export async function recoverSegment(files: SegmentFiles, context: SegmentContext): Promise<SegmentReport> {
  const { report, wholeEntries } = startReport(files);
  if (report.arm === "empty-file") return report;
  let file;
  try {
    file = await context.scanFs.open(files.logPath);
  } catch (cause) {
    throw new ScanFailure("OpenFailure", files.logPath, `cannot open ${files.logPath}: ${describeCause(cause)}; nothing was changed`, {
      cause,
    });
  }
  try {
    const window = new FileWindow(file, files.logPath, files.logSize, context.engineWindow, {
      signal: context.signal,
      onRead: context.onRead,
    });
    if (wholeEntries > 0) await recoverIndexed(files, context, window, report);
    else await recoverIndexLess(files, context, window, report);
    // A refusal before any walk (an index that cannot be trusted) leaves the scope to this.
    if (report.scope.length === 0) report.scope = unwalkedScope(report);
    assertScopeTiles(report);
  } finally {
    await file.close();
  }
  return report;
}

/**
 * `recoverSegment` without a promise per batch, for the common segment
 * (docs/benchmarks.md "Breakdown"): the index read whole in one read (at most
 * INDEX_CHUNK_ENTRIES entries), one read of as much of the log as the window
 * holds from where the walk starts, and a walk that needs no other read and
 * ends at the file end or on a discontinuity. Null for anything else (a
 * residue to probe, a batch past the window, a tail-mode walk that proves no
 * message), and the caller then runs `recoverSegment`, which does all of it
 * again: nothing here is kept. Both give the same report, the same bytes read,
 * for every segment this answers (a test compares them). Read failures throw,
 * as `recoverSegment`'s do. This one reads with blocking calls, so it runs
 * with no promise at all.
 */
export function recoverSegmentResident(
  files: SegmentFiles,
  context: SegmentContext,
  log: BlockingFile,
  index: BlockingFile | null,
): SegmentReport | null {
  const { report, wholeEntries } = startReport(files);
  if (report.arm === "empty-file") return report;
  if (wholeEntries > 0 && (index === null || wholeEntries > INDEX_CHUNK_ENTRIES)) return null;
  const entries = index === null || wholeEntries === 0 ? null : readIndexEntriesBlocking(index, files.indexPath, files.indexSize);
  const window = segmentWindow(files, context, log);
  return recoverResident(files, context, window, entries, report, (position) => {
    if (window.fileSize - position < BATCH_HEADER_BYTES) return false;
    window.loadBlocking(log, position);
    return true;
  });
}

/**
 * `recoverSegmentResident` through a layer's promise calls: the same two
 * reads awaited (the log's at the position the walk will ask for, from
 * `residentLogPosition`), then the same walk with no promise per batch.
 */
export async function recoverSegmentPreloaded(
  files: SegmentFiles,
  context: SegmentContext,
  log: ReadableFile,
  index: ReadableFile | null,
): Promise<SegmentReport | null> {
  const { report, wholeEntries } = startReport(files);
  if (report.arm === "empty-file") return report;
  if (wholeEntries > 0 && (index === null || wholeEntries > INDEX_CHUNK_ENTRIES)) return null;
  const entries = index === null || wholeEntries === 0 ? null : await readIndexEntriesWhole(index, files.indexPath, files.indexSize);
  const window = segmentWindow(files, context, log);
  const loadedAt = residentLogPosition(files, context.verify, entries);
  if (loadedAt !== null) {
    if (window.fileSize - loadedAt < BATCH_HEADER_BYTES) return null;
    await window.ensure(loadedAt, BATCH_HEADER_BYTES);
  }
  return recoverResident(files, context, window, entries, report, (position) => position === loadedAt);
}

function segmentWindow(files: SegmentFiles, context: SegmentContext, log: ReadableFile): FileWindow {
  return new FileWindow(log, files.logPath, files.logSize, context.engineWindow, { signal: context.signal, onRead: context.onRead });
}

/**
 * Where a resident recovery's one log read starts (what the promise path's
 * first refill reads): the log's start for a whole walk, the last index
 * entry's position for a tail walk, null when an index it cannot trust is
 * refused with nothing read.
 */
function residentLogPosition(files: SegmentFiles, verify: VerifyMode, entries: readonly IndexEntry[] | null): number | null {
  if (entries === null) return 0;
  const bounds = checkIndexBounds(files, validateIndexEntries(entries, files.startOffset));
  if ("refusal" in bounds) return null;
  return verify === "full" ? 0 : bounds.lastPosition;
}

/**
 * The resident recovery once its index is read: `load(position)` makes the
 * log resident from `position` on, or says it cannot (the segment then goes
 * the promise path).
 */
function recoverResident(
  files: SegmentFiles,
  context: SegmentContext,
  window: FileWindow,
  entries: readonly IndexEntry[] | null,
  report: SegmentReport,
  load: ResidentLoad,
): SegmentReport | null {
  const settled =
    entries === null
      ? recoverIndexLessResident(files, context, window, load, report)
      : recoverIndexedResident(files, context, window, load, entries, report);
  if (!settled) return null;
  if (report.scope.length === 0) report.scope = unwalkedScope(report);
  assertScopeTiles(report);
  return report;
}

/** Makes the log resident from a position on; false when the promise path must do it (fewer than a header's bytes remain there: the batch fails unread). */
type ResidentLoad = (position: number) => boolean;

/** recoverIndexed without a promise (see recoverSegmentResident): false when it needs what only the promise path does. */
function recoverIndexedResident(
  files: SegmentFiles,
  context: SegmentContext,
  window: FileWindow,
  load: ResidentLoad,
  entries: readonly IndexEntry[],
  report: SegmentReport,
): boolean {
  const bounds = indexBounds(files, report, validateIndexEntries(entries, files.startOffset));
  if (bounds === null) return true;
  const { lastPosition } = bounds;
  let walk: WalkResult | null;
  let deep: DeepIndexCheck | null = null;
  if (context.verify === "full") {
    deep = new DeepIndexCheck(entries, lastPosition);
    if (!load(0)) return false;
    walk = walkResidentBatches(window, deep.walkOptions(files.startOffset));
    if (walk === null) return false;
    deep.walked(walk.stopPosition);
    const mismatches = deep.matcher.finishListed();
    if (!deep.lastEntryProven) {
      const check = verifyResidentBatch(window, lastPosition);
      if (check === null) return false;
      if (!check.verified) {
        markRefused(report, bounds.divergence());
        return true;
      }
    }
    deep.settle(report, walk, mismatches);
  } else {
    if (!load(lastPosition)) return false;
    walk = walkResidentBatches(window, { fromPosition: lastPosition, expectedOffset: bounds.last.offset, rebuildIndex: false });
    if (walk === null) return false;
    if (walk.batchesVerified === 0 && walk.discontinuity === null) {
      markRefused(report, bounds.divergence());
      return true;
    }
    // A tail of empty batches only: the end bound comes from a walk of the bytes before (a read).
    if (walk.lastWithMessages === null && lastPosition > 0) return false;
  }
  applyIndexedWalk(report, bounds, walk, walk.lastWithMessages, context.verify, deep?.checksums);
  if (!settleWalkEnd(files, context.engineWindow.limits.maxBatchBytes, report, walk)) return false;
  if (report.outcome === "refused" && deep !== null) keepPrefixMismatches(report, deep.mismatchesInPrefix);
  return true;
}

/** recoverIndexLess without a promise (see recoverSegmentResident): false when it needs what only the promise path does. */
function recoverIndexLessResident(
  files: SegmentFiles,
  context: SegmentContext,
  window: FileWindow,
  load: ResidentLoad,
  report: SegmentReport,
): boolean {
  const checksums = context.verify === "full" ? new BatchChecksumDigest() : undefined;
  if (!load(0)) return false;
  const walk = walkResidentBatches(window, indexLessWalk(files, checksums));
  if (walk === null) return false;
  applyIndexLessWalk(report, walk, checksums);
  if (!settleWalkEnd(files, context.engineWindow.limits.maxBatchBytes, report, walk)) return false;
  finishIndexLess(report, walk);
  return true;
}

function blankReport(files: SegmentFiles, wholeEntries: number): SegmentReport {
  return {
    startOffset: files.startOffset,
    endOffset: null,
    startTimestamp: null,
    endTimestamp: null,
    messageCount: 0,
    logPath: files.logPath,
    messagesSize: files.logSize,
    indexSize: files.indexSize,
    arm: "empty-file",
    outcome: "clean",
    walkedSize: 0,
    residue: null,
    gaps: [],
    warnings: [],
    index: {
      entries: wholeEntries,
      trailingBytes: files.indexSize - wholeEntries * INDEX_ENTRY_BYTES,
      rebuilt: false,
      rebuiltEntries: 0,
      mismatches: 0,
    },
    refusal: null,
    lastBatch: null,
    batchChecksumsXxh3: null,
    scope: [],
    rebuiltIndex: null,
  };
}

/** The report's `lastBatch` and (deep mode) `batchChecksumsXxh3` from a walk (docs/interfaces.md §9.3). */
function recordBatches(report: SegmentReport, lastWithMessages: ProvenBatch | null, checksums: BatchChecksumDigest | undefined): void {
  report.lastBatch = lastWithMessages === null ? null : { baseOffset: lastWithMessages.baseOffset, checksum: lastWithMessages.checksum };
  if (checksums !== undefined) report.batchChecksumsXxh3 = checksums.digest();
}

function markRefused(report: SegmentReport, refusal: Refusal): void {
  report.outcome = "refused";
  report.refusal = refusal;
  report.messageCount = null;
}

function indexEntries(files: SegmentFiles, context: SegmentContext): AsyncGenerator<IndexEntry> {
  return readIndexEntriesStreaming(context.scanFs, files.indexPath, files.indexSize);
}

/**
 * Deep mode reads the index twice (validation, then matching against the
 * walk). An index that fits one read chunk (INDEX_CHUNK_ENTRIES entries,
 * 64 KiB) is read once, in either mode, and its passes run over the array
 * (docs/benchmarks.md: streaming it cost a promise or more per entry); in deep mode that
 * also saves a second open, read and close. A larger index streams, twice in
 * deep mode, so memory stays bounded whatever its size.
 */
async function indexPasses(
  files: SegmentFiles,
  context: SegmentContext,
  wholeEntries: number,
): Promise<() => AsyncGenerator<IndexEntry> | readonly IndexEntry[]> {
  if (wholeEntries > INDEX_CHUNK_ENTRIES) return () => indexEntries(files, context);
  const entries = await readIndexEntries(context.scanFs, files.indexPath, files.indexSize);
  return () => entries;
}

/** What the indexed arm takes from a valid index (docs/recovery.md §3.2 step 1). */
interface IndexBounds {
  first: IndexEntry;
  last: IndexEntry;
  /** The last entry's position, inside the log. */
  lastPosition: number;
  /** The refusal when the last entry's batch does not verify there. */
  divergence: () => Refusal;
}

/**
 * docs/recovery.md §3.2 step 1 on a validated index: its bounds, or null when
 * the segment is refused on it (marked in `report`).
 */
function indexBounds(files: SegmentFiles, report: SegmentReport, validated: Awaited<ReturnType<typeof validateIndex>>): IndexBounds | null {
  const bounds = checkIndexBounds(files, validated);
  if (!("refusal" in bounds)) return bounds;
  markRefused(report, bounds.refusal);
  return null;
}

/** docs/recovery.md §3.2 step 1: a validated index's bounds, or the refusal it earns before any log byte is read. */
function checkIndexBounds(
  files: SegmentFiles,
  { validation, summary }: Awaited<ReturnType<typeof validateIndex>>,
): IndexBounds | { refusal: Refusal } {
  const segment = files.startOffset;
  if (!validation.valid) {
    return {
      refusal:
        validation.code === "IndexEntryBeforeSegmentStart"
          ? refuse.indexEntryBeforeSegmentStart({ segment, firstEntryOffset: validation.firstEntryOffset })
          : refuse.indexEntriesNotMonotone({ segment, entryIndex: validation.entryIndex }),
    };
  }
  const first = summary.first!;
  const last = summary.last!;
  const divergence = (): Refusal =>
    refuse.sizeDivergence(
      {
        segment,
        indexedOffset: last.offset,
        indexedPosition: clampPosition(last.position),
        messagesSize: files.logSize,
      },
      last.position,
    );
  if (last.position >= BigInt(files.logSize)) return { refusal: divergence() };
  return { first, last, lastPosition: Number(last.position), divergence };
}

/**
 * Deep mode's index check (docs/recovery.md §3.2): every entry must sit on a
 * verified batch start; the walk is told of the entries' positions and of the
 * last entry's. Entries past the proven prefix of a segment that ends refused
 * are the damage's doing, not the index's.
 */
class DeepIndexCheck {
  readonly matcher: IndexEntryMatcher;
  readonly checksums = new BatchChecksumDigest();
  lastEntryProven = false;
  private prefixEnd: bigint | null = null;
  mismatchesInPrefix = 0;

  constructor(
    entries: AsyncIterator<IndexEntry> | readonly IndexEntry[],
    private readonly lastPosition: number,
  ) {
    this.matcher = new IndexEntryMatcher(entries, (entry, batch) => {
      if (batch !== null || (this.prefixEnd !== null && entry.position < this.prefixEnd)) this.mismatchesInPrefix++;
    });
  }

  walkOptions(startOffset: bigint): WalkOptions {
    const lastPosition = this.lastPosition;
    return {
      fromPosition: 0,
      expectedOffset: startOffset,
      rebuildIndex: true,
      checksums: this.checksums,
      onVerifiedBatch: (batch) => {
        if (batch.position === lastPosition) this.lastEntryProven = true;
        return this.matcher.onBatch(batch);
      },
      // Bulk-walked batches skip onVerifiedBatch: stop at the next entry and at the last entry's batch.
      nextStopPosition: (position) =>
        Math.min(
          this.matcher.nextStopPosition(),
          !this.lastEntryProven && lastPosition >= position ? lastPosition : Number.POSITIVE_INFINITY,
        ),
    };
  }

  /** The walk ended at `stopPosition`: entries left from here on are counted against the prefix only before it. */
  walked(stopPosition: number): void {
    this.prefixEnd = BigInt(stopPosition);
  }

  /** The matcher's count, once every entry was matched or counted. */
  settle(report: SegmentReport, walk: WalkResult, mismatches: number): void {
    report.index.mismatches = mismatches;
    if (mismatches > 0 && walk.rebuiltIndex) setRebuiltIndex(report, walk);
  }
}

/** docs/recovery.md §3.2: what the walk from the index proves, into the report (timestamps, end bound, count, last batch). */
function applyIndexedWalk(
  report: SegmentReport,
  bounds: IndexBounds,
  walk: WalkResult,
  lastWithMessages: ProvenBatch | null,
  verify: VerifyMode,
  checksums: BatchChecksumDigest | undefined,
): void {
  report.startTimestamp = bounds.first.timestamp;
  report.endOffset = lastWithMessages ? lastOffsetOf(lastWithMessages) : bounds.last.offset;
  report.endTimestamp = lastWithMessages ? lastWithMessages.baseTimestamp : bounds.last.timestamp;
  report.messageCount = verify === "full" || bounds.lastPosition === 0 ? walk.messageCount : null;
  recordBatches(report, lastWithMessages, checksums);
}

/** docs/recovery.md §3.2: the indexed arm, in tail mode or deep mode. */
async function recoverIndexed(files: SegmentFiles, context: SegmentContext, window: FileWindow, report: SegmentReport): Promise<void> {
  const passes = await indexPasses(files, context, report.index.entries);
  const bounds = indexBounds(files, report, await validateIndex(passes(), files.startOffset));
  if (bounds === null) return;
  const { lastPosition } = bounds;
  let walk: WalkResult;
  let deep: DeepIndexCheck | null = null;
  if (context.verify === "full") {
    deep = new DeepIndexCheck(passes(), lastPosition);
    walk = await walkBatches(window, deep.walkOptions(files.startOffset));
    deep.walked(walk.stopPosition);
    const mismatches = await deep.matcher.finish();
    // Tail-mode refusals first, so both modes refuse the same indexes (docs/recovery.md §3.2
    // deep mode). The walk has usually proven the last entry's batch already;
    // only when it stopped short is that batch read and verified on its own.
    if (!deep.lastEntryProven && !(await verifyBatchAt(window, lastPosition)).verified) return markRefused(report, bounds.divergence());
    deep.settle(report, walk, mismatches);
  } else {
    walk = await walkBatches(window, { fromPosition: lastPosition, expectedOffset: bounds.last.offset, rebuildIndex: false });
    if (walk.batchesVerified === 0 && walk.discontinuity === null) return markRefused(report, bounds.divergence());
  }
  // Deep mode already walked from byte 0: a walk that found no message proves none came before.
  let lastWithMessages = walk.lastWithMessages;
  if (lastWithMessages === null && context.verify === "tail") {
    const before = await lastBatchWithMessagesBefore(window, files.startOffset, lastPosition);
    lastWithMessages = before.lastWithMessages;
    addOversizedWarnings(report, before, context.engineWindow.limits.maxBatchBytes);
  }
  applyIndexedWalk(report, bounds, walk, lastWithMessages, context.verify, deep?.checksums);
  // The probe's floor is the same chain end the report prints, so tail and deep mode agree.
  await settleWalk(files, context, window, report, walk, lastWithMessages);
  if (report.outcome === "refused" && deep !== null) keepPrefixMismatches(report, deep.mismatchesInPrefix);
}

/**
 * docs/recovery.md §3.2 deep mode, on a segment that ends refused: no repair
 * rewrites its index, and entries at or past the damage sit on no verified
 * batch only because the walk stopped there (the scope of loss says what lies
 * there). Only the entries inside the proven prefix that miss a batch are
 * the index's own fault, and only they are counted.
 */
function keepPrefixMismatches(report: SegmentReport, mismatchesInPrefix: number): void {
  report.index.mismatches = mismatchesInPrefix;
  report.index.rebuilt = false;
  report.index.rebuiltEntries = 0;
  report.rebuiltIndex = null;
}

/**
 * The tail walk proved only empty batches, whose base offset is the NEXT offset:
 * taking the last entry's offset as the end bound would claim an offset the
 * segment does not hold (and refuse a healthy successor as Overlap). Find the
 * true end by walking the bytes before the last entry, as deep mode would; only when none holds a
 * message does the last entry's own offset stand (docs/recovery.md §3.2 step 4). Rare: a
 * tail chunk of nothing but empty batches.
 */
async function lastBatchWithMessagesBefore(
  window: FileWindow,
  startOffset: bigint,
  lastPosition: number,
): Promise<Pick<WalkResult, "lastWithMessages" | "oversizedBatches">> {
  if (lastPosition === 0) return { lastWithMessages: null, oversizedBatches: [] };
  return walkBatches(window, { fromPosition: 0, expectedOffset: startOffset, rebuildIndex: false, untilPosition: lastPosition });
}

/**
 * docs/format.md §2.2: a verified batch longer than `maxBatchBytes` is kept, with a
 * warning. Warnings stay in ascending position order whichever walk found them.
 */
function addOversizedWarnings(report: SegmentReport, walk: Pick<WalkResult, "oversizedBatches">, maxBatchBytes: number): void {
  for (const { position, batchLength } of walk.oversizedBatches) {
    if (report.warnings.some((warning) => warning.position === position)) continue;
    report.warnings.push({
      code: "OversizedBatch",
      position,
      batchLength,
      message:
        `the batch at byte ${formatCount(position)} of ${report.logPath} is ${formatCount(batchLength)} bytes, over the ${formatCount(maxBatchBytes)}-byte batch limit; ` +
        "it verified by streaming and was kept (a server with a larger message_bus.max_message_size writes such batches)",
    });
  }
  report.warnings.sort((a, b) => a.position - b.position);
}

/** docs/recovery.md §3.3: no whole index entry; walk from byte 0 anchored on the file name, rebuilding the index. */
async function recoverIndexLess(files: SegmentFiles, context: SegmentContext, window: FileWindow, report: SegmentReport): Promise<void> {
  const checksums = context.verify === "full" ? new BatchChecksumDigest() : undefined;
  const walk = await walkBatches(window, indexLessWalk(files, checksums));
  applyIndexLessWalk(report, walk, checksums);
  await settleWalk(files, context, window, report, walk);
  finishIndexLess(report, walk);
}

function indexLessWalk(files: SegmentFiles, checksums: BatchChecksumDigest | undefined): WalkOptions {
  return { fromPosition: 0, expectedOffset: files.startOffset, rebuildIndex: true, ...(checksums === undefined ? {} : { checksums }) };
}

/** What the index-less walk proves, into the report (before settling its end). */
function applyIndexLessWalk(report: SegmentReport, walk: WalkResult, checksums: BatchChecksumDigest | undefined): void {
  recordBatches(report, walk.lastWithMessages, checksums);
  if (walk.firstWithMessages && walk.lastWithMessages) {
    report.startTimestamp = walk.firstWithMessages.baseTimestamp;
    report.endOffset = lastOffsetOf(walk.lastWithMessages);
    report.endTimestamp = walk.lastWithMessages.baseTimestamp;
  }
  report.messageCount = walk.messageCount;
}

/** The index-less arm once its end is settled: an `empty` segment, or its rebuilt index. */
function finishIndexLess(report: SegmentReport, walk: WalkResult): void {
  if (report.outcome === "refused") return;
  if (walk.lastWithMessages === null) {
    // Not one batch with messages, and nothing durable past the stop: unusable bytes (docs/recovery.md §3.3).
    report.outcome = "empty";
    report.walkedSize = 0;
    report.messageCount = 0;
    report.scope = [provenRange(report, 0), emptyTail(report, walk)];
  } else {
    setRebuiltIndex(report, walk);
  }
}

/**
 * An `empty` segment's scope after its proven range: the whole log is cut
 * (docs/recovery.md §3.3), what its damaged batch claims and proves as for any torn
 * tail. With no residue at all it holds only verified batches without a
 * message: no offset, and nothing whose acknowledgement is in doubt (no evidence).
 */
function emptyTail(report: SegmentReport, walk: WalkResult): SegmentScopeRange {
  const residue = report.residue;
  const tail = tornRange(0, report.messagesSize, walk.failure, residue?.allZero ?? false);
  return residue === null ? { ...tail, firstOffset: null, lastOffset: null, messages: 0, tornEvidence: null } : tail;
}

/**
 * Positions are numbers in the report (docs/interfaces.md §9.3). An index entry can claim any
 * u64; one past 2^53 is far past any segment (MAX_SEGMENT_BYTES), so it is
 * reported as MAX_SAFE_INTEGER, and the refusal message carries the exact value.
 */
function clampPosition(position: bigint): number {
  return position > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(position);
}

function setRebuiltIndex(report: SegmentReport, walk: WalkResult): void {
  report.rebuiltIndex = walk.rebuiltIndex ?? [];
  report.index.rebuilt = true;
  report.index.rebuiltEntries = report.rebuiltIndex.length;
}

/**
 * settleWalk's part that reads nothing: gaps, warnings, the walked size, and
 * a walk that ended in a discontinuity or at the file end. True when that
 * settled the segment; false when a residue remains to be probed.
 */
function settleWalkEnd(files: SegmentFiles, maxBatchBytes: number, report: SegmentReport, walk: WalkResult): boolean {
  const prefixMessages = report.messageCount;
  report.gaps = walk.gaps;
  addOversizedWarnings(report, walk, maxBatchBytes);
  report.walkedSize = walk.stopPosition;
  if (walk.discontinuity) {
    markRefused(report, refuse.offsetDiscontinuity({ segment: files.startOffset, ...walk.discontinuity }));
    report.scope = unknownRestScope(provenRange(report, prefixMessages), report, chainOffset(walk.discontinuity.expectedOffset));
    return true;
  }
  if (walk.stopPosition >= files.logSize) {
    report.scope = [provenRange(report, prefixMessages)]; // outcome stays clean
    return true;
  }
  return false;
}

/**
 * Continuity refusal, then the residue and its probe (docs/recovery.md §3.4–3.5), then
 * the scope of loss (§3.7). `prefixMessages`: the proven prefix's message count
 * when the walk counted it from byte 0, else null.
 */
async function settleWalk(
  files: SegmentFiles,
  context: SegmentContext,
  window: FileWindow,
  report: SegmentReport,
  walk: WalkResult,
  lastWithMessages: ProvenBatch | null = walk.lastWithMessages,
): Promise<void> {
  const segment = files.startOffset;
  const prefixMessages = report.messageCount;
  if (settleWalkEnd(files, context.engineWindow.limits.maxBatchBytes, report, walk)) return;
  const damagePosition = walk.stopPosition;
  const minBaseOffset = lastWithMessages ? lastOffsetOf(lastWithMessages) + 1n : files.startOffset;
  const probe = await probeResidue(window, damagePosition, minBaseOffset, context.budget);
  const allZero = await residueIsAllZero(window, probe);
  const residue: Residue = {
    damagePosition,
    bytes: files.logSize - damagePosition,
    allZero,
    probe: probe.verdict,
    survivorPosition: probe.survivorPosition,
    spentUnits: probe.spentUnits,
    tornEvidence: tornEvidenceOf(walk.failure, allZero),
  };
  report.residue = residue;
  if (probe.verdict === "survivor") {
    markRefused(report, refuse.interiorDamage({ segment, damagePosition, survivorPosition: probe.survivorPosition! }));
    // The survivor walk spends its own budget, with the probe's limit, never the probe's units (docs/recovery.md §3.7).
    const scopeBudget = { limitUnits: context.budget.limitUnits, spentUnits: 0 };
    const start = { damagePosition, nextOffset: chainOffset(minBaseOffset), survivorPosition: probe.survivorPosition! };
    report.scope = await survivorScope(window, provenRange(report, prefixMessages), start, scopeBudget);
  } else if (probe.verdict === "budget-exhausted") {
    markRefused(
      report,
      refuse.unverifiedResidue({
        segment,
        damagePosition,
        residueBytes: residue.bytes,
        limitUnits: context.budget.limitUnits,
        spentUnits: context.budget.spentUnits,
        stoppedAt: probe.stoppedAt!,
      }),
    );
    report.scope = unknownRestScope(provenRange(report, prefixMessages), report, chainOffset(minBaseOffset));
  } else {
    report.outcome = "torn-tail";
    report.scope = [provenRange(report, prefixMessages), tornRange(damagePosition, files.logSize, walk.failure, allZero)];
  }
}

/** The chain's next expected offset, or null past u64::MAX (a chain ending there: nothing can extend it). */
function chainOffset(offset: bigint): bigint | null {
  return offset <= U64_MAX ? offset : null;
}
