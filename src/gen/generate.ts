/**
 * The sample generator: writes a realistic Iggy data directory
 * (`streams/<s>/topics/<t>/partitions/<p>/`) of several segments per
 * partition, with contiguous offsets across segments, increasing timestamps,
 * realistic message sizes and user headers, and one sparse-index entry per
 * flushed chunk pointing at that chunk's first batch (docs/format.md §1). Every byte is a
 * pure function of the seed. Named fault scenarios (./scenarios.ts) are then
 * injected, each into exactly one partition.
 */
import { mkdir, open, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { assert } from "../assert.js";
import { formatCount } from "../domain/numbers.js";
import { encodeBatch, encodeIndex, segmentStem, type MessageInput } from "../format/encode.js";
import { INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import { makeMessage } from "./messages.js";
import { Prng } from "./prng.js";
import { getScenario } from "./scenarios.js";
import type { GeneratedDataDir, InjectedFault, PartitionLayout, SegmentLayout, SizeProfile } from "./types.js";

export type {
  BatchLayout,
  GeneratedDataDir,
  InjectedFault,
  PartitionLayout,
  ScenarioExpectation,
  SegmentLayout,
  SizeProfile,
} from "./types.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * `small` (default) keeps tests fast: 4 partitions × 3 segments of 512 KiB
 * (≈ 6 MiB), flushing every 128 KiB so each segment has several index entries.
 * `medium` and `large` use the server's ~1 MiB flush cadence.
 */
export const SIZE_PROFILES = {
  tiny: {
    streams: 1,
    topicsPerStream: 1,
    partitionsPerTopic: 2,
    segmentsPerPartition: 3,
    segmentBytes: 96 * KiB,
    flushBytes: 24 * KiB,
    maxBatchMessages: 12,
  },
  small: {
    streams: 1,
    topicsPerStream: 2,
    partitionsPerTopic: 2,
    segmentsPerPartition: 3,
    segmentBytes: 512 * KiB,
    flushBytes: 128 * KiB,
    maxBatchMessages: 24,
  },
  medium: {
    streams: 1,
    topicsPerStream: 2,
    partitionsPerTopic: 2,
    segmentsPerPartition: 4,
    segmentBytes: 4 * MiB,
    flushBytes: 1 * MiB,
    maxBatchMessages: 64,
  },
  large: {
    streams: 2,
    topicsPerStream: 2,
    partitionsPerTopic: 2,
    segmentsPerPartition: 4,
    segmentBytes: 32 * MiB,
    flushBytes: 1 * MiB,
    maxBatchMessages: 128,
  },
} as const satisfies Record<string, SizeProfile>;

export type SizeProfileName = keyof typeof SIZE_PROFILES;

export interface GenerateOptions extends Partial<SizeProfile> {
  /** One fault scenario, injected into the first partition. */
  scenario?: string;
  /** Several scenarios, the i-th injected into the i-th partition (path order). */
  scenarios?: readonly string[];
  /** PRNG seed; default 1. */
  seed?: number;
  /** Base profile for the sizes not given explicitly; default "small". */
  size?: SizeProfileName;
  /** µs timestamp of the first batch; default 2024-06-01T00:00:00Z. */
  startTimestampMicros?: bigint;
  /** Write into a directory that already holds files (default: refuse). */
  force?: boolean;
}

export const DEFAULT_START_TIMESTAMP_MICROS = 1_717_200_000_000_000n; // 2024-06-01T00:00:00Z

/** Batches into a 1 MiB buffer before each write, so a large sample costs few syscalls. */
class BufferedFile {
  private readonly buffer = Buffer.allocUnsafe(1 * MiB);
  private filled = 0;
  private position = 0;
  private constructor(private readonly handle: import("node:fs/promises").FileHandle) {}

  static async create(path: string): Promise<BufferedFile> {
    return new BufferedFile(await open(path, "wx"));
  }

  async write(bytes: Uint8Array): Promise<void> {
    if (this.filled + bytes.length > this.buffer.length) await this.flush();
    if (bytes.length > this.buffer.length) {
      await this.handle.write(bytes, 0, bytes.length, this.position);
      this.position += bytes.length;
      return;
    }
    this.buffer.set(bytes, this.filled);
    this.filled += bytes.length;
  }

  async flush(): Promise<void> {
    if (this.filled === 0) return;
    await this.handle.write(this.buffer, 0, this.filled, this.position);
    this.position += this.filled;
    this.filled = 0;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle.close();
  }
}

/**
 * A segment closes only once its last chunk holds this many batches, so every
 * last chunk has an interior batch for the fault scenarios to damage
 * (scenarios.ts `lastChunkInterior`).
 */
export const LAST_CHUNK_MIN_BATCHES = 3;

/**
 * The smallest flush size (`--flush-bytes`) the generator accepts: above the
 * largest batch of one message it writes (a payload of at most 7,168 bytes,
 * messages.ts, with its user headers, frame header and the 256-byte batch
 * header: under 7.5 KiB). Below it one message can fill a chunk, so nearly
 * every batch is a chunk of its own, no chunk reaches LAST_CHUNK_MIN_BATCHES
 * by flushing, and the index models no server's flush cadence (which is 1 MiB).
 */
export const MIN_FLUSH_BYTES = 8 * KiB;

/**
 * Past its size a segment keeps flushing chunks at `flushBytes` (the server's
 * cadence) while it waits for a last chunk of LAST_CHUNK_MIN_BATCHES batches,
 * at most this many times; then its chunk stays open until it holds them.
 * That bounds the loop whatever the batch sizes: a chunk flushed past the size
 * holds fewer than LAST_CHUNK_MIN_BATCHES batches, so at most
 * MAX_BATCHES_PAST_SEGMENT_BYTES batches follow the size. (The profiles and
 * the sizes the tests and benches use flush at most 20 chunks past a
 * segment's size, so the bound changes none of their bytes.)
 */
export const MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES = 32;

/** The most batches a segment holds past `segmentBytes` (see MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES). */
export const MAX_BATCHES_PAST_SEGMENT_BYTES = MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES * (LAST_CHUNK_MIN_BATCHES - 1) + LAST_CHUNK_MIN_BATCHES;

function batchMessageCount(rng: Prng, max: number): number {
  // Mostly small batches, sometimes a full one (a busy producer).
  return rng.chance(0.15) ? max : rng.int(1, Math.max(1, Math.floor(max / 2)));
}

async function writePartition(layout: PartitionLayout, profile: SizeProfile, rng: Prng, startTimestamp: bigint): Promise<void> {
  await mkdir(layout.path, { recursive: true });
  let next: NextBatch = { offset: 0n, timestamp: startTimestamp + BigInt(rng.int(0, 5_000_000)) };
  for (let s = 0; s < profile.segmentsPerPartition; s++) {
    const stem = segmentStem(next.offset);
    const segment: SegmentLayout = {
      startOffset: next.offset,
      endOffset: next.offset,
      stem,
      logPath: join(layout.path, stem + LOG_SUFFIX),
      indexPath: join(layout.path, stem + INDEX_SUFFIX),
      size: 0,
      messages: 0,
      batches: [],
      chunkStarts: [],
      indexEntries: [],
    };
    next = await writeSegment(segment, BigInt(layout.partitionId), profile, rng, next);
    await writeFile(segment.indexPath, encodeIndex(segment.indexEntries), { flag: "wx" });
    layout.segments.push(segment);
  }
}

/** Where the next batch starts: its base offset and timestamp. */
interface NextBatch {
  offset: bigint;
  timestamp: bigint;
}

/** Writes batches to `segment`'s .log until it is full and its last chunk holds enough batches; returns where the next one starts. */
async function writeSegment(
  segment: SegmentLayout,
  partitionId: bigint,
  profile: SizeProfile,
  rng: Prng,
  start: NextBatch,
): Promise<NextBatch> {
  let { offset: nextOffset, timestamp } = start;
  const log = await BufferedFile.create(segment.logPath);
  let chunkBytes = 0;
  let chunkBatches = 0;
  let chunk = -1;
  // The loop ends (see MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES): every batch adds bytes, so the size is reached
  // within segmentBytes batches, and past it at most MAX_BATCHES_PAST_SEGMENT_BYTES batches follow.
  let batchesPastSize = 0;
  let flushesPastSize = 0;
  for (;;) {
    if (chunkBatches === 0) {
      chunk++;
      segment.chunkStarts.push(segment.batches.length);
    }
    const { batch, count, baseTimestamp, delta } = randomBatch(rng, profile, partitionId, nextOffset, timestamp);
    if (chunkBatches === 0) {
      segment.indexEntries.push({ offset: nextOffset, timestamp: baseTimestamp, position: BigInt(segment.size) });
    }
    segment.batches.push({
      position: segment.size,
      length: batch.length,
      baseOffset: nextOffset,
      messageCount: count,
      baseTimestamp,
      chunk,
    });
    assert(batch.length > 0, `a batch adds bytes to ${segment.logPath}`);
    await log.write(batch);
    segment.size += batch.length;
    segment.messages += count;
    segment.endOffset = nextOffset + BigInt(count) - 1n;
    nextOffset += BigInt(count);
    timestamp += BigInt(delta + rng.int(200, 20_000));
    chunkBytes += batch.length;
    chunkBatches++;
    const full = segment.size >= profile.segmentBytes;
    if (full) {
      batchesPastSize++;
      assert(
        batchesPastSize <= MAX_BATCHES_PAST_SEGMENT_BYTES,
        `${segment.logPath} closes within ${MAX_BATCHES_PAST_SEGMENT_BYTES} batches past ${profile.segmentBytes} bytes`,
      );
    }
    if (full && chunkBatches >= LAST_CHUNK_MIN_BATCHES) break;
    if (chunkBytes >= profile.flushBytes && !(full && flushesPastSize === MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES)) {
      if (full) flushesPastSize++;
      chunkBytes = 0;
      chunkBatches = 0;
    }
  }
  await log.close();
  return { offset: nextOffset, timestamp };
}

/** One batch of random messages at `baseOffset` (the PRNG drawn in a fixed order: the same seed writes the same bytes). */
function randomBatch(
  rng: Prng,
  profile: SizeProfile,
  partitionId: bigint,
  baseOffset: bigint,
  baseTimestamp: bigint,
): { batch: Uint8Array; count: number; baseTimestamp: bigint; delta: number } {
  const count = batchMessageCount(rng, profile.maxBatchMessages);
  const originTimestamp = baseTimestamp - BigInt(rng.int(0, 1500));
  const messages: MessageInput[] = [];
  let delta = 0;
  for (let i = 0; i < count; i++) {
    delta += rng.int(0, 250);
    messages.push(makeMessage(rng, baseOffset + BigInt(i), i, originTimestamp + BigInt(delta), delta));
  }
  const batch = encodeBatch({ partitionId, baseOffset, baseTimestamp, originTimestamp, messages });
  return { batch, count, baseTimestamp, delta };
}

function resolveProfile(options: GenerateOptions): SizeProfile {
  const base: SizeProfile = { ...SIZE_PROFILES[options.size ?? "small"] };
  const keys: (keyof SizeProfile)[] = [
    "streams",
    "topicsPerStream",
    "partitionsPerTopic",
    "segmentsPerPartition",
    "segmentBytes",
    "flushBytes",
    "maxBatchMessages",
  ];
  for (const key of keys) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${key} must be a positive integer, got ${value}`);
    base[key] = value;
  }
  if (base.maxBatchMessages > 10_000) throw new RangeError("maxBatchMessages must be at most 10000");
  if (base.flushBytes < MIN_FLUSH_BYTES) {
    throw new RangeError(
      `flushBytes (--flush-bytes) ${formatCount(base.flushBytes)} is below the generator's limit of ${formatCount(MIN_FLUSH_BYTES)} bytes: ` +
        "one message's batch takes up to 7.5 KiB, so every batch would be a chunk of its own and a segment's last chunk " +
        `could not gather the ${LAST_CHUNK_MIN_BATCHES} batches it closes with; give ${formatCount(MIN_FLUSH_BYTES)} bytes (8KiB) or more ` +
        "(the server flushes every 1 MiB)",
    );
  }
  return base;
}

