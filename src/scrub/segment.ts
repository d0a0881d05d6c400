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
import { INDEX_ENTRY_BYTES, PROBE_BUDGET_UNITS } from "../format/constants.js";
import { type IndexEntry, VERIFY_STATUS_NAMES, VerifyStatus } from "../format/records.js";
import type { EngineWindow } from "../engine/types.js";
import { FileWindow } from "../engine/file-window.js";
import { readIndexEntriesStreaming } from "../recovery/index-file.js";
import { probeResidue, residueIsAllZero } from "../recovery/probe.js";
import { tornEvidenceOf } from "../recovery/scope.js";
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

export async function verifySegmentForScrub(
  segment: SegmentToVerify,
  context: VerifyContext,
  hasher: PrefixHasher | null,
): Promise<SegmentVerification> {
  const { logPath, indexPath, frozenSize, sealed, tailMayGrow, fromPosition } = segment;
  assert(segment.settleMs >= 0, `settleMs ≥ 0 (got ${segment.settleMs})`);
  const findings: ScrubFinding[] = [];
  const finding = (code: FindingCode, path: string, position: number | null, message: string): void => {
    findings.push({ code, path, position, segmentPath: logPath, message });
  };
  const mismatched: { entry: NumberedEntry; batch: ProvenBatch | null }[] = [];
  // Entries before `fromPosition` were checked by an earlier pass; each entry
  // carries its index in the file so a mismatch names its exact byte there.
  const entries = (async function* (): AsyncGenerator<NumberedEntry> {
    let entryIndex = 0;
    for await (const entry of readIndexEntriesStreaming(context.reads, indexPath, segment.indexSize)) {
      if (entry.position >= BigInt(fromPosition)) yield { ...entry, entryIndex };
      entryIndex++;
    }
  })();
  // Kept in memory up to a cap: a garbage index must not turn into millions of findings.
  const beyondCap = { onBatches: 0, pastLastBatch: 0 };
  const matcher = new IndexEntryMatcher(entries, (entry, batch) => {
    if (mismatched.length < MAX_INDEX_MISMATCHES_KEPT) mismatched.push({ entry: entry as NumberedEntry, batch });
    else if (batch === null) beyondCap.pastLastBatch++;
    else beyondCap.onBatches++;
  });

  const file = await context.reads.openCapped(logPath, frozenSize, hasher);
  let stopPosition = fromPosition;
  let nextOffset = segment.expectedOffset;
  let batches = 0;
  let messages = 0;
  let inFlightBytes = 0;
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
    stopPosition = walk.stopPosition;
    nextOffset = walk.expectedOffset;
    batches = walk.batchesVerified;
    messages = walk.messageCount;
    if (walk.discontinuity) {
      const { position, expectedOffset, foundOffset } = walk.discontinuity;
      finding(
        "OffsetDiscontinuity",
        logPath,
        position,
        `${logPath}: the verified batch at byte ${formatCount(position)} starts at offset ${foundOffset}, below offset ${expectedOffset} the chain had reached; bytes from ${formatCount(position)} on were not verified`,
      );
    } else if (stopPosition < frozenSize) {
      const check = await verifyBatchAt(window, stopPosition);
      const status = check.verified ? VerifyStatus.Ok : check.status;
      const inFlight = status === VerifyStatus.HeaderBeyondFile || status === VerifyStatus.BatchBeyondFile;
      if (tailMayGrow && inFlight) {
        // The broker is appending this batch right now: growth, not damage (docs/scrub.md §1).
        inFlightBytes = frozenSize - stopPosition;
      } else {
        const header = check.header;
        const described = header ? ` (base offset ${header.baseOffset}, ${formatCount(header.batchLength)} bytes)` : "";
        const damage =
          `${logPath}: the batch at byte ${formatCount(stopPosition)}${described} does not verify: ${VERIFY_STATUS_NAMES[status]}; ` +
          `${formatCount(frozenSize - stopPosition)} bytes from there on were not verified (${sealed ? "sealed" : "active"} segment; nothing was changed)`;
        if (sealed || tailMayGrow) {
          finding(statusCode(status), logPath, stopPosition, damage);
        } else {
          // A quiet active segment: what `scan` calls it, by the same probe (docs/recovery.md §3.5, §3.7).
          const failure = walk.failure ?? { status, header: check.header };
          const budget = { limitUnits: PROBE_BUDGET_UNITS, spentUnits: 0 };
          const probe = await probeResidue(window, stopPosition, nextOffset, budget);
          if (probe.verdict === "no-survivor") {
            const evidence = tornEvidenceOf(failure, await residueIsAllZero(window, probe));
            const argv = ["segscan", "scan", dirname(logPath)];
            findings.push({
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
            });
          } else {
            const why =
              probe.verdict === "survivor"
                ? `a verified batch follows at byte ${probe.survivorPosition === null ? "unknown" : formatCount(probe.survivorPosition)}: damage inside the log, not a torn tail (\`segscan scan\` refuses the partition: InteriorDamage)`
                : "the probe for a verified batch after it ran out of budget (`segscan scan` refuses the partition: UnverifiedResidue)";
            finding(statusCode(status), logPath, stopPosition, `${damage}; ${why}`);
          }
        }
      }
    }
    if (hasher !== null && stopPosition < frozenSize) {
      // Damage stopped the walk: read the rest for the hash all the same, so a
      // segment that changed since it was verified says so whatever the window size.
      for (let position = hasher.hashedBytes; position < frozenSize; position = hasher.hashedBytes) {
        await window.ensure(position, Math.min(window.capacityBytes, frozenSize - position));
        if (hasher.hashedBytes === position) break;
      }
    }
  } finally {
    await entries.return(undefined).catch(() => undefined);
    await file.close();
  }

  // Past the proven prefix an entry has nothing to be checked against: on a
  // growing segment the index may run ahead of the frozen log; after damage the
  // damage finding already covers it. (Entries the matcher hands over without a
  // batch all lie past the last verified batch start.)
  const ignorePastLastBatch = tailMayGrow || stopPosition < frozenSize;
  let indexFindings = 0;
  let unreported = beyondCap.onBatches + (ignorePastLastBatch ? 0 : beyondCap.pastLastBatch);
  for (const { entry, batch } of mismatched) {
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
  return { findings, stopPosition, nextOffset, batches, messages, inFlightBytes };
}
