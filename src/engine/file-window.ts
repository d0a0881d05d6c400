/**
 * A forward-moving window of one file, held in engine memory (docs/engines.md §7): file
 * bytes are read straight into `engineWindow.view()`, never through a JS
 * buffer. Every refill checks the abort signal and reports progress, and
 * yields to the event loop with a macrotask once YIELD_INTERVAL_MS have passed
 * since the last turn.
 */
import { setImmediate as yieldMacrotask } from "node:timers/promises";
import type { EngineWindow } from "./types.js";
import { abortError } from "../io/errors.js";
import type { BlockingFile, ReadableFile } from "../io/fs.js";
import { forEachChunk, readExactly, readExactlyBlocking } from "../io/read-exactly.js";

/** The longest a scan runs on a thread between two macrotask turns (docs/engines.md §7.1), given a refill in that time. */
export const YIELD_INTERVAL_MS = 2;

/** When a refill last yielded on this thread: every window of the thread counts against the one interval. */
let lastYieldAt = 0;

export interface WindowHooks {
  signal?: AbortSignal | undefined;
  /** Called after each refill with the bytes it read. */
  onRead?: (bytesRead: number) => void;
}

export class FileWindow {
  /** File position of `view()[0]`. */
  private startPosition = 0;
  /** Bytes of the file currently held, from `startPosition`. */
  private heldBytes = 0;

  constructor(
    private readonly file: ReadableFile,
    readonly path: string,
    /** The size the scan started with: a shorter read is StorageSizeMismatch, never a torn tail. */
    readonly fileSize: number,
    readonly engineWindow: EngineWindow,
    private readonly hooks: WindowHooks = {},
  ) {}

  get capacityBytes(): number {
    return this.engineWindow.capacityBytes;
  }

  /** File position of window offset 0. */
  get start(): number {
    return this.startPosition;
  }

  /** File position just past the bytes held. */
  get end(): number {
    return this.startPosition + this.heldBytes;
  }

  /** Window offset of `[position, position + lengthBytes)` if it is resident now, else -1 (no I/O, no await). */
  residentOffset(position: number, lengthBytes: number): number {
    return position >= this.startPosition && position + lengthBytes <= this.end ? position - this.startPosition : -1;
  }

  /**
   * Makes `[position, position + lengthBytes)` resident and returns its window
   * offset. `lengthBytes` must not exceed the capacity or run past the file.
   */
  async ensure(position: number, lengthBytes: number): Promise<number> {
    if (lengthBytes > this.capacityBytes || position + lengthBytes > this.fileSize) {
      throw new RangeError(`window request [${position}, +${lengthBytes}) exceeds capacity or file ${this.path}`);
    }
    if (position < this.startPosition || position + lengthBytes > this.end) {
      await this.refill(position);
    }
    return position - this.startPosition;
  }

  /**
   * Hands `[position, position + lengthBytes)` to `visit` a window-load at a
   * time, in order, so a range larger than the window streams through it.
   * `doneBytes` is how much of the range came before this chunk.
   */
  async forEachChunk(position: number, lengthBytes: number, visit: (chunk: Uint8Array, doneBytes: number) => void): Promise<void> {
    await forEachChunk(
      position,
      lengthBytes,
      this.capacityBytes,
      async (at, bytes) => {
        const index = await this.ensure(at, bytes);
        return this.engineWindow.view().subarray(index, index + bytes);
      },
      visit,
    );
  }

  /** Reads as much as fits from `position` on (see `carry`). */
  private async refill(position: number): Promise<void> {
    const { wanted, carried } = this.carry(position);
    try {
      await readExactly(this.file, this.engineWindow.view().subarray(carried, wanted), position + carried, {
        path: this.path,
        sizeAtStart: this.fileSize,
      });
    } catch (error) {
      this.heldBytes = 0;
      throw error;
    }
    this.held(position, wanted, carried);
    // A macrotask turn, not a resolved promise: timers and I/O callbacks get to run (docs/engines.md §7.1), at
    // least every YIELD_INTERVAL_MS of scanning on this thread. A turn after every refill cost a twentieth of a
    // scan of many small partitions, each one window (docs/benchmarks.md).
    if (yieldDue()) await yieldTurn();
    if (this.hooks.signal?.aborted) throw abortError(this.hooks.signal);
  }

  /**
   * `refill` with the file's blocking reads, for a load that runs without a
   * promise (src/recovery/resident.ts): as much as fits from `position` on
   * becomes resident. No macrotask turn here: the caller takes it between
   * partitions when `yieldDue()` says so.
   */
  loadBlocking(file: Pick<BlockingFile, "readBlocking">, position: number): void {
    const { wanted, carried } = this.carry(position);
    try {
      readExactlyBlocking(file, this.engineWindow.view().subarray(carried, wanted), position + carried, {
        path: this.path,
        sizeAtStart: this.fileSize,
      });
    } catch (error) {
      this.heldBytes = 0;
      throw error;
    }
    this.held(position, wanted, carried);
    if (this.hooks.signal?.aborted) throw abortError(this.hooks.signal);
  }

  /**
   * How much a refill at `position` reads: as much as fits, less the bytes from
   * `position` that are already resident (the head of a batch split by the
   * window end), which move to the front instead of being read again.
   */
  private carry(position: number): { wanted: number; carried: number } {
    const wanted = Math.min(this.capacityBytes, this.fileSize - position);
    let carried = 0;
    if (position >= this.startPosition && position < this.end) {
      carried = Math.min(this.end - position, wanted);
      this.engineWindow.view().copyWithin(0, position - this.startPosition, position - this.startPosition + carried);
    }
    return { wanted, carried };
  }

  private held(position: number, wanted: number, carried: number): void {
    this.startPosition = position;
    this.heldBytes = wanted;
    this.hooks.onRead?.(wanted - carried);
  }
}

/** Whether this thread has scanned YIELD_INTERVAL_MS since its last macrotask turn (docs/engines.md §7.1). */
export function yieldDue(): boolean {
  return performance.now() - lastYieldAt >= YIELD_INTERVAL_MS;
}

/** A macrotask turn, noted as this thread's last. */
export async function yieldTurn(): Promise<void> {
  await yieldMacrotask();
  lastYieldAt = performance.now();
}
