/** Small-file reads for the node items (snapshot, superblock slots): bounded, through the ScanFs layer. */
import { describeCause } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import type { NodeFinding } from "../domain/node.js";

export type SmallFile =
  | { kind: "absent" }
  | { kind: "not-file"; message: string }
  | { kind: "too-large"; size: number }
  | { kind: "failed"; message: string }
  | { kind: "read"; bytes: Uint8Array };

/** The errno code (`ENOENT`, `EACCES`, …) a failed call carries, if any. */
export function errnoCode(cause: unknown): string | undefined {
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined;
}

/** ENOENT, or ENOTDIR (a path component is no directory): the path is absent. Any other failure says nothing about it. */
export function isNotFound(cause: unknown): boolean {
  const code = errnoCode(cause);
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

/** Whether a path exists, as a stat tells it: an absent path is "absent"; a stat that fails otherwise is `failed` (never "absent"). */
export type Presence = { kind: "present" } | { kind: "absent" } | { kind: "failed"; message: string };

export async function presence(scanFs: ScanFs, path: string): Promise<Presence> {
  if (scanFs.knownAbsent?.(path)) return { kind: "absent" };
  try {
    await scanFs.stat(path);
    return { kind: "present" };
  } catch (cause) {
    if (isNotFound(cause)) return { kind: "absent" };
    return { kind: "failed", message: `cannot stat ${path} (${describeCause(cause)})` };
  }
}

/**
 * What a leftover `.tmp` (`what` left it) adds to its item's findings: an
 * info finding when it is there, a failed one when a stat could not tell.
 */
export async function leftoverFindings(
  scanFs: ScanFs,
  path: string,
  present: { code: string; message: string },
  what: string,
): Promise<NodeFinding[]> {
  const found = await presence(scanFs, path);
  if (found.kind === "present") return [{ ...present, severity: "info", path }];
  if (found.kind === "absent") return [];
  return [
    {
      severity: "failed",
      code: "TmpReadFailure",
      path,
      message: `${found.message}: whether ${what} left this file is unknown; nothing was changed`,
    },
  ];
}
