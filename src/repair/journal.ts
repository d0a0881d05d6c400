/**
 * The repair journal `<partition dir>.segscan/journal.jsonl` (docs/repair.md §6.2 step 4):
 * one JSON object per line, appended and fsynced one line at a time. File
 * names are stored relative to the partition dir (`name`, `log`, `index`,
 * `staging`) or to the preserve dir (`to`, `file`), so a data dir that is moved
 * whole can still be restored. Sizes are numbers, XXH3-64 values 16 hex digits,
 * segment offsets decimal strings.
 */
import * as path from "node:path";
import { JournalCorruptError, RepairError } from "./errors.js";
import type { RepairFile, RepairFs } from "./fs-layer.js";
import { readExactly, writeExactly } from "./files.js";
import type { SalvageRange } from "./plan-types.js";

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

/**
 * docs/repair.md §6.3: proof of which file was cut — the XXH3-64 of `bytes`
 * bytes ending at the cut point (`[from, from + bytes)`, untouched by the cut
 * and by restore). Restore re-hashes them before it changes the file, so a
 * file replaced since the cut (by a rename with other bytes of the same
 * length, say) is refused instead of having the old residue appended.
 */
export interface JournalPrefixProof {
  from: number;
  bytes: number;
  xxh3: string;
}

export type JournalOp =
  /**
   * Cut `log` (a segment's `.log`, or the metadata WAL with segment "0") from
   * `fromSize` to `toSize` after preserving `[toSize, fromSize)`. `proof` is
   * absent in journals written before it existed.
   */
  | {
      type: "truncate-log";
      segment: string;
      log: string;
      fromSize: number;
      toSize: number;
      residue: JournalResidue;
      proof?: JournalPrefixProof;
    }
  /** Move `name` (partition dir) to `to` (preserve dir): a sweep. */
  | { type: "move-aside"; kind: string; name: string; to: string; size: number }
  /**
   * Write `staging` then rename it over `index`. `old` is the replaced index
   * (copied to `old.file` in the preserve dir) or null when there was none.
   */
  | {
      type: "replace-index";
      segment: string;
      index: string;
      staging: string;
      old: (JournalIndexImage & { file: string }) | null;
      new: JournalIndexImage;
    }
  /**
   * The same for an offset file (docs/node.md N7): write `staging`, rename it
   * over `file` (named by its path under the partition dir); `old` is its
   * preserved copy. (Journals written before this op existed used
   * `replace-index` for offset files; restore reads both.)
   */
  | {
      type: "replace-file";
      file: string;
      staging: string;
      old: JournalIndexImage & { file: string };
      new: JournalIndexImage;
    }
  /**
   * Salvage (docs/repair.md §6.5): write `staging` as the old log's byte
   * ranges `kept`, in order, then rename it over `log`. `old` is the whole old
   * log, copied into the preserve dir first; `lost` the ranges it drops, with
   * the offsets they hide (recorded as lost).
   */
  | {
      type: "replace-log";
      segment: string;
      log: string;
      staging: string;
      old: JournalIndexImage & { file: string };
      new: JournalIndexImage;
      kept: { from: number; to: number }[];
      lost: SalvageRange[];
    };

interface RecordBase {
  v: typeof JOURNAL_VERSION;
  run: string;
  seq: number;
}

export type JournalRecord =
  /**
   * `partition` is the target's path (a partition dir, a lone `.log`, or
   * `metadata/`); `target` its kind (absent in older journals: a partition);
   * `salvage` (a salvage run only, docs/repair.md §6.5) what the run keeps and
   * the offsets it records as lost.
   */
  | (RecordBase & {
      kind: "begin";
      time: string;
      partition: string;
      target?: "partition" | "metadata";
      plan: Record<string, number>;
      salvage?: { kept: SalvageRange[]; lost: SalvageRange[] };
    })
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
   * mid-append may have left a torn last line (bytes after the last newline):
   * that fragment is cut off first (and the cut fsynced), so the only line a
   * reader may ever skip is the last one. The fragment is a record that was
   * never written in full, and an intent is fsynced before its step starts, so
   * no step it could describe ever ran: nothing is lost with it.
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

/** A journal record and the 1-based line of the journal it was read from. */
export interface JournalEntry {
  record: JournalRecord;
  line: number;
}

/**
 * Every record of a journal, in file order, each with its line number. The
 * journal must be whole: the only line that may fail to parse is a torn LAST
 * line (bytes after the final newline: an append cut by a crash, whose intent
 * never ran because an intent is fsynced before its step starts). Any other
 * bad line, a `done` with no intent before it, or an `undone` naming no
 * intent throws `JournalCorruptError` naming the journal and the line: acting
 * on a journal with a hole in it could skip an undo and report success.
 */
