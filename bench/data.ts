/**
 * Benchmark data sets (docs/benchmarks.md §10), generated once and cached OUTSIDE the repo in
 * `$SEGSCAN_BENCH_CACHE` or `<tmpdir>/segscan-bench-cache`, under a directory
 * named by DATA_VERSION: bump it whenever the bytes written here change and
 * stale data is rebuilt (older version directories are removed).
 *
 * Every data set is one partition directory holding one segment
 * (`00000000000000000000.log` + `.index`). A `<name>.json` marker beside the
 * directory records what was written; a data set without its marker is
 * rebuilt (it is written to a temporary directory and renamed into place).
 */
import { existsSync } from "node:fs";
import { mkdir, open, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BATCH_BASE_OFFSET_AT, BATCH_CHECKSUM_AT } from "../src/format/constants.js";
import { encodeBatch, encodeIndex, segmentStem, type MessageInput } from "../src/format/encode.js";
import type { IndexEntry } from "../src/format/records.js";

export const DATA_VERSION = "segscan-bench-data-v2";

const KiB = 1024;
const MiB = 1024 * KiB;
/** The server's flush cadence: one index entry per ~1 MiB chunk. */
const FLUSH_BYTES = 1 * MiB;
const START_TIMESTAMP_MICROS = 1_717_200_000_000_000n;
/** Bytes buffered before a write to the segment file. */
const WRITE_CHUNK_BYTES = 8 * MiB;

/**
 * deep: a chain of realistic batches; zeros/random/crafted/crafted-64k: one small
 * batch and a residue (see writeProbeSet).
 */
export type DataKind = "deep" | "zeros" | "random" | "crafted" | "crafted-64k";

export interface DataSet {
  kind: DataKind;
  /** Partition directory to hand to scanPartition. */
  dir: string;
  logPath: string;
  /** Size of the .log in bytes (what the scan and the raw read go through). */
  logBytes: number;
  /** Messages in the walkable chain (deep: all of them; probe sets: the one leading batch). */
  messageCount: number;
  batches: number;
  indexEntries: number;
  /** Probe sets: where the residue starts (the end of the leading batch); deep: the log size. */
  residueStart: number;
  /** Crafted sets: size of each crafted batch. */
  craftedBatchBytes?: number;
}

export function cacheRoot(): string {
  return process.env["SEGSCAN_BENCH_CACHE"] ?? join(tmpdir(), "segscan-bench-cache");
}

function versionDir(): string {
  return join(cacheRoot(), DATA_VERSION);
}

/** Fast deterministic bytes (xorshift128), filled 32 bits at a time. */
export class ByteSource {
  private x: number;
  private y = 362436069;
  private z = 521288629;
  private w = 88675123;

  constructor(seed: number) {
    this.x = (seed ^ 0x9e3779b9) >>> 0 || 1;
    for (let i = 0; i < 16; i++) this.next();
  }

  next(): number {
    const t = this.x ^ (this.x << 11);
    this.x = this.y;
    this.y = this.z;
    this.z = this.w;
    this.w = (this.w ^ (this.w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return this.w;
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return this.next() % n;
  }

  fill(target: Uint8Array): Uint8Array {
    const words = target.length >>> 2;
    const aligned = target.byteOffset % 4 === 0;
    if (aligned) {
      const view = new Uint32Array(target.buffer, target.byteOffset, words);
      for (let i = 0; i < words; i++) view[i] = this.next();
    } else {
      for (let i = 0; i < words * 4; i += 4) {
        const v = this.next();
        target[i] = v & 0xff;
        target[i + 1] = (v >>> 8) & 0xff;
        target[i + 2] = (v >>> 16) & 0xff;
        target[i + 3] = v >>> 24;
      }
    }
    for (let i = words * 4; i < target.length; i++) target[i] = this.next() & 0xff;
    return target;
  }
}

/** Buffers appended bytes and writes them to a file in large chunks. */
class ChunkedWriter {
  private readonly buffer = new Uint8Array(WRITE_CHUNK_BYTES);
  private used = 0;
  written = 0;

  private constructor(private readonly handle: Awaited<ReturnType<typeof open>>) {}

  static async create(path: string): Promise<ChunkedWriter> {
    return new ChunkedWriter(await open(path, "w"));
  }

  async append(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      const take = Math.min(bytes.length - at, this.buffer.length - this.used);
      this.buffer.set(bytes.subarray(at, at + take), this.used);
      this.used += take;
      at += take;
      if (this.used === this.buffer.length) await this.flush();
    }
    this.written += bytes.length;
  }

  /** Appends `count` bytes produced by `fill` in place (no intermediate copy). */
  async appendFilled(count: number, fill: (target: Uint8Array) => void): Promise<void> {
    let left = count;
    while (left > 0) {
      const take = Math.min(left, this.buffer.length - this.used);
      fill(this.buffer.subarray(this.used, this.used + take));
      this.used += take;
      left -= take;
      if (this.used === this.buffer.length) await this.flush();
    }
    this.written += count;
  }

  private async flush(): Promise<void> {
    let at = 0;
    while (at < this.used) {
      const { bytesWritten } = await this.handle.write(this.buffer, at, this.used - at);
      at += bytesWritten;
    }
    this.used = 0;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle.close();
  }
}

/**
 * ~1 KiB messages (896–1151 B payloads, a quarter with 32 B of user headers), as a
 * realistic producer would send; `payloadBase` moves the payload range.
 */
function makeMessages(source: ByteSource, firstOffset: bigint, count: number, payloadBase = 896): MessageInput[] {
  const messages: MessageInput[] = [];
  for (let i = 0; i < count; i++) {
    const payload = source.fill(new Uint8Array(payloadBase + source.below(256)));
    const userHeaders = source.below(4) === 0 ? source.fill(new Uint8Array(32)) : undefined;
    messages.push({
      id: (firstOffset + BigInt(i)) * 0x9e3779b97f4a7c15n,
      timestampDelta: i * 3,
      payload,
      ...(userHeaders ? { userHeaders } : {}),
    });
  }
  return messages;
}

function writeU64At(bytes: Uint8Array, at: number, value: bigint): void {
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).setBigUint64(at, value, true);
}

