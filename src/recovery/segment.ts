/**
 * One segment's recovery (docs/recovery.md §3): choose the arm, walk, probe the residue,
 * and say what is proven. Pure over its inputs apart from reads through the
 * window; it never writes.
 */
import { INDEX_ENTRY_BYTES, U64_MAX } from "../format/constants.js";
import type { IndexEntry } from "../format/records.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import { FileWindow } from "../engine/file-window.js";
import type { EngineWindow } from "../engine/types.js";
import { formatCount } from "../domain/numbers.js";
import type { Refusal, Residue, SegmentReport, SegmentScopeRange, VerifyMode } from "../domain/scan.js";
import { INDEX_CHUNK_ENTRIES, readIndexEntries, readIndexEntriesStreaming, validateIndex } from "./index-file.js";
import { type ProbeBudget, probeResidue, residueIsAllZero } from "./probe.js";
import { refuse } from "./refusals.js";
import { assertScopeTiles, provenRange, survivorScope, tornEvidenceOf, tornRange, unknownRestScope, unwalkedScope } from "./scope.js";
import { verifyBatchAt } from "./verify.js";
import { BatchChecksumDigest, IndexEntryMatcher, type ProvenBatch, type WalkResult, lastOffsetOf, walkBatches } from "./walk.js";

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

export async function recoverSegment(files: SegmentFiles, context: SegmentContext): Promise<SegmentReport> {
  const wholeEntries = Math.floor(files.indexSize / INDEX_ENTRY_BYTES);
  const report = blankReport(files, wholeEntries);
  if (wholeEntries === 0 && files.logSize === 0) {
    report.scope = unwalkedScope(report);
    return report; // docs/recovery.md §3.1: an empty segment, P = 0 = size.
  }
  report.arm = wholeEntries > 0 ? "indexed" : "index-less";
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

/** docs/recovery.md §3.2: the indexed arm, in tail mode or deep mode. */
async function recoverIndexed(files: SegmentFiles, context: SegmentContext, window: FileWindow, report: SegmentReport): Promise<void> {
  const segment = files.startOffset;
  const passes = await indexPasses(files, context, report.index.entries);
  const { validation, summary } = await validateIndex(passes(), files.startOffset);
  if (!validation.valid) {
    markRefused(
      report,
      validation.code === "IndexEntryBeforeSegmentStart"
        ? refuse.indexEntryBeforeSegmentStart({ segment, firstEntryOffset: validation.firstEntryOffset })
        : refuse.indexEntriesNotMonotone({ segment, entryIndex: validation.entryIndex }),
    );
    return;
  }
  const first = summary.first!;
  const last = summary.last!;
  const lastPosition = last.position < BigInt(files.logSize) ? Number(last.position) : null;
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
  if (lastPosition === null) return markRefused(report, divergence());

  let walk: WalkResult;
  let checksums: BatchChecksumDigest | undefined;
  let deepIndexMismatchesInPrefix: number | null = null;
  if (context.verify === "full") {
    // Entries past the proven prefix of a segment that ends refused are the damage's doing, not the index's (docs/recovery.md §3.2).
    let prefixEnd: bigint | null = null;
    let mismatchesInPrefix = 0;
    const matcher = new IndexEntryMatcher(passes(), (entry, batch) => {
      if (batch !== null || (prefixEnd !== null && entry.position < prefixEnd)) mismatchesInPrefix++;
    });
    let lastEntryProven = false;
    checksums = new BatchChecksumDigest();
    walk = await walkBatches(window, {
      fromPosition: 0,
      expectedOffset: files.startOffset,
      rebuildIndex: true,
      checksums,
      onVerifiedBatch: (batch) => {
        if (batch.position === lastPosition) lastEntryProven = true;
        return matcher.onBatch(batch);
      },
      // Bulk-walked batches skip onVerifiedBatch: stop at the next entry and at the last entry's batch.
      nextStopPosition: (position) =>
        Math.min(matcher.nextStopPosition(), !lastEntryProven && lastPosition >= position ? lastPosition : Number.POSITIVE_INFINITY),
    });
    prefixEnd = BigInt(walk.stopPosition);
    const mismatches = await matcher.finish();
    // Tail-mode refusals first, so both modes refuse the same indexes (docs/recovery.md §3.2
    // deep mode). The walk has usually proven the last entry's batch already;
    // only when it stopped short is that batch read and verified on its own.
    if (!lastEntryProven && !(await verifyBatchAt(window, lastPosition)).verified) return markRefused(report, divergence());
    report.index.mismatches = mismatches;
    if (mismatches > 0 && walk.rebuiltIndex) setRebuiltIndex(report, walk);
    deepIndexMismatchesInPrefix = mismatchesInPrefix;
  } else {
    walk = await walkBatches(window, { fromPosition: lastPosition, expectedOffset: last.offset, rebuildIndex: false });
    if (walk.batchesVerified === 0 && walk.discontinuity === null) return markRefused(report, divergence());
  }
  report.startTimestamp = first.timestamp;
  // Deep mode already walked from byte 0: a walk that found no message proves none came before.
  let lastWithMessages = walk.lastWithMessages;
  if (lastWithMessages === null && context.verify === "tail") {
    const before = await lastBatchWithMessagesBefore(window, files.startOffset, lastPosition);
    lastWithMessages = before.lastWithMessages;
    addOversizedWarnings(report, before, context.engineWindow.limits.maxBatchBytes);
  }
  report.endOffset = lastWithMessages ? lastOffsetOf(lastWithMessages) : last.offset;
  report.endTimestamp = lastWithMessages ? lastWithMessages.baseTimestamp : last.timestamp;
  report.messageCount = context.verify === "full" || lastPosition === 0 ? walk.messageCount : null;
  recordBatches(report, lastWithMessages, checksums);
  // The probe's floor is the same chain end the report prints, so tail and deep mode agree.
  await settleWalk(files, context, window, report, walk, lastWithMessages);
  if (report.outcome === "refused" && deepIndexMismatchesInPrefix !== null) keepPrefixMismatches(report, deepIndexMismatchesInPrefix);
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
  const walk = await walkBatches(window, {
    fromPosition: 0,
    expectedOffset: files.startOffset,
    rebuildIndex: true,
    ...(checksums === undefined ? {} : { checksums }),
  });
  recordBatches(report, walk.lastWithMessages, checksums);
  if (walk.firstWithMessages && walk.lastWithMessages) {
    report.startTimestamp = walk.firstWithMessages.baseTimestamp;
    report.endOffset = lastOffsetOf(walk.lastWithMessages);
    report.endTimestamp = walk.lastWithMessages.baseTimestamp;
  }
  report.messageCount = walk.messageCount;
  await settleWalk(files, context, window, report, walk);
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
  report.gaps = walk.gaps;
  addOversizedWarnings(report, walk, context.engineWindow.limits.maxBatchBytes);
  report.walkedSize = walk.stopPosition;
  if (walk.discontinuity) {
    markRefused(report, refuse.offsetDiscontinuity({ segment, ...walk.discontinuity }));
    report.scope = unknownRestScope(provenRange(report, prefixMessages), report, chainOffset(walk.discontinuity.expectedOffset));
    return;
  }
  if (walk.stopPosition >= files.logSize) {
    report.scope = [provenRange(report, prefixMessages)]; // outcome stays clean
    return;
  }
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
