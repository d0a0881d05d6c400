/**
 * docs/format.md §2.1: every way a batch fails verification gives its exact VerifyStatus,
 * through the engine window (`headerStatus` + `verifyInWindow`) and through the
 * streaming API (`verifyStart/Feed/Finish`) with any chunking; any single-bit
 * corruption is caught, identically by both paths.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  BATCH_CHECKSUM_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  FRAME_HEADER_BYTES,
  FRAME_PAYLOAD_LENGTH_AT,
  FRAME_RESERVED_AT,
  FRAME_USER_HEADERS_LENGTH_AT,
  MAX_BATCH_BYTES,
  MIN_WINDOW_BYTES,
} from "../src/format/constants.js";
import { readU32, readU64, writeU32, writeU64 } from "../src/format/bytes.js";
import { encodeBatch, type MessageInput } from "../src/format/encode.js";
import { VerifyStatus, headerDecodeStatus } from "../src/format/records.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { xxh3_64 } from "../src/hash/xxh3.js";
import { BatchVerifier } from "../src/engine/ts/verifier.js";
import { AssertionError, assert } from "../src/assert.js";
import {
  U64_MAX,
  batchSpecArb,
  chunkingArb,
  encodeSpec,
  frameStarts,
  seededBytes,
  splitsFor,
  verifyStreamed,
  verifyWhole,
  type BatchSpec,
} from "./helpers/engine-fixtures.js";
import { allEngines } from "./helpers/engines.js";

const engine = createTsEngine();
/** The wasm engine, held to the TS engine's statuses flip by flip. */
const wasmEngine = (await allEngines()).find((candidate) => candidate.kind === "wasm")!;
const S = VerifyStatus;

function flip(bytes: Uint8Array, position: number, mask: number): void {
  bytes[position] = bytes[position]! ^ mask;
}

/** A small valid batch: 3 frames of varied shape (one with an empty body). */
function sampleMessages(): MessageInput[] {
  return [
    { id: 11n, payload: seededBytes(100, 1), userHeaders: seededBytes(20, 2) },
    { id: 12n, payload: new Uint8Array(0) },
    { id: 13n, payload: seededBytes(333, 3), timestampDelta: 9 },
  ];
}
function sampleBatch(): Uint8Array {
  return encodeBatch({
    partitionId: 3n,
    baseOffset: 1000n,
    baseTimestamp: 1_700_000_000_000_000n,
    originTimestamp: 1_700_000_000_000_001n,
    messages: sampleMessages(),
  });
}

/** Frame starts of a batch whose frames tile (walking the stored lengths). */
function walkFrames(batch: Uint8Array, maxFrames = Infinity): number[] {
  const starts: number[] = [];
  let at = BATCH_HEADER_BYTES;
  while (at + FRAME_HEADER_BYTES <= batch.length && starts.length < maxFrames) {
    starts.push(at);
    at += FRAME_HEADER_BYTES + readU32(batch, at + FRAME_PAYLOAD_LENGTH_AT) + readU32(batch, at + FRAME_USER_HEADERS_LENGTH_AT);
  }
  return starts;
}

/**
 * Recomputes the frame checksums of the frames at `starts` (each as long as its
 * stored lengths say, cut at the batch end), then the batch checksum over the
 * header as it now stands: isolates the check under test from the checksums.
 */
function resign(batch: Uint8Array, starts: readonly number[] = walkFrames(batch)): Uint8Array {
  for (const start of starts) {
    const end = Math.min(
      batch.length,
      start + FRAME_HEADER_BYTES + readU32(batch, start + FRAME_PAYLOAD_LENGTH_AT) + readU32(batch, start + FRAME_USER_HEADERS_LENGTH_AT),
    );
    writeU64(batch, start, xxh3_64(batch.subarray(start + 8, end)));
  }
  const joined = new Uint8Array(44 + 8 * starts.length);
  joined.set(batch.subarray(0, 40), 0);
  joined.set(batch.subarray(48, 52), 40);
  starts.forEach((start, i) => {
    joined.set(batch.subarray(start, start + 8), 44 + 8 * i);
  });
  writeU64(batch, BATCH_CHECKSUM_AT, xxh3_64(joined));
  return batch;
}

