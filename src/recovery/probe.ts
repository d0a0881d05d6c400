/**
 * The damage probe over a residue (docs/recovery.md §3.5, and the metadata
 * WAL's in docs/node.md N1): is there a complete, verifying, chain-extending
 * record anywhere past the damage? One candidate loop serves both record
 * kinds (`ProbeRecord`): it runs the engine's candidate kernel window by
 * window; TypeScript owns the budget across windows and the verification of
 * candidates that pass the cheap checks.
 */
import { assert } from "../assert.js";
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT, U64_MAX } from "../format/constants.js";
import { readU64Clamped } from "../format/bytes.js";
import { VerifyStatus } from "../format/records.js";
import type { CandidateScanResult } from "../engine/types.js";
import type { FileWindow } from "../engine/file-window.js";
import type { ProbeVerdict } from "../domain/scan.js";
import { verifyBatchAt } from "./verify.js";

/** A probe budget: one partition load's, shared by every segment's probe (docs/recovery.md §3.5), or one WAL scan's (docs/node.md N1). */
export interface ProbeBudget {
  readonly limitUnits: number;
  spentUnits: number;
}

/** The part of a candidate scan request the loop fills in; the record kind adds its own fields (chain floor, rule). */
export interface CandidateSpan {
  fromIndex: number;
  toIndex: number;
  fileEndIndex: number;
  spentUnits: number;
  limitUnits: number;
}

/** What differs between the record kinds the probe looks for (a segment batch, a WAL entry). */
export interface ProbeRecord {
  /** Bytes a candidate's header takes: only they must be resident to examine it. */
  headerBytes: number;
  /** The engine's candidate kernel over `span` of the window. */
  scan(window: FileWindow, span: CandidateSpan): CandidateScanResult;
  /** Bytes the candidate at window `index` claims (read before the survivor check, which may move the window). */
  claimedBytes(window: FileWindow, index: number): number;
  /** Whether the candidate at file `position` (window `index`), which passed the kernel's cheap checks, verifies in full. */
  survives(window: FileWindow, position: number, index: number, claimedBytes: number): Promise<boolean>;
  /** Sees every window the loop makes resident (the segment probe's ZeroTracker). */
  observe?(window: FileWindow): void;
}

export interface ProbeOutcome {
  verdict: ProbeVerdict;
  survivorPosition: number | null;
  /** The candidate where the budget ran out (budget-exhausted only). */
  stoppedAt: number | null;
}

/**
 * The candidate loop from `damagePosition + 1` to the last candidate whose
 * header fits the file. Reads and kernel calls stay within the budget (plus
 * one window): each candidate costs a unit, the kernel never examines one past
 * the candidate that exhausts the budget (CheckedEngineWindow.scanCandidates),
 * and the loop returns as soon as the budget is exhausted, reading nothing
 * further. A candidate that passes the cheap checks but does not verify costs
 * its claimed bytes too (pessimistic: the whole claimed slice was handed to
 * the verifier).
 */
export async function probeCandidates(
  window: FileWindow,
  damagePosition: number,
  budget: ProbeBudget,
  record: ProbeRecord,
): Promise<ProbeOutcome> {
  const lastCandidate = window.fileSize - record.headerBytes;
  let candidate = damagePosition + 1;
  while (candidate <= lastCandidate) {
    // Only the candidate's header must be resident: a refill happens when it is not.
    const index = await window.ensure(candidate, record.headerBytes);
    record.observe?.(window);
    const windowStart = window.start;
    const windowLastCandidate = Math.min(lastCandidate, window.end - record.headerBytes);
    const scan = record.scan(window, {
      fromIndex: index,
      toIndex: windowLastCandidate - windowStart + 1,
      fileEndIndex: window.fileSize - windowStart,
      spentUnits: budget.spentUnits,
      limitUnits: budget.limitUnits,
    });
    // Units are whole numbers far below 2^53: a sum that stops being exact would let the loop run unbounded.
    assert(scan.spentUnits >= budget.spentUnits && Number.isSafeInteger(scan.spentUnits), "the budget is only spent, exactly");
    assert(scan.index >= index && windowStart + scan.index <= window.end, "the kernel stops inside the window, at or past the candidate");
    budget.spentUnits = scan.spentUnits;
    const stopPosition = windowStart + scan.index;
    if (scan.status === "exhausted") return { verdict: "budget-exhausted", survivorPosition: null, stoppedAt: stopPosition };
    if (scan.status === "done") {
      assert(stopPosition > candidate, "a window scanned to its end moves the loop forward");
      candidate = stopPosition;
      continue;
    }
    const claimedBytes = record.claimedBytes(window, scan.index);
    if (await record.survives(window, stopPosition, scan.index, claimedBytes)) {
      return { verdict: "survivor", survivorPosition: stopPosition, stoppedAt: null };
    }
    budget.spentUnits += claimedBytes;
    if (budget.spentUnits > budget.limitUnits) return { verdict: "budget-exhausted", survivorPosition: null, stoppedAt: stopPosition };
    candidate = stopPosition + 1;
  }
  return { verdict: "no-survivor", survivorPosition: null, stoppedAt: null };
}

