/** docs/recovery.md §3.6: failures that stop a partition and are never evidence about its bytes. */
import { getSystemErrorMap } from "node:util";

/**
 * What stopped a partition: read failures are never evidence about its bytes (docs/recovery.md §3.6).
 * `NoSegments`: a directory holding `.log` files none of which is a segment;
 * `NotRegularFile`: a segment-named `.log` (or its `.index`) that is a FIFO,
 * socket or device, never opened (a FIFO's open would block). The JSON schema's
 * list of codes is this one (src/report/schema.ts).
 */
export const SCAN_ERROR_CODES = [
  "ReadFailure",
  "OpenFailure",
  "StorageSizeMismatch",
  "ListFailure",
  "NoSegments",
  "NotRegularFile",
  "LinkNotFollowed",
] as const;

export type ScanErrorCode = (typeof SCAN_ERROR_CODES)[number];

/** A ScanFailure as the report carries it (re-exported by `domain/scan.ts`). */
export interface ScanError {
  code: ScanErrorCode;
  path: string;
  message: string;
}

export class ScanFailure extends Error {
  override readonly name = "ScanFailure";
  constructor(
    readonly code: ScanErrorCode,
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  toScanError(): ScanError {
    return { code: this.code, path: this.path, message: this.message };
  }
}

/** errno name → libuv's words for it ("EACCES" → "permission denied"), from the running Node. */
const ERRNO_WORDS: ReadonlyMap<string, string> = new Map([...getSystemErrorMap().values()]);

/**
 * The cause of a failure in words, for a sentence that already names the path
 * and the operation: "permission denied (EACCES)". Node's own errno text
 * ("EACCES: permission denied, open '/x'") repeats the code and the path, so
 * only its words are kept; any other error gives its message.
 */
export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  if (typeof code !== "string" || code.length === 0) return cause.message;
  // Node's form is "CODE: words, syscall 'path' -> 'dest'"; a hand-made error may carry just words.
  const nodeWords = /^[A-Z0-9_]+: ([^,]+)(?:,|$)/.exec(cause.message)?.[1]?.trim();
  const words = ERRNO_WORDS.get(code) ?? nodeWords ?? (cause.message.trim() === "" || cause.message === code ? undefined : cause.message);
  return words === undefined ? code : `${words} (${code})`;
}

/** The error a cancelled scan rejects with (its name is "AbortError", like fetch's). */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new Error("segscan: the scan was cancelled; nothing was changed", { cause: reason });
  error.name = "AbortError";
  return error;
}
