/**
 * Named fault scenarios for generated samples. Each injects exactly one fault
 * into one partition and states what a scan must conclude, so tests (and an
 * operator following the README) can check segscan against a known answer.
 *
 * `crafted-residue` is large but sparse: 48 crafted headers (each decodes, fits
 * the file, claims messages and extends the chain, but never verifies), each
 * claiming a 64 MiB batch, followed by a 64 MiB hole. The file's logical size is
 * ~64 MiB but it occupies a few KiB on disk, and the DEFAULT probe budget
 * (2 × (1 GiB + 64 MiB) = 34 × 64 MiB units) runs out on the 34th candidate:
 * `UnverifiedResidue` without lowering any limit.
 */
import { open, rename, truncate, unlink, writeFile, appendFile } from "node:fs/promises";
import { join } from "node:path";
import {
  BATCH_BASE_OFFSET_AT,
  BATCH_CHECKSUM_AT,
  BATCH_CHECKSUM_PREFIX_BYTES,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  FRAME_HEADER_BYTES,
  FRAME_PAYLOAD_LENGTH_AT,
  FRAME_USER_HEADERS_LENGTH_AT,
  INDEX_ENTRY_BYTES,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  MAX_BATCH_BYTES,
  STAGING_SUFFIX,
} from "../format/constants.js";
import { readU32, writeU32, writeU64 } from "../format/bytes.js";
import { encodeIndex, encodeIndexEntry, segmentStem } from "../format/encode.js";
import { xxh3_64 } from "../hash/xxh3.js";
import type { RefusalCode, SegmentOutcome } from "../domain/scan.js";
import type { Prng } from "./prng.js";
import type { PartitionLayout, Scenario, ScenarioExpectation, SegmentLayout, SizeProfile } from "./types.js";
import { samplePartitionSuperblock } from "./node/node.js";

export type { Scenario, ScenarioExpectation } from "./types.js";

// ---------------------------------------------------------------------------
// Byte-level helpers

async function readAt(path: string, position: number, length: number): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const bytes = new Uint8Array(length);
    const { bytesRead } = await handle.read(bytes, 0, length, position);
    if (bytesRead !== length) throw new Error(`short read of ${path} at ${position}`);
    return bytes;
  } finally {
    await handle.close();
  }
}

async function writeAt(path: string, position: number, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.write(bytes, 0, bytes.length, position);
  } finally {
    await handle.close();
  }
}

/** Recomputes a batch's checksum (docs/format.md §1.4) after its header was edited in `batch`. */
function resealBatch(batch: Uint8Array): void {
  const count = readU32(batch, BATCH_MESSAGE_COUNT_AT);
  const input = new Uint8Array(BATCH_CHECKSUM_PREFIX_BYTES + 8 * count);
  input.set(batch.subarray(0, BATCH_LENGTH_AT + 8), 0);
  input.set(batch.subarray(BATCH_MESSAGE_COUNT_AT, BATCH_MESSAGE_COUNT_AT + 4), BATCH_LENGTH_AT + 8);
  let at = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    input.set(batch.subarray(at, at + 8), BATCH_CHECKSUM_PREFIX_BYTES + 8 * i);
    at += FRAME_HEADER_BYTES + readU32(batch, at + FRAME_PAYLOAD_LENGTH_AT) + readU32(batch, at + FRAME_USER_HEADERS_LENGTH_AT);
  }
  writeU64(batch, BATCH_CHECKSUM_AT, xxh3_64(input));
}

/** Rewrites the base offset of the batch at `position` and re-seals it, so it still verifies. */
async function rebaseBatch(segment: SegmentLayout, batchIndex: number, baseOffset: bigint): Promise<void> {
  const layout = segment.batches[batchIndex]!;
  const bytes = await readAt(segment.logPath, layout.position, layout.length);
  writeU64(bytes, BATCH_BASE_OFFSET_AT, baseOffset);
  resealBatch(bytes);
  await writeAt(segment.logPath, layout.position, bytes);
  layout.baseOffset = baseOffset;
}

