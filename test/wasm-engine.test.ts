/**
 * Differential tests: every window method of the wasm engine against the
 * TypeScript engine (and the candidate loop against its plain definition),
 * on random, zero, adversarial and boundary inputs. Identical status codes,
 * offsets and spentUnits are required.
 * Needs dist/segscan.wasm: `npm run build:wasm` (npm test builds first).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createWasmEngine } from "../src/engine/wasm/engine.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { scanCandidatesPlain } from "../src/engine/ts/candidates.js";
import { encodeBatch, type MessageInput } from "../src/format/encode.js";
import { writeU32, writeU64 } from "../src/format/bytes.js";
import { MAX_BATCH_BYTES, U64_MAX } from "../src/format/constants.js";
import { VerifyStatus } from "../src/format/records.js";
import type { CandidateScanRequest, CandidateScanResult, EngineWindow } from "../src/engine/types.js";
import { randomBytes, randomIndexes as rng } from "./helpers/fixtures.js";

const wasm = await createWasmEngine();
const ts = createTsEngine();

interface Pair {
  w: EngineWindow;
  t: EngineWindow;
  close(): void;
}

function openPair(capacity: number, maxBatchBytes?: number): Pair {
  const limits = maxBatchBytes === undefined ? undefined : { maxBatchBytes };
  const w = wasm.openWindow(capacity, limits);
  const t = ts.openWindow(capacity, limits);
  return {
    w,
    t,
    close: () => {
      w.close();
      t.close();
    },
  };
}

function load(pair: Pair, bytes: Uint8Array, at = 0): void {
  pair.w.view().set(bytes, at);
  pair.t.view().set(bytes, at);
}

/** A header that decodes, with the given fields; the rest of `target` is untouched. */
function writeHeader(
  target: Uint8Array,
  at: number,
  fields: { length: bigint | number; count?: number; base?: bigint; reservedByte?: number },
): void {
  target.fill(0, at, at + 256);
  writeU64(target, at + 8, fields.base ?? 100n);
  writeU64(target, at + 32, BigInt(fields.length));
  writeU32(target, at + 48, fields.count ?? 1);
  if (fields.reservedByte !== undefined) target[at + fields.reservedByte] = 1;
}

// ---------------------------------------------------------------------------

describe("wasm headerStatus", () => {
  it("matches the TS gate on random, zero and crafted headers", () => {
    const pair = openPair(8192);
    const next = rng(11);
    const crafted = new Uint8Array(8192);
    const lengths: bigint[] = [
      0n,
      1n,
      255n,
      256n,
      257n,
      4096n,
      BigInt(MAX_BATCH_BYTES),
      BigInt(MAX_BATCH_BYTES) + 1n,
      1n << 32n,
      (1n << 53n) - 1n,
      1n << 53n,
      1n << 63n,
      U64_MAX,
    ];
    for (let i = 0; i < 400; i++) {
      const at = next(8192 - 256);
      const reserved = next(3) === 0 ? 52 + next(204) : undefined;
      writeHeader(crafted, at, { length: lengths[next(lengths.length)]!, reservedByte: reserved });
    }
    for (const bytes of [randomBytes(8192, 5), new Uint8Array(8192), crafted]) {
      load(pair, bytes);
      for (let at = 0; at <= 8192 - 256; at++) {
        const a = pair.w.headerStatus(at);
        const b = pair.t.headerStatus(at);
        if (a !== b) expect({ at, wasm: a }).toEqual({ at, wasm: b });
      }
    }
    pair.close();
  });

  it("every reserved byte position is checked, and the length cap comes before it", () => {
    const pair = openPair(4096, 10_000);
    const header = new Uint8Array(256);
    for (let r = 52; r < 256; r++) {
      writeHeader(header, 0, { length: 300, reservedByte: r });
      load(pair, header, 17);
      expect(pair.w.headerStatus(17)).toBe(VerifyStatus.ReservedNonZero);
      writeHeader(header, 0, { length: 10_001, reservedByte: r });
      load(pair, header, 17);
      expect(pair.w.headerStatus(17)).toBe(VerifyStatus.LengthOverCap);
    }
    writeHeader(header, 0, { length: 10_000 });
    load(pair, header, 17);
    expect(pair.w.headerStatus(17)).toBe(VerifyStatus.Ok);
    writeHeader(header, 0, { length: 255, reservedByte: 60 });
    load(pair, header, 17);
    expect(pair.w.headerStatus(17)).toBe(VerifyStatus.LengthBelowHeader);
    pair.close();
  });
});

