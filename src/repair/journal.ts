/**
 * The repair journal `<partition dir>.segscan/journal.jsonl` (docs/repair.md §6.2 step 4):
 * one JSON object per line, appended and fsynced one line at a time. File
 * names are stored relative to the partition dir (`name`, `log`, `index`,
 * `staging`) or to the preserve dir (`to`, `file`), so a data dir that is moved
 * whole can still be restored. Sizes are numbers, XXH3-64 values 16 hex digits,
 * segment offsets decimal strings.
 */
import * as path from "node:path";
import { RepairError } from "./errors.js";
import type { RepairFile, RepairFs } from "./fs-layer.js";
import { readExactly, writeExactly } from "./files.js";

export const JOURNAL_NAME = "journal.jsonl";
export const JOURNAL_VERSION = 1;

/** Preserved residue of a cut: copied to `file`, or (all zero) recorded by length only with `file` null. */
export interface JournalResidue {
  bytes: number;
  allZero: boolean;
  xxh3: string;
  file: string | null;
}

/** An index file's content, identified by size and hash. */
export interface JournalIndexImage {
  size: number;
  xxh3: string;
}

export type JournalOp =
  /** Cut `log` from `fromSize` to `toSize` after preserving `[toSize, fromSize)`. */
  | { type: "truncate-log"; segment: string; log: string; fromSize: number; toSize: number; residue: JournalResidue }
  /** Move `name` (partition dir) to `to` (preserve dir): a sweep. */
  | { type: "move-aside"; kind: string; name: string; to: string; size: number }
  /**
   * Write `staging` then rename it over `index`. `old` is the replaced index
   * (copied to `old.file` in the preserve dir) or null when there was none.
   */
  | {
      type: "replace-index"; segment: string; index: string; staging: string;
      old: (JournalIndexImage & { file: string }) | null; new: JournalIndexImage;
    };

interface RecordBase {
  v: typeof JOURNAL_VERSION;
  run: string;
  seq: number;
}

export type JournalRecord =
  | (RecordBase & { kind: "begin"; time: string; partition: string; plan: Record<string, number> })
  /** Informational: bytes copied into the preserve dir. */
  | (RecordBase & { kind: "preserved"; source: string; from: number; bytes: number; xxh3: string; file: string })
  /** Written and fsynced BEFORE the step. */
  | (RecordBase & { kind: "intent"; op: JournalOp })
  /** Written after the step is durable; `seq` is the intent's. */
  | (RecordBase & { kind: "done" })
  | (RecordBase & { kind: "end"; time: string })
  /** Written by restore once the intent `of` is undone, so a restore re-run after a crash skips it. */
  | (RecordBase & { kind: "undone"; of: { run: string; seq: number } });

type Body<R> = R extends RecordBase ? Omit<R, keyof RecordBase> : never;
export type JournalRecordBody = Body<JournalRecord>;

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
   * mid-append may have left a torn last line: a newline is written first so
   * that fragment stays a line of its own, which readers skip.
   */
  static async open(fs: RepairFs, preserveDir: string, run: string): Promise<JournalWriter> {
    const journalPath = path.join(preserveDir, JOURNAL_NAME);
    const before = await fs.stat(journalPath);
    const file = await fs.open(journalPath, "a");
    const writer = new JournalWriter(fs, file, journalPath, run);
    try {
      if (before === null) {
        await fs.syncDir(preserveDir);
      } else if (before.size > 0) {
        const last = new Uint8Array(1);
        await withReadable(fs, journalPath, (reader) => readExactly(reader, journalPath, last, 1, before.size - 1));
        if (last[0] !== 0x0a) {
          await writeExactly(file, encoder.encode("\n"), 1, null);
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

/**
 * Every whole record of a journal, in file order. Lines that do not parse as
 * a record (the torn last line of a crashed append) are skipped: a record is
 * only acted on once it was written in full, and an intent is fsynced before
 * its step starts, so a torn intent's step never ran.
 */
export async function readJournal(fs: RepairFs, journalPath: string): Promise<JournalRecord[]> {
  const stat = await fs.stat(journalPath);
  if (stat === null) return [];
  const bytes = new Uint8Array(stat.size);
  await withReadable(fs, journalPath, (file) => readExactly(file, journalPath, bytes, stat.size, 0));
  const records: JournalRecord[] = [];
  for (const line of decoder.decode(bytes).split("\n")) {
    if (line.trim() === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (isRecord(parsed)) records.push(parsed);
  }
  return records;
}

function isRecord(value: unknown): value is JournalRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Partial<RecordBase> & { kind?: unknown; op?: { type?: unknown } };
  if (r.v !== JOURNAL_VERSION || typeof r.run !== "string" || typeof r.seq !== "number") return false;
  if (r.kind === "intent") {
    const type = r.op?.type;
    return type === "truncate-log" || type === "move-aside" || type === "replace-index";
  }
  if (r.kind === "undone") {
    const of = (value as { of?: { run?: unknown; seq?: unknown } }).of;
    return typeof of?.run === "string" && typeof of.seq === "number";
  }
  return r.kind === "begin" || r.kind === "preserved" || r.kind === "done" || r.kind === "end";
}

/** Names inside a journal must be plain file names: no separators, no `..`. */
export function journalName(name: string, journalPath: string): string {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\\")) {
    throw new RepairError(`journal ${journalPath} names "${name}", which is not a plain file name`, { path: journalPath });
  }
  return name;
}
