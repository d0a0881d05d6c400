/**
 * Reading and validating a segment's sparse index (docs/format.md §1.5, §3.2 step 1).
 * Entries stream through a small fixed buffer, so a huge or garbage index
 * never drives memory.
 */
import { INDEX_ENTRY_BYTES } from "../format/constants.js";
import { type IndexEntry, readIndexEntry } from "../format/records.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import type { BlockingFile, ReadableFile, ScanFs } from "../io/fs.js";
import { readExactly, readExactlyBlocking } from "../io/read-exactly.js";

/** Entries read per index read: 64 KiB keeps syscalls few and memory constant. */
export const INDEX_CHUNK_ENTRIES = 2730;

export interface IndexSummary {
  wholeEntries: number;
  trailingBytes: number;
  first: IndexEntry | null;
  last: IndexEntry | null;
}

export type IndexValidation =
  | { valid: true }
  | { valid: false; code: "IndexEntryBeforeSegmentStart"; firstEntryOffset: bigint }
  | { valid: false; code: "IndexEntriesNotMonotone"; entryIndex: number };

/** Every whole entry of the index file in order, a chunk (at most INDEX_CHUNK_ENTRIES entries) at a time. */
async function* readIndexChunks(scanFs: ScanFs, indexPath: string, indexSize: number): AsyncGenerator<IndexEntry[]> {
  const wholeEntries = Math.floor(indexSize / INDEX_ENTRY_BYTES);
  if (wholeEntries === 0) return;
  let file;
  try {
    file = await scanFs.open(indexPath);
  } catch (cause) {
    throw new ScanFailure("OpenFailure", indexPath, `cannot open ${indexPath}: ${describeCause(cause)}; nothing was changed`, { cause });
  }
  try {
    // Sized to the index when it is smaller: most partitions' indexes hold a few entries.
    const chunk = new Uint8Array(Math.min(INDEX_CHUNK_ENTRIES, wholeEntries) * INDEX_ENTRY_BYTES);
    for (let entryIndex = 0; entryIndex < wholeEntries; ) {
      const count = Math.min(INDEX_CHUNK_ENTRIES, wholeEntries - entryIndex);
      await readExactly(file, chunk.subarray(0, count * INDEX_ENTRY_BYTES), entryIndex * INDEX_ENTRY_BYTES, {
        path: indexPath,
        sizeAtStart: indexSize,
      });
      yield decodeIndexChunk(chunk.subarray(0, count * INDEX_ENTRY_BYTES));
      entryIndex += count;
    }
  } finally {
    await file.close();
  }
}

/** Streams every whole entry of the index file in order. */
export async function* readIndexEntriesStreaming(scanFs: ScanFs, indexPath: string, indexSize: number): AsyncGenerator<IndexEntry> {
  for await (const entries of readIndexChunks(scanFs, indexPath, indexSize)) yield* entries;
}

/**
 * Every whole entry of an index of at most INDEX_CHUNK_ENTRIES entries (one
 * open, read and close), as an array: its passes then run without a promise
 * per entry (docs/benchmarks.md: streaming a 4-entry index cost ~20 promises).
 */
export async function readIndexEntries(scanFs: ScanFs, indexPath: string, indexSize: number): Promise<IndexEntry[]> {
  if (Math.floor(indexSize / INDEX_ENTRY_BYTES) > INDEX_CHUNK_ENTRIES) {
    throw new RangeError(`readIndexEntries: ${indexPath} holds more than ${INDEX_CHUNK_ENTRIES} entries; stream it`);
  }
  for await (const entries of readIndexChunks(scanFs, indexPath, indexSize)) return entries;
  return [];
}

/** `readIndexEntries` through an open file's blocking reads: one read of an index of at most INDEX_CHUNK_ENTRIES entries. */
export function readIndexEntriesBlocking(file: Pick<BlockingFile, "readBlocking">, indexPath: string, indexSize: number): IndexEntry[] {
  const chunk = wholeIndexChunk(indexPath, indexSize);
  readExactlyBlocking(file, chunk, 0, { path: indexPath, sizeAtStart: indexSize });
  return decodeIndexChunk(chunk);
}

