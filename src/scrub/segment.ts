/**
 * Deep verification of one segment for the scrub (docs/scrub.md §1), through
 * the recovery walker (docs/recovery.md §3.2 deep mode): every batch from the
 * start position verified, every index entry matched against a verified batch
 * start. It never decides a verdict or a repair; it reports what disagrees, at
 * its byte position.
 */
import { dirname } from "node:path";
import { assert } from "../assert.js";
import { formatCount } from "../domain/numbers.js";
import { shellQuote } from "../domain/command.js";
import type { TornEvidence } from "../domain/scan.js";
import { INDEX_ENTRY_BYTES, PROBE_BUDGET_UNITS } from "../format/constants.js";
import { type IndexEntry, VERIFY_STATUS_NAMES, VerifyStatus } from "../format/records.js";
import type { EngineWindow } from "../engine/types.js";
import { FileWindow } from "../engine/file-window.js";
import { readIndexEntriesStreaming } from "../recovery/index-file.js";
import { probeResidue, residueIsAllZero } from "../recovery/probe.js";
import { type WalkFailure, tornEvidenceOf } from "../recovery/scope.js";
import { verifyBatchAt } from "../recovery/verify.js";
import { IndexEntryMatcher, type ProvenBatch, walkBatches } from "../recovery/walk.js";
import type { FindingCode, ScrubFinding } from "./findings.js";
import type { PrefixHasher, ScrubReads } from "./reads.js";

export interface SegmentToVerify {
  logPath: string;
  indexPath: string;
  startOffset: bigint;
  /** The log's size when the scrub reached it: nothing past it is read. */
  frozenSize: number;
  /** The index's size when the scrub reached it (0 when there is none). */
  indexSize: number;
  sealed: boolean;
  /**
   * The writer may still be appending: the segment was modified within the
   * settle time (the active one being written, or a just-rolled one still
   * receiving its last batch's flush). A batch cut short at the frozen end,
   * index entries past it and a partial index entry are then growth, not
   * findings. An active segment left alone longer is judged as `scan` judges a
   * partition's last segment: damage at its end is a torn tail (docs/scrub.md §1).
   */
  tailMayGrow: boolean;
  /** The settle time that applied (for the words of a torn tail's finding). */
  settleMs: number;
  /** Resume an active segment where an earlier pass proved the chain up to. */
  fromPosition: number;
  expectedOffset: bigint;
}

export interface SegmentVerification {
  findings: ScrubFinding[];
  /** The proven prefix ends here. */
  stopPosition: number;
  nextOffset: bigint;
  batches: number;
  messages: number;
  /** A batch still being appended past `stopPosition` of an active segment. */
  inFlightBytes: number;
}

/**
 * Index mismatches reported one by one per segment; past this many, one more
 * finding gives the count. Kept small: the first few positions are what an
 * operator acts on, and a garbage index disagrees everywhere.
 */
export const MAX_INDEX_FINDINGS_PER_SEGMENT = 16;

/** Mismatches kept to choose the reported ones from (some are dropped as past the proven prefix). */
const MAX_INDEX_MISMATCHES_KEPT = 4 * MAX_INDEX_FINDINGS_PER_SEGMENT;

/** An index entry and its index in the file. */
interface NumberedEntry extends IndexEntry {
  entryIndex: number;
}

export interface VerifyContext {
  reads: ScrubReads;
  engineWindow: EngineWindow;
  signal: AbortSignal | undefined;
  onRead: (bytesRead: number) => void;
}

function statusCode(status: VerifyStatus): FindingCode {
  switch (status) {
    case VerifyStatus.BatchChecksum:
      return "BatchChecksumFailure";
    case VerifyStatus.FrameChecksum:
      return "FrameChecksumFailure";
    case VerifyStatus.LengthBelowHeader:
    case VerifyStatus.LengthOverCap:
    case VerifyStatus.ReservedNonZero:
      return "BatchHeaderInvalid";
    case VerifyStatus.HeaderBeyondFile:
    case VerifyStatus.BatchBeyondFile:
      return "TruncatedBatch";
    default:
      return "FrameLayoutInvalid";
  }
}

/** Adds one finding about the segment (the segment's log path is implied). */
type AddFinding = (code: FindingCode, path: string, position: number | null, message: string) => void;

/** Mismatched index entries, kept up to a cap, and how many beyond it (on a batch, past the last one). */
interface IndexMismatches {
  kept: { entry: NumberedEntry; batch: ProvenBatch | null }[];
  beyondCap: { onBatches: number; pastLastBatch: number };
}

