/**
 * The batch walk shared by both arms (docs/recovery.md §3.2–3.4): verify batch after batch
 * from a position, apply the continuity rule, and stop at the first position
 * that does not verify. Everything it proves is returned; nothing is decided here.
 */
import { BATCH_CHECKSUM_AT, BATCH_HEADER_BYTES, BATCH_LENGTH_AT, REBUILT_INDEX_STRIDE_BYTES, U64_MAX } from "../format/constants.js";
import { readU64 } from "../format/bytes.js";
import { Xxh3Stream } from "../hash/xxh3.js";
import type { ResidentWalkBatch } from "../engine/types.js";
import type { BatchHeader, IndexEntry, VerifyStatus } from "../format/records.js";
import type { FileWindow } from "../engine/file-window.js";
import type { ForwardGap, RebuiltIndexEntry } from "../domain/scan.js";
import { verifyBatchAt, verifyResidentBatch } from "./verify.js";

export interface ProvenBatch {
  position: number;
  baseOffset: bigint;
  baseTimestamp: bigint;
  messageCount: number;
  /** The header's batch checksum (docs/format.md §1.4), which the walk verified. */
  checksum: bigint;
}

/**
 * A rolling XXH3-64 over the checksums of every batch a walk verified, in
 * file order, each as its 8 little-endian header bytes (docs/interfaces.md
 * §9.3 `batchChecksumsXxh3`): two replicas whose walks verified the same
 * batches give the same digest. Buffers 64 checksums per update.
 */
export class BatchChecksumDigest {
  private readonly stream = new Xxh3Stream();
  private readonly pending = new Uint8Array(64 * 8);
  private readonly view = new DataView(this.pending.buffer);
  private filled = 0;

  add(checksum: bigint): void {
    this.view.setBigUint64(this.filled, checksum, true);
    this.filled += 8;
    if (this.filled === this.pending.length) this.flush();
  }

  /** Adds the checksum bytes at `bytes[at .. at + 8)` as they are. */
  addBytes(bytes: Uint8Array, at: number): void {
    // Byte by byte: a subarray per batch was an object per batch for the GC to chase (issue 23).
    const pending = this.pending;
    const filled = this.filled;
    for (let i = 0; i < 8; i++) pending[filled + i] = bytes[at + i]!;
    this.filled = filled + 8;
    if (this.filled === this.pending.length) this.flush();
  }

  private flush(): void {
    this.stream.update(this.pending.subarray(0, this.filled));
    this.filled = 0;
  }

  digest(): bigint {
    this.flush();
    return this.stream.digest();
  }
}

export interface WalkResult {
  /** The proven prefix ends here: the first position that did not verify, or the file end. */
  stopPosition: number;
  batchesVerified: number;
  /** Messages in the walked batches. */
  messageCount: number;
  firstWithMessages: ProvenBatch | null;
  lastWithMessages: ProvenBatch | null;
  /** Offset the next batch must reach (docs/recovery.md §3.4). */
  expectedOffset: bigint;
  gaps: ForwardGap[];
  /** Verified batches longer than `maxBatchBytes` (docs/format.md §2.2), kept: the segment warns about each. */
  oversizedBatches: { position: number; batchLength: number }[];
  /** A verified batch below the expected offset (docs/recovery.md §3.4): the walk stopped on it. */
  discontinuity: { position: number; expectedOffset: bigint; foundOffset: bigint } | null;
  /**
   * Why the batch at `stopPosition` did not verify, and its header when that
   * decodes (docs/recovery.md §3.7 reads the torn evidence from it); null when
   * the walk reached its end or stopped on a discontinuity.
   */
  failure: { status: VerifyStatus; header: BatchHeader | null } | null;
  /** docs/recovery.md §3.3 rebuilt index, when asked for. */
  rebuiltIndex: RebuiltIndexEntry[] | null;
}

export interface WalkOptions {
  fromPosition: number;
  expectedOffset: bigint;
  rebuildIndex: boolean;
  /** Stop (as if at the file end) on reaching this position. Defaults to the file size. */
  untilPosition?: number;
  /** Deep mode: told of every verified batch start, to check index entries against them. */
  onVerifiedBatch?: (batch: ProvenBatch) => Promise<void> | void;
  /**
   * `onVerifiedBatch`'s owner: the first position at or after `position` whose
   * batch it must be told of. Batches starting before it may be verified in
   * bulk (the engine's resident walk) without a call. Without it, every
   * verified batch is told of.
   */
  nextStopPosition?: (position: number) => number;
  /** Deep mode: fed the checksum of every verified batch, in file order (empty batches too). */
  checksums?: BatchChecksumDigest;
}

