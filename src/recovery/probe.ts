/**
 * The damage probe over a residue (docs/recovery.md §3.5): is there a complete, verifying,
 * chain-extending batch anywhere past the damage? The candidate loop runs in
 * the engine window by window; TypeScript owns the budget across windows and
 * the verification of candidates that pass the cheap checks.
 */
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT, U64_MAX } from "../format/constants.js";
import { readU64Clamped } from "../format/bytes.js";
import { VerifyStatus } from "../format/records.js";
import type { FileWindow } from "../engine/file-window.js";
import type { ProbeVerdict } from "../domain/scan.js";
import { verifyBatchAt } from "./verify.js";

/** One partition load's budget, shared by every segment's probe (docs/recovery.md §3.5). */
export interface ProbeBudget {
  readonly limitUnits: number;
  spentUnits: number;
}

export interface ProbeResult {
  verdict: ProbeVerdict;
  survivorPosition: number | null;
  /** The candidate where the budget ran out (budget-exhausted only). */
  stoppedAt: number | null;
  /** Units this probe spent (the budget holds the running total). */
  spentUnits: number;
  /** What the probe's own windows showed about `[damage, size)` being all zero (see ZeroTracker). */
  zeros: ZeroTracker;
}

/**
 * Whether the residue is all zero, learned from the windows the probe loads
 * anyway, so a zero tail is read once, not twice. `checkedUntil` is the file
 * position up to which every byte was examined. A probe that ran out of budget
 * stops reading there: the bytes past it are unknown, not zero.
 */
export class ZeroTracker {
  firstNonZero: number | null = null;
  constructor(public checkedUntil: number) {}

  observe(window: FileWindow): void {
    if (this.firstNonZero !== null || window.start > this.checkedUntil || window.end <= this.checkedUntil) return;
    const index = this.checkedUntil - window.start;
    const found = window.engineWindow.firstNonZero(index, window.end - this.checkedUntil);
    if (found < index + (window.end - this.checkedUntil)) this.firstNonZero = window.start + found;
    this.checkedUntil = window.end;
  }
}

/**
 * `minBaseOffset`: chain end + 1 when the walk proved a batch with messages,
 * else the segment's start offset.
 */
export async function probeResidue(
  window: FileWindow,
  damagePosition: number,
  minBaseOffset: bigint,
  budget: ProbeBudget,
): Promise<ProbeResult> {
  const kernels = window.engineWindow;
  const unitsBefore = budget.spentUnits;
  const zeros = new ZeroTracker(damagePosition);
  const finish = (verdict: ProbeVerdict, survivorPosition: number | null, stoppedAt: number | null): ProbeResult => ({
    verdict,
    survivorPosition,
    stoppedAt,
    spentUnits: budget.spentUnits - unitsBefore,
    zeros,
  });
  const lastCandidate = window.fileSize - BATCH_HEADER_BYTES;
  const extendable = minBaseOffset <= U64_MAX ? minBaseOffset : null;
  let candidate = damagePosition + 1;
  // Reads and kernel calls stay within the budget (plus one window): each
  // candidate costs a unit, the kernel never examines one past the candidate
  // that exhausts the budget (CheckedEngineWindow.scanCandidates), and the loop
  // returns as soon as the budget is exhausted, reading nothing further.
  while (candidate <= lastCandidate) {
    // Only the candidate's header must be resident: a refill happens when it is not.
    const index = await window.ensure(candidate, BATCH_HEADER_BYTES);
    zeros.observe(window);
    const windowStart = window.start;
    const windowLastCandidate = Math.min(lastCandidate, window.end - BATCH_HEADER_BYTES);
    const scan = kernels.scanCandidates({
      fromIndex: index,
      toIndex: windowLastCandidate - windowStart + 1,
      fileEndIndex: window.fileSize - windowStart,
      minBaseOffset: extendable,
      spentUnits: budget.spentUnits,
      limitUnits: budget.limitUnits,
    });
    budget.spentUnits = scan.spentUnits;
    const stopPosition = windowStart + scan.index;
    if (scan.status === "exhausted") return finish("budget-exhausted", null, stopPosition);
    if (scan.status === "done") {
      candidate = stopPosition;
      continue;
    }
    // The candidate may claim more than maxBatchBytes: an oversized batch that
    // fits the file is verified by streaming like any other (docs/format.md §2.2).
    const claimedBytes = readU64Clamped(kernels.view(), scan.index + BATCH_LENGTH_AT);
    const verified =
      stopPosition + claimedBytes <= window.end
        ? kernels.verifyInWindow(scan.index) === VerifyStatus.Ok // resident: no await, no refill
        : (await verifyBatchAt(window, stopPosition)).verified;
    if (verified) return finish("survivor", stopPosition, null);
    // Pessimistic: the whole slice the header claims was handed to the verifier.
    budget.spentUnits += claimedBytes;
    if (budget.spentUnits > budget.limitUnits) return finish("budget-exhausted", null, stopPosition);
    candidate = stopPosition + 1;
  }
  return finish("no-survivor", null, null);
}
