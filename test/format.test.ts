/**
 * docs/format.md §1: the encoder and the reference decoders agree on every field, at the
 * extremes of every type (u64 above 2^53, u128 ids, u32 deltas), and the
 * segment-name and index-file rules hold.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  BATCH_HEADER_BYTES,
  BATCH_RESERVED_START,
  FRAME_HEADER_BYTES,
  INDEX_ENTRY_BYTES,
  MAX_BATCH_BYTES,
} from "../src/format/constants.js";
import { readU32, readU64, readU64AsSafeNumber, readU64Clamped, writeU32, writeU64 } from "../src/format/bytes.js";
import { encodeBatch, encodeIndex, encodeIndexEntry, frameBytes, segmentStem } from "../src/format/encode.js";
import {
  VerifyStatus,
  headerDecodeStatus,
  readBatchHeader,
  readFrameHeader,
  readIndexEntries,
  readIndexEntry,
  type IndexEntry,
} from "../src/format/records.js";
import { xxh3_64 } from "../src/hash/xxh3.js";
import { U128_MAX, U64_MAX, batchSpecArb, encodeSpec, toBatchInput, type BatchSpec } from "./helpers/engine-fixtures.js";

const u64 = fc.bigInt({ min: 0n, max: U64_MAX });

describe("LE byte helpers", () => {
  it("u32 and u64 round trip, including values above 2^53", () => {
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), u64, fc.nat({ max: 7 }), (v32, v64, at) => {
        const bytes = new Uint8Array(24);
        writeU32(bytes, at, v32);
        expect(readU32(bytes, at)).toBe(v32);
        writeU64(bytes, at + 8, v64);
        expect(readU64(bytes, at + 8)).toBe(v64);
      }),
    );
  });

  it("is little-endian", () => {
    const bytes = new Uint8Array(8);
    writeU64(bytes, 0, 0x0102030405060708n);
    expect([...bytes]).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    writeU32(bytes, 0, 0xdeadbeef);
    expect([...bytes.subarray(0, 4)]).toEqual([0xef, 0xbe, 0xad, 0xde]);
    expect(readU32(bytes, 0)).toBe(0xdeadbeef);
  });

  it("readU64AsSafeNumber throws above 2^53 - 1; readU64Clamped reports Infinity", () => {
    const bytes = new Uint8Array(8);
    writeU64(bytes, 0, (1n << 53n) - 1n);
    expect(readU64AsSafeNumber(bytes, 0)).toBe(Number.MAX_SAFE_INTEGER);
    expect(readU64Clamped(bytes, 0)).toBe(Number.MAX_SAFE_INTEGER);
    writeU64(bytes, 0, 1n << 53n);
    expect(() => readU64AsSafeNumber(bytes, 0)).toThrow(RangeError);
    expect(readU64Clamped(bytes, 0)).toBe(Number.POSITIVE_INFINITY);
    writeU64(bytes, 0, U64_MAX);
    expect(readU64Clamped(bytes, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});

/** Checks every header and frame field of `batch` against the spec that built it. */
function expectDecodesTo(batch: Uint8Array, spec: BatchSpec, at = 0): void {
  const input = toBatchInput(spec);
  expect(headerDecodeStatus(batch, at)).toBe(VerifyStatus.Ok);
  const header = readBatchHeader(batch, at);
  const blob = input.messages.reduce((sum, m) => sum + frameBytes(m), 0);
  expect(header.partitionId).toBe(spec.partitionId);
  expect(header.baseOffset).toBe(spec.baseOffset);
  expect(header.baseTimestamp).toBe(spec.baseTimestamp);
  expect(header.originTimestamp).toBe(spec.originTimestamp ?? spec.baseTimestamp);
  expect(header.batchLength).toBe(BATCH_HEADER_BYTES + blob);
  expect(header.batchLength).toBe(batch.length - at);
  expect(header.messageCount).toBe(spec.messages.length);
  expect(batch.subarray(at + BATCH_RESERVED_START, at + BATCH_HEADER_BYTES).every((b) => b === 0)).toBe(true);

  // docs/format.md §1.4: the batch checksum over the header fields and the frame checksums.
  const checksummed: Uint8Array[] = [batch.subarray(at, at + 40), batch.subarray(at + 48, at + 52)];

  let pos = at + BATCH_HEADER_BYTES;
  input.messages.forEach((message, i) => {
    const m = spec.messages[i]!;
    const frame = readFrameHeader(batch, pos);
    expect(frame.id).toBe(m.id);
    expect(frame.offsetDelta).toBe(m.offsetDelta ?? i);
    expect(frame.timestampDelta).toBe(m.timestampDelta ?? 0);
    expect(frame.payloadLength).toBe(m.payloadLength);
    expect(frame.userHeadersLength).toBe(m.userHeadersLength);
    expect(frame.reserved).toBe(0n);
    expect(frame.frameBytes).toBe(FRAME_HEADER_BYTES + m.payloadLength + m.userHeadersLength);
    expect(frame.frameBytes).toBe(frameBytes(message));
    const payloadAt = pos + FRAME_HEADER_BYTES;
    expect(batch.subarray(payloadAt, payloadAt + m.payloadLength)).toEqual(message.payload);
    expect(batch.subarray(payloadAt + m.payloadLength, pos + frame.frameBytes)).toEqual(message.userHeaders ?? new Uint8Array(0));
    expect(frame.checksum).toBe(xxh3_64(batch.subarray(pos + 8, pos + frame.frameBytes)));
    checksummed.push(batch.subarray(pos, pos + 8));
    pos += frame.frameBytes;
  });
  expect(pos).toBe(batch.length);
  const joined = new Uint8Array(checksummed.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const part of checksummed) {
    joined.set(part, o);
    o += part.length;
  }
  expect(header.batchChecksum).toBe(xxh3_64(joined));
}

