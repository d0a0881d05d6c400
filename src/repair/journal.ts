/**
 * The repair journal `<partition dir>.segscan/journal.jsonl` (docs/repair.md §6.2 step 4):
 * one JSON object per line, appended and fsynced one line at a time. Its line
 * layout and parser are src/format/journal.ts, which the scan reads too
 * (docs/repair.md §6.6); this module writes lines and reads them through the
 * repair file layer.
 */
import * as path from "node:path";
import {
  JOURNAL_NAME,
  JOURNAL_VERSION,
  type JournalEntry as JournalLine,
  JournalLayoutError,
  type JournalRecord as JournalLineRecord,
  type JournalRecordBody,
  parseJournalText,
} from "../format/journal.js";
import { JournalCorruptError, JournalVersionError } from "./errors.js";
import type { RepairFile, RepairFs } from "./fs-layer.js";
import { readExactly, writeExactly } from "./files.js";
import type { JournalOp } from "./steps/index.js";

// The line layout is the format layer's (src/format/journal.ts): the scan reads the same lines (docs/repair.md §6.6).
export { JOURNAL_NAME, JOURNAL_VERSION, type IntentRef, type JournalRecordBody } from "../format/journal.js";
export type { JournalOp } from "./steps/index.js";
/** A journal record as repair reads it: an intent's op checked against its step kind's schema. */
export type JournalRecord = JournalLineRecord<JournalOp>;
export type JournalEntry = JournalLine<JournalOp>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Appends records to a journal, one fsynced line each. */
export class JournalWriter {
  private seq = 0;

  private constructor(
    private readonly fs: RepairFs,
    private readonly file: RepairFile,
    readonly journalPath: string,
    readonly run: string,
  ) {}

  /**
   * Opens (creating) the journal for appending. A previous run that crashed
   * mid-append may have left a torn last line (bytes after the last newline):
   * that fragment is cut off first (and the cut fsynced), so the only line a
   * reader may ever skip is the last one. The fragment is a record that was
   * never written in full, and an intent is fsynced before its step starts, so
   * no step it could describe ever ran: nothing is lost with it.
   */
  static open(fs: RepairFs, preserveDir: string, run: string): Promise<JournalWriter> {
    return JournalWriter.openAt(fs, path.join(preserveDir, JOURNAL_NAME), run);
  }

  /** `open`, for any journal file of a preserve dir (forget appends to restored journals too, docs/repair.md §6.7). */
  static async openAt(fs: RepairFs, journalPath: string, run: string): Promise<JournalWriter> {
    const preserveDir = path.dirname(journalPath);
    const before = await fs.stat(journalPath);
    const file = await fs.open(journalPath, "a");
    const writer = new JournalWriter(fs, file, journalPath, run);
    try {
      if (before === null) {
        await fs.syncDir(preserveDir);
      } else if (before.size > 0) {
        const whole = await lastNewlineEnd(fs, journalPath, before.size);
        if (whole !== before.size) {
          await file.truncate(whole);
          await file.sync();
        }
      }
    } catch (error) {
      await file.close();
      throw error;
    }
    return writer;
  }

  /** Appends one record and fsyncs; returns its sequence number. `done` records reuse their intent's. */
  async append(record: JournalRecordBody, seq?: number): Promise<number> {
    const at = seq ?? ++this.seq;
    const line = encoder.encode(JSON.stringify({ v: JOURNAL_VERSION, run: this.run, seq: at, ...record }) + "\n");
    await writeExactly(this.file, line, line.length, null);
    await this.file.sync();
    return at;
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

async function withReadable<T>(fs: RepairFs, filePath: string, body: (file: RepairFile) => Promise<T>): Promise<T> {
  const file = await fs.open(filePath, "r");
  try {
    return await body(file);
  } finally {
    await file.close();
  }
}

/** Bytes read backwards at a time while looking for the journal's last newline. */
const TAIL_SCAN_BYTES = 4096;

/** The size of the journal up to and including its last newline (0 when it has none). */
async function lastNewlineEnd(fs: RepairFs, journalPath: string, size: number): Promise<number> {
  const buffer = new Uint8Array(TAIL_SCAN_BYTES);
  return withReadable(fs, journalPath, async (reader) => {
    for (let end = size; end > 0; end -= TAIL_SCAN_BYTES) {
      const start = Math.max(0, end - TAIL_SCAN_BYTES);
      await readExactly(reader, journalPath, buffer, end - start, start);
      for (let i = end - start - 1; i >= 0; i--) if (buffer[i] === 0x0a) return start + i + 1;
    }
    return 0;
  });
}

/**
 * Every record of a journal, in file order, each with its line number
 * (`parseJournalText`: only a torn last line is skipped), every intent's op
 * checked against its step kind's schema. A line of another journal version
 * throws `JournalVersionError`, naming it and what to do; any other bad line,
 * or a record naming an intent no earlier line holds, throws
 * `JournalCorruptError` naming the journal and the line: acting on a journal
 * with a hole in it could skip an undo and report success.
 */
export async function readJournalEntries(fs: RepairFs, journalPath: string): Promise<JournalEntry[]> {
  const stat = await fs.stat(journalPath);
  if (stat === null) return [];
  const bytes = new Uint8Array(stat.size);
  await withReadable(fs, journalPath, (file) => readExactly(file, journalPath, bytes, stat.size, 0));
  let entries: JournalLine[];
  try {
    entries = parseJournalText(decoder.decode(bytes));
  } catch (error) {
    if (!(error instanceof JournalLayoutError)) throw error;
    if (error.version !== undefined) throw new JournalVersionError(journalPath, error.line, error.version);
    throw corrupt(journalPath, error.line, error.why);
  }
  // The step kinds' schemas load with the first journal read (the package entry exports this reader without loading TypeBox).
  const { journalOpProblem } = await import("./steps/index.js");
  const problem = journalOpProblem(entries);
  if (problem !== null) throw corrupt(journalPath, problem.line, problem.why);
  return entries as JournalEntry[];
}

function corrupt(journalPath: string, line: number, why: string): JournalCorruptError {
  return new JournalCorruptError(
    `journal ${journalPath} line ${line} ${why}; only a torn last line may be skipped, so nothing was restored or changed ` +
      "and the journal is left in place (inspect that line; the preserved files beside it are untouched)",
    { path: journalPath },
    line,
  );
}

/** Every record of a journal, in file order (see `readJournalEntries` for what is refused). */
export async function readJournal(fs: RepairFs, journalPath: string): Promise<JournalRecord[]> {
  return (await readJournalEntries(fs, journalPath)).map((entry) => entry.record);
}
