import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { createXXHash3 } from "hash-wasm";
import { XXH3_DEFAULT_SECRET, Xxh3Stream, xxh3_64 } from "../src/hash/xxh3.js";
import { randomBytes, randomIndexes as rng } from "./helpers/fixtures.js";

// Outside oracle: hash-wasm's XXH3-64 with seed 0. digest("hex") is the
// canonical big-endian text of the 64-bit value (checked below on the empty input).
const oracle = await createXXHash3(0, 0);
function ref(bytes: Uint8Array): bigint {
  oracle.init();
  oracle.update(bytes);
  return BigInt("0x" + oracle.digest("hex"));
}

function hex(x: bigint): string {
  return x.toString(16).padStart(16, "0");
}

const DATA = randomBytes(6 * 1024 * 1024, 0x9e3779b9);

describe("oracle and constants", () => {
  it("empty input is 0x2D06800538D394C2 (oracle and ours)", () => {
    expect(ref(new Uint8Array(0))).toBe(0x2d06800538d394c2n);
    expect(xxh3_64(new Uint8Array(0))).toBe(0x2d06800538d394c2n);
    expect(new Xxh3Stream().digest()).toBe(0x2d06800538d394c2n);
  });

  it("exports the 192-byte default secret", () => {
    expect(XXH3_DEFAULT_SECRET).toBeInstanceOf(Uint8Array);
    expect(XXH3_DEFAULT_SECRET.length).toBe(192);
    expect(Array.from(XXH3_DEFAULT_SECRET.subarray(0, 8))).toEqual([0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe]);
    expect(Array.from(XXH3_DEFAULT_SECRET.subarray(184))).toEqual([0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e]);
  });

  it("results are unsigned 64-bit bigints", () => {
    for (let n = 0; n < 300; n += 7) {
      const h = xxh3_64(DATA.subarray(0, n));
      expect(typeof h).toBe("bigint");
      expect(h >= 0n && h < 1n << 64n).toBe(true);
    }
  });
});

describe("one-shot xxh3_64 against hash-wasm", () => {
  it("every length 0..2048 (all length classes, block edges)", () => {
    const bad: number[] = [];
    for (let n = 0; n <= 2048; n++) {
      const b = randomBytes(n, n + 1);
      if (xxh3_64(b) !== ref(b)) bad.push(n);
    }
    expect(bad).toEqual([]);
  });

  it("lengths around stripe and block boundaries up to 20 KiB", () => {
    const bad: number[] = [];
    for (let blocks = 2; blocks <= 20; blocks++) {
      for (let d = -65; d <= 65; d++) {
        const n = blocks * 1024 + d;
        const b = DATA.subarray(0, n);
        if (xxh3_64(b) !== ref(b)) bad.push(n);
      }
    }
    expect(bad).toEqual([]);
  });

  it("random lengths up to 100 KiB", () => {
    const next = rng(12345);
    for (let i = 0; i < 200; i++) {
      const n = next(100 * 1024 + 1);
      const off = next(4096);
      const b = DATA.subarray(off, off + n);
      expect(hex(xxh3_64(b)), `len ${n} off ${off}`).toBe(hex(ref(b)));
    }
  });

  it("multi-MiB input (5 MiB + 17)", () => {
    const b = DATA.subarray(0, 5 * 1024 * 1024 + 17);
    expect(hex(xxh3_64(b))).toBe(hex(ref(b)));
  });

  it("unaligned subarray views (byteOffset 1..7) of a bigger buffer", () => {
    const lens = [0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1000, 1024, 1025, 4097, 70_001];
    for (let off = 0; off <= 7; off++) {
      for (const n of lens) {
        // a fresh buffer, so the view's byteOffset is exactly `off`
        const backing = new Uint8Array(n + 16);
        backing.set(DATA.subarray(1000, 1000 + n), off);
        const view = backing.subarray(off, off + n);
        expect(view.byteOffset).toBe(off);
        const want = ref(DATA.subarray(1000, 1000 + n));
        expect(hex(xxh3_64(view)), `off ${off} len ${n}`).toBe(hex(want));
        expect(hex(new Xxh3Stream().update(view).digest()), `stream off ${off} len ${n}`).toBe(hex(want));
      }
    }
  });

  it("does not modify its input", () => {
    const b = DATA.slice(0, 5000);
    xxh3_64(b);
    new Xxh3Stream().update(b).digest();
    expect(Buffer.from(b).equals(Buffer.from(DATA.subarray(0, 5000)))).toBe(true);
  });
});

