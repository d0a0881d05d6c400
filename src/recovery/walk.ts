/**
 * The batch walk shared by both arms (docs/recovery.md §3.2–3.4): verify batch after batch
 * from a position (through one BatchIterator, ./batches.ts), apply the continuity rule,
 * and stop at the first position that does not verify. Everything it proves is
 * returned; nothing is decided here.
 */
import { assert } from "../assert.js";
import { BATCH_CHECKSUM_AT, REBUILT_INDEX_STRIDE_BYTES } from "../format/constants.js";
import { Xxh3Stream } from "../hash/xxh3.js";
import type { BatchHeader, IndexEntry, VerifyStatus } from "../format/records.js";
import type { FileWindow } from "../engine/file-window.js";
import type { ForwardGap, RebuiltIndexEntry } from "../domain/scan.js";
import { BatchIterator, type IteratedBatch, type ProvenBatch, type ResidentRun, type WalkedHeaderVisitor } from "./batches.js";

export type { ProvenBatch } from "./batches.js";

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

  /** Adds the checksum of each batch a bulk run walked, read from its header as it is (BatchIterator.walkResident). */
  headerVisitor(): WalkedHeaderVisitor {
    return (view, index) => this.addBytes(view, index + BATCH_CHECKSUM_AT);
  }

  /** Adds the checksum bytes at `bytes[at .. at + 8)` as they are. */
  private addBytes(bytes: Uint8Array, at: number): void {
    // Byte by byte: a subarray per batch would be an object per batch for the GC to chase.
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

/** Where a rebuilt index continues from (`WalkOptions.rebuildFrom`). */
export interface RebuildFrom {
  /** The last entry's position in the rebuilt log, -1 when there is none yet. */
  lastIndexedPosition: number;
  /** Added to a file position to give its position in the rebuilt log. */
  positionShift: number;
}

export interface WalkOptions {
  fromPosition: number;
  expectedOffset: bigint;
  rebuildIndex: boolean;
  /**
   * With `rebuildIndex`: continue an index rebuilt by earlier walks, into a log whose
   * positions are this file's shifted (salvage's kept ranges, docs/repair.md §6.5).
   * Default: a new index of this file.
   */
  rebuildFrom?: RebuildFrom;
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
  const walk = new BatchWalk(window, options);
  for (;;) {
    const state = walk.advanceResident();
    if (state === WALK_DONE) return walk.result;
    if (state === WALK_NEEDS_READ) await walk.stepWithRead();
    else await state;
  }
}

/**
 * `walkBatches` over the bytes the window holds, with no promise: the walk's
 * result, or null when a batch needs a read (the window, and nothing else,
 * was changed; the caller starts over with `walkBatches`). `onVerifiedBatch`
 * must answer synchronously here (an index matcher over an array does).
 */
export function walkResidentBatches(window: FileWindow, options: WalkOptions): WalkResult | null {
  const walk = new BatchWalk(window, options);
  const state = walk.advanceResident();
  assert(typeof state !== "object", "a resident walk's visitor answers without a promise");
  return state === WALK_DONE ? walk.result : null;
}

const WALK_DONE = 1;
const WALK_NEEDS_READ = 2;

/**
 * One walk's state and its per-batch rules, driven by `walkBatches` (with
 * reads) or `walkResidentBatches` (without): both run exactly this loop, so
 * they cannot disagree about a batch.
 */
class BatchWalk {
  readonly result: WalkResult;
  private readonly batches: BatchIterator;
  private readonly rebuild: IndexRebuild | null;
  private readonly addChecksum: WalkedHeaderVisitor | undefined;
  /** The walk stopped on a batch that did not prove (the iterator may go on; the walk does not). */
  private stopped = false;

  constructor(
    window: FileWindow,
    private readonly options: WalkOptions,
  ) {
    this.result = {
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
    this.batches = new BatchIterator(window, options.fromPosition, options.untilPosition);
    this.rebuild = this.result.rebuiltIndex === null ? null : new IndexRebuild(this.result.rebuiltIndex, options.rebuildFrom);
    this.addChecksum = options.checksums?.headerVisitor();
  }

  /**
   * Walks on while no read is needed: WALK_DONE once the result is final,
   * WALK_NEEDS_READ when the next batch needs a read (`stepWithRead`), or the
   * caller's pending `onVerifiedBatch` (await it, then call again).
   */
  advanceResident(): typeof WALK_DONE | typeof WALK_NEEDS_READ | Promise<void> {
    if (this.stopped) return WALK_DONE;
    const { batches, result } = this;
    while (!batches.done) {
      const run = batches.walkResident(bulkStopPosition(this.options, batches, this.rebuild), result.expectedOffset, this.addChecksum);
      if (run !== null) addRun(result, run, this.rebuild);
      if (batches.done) break;
      // The batch the bulk walk left: a read, a gap, a discontinuity, an oversized or
      // failing batch, or a position the caller must be told of.
      const batch = batches.nextResident();
      if (batch === undefined) return WALK_NEEDS_READ;
      assert(batch !== null, "an iterator that is not done yields a batch");
      const taken = this.take(batch);
      if (taken !== undefined) return taken;
    }
    result.stopPosition = batches.position;
    return WALK_DONE;
  }

  /** The next batch, read; then `advanceResident` again. */
  async stepWithRead(): Promise<void> {
    const batch = await this.batches.next();
    assert(batch !== null, "an iterator that is not done yields a batch");
    const taken = this.take(batch);
    if (typeof taken === "object") await taken;
  }

  /** One batch folded in: WALK_DONE when the walk stops on it, the caller's pending visit, or undefined to go on. */
  private take(batch: IteratedBatch): typeof WALK_DONE | Promise<void> | undefined {
    const proven = provenBatch(this.result, batch);
    if (proven === null) {
      // The proven prefix ends where this batch starts (the iterator may already have stepped past it).
      this.result.stopPosition = batch.position;
      this.stopped = true;
      return WALK_DONE;
    }
    this.options.checksums?.add(proven.checksum);
    this.rebuild?.offer(proven);
    return this.options.onVerifiedBatch?.(proven) || undefined;
  }
}

/**
 * The per-batch rules (docs/recovery.md §3.4) on one iterated batch, folded into
 * `result`: the verified, continuous batch it proves, or null when the walk stops on
 * it (it did not verify, or it goes backwards).
 */
function provenBatch(result: WalkResult, { position, check }: IteratedBatch): ProvenBatch | null {
  if (!check.verified) {
    result.failure = { status: check.status, header: check.header };
    return null;
  }
  const { header } = check;
  if (header.baseOffset < result.expectedOffset) {
    result.discontinuity = { position, expectedOffset: result.expectedOffset, foundOffset: header.baseOffset };
    return null;
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
  if (header.messageCount > 0) {
    result.firstWithMessages ??= batch;
    result.lastWithMessages = batch;
    result.messageCount += header.messageCount;
    result.expectedOffset = header.baseOffset + BigInt(header.messageCount);
  }
  result.batchesVerified++;
  return batch;
}

/** A bulk run folded into `result` the way the per-batch path folds each of its batches. */
function addRun(result: WalkResult, run: ResidentRun, rebuild: IndexRebuild | null): void {
  result.batchesVerified += run.batches;
  result.messageCount += run.messages;
  result.expectedOffset = run.expectedOffset;
  if (run.firstWithMessages) {
    result.firstWithMessages ??= run.firstWithMessages;
    // The bulk walk's stop keeps every later batch of the run within the stride of its first (bulkStopPosition).
    rebuild?.offerRunStart(run.firstWithMessages);
  }
  if (run.lastWithMessages) result.lastWithMessages = run.lastWithMessages;
}

/**
 * docs/recovery.md §3.3 rebuilt index: an entry at the first batch with messages, then
 * at each batch with messages that starts a stride or more past the previous entry.
 * Entry positions are file positions plus `positionShift` (a salvage rebuilds the
 * index of a log made of kept ranges: docs/repair.md §6.5); the stride is measured
 * between shifted positions.
 */
class IndexRebuild {
  /** Shifted position of the last entry, -1 before the first. */
  private lastIndexed: number;
  private readonly shift: number;

  constructor(
    private readonly entries: RebuiltIndexEntry[],
    from: RebuildFrom = { lastIndexedPosition: -1, positionShift: 0 },
  ) {
    assert(Number.isSafeInteger(from.positionShift) && from.lastIndexedPosition >= -1, "a rebuild continues from an entry or none");
    this.lastIndexed = from.lastIndexedPosition;
    this.shift = from.positionShift;
  }

  offer(batch: ProvenBatch): void {
    if (batch.messageCount === 0) return;
    const position = batch.position + this.shift;
    if (this.lastIndexed >= 0 && position - this.lastIndexed < REBUILT_INDEX_STRIDE_BYTES) return;
    this.entries.push({ offset: batch.baseOffset, timestamp: batch.baseTimestamp, position });
    this.lastIndexed = position;
  }

  /** A bulk run's first batch with messages: an entry only when it is the first of all (the stop did the rest). */
  offerRunStart(batch: ProvenBatch): void {
    if (this.lastIndexed < 0) this.offer(batch);
  }

  /** The first file position at which a batch with messages could need an entry (from `position` on). */
  nextEntryPosition(position: number): number {
    return (this.lastIndexed < 0 ? position : this.lastIndexed - this.shift) + REBUILT_INDEX_STRIDE_BYTES;
  }
}

/**
 * Where the bulk walk from the iterator's position must stop: the walk's end, the
 * caller's next position of interest, and (when rebuilding, docs/recovery.md §3.3) the
 * next position at which a batch with messages could need a rebuilt entry: one stride
 * past the last entry, or one stride past the position before the first (the first
 * batch with messages the bulk walk finds gets the entry, and nothing before the stop
 * lies a stride past it). A stop at or before the position means: no bulk walk here.
 */
function bulkStopPosition(options: WalkOptions, batches: BatchIterator, rebuild: IndexRebuild | null): number {
  const position = batches.position;
  let stop = batches.untilPosition;
  if (options.onVerifiedBatch) stop = Math.min(stop, options.nextStopPosition?.(position) ?? position);
  if (rebuild !== null) stop = Math.min(stop, rebuild.nextEntryPosition(position));
  return stop;
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

  /** `finish` of a matcher given an array: no promise. */
  finishListed(): number {
    const list = this.list;
    assert(list !== null, "finishListed needs the entries as an array");
    for (; this.listNext < list.length; this.listNext++) {
      this.mismatches++;
      this.onMismatch?.(list[this.listNext]!, null);
    }
    return this.mismatches;
  }

  /** Entries past the last verified batch start sit on no proven batch. */
  async finish(): Promise<number> {
    if (this.list !== null) return this.finishListed();
    for (let entry = await this.peek(); entry !== null; entry = await this.peek()) {
      this.mismatches++;
      this.onMismatch?.(entry, null);
      this.pending = null;
    }
    return this.mismatches;
  }
}
