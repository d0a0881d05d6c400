/** Small-file reads for the node items (snapshot, superblock slots): bounded, through the ScanFs layer. */
import { describeCause } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";

export type SmallFile =
  | { kind: "absent" }
  | { kind: "not-file"; message: string }
  | { kind: "too-large"; size: number }
  | { kind: "failed"; message: string }
  | { kind: "read"; bytes: Uint8Array };

function isNotFound(cause: unknown): boolean {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Reads the whole of `path` when it is a regular file of at most `maxBytes`
 * (larger files are never read: a bit-flipped or garbage file allocates nothing).
 * A read error is never evidence: it comes back as `failed` with the cause.
 */
export async function readSmallFile(scanFs: ScanFs, path: string, maxBytes: number): Promise<SmallFile> {
  if (scanFs.knownAbsent?.(path)) return { kind: "absent" };
  let size: number;
  try {
    const info = await scanFs.stat(path);
    if (!info.isFile) return { kind: "not-file", message: `${path} is not a regular file` };
    size = info.size;
  } catch (cause) {
    if (isNotFound(cause)) return { kind: "absent" };
    return { kind: "failed", message: `cannot stat ${path} (${describeCause(cause)}); nothing was changed` };
  }
  if (size > maxBytes) return { kind: "too-large", size };
  try {
    const file = await scanFs.open(path);
    try {
      const bytes = new Uint8Array(size);
      for (let filled = 0; filled < size; ) {
        const count = await file.read(bytes.subarray(filled), filled);
        if (count === 0)
          return {
            kind: "failed",
            message: `${path} ended at byte ${filled} but was ${size} bytes when the scan started; nothing was changed`,
          };
        filled += count;
      }
      return { kind: "read", bytes };
    } finally {
      await file.close();
    }
  } catch (cause) {
    if (isNotFound(cause)) return { kind: "absent" };
    return { kind: "failed", message: `cannot read ${path} (${describeCause(cause)}); nothing was changed` };
  }
}

export async function exists(scanFs: ScanFs, path: string): Promise<boolean> {
  if (scanFs.knownAbsent?.(path)) return false;
  try {
    await scanFs.stat(path);
    return true;
  } catch {
    return false;
  }
}