// ---------------------------------------------------------------------------

function scanBoth(pair: Pair, request: CandidateScanRequest): CandidateScanResult {
  const a = pair.w.scanCandidates(request);
  const b = pair.t.scanCandidates(request);
  const plain = scanCandidatesPlain(pair.t.view(), request);
  expect(a, `wasm vs plain ${JSON.stringify({ ...request, minBaseOffset: String(request.minBaseOffset) })}`).toEqual(plain);
  // Compared whatever the budget, a budget already spent past its limit included.
  expect(a, `wasm vs ts ${JSON.stringify({ ...request, minBaseOffset: String(request.minBaseOffset) })}`).toEqual(b);
  return a;
}

/** Runs the probe's loop shape: scan, and after a passing candidate go on from the next one. */
function probeSequence(
  pair: Pair,
  base: Omit<CandidateScanRequest, "fromIndex" | "spentUnits">,
  from: number,
  spent: number,
): CandidateScanResult[] {
  const results: CandidateScanResult[] = [];
  let at = from;
  let spentUnits = spent;
  for (;;) {
    const r = scanBoth(pair, { ...base, fromIndex: at, spentUnits });
    results.push(r);
    if (r.status !== "passed") return results;
    // The pessimistic charge of a candidate that did not verify.
    spentUnits = r.spentUnits + 300;
    if (spentUnits > base.limitUnits) return results;
    at = r.index + 1;
  }
}

/** Random residue with crafted headers that decode, fit and extend (or miss each check by one). */
function adversarial(size: number, seed: number, background: "zero" | "random" | "sparse"): Uint8Array {
  const next = rng(seed);
  const bytes = background === "random" ? randomBytes(size, seed ^ 0x55) : new Uint8Array(size);
  if (background === "sparse") for (let i = 0; i < size / 300; i++) bytes[next(size)] = 1 + next(255);
  const count = 5 + next(40);
  for (let i = 0; i < count; i++) {
    const at = next(size - 256);
    const kind = next(6);
    writeHeader(bytes, at, {
      length: kind === 0 ? 256 + next(4000) : kind === 1 ? size - at - next(3) : kind === 2 ? 255 : 256 + next(200_000),
      count: kind === 3 ? 0 : 1 + next(3),
      base: BigInt(next(4)) + 99n,
      reservedByte: kind === 4 ? 52 + next(204) : undefined,
    });
  }
  return bytes;
}