describe("encodeBatch → decoders round trip (docs/format.md §1.2–1.4)", () => {
  it("every field survives, for random batches", () => {
    fc.assert(
      fc.property(batchSpecArb({ maxMessages: 12, maxPayload: 600 }), (spec) => {
        expectDecodesTo(encodeSpec(spec), spec);
      }),
      { numRuns: 150 },
    );
  });

  it("extreme values: u64 max everywhere, u128 max id, u32 max deltas", () => {
    const spec: BatchSpec = {
      partitionId: U64_MAX,
      baseOffset: U64_MAX - 1n,
      baseTimestamp: (1n << 53n) + 1n,
      originTimestamp: (1n << 63n) + 12345n,
      messages: [
        { id: U128_MAX, offsetDelta: 0xffffffff, timestampDelta: 0xffffffff, payloadLength: 3, userHeadersLength: 5, seed: 1 },
        { id: (1n << 64n) + 1n, offsetDelta: undefined, timestampDelta: undefined, payloadLength: 0, userHeadersLength: 0, seed: 2 },
        { id: (1n << 127n) | 0xfedcba9876543210n, offsetDelta: 7, timestampDelta: 1, payloadLength: 100, userHeadersLength: 0, seed: 3 },
      ],
    };
    const batch = encodeSpec(spec);
    expectDecodesTo(batch, spec);
    // The id's two halves, little-endian: low u64 at 8, high u64 at 16.
    const third = BATCH_HEADER_BYTES + (48 + 8) + 48;
    expect(readU64(batch, third + 8)).toBe(0xfedcba9876543210n);
    expect(readU64(batch, third + 16)).toBe(1n << 63n);
    // Defaults: offset_delta = index in batch, timestamp_delta = 0.
    const second = BATCH_HEADER_BYTES + 48 + 8;
    expect(readFrameHeader(batch, second).offsetDelta).toBe(1);
    expect(readFrameHeader(batch, second).timestampDelta).toBe(0);
  });

  it("decodes at a nonzero position inside a larger buffer", () => {
    const spec: BatchSpec = {
      partitionId: 9n,
      baseOffset: 1n << 60n,
      baseTimestamp: 5n,
      originTimestamp: undefined,
      messages: [{ id: 1n, offsetDelta: undefined, timestampDelta: 3, payloadLength: 10, userHeadersLength: 2, seed: 4 }],
    };
    const batch = encodeSpec(spec);
    const buffer = new Uint8Array(batch.length + 1000).fill(0xee);
    buffer.set(batch, 333);
    expectDecodesTo(buffer.subarray(0, 333 + batch.length), spec, 333);
  });

  it("an empty batch is a bare 256-byte header", () => {
    const batch = encodeBatch({ baseOffset: 42n, baseTimestamp: 7n, messages: [] });
    expect(batch.length).toBe(BATCH_HEADER_BYTES);
    const header = readBatchHeader(batch, 0);
    expect(header).toMatchObject({
      partitionId: 0n,
      baseOffset: 42n,
      baseTimestamp: 7n,
      originTimestamp: 7n,
      batchLength: 256,
      messageCount: 0,
    });
    // Checksum over the header fields alone (no frames).
    const joined = new Uint8Array(44);
    joined.set(batch.subarray(0, 40), 0);
    joined.set(batch.subarray(48, 52), 40);
    expect(header.batchChecksum).toBe(xxh3_64(joined));
  });
});