describe("Xxh3Stream", () => {
  it("fixed chunk sizes across all length classes", () => {
    const chunks = [1, 3, 7, 63, 64, 65, 100, 255, 256, 257, 1023, 1024, 1025];
    for (const n of [0, 1, 5, 12, 100, 200, 240, 241, 255, 256, 257, 300, 1024, 1025, 3000, 9000]) {
      const b = DATA.subarray(7, 7 + n);
      const want = ref(b);
      for (const c of chunks) {
        const s = new Xxh3Stream();
        for (let p = 0; p < n; p += c) s.update(b.subarray(p, Math.min(n, p + c)));
        expect(hex(s.digest()), `len ${n} chunk ${c}`).toBe(hex(want));
      }
    }
  });

  it("property: arbitrary splits of arbitrary data give the one-shot digest", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 3000 }), fc.array(fc.nat({ max: 3000 }), { maxLength: 12 }), (data, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
        const s = new Xxh3Stream();
        let prev = 0;
        for (const p of points) {
          s.update(data.subarray(prev, p));
          prev = p;
        }
        s.update(data.subarray(prev));
        const one = xxh3_64(data);
        return s.digest() === one && one === ref(data);
      }),
      { numRuns: 300 },
    );
  });

  it("random split points on a large input (1 MiB + 3)", () => {
    const b = DATA.subarray(5, 5 + 1024 * 1024 + 3);
    const want = ref(b);
    const next = rng(777);
    for (let round = 0; round < 3; round++) {
      const s = new Xxh3Stream();
      let p = 0;
      while (p < b.length) {
        const pick = next(4);
        const c = pick === 0 ? next(70) : pick === 1 ? next(1100) : pick === 2 ? next(70_000) : 256;
        s.update(b.subarray(p, Math.min(b.length, p + c)));
        p += c;
      }
      expect(hex(s.digest())).toBe(hex(want));
    }
  });

  it("digest mid-way does not consume state and may be repeated", () => {
    const n = 20_000;
    const b = DATA.subarray(3, 3 + n);
    const next = rng(4242);
    const s = new Xxh3Stream();
    let p = 0;
    while (p < n) {
      const c = Math.min(n - p, next(600));
      s.update(b.subarray(p, p + c));
      p += c;
      const want = ref(b.subarray(0, p));
      expect(hex(s.digest()), `prefix ${p}`).toBe(hex(want));
      expect(hex(s.digest()), `prefix ${p} again`).toBe(hex(want));
    }
  });

  it("digest on every prefix length 0..1100 while streaming byte-by-byte-ish", () => {
    const b = DATA.subarray(11, 11 + 1100);
    const s = new Xxh3Stream();
    for (let p = 0; p <= 1100; p++) {
      expect(s.digest(), `prefix ${p}`).toBe(ref(b.subarray(0, p)));
      if (p < 1100) s.update(b.subarray(p, p + 1));
    }
  });

  it("update returns this; reset starts over", () => {
    const s = new Xxh3Stream();
    expect(s.update(DATA.subarray(0, 10))).toBe(s);
    s.update(DATA.subarray(10, 5000));
    expect(s.reset()).toBe(s);
    expect(s.digest()).toBe(0x2d06800538d394c2n);
    s.update(DATA.subarray(0, 300));
    expect(s.digest()).toBe(ref(DATA.subarray(0, 300)));
    s.reset().update(DATA.subarray(0, 5));
    expect(s.digest()).toBe(ref(DATA.subarray(0, 5)));
  });

  it("multi-MiB streaming (5 MiB + 17) in 64 KiB + 13 chunks", () => {
    const b = DATA.subarray(0, 5 * 1024 * 1024 + 17);
    const s = new Xxh3Stream();
    const c = 65536 + 13;
    for (let p = 0; p < b.length; p += c) s.update(b.subarray(p, Math.min(b.length, p + c)));
    expect(hex(s.digest())).toBe(hex(ref(b)));
  });

  it("independent streams do not interfere", () => {
    const a = new Xxh3Stream();
    const b = new Xxh3Stream();
    const x = DATA.subarray(0, 3000);
    const y = DATA.subarray(100_000, 104_000);
    for (let p = 0; p < 4000; p += 97) {
      if (p < 3000) a.update(x.subarray(p, Math.min(3000, p + 97)));
      b.update(y.subarray(p, Math.min(4000, p + 97)));
      xxh3_64(DATA.subarray(p, p + 2000)); // interleaved one-shot use of shared scratch
    }
    expect(a.digest()).toBe(ref(x));
    expect(b.digest()).toBe(ref(y));
  });
});