describe("wasm scanCandidates", () => {
  const SIZE = 65536;
  const TO = SIZE - 255;

  it("random bytes: no candidate passes; every limit stops at exactly the same candidate", () => {
    const pair = openPair(SIZE);
    load(pair, randomBytes(SIZE, 77));
    for (const limit of [0, 1, 2, 203, 204, 205, 1000, 12_345, TO - 1, TO, TO + 1, 2_281_701_376]) {
      // Past the limit too: one load's budget is shared, so a segment's probe can start overspent.
      for (const spent of [0, 1, Math.min(limit, 7), limit, limit + 1, limit + 4096]) {
        scanBoth(pair, { fromIndex: 0, toIndex: TO, fileEndIndex: SIZE, minBaseOffset: 0n, spentUnits: spent, limitUnits: limit });
        scanBoth(pair, { fromIndex: 333, toIndex: 40_000, fileEndIndex: SIZE, minBaseOffset: 0n, spentUnits: spent, limitUnits: limit });
      }
    }
    pair.close();
  });

  it("zeros: the whole range is one skip; exhaustion lands inside the zero run", () => {
    const pair = openPair(SIZE);
    for (const limit of [0, 1, 5, 39, 40, 41, 4096, 50_000, TO - 2, TO - 1, TO, 1e12]) {
      const r = scanBoth(pair, { fromIndex: 0, toIndex: TO, fileEndIndex: SIZE, minBaseOffset: 0n, spentUnits: 0, limitUnits: limit });
      if (limit < TO) expect(r).toEqual({ status: "exhausted", index: limit, spentUnits: limit + 1 });
      else expect(r).toEqual({ status: "done", index: TO, spentUnits: TO });
      scanBoth(pair, { fromIndex: 1000, toIndex: 1001, fileEndIndex: SIZE, minBaseOffset: 0n, spentUnits: limit, limitUnits: limit });
    }
    pair.close();
  });

  it("a budget already spent past the limit stops at the first candidate (plain semantics)", () => {
    const pair = openPair(SIZE);
    const r = pair.w.scanCandidates({
      fromIndex: 10,
      toIndex: TO,
      fileEndIndex: SIZE,
      minBaseOffset: 0n,
      spentUnits: 500,
      limitUnits: 400,
    });
    expect(r).toEqual({ status: "exhausted", index: 10, spentUnits: 501 });
    scanBoth(pair, { fromIndex: 10, toIndex: TO, fileEndIndex: SIZE, minBaseOffset: 0n, spentUnits: 500, limitUnits: 400 });
    pair.close();
  });

  it("adversarial residues: same passes, same stops, same spend (fixed seeds)", () => {
    const pair = openPair(SIZE);
    const statuses = new Map<string, number>();
    for (let seed = 1; seed <= 60; seed++) {
      const background = (["zero", "random", "sparse"] as const)[seed % 3]!;
      load(pair, adversarial(SIZE, seed, background));
      const next = rng(seed * 31);
      for (const limit of [3, 100 + next(5000), 20_000 + next(40_000), 1e9]) {
        const min = [0n, 99n, 100n, 101n, 102n, U64_MAX][next(6)]!;
        const seq = probeSequence(
          pair,
          { toIndex: TO, fileEndIndex: SIZE - next(2) * next(5000), minBaseOffset: min, limitUnits: limit },
          next(100),
          next(3),
        );
        for (const r of seq) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      probeSequence(pair, { toIndex: TO, fileEndIndex: SIZE, minBaseOffset: null, limitUnits: 1e9 }, 0, 0);
    }
    // The corpus exercises every outcome many times.
    for (const status of ["passed", "exhausted", "done"]) expect(statuses.get(status) ?? 0).toBeGreaterThan(20);
    pair.close();
  });

  it("boundaries: exact fit, one past the file, base == min, cap and floor lengths (a length over the cap that fits is a candidate)", () => {
    const MAXB = 5000;
    const pair = openPair(SIZE, MAXB);
    const bytes = new Uint8Array(SIZE);
    const fileEnd = 60_000;
    writeHeader(bytes, 100, { length: 255 });
    writeHeader(bytes, 1000, { length: MAXB + 1 });
    writeHeader(bytes, 2000, { length: MAXB, count: 0 });
    writeHeader(bytes, 3000, { length: 256, base: 99n });
    writeHeader(bytes, 4000, { length: 256, base: 100n });
    writeHeader(bytes, 6000, { length: MAXB, base: U64_MAX });
    writeHeader(bytes, 56_000, { length: fileEnd - 56_000 + 1 });
    writeHeader(bytes, 57_000, { length: fileEnd - 57_000 });
    writeHeader(bytes, TO - 1, { length: 256 });
    load(pair, bytes);
    const seq = probeSequence(pair, { toIndex: TO, fileEndIndex: fileEnd, minBaseOffset: 100n, limitUnits: 1e9 }, 0, 0);
    // 1000 claims MAXB + 1 bytes: an oversized batch that fits the file is handed to the verifier (docs/format.md §2.2).
    expect(seq.map((r) => r.index)).toEqual([1000, 4000, 6000, 57_000, TO]);
    expect(seq.map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed", "done"]);
    // The last candidate of the range, with its header ending exactly at the window end.
    const last = probeSequence(pair, { toIndex: TO, fileEndIndex: SIZE, minBaseOffset: 100n, limitUnits: 1e9 }, 57_001, 0);
    expect(last[0]).toEqual({ status: "passed", index: TO - 1, spentUnits: TO - 1 - 57_001 + 1 });
    probeSequence(pair, { toIndex: TO, fileEndIndex: fileEnd, minBaseOffset: U64_MAX, limitUnits: 1e9 }, 0, 0);
    probeSequence(pair, { toIndex: TO, fileEndIndex: fileEnd, minBaseOffset: 0n, limitUnits: 1e9 }, 0, 0);
    // Limits that stop exactly on, just before and just after a passing candidate.
    for (const limit of [3999, 4000, 4001, 4002]) {
      probeSequence(pair, { toIndex: TO, fileEndIndex: fileEnd, minBaseOffset: 100n, limitUnits: limit }, 0, 0);
    }
    pair.close();
  });

  it("skip jumps land exactly: a passing header right after each kind of skip", () => {
    const pair = openPair(SIZE);
    const h = 30_000;
    // (a) message_count's top byte (h+51) is nonzero: seen as byte c+255 from c = h-204.
    // (b) a length of exactly 16 MiB (low three bytes zero) after a zero run.
    for (const header of [
      { length: 300, count: 0x01000001 },
      { length: 1 << 24, count: 1 },
      { length: (1 << 24) + 256, count: 0x01000000 },
    ]) {
      for (const background of ["zero", "random", "sparse"] as const) {
        const bytes = adversarial(SIZE, 4242, background);
        writeHeader(bytes, h, header);
        load(pair, bytes);
        for (let d = 0; d <= 260; d++) {
          const seq = probeSequence(pair, { toIndex: TO, fileEndIndex: 1 << 26, minBaseOffset: 0n, limitUnits: 1e9 }, h - d, 0);
          expect(seq.some((r) => r.status === "passed" && r.index === h)).toBe(true);
        }
      }
    }
    pair.close();
  });

  it("property: arbitrary structured windows agree (fast-check)", () => {
    const pair = openPair(4096);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.constantFrom("zero", "random", "sparse") as fc.Arbitrary<"zero" | "random" | "sparse">,
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 100 }),
        (seed, background, from, limit, spent) => {
          const bytes = adversarial(4096, seed, background);
          // Shorter runs of zeros and nonzero bytes right at the skip boundaries.
          const next = rng(seed);
          for (let i = 0; i < 10; i++) bytes[next(4096)] = next(2) ? 0 : 1;
          load(pair, bytes);
          probeSequence(
            pair,
            { toIndex: 4096 - 255, fileEndIndex: 4096 + next(3) * 1000, minBaseOffset: BigInt(next(103)), limitUnits: limit },
            Math.min(from, 4096 - 255),
            Math.min(spent, limit),
          );
        },
      ),
      { numRuns: 300 },
    );
    pair.close();
  });
});

