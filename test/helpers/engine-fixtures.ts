/**
 * Shared helpers for the engine-level tests (format, verifier, candidates):
 * batch generation for fast-check, and the two ways of verifying a batch
 * (whole in a window, and streamed through a small window in chunks).
 */
import fc from "fast-check";
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT, FRAME_HEADER_BYTES, MIN_WINDOW_BYTES } from "../../src/format/constants.js";
import { readU64Clamped } from "../../src/format/bytes.js";
import { encodeBatch, type BatchInput, type MessageInput } from "../../src/format/encode.js";
import { VerifyStatus } from "../../src/format/records.js";
import type { Engine } from "../../src/engine/types.js";

export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

import { prng, randomBytes as seededBytes } from "./fixtures.js";

export { prng, seededBytes };

/** A message description cheap for fast-check to generate and shrink (bytes come from a seed). */
export interface MessageSpec {
  id: bigint;
  offsetDelta: number | undefined;
  timestampDelta: number | undefined;
  payloadLength: number;
  userHeadersLength: number;
  seed: number;
}

export interface BatchSpec {
  partitionId: bigint;
  baseOffset: bigint;
  baseTimestamp: bigint;
  originTimestamp: bigint | undefined;
  messages: MessageSpec[];
}

const u64Arb = fc.oneof(fc.bigInt({ min: 0n, max: U64_MAX }), fc.constantFrom(0n, 1n, (1n << 53n) + 1n, 1n << 63n, U64_MAX));

export function messageSpecArb(maxPayload = 3000): fc.Arbitrary<MessageSpec> {
  return fc.record({
    id: fc.oneof(fc.bigInt({ min: 0n, max: U128_MAX }), fc.constantFrom(0n, U128_MAX, 1n << 64n)),
    offsetDelta: fc.option(fc.nat({ max: 0xffffffff }), { nil: undefined }),
    timestampDelta: fc.option(fc.nat({ max: 0xffffffff }), { nil: undefined }),
    // Empty payloads and bodies are edge cases worth hitting often.
    payloadLength: fc.oneof(fc.constant(0), fc.nat({ max: 64 }), fc.nat({ max: maxPayload })),
    userHeadersLength: fc.oneof(fc.constant(0), fc.nat({ max: 300 })),
    seed: fc.nat(),
  });
}

export function batchSpecArb(options: { maxMessages?: number; maxPayload?: number } = {}): fc.Arbitrary<BatchSpec> {
  return fc.record({
    partitionId: u64Arb,
    baseOffset: u64Arb,
    baseTimestamp: u64Arb,
    originTimestamp: fc.option(u64Arb, { nil: undefined }),
    messages: fc.array(messageSpecArb(options.maxPayload ?? 3000), { maxLength: options.maxMessages ?? 20 }),
  });
}

export function toMessageInput(spec: MessageSpec): MessageInput {
  const bytes = seededBytes(spec.payloadLength + spec.userHeadersLength, spec.seed);
  return {
    id: spec.id,
    ...(spec.offsetDelta === undefined ? {} : { offsetDelta: spec.offsetDelta }),
    ...(spec.timestampDelta === undefined ? {} : { timestampDelta: spec.timestampDelta }),
    payload: bytes.subarray(0, spec.payloadLength),
    ...(spec.userHeadersLength === 0 && spec.seed % 2 === 0 ? {} : { userHeaders: bytes.subarray(spec.payloadLength) }),
  };
}

export function toBatchInput(spec: BatchSpec): BatchInput {
  return {
    partitionId: spec.partitionId,
    baseOffset: spec.baseOffset,
    baseTimestamp: spec.baseTimestamp,
    ...(spec.originTimestamp === undefined ? {} : { originTimestamp: spec.originTimestamp }),
    messages: spec.messages.map(toMessageInput),
  };
}

export function encodeSpec(spec: BatchSpec): Uint8Array {
  return encodeBatch(toBatchInput(spec));
}

/** Start of every frame of an encoded (valid) batch, as positions in the batch. */
export function frameStarts(spec: BatchSpec): number[] {
  const starts: number[] = [];
  let at = BATCH_HEADER_BYTES;
  for (const m of spec.messages) {
    starts.push(at);
    at += FRAME_HEADER_BYTES + m.payloadLength + m.userHeadersLength;
  }
  return starts;
}

/**
 * What the caller of the engine does before verifying (docs/format.md §2.1 step 1): the
 * header gate, then "the batch fits the file". `file` is the file image and the
 * batch starts at `position`.
 */
function preVerify(headerStatus: VerifyStatus, file: Uint8Array, position: number): { status: VerifyStatus; batchLength: number } {
  if (file.length - position < BATCH_HEADER_BYTES) return { status: VerifyStatus.HeaderBeyondFile, batchLength: 0 };
  if (headerStatus !== VerifyStatus.Ok) return { status: headerStatus, batchLength: 0 };
  const batchLength = readU64Clamped(file, position + BATCH_LENGTH_AT);
  if (position + batchLength > file.length) return { status: VerifyStatus.BatchBeyondFile, batchLength };
  return { status: VerifyStatus.Ok, batchLength };
}

