/**
 * docs/repair.md §6.6: a partition's findings from its preserve dir — the
 * offsets a salvage recorded as lost (one `SalvageLostOffsets` per range still
 * lost), or a `SalvageRecordUnreadable` when a journal there cannot be read.
 * Read on every partition load, so every scan path (scan, scanIter, the pool,
 * repair's re-scans) says the same.
 */
import type { ScanFs } from "../io/fs.js";
import { type JournalLoss, preserveDirBeside, readSalvageRecord } from "../io/journal.js";
import type { PartitionFinding } from "../domain/scan.js";
import {
  forgetLostOffsetsCommand,
  salvageLossMessage,
  salvageLossNextStep,
  unreadableRecordMessage,
  unreadableRecordNextStep,
} from "../policy/partition-findings.js";

/**
 * The findings of the partition whose directory is `dir` (as the report names
 * it). `preserveDirListed` is what the listing of its parent showed: false
 * when no `<name>.segscan` is beside it (nothing to read), true when one is
 * (and `dir` is a real path), undefined when unknown (its real path is
 * resolved first, as repair puts the preserve dir beside the real path).
 */
export async function partitionFindings(
  scanFs: ScanFs,
  dir: string,
  reportPath: string,
  preserveDirListed: boolean | undefined,
): Promise<PartitionFinding[]> {
  if (preserveDirListed === false) return [];
  let real = dir;
  if (preserveDirListed === undefined && scanFs.realpath !== undefined) {
    real = await scanFs.realpath(dir).catch(() => dir);
  }
  const preserveDir = preserveDirBeside(real);
  if (scanFs.knownAbsent?.(preserveDir)) return [];
  const record = await readSalvageRecord(scanFs, preserveDir);
  switch (record.kind) {
    case "none":
      return [];
    case "unreadable":
      return [
        {
          severity: "failed",
          code: "SalvageRecordUnreadable",
          path: record.path,
          message: unreadableRecordMessage(record.path, record.reason),
          nextStep: unreadableRecordNextStep(record.path),
          nextCommand: null,
        },
      ];
    case "read":
      return distinct(record.losses).map((loss) => lossFinding(loss, reportPath));
  }
}

/**
 * One finding per range: a salvage re-run after a crash journals the same
 * range again under a new intent, which is one loss, not two (the newest
 * intent names it; it finished if either did).
 */
function distinct(losses: readonly JournalLoss[]): JournalLoss[] {
  const byRange = new Map<string, JournalLoss>();
  for (const loss of losses) {
    const { segment, startPosition, endPosition, firstOffset, lastOffset } = loss.range;
    const key = `${segment}:${startPosition}:${endPosition}:${firstOffset}:${lastOffset}`;
    const earlier = byRange.get(key);
    byRange.delete(key);
    byRange.set(key, earlier?.completed === true && !loss.completed ? { ...loss, completed: true } : loss);
  }
  return [...byRange.values()];
}

function lossFinding(loss: JournalLoss, reportPath: string): PartitionFinding {
  const range = loss.range;
  const fields = {
    severity: "warn" as const,
    code: "SalvageLostOffsets" as const,
    path: loss.journal,
    line: loss.line,
    run: loss.run,
    salvagedAt: loss.time,
    segment: BigInt(range.segment),
    kind: range.kind === "torn" ? ("torn" as const) : ("unreadable" as const),
    firstOffset: range.firstOffset === null ? null : BigInt(range.firstOffset),
    lastOffset: range.lastOffset === null ? null : BigInt(range.lastOffset),
    messages: range.messages,
    bytes: range.bytes,
    completed: loss.completed,
  };
  return {
    ...fields,
    message: salvageLossMessage(fields),
    nextStep: salvageLossNextStep(fields, reportPath),
    nextCommand: forgetLostOffsetsCommand(reportPath),
  };
}