export async function walkBatches(window: FileWindow, options: WalkOptions): Promise<WalkResult> {
  const result: WalkResult = {
    stopPosition: options.fromPosition,
    batchesVerified: 0,
    messageCount: 0,
    firstWithMessages: null,
    lastWithMessages: null,
    expectedOffset: options.expectedOffset,
    gaps: [],
    oversizedBatches: [],
    discontinuity: null,
    failure: null,
    rebuiltIndex: options.rebuildIndex ? [] : null,
  };
  let lastIndexedPosition = -1;
  let position = options.fromPosition;
  const endPosition = Math.min(options.untilPosition ?? window.fileSize, window.fileSize);
  while (position < endPosition) {
    position = walkResidentRun(
      window,
      position,
      bulkStopPosition(options, endPosition, position, lastIndexedPosition),
      result,
      options.checksums,
    );
    if (result.rebuiltIndex && lastIndexedPosition < 0 && result.firstWithMessages) {
      // The bulk walk's stop keeps every later batch within the stride of this one (bulkStopPosition).
      const first = result.firstWithMessages;
      result.rebuiltIndex.push({ offset: first.baseOffset, timestamp: first.baseTimestamp, position: first.position });
      lastIndexedPosition = first.position;
    }
    if (position >= endPosition) break;
    // The batch the bulk walk left: a read, a gap, a discontinuity, an oversized or
    // failing batch, or a position the caller must be told of.
    const check = verifyResidentBatch(window, position) ?? (await verifyBatchAt(window, position));
    if (!check.verified) {
      result.failure = { status: check.status, header: check.header };
      break;
    }
    const { header } = check;
    if (header.baseOffset < result.expectedOffset) {
      result.discontinuity = { position, expectedOffset: result.expectedOffset, foundOffset: header.baseOffset };
      break;
    }
    if (check.oversized) result.oversizedBatches.push({ position, batchLength: header.batchLength });
    if (header.baseOffset > result.expectedOffset) {
      result.gaps.push({ position, expectedOffset: result.expectedOffset, foundOffset: header.baseOffset });
    }
    const batch: ProvenBatch = {
      position,
      baseOffset: header.baseOffset,
      baseTimestamp: header.baseTimestamp,
      messageCount: header.messageCount,
      checksum: header.batchChecksum,
    };
    options.checksums?.add(header.batchChecksum);
    if (header.messageCount > 0) {
      result.firstWithMessages ??= batch;
      result.lastWithMessages = batch;
      result.messageCount += header.messageCount;
      result.expectedOffset = header.baseOffset + BigInt(header.messageCount);
      if (result.rebuiltIndex && (lastIndexedPosition < 0 || position - lastIndexedPosition >= REBUILT_INDEX_STRIDE_BYTES)) {
        result.rebuiltIndex.push({ offset: header.baseOffset, timestamp: header.baseTimestamp, position });
        lastIndexedPosition = position;
      }
    }
    const pending = options.onVerifiedBatch?.(batch);
    if (pending) await pending;
    result.batchesVerified++;
    position += header.batchLength;
  }
  result.stopPosition = position;
  return result;
}

/**
 * Where the bulk walk from `position` must stop: the walk's end, the caller's next
 * position of interest, and (when rebuilding, docs/recovery.md §3.3) the next position
 * at which a batch with messages could need a rebuilt entry: one stride past the
 * last entry, or one stride past `position` before the first (the first batch with
 * messages the bulk walk finds gets the entry, and nothing before the stop lies a
 * stride past it). A stop at or before `position` means: no bulk walk here.
 */
function bulkStopPosition(options: WalkOptions, endPosition: number, position: number, lastIndexedPosition: number): number {
  let stop = endPosition;
  if (options.onVerifiedBatch) stop = Math.min(stop, options.nextStopPosition?.(position) ?? position);
  if (options.rebuildIndex) stop = Math.min(stop, (lastIndexedPosition < 0 ? position : lastIndexedPosition) + REBUILT_INDEX_STRIDE_BYTES);
  return stop;
}

/**
 * The engine's resident walk (EngineWindow.walkResident) from `position`, when its
 * header is held: every batch it walks is one the per-batch loop of `walkBatches`
 * would take whole (held, decodes within the cap, verifies, exactly the expected
 * offset), folded into `result` the same way. Returns the position it stopped at.
 */
