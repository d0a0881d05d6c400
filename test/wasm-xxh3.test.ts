/**
 * The wasm engine's XXH3-64 (SIMD kernel + JS staging) against hash-wasm (an
 * independent C implementation) and the TypeScript engine.
 * Needs dist/segscan.wasm: `npm run build:wasm` (npm test builds first).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createXXHash3 } from "hash-wasm";
import { createWasmEngine } from "../src/engine/wasm/engine.js";
import { xxh3_64 as tsXxh3 } from "../src/hash/xxh3.js";
import { encodeBatch } from "../src/format/encode.js";
import { VerifyStatus } from "../src/format/records.js";
import { randomBytes } from "./helpers/fixtures.js";

const oracle = await createXXHash3(0, 0);
function ref(bytes: Uint8Array): bigint {
  oracle.init();
  oracle.update(bytes);
  return BigInt("0x" + oracle.digest("hex"));
}

const engine = await createWasmEngine();

const DATA = randomBytes(6 * 1024 * 1024, 0x2545f491);

describe("wasm xxh3_64 one-shot", () => {
  it("matches hash-wasm for every length 0..2048 (all length classes)", () => {
    for (let len = 0; len <= 2048; len++) {
      const bytes = DATA.subarray(len, len + len);
      const got = engine.xxh3_64(bytes);
      if (got !== ref(bytes)) expect({ len, got }).toEqual({ len, got: ref(bytes) });
    }
  });

  it("matches on constant inputs (zeros, 0xff) across block and stage boundaries", () => {
    for (const len of [0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1023, 1024, 1025, 65535, 65536, 65537, 200_000]) {
      for (const fill of [0x00, 0xff]) {
        const bytes = new Uint8Array(len).fill(fill);
        expect(engine.xxh3_64(bytes)).toBe(ref(bytes));
      }
    }
  });

  it("returns unsigned values (high bit set) as the TS engine does", () => {
    let highBitSeen = false;
    for (let len = 0; len < 64; len++) {
      const bytes = DATA.subarray(100, 100 + len);
      const got = engine.xxh3_64(bytes);
      expect(got).toBeGreaterThanOrEqual(0n);
      expect(got).toBe(tsXxh3(bytes));
      if (got >= 1n << 63n) highBitSeen = true;
    }
    expect(highBitSeen).toBe(true);
  });

  it("matches on 5 MiB (streamed through the staging area)", () => {
    const bytes = DATA.subarray(7, 7 + 5 * 1024 * 1024);
    expect(engine.xxh3_64(bytes)).toBe(ref(bytes));
  });

  it("matches for random lengths and unaligned views (fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 63 }), (len, offset) => {
        const bytes = DATA.subarray(offset, offset + len);
        return engine.xxh3_64(bytes) === ref(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it("hashes a view of a non-zero byteOffset in a shared buffer without touching it", () => {
    const backing = randomBytes(5000, 7);
    const copy = backing.slice();
    const view = new Uint8Array(backing.buffer, 13, 4000);
    expect(engine.xxh3_64(view)).toBe(ref(view));
    expect(backing).toEqual(copy);
  });
});

describe("wasm xxh3_64 of bytes in a window's memory", () => {
  it("hashes window views in place, also between the steps of a streaming verification", () => {
    const w = engine.openWindow(1 << 20);
    const view = w.view();
    view.set(DATA.subarray(0, 1 << 20));
    for (const [at, len] of [
      [0, 1 << 20],
      [1, 4096],
      [333, 100_000],
      [5, 4095],
      [7, 10],
      [(1 << 20) - 5000, 5000],
    ] as const) {
      expect(engine.xxh3_64(view.subarray(at, at + len))).toBe(ref(DATA.subarray(at, at + len)));
    }
    // In the middle of a streaming verification (its frame and batch states survive).
    const batch = encodeBatch({
      baseOffset: 1n,
      baseTimestamp: 2n,
      messages: [{ payload: DATA.subarray(0, 9000) }, { payload: DATA.subarray(1, 300) }],
    });
    view.set(batch, 0);
    w.verifyStart(0);
    expect(w.verifyFeed(256, 5000)).toBe(VerifyStatus.Ok);
    expect(engine.xxh3_64(view.subarray(100_000, 200_000))).toBe(ref(view.slice(100_000, 200_000)));
    expect(w.verifyFeed(5256, batch.length - 5256)).toBe(VerifyStatus.Ok);
    expect(w.verifyFinish()).toBe(VerifyStatus.Ok);
    w.close();
    // After close the bytes are still hashed correctly (copied through the stage).
    expect(engine.xxh3_64(view.subarray(0, 70_000))).toBe(ref(view.slice(0, 70_000)));
  });
});

describe("wasm createHasher streaming", () => {
  it("empty hasher digests the empty input", () => {
    expect(engine.createHasher().digest()).toBe(0x2d06800538d394c2n);
  });

  it("any split of any input gives the one-shot digest (fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 12 }), (len, cuts) => {
        const bytes = DATA.subarray(3, 3 + len);
        const points = [...new Set(cuts.map((c) => c % (len + 1)))].sort((a, b) => a - b);
        const hasher = engine.createHasher();
        let at = 0;
        for (const p of [...points, len]) {
          hasher.update(bytes.subarray(at, p));
          at = p;
        }
        return hasher.digest() === ref(bytes);
      }),
      { numRuns: 400 },
    );
  });

  it("byte-at-a-time and 8-byte updates across the 240/256-byte thresholds", () => {
    for (const len of [239, 240, 241, 255, 256, 257, 319, 320, 321, 1024, 1025, 2000]) {
      const bytes = DATA.subarray(0, len);
      for (const step of [1, 7, 8, 63, 64, 65]) {
        const hasher = engine.createHasher();
        for (let at = 0; at < len; at += step) hasher.update(bytes.subarray(at, Math.min(len, at + step)));
        expect(hasher.digest()).toBe(ref(bytes));
      }
    }
  });

  it("large updates (several staging chunks) and digest mid-stream leave the state intact", () => {
    const bytes = DATA.subarray(1, 1 + 3 * 1024 * 1024 + 77);
    const hasher = engine.createHasher();
    hasher.update(bytes.subarray(0, 1_000_001));
    expect(hasher.digest()).toBe(ref(bytes.subarray(0, 1_000_001)));
    hasher.update(bytes.subarray(1_000_001, 1_000_002));
    expect(hasher.digest()).toBe(ref(bytes.subarray(0, 1_000_002)));
    hasher.update(bytes.subarray(1_000_002));
    expect(hasher.digest()).toBe(ref(bytes));
    expect(hasher.digest()).toBe(ref(bytes));
  });

  it("interleaved hashers and one-shot calls do not disturb each other", () => {
    const a = engine.createHasher();
    const b = engine.createHasher();
    const c = engine.createHasher();
    const inputA = DATA.subarray(0, 150_000);
    const inputB = DATA.subarray(500_000, 500_000 + 70_001);
    const inputC = DATA.subarray(9, 9 + 3_333);
    let atA = 0;
    let atB = 0;
    let atC = 0;
    let round = 0;
    while (atA < inputA.length || atB < inputB.length || atC < inputC.length) {
      const stepA = 1 + ((round * 7919) % 20_000);
      const stepB = 1 + ((round * 104_729) % 9_000);
      const stepC = 1 + ((round * 31) % 100);
      a.update(inputA.subarray(atA, (atA = Math.min(inputA.length, atA + stepA))));
      // A one-shot hash in between uses the staging area and the scratch state.
      expect(engine.xxh3_64(DATA.subarray(round, round + 100_000))).toBe(ref(DATA.subarray(round, round + 100_000)));
      b.update(inputB.subarray(atB, (atB = Math.min(inputB.length, atB + stepB))));
      c.update(inputC.subarray(atC, (atC = Math.min(inputC.length, atC + stepC))));
      if (round % 3 === 0) expect(b.digest()).toBe(ref(inputB.subarray(0, atB)));
      round++;
    }
    expect(a.digest()).toBe(ref(inputA));
    expect(b.digest()).toBe(ref(inputB));
    expect(c.digest()).toBe(ref(inputC));
  });

  it("separate engines have separate staging instances", async () => {
    const other = await createWasmEngine();
    const h1 = engine.createHasher();
    const h2 = other.createHasher();
    h1.update(DATA.subarray(0, 1000));
    h2.update(DATA.subarray(0, 2000));
    h1.update(DATA.subarray(1000, 3000));
    expect(h1.digest()).toBe(ref(DATA.subarray(0, 3000)));
    expect(h2.digest()).toBe(ref(DATA.subarray(0, 2000)));
  });
});