export async function verifySegmentForScrub(
  segment: SegmentToVerify,
  context: VerifyContext,
  hasher: PrefixHasher | null,
): Promise<SegmentVerification> {
  const { logPath, frozenSize, fromPosition } = segment;
  assert(segment.settleMs >= 0, `settleMs ≥ 0 (got ${segment.settleMs})`);
  const findings: ScrubFinding[] = [];
  const finding: AddFinding = (code, path, position, message) => {
    findings.push({ code, path, position, segmentPath: logPath, message });
  };
  const mismatches: IndexMismatches = { kept: [], beyondCap: { onBatches: 0, pastLastBatch: 0 } };
  // Entries before `fromPosition` were checked by an earlier pass; each entry
  // carries its index in the file so a mismatch names its exact byte there.
  const entries = (async function* (): AsyncGenerator<NumberedEntry> {
    let entryIndex = 0;
    for await (const entry of readIndexEntriesStreaming(context.reads, segment.indexPath, segment.indexSize)) {
      if (entry.position >= BigInt(fromPosition)) yield { ...entry, entryIndex };
      entryIndex++;
    }
  })();
  // Kept in memory up to a cap: a garbage index must not turn into millions of findings.
  const matcher = new IndexEntryMatcher(entries, (entry, batch) => {
    if (mismatches.kept.length < MAX_INDEX_MISMATCHES_KEPT) mismatches.kept.push({ entry: entry as NumberedEntry, batch });
    else if (batch === null) mismatches.beyondCap.pastLastBatch++;
    else mismatches.beyondCap.onBatches++;
  });

  const file = await context.reads.openCapped(logPath, frozenSize, hasher);
  const result: SegmentVerification = {
    findings,
    stopPosition: fromPosition,
    nextOffset: segment.expectedOffset,
    batches: 0,
    messages: 0,
    inFlightBytes: 0,
  };
  try {
    const window = new FileWindow(file, logPath, frozenSize, context.engineWindow, { signal: context.signal, onRead: context.onRead });
    const walk = await walkBatches(window, {
      fromPosition,
      expectedOffset: segment.expectedOffset,
      rebuildIndex: false,
      onVerifiedBatch: (batch) => matcher.onBatch(batch),
      nextStopPosition: () => matcher.nextStopPosition(),
    });
    await matcher.finish();
    result.stopPosition = walk.stopPosition;
    result.nextOffset = walk.expectedOffset;
    result.batches = walk.batchesVerified;
    result.messages = walk.messageCount;
    if (walk.discontinuity) {
      const { position, expectedOffset, foundOffset } = walk.discontinuity;
      finding(
        "OffsetDiscontinuity",
        logPath,
        position,
        `${logPath}: the verified batch at byte ${formatCount(position)} starts at offset ${foundOffset}, below offset ${expectedOffset} the chain had reached; bytes from ${formatCount(position)} on were not verified`,
      );
    } else if (result.stopPosition < frozenSize) {
      result.inFlightBytes = await judgeStop(window, segment, walk.failure, result, findings);
    }
    if (hasher !== null && result.stopPosition < frozenSize) await hashRest(window, hasher, frozenSize);
  } finally {
    await entries.return(undefined).catch(() => undefined);
    await file.close();
  }
  reportIndexMismatches(segment, mismatches, result.stopPosition, finding);
  return result;
}

/**
 * What the bytes at the walk's stop are: a batch being appended (returns its
 * bytes in flight), damage, or (a quiet active segment) what `scan` calls it,
 * by the same probe (docs/recovery.md §3.5, §3.7).
 */
async function judgeStop(
  window: FileWindow,
  segment: SegmentToVerify,
  walkFailure: WalkFailure,
  walked: { stopPosition: number; nextOffset: bigint },
  findings: ScrubFinding[],
): Promise<number> {
  const { logPath, frozenSize, sealed, tailMayGrow } = segment;
  const { stopPosition, nextOffset } = walked;
  const check = await verifyBatchAt(window, stopPosition);
  const status = check.verified ? VerifyStatus.Ok : check.status;
  const inFlight = status === VerifyStatus.HeaderBeyondFile || status === VerifyStatus.BatchBeyondFile;
  // The broker is appending this batch right now: growth, not damage (docs/scrub.md §1).
  if (tailMayGrow && inFlight) return frozenSize - stopPosition;
  const header = check.header;
  const described = header ? ` (base offset ${header.baseOffset}, ${formatCount(header.batchLength)} bytes)` : "";
  const damage =
    `${logPath}: the batch at byte ${formatCount(stopPosition)}${described} does not verify: ${VERIFY_STATUS_NAMES[status]}; ` +
    `${formatCount(frozenSize - stopPosition)} bytes from there on were not verified (${sealed ? "sealed" : "active"} segment; nothing was changed)`;
  const damageFinding = (message: string): void => {
    findings.push({ code: statusCode(status), path: logPath, position: stopPosition, segmentPath: logPath, message });
  };
  if (sealed || tailMayGrow) {
    damageFinding(damage);
    return 0;
  }
  const failure = walkFailure ?? { status, header: check.header };
  const budget = { limitUnits: PROBE_BUDGET_UNITS, spentUnits: 0 };
  const probe = await probeResidue(window, stopPosition, nextOffset, budget);
  if (probe.verdict === "no-survivor") {
    const evidence = tornEvidenceOf(failure, await residueIsAllZero(window, probe));
    findings.push(tornTailFinding(segment, stopPosition, evidence));
    return 0;
  }
  const why =
    probe.verdict === "survivor"
      ? `a verified batch follows at byte ${probe.survivorPosition === null ? "unknown" : formatCount(probe.survivorPosition)}: damage inside the log, not a torn tail (\`segscan scan\` refuses the partition: InteriorDamage)`
      : "the probe for a verified batch after it ran out of budget (`segscan scan` refuses the partition: UnverifiedResidue)";
  damageFinding(`${damage}; ${why}`);
  return 0;
}

