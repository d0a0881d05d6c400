/** SPEC §3.6: failures that stop a partition and are never evidence about its bytes. */

/**
 * What stopped a partition: read failures are never evidence about its bytes
 * (SPEC §3.6). `NoSegments`: a directory holding `.log` files none of which is
 * a segment; `NotRegularFile`: a segment-named `.log` that is a FIFO, socket or
 * device, never opened (the codes agreed for issue 16 items 3 and 6).
 */
export type ScanErrorCode =
  | "ReadFailure" | "OpenFailure" | "StorageSizeMismatch" | "ListFailure" | "NoSegments" | "NotRegularFile";

/** A ScanFailure as the report carries it (re-exported by `report/types.ts`). */
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

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}

/** The error a cancelled scan rejects with (its name is "AbortError", like fetch's). */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new Error("segscan: the scan was cancelled; nothing was changed", { cause: reason });
  error.name = "AbortError";
  return error;
}