/** Both paths, several chunkings; all must agree on `expected`. */
function expectStatus(batch: Uint8Array, expected: VerifyStatus, maxBatchBytes?: number): void {
  expect(verifyWhole(engine, batch, 0, maxBatchBytes)).toBe(expected);
  const blob = Math.max(0, batch.length - BATCH_HEADER_BYTES);
  const chunkings: number[][] = [
    [],
    Array.from({ length: blob }, (_, i) => i + 1),
    walkFrames(batch).flatMap((s) => [s - BATCH_HEADER_BYTES + 1, s - BATCH_HEADER_BYTES + 47]),
    [7, 100, 101, 350],
  ];
  for (const splits of chunkings) {
    expect(verifyStreamed(engine, batch, splits, MIN_WINDOW_BYTES, maxBatchBytes)).toBe(expected);
  }
}

describe("valid batches verify", () => {
  it("the sample batch verifies through both paths", () => {
    expectStatus(sampleBatch(), S.Ok);
  });

  it("an empty batch (message_count 0, no blob) verifies", () => {
    const batch = encodeBatch({ baseOffset: 5n, baseTimestamp: 6n, messages: [] });
    expect(batch.length).toBe(BATCH_HEADER_BYTES);
    expectStatus(batch, S.Ok);
  });

  it("a batch whose frames all have empty bodies verifies, whatever the chunking", () => {
    const batch = encodeBatch({
      baseOffset: 0n,
      baseTimestamp: 0n,
      messages: [{ payload: new Uint8Array(0) }, { payload: new Uint8Array(0) }],
    });
    expectStatus(batch, S.Ok);
    // The last frame (empty body) split inside its header: regression for a
    // streaming verifier that left the frame open until more bytes came.
    for (let split = 1; split < FRAME_HEADER_BYTES; split++) {
      expect(verifyStreamed(engine, batch, [FRAME_HEADER_BYTES + split])).toBe(S.Ok);
    }
    const single = encodeBatch({ baseOffset: 0n, baseTimestamp: 0n, messages: [{ payload: new Uint8Array(0) }] });
    for (let split = 1; split < FRAME_HEADER_BYTES; split++) {
      expect(verifyStreamed(engine, single, [split])).toBe(S.Ok);
    }
  });

  it("a verifier can be reused: start() resets all state", () => {
    const verifier = new BatchVerifier();
    const bad = sampleBatch();
    flip(bad, BATCH_HEADER_BYTES + 60, 1);
    verifier.start(bad, 0);
    expect(verifier.feed(bad, BATCH_HEADER_BYTES, 30)).toBe(S.Ok);
    expect(verifier.feed(bad, BATCH_HEADER_BYTES + 30, bad.length - BATCH_HEADER_BYTES - 30)).toBe(S.FrameChecksum);
    const good = sampleBatch();
    verifier.start(good, 0);
    expect(verifier.feed(good, BATCH_HEADER_BYTES, good.length - BATCH_HEADER_BYTES)).toBe(S.Ok);
    expect(verifier.finish()).toBe(S.Ok);
  });
});