function tail(partition: PartitionLayout): SegmentLayout {
  return partition.segments[partition.segments.length - 1]!;
}

/** The second segment: neither the first (start offset > 0) nor the tail, with ≥ 3 segments. */
function middle(partition: PartitionLayout): SegmentLayout {
  return partition.segments[1]!;
}

function needSegments(count: number) {
  return (profile: SizeProfile): void => {
    if (profile.segmentsPerPartition < count) {
      throw new RangeError(`this scenario needs at least ${count} segments per partition`);
    }
  };
}

/** A batch of the segment's LAST chunk that is neither the chunk's first batch nor the segment's last. */
function lastChunkInterior(segment: SegmentLayout, rng: Prng): number {
  const first = segment.chunkStarts[segment.chunkStarts.length - 1]! + 1;
  const last = segment.batches.length - 2;
  if (last < first) throw new Error(`segment ${segment.stem} has no interior batch in its last chunk`);
  return rng.int(first, last);
}

function at(n: number): string {
  return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const fileName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

// ---------------------------------------------------------------------------
// The scenarios

const ZERO_TAIL_BYTES = 4 * 1024 * 1024;
/** Two damaged ranges, each with an intact batch after it, need a batch before, two damaged and two intact: five at least. */
const MIN_BATCHES_FOR_TWO_RANGES = 5;
const CRAFTED_HEADERS = 48;

const repairable = (outcome: SegmentOutcome | null): ScenarioExpectation => ({
  verdict: "repairable",
  refusal: null,
  action: "repair",
  outcome,
  scanExit: 4,
});
const refused = (refusal: RefusalCode, outcome: SegmentOutcome | null): ScenarioExpectation => ({
  verdict: "refused",
  refusal,
  action: "tombstone",
  outcome,
  scanExit: 4,
});

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "clean",
    description: "no fault: every partition is a proven batch chain",
    expected: { verdict: "clean", refusal: null, action: "serve", outcome: "clean", scanExit: 0 },
    async inject() {
      return "nothing injected";
    },
  },
  {
    name: "zero-tail",
    description: "a delayed-allocation crash left 4 MiB of zeros (sparse) after the tail segment's last batch",
    expected: repairable("torn-tail"),
    async inject(partition) {
      const segment = tail(partition);
      await truncate(segment.logPath, segment.size + ZERO_TAIL_BYTES);
      return `extended ${fileName(segment.logPath)} from ${at(segment.size)} by ${at(ZERO_TAIL_BYTES)} zero bytes`;
    },
  },
  {
    name: "torn-tail",
    description: "a crash mid-append: the tail segment's last batch is cut partway through its frames",
    expected: repairable("torn-tail"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const last = segment.batches[segment.batches.length - 1]!;
      const cut = last.position + BATCH_HEADER_BYTES + rng.int(1, last.length - BATCH_HEADER_BYTES - 1);
      await truncate(segment.logPath, cut);
      return `cut ${fileName(segment.logPath)} at byte ${at(cut)}, inside its last batch [${at(last.position)}, ${at(last.position + last.length)})`;
    },
  },
  {
    name: "payload-bitflip",
    description: "one flipped payload bit in an interior batch of a middle segment's last chunk, with intact batches after it",
    expected: refused("InteriorDamage", "refused"),
    checkProfile: needSegments(3),
    async inject(partition, rng) {
      const segment = middle(partition);
      const batch = segment.batches[lastChunkInterior(segment, rng)]!;
      // Inside the first frame's payload (payloads are ≥ 180 bytes).
      const position = batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + rng.int(0, 150);
      const [byte] = await readAt(segment.logPath, position, 1);
      const bit = rng.int(0, 7);
      await writeAt(segment.logPath, position, Uint8Array.of(byte! ^ (1 << bit)));
      return `flipped bit ${bit} of byte ${at(position)} in ${fileName(segment.logPath)} (batch at ${at(batch.position)})`;
    },
  },
  {
    name: "two-damaged-ranges",
    description:
      "the tail segment's .index keeps only its first entry (tail mode walks the whole log) and two interior batches a third and two thirds in have one flipped payload bit each: two damaged ranges, intact batches between and after",
    expected: refused("InteriorDamage", "refused"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const batches = segment.batches;
      if (batches.length < MIN_BATCHES_FOR_TWO_RANGES) {
        throw new RangeError(
          `segment ${segment.stem} holds ${batches.length} batches; two damaged ranges need ${MIN_BATCHES_FOR_TWO_RANGES}`,
        );
      }
      const first = Math.max(1, Math.floor(batches.length / 3));
      const second = Math.min(batches.length - 2, Math.max(first + 2, Math.floor((2 * batches.length) / 3)));
      await writeFile(segment.indexPath, encodeIndex(segment.indexEntries.slice(0, 1)));
      const flipped: string[] = [];
      for (const index of [first, second]) {
        const batch = batches[index]!;
        const position = batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + rng.int(0, 150);
        const [byte] = await readAt(segment.logPath, position, 1);
        await writeAt(segment.logPath, position, Uint8Array.of(byte! ^ (1 << rng.int(0, 7))));
        flipped.push(
          `byte ${at(position)} (batch ${index} at ${at(batch.position)}, offsets ${batch.baseOffset}..${batch.baseOffset + BigInt(batch.messageCount) - 1n})`,
        );
      }
      return `kept only the first entry of ${fileName(segment.indexPath)} and flipped a bit of ${flipped.join(" and ")} in ${fileName(segment.logPath)}`;
    },
  },
  {
    name: "last-batch-bitflip",
    description:
      "one flipped payload bit in the tail segment's LAST batch, complete and full length: a torn tail segscan cannot tell from corruption (the cut is kept, its bytes preserved)",
    expected: repairable("torn-tail"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const batch = segment.batches[segment.batches.length - 1]!;
      const position = batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + rng.int(0, 150);
      const [byte] = await readAt(segment.logPath, position, 1);
      await writeAt(segment.logPath, position, Uint8Array.of(byte! ^ (1 << rng.int(0, 7))));
      return `flipped a bit of byte ${at(position)} in the last batch of ${fileName(segment.logPath)} (at ${at(batch.position)}, offsets ${batch.baseOffset}..${segment.endOffset})`;
    },
  },
  {
    name: "sealed-last-batch-bitflip",
    description:
      "one flipped payload bit in a middle segment's LAST batch: the segment is a torn tail on its own, but the next segment starts past the offsets it held, so the partition is a Hole whose bytes are present, unreadable",
    expected: refused("Hole", "torn-tail"),
    checkProfile: needSegments(3),
    async inject(partition, rng) {
      const segment = middle(partition);
      const batch = segment.batches[segment.batches.length - 1]!;
      const position = batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + rng.int(0, 150);
      const [byte] = await readAt(segment.logPath, position, 1);
      await writeAt(segment.logPath, position, Uint8Array.of(byte! ^ (1 << rng.int(0, 7))));
      return `flipped a bit of byte ${at(position)} in the last batch of ${fileName(segment.logPath)} (at ${at(batch.position)}, offsets ${batch.baseOffset}..${segment.endOffset}), a segment the next one follows`;
    },
  },
  {
    name: "length-bitflip",
    description: "an interior batch's batch_length became 0xFFFFFFFF (over the 64 MiB cap) in the tail segment's last chunk",
    expected: refused("InteriorDamage", "refused"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const batch = segment.batches[lastChunkInterior(segment, rng)]!;
      const field = new Uint8Array(4);
      writeU32(field, 0, 0xffffffff);
      await writeAt(segment.logPath, batch.position + BATCH_LENGTH_AT, field);
      return `set batch_length of the batch at ${at(batch.position)} in ${fileName(segment.logPath)} to 0xFFFFFFFF`;
    },
  },
  {
    name: "forward-gap",
    description:
      "the server's boot path skipped offsets: a verified batch in the tail segment starts 1000 above the expected offset (absorbed, clean)",
    expected: { verdict: "clean", refusal: null, action: "serve", outcome: "clean", scanExit: 0 },
    async inject(partition, rng) {
      const segment = tail(partition);
      const from = lastChunkInterior(segment, rng);
      for (let i = from; i < segment.batches.length; i++) {
        await rebaseBatch(segment, i, segment.batches[i]!.baseOffset + 1000n);
      }
      segment.endOffset += 1000n;
      const batch = segment.batches[from]!;
      return `re-minted the batches from byte ${at(batch.position)} of ${fileName(segment.logPath)} 1000 offsets higher (still verifying)`;
    },
  },
  {
    name: "backward-gap",
    description: "a verified batch in the tail segment re-uses offsets already served (base offset below the expected one)",
    expected: refused("OffsetDiscontinuity", "refused"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const index = lastChunkInterior(segment, rng);
      const previous = segment.batches[index - 1]!;
      await rebaseBatch(segment, index, previous.baseOffset);
      const batch = segment.batches[index]!;
      return `re-sealed the batch at byte ${at(batch.position)} of ${fileName(segment.logPath)} with base offset ${previous.baseOffset} (already served)`;
    },
  },
  {
    name: "lost-index",
    description: "a middle segment's .index is gone: the index-less arm walks the log and rebuilds it",
    expected: repairable("clean"),
    checkProfile: needSegments(3),
    async inject(partition) {
      const segment = middle(partition);
      await unlink(segment.indexPath);
      return `deleted ${fileName(segment.indexPath)}`;
    },
  },
  {
    name: "torn-index",
    description: "the tail segment's .index ends in a partial entry (a torn index write): trim it",
    expected: repairable("clean"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const partial = rng.int(1, INDEX_ENTRY_BYTES - 1);
      const entry = encodeIndexEntry({ offset: segment.endOffset + 1n, timestamp: 0n, position: BigInt(segment.size) });
      await appendFile(segment.indexPath, entry.subarray(0, partial));
      return `appended ${partial} bytes of a partial entry to ${fileName(segment.indexPath)}`;
    },
  },
  {
    name: "non-monotone-index",
    description: "two entries of a middle segment's .index are swapped: offsets and positions no longer ascend",
    expected: refused("IndexEntriesNotMonotone", "refused"),
    checkProfile: needSegments(3),
    async inject(partition) {
      const segment = middle(partition);
      const entries = [...segment.indexEntries];
      let what: string;
      if (entries.length >= 3) {
        [entries[1], entries[2]] = [entries[2]!, entries[1]!];
        what = "swapped entries 1 and 2";
      } else if (entries.length === 2) {
        [entries[0], entries[1]] = [entries[1]!, entries[0]!];
        what = "swapped entries 0 and 1";
      } else {
        entries.push(entries[0]!);
        what = "duplicated entry 0";
      }
      await writeFile(segment.indexPath, encodeIndex(entries));
      return `${what} of ${fileName(segment.indexPath)}`;
    },
  },
  {
    name: "index-before-start",
    description: "a middle segment's first index entry names an offset below the segment's start offset",
    expected: refused("IndexEntryBeforeSegmentStart", "refused"),
    checkProfile: needSegments(3),
    async inject(partition) {
      const segment = middle(partition);
      const field = new Uint8Array(8);
      writeU64(field, 0, segment.startOffset - 1n);
      await writeAt(segment.indexPath, 0, field);
      return `set the first entry of ${fileName(segment.indexPath)} to offset ${segment.startOffset - 1n}`;
    },
  },
  {
    name: "size-divergence",
    description: "the tail segment's .log was cut inside the batch its last index entry points at: the index claims data the log lacks",
    expected: refused("SizeDivergence", "refused"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const first = segment.batches[segment.chunkStarts[segment.chunkStarts.length - 1]!]!;
      const cut = first.position + rng.int(1, first.length - 1);
      await truncate(segment.logPath, cut);
      return `cut ${fileName(segment.logPath)} at byte ${at(cut)}, inside the batch its last index entry points at (${at(first.position)})`;
    },
  },
  {
    name: "hole",
    description: "a middle segment (its .log and .index) is missing: offsets jump between its neighbours",
    expected: refused("Hole", null),
    checkProfile: needSegments(3),
    async inject(partition) {
      const segment = middle(partition);
      await unlink(segment.logPath);
      await unlink(segment.indexPath);
      return `deleted ${fileName(segment.logPath)} and ${fileName(segment.indexPath)} (offsets ${segment.startOffset}..${segment.endOffset})`;
    },
  },
  {
    name: "overlap",
    description: "the tail segment is named one offset too low, so it overlaps the segment before it",
    expected: refused("Overlap", null),
    checkProfile: needSegments(2),
    async inject(partition) {
      const segment = tail(partition);
      const stem = segmentStem(segment.startOffset - 1n);
      const dir = partition.path;
      await rename(segment.logPath, join(dir, stem + LOG_SUFFIX));
      await rename(segment.indexPath, join(dir, stem + INDEX_SUFFIX));
      const from = fileName(segment.logPath);
      segment.logPath = join(dir, stem + LOG_SUFFIX);
      segment.indexPath = join(dir, stem + INDEX_SUFFIX);
      return `renamed ${from} (and its .index) to ${stem}${LOG_SUFFIX}`;
    },
  },
  {
    name: "empty-non-tail",
    description: "a middle segment's .log and .index are both empty (0 bytes) while later segments hold data",
    expected: refused("EmptyNonTailSegment", null),
    checkProfile: needSegments(3),
    async inject(partition) {
      const segment = middle(partition);
      await truncate(segment.logPath, 0);
      await truncate(segment.indexPath, 0);
      return `truncated ${fileName(segment.logPath)} and ${fileName(segment.indexPath)} to 0 bytes`;
    },
  },
  {
    name: "rolled-empty-tail",
    description: "the server just rolled a new tail segment: a 0-byte .log and .index starting right after the last offset (clean)",
    expected: { verdict: "clean", refusal: null, action: "serve", outcome: "clean", scanExit: 0 },
    async inject(partition) {
      const segment = tail(partition);
      const stem = segmentStem(segment.endOffset + 1n);
      await writeFile(join(partition.path, stem + LOG_SUFFIX), new Uint8Array(0), { flag: "wx" });
      await writeFile(join(partition.path, stem + INDEX_SUFFIX), new Uint8Array(0), { flag: "wx" });
      return `created empty ${stem}${LOG_SUFFIX} and ${stem}${INDEX_SUFFIX}`;
    },
  },
  {
    name: "scratch-files",
    description: "an interrupted transfer left a .staging file and an orphan .index (plus superblock.a, which is not ours)",
    expected: repairable(null),
    async inject(partition, rng) {
      const segment = tail(partition);
      const staging = segment.indexPath + STAGING_SUFFIX;
      await writeFile(staging, rng.bytes(rng.int(24, 240)));
      const orphanStem = segmentStem(segment.endOffset + 1n + BigInt(rng.int(1000, 9000)));
      await writeFile(
        join(partition.path, orphanStem + INDEX_SUFFIX),
        encodeIndex([{ offset: segment.endOffset + 1n, timestamp: 0n, position: 0n }]),
      );
      // A well-formed partition superblock (docs/node.md N3): the segment scan leaves it alone, and the node scan accepts it.
      await writeFile(join(partition.path, "superblock.a"), samplePartitionSuperblock(BigInt(rng.int(1, 1000))));
      return `wrote ${fileName(staging)}, orphan ${orphanStem}${INDEX_SUFFIX} and superblock.a`;
    },
  },
  {
    name: "crafted-residue",
    description:
      "after the tail segment's last batch: 48 crafted 64 MiB headers that decode, fit and extend the chain but never verify, then a sparse hole (~64 MiB logical, KiB on disk): the default probe budget runs out",
    expected: refused("UnverifiedResidue", "refused"),
    async inject(partition, rng) {
      const segment = tail(partition);
      const headers = new Uint8Array(CRAFTED_HEADERS * BATCH_HEADER_BYTES);
      let timestamp = segment.batches[segment.batches.length - 1]!.baseTimestamp;
      for (let k = 0; k < CRAFTED_HEADERS; k++) {
        const h = k * BATCH_HEADER_BYTES;
        timestamp += BigInt(rng.int(100, 5000));
        writeU64(headers, h, BigInt(partition.partitionId));
        writeU64(headers, h + 8, segment.endOffset + 1n + BigInt(k) * 7n);
        writeU64(headers, h + 16, timestamp);
        writeU64(headers, h + 24, timestamp);
        writeU64(headers, h + BATCH_LENGTH_AT, BigInt(MAX_BATCH_BYTES));
        // A nonzero checksum: read as the next candidate's first frame header, its
        // reserved field is nonzero, so each candidate fails fast.
        writeU64(headers, h + BATCH_CHECKSUM_AT, rng.u64() | 1n);
        writeU32(headers, h + BATCH_MESSAGE_COUNT_AT, rng.int(1, 64));
      }
      await appendFile(segment.logPath, headers);
      const size = segment.size + headers.length + MAX_BATCH_BYTES;
      await truncate(segment.logPath, size);
      return `appended ${CRAFTED_HEADERS} crafted headers at byte ${at(segment.size)} of ${fileName(segment.logPath)} and a sparse hole to ${at(size)} bytes`;
    },
  },
  {
    name: "buried-bitflip",
    description:
      "one flipped payload bit in the tail segment's FIRST chunk, before the last index entry: tail mode trusts it (clean), --deep refuses it",
    expected: {
      verdict: "clean",
      refusal: null,
      action: "serve",
      outcome: "clean",
      scanExit: 0,
      deep: { verdict: "refused", refusal: "InteriorDamage", scanExit: 4 },
    },
    checkProfile(profile) {
      if (profile.flushBytes >= profile.segmentBytes)
        throw new RangeError("buried-bitflip needs several chunks per segment (flushBytes < segmentBytes)");
    },
    async inject(partition, rng) {
      const segment = tail(partition);
      const chunkEnd = (segment.chunkStarts[1] ?? segment.batches.length) - 1;
      const batch = segment.batches[rng.int(0, Math.max(0, chunkEnd - 1))]!;
      const position = batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES + rng.int(0, 150);
      const [byte] = await readAt(segment.logPath, position, 1);
      await writeAt(segment.logPath, position, Uint8Array.of(byte! ^ 0x10));
      return `flipped a bit of byte ${at(position)} in ${fileName(segment.logPath)} (batch at ${at(batch.position)}, before the last index entry)`;
    },
  },
];

/** Scenarios that `demo` injects, one partition each. */
export const DEMO_SCENARIOS: readonly string[] = ["torn-tail", "zero-tail", "lost-index", "scratch-files", "payload-bitflip"];

export function getScenario(name: string): Scenario {
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  if (scenario === undefined) {
    throw new UnknownScenarioError(name);
  }
  return scenario;
}

export function listScenarios(): { name: string; description: string }[] {
  return SCENARIOS.map(({ name, description }) => ({ name, description }));
}

export class UnknownScenarioError extends RangeError {
  override readonly name = "UnknownScenarioError";
  constructor(readonly scenario: string) {
    super(`unknown scenario "${scenario}"; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  }
}