/** A quiet active segment's torn tail, in `scan`'s words, with the read-only command that shows the cut (docs/scrub.md §1). */
function tornTailFinding(segment: SegmentToVerify, stopPosition: number, evidence: TornEvidence): ScrubFinding {
  const { logPath, frozenSize } = segment;
  const argv = ["segscan", "scan", dirname(logPath)];
  return {
    code: "TornTail",
    path: logPath,
    position: stopPosition,
    segmentPath: logPath,
    message:
      `${logPath}: torn tail at byte ${formatCount(stopPosition)}: the last ${formatCount(frozenSize - stopPosition)} bytes of the active segment ` +
      `do not verify (evidence: ${evidence}) and no verified batch follows them; the segment was left alone for over ` +
      `${Math.round(segment.settleMs / 1000)} s, so no append is in progress: \`segscan scan\` reports the segment as ` +
      `torn-tail (repairable: a repair cuts the tail and preserves its bytes); nothing was changed`,
    details: { tornEvidence: evidence, residueBytes: frozenSize - stopPosition },
    nextStep: `${shellQuote(argv)} (read-only, safe beside the server) shows the partition's verdict and the cut a repair would make`,
    nextStepArgv: argv,
  };
}

/**
 * Damage stopped the walk: the rest is read for the hash all the same, so a
 * segment that changed since it was verified says so whatever the window size.
 */
async function hashRest(window: FileWindow, hasher: PrefixHasher, frozenSize: number): Promise<void> {
  for (let position = hasher.hashedBytes; position < frozenSize; position = hasher.hashedBytes) {
    await window.ensure(position, Math.min(window.capacityBytes, frozenSize - position));
    if (hasher.hashedBytes === position) break;
  }
}

/**
 * The index findings: each mismatch up to MAX_INDEX_FINDINGS_PER_SEGMENT, one
 * more with the count, and a partial trailing entry of a settled index. Past
 * the proven prefix an entry has nothing to be checked against: on a growing
 * segment the index may run ahead of the frozen log; after damage the damage
 * finding already covers it. (Entries the matcher hands over without a batch
 * all lie past the last verified batch start.)
 */
function reportIndexMismatches(segment: SegmentToVerify, mismatches: IndexMismatches, stopPosition: number, finding: AddFinding): void {
  const { indexPath, frozenSize, tailMayGrow, sealed } = segment;
  const ignorePastLastBatch = tailMayGrow || stopPosition < frozenSize;
  let indexFindings = 0;
  let unreported = mismatches.beyondCap.onBatches + (ignorePastLastBatch ? 0 : mismatches.beyondCap.pastLastBatch);
  for (const { entry, batch } of mismatches.kept) {
    const index = entry.entryIndex;
    if (batch === null && entry.position >= BigInt(stopPosition) && ignorePastLastBatch) continue;
    if (indexFindings === MAX_INDEX_FINDINGS_PER_SEGMENT) {
      unreported++;
      continue;
    }
    indexFindings++;
    const where =
      batch === null
        ? `past the last verified batch (the log's proven bytes end at ${formatCount(stopPosition)})`
        : entry.position < BigInt(batch.position)
          ? `inside a batch, not at a batch start (next verified batch starts at ${formatCount(batch.position)})`
          : `on the batch at byte ${formatCount(batch.position)}, whose base offset is ${batch.baseOffset}`;
    finding(
      "IndexEntryMismatch",
      indexPath,
      index * INDEX_ENTRY_BYTES,
      `${indexPath}: entry ${formatCount(index)} (offset ${entry.offset}, position ${formatCount(entry.position)}) points ${where}; the log was not changed`,
    );
  }
  if (unreported > 0) {
    finding(
      "IndexEntryMismatch",
      indexPath,
      null,
      `${indexPath}: ${formatCount(unreported)} more entries disagree with the log (at most ${MAX_INDEX_FINDINGS_PER_SEGMENT} are listed one by one)`,
    );
  }
  const trailingBytes = segment.indexSize % INDEX_ENTRY_BYTES;
  if (!tailMayGrow && trailingBytes !== 0) {
    const at = segment.indexSize - trailingBytes;
    finding(
      "IndexTrailingBytes",
      indexPath,
      at,
      `${indexPath}: ${formatCount(trailingBytes)} bytes after the last whole entry (at byte ${formatCount(at)}) of a ${sealed ? "sealed" : "settled active"} segment's index`,
    );
  }
}