describe("the header gate (docs/format.md §1.2, §2.2)", () => {
  function headerWithLength(length: bigint): Uint8Array {
    const batch = sampleBatch();
    writeU64(batch, BATCH_LENGTH_AT, length);
    return batch;
  }

  it("LengthBelowHeader: batch_length 0, 1, 255", () => {
    for (const length of [0n, 1n, 48n, 255n]) expectStatus(headerWithLength(length), S.LengthBelowHeader);
  });

  it("LengthOverCap: 0xFFFFFFFF, 2^32 + 256, 2^53, 2^63, u64 max, MAX_BATCH_BYTES + 1", () => {
    for (const length of [0xffffffffn, (1n << 32n) + 256n, 1n << 53n, 1n << 63n, U64_MAX, BigInt(MAX_BATCH_BYTES) + 1n]) {
      expectStatus(headerWithLength(length), S.LengthOverCap);
    }
    // Exactly at the cap is not over it (it is then merely beyond this file).
    expectStatus(headerWithLength(BigInt(MAX_BATCH_BYTES)), S.BatchBeyondFile);
  });

  it("review blocker 5: LengthOverCap is decided from the 256 header bytes alone, in a 4 KiB window: a bit-flipped batch_length drives no read or allocation", () => {
    const window = engine.openWindow(MIN_WINDOW_BYTES);
    expect(window.capacityBytes).toBe(4096);
    const view = window.view();
    // The header sits in the window's last 256 bytes: there is nothing after it to read.
    const at = MIN_WINDOW_BYTES - BATCH_HEADER_BYTES;
    for (const length of [0xffffffffn, 1n << 63n, U64_MAX, (1n << 63n) + 256n]) {
      view.fill(0);
      writeU64(view, at + BATCH_LENGTH_AT, length);
      writeU32(view, at + BATCH_MESSAGE_COUNT_AT, 1);
      expect(window.headerStatus(at)).toBe(S.LengthOverCap);
      // The cap is checked before the reserved bytes.
      view[at + 255] = 1;
      expect(window.headerStatus(at)).toBe(S.LengthOverCap);
      // The reference gate on a buffer of exactly 256 bytes gives the same answer:
      // a read past them would see `undefined` and change the status.
      const exact = view.slice(at, at + BATCH_HEADER_BYTES);
      expect(exact.length).toBe(256);
      expect(headerDecodeStatus(exact, 0)).toBe(S.LengthOverCap);
    }
    // Nothing was sized from the claim: the window is still the same 4 KiB.
    expect(window.view()).toBe(view);
    expect(window.view().length).toBe(MIN_WINDOW_BYTES);
    window.close();
  });

  it("the cap is the window's maxBatchBytes when one is passed", () => {
    const batch = sampleBatch();
    expectStatus(batch, S.Ok, batch.length);
    expectStatus(batch, S.LengthOverCap, batch.length - 1);
    const window = engine.openWindow(MIN_WINDOW_BYTES, { maxBatchBytes: 4096 });
    writeU64(window.view(), BATCH_LENGTH_AT, 4096n);
    expect(window.headerStatus(0)).toBe(S.Ok);
    writeU64(window.view(), BATCH_LENGTH_AT, 4097n);
    expect(window.headerStatus(0)).toBe(S.LengthOverCap);
    window.close();
  });

  it("length checks come before the reserved bytes", () => {
    const below = headerWithLength(10n);
    below[100] = 7;
    expectStatus(below, S.LengthBelowHeader);
    const over = headerWithLength(1n << 63n);
    over[100] = 7;
    expectStatus(over, S.LengthOverCap);
  });

  it("ReservedNonZero: every reserved position 52..255, any nonzero value", () => {
    for (let position = 52; position < 256; position++) {
      for (const value of [1, 0x80, 0xff]) {
        const batch = sampleBatch();
        batch[position] = value;
        // The batch checksum does not cover the reserved bytes: the gate alone catches this.
        expect(verifyWhole(engine, batch)).toBe(S.ReservedNonZero);
        const window = engine.openWindow(MIN_WINDOW_BYTES);
        window.view().set(batch.subarray(0, 256), 100);
        expect(window.headerStatus(100)).toBe(S.ReservedNonZero);
        window.close();
      }
    }
    expectStatus(Object.assign(sampleBatch(), { [52]: 1 }), S.ReservedNonZero);
    expectStatus(Object.assign(sampleBatch(), { [255]: 1 }), S.ReservedNonZero);
    // Bytes 48..51 (message_count) are not reserved.
    const batch = sampleBatch();
    expect(headerDecodeStatus(batch, 0)).toBe(S.Ok);
  });
});