function walkResidentRun(
  window: FileWindow,
  position: number,
  stopPosition: number,
  result: WalkResult,
  checksums: BatchChecksumDigest | undefined,
): number {
  // A chain that ended at offset u64::MAX expects 2^64: no batch can carry it (the per-batch path says what it is).
  if (stopPosition <= position || result.expectedOffset > U64_MAX) return position;
  const fromIndex = window.residentOffset(position, BATCH_HEADER_BYTES);
  if (fromIndex < 0) return position;
  const heldEndIndex = window.end - window.start;
  const walked = window.engineWindow.walkResident({
    fromIndex,
    heldEndIndex,
    fileEndIndex: window.fileSize - window.start,
    stopIndex: Math.min(stopPosition - window.start, heldEndIndex),
    expectedOffset: result.expectedOffset,
  });
  if (walked.batches === 0) return position;
  if (checksums !== undefined) {
    // The walked batches are still in the window: their checksums are read from their headers, in order.
    const view = window.engineWindow.view();
    for (let index = fromIndex, n = 0; n < walked.batches; n++) {
      checksums.addBytes(view, index + BATCH_CHECKSUM_AT);
      index += Number(readU64(view, index + BATCH_LENGTH_AT));
    }
  }
  result.batchesVerified += walked.batches;
  result.messageCount += walked.messages;
  result.expectedOffset = walked.expectedOffset;
  if (walked.firstWithMessages) result.firstWithMessages ??= provenAt(window, walked.firstWithMessages);
  if (walked.lastWithMessages) result.lastWithMessages = provenAt(window, walked.lastWithMessages);
  return window.start + walked.stopIndex;
}

function provenAt(window: FileWindow, batch: ResidentWalkBatch): ProvenBatch {
  return {
    position: window.start + batch.index,
    baseOffset: batch.baseOffset,
    baseTimestamp: batch.baseTimestamp,
    messageCount: batch.messageCount,
    // The batch was just walked, so its header is still held.
    checksum: readU64(window.engineWindow.view(), batch.index + BATCH_CHECKSUM_AT),
  };
}

/** The last offset a proven batch holds. */
export function lastOffsetOf(batch: ProvenBatch): bigint {
  return batch.baseOffset + BigInt(batch.messageCount) - 1n;
}

/**
 * Deep mode (docs/recovery.md §3.2): every whole index entry must sit on a verified batch
 * start with the same base offset. Fed batch starts in ascending order.
 */
export class IndexEntryMatcher {
  private pending: IteratorResult<IndexEntry> | null = null;
  /** Given as an array (an index read whole): entries are taken by position, with no promise per entry. */
  private readonly list: readonly IndexEntry[] | null;
  private listNext = 0;
  mismatches = 0;

  /**
   * `onMismatch` (optional) is told of each disagreeing entry, with the verified
   * batch it was checked against (`null` when it lies past the last one), so a
   * caller such as scrub can report its exact position.
   */
  constructor(
    private readonly entries: AsyncIterator<IndexEntry> | readonly IndexEntry[],
    private readonly onMismatch?: (entry: IndexEntry, batch: ProvenBatch | null) => void,
  ) {
    this.list = Array.isArray(entries) ? (entries as readonly IndexEntry[]) : null;
  }

  private async peek(): Promise<IndexEntry | null> {
    this.pending ??= await (this.entries as AsyncIterator<IndexEntry>).next();
    return this.pending.done ? null : this.pending.value;
  }

  /**
   * The first batch position this matcher must be told of: the next entry's
   * (batches starting before it consume no entry), Infinity when no entry is
   * left, 0 while the next entry is not read yet (every batch is wanted).
   */
  nextStopPosition(): number {
    if (this.list !== null) {
      const entry = this.list[this.listNext];
      return entry === undefined ? Number.POSITIVE_INFINITY : Number(entry.position);
    }
    const next = this.pending;
    if (next === null) return 0;
    return next.done ? Number.POSITIVE_INFINITY : Number(next.value.position);
  }

  /** Synchronous unless the next entry must be read from the index file. */
  onBatch(batch: ProvenBatch): Promise<void> | void {
    if (this.list !== null) return this.consumeListedUpTo(batch);
    const next = this.pending;
    if (next !== null && (next.done || next.value.position > BigInt(batch.position))) return;
    return this.consumeEntriesUpTo(batch);
  }

  private consumeListedUpTo(batch: ProvenBatch): void {
    const list = this.list!;
    const position = BigInt(batch.position);
    for (let entry = list[this.listNext]; entry !== undefined && entry.position <= position; entry = list[++this.listNext]) {
      this.check(entry, batch, position);
    }
  }

  private check(entry: IndexEntry, batch: ProvenBatch, position: bigint): void {
    if (entry.position < position || entry.offset !== batch.baseOffset) {
      this.mismatches++;
      this.onMismatch?.(entry, batch);
    }
  }

  private async consumeEntriesUpTo(batch: ProvenBatch): Promise<void> {
    const position = BigInt(batch.position);
    for (let entry = await this.peek(); entry !== null && entry.position <= position; entry = await this.peek()) {
      this.check(entry, batch, position);
      this.pending = null;
    }
  }

  /** Entries past the last verified batch start sit on no proven batch. */
  async finish(): Promise<number> {
    if (this.list !== null) {
      for (; this.listNext < this.list.length; this.listNext++) {
        this.mismatches++;
        this.onMismatch?.(this.list[this.listNext]!, null);
      }
      return this.mismatches;
    }
    for (let entry = await this.peek(); entry !== null; entry = await this.peek()) {
      this.mismatches++;
      this.onMismatch?.(entry, null);
      this.pending = null;
    }
    return this.mismatches;
  }
}