// ---------------------------------------------------------------------------

function messages(seed: number, count: number, maxPayload: number, lastNonEmpty = false): MessageInput[] {
  const next = rng(seed);
  const out: MessageInput[] = [];
  for (let i = 0; i < count; i++) {
    const payloadLength = next(maxPayload + 1);
    const userHeaders = next(4) === 0 ? randomBytes(next(40), seed + i) : undefined;
    out.push({
      id: (BigInt(next(1 << 30)) << 64n) | BigInt(i),
      payload: randomBytes(i === count - 1 && lastNonEmpty ? Math.max(1, payloadLength) : payloadLength, seed * 1000 + i),
      userHeaders,
      timestampDelta: next(1000),
    });
  }
  return out;
}

function batch(seed: number, count: number, maxPayload: number, lastNonEmpty = false): Uint8Array {
  return encodeBatch({
    baseOffset: BigInt(seed) * 1000n,
    baseTimestamp: 1_700_000_000_000_000n + BigInt(seed),
    partitionId: 7n,
    messages: messages(seed, count, maxPayload, lastNonEmpty),
  });
}

/** Corruptions that keep the header decoding, aimed at each check in turn. */
function corrupt(bytes: Uint8Array, seed: number): Uint8Array {
  const next = rng(seed);
  const out = bytes.slice();
  const length = out.length;
  switch (next(9)) {
    case 0: // any bit outside the reserved header region
      {
        let at = next(length);
        if (at >= 52 && at < 256) at = next(52);
        if (at >= 32 && at < 40) at = 8;
        out[at]! ^= 1 << next(8);
      }
      break;
    case 1: // message_count off by a little
      writeU32(out, 48, Math.max(0, out[48]! + next(5) - 2));
      break;
    case 2: // a frame's reserved u64
      out[256 + 40 + next(8)] = 1 + next(255);
      break;
    case 3: // a frame's payload_length
      writeU32(out, 256 + 36, next(3) === 0 ? 0xffffffff : next(length));
      break;
    case 4: // a frame's user_headers_length to u32 max (u32 sum overflow in a naive kernel)
      writeU32(out, 256 + 32, 0xffffffff);
      writeU32(out, 256 + 36, 0xffffffff);
      break;
    case 5: // the stored batch checksum
      out[40 + next(8)]! ^= 0x80;
      break;
    case 6: // a byte deep inside the blob
      out[256 + next(length - 256)]! ^= 0xff;
      break;
    case 7: {
      // a torn frame header after the last frame (1..47 surplus bytes, one more message)
      const surplus = 1 + next(47);
      const longer = new Uint8Array(length + surplus);
      longer.set(out);
      writeU64(longer, 32, BigInt(length + surplus));
      writeU32(longer, 48, out[48]! + out[49]! * 256 + 1);
      return longer;
    }
    default: // the last frame's checksum
      out[length - 1]! ^= 1;
  }
  return out;
}