describe("frame tiling and checksums (docs/format.md §2.1 steps 2–3)", () => {
  it("FrameReservedNonZero: each reserved byte of the first and of the last frame, checksums re-signed", () => {
    const starts = walkFrames(sampleBatch());
    for (const frame of [starts[0]!, starts[2]!]) {
      for (let i = 0; i < 8; i++) {
        const batch = sampleBatch();
        batch[frame + FRAME_RESERVED_AT + i] = 1 << (i % 8);
        resign(batch, starts);
        expectStatus(batch, S.FrameReservedNonZero);
      }
    }
  });

  it("FrameHeaderOverrun: fewer than 48 bytes left where a frame must start", () => {
    for (const extra of [1, 20, 47]) {
      // message_count 4, three valid frames, then `extra` bytes.
      const base = sampleBatch();
      const batch = new Uint8Array(base.length + extra);
      batch.set(base);
      batch.fill(0, base.length);
      writeU64(batch, BATCH_LENGTH_AT, BigInt(batch.length));
      writeU32(batch, BATCH_MESSAGE_COUNT_AT, 4);
      resign(batch, walkFrames(base));
      expectStatus(batch, S.FrameHeaderOverrun);
    }
    // A one-frame batch whose blob is only 47 bytes.
    const batch = new Uint8Array(BATCH_HEADER_BYTES + 47);
    writeU64(batch, BATCH_LENGTH_AT, BigInt(batch.length));
    writeU32(batch, BATCH_MESSAGE_COUNT_AT, 1);
    expectStatus(batch, S.FrameHeaderOverrun);
  });

  it("FrameOverrun: a frame whose lengths end past the blob", () => {
    const starts = walkFrames(sampleBatch());
    const last = starts[2]!;
    const cases: [number, number][] = [
      [last + FRAME_PAYLOAD_LENGTH_AT, 334], // one byte past the end
      [last + FRAME_USER_HEADERS_LENGTH_AT, 1],
      [last + FRAME_PAYLOAD_LENGTH_AT, 0xffffffff],
      [starts[0]! + FRAME_PAYLOAD_LENGTH_AT, 100_000],
      [starts[0]! + FRAME_USER_HEADERS_LENGTH_AT, 0xffffffff],
    ];
    for (const [at, value] of cases) {
      const batch = sampleBatch();
      writeU32(batch, at, value);
      expectStatus(batch, S.FrameOverrun);
    }
    // Both lengths at u32 max: their sum must not wrap.
    const batch = sampleBatch();
    writeU32(batch, last + FRAME_PAYLOAD_LENGTH_AT, 0xffffffff);
    writeU32(batch, last + FRAME_USER_HEADERS_LENGTH_AT, 0xffffffff);
    expectStatus(batch, S.FrameOverrun);
  });

  it("FrameCountMismatch: more frames than message_count (checksums re-signed)", () => {
    for (const count of [0, 1, 2]) {
      const batch = sampleBatch();
      writeU32(batch, BATCH_MESSAGE_COUNT_AT, count);
      resign(batch, walkFrames(batch).slice(0, count));
      expectStatus(batch, S.FrameCountMismatch);
    }
  });

  it("FrameCountMismatch: fewer frames than message_count (checksums re-signed)", () => {
    for (const count of [4, 1000, 0xffffffff]) {
      const batch = sampleBatch();
      writeU32(batch, BATCH_MESSAGE_COUNT_AT, count);
      resign(batch);
      expectStatus(batch, S.FrameCountMismatch);
    }
    const empty = encodeBatch({ baseOffset: 0n, baseTimestamp: 0n, messages: [] });
    writeU32(empty, BATCH_MESSAGE_COUNT_AT, 1);
    resign(empty, []);
    expectStatus(empty, S.FrameCountMismatch);
  });

  it("FrameChecksum: a flipped payload, user-header, id, delta or stored-checksum byte", () => {
    const starts = walkFrames(sampleBatch());
    const positions = [
      starts[0]! + FRAME_HEADER_BYTES, // payload
      starts[0]! + FRAME_HEADER_BYTES + 100 + 5, // user headers
      starts[1]! + 8, // id
      starts[1]! + 24, // offset_delta
      starts[1]! + 28, // timestamp_delta
      starts[2]!, // the stored checksum itself
      starts[2]! + FRAME_HEADER_BYTES + 332, // last byte of the batch
    ];
    for (const position of positions) {
      const batch = sampleBatch();
      flip(batch, position, 0x10);
      expectStatus(batch, S.FrameChecksum);
    }
  });

  it("BatchChecksum: a changed header field the batch checksum covers", () => {
    const fields: [number, bigint][] = [
      [0, 4n], // partition_id
      [8, 999n], // base_offset
      [16, 1_700_000_000_000_002n], // base_timestamp
      [24, 0n], // origin_timestamp
      [BATCH_CHECKSUM_AT, 1n], // the stored batch checksum
    ];
    for (const [at, value] of fields) {
      const batch = sampleBatch();
      writeU64(batch, at, value);
      expectStatus(batch, S.BatchChecksum);
    }
    // Empty batch too: the checksum is over the header fields alone.
    const empty = encodeBatch({ baseOffset: 5n, baseTimestamp: 6n, messages: [] });
    writeU64(empty, 16, 7n);
    expectStatus(empty, S.BatchChecksum);
  });

  it("message_count is covered by the checksum but fails tiling first", () => {
    const batch = sampleBatch();
    writeU32(batch, BATCH_MESSAGE_COUNT_AT, 2);
    expectStatus(batch, S.FrameCountMismatch);
    writeU32(batch, BATCH_MESSAGE_COUNT_AT, 4);
    expectStatus(batch, S.FrameCountMismatch);
  });

  it("BatchChecksum: two intact frames swapped (the checksum binds their order)", () => {
    const original = sampleBatch();
    const [a, b, c] = walkFrames(original) as [number, number, number];
    const swapped = new Uint8Array(original.length);
    swapped.set(original.subarray(0, a));
    swapped.set(original.subarray(b, c), a);
    swapped.set(original.subarray(a, b), a + (c - b));
    swapped.set(original.subarray(c), c);
    expectStatus(swapped, S.BatchChecksum);
  });

  it("the first failing frame decides: a bad checksum in frame 1 hides an overrun in frame 3", () => {
    const starts = walkFrames(sampleBatch());
    const batch = sampleBatch();
    flip(batch, starts[0]! + FRAME_HEADER_BYTES, 1);
    writeU32(batch, starts[2]! + FRAME_PAYLOAD_LENGTH_AT, 0xffffffff);
    expectStatus(batch, S.FrameChecksum);
  });
});