export async function readJournalEntries(fs: RepairFs, journalPath: string): Promise<JournalEntry[]> {
  const stat = await fs.stat(journalPath);
  if (stat === null) return [];
  const bytes = new Uint8Array(stat.size);
  await withReadable(fs, journalPath, (file) => readExactly(file, journalPath, bytes, stat.size, 0));
  const lines = decoder.decode(bytes).split("\n");
  // The text after the last newline ("" for a whole journal) is a torn append: skipped, never acted on.
  lines.pop();
  const entries: JournalEntry[] = [];
  const intents = new Set<string>();
  const key = (run: string, seq: number): string => `${run}#${seq}`;
  const corrupt = (line: number, why: string): JournalCorruptError =>
    new JournalCorruptError(
      `journal ${journalPath} line ${line} ${why}; only a torn last line may be skipped, so nothing was restored or changed ` +
        "and the journal is left in place (inspect that line; the preserved files beside it are untouched)",
      { path: journalPath },
      line,
    );
  for (const [i, text] of lines.entries()) {
    const line = i + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw corrupt(line, `is not a journal record (${JSON.stringify(text.slice(0, 60))})`);
    }
    if (!isRecord(parsed)) throw corrupt(line, `is not a journal record (${JSON.stringify(text.slice(0, 60))})`);
    if (parsed.kind === "intent") intents.add(key(parsed.run, parsed.seq));
    if (parsed.kind === "done" && !intents.has(key(parsed.run, parsed.seq))) {
      throw corrupt(line, `marks step ${parsed.seq} of run ${parsed.run} done, but no earlier line records its intent`);
    }
    if (parsed.kind === "undone" && !intents.has(key(parsed.of.run, parsed.of.seq))) {
      throw corrupt(line, `marks step ${parsed.of.seq} of run ${parsed.of.run} undone, but no earlier line records its intent`);
    }
    entries.push({ record: parsed, line });
  }
  return entries;
}

/** Every record of a journal, in file order (see `readJournalEntries` for what is refused). */
export async function readJournal(fs: RepairFs, journalPath: string): Promise<JournalRecord[]> {
  return (await readJournalEntries(fs, journalPath)).map((entry) => entry.record);
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isString = (v: unknown): v is string => typeof v === "string";
const isHash = (v: unknown): boolean => typeof v === "string" && /^[0-9a-f]{16}$/.test(v);
const isImage = (v: unknown): boolean =>
  v !== null && typeof v === "object" && isNumber((v as JournalIndexImage).size) && isHash((v as JournalIndexImage).xxh3);

const isProof = (v: unknown): boolean =>
  v !== null &&
  typeof v === "object" &&
  isNumber((v as JournalPrefixProof).from) &&
  isNumber((v as JournalPrefixProof).bytes) &&
  isHash((v as JournalPrefixProof).xxh3);

/** Whether an intent's op carries every field its undo reads, with the right types. */
function isOp(value: unknown): value is JournalOp {
  if (value === null || typeof value !== "object") return false;
  const op = value as Record<string, unknown>;
  switch (op.type) {
    case "truncate-log": {
      const residue = op.residue as Record<string, unknown> | null | undefined;
      return (
        isString(op.segment) &&
        isString(op.log) &&
        isNumber(op.fromSize) &&
        isNumber(op.toSize) &&
        (op.proof === undefined || isProof(op.proof)) &&
        residue !== null &&
        typeof residue === "object" &&
        isNumber(residue.bytes) &&
        typeof residue.allZero === "boolean" &&
        isHash(residue.xxh3) &&
        (residue.file === null || isString(residue.file))
      );
    }
    case "move-aside":
      return isString(op.kind) && isString(op.name) && isString(op.to) && isNumber(op.size);
    case "replace-file":
      return (
        isString(op.file) && isString(op.staging) && isImage(op.new) && isImage(op.old) && isString((op.old as { file?: unknown }).file)
      );
    case "replace-log": {
      const ranges = (v: unknown): boolean =>
        Array.isArray(v) && v.every((r) => r !== null && typeof r === "object" && isNumber(r.from) && isNumber(r.to) && r.from <= r.to);
      return (
        isString(op.segment) &&
        isString(op.log) &&
        isString(op.staging) &&
        isImage(op.new) &&
        isImage(op.old) &&
        isString((op.old as { file?: unknown }).file) &&
        ranges(op.kept) &&
        Array.isArray(op.lost)
      );
    }
    case "replace-index":
      return (
        isString(op.segment) &&
        isString(op.index) &&
        isString(op.staging) &&
        isImage(op.new) &&
        (op.old === null || (isImage(op.old) && isString((op.old as { file?: unknown }).file)))
      );
    default:
      return false;
  }
}

function isRecord(value: unknown): value is JournalRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Partial<RecordBase> & { kind?: unknown; op?: unknown };
  if (r.v !== JOURNAL_VERSION || typeof r.run !== "string" || typeof r.seq !== "number") return false;
  if (r.kind === "intent") return isOp(r.op);
  if (r.kind === "undone") {
    const of = (value as { of?: { run?: unknown; seq?: unknown } }).of;
    return typeof of?.run === "string" && typeof of.seq === "number";
  }
  return r.kind === "begin" || r.kind === "preserved" || r.kind === "done" || r.kind === "end";
}

/** Names inside a journal must be plain file names: no separators, no `..`. */
/** docs/node.md N7: an offset file is journaled by its path under the partition dir (one fixed shape, no `..`). */
const OFFSET_FILE_NAME = /^offsets\/(consumers|groups)\/(?!\.\.?(\.staging)?$)[^/\\]+$/;

export function journalName(name: string, journalPath: string): string {
  if (OFFSET_FILE_NAME.test(name)) return name;
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\\")) {
    throw new RepairError(`journal ${journalPath} names "${name}", which is not a plain file name`, { path: journalPath });
  }
  return name;
}
