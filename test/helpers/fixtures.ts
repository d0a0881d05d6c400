/**
 * Builders for segment files in memory and on disk, for the recovery tests.
 * Every temp directory made here is removed after the importing test file's
 * tests (the afterAll below), so a run leaves none behind.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { encodeBatch, encodeIndex, segmentStem, type MessageInput } from "../../src/format/encode.js";
import type { IndexEntry } from "../../src/format/records.js";

export interface BuiltBatch {
  position: number;
  baseOffset: bigint;
  baseTimestamp: bigint;
  length: number;
  messageCount: number;
}

export interface BuiltChain {
  log: Uint8Array;
  batches: BuiltBatch[];
  /** Offset the next batch would start at. */
  nextOffset: bigint;
}

/** Small deterministic PRNG (mulberry32) so fixtures are reproducible. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform integers in [0, bound), for lengths and split points. */
export function randomIndexes(seed: number): (bound: number) => number {
  const next = prng(seed);
  return (bound) => Math.floor(next() * bound);
}

export function randomBytes(length: number, seed: number): Uint8Array {
  const next = prng(seed);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(next() * 256);
  return bytes;
}

export interface ChainSpec {
  startOffset?: bigint;
  /** Message count per batch (0 = an empty batch). */
  counts: readonly number[];
  payloadBytes?: number;
  seed?: number;
  /** Explicit base offsets per batch, to make gaps and regressions. */
  baseOffsets?: readonly (bigint | undefined)[];
  startTimestamp?: bigint;
}

export function buildChain(spec: ChainSpec): BuiltChain {
  const next = prng(spec.seed ?? 1);
  const parts: Uint8Array[] = [];
  const batches: BuiltBatch[] = [];
  let offset = spec.startOffset ?? 0n;
  let position = 0;
  let timestamp = spec.startTimestamp ?? 1_700_000_000_000_000n;
  spec.counts.forEach((count, i) => {
    const baseOffset = spec.baseOffsets?.[i] ?? offset;
    const messages: MessageInput[] = [];
    for (let m = 0; m < count; m++) {
      const payload = randomBytes((spec.payloadBytes ?? 200) + Math.floor(next() * 64), Math.floor(next() * 1e9));
      const userHeaders = m % 3 === 0 ? randomBytes(17, m + 1) : undefined;
      messages.push({ id: BigInt(Math.floor(next() * 1e15)), payload, ...(userHeaders ? { userHeaders } : {}), timestampDelta: m * 10 });
    }
    const batch = encodeBatch({ partitionId: 1n, baseOffset, baseTimestamp: timestamp, messages });
    parts.push(batch);
    batches.push({ position, baseOffset, baseTimestamp: timestamp, length: batch.length, messageCount: count });
    position += batch.length;
    if (count > 0) offset = baseOffset + BigInt(count);
    timestamp += 1000n;
  });
  return { log: concat(parts), batches, nextOffset: offset };
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Index entries pointing at the given batches (by index in the chain). */
export function indexAt(chain: BuiltChain, batchIndexes: readonly number[]): IndexEntry[] {
  return batchIndexes.map((i) => {
    const batch = chain.batches[i]!;
    return { offset: batch.baseOffset, timestamp: batch.baseTimestamp, position: BigInt(batch.position) };
  });
}

/** Temp directories this test file made, removed once its tests are done. */
const tempDirs: string[] = [];

/** Removes every temp directory made so far (run after each test file's tests). */
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

afterAll(removeTempDirs);

/** A new temp directory, removed after the test file's tests (like every one made here). */
export function trackedTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function tempDataDir(): string {
  return trackedTempDir("segscan-test-");
}

/** A fresh partition directory `streams/1/topics/1/partitions/<p>` under a temp data dir. */
export function tempPartition(partition = 1, dataDir = tempDataDir()): string {
  const dir = join(dataDir, "streams", "1", "topics", "1", "partitions", String(partition));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function writeSegment(
  dir: string,
  startOffset: bigint,
  log: Uint8Array,
  index?: readonly IndexEntry[] | Uint8Array,
): { logPath: string; indexPath: string } {
  const stem = segmentStem(startOffset);
  const logPath = join(dir, `${stem}.log`);
  const indexPath = join(dir, `${stem}.index`);
  writeFileSync(logPath, log);
  if (index !== undefined) writeFileSync(indexPath, index instanceof Uint8Array ? index : encodeIndex(index));
  return { logPath, indexPath };
}