/** The batch bytes in a big-enough window: verifyInWindow on both engines. */
function verifyWhole(pair: Pair, bytes: Uint8Array, at: number): VerifyStatus {
  load(pair, bytes, at);
  if (pair.t.headerStatus(at) !== VerifyStatus.Ok) {
    expect(pair.w.headerStatus(at)).toBe(pair.t.headerStatus(at));
    return pair.t.headerStatus(at);
  }
  const a = pair.w.verifyInWindow(at);
  const b = pair.t.verifyInWindow(at);
  expect(a).toBe(b);
  return a;
}

/**
 * Streams `bytes` through a small window in the given chunk sizes, each chunk
 * written at a random window offset (as a refill would), on both engines.
 */
function verifyStreamed(pair: Pair, bytes: Uint8Array, chunks: number[], seed: number): VerifyStatus {
  const next = rng(seed);
  const cap = pair.w.capacityBytes;
  const headerAt = cap - 256 - next(4);
  load(pair, bytes.subarray(0, 256), headerAt);
  pair.w.verifyStart(headerAt);
  pair.t.verifyStart(headerAt);
  const blobLength = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(32, true)) - 256;
  let at = 256;
  let k = 0;
  while (at < 256 + blobLength) {
    const size = Math.min(chunks[k++ % chunks.length]!, cap, 256 + blobLength - at);
    const offset = next(cap - size + 1);
    load(pair, bytes.subarray(at, at + size), offset);
    const a = pair.w.verifyFeed(offset, size);
    const b = pair.t.verifyFeed(offset, size);
    expect(a).toBe(b);
    at += size;
    if (a !== VerifyStatus.Ok) return a;
    // Scribble over the window: a kernel must not rely on bytes of an earlier chunk.
    pair.w.view().fill(0xa5);
    pair.t.view().fill(0xa5);
  }
  const a = pair.w.verifyFinish();
  const b = pair.t.verifyFinish();
  expect(a).toBe(b);
  return a;
}

