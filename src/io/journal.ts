/**
 * The scan's reader of a partition's salvage record (docs/repair.md §6.6): the
 * offsets a `segscan salvage --apply` dropped stay lost after the partition
 * scans clean, and only the repair journals in its preserve dir
 * `<realpath(dir)>.segscan` say so. This reads those journals (the active one
 * and every restored one) through the scan's file layer, with the one line
 * layout repair writes (src/format/journal.ts), and returns what they record
 * as lost — or why they could not be read, which is never "nothing lost".
 */
import { join } from "node:path";
import {
  JOURNAL_NAME,
  JournalLayoutError,
  PRESERVE_DIR_SUFFIX,
  type RecordedLoss,
  healCovers,
  isJournalName,
  parseJournalText,
  recordedHeals,
  recordedLosses,
} from "../format/journal.js";
import { describeCause } from "./errors.js";
import type { ScanFs } from "./fs.js";
import { readExactly } from "./read-exactly.js";

/**
 * A journal larger than this is not read by the scan: it is reported as
 * unreadable (never as "nothing lost"). A journal grows by a few hundred bytes
 * a step, so even years of repairs stay far below it; the bound keeps a
 * damaged or foreign file of that name from filling the scan's memory.
 */
export const JOURNAL_READ_MAX_BYTES = 64 * 1024 * 1024;

/** A loss as the scan reports it: which journal recorded it. */
export interface JournalLoss extends RecordedLoss {
  journal: string;
}

export type SalvageRecord =
  /** No preserve dir, or one that holds no journal: nothing was ever recorded as lost. */
  | { kind: "none" }
  /** Every journal read whole; `losses` may be empty (nothing lost, or every loss restored or cleared). */
  | { kind: "read"; losses: JournalLoss[] }
  /** A preserve dir or journal that exists and cannot be read or trusted: what it records is unknown. */
  | { kind: "unreadable"; path: string; reason: string };

/** The preserve dir of a partition dir given by its real path (docs/repair.md §6.2 rule 5). */
export function preserveDirBeside(realDir: string): string {
  return realDir.replace(/[\\/]+$/, "") + PRESERVE_DIR_SUFFIX;
}

/** Not fatal, as repair's reader: a torn last line may end inside a character, and it is skipped anyway. */
const decoder = new TextDecoder();

const isMissing = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOENT";
};

/**
 * Reads every journal in `preserveDir` (`journal.jsonl` and each
 * `journal.<n>.restored.jsonl`, in name order) and returns the losses they
 * record. A preserve dir that does not exist is `none`; one that exists and
 * cannot be listed, a journal that cannot be opened or read, is too large, or has a line that is not a journal record (other than a torn
 * last line) is `unreadable`, naming the file and why.
 */
export async function readSalvageRecord(scanFs: ScanFs, preserveDir: string): Promise<SalvageRecord> {
  let names: string[];
  try {
    const entries = await scanFs.list(preserveDir);
    names = entries.filter((entry) => isJournalName(entry.name)).map((entry) => entry.name);
  } catch (error) {
    if (isMissing(error)) return { kind: "none" };
    return { kind: "unreadable", path: preserveDir, reason: `cannot list it: ${describeCause(error)}` };
  }
  if (names.length === 0) return { kind: "none" };
  // The active journal last: its losses are the newest.
  names.sort((a, b) => (a === JOURNAL_NAME ? 1 : b === JOURNAL_NAME ? -1 : a < b ? -1 : a > b ? 1 : 0));
  let losses: JournalLoss[] = [];
  for (const name of names) {
    const journal = join(preserveDir, name);
    const read = await readJournalText(scanFs, journal);
    if (typeof read !== "string") return read;
    try {
      const entries = parseJournalText(read);
      const heals = recordedHeals(entries);
      // docs/heal.md: a heal that stands closes every loss recorded before it (an earlier journal, or an earlier line) that it filled.
      losses = losses.filter((loss) => !heals.some((heal) => healCovers(heal.range, loss.range)));
      for (const loss of recordedLosses(entries)) {
        if (heals.some((heal) => heal.line > loss.line && healCovers(heal.range, loss.range))) continue;
        losses.push({ ...loss, journal });
      }
    } catch (error) {
      if (!(error instanceof JournalLayoutError)) throw error;
      return { kind: "unreadable", path: journal, reason: `its line ${error.line} ${error.why}` };
    }
  }
  return { kind: "read", losses };
}

async function readJournalText(scanFs: ScanFs, journal: string): Promise<string | Extract<SalvageRecord, { kind: "unreadable" }>> {
  const unreadable = (reason: string): Extract<SalvageRecord, { kind: "unreadable" }> => ({ kind: "unreadable", path: journal, reason });
  let file;
  try {
    file = await scanFs.open(journal);
  } catch (error) {
    return unreadable(`cannot open it: ${describeCause(error)}`);
  }
  try {
    const size = file.size ?? (await scanFs.stat(journal)).size;
    if (size > JOURNAL_READ_MAX_BYTES) {
      return unreadable(`it holds ${size} bytes, more than the ${JOURNAL_READ_MAX_BYTES} a scan reads of a journal`);
    }
    const bytes = new Uint8Array(size);
    await readExactly(file, bytes, 0, { path: journal, sizeAtStart: size });
    return decoder.decode(bytes);
  } catch (error) {
    return unreadable(error instanceof Error ? error.message : String(error));
  } finally {
    await file.close().catch(() => undefined);
  }
}