interface SegmentWriterResult {
  logBytes: number;
  messageCount: number;
  batches: number;
  index: IndexEntry[];
}

/**
 * A chain of realistic batches (64–100 messages of ~1 KiB, so ~64–100 KiB each)
 * until at least `targetBytes` are written; an index entry for the first batch
 * of every ~1 MiB flushed chunk.
 */
async function writeChain(writer: ChunkedWriter, source: ByteSource, targetBytes: number): Promise<SegmentWriterResult> {
  const index: IndexEntry[] = [];
  let offset = 0n;
  let timestamp = START_TIMESTAMP_MICROS;
  let batches = 0;
  let chunkStart = -Infinity;
  while (writer.written < targetBytes) {
    const count = 64 + source.below(37);
    const batch = encodeBatch({
      partitionId: 1n,
      baseOffset: offset,
      baseTimestamp: timestamp,
      messages: makeMessages(source, offset, count),
    });
    const position = writer.written;
    if (position - chunkStart >= FLUSH_BYTES) {
      index.push({ offset, timestamp, position: BigInt(position) });
      chunkStart = position;
    }
    await writer.append(batch);
    offset += BigInt(count);
    timestamp += 1000n;
    batches++;
  }
  return { logBytes: writer.written, messageCount: Number(offset), batches, index };
}

/**
 * A probe data set: one small verified batch (4 messages) and an index entry
 * for it, then a residue of `residueBytes`:
 * - zeros: what a delayed-allocation crash leaves behind;
 * - random: noise, on which skip-ahead rules nearly every candidate out at once;
 * - crafted: batches back to back whose headers decode, fit the file and extend
 *   the chain (base_offset past the leading batch) and whose frames all check,
 *   but whose batch checksum is wrong: every one is handed to the verifier,
 *   which hashes all of it before rejecting it. The walk stops at the first;
 *   the probe's budget (1 unit per candidate + batch_length per rejected
 *   candidate) bounds the rest. Each is > 256 KiB (64 messages of ~4.3 KiB), so
 *   the header's one-byte-shifted twin at h-1 (which reads batch_length as
 *   L << 8, see crafted-64k) claims over 64 MiB; with no length cap on a
 *   candidate that fits the file (docs/format.md §2.2), every twin more than
 *   that far from the end is charged its claim, and the default budget runs
 *   out after ~34 of them: the probe's budget plateau.
 * - crafted-64k: the same with realistic ~66 KiB batches (64 messages of
 *   ~1 KiB). Here the twin candidate h-1 of every header passes the checks
 *   (reserved bytes zero, message_count (count << 8) > 0, base_offset << 8 above
 *   the chain, batch_length = L << 8 ≈ 17 MiB under the cap) and is charged
 *   ~17 MiB units when it fails, so the default budget runs out after ~130
 *   headers (~9 MiB of residue), whatever the residue's size.
 * Bytes after the last whole crafted batch are zeros.
 */
