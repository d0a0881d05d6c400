/**
 * Bytes to checked batches, one after another (docs/format.md §2.1, docs/recovery.md
 * §3.4): the one place that turns a file position into a decoded, verified batch and
 * steps to the next one. The recovery walk (its per-batch path, its bulk path and the
 * deep-mode checksum digest), `dump` and salvage's re-walk of the kept ranges all step
 * through a `BatchIterator`, so they cannot disagree about where a batch starts or
 * whether it verifies.
 */
import { assert } from "../assert.js";
import { BATCH_CHECKSUM_AT, BATCH_HEADER_BYTES, BATCH_LENGTH_AT, U64_MAX } from "../format/constants.js";
import { readU64 } from "../format/bytes.js";
import type { FileWindow } from "../engine/file-window.js";
import type { ResidentWalkBatch } from "../engine/types.js";
import { type BatchCheck, verifyBatchAt, verifyResidentBatch } from "./verify.js";

/** A verified batch, as the walk proves it. */
export interface ProvenBatch {
  position: number;
  baseOffset: bigint;
  baseTimestamp: bigint;
  messageCount: number;
  /** The header's batch checksum (docs/format.md §1.4), which the walk verified. */
  checksum: bigint;
}

/** One batch as the iterator yields it: where it starts, and its check there. */
export interface IteratedBatch {
  position: number;
  check: BatchCheck;
}

/** What a bulk run (`BatchIterator.walkResident`) walked: contiguous batches that verify. */
export interface ResidentRun {
  batches: number;
  messages: number;
  /** The offset the next batch must carry after the run. */
  expectedOffset: bigint;
  firstWithMessages: ProvenBatch | null;
  lastWithMessages: ProvenBatch | null;
}

/** Sees the header of each batch a bulk run walked, in file order: `view[index ..]` holds it. */
export type WalkedHeaderVisitor = (view: Uint8Array, index: number) => void;

export class BatchIterator {
  private nextPosition: number;
  /** False once a batch past which nothing can be located was yielded. */
  private locatable = true;

  /**
   * Batches of `window`'s file from `fromPosition` (a batch start) on; none that starts
   * at or past `untilPosition` (default and at most: the file size) is yielded.
   */
  constructor(
    readonly window: FileWindow,
    fromPosition: number,
    untilPosition: number = window.fileSize,
  ) {
    assert(Number.isSafeInteger(fromPosition) && fromPosition >= 0, "a batch iterator starts at a file position");
    this.nextPosition = fromPosition;
    this.untilPosition = Math.min(untilPosition, window.fileSize);
  }

  readonly untilPosition: number;

  /** Where the next batch starts (once iteration ended: where the last yielded batch starts). */
  get position(): number {
    return this.nextPosition;
  }

  /** Whether a batch remains to be yielded. */
  get done(): boolean {
    return !this.locatable || this.nextPosition >= this.untilPosition;
  }

  /**
   * The next batch, checked where it starts (docs/format.md §2.1), or null when none
   * remains. The batch after it starts where its batch_length says, whether or not it
   * verified; nothing after a header that does not decode, or that claims more bytes
   * than remain, can be located, so iteration ends there.
   */
  async next(): Promise<IteratedBatch | null> {
    if (this.done) return null;
    return this.nextResident() ?? this.advance(this.nextPosition, await verifyBatchAt(this.window, this.nextPosition));
  }

  /**
   * The next batch when checking it needs no read (its header and, when that decodes,
   * the whole batch are resident); `undefined` when a read is needed (call `next`),
   * null when no batch remains. No await: the walk's common per-batch case.
   */
  nextResident(): IteratedBatch | null | undefined {
    if (this.done) return null;
    const check = verifyResidentBatch(this.window, this.nextPosition);
    return check === null ? undefined : this.advance(this.nextPosition, check);
  }

  private advance(position: number, check: BatchCheck): IteratedBatch {
    assert(position === this.nextPosition, "a batch is yielded once, where the previous one ended");
    const header = check.header;
    if (header === null || header.batchLength > this.window.fileSize - position) {
      this.locatable = false;
    } else {
      // A decoded header claims at least one header's bytes: the iterator always moves forward.
      assert(header.batchLength >= BATCH_HEADER_BYTES, "a decoded batch is at least one header long");
      this.nextPosition = position + header.batchLength;
    }
    return { position, check };
  }

  /**
   * The engine's resident walk (EngineWindow.walkResident, docs/engines.md §8.5) from
   * the current position, when its header is held: batch after batch while each is
   * whole in the bytes held and the file, decodes within the length cap, verifies and
   * carries exactly the expected offset, up to the first that starts at or past
   * `stopPosition`. Every batch it walks is one `next` would yield verified and
   * continuous. Moves past them and returns what they hold (null when none was
   * walked); `onWalked` sees each walked header, in order.
   */
  walkResident(stopPosition: number, expectedOffset: bigint, onWalked?: WalkedHeaderVisitor): ResidentRun | null {
    const window = this.window;
    const position = this.nextPosition;
    // A chain that ended at offset u64::MAX expects 2^64: no batch can carry it (the per-batch path says what it is).
    const stop = Math.min(stopPosition, this.untilPosition);
    if (this.done || stop <= position || expectedOffset > U64_MAX) return null;
    const fromIndex = window.residentOffset(position, BATCH_HEADER_BYTES);
    if (fromIndex < 0) return null;
    const heldEndIndex = window.end - window.start;
    const walked = window.engineWindow.walkResident({
      fromIndex,
      heldEndIndex,
      fileEndIndex: window.fileSize - window.start,
      stopIndex: Math.min(stop - window.start, heldEndIndex),
      expectedOffset,
    });
    if (walked.batches === 0) return null;
    assert(walked.stopIndex > fromIndex && walked.stopIndex <= heldEndIndex, "a resident walk ends inside the bytes held");
    if (onWalked !== undefined) visitWalkedHeaders(window.engineWindow.view(), fromIndex, walked.batches, onWalked);
    this.nextPosition = window.start + walked.stopIndex;
    return {
      batches: walked.batches,
      messages: walked.messages,
      expectedOffset: walked.expectedOffset,
      firstWithMessages: walked.firstWithMessages === null ? null : provenAt(window, walked.firstWithMessages),
      lastWithMessages: walked.lastWithMessages === null ? null : provenAt(window, walked.lastWithMessages),
    };
  }
}

/** The `batches` headers a resident walk just walked from `fromIndex`: still held, each batch_length already decoded. */
function visitWalkedHeaders(view: Uint8Array, fromIndex: number, batches: number, visit: WalkedHeaderVisitor): void {
  for (let index = fromIndex, n = 0; n < batches; n++) {
    visit(view, index);
    index += Number(readU64(view, index + BATCH_LENGTH_AT));
  }
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