/** `readIndexEntries` through a file already open: one read, no open or close of its own. */
export async function readIndexEntriesWhole(file: ReadableFile, indexPath: string, indexSize: number): Promise<IndexEntry[]> {
  const chunk = wholeIndexChunk(indexPath, indexSize);
  await readExactly(file, chunk, 0, { path: indexPath, sizeAtStart: indexSize });
  return decodeIndexChunk(chunk);
}

/** The buffer an index read whole needs: its whole entries, at most INDEX_CHUNK_ENTRIES. */
function wholeIndexChunk(indexPath: string, indexSize: number): Uint8Array {
  const wholeEntries = Math.floor(indexSize / INDEX_ENTRY_BYTES);
  if (wholeEntries > INDEX_CHUNK_ENTRIES) {
    throw new RangeError(`${indexPath} holds more than ${INDEX_CHUNK_ENTRIES} index entries to read whole; stream it`);
  }
  return new Uint8Array(wholeEntries * INDEX_ENTRY_BYTES);
}

function decodeIndexChunk(chunk: Uint8Array): IndexEntry[] {
  const entries: IndexEntry[] = new Array(chunk.length / INDEX_ENTRY_BYTES);
  for (let i = 0; i < entries.length; i++) entries[i] = readIndexEntry(chunk, i * INDEX_ENTRY_BYTES);
  return entries;
}

/**
 * docs/recovery.md §3.2 step 1: the first entry must not precede the segment start; offsets
 * and positions must strictly ascend. Timestamps are not checked: clocks rewind.
 */
export async function validateIndex(
  entries: AsyncIterable<IndexEntry> | readonly IndexEntry[],
  startOffset: bigint,
): Promise<{ validation: IndexValidation; summary: Omit<IndexSummary, "wholeEntries" | "trailingBytes"> }> {
  if (isEntryList(entries)) return validateIndexEntries(entries, startOffset);
  const check = new IndexCheck(startOffset);
  for await (const entry of entries) if (!check.add(entry)) break;
  return check.result();
}

/** `validateIndex` over entries read whole: no promise. */
export function validateIndexEntries(
  entries: readonly IndexEntry[],
  startOffset: bigint,
): { validation: IndexValidation; summary: Omit<IndexSummary, "wholeEntries" | "trailingBytes"> } {
  const check = new IndexCheck(startOffset);
  for (const entry of entries) if (!check.add(entry)) break;
  return check.result();
}

function isEntryList(entries: AsyncIterable<IndexEntry> | readonly IndexEntry[]): entries is readonly IndexEntry[] {
  return Array.isArray(entries);
}

/** validateIndex's checks, an entry at a time. */
class IndexCheck {
  private first: IndexEntry | null = null;
  private previous: IndexEntry | null = null;
  private entryIndex = 0;
  private failed: { validation: IndexValidation; summary: Omit<IndexSummary, "wholeEntries" | "trailingBytes"> } | null = null;

  constructor(private readonly startOffset: bigint) {}

  /** False once the index fails a check (the result is then final). */
  add(entry: IndexEntry): boolean {
    const previous = this.previous;
    if (previous === null) {
      this.first = entry;
      if (entry.offset < this.startOffset) {
        this.failed = {
          validation: { valid: false, code: "IndexEntryBeforeSegmentStart", firstEntryOffset: entry.offset },
          summary: { first: entry, last: entry },
        };
        return false;
      }
    } else if (entry.offset <= previous.offset || entry.position <= previous.position) {
      this.failed = {
        validation: { valid: false, code: "IndexEntriesNotMonotone", entryIndex: this.entryIndex },
        summary: { first: this.first, last: entry },
      };
      return false;
    }
    this.previous = entry;
    this.entryIndex++;
    return true;
  }

  result(): { validation: IndexValidation; summary: Omit<IndexSummary, "wholeEntries" | "trailingBytes"> } {
    return this.failed ?? { validation: { valid: true }, summary: { first: this.first, last: this.previous } };
  }
}