async function writeProbeSet(
  kind: Exclude<DataKind, "deep">,
  writer: ChunkedWriter,
  source: ByteSource,
  residueBytes: number,
): Promise<SegmentWriterResult & { craftedBatchBytes?: number }> {
  const lead = encodeBatch({
    partitionId: 1n,
    baseOffset: 0n,
    baseTimestamp: START_TIMESTAMP_MICROS,
    messages: makeMessages(source, 0n, 4),
  });
  await writer.append(lead);
  const index: IndexEntry[] = [{ offset: 0n, timestamp: START_TIMESTAMP_MICROS, position: 0n }];
  const result = { logBytes: 0, messageCount: 4, batches: 1, index };
  if (kind === "zeros") {
    await writer.appendFilled(residueBytes, (target) => target.fill(0));
  } else if (kind === "random") {
    await writer.appendFilled(residueBytes, (target) => source.fill(target));
  } else {
    const payloadBase = kind === "crafted" ? 4096 : 896;
    const template = encodeBatch({
      partitionId: 1n,
      baseOffset: 4n,
      baseTimestamp: START_TIMESTAMP_MICROS + 1000n,
      messages: makeMessages(source, 4n, 64, payloadBase),
    });
    // Corrupt only the batch checksum: the frames still tile and check.
    template[BATCH_CHECKSUM_AT] = template[BATCH_CHECKSUM_AT]! ^ 0x01;
    const whole = Math.floor(residueBytes / template.length);
    for (let i = 0; i < whole; i++) {
      writeU64At(template, BATCH_BASE_OFFSET_AT, 4n + 64n * BigInt(i));
      await writer.append(template);
    }
    await writer.appendFilled(residueBytes - whole * template.length, (target) => target.fill(0));
    return { ...result, logBytes: writer.written, craftedBatchBytes: template.length };
  }
  return { ...result, logBytes: writer.written };
}

function dataSetName(kind: DataKind, bytes: number): string {
  return `${kind}-${bytes % MiB === 0 ? `${bytes / MiB}MiB` : `${bytes}B`}`;
}

let prunedOldVersions = false;

async function pruneOldVersions(): Promise<void> {
  if (prunedOldVersions) return;
  prunedOldVersions = true;
  const root = cacheRoot();
  if (!existsSync(root)) return;
  for (const entry of await readdir(root)) {
    if (entry !== DATA_VERSION && entry.startsWith("segscan-bench-data-")) {
      await rm(join(root, entry), { recursive: true, force: true });
    }
  }
}

/**
 * The data set of `kind` whose payload (deep: the whole segment; probe sets:
 * the residue) is `bytes` long, built if missing. `progress` hears about builds.
 */
export async function ensureDataSet(kind: DataKind, bytes: number, progress: (line: string) => void): Promise<DataSet> {
  await pruneOldVersions();
  const name = dataSetName(kind, bytes);
  const root = versionDir();
  const dir = join(root, name);
  const marker = join(root, `${name}.json`);
  const stem = segmentStem(0n);
  if (existsSync(marker) && existsSync(dir)) {
    const cached = JSON.parse(await readFile(marker, "utf8")) as DataSet;
    return { ...cached, dir, logPath: join(dir, `${stem}.log`) };
  }
  await mkdir(root, { recursive: true });
  const startedAt = performance.now();
  progress(`bench: generating ${name} in ${root} (once; cached for later runs)…`);
  const temporary = join(root, `${name}.tmp-${process.pid}`);
  await rm(temporary, { recursive: true, force: true });
  await mkdir(temporary, { recursive: true });
  const writer = await ChunkedWriter.create(join(temporary, `${stem}.log`));
  const source = new ByteSource(0x5e65ca + bytes / MiB + kind.length * 7919);
  let written: SegmentWriterResult & { craftedBatchBytes?: number };
  try {
    written = kind === "deep" ? await writeChain(writer, source, bytes) : await writeProbeSet(kind, writer, source, bytes);
  } finally {
    await writer.close();
  }
  await writeFile(join(temporary, `${stem}.index`), encodeIndex(written.index));
  await rm(dir, { recursive: true, force: true });
  await rename(temporary, dir);
  const residueStart = kind === "deep" ? written.logBytes : written.logBytes - bytes;
  const set: DataSet = {
    kind,
    dir,
    logPath: join(dir, `${stem}.log`),
    logBytes: written.logBytes,
    messageCount: written.messageCount,
    batches: written.batches,
    indexEntries: written.index.length,
    residueStart,
    ...(written.craftedBatchBytes !== undefined ? { craftedBatchBytes: written.craftedBatchBytes } : {}),
  };
  await writeFile(marker, JSON.stringify(set, null, 2));
  progress(`bench: generated ${name} (${written.logBytes} bytes) in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
  return set;
}