/** The status a one-bit flip at `position` must produce, as the set of allowed statuses. */
function allowedForFlip(spec: BatchSpec, position: number): VerifyStatus[] {
  if (position < 32 || (position >= 40 && position < 48)) return [S.BatchChecksum];
  if (position < 40) {
    return [S.LengthBelowHeader, S.LengthOverCap, S.BatchBeyondFile, S.FrameOverrun, S.FrameHeaderOverrun, S.FrameCountMismatch];
  }
  if (position < 52) return [S.FrameCountMismatch];
  if (position < 256) return [S.ReservedNonZero];
  const starts = frameStarts(spec);
  let frame = starts.length - 1;
  while (starts[frame]! > position) frame--;
  const inFrame = position - starts[frame]!;
  if (inFrame >= FRAME_USER_HEADERS_LENGTH_AT && inFrame < FRAME_RESERVED_AT) return [S.FrameOverrun, S.FrameChecksum];
  if (inFrame >= FRAME_RESERVED_AT && inFrame < FRAME_HEADER_BYTES) return [S.FrameReservedNonZero];
  return [S.FrameChecksum];
}

describe("properties over random batches", () => {
  it("encode → verify is Ok through verifyInWindow and through streaming with any chunking", () => {
    fc.assert(
      fc.property(batchSpecArb(), chunkingArb, (spec, chunking) => {
        const batch = encodeSpec(spec);
        expect(verifyWhole(engine, batch)).toBe(S.Ok);
        const splits = splitsFor(chunking, batch.length - BATCH_HEADER_BYTES, frameStarts(spec));
        expect(verifyStreamed(engine, batch, splits)).toBe(S.Ok);
      }),
      { numRuns: 120 },
    );
  });

  it("any single-bit flip is caught, with the same status by both paths and both engines, and the status fits the flipped field", () => {
    fc.assert(
      fc.property(
        batchSpecArb({ maxPayload: 1500 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.nat({ max: 7 }),
        chunkingArb,
        (spec, where, bit, chunking) => {
          const batch = encodeSpec(spec);
          const position = Math.floor(where * batch.length);
          flip(batch, position, 1 << bit);
          const whole = verifyWhole(engine, batch);
          expect(whole).not.toBe(S.Ok);
          expect(allowedForFlip(spec, position)).toContain(whole);
          const splits = splitsFor(chunking, batch.length - BATCH_HEADER_BYTES, frameStarts(spec));
          expect(verifyStreamed(engine, batch, splits)).toBe(whole);
          // The wasm engine gives the same status, whole and streamed.
          expect(verifyWhole(wasmEngine, batch)).toBe(whole);
          expect(verifyStreamed(wasmEngine, batch, splits)).toBe(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("every single-bit flip of a fixed batch, on both engines: caught, fitting the field, the same status whole and streamed", async () => {
    // Exhaustive and deterministic: every bit of the batch (header, frame headers, bodies) on each engine,
    // and the engines compared flip by flip. ~7,000 flips; a few seconds on both.
    const messages = sampleMessages();
    const spec: BatchSpec = {
      partitionId: 3n,
      baseOffset: 1000n,
      baseTimestamp: 1_700_000_000_000_000n,
      originTimestamp: 1_700_000_000_000_001n,
      messages: messages.map((m, i) => ({
        id: m.id!,
        offsetDelta: undefined,
        timestampDelta: m.timestampDelta,
        payloadLength: m.payload.length,
        userHeadersLength: m.userHeaders?.length ?? 0,
        seed: i,
      })),
    };
    const clean = sampleBatch();
    const engines = await allEngines();
    expect(engines.map((candidate) => candidate.kind)).toEqual(["ts", "wasm"]);
    let flips = 0;
    for (let position = 0; position < clean.length; position++) {
      for (let bit = 0; bit < 8; bit++) {
        const batch = clean.slice();
        flip(batch, position, 1 << bit);
        const statuses = engines.map((candidate) => {
          const whole = verifyWhole(candidate, batch);
          const where = `${candidate.kind}: bit ${bit} of byte ${position}`;
          expect(allowedForFlip(spec, position), where).toContain(whole);
          expect(verifyStreamed(candidate, batch, [1, 47, 48, 49, 200]), where).toBe(whole);
          return whole;
        });
        expect(statuses[1], `wasm vs ts: bit ${bit} of byte ${position}`).toBe(statuses[0]);
        flips++;
      }
    }
    expect(flips).toBe(clean.length * 8);
  });
});

describe("streaming a batch larger than the window", () => {
  const bigMessages: MessageInput[] = [
    { id: 1n, payload: seededBytes(20_000, 10), userHeaders: seededBytes(100, 11) },
    { id: 2n, payload: seededBytes(150 * 1024, 12) },
    { id: 3n, payload: new Uint8Array(0) },
    { id: 4n, payload: seededBytes(200 * 1024 - 256 - 20_100 - 150 * 1024 - 4 * 48 - 500, 13), userHeaders: seededBytes(500, 14) },
  ];
  const big = encodeBatch({ baseOffset: 1n << 62n, baseTimestamp: 1n, messages: bigMessages });

  it("a 200 KiB batch with a 150 KiB frame verifies through a 4 KiB window", () => {
    expect(big.length).toBe(200 * 1024);
    const blob = big.length - BATCH_HEADER_BYTES;
    expect(verifyStreamed(engine, big, [])).toBe(S.Ok); // window-sized pieces
    expect(
      verifyStreamed(
        engine,
        big,
        Array.from({ length: Math.floor(blob / 1000) }, (_, i) => (i + 1) * 1000),
      ),
    ).toBe(S.Ok);
    expect(
      verifyStreamed(
        engine,
        big,
        Array.from({ length: Math.floor(blob / 37) }, (_, i) => (i + 1) * 37),
      ),
    ).toBe(S.Ok);
    expect(verifyWhole(engine, big)).toBe(S.Ok);
  });

  it("damage deep inside the 150 KiB frame is found by streaming, as by the whole path", () => {
    const starts = walkFrames(big);
    for (const [position, expected] of [
      [starts[1]! + FRAME_HEADER_BYTES + 100_000, S.FrameChecksum],
      [starts[3]! + 1000, S.FrameChecksum],
      [starts[2]! + FRAME_RESERVED_AT + 3, S.FrameReservedNonZero],
      [20, S.BatchChecksum],
    ] as const) {
      const batch = big.slice();
      flip(batch, position, 4);
      expect(verifyWhole(engine, batch)).toBe(expected);
      expect(verifyStreamed(engine, batch, [])).toBe(expected);
      expect(
        verifyStreamed(
          engine,
          batch,
          Array.from({ length: 300 }, (_, i) => i * 677 + 13),
        ),
      ).toBe(expected);
    }
  });

  it("streaming does not need the header after verifyStart", () => {
    // verifyStreamed overwrites the header bytes in the window right after verifyStart.
    expect(readU64(big, 8)).toBe(1n << 62n);
    expect(verifyStreamed(engine, big, [5000, 100_000])).toBe(S.Ok);
  });
});

describe("assert (src/assert.ts)", () => {
  it("passes a true condition and throws an AssertionError naming what was expected otherwise", () => {
    expect(() => assert(true, "never shown")).not.toThrow();
    expect(() => assert(false, "a decoded batch_length gives 0..2^53 − 257 blob bytes")).toThrow(
      new AssertionError("assertion failed: a decoded batch_length gives 0..2^53 − 257 blob bytes"),
    );
  });
});
