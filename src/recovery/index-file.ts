/**
 * Reading and validating a segment's sparse index (docs/format.md §1.5, §3.2 step 1).
 * Entries stream through a small fixed buffer, so a huge or garbage index
 * never drives memory.
 */
import { INDEX_ENTRY_BYTES } from "../format/constants.js";
import { type IndexEntry, readIndexEntry } from "../format/records.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import { readExactly } from "../io/read-exactly.js";

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

/** Streams every whole entry of the index file in order. */
export async function* readIndexEntriesStreaming(scanFs: ScanFs, indexPath: string, indexSize: number): AsyncGenerator<IndexEntry> {
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
      for (let i = 0; i < count; i++) yield readIndexEntry(chunk, i * INDEX_ENTRY_BYTES);
      entryIndex += count;
    }
  } finally {
    await file.close();
  }
}

/**
 * docs/recovery.md §3.2 step 1: the first entry must not precede the segment start; offsets
 * and positions must strictly ascend. Timestamps are not checked: clocks rewind.
 */
export async function validateIndex(
  entries: AsyncIterable<IndexEntry>,
  startOffset: bigint,
): Promise<{ validation: IndexValidation; summary: Omit<IndexSummary, "wholeEntries" | "trailingBytes"> }> {
  let first: IndexEntry | null = null;
  let previous: IndexEntry | null = null;
  let entryIndex = 0;
  for await (const entry of entries) {
    if (previous === null) {
      first = entry;
      if (entry.offset < startOffset) {
        return {
          validation: { valid: false, code: "IndexEntryBeforeSegmentStart", firstEntryOffset: entry.offset },
          summary: { first, last: entry },
        };
      }
    } else if (entry.offset <= previous.offset || entry.position <= previous.position) {
      return { validation: { valid: false, code: "IndexEntriesNotMonotone", entryIndex }, summary: { first, last: entry } };
    }
    previous = entry;
    entryIndex++;
  }
  return { validation: { valid: true }, summary: { first, last: previous } };
}