/** Writes a sample data dir under `dir` and injects the requested fault scenarios. */
export async function generateDataDir(dir: string, options: GenerateOptions = {}): Promise<GeneratedDataDir> {
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative integer, got ${seed}`);
  const profile = resolveProfile(options);
  const names = [...(options.scenarios ?? []), ...(options.scenario === undefined ? [] : [options.scenario])];
  const scenarios = names.map((name) => getScenario(name));
  const partitionCount = profile.streams * profile.topicsPerStream * profile.partitionsPerTopic;
  if (scenarios.length > partitionCount) {
    throw new RangeError(`${scenarios.length} scenarios need at least as many partitions; the sample has ${partitionCount}`);
  }
  for (const scenario of scenarios) scenario.checkProfile?.(profile);

  await mkdir(dir, { recursive: true });
  if (!options.force && (await readdir(dir)).length > 0) {
    throw new GenerateTargetNotEmpty(dir);
  }

  const startTimestamp = options.startTimestampMicros ?? DEFAULT_START_TIMESTAMP_MICROS;
  const partitions: PartitionLayout[] = [];
  let ordinal = 0;
  for (let s = 1; s <= profile.streams; s++) {
    for (let t = 1; t <= profile.topicsPerStream; t++) {
      for (let p = 1; p <= profile.partitionsPerTopic; p++) {
        const relativePath = `streams/${s}/topics/${t}/partitions/${p}`;
        const layout: PartitionLayout = {
          path: join(dir, relativePath),
          relativePath,
          streamId: s,
          topicId: t,
          partitionId: p,
          segments: [],
        };
        await writePartition(layout, profile, new Prng(seed, ordinal++), startTimestamp);
        partitions.push(layout);
      }
    }
  }
  const logBytes = partitions.reduce((sum, part) => sum + part.segments.reduce((n, seg) => n + seg.size, 0), 0);
  const messages = partitions.reduce((sum, part) => sum + part.segments.reduce((n, seg) => n + seg.messages, 0), 0);

  const faults: InjectedFault[] = [];
  for (const [i, scenario] of scenarios.entries()) {
    const target = partitions[i]!;
    const detail = await scenario.inject(target, new Prng(seed, 1_000_003 + i));
    faults.push({
      scenario: scenario.name,
      partition: target.path,
      description: scenario.description,
      expected: scenario.expected,
      detail,
    });
  }
  return { dir, seed, profile, partitions, faults, logBytes, messages };
}

export class GenerateTargetNotEmpty extends Error {
  override readonly name = "GenerateTargetNotEmpty";
  constructor(readonly dir: string) {
    super(`refusing to write a sample into ${dir}: the directory is not empty (it could hold real data)`);
  }
}