describe("wasm verification", () => {
  it("valid batches verify Ok in the window, at any alignment", () => {
    const pair = openPair(1 << 20);
    for (let seed = 1; seed <= 40; seed++) {
      const bytes = batch(seed, 1 + (seed % 17) * 3, [0, 10, 300, 5000][seed % 4]!, false);
      expect(verifyWhole(pair, bytes, seed % 64)).toBe(VerifyStatus.Ok);
    }
    // A batch with no frames at all.
    expect(verifyWhole(pair, batch(99, 0, 0), 0)).toBe(VerifyStatus.Ok);
    pair.close();
  });

  it("corrupted batches fail with the same status as the TS engine", () => {
    const pair = openPair(1 << 20);
    const seen = new Set<VerifyStatus>();
    for (let seed = 1; seed <= 600; seed++) {
      const bytes = corrupt(batch(seed, 1 + (seed % 9), [0, 16, 200, 2000][seed % 4]!, false), seed * 7);
      seen.add(verifyWhole(pair, bytes, seed % 32));
    }
    // The corpus reaches every verification status.
    for (const s of [
      VerifyStatus.Ok,
      VerifyStatus.FrameCountMismatch,
      VerifyStatus.FrameHeaderOverrun,
      VerifyStatus.FrameReservedNonZero,
      VerifyStatus.FrameOverrun,
      VerifyStatus.FrameChecksum,
      VerifyStatus.BatchChecksum,
    ]) {
      expect(seen.has(s), `status ${VerifyStatus[s]} reached`).toBe(true);
    }
    pair.close();
  });

  it("batch_length that cuts or extends the frames (tiling checks)", () => {
    const pair = openPair(1 << 16);
    for (let seed = 1; seed <= 100; seed++) {
      const bytes = batch(seed, 1 + (seed % 5), 100);
      const padded = new Uint8Array(bytes.length + 200);
      padded.set(bytes);
      padded.set(randomBytes(200, seed), bytes.length);
      const delta = (seed % 2 === 0 ? -1 : 1) * (1 + rng(seed)(120));
      writeU64(padded, 32, BigInt(Math.max(256, bytes.length + delta)));
      verifyWhole(pair, padded.subarray(0, Math.max(256, bytes.length + delta)), seed);
    }
    pair.close();
  });

  it("streaming with random chunkings gives the in-window result (fast-check)", () => {
    const whole = openPair(1 << 18);
    const small = openPair(4096);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1 << 30 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (seed, chunks, corrupted) => {
          let bytes = batch(seed, 1 + (seed % 12), [0, 40, 300, 3000][seed % 4]!);
          if (corrupted) bytes = corrupt(bytes, seed);
          const inWindow = verifyWhole(whole, bytes, 0);
          if (whole.t.headerStatus(0) !== VerifyStatus.Ok) return;
          expect(verifyStreamed(small, bytes, chunks, seed)).toBe(inWindow);
        },
      ),
      { numRuns: 400 },
    );
    whole.close();
    small.close();
  });

  it("byte-at-a-time streaming of a batch larger than the window", () => {
    const small = openPair(4096);
    const bytes = batch(5, 40, 600);
    expect(bytes.length).toBeGreaterThan(4096);
    expect(verifyStreamed(small, bytes, [1], 1)).toBe(VerifyStatus.Ok);
    expect(verifyStreamed(small, bytes, [47, 48, 49], 2)).toBe(VerifyStatus.Ok);
    const whole = openPair(1 << 16);
    expect(verifyStreamed(small, corrupt(bytes, 3), [13, 4096], 3)).toBe(verifyWhole(whole, corrupt(bytes, 3), 0));
    whole.close();
    small.close();
  });

  it("a frame with no body whose header ends the last chunk completes with its header", () => {
    // The last frame is header-only and its header is split across the last two chunks.
    const bytes = encodeBatch({
      baseOffset: 0n,
      baseTimestamp: 1n,
      messages: [{ payload: new Uint8Array(10) }, { payload: new Uint8Array(0) }],
    });
    const pair = openPair(4096);
    load(pair, bytes.subarray(0, 256), 0);
    pair.w.verifyStart(0);
    pair.t.verifyStart(0);
    load(pair, bytes.subarray(256, bytes.length - 20), 1000);
    expect(pair.w.verifyFeed(1000, bytes.length - 20 - 256)).toBe(VerifyStatus.Ok);
    expect(pair.t.verifyFeed(1000, bytes.length - 20 - 256)).toBe(VerifyStatus.Ok);
    load(pair, bytes.subarray(bytes.length - 20), 3000);
    expect(pair.w.verifyFeed(3000, 20)).toBe(VerifyStatus.Ok);
    expect(pair.t.verifyFeed(3000, 20)).toBe(VerifyStatus.Ok);
    expect(pair.w.verifyFinish()).toBe(VerifyStatus.Ok);
    expect(pair.t.verifyFinish()).toBe(VerifyStatus.Ok);
    // Many header-only frames streamed in chunks that end inside and at frame headers.
    const empties = encodeBatch({
      baseOffset: 5n,
      baseTimestamp: 1n,
      messages: Array.from({ length: 50 }, () => ({ payload: new Uint8Array(0) })),
    });
    for (const chunk of [1, 8, 24, 47, 48, 49, 96, 100]) expect(verifyStreamed(pair, empties, [chunk], chunk)).toBe(VerifyStatus.Ok);
    pair.close();
  });

  it("finish before the whole blob was fed throws, as in the TS engine", () => {
    const pair = openPair(8192);
    const bytes = batch(3, 3, 100);
    load(pair, bytes);
    pair.w.verifyStart(0);
    pair.t.verifyStart(0);
    expect(pair.w.verifyFeed(256, 10)).toBe(pair.t.verifyFeed(256, 10));
    expect(() => pair.t.verifyFinish()).toThrow(/before the whole blob/);
    expect(() => pair.w.verifyFinish()).toThrow(/before the whole blob/);
    pair.close();
  });
});