/** Verifies the batch at `position` of `file` with the whole file in one window (`verifyInWindow`). */
export function verifyWhole(engine: Engine, file: Uint8Array, position = 0, maxBatchBytes?: number): VerifyStatus {
  const window = engine.openWindow(Math.max(MIN_WINDOW_BYTES, file.length + 64), maxBatchBytes === undefined ? {} : { maxBatchBytes });
  try {
    const view = window.view();
    // Garbage after the file: the verifier must never look past the batch.
    view.fill(0xa5);
    view.set(file, 0);
    if (file.length - position < BATCH_HEADER_BYTES) return VerifyStatus.HeaderBeyondFile;
    const pre = preVerify(window.headerStatus(position), file, position);
    if (pre.status !== VerifyStatus.Ok) return pre.status;
    return window.verifyInWindow(position);
  } finally {
    window.close();
  }
}

/**
 * Verifies the batch at the start of `file` through the streaming API of a
 * small window: the header is placed in the window, `verifyStart`, then the blob
 * is copied into the window chunk by chunk (each chunk at a varying window
 * offset, surrounded by garbage) and fed with `verifyFeed`, then `verifyFinish`.
 * `splits` are blob-relative chunk boundaries (any order, duplicates allowed).
 */
export function verifyStreamed(
  engine: Engine,
  file: Uint8Array,
  splits: readonly number[],
  windowBytes = MIN_WINDOW_BYTES,
  maxBatchBytes?: number,
): VerifyStatus {
  const window = engine.openWindow(windowBytes, maxBatchBytes === undefined ? {} : { maxBatchBytes });
  try {
    const view = window.view();
    view.fill(0x5a);
    if (file.length < BATCH_HEADER_BYTES) return VerifyStatus.HeaderBeyondFile;
    // The header goes at the END of the window: only its 256 bytes may be read.
    const headerAt = windowBytes - BATCH_HEADER_BYTES;
    view.set(file.subarray(0, BATCH_HEADER_BYTES), headerAt);
    const pre = preVerify(window.headerStatus(headerAt), file, 0);
    if (pre.status !== VerifyStatus.Ok) return pre.status;
    window.verifyStart(headerAt);
    // The header is gone from the window once streaming starts: the verifier must have kept what it needs.
    view.fill(0x5a, headerAt);

    const blobLength = pre.batchLength - BATCH_HEADER_BYTES;
    const bounds = [...new Set(splits.filter((s) => s > 0 && s < blobLength))].sort((a, b) => a - b);
    bounds.push(blobLength);
    let from = 0;
    let slot = 0;
    const guard = 16;
    for (const to of bounds) {
      // A chunk larger than the window is fed in window-sized pieces.
      while (from < to) {
        const size = Math.min(to - from, windowBytes - 2 * guard);
        const room = windowBytes - 2 * guard - size;
        const at = guard + (room === 0 ? 0 : (slot * 977) % (room + 1));
        slot++;
        view.fill(0x5a, at - guard, at);
        view.set(file.subarray(BATCH_HEADER_BYTES + from, BATCH_HEADER_BYTES + from + size), at);
        view.fill(0x5a, at + size, at + size + guard);
        const status = window.verifyFeed(at, size);
        if (status !== VerifyStatus.Ok) return status;
        from += size;
      }
    }
    return window.verifyFinish();
  } finally {
    window.close();
  }
}

/** Chunkings for the streaming path, as blob-relative split points. */
export type Chunking = { kind: "one-byte" } | { kind: "random"; seed: number; count: number } | { kind: "frame-headers"; seed: number };

export const chunkingArb: fc.Arbitrary<Chunking> = fc.oneof(
  fc.constant<Chunking>({ kind: "one-byte" }),
  fc.record({ kind: fc.constant("random" as const), seed: fc.nat(), count: fc.nat({ max: 40 }) }),
  fc.record({ kind: fc.constant("frame-headers" as const), seed: fc.nat() }),
);

/**
 * Split points for `chunking` over a blob of `blobLength` bytes whose frames
 * start at `frameStarts` (batch-relative).
 */
export function splitsFor(chunking: Chunking, blobLength: number, starts: readonly number[]): number[] {
  switch (chunking.kind) {
    case "one-byte":
      return Array.from({ length: blobLength }, (_, i) => i + 1);
    case "random": {
      const next = prng(chunking.seed);
      return Array.from({ length: chunking.count }, () => Math.floor(next() * (blobLength + 1)));
    }
    case "frame-headers": {
      // Split inside every frame header (at 1..47 bytes into it), and sometimes
      // right at its start or right after it.
      const next = prng(chunking.seed);
      const splits: number[] = [];
      for (const start of starts) {
        const blobStart = start - BATCH_HEADER_BYTES;
        splits.push(blobStart + 1 + Math.floor(next() * (FRAME_HEADER_BYTES - 1)));
        if (next() < 0.3) splits.push(blobStart);
        if (next() < 0.3) splits.push(blobStart + FRAME_HEADER_BYTES);
        if (next() < 0.2) splits.push(blobStart + 8);
      }
      return splits;
    }
  }
}
