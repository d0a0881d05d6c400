/**
 * The batch walk shared by both arms (docs/recovery.md §3.2–3.4): verify batch after batch
 * from a position, apply the continuity rule, and stop at the first position
 * that does not verify. Everything it proves is returned; nothing is decided here.
 */
import { REBUILT_INDEX_STRIDE_BYTES } from "../format/constants.js";
import type { IndexEntry } from "../format/records.js";
import type { FileWindow } from "../io/window.js";
import type { ForwardGap, RebuiltIndexEntry } from "../report/types.js";
import { verifyBatchAt, verifyResidentBatch } from "./verify.js";

export interface ProvenBatch {
  position: number;
  baseOffset: bigint;
  baseTimestamp: bigint;
  messageCount: number;
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
    rebuiltIndex: options.rebuildIndex ? [] : null,
  };
  let lastIndexedPosition = -1;
  let position = options.fromPosition;
  const endPosition = Math.min(options.untilPosition ?? window.fileSize, window.fileSize);
  while (position < endPosition) {
    const check = verifyResidentBatch(window, position) ?? (await verifyBatchAt(window, position));
    if (!check.verified) break;
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
    };
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
  mismatches = 0;

  /**
   * `onMismatch` (optional) is told of each disagreeing entry, with the verified
   * batch it was checked against (`null` when it lies past the last one), so a
   * caller such as scrub can report its exact position.
   */
  constructor(
    private readonly entries: AsyncIterator<IndexEntry>,
    private readonly onMismatch?: (entry: IndexEntry, batch: ProvenBatch | null) => void,
  ) {}

  private async peek(): Promise<IndexEntry | null> {
    this.pending ??= await this.entries.next();
    return this.pending.done ? null : this.pending.value;
  }

  /** Synchronous unless the next entry must be read from the index file. */
  onBatch(batch: ProvenBatch): Promise<void> | void {
    const next = this.pending;
    if (next !== null && (next.done || next.value.position > BigInt(batch.position))) return;
    return this.consumeEntriesUpTo(batch);
  }

  private async consumeEntriesUpTo(batch: ProvenBatch): Promise<void> {
    const position = BigInt(batch.position);
    for (let entry = await this.peek(); entry !== null && entry.position <= position; entry = await this.peek()) {
      if (entry.position < position || entry.offset !== batch.baseOffset) {
        this.mismatches++;
        this.onMismatch?.(entry, batch);
      }
      this.pending = null;
    }
  }

  /** Entries past the last verified batch start sit on no proven batch. */
  async finish(): Promise<number> {
    for (let entry = await this.peek(); entry !== null; entry = await this.peek()) {
      this.mismatches++;
      this.onMismatch?.(entry, null);
      this.pending = null;
    }
    return this.mismatches;
  }
}