// ---------------------------------------------------------------------------

describe("wasm window memory", () => {
  it("the view stays attached and the same while the kernels run", () => {
    const w = wasm.openWindow(1 << 16);
    const view = w.view();
    const buffer = view.buffer;
    view.set(batch(1, 30, 500), 0);
    expect(w.verifyInWindow(0)).toBe(VerifyStatus.Ok);
    w.scanCandidates({ fromIndex: 0, toIndex: (1 << 16) - 255, fileEndIndex: 1 << 16, minBaseOffset: 0n, spentUnits: 0, limitUnits: 1e9 });
    expect(w.view()).toBe(view);
    expect(view.buffer).toBe(buffer);
    expect(view.byteLength).toBe(1 << 16);
    w.close();
    expect(() => w.view()).toThrow();
  });

  it("each window has its own memory and verifier state", () => {
    const a = wasm.openWindow(8192);
    const b = wasm.openWindow(8192);
    expect(a.view().buffer).not.toBe(b.view().buffer);
    const bytes = batch(9, 4, 2000);
    a.view().set(bytes.subarray(0, 256), 0);
    b.view().set(corrupt(bytes, 5).subarray(0, 256), 0);
    a.verifyStart(0);
    a.view().set(bytes.subarray(256), 0);
    expect(a.verifyFeed(0, bytes.length - 256)).toBe(VerifyStatus.Ok);
    b.view().set(bytes, 0);
    expect(b.verifyInWindow(0)).toBe(VerifyStatus.Ok);
    expect(a.verifyFinish()).toBe(VerifyStatus.Ok);
    a.close();
    b.close();
  });

  it("rejects limits and ranges the TS engine rejects or cannot hold", () => {
    expect(() => wasm.openWindow(4096, { maxBatchBytes: 100 })).toThrow(RangeError);
    const w = wasm.openWindow(4096);
    expect(w.limits.maxBatchBytes).toBe(MAX_BATCH_BYTES);
    expect(() => w.headerStatus(4096 - 255)).toThrow(RangeError);
    expect(() => w.verifyFeed(4000, 200)).toThrow(RangeError);
    w.close();
  });
});