describe("headerDecodeStatus (docs/format.md §1.2)", () => {
  const header = (length: bigint): Uint8Array => {
    const bytes = new Uint8Array(BATCH_HEADER_BYTES);
    writeU64(bytes, 32, length);
    return bytes;
  };
  it("length floor and cap bounds", () => {
    expect(headerDecodeStatus(header(255n), 0)).toBe(VerifyStatus.LengthBelowHeader);
    expect(headerDecodeStatus(header(0n), 0)).toBe(VerifyStatus.LengthBelowHeader);
    expect(headerDecodeStatus(header(256n), 0)).toBe(VerifyStatus.Ok);
    expect(headerDecodeStatus(header(BigInt(MAX_BATCH_BYTES)), 0)).toBe(VerifyStatus.Ok);
    expect(headerDecodeStatus(header(BigInt(MAX_BATCH_BYTES) + 1n), 0)).toBe(VerifyStatus.LengthOverCap);
    expect(headerDecodeStatus(header(1000n), 0, 999)).toBe(VerifyStatus.LengthOverCap);
    expect(headerDecodeStatus(header(999n), 0, 999)).toBe(VerifyStatus.Ok);
    for (const big of [0xffffffffn, 1n << 32n, 1n << 53n, (1n << 53n) + 256n, 1n << 63n, U64_MAX]) {
      expect(headerDecodeStatus(header(big), 0)).toBe(VerifyStatus.LengthOverCap);
    }
  });
  it("a length whose low 32 bits look valid but whose high bits are set is over the cap", () => {
    // Would pass if the high word were dropped.
    expect(headerDecodeStatus(header((1n << 32n) + 256n), 0)).toBe(VerifyStatus.LengthOverCap);
    expect(headerDecodeStatus(header((1n << 60n) + 1024n), 0)).toBe(VerifyStatus.LengthOverCap);
  });
});

describe("sparse index entries (docs/format.md §1.5)", () => {
  const entryArb: fc.Arbitrary<IndexEntry> = fc.record({ offset: u64, timestamp: u64, position: u64 });

  it("encodeIndexEntry / readIndexEntry round trip, field order offset|timestamp|position", () => {
    fc.assert(
      fc.property(entryArb, (entry) => {
        const bytes = encodeIndexEntry(entry);
        expect(bytes.length).toBe(INDEX_ENTRY_BYTES);
        expect(readIndexEntry(bytes, 0)).toEqual(entry);
        expect(readU64(bytes, 0)).toBe(entry.offset);
        expect(readU64(bytes, 8)).toBe(entry.timestamp);
        expect(readU64(bytes, 16)).toBe(entry.position);
      }),
    );
  });

  it("encodeIndex / readIndexEntries round trip; a trailing partial entry is reported, not decoded", () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 30 }), fc.nat({ max: INDEX_ENTRY_BYTES - 1 }), fc.nat(255), (entries, tail, fill) => {
        const whole = encodeIndex(entries);
        expect(whole.length).toBe(entries.length * INDEX_ENTRY_BYTES);
        expect(readIndexEntries(whole)).toEqual({ entries, trailingBytes: 0 });
        const torn = new Uint8Array(whole.length + tail).fill(fill);
        torn.set(whole, 0);
        expect(readIndexEntries(torn)).toEqual({ entries, trailingBytes: tail });
      }),
    );
  });

  it("an index shorter than one entry has no entries", () => {
    expect(readIndexEntries(new Uint8Array(0))).toEqual({ entries: [], trailingBytes: 0 });
    expect(readIndexEntries(new Uint8Array(23).fill(1))).toEqual({ entries: [], trailingBytes: 23 });
    const one = encodeIndexEntry({ offset: U64_MAX, timestamp: 1n << 53n, position: 1n });
    const torn = new Uint8Array(24 + 1);
    torn.set(one);
    expect(readIndexEntries(torn)).toEqual({
      entries: [{ offset: U64_MAX, timestamp: 1n << 53n, position: 1n }],
      trailingBytes: 1,
    });
  });
});

describe("segmentStem (docs/format.md §1.1)", () => {
  it("zero-pads to 20 digits", () => {
    expect(segmentStem(0n)).toBe("00000000000000000000");
    expect(segmentStem(1000n)).toBe("00000000000000001000");
    expect(segmentStem(1n << 53n)).toBe("00009007199254740992");
    expect(segmentStem((1n << 53n) + 1n)).toBe("00009007199254740993");
    expect(segmentStem(U64_MAX)).toBe("18446744073709551615");
  });
  it("is 20 digits and parses back for every u64", () => {
    fc.assert(
      fc.property(u64, (offset) => {
        const stem = segmentStem(offset);
        expect(stem).toMatch(/^\d{20}$/);
        expect(BigInt(stem)).toBe(offset);
      }),
    );
  });
});
