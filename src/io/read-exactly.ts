/**
 * The one read-exactly loop and the one chunk loop, for both sides (docs/recovery.md §3.6):
 * fill a target from a file position, retrying short reads, and hand a byte
 * range on a chunk at a time. On the read-only side a read error is
 * ReadFailure and end of file before the target is full means the file shrank
 * since its size was taken, StorageSizeMismatch, never a torn tail; both name
 * the path, the position and that nothing was changed. Repair and restore name
 * their own failures (src/repair/files.ts) through the same loops.
 */
import { ScanFailure, describeCause } from "./errors.js";
import type { BlockingFile, ReadableFile } from "./fs.js";

/** What a positional read needs: `ReadableFile.read` (0 at end of file). */
export type PositionalRead = Pick<ReadableFile, "read">;

/** How the read-only side names a failed read. */
export interface ReadContext {
  path: string;
  /** The file's size when the reader took it (named in the StorageSizeMismatch message). */
  sizeAtStart: number;
}

/** How a caller names a failed read: what to throw when a read throws at `at`, and when the file ends at `at`. */
export interface ReadFailures {
  readFailed(cause: unknown, at: number): unknown;
  endedAt(at: number): unknown;
}

/** The read-only side's failures: ReadFailure (with its cause) and StorageSizeMismatch, each naming the path and byte. */
function scanReadFailures(context: ReadContext): ReadFailures {
  return {
    readFailed: (cause, at) =>
      new ScanFailure(
        "ReadFailure",
        context.path,
        `read of ${context.path} at byte ${at} failed: ${describeCause(cause)}; nothing was changed`,
        {
          cause,
        },
      ),
    endedAt: (at) =>
      new ScanFailure(
        "StorageSizeMismatch",
        context.path,
        `${context.path} ended at byte ${at} but was ${context.sizeAtStart} bytes when the scan started; nothing was changed`,
      ),
  };
}

/** Fills all of `target` with the file bytes from `position` on. */
export async function readExactly(
  file: PositionalRead,
  target: Uint8Array,
  position: number,
  context: ReadContext | ReadFailures,
): Promise<void> {
  const failures = "endedAt" in context ? context : scanReadFailures(context);
  for (let filled = 0; filled < target.length; ) {
    const at = position + filled;
    let count: number;
    try {
      count = await file.read(target.subarray(filled), at);
    } catch (cause) {
      throw failures.readFailed(cause, at);
    }
    if (count <= 0) throw failures.endedAt(at);
    filled += count;
  }
}

/** `readExactly` through a file's blocking reads: the same loop, the same failures, no promise. */
export function readExactlyBlocking(
  file: Pick<BlockingFile, "readBlocking">,
  target: Uint8Array,
  position: number,
  context: ReadContext,
): void {
  for (let filled = 0; filled < target.length; ) {
    const at = position + filled;
    let count: number;
    try {
      count = file.readBlocking(filled === 0 ? target : target.subarray(filled), at);
    } catch (cause) {
      throw scanReadFailures(context).readFailed(cause, at);
    }
    if (count <= 0) throw scanReadFailures(context).endedAt(at);
    filled += count;
  }
}

/**
 * Hands `[from, from + lengthBytes)` to `visit` in order, at most `chunkBytes`
 * at a time, so a range of any size streams through fixed memory. `load`
 * makes one chunk's bytes available (a window refill, or a read into a
 * buffer); `doneBytes` is how much of the range came before the chunk. An
 * aborted `signal` stops before the next chunk.
 */
export async function forEachChunk(
  from: number,
  lengthBytes: number,
  chunkBytes: number,
  load: (position: number, bytes: number) => Promise<Uint8Array>,
  visit: (chunk: Uint8Array, doneBytes: number) => Promise<void> | void,
  signal?: AbortSignal,
): Promise<void> {
  for (let doneBytes = 0; doneBytes < lengthBytes; ) {
    signal?.throwIfAborted();
    const bytes = Math.min(chunkBytes, lengthBytes - doneBytes);
    await visit(await load(from + doneBytes, bytes), doneBytes);
    doneBytes += bytes;
  }
}