// ---------------------------------------------------------------------------

/**
 * batch_length is a u64 on disk; the wasm verifier once took it as an i64 and
 * the TS verifier as a number, so past 2^63 (wasm: negative) and past 2^53 (TS:
 * rounded) they disagreed. Every length around each boundary must give the
 * same statuses.
 */
const BOUNDARY_LENGTHS: bigint[] = [2n ** 31n, 2n ** 32n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n].flatMap((edge) =>
  [-257n, -256n, -1n, 0n, 1n, 255n, 256n, 257n].map((delta) => edge + delta).filter((length) => length < 2n ** 64n),
);

describe("wasm and TS agree on any batch_length (u64 → i64 / number boundaries)", () => {
  it("header gate, with the default cap and with a cap of 2^53 − 1", () => {
    for (const maxBatchBytes of [undefined, Number.MAX_SAFE_INTEGER]) {
      const pair = openPair(4096, maxBatchBytes);
      for (const length of BOUNDARY_LENGTHS) {
        const bytes = batch(3, 2, 100);
        writeU64(bytes, 32, length);
        load(pair, bytes);
        expect(pair.w.headerStatus(0), `batch_length ${length}, cap ${maxBatchBytes}`).toBe(pair.t.headerStatus(0));
      }
      pair.close();
    }
  });

  it("streamed verification of a batch claiming each length: the same status after every chunk, frames and all", () => {
    const pair = openPair(1 << 16);
    for (const length of BOUNDARY_LENGTHS) {
      for (const [count, tail] of [
        [2, "zero frame"],
        [3, "zero frame"],
        [2, "frame over"],
      ] as const) {
        // Frames of a real batch of `count` messages, then 48 more bytes: a frame header past them.
        const real = batch(11, count === 3 ? 2 : count, 200);
        const bytes = new Uint8Array(real.length + 96);
        bytes.set(real);
        if (count === 3) writeU32(bytes, 48, 3); // one more message expected than the real frames hold
        if (tail === "frame over") writeU32(bytes, real.length + 36, 0xffffffff);
        writeU64(bytes, 32, length);
        load(pair, bytes);
        const context = `batch_length ${length}, message_count ${count}, ${tail}`;
        pair.w.verifyStart(0);
        pair.t.verifyStart(0);
        for (const [from, to] of [
          [256, real.length],
          [real.length, real.length + 48],
          [real.length + 48, real.length + 96],
        ] as const) {
          const a = pair.w.verifyFeed(from, to - from);
          const b = pair.t.verifyFeed(from, to - from);
          expect(a, `${context}, bytes [${from}, ${to})`).toBe(b);
        }
        // The blob is not all fed: finish throws while the status is Ok, else repeats the status.
        const finish = (window: EngineWindow): string => {
          try {
            return VerifyStatus[window.verifyFinish()];
          } catch {
            return "throws: blob not all fed";
          }
        };
        expect(finish(pair.w), context).toBe(finish(pair.t));
      }
    }
    pair.close();
  });
});