export interface ProbeResult extends ProbeOutcome {
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
    const lengthBytes = window.end - this.checkedUntil;
    const found = window.engineWindow.firstNonZero(index, lengthBytes);
    assert(found >= index && found <= index + lengthBytes, "the first non-zero byte lies in the range examined");
    if (found < index + lengthBytes) this.firstNonZero = window.start + found;
    this.checkedUntil = window.end;
  }
}

/**
 * The segment probe (docs/recovery.md §3.5): a survivor is a batch that
 * verifies and extends the chain. `minBaseOffset`: chain end + 1 when the walk
 * proved a batch with messages, else the segment's start offset.
 */
export async function probeResidue(
  window: FileWindow,
  damagePosition: number,
  minBaseOffset: bigint,
  budget: ProbeBudget,
): Promise<ProbeResult> {
  const unitsBefore = budget.spentUnits;
  const zeros = new ZeroTracker(damagePosition);
  const extendable = minBaseOffset <= U64_MAX ? minBaseOffset : null;
  const outcome = await probeCandidates(window, damagePosition, budget, {
    headerBytes: BATCH_HEADER_BYTES,
    observe: (resident) => zeros.observe(resident),
    scan: (resident, span) => resident.engineWindow.scanCandidates({ ...span, minBaseOffset: extendable }),
    claimedBytes: (resident, index) => readU64Clamped(resident.engineWindow.view(), index + BATCH_LENGTH_AT),
    // The candidate may claim more than maxBatchBytes: an oversized batch that
    // fits the file is verified by streaming like any other (docs/format.md §2.2).
    survives: async (resident, position, index, claimedBytes) =>
      position + claimedBytes <= resident.end
        ? resident.engineWindow.verifyInWindow(index) === VerifyStatus.Ok // resident: no await, no refill
        : (await verifyBatchAt(resident, position)).verified,
  });
  return { ...outcome, spentUnits: budget.spentUnits - unitsBefore, zeros };
}

/**
 * Whether the residue is all zero: repair records such a residue by its length
 * only (docs/repair.md §6.2). True only when every residue byte was read and found zero.
 *
 * The probe's windows usually answered already; a residue too short to hold a
 * candidate (< `headerBytes` + 1 bytes) is read here. A probe that ran out of budget must
 * not read on (its reads stay bounded by the budget, never by the file size: a
 * 2 TiB sparse tail), so it answers false unless its own candidates reached
 * the file end (stopped at the last candidate, whose header ends the file).
 * That rule depends only on the bytes and the limit, so the report is the same
 * whatever window size or engine ran the probe. The segment probe and the metadata
 * WAL's (docs/node.md N1) both answer through here; `headerBytes` is the record's.
 */
export async function residueIsAllZero(
  window: FileWindow,
  probe: Pick<ProbeResult, "verdict" | "stoppedAt" | "zeros">,
  headerBytes: number = BATCH_HEADER_BYTES,
): Promise<boolean> {
  const zeros = probe.zeros;
  if (probe.verdict === "budget-exhausted") {
    assert(probe.stoppedAt !== null, "an exhausted probe says where it stopped");
    if (probe.stoppedAt + headerBytes < window.fileSize) return false;
  }
  while (zeros.firstNonZero === null && zeros.checkedUntil < window.fileSize) {
    await window.ensure(zeros.checkedUntil, Math.min(window.capacityBytes, window.fileSize - zeros.checkedUntil));
    zeros.observe(window);
  }
  return zeros.firstNonZero === null;
}
