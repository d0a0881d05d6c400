/**
 * The one read-exactly loop of the read-only side (docs/recovery.md §3.6): fill a target
 * from a file position, retrying short reads. A read error is ReadFailure; end
 * of file before the target is full means the file shrank since its size was
 * taken, StorageSizeMismatch, never a torn tail. Both name the path, the
 * position and that nothing was changed.
 */
import { ScanFailure, describeCause } from "./errors.js";
import type { ReadableFile } from "./fs.js";

/** What a positional read needs: `ReadableFile.read` (0 at end of file). */
export type PositionalRead = Pick<ReadableFile, "read">;

interface ReadContext {
  path: string;
  /** The file's size when the reader took it (named in the StorageSizeMismatch message). */
  sizeAtStart: number;
}

/** Fills all of `target` with the file bytes from `position` on. */
export async function readExactly(file: PositionalRead, target: Uint8Array, position: number, context: ReadContext): Promise<void> {
  for (let filled = 0; filled < target.length; ) {
    const at = position + filled;
    let count: number;
    try {
      count = await file.read(target.subarray(filled), at);
    } catch (cause) {
      throw new ScanFailure(
        "ReadFailure",
        context.path,
        `read of ${context.path} at byte ${at} failed: ${describeCause(cause)}; nothing was changed`,
        { cause },
      );
    }
    if (count === 0) {
      throw new ScanFailure(
        "StorageSizeMismatch",
        context.path,
        `${context.path} ended at byte ${at} but was ${context.sizeAtStart} bytes when the scan started; nothing was changed`,
      );
    }
    filled += count;
  }
}
