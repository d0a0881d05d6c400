/**
 * Exit status, after fsck(8): each condition is a bit, and a run that meets
 * several ORs them together (e.g. 1|4 = 5: some partitions were repaired and
 * clean now, others were refused and left as they are).
 */
import { type ScanReport, scanNodes } from "../domain/scan.js";
import type { Severity } from "../domain/node.js";

export const EXIT = {
  /** Every partition is clean. */
  CLEAN: 0,
  /** Repairs were applied and every repaired partition scans clean now. */
  REPAIRED: 1,
  /** Problems left: a dry run found repairs to make, or a partition was refused. */
  PROBLEMS: 4,
  /** Operational error: I/O, a `failed` partition, an unreadable path. */
  OPERATIONAL: 8,
  /** Usage error: bad flags or arguments. */
  USAGE: 16,
  /** Cancelled (SIGINT/SIGTERM): nothing was changed. */
  CANCELLED: 32,
} as const;

/** Exit status of a dry-run scan: 4 for repairable or refused partitions, 8 for failed ones. */
export function scanExitCode(report: Pick<ScanReport, "summary" | "node" | "nodes">): number {
  // From the summary's counts, so a streamed scan (which keeps no partitions) gets the same code.
  const { failed, repairable, refused, findings } = report.summary;
  let code: number = EXIT.CLEAN | (failed > 0 ? EXIT.OPERATIONAL : 0) | (repairable + refused > 0 ? EXIT.PROBLEMS : 0);
  // docs/repair.md §6.6: an unreadable salvage record was not judged (8); a recorded loss is a warning (0, said first).
  if (findings.failed > 0) code |= EXIT.OPERATIONAL;
  // docs/node.md N0: every node root's section counts, one or several.
  for (const node of scanNodes(report)) code |= severityExitBits(node.verdict);
  return code;
}

/** docs/node.md N0: a node severity (or verdict) as exit bits; warn and info alone exit 0. */
export function severityExitBits(severity: Severity): number {
  if (severity === "failed") return EXIT.OPERATIONAL;
  return severity === "refused" || severity === "repairable" ? EXIT.PROBLEMS : 0;
}

/**
 * The exit status of an operational failure: 8, or 9 (1|8) when the failed
 * run had already changed files (a repair or salvage that stopped part-way,
 * docs/repair.md §6.2), so a script sees that something was changed.
 */
export function failureExitCode(error: unknown): number {
  return (error as { changed?: unknown } | null)?.changed === true ? EXIT.OPERATIONAL | EXIT.REPAIRED : EXIT.OPERATIONAL;
}

/** A usage error: bad flag values or arguments (exit 16). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** An operational error with a message meant for the operator (exit 8). */
export class OperationalError extends Error {
  override readonly name = "OperationalError";
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}
