// XXH3-64 (seed 0, default 192-byte secret) for AssemblyScript, SIMD stripe loop.
//
// Algorithm: xxHash specification (doc/xxhash_spec.md, "XXH3 Algorithm Description").
// One-shot for every length class, and a streaming state in linear memory that
// produces identical results for any chunking.

// @ts-ignore: decorator
@inline const PRIME32_1: u64 = 0x9E3779B1;
// @ts-ignore: decorator
@inline const PRIME32_2: u64 = 0x85EBCA77;
// @ts-ignore: decorator
@inline const PRIME32_3: u64 = 0xC2B2AE3D;
// @ts-ignore: decorator
@inline const PRIME64_1: u64 = 0x9E3779B185EBCA87;
// @ts-ignore: decorator
@inline const PRIME64_2: u64 = 0xC2B2AE3D27D4EB4F;
// @ts-ignore: decorator
@inline const PRIME64_3: u64 = 0x165667B19E3779F9;
// @ts-ignore: decorator
@inline const PRIME64_4: u64 = 0x85EBCA77C2B2AE63;
// @ts-ignore: decorator
@inline const PRIME64_5: u64 = 0x27D4EB2F165667C5;
// @ts-ignore: decorator
@inline const PRIME_MX1: u64 = 0x165667919E3779F9;
// @ts-ignore: decorator
@inline const PRIME_MX2: u64 = 0x9FB21C651E98DF25;

// @ts-ignore: decorator
@inline const STRIPE: usize = 64;
// @ts-ignore: decorator
@inline const STRIPES_PER_BLOCK: u32 = 16; // (192 - 64) / 8
// @ts-ignore: decorator
@inline const SECRET_LAST_ACC: usize = 121; // 192 - 71
// @ts-ignore: decorator
@inline const SECRET_SCRAMBLE: usize = 128; // 192 - 64
// @ts-ignore: decorator
@inline const SECRET_MERGE: usize = 11;

/** The default 192-byte secret, 16-byte aligned in static memory. */
export const SECRET: usize = memory.data<u8>([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
], 16);

/** Initial accumulators of the long-input algorithm. */
const ACC_INIT: usize = memory.data<u64>([
  PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
], 16);

/** Scratch accumulators of a streaming digest. */
const ACC_TMP: usize = memory.data(64, 16);
/** Scratch stripe of a streaming digest whose buffered tail is shorter than a stripe. */
const LAST_STRIPE_TMP: usize = memory.data(64, 16);

// ---------------------------------------------------------------------------
// Scalar helpers

// @ts-ignore: decorator
@inline function rd64(p: usize): u64 { return load<u64>(p); }
// @ts-ignore: decorator
@inline function rd32(p: usize): u64 { return <u64>load<u32>(p); }

/** Low 64 bits of the 128-bit product XOR its high 64 bits. */
// @ts-ignore: decorator
@inline function mul128fold64(a: u64, b: u64): u64 {
  const aLo = a & 0xFFFFFFFF;
  const aHi = a >> 32;
  const bLo = b & 0xFFFFFFFF;
  const bHi = b >> 32;
  const loLo = aLo * bLo;
  const hiLo = aHi * bLo;
  const loHi = aLo * bHi;
  const hiHi = aHi * bHi;
  const cross = (loLo >> 32) + (hiLo & 0xFFFFFFFF) + loHi;
  const upper = (hiLo >> 32) + (cross >> 32) + hiHi;
  const lower = (cross << 32) | (loLo & 0xFFFFFFFF);
  return lower ^ upper;
}

// @ts-ignore: decorator
@inline function avalanche(h: u64): u64 {
  h ^= h >> 37;
  h *= PRIME_MX1;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function avalancheXXH64(h: u64): u64 {
  h ^= h >> 33;
  h *= PRIME64_2;
  h ^= h >> 29;
  h *= PRIME64_3;
  return h ^ (h >> 32);
}

// @ts-ignore: decorator
@inline function mix16(p: usize, s: usize): u64 {
  return mul128fold64(rd64(p) ^ rd64(s), rd64(p + 8) ^ rd64(s + 8));
}

// ---------------------------------------------------------------------------
// Short inputs (0..240 bytes)

function hashLe16(p: usize, len: usize): u64 {
  const s = SECRET;
  if (len > 8) {
    const bitflipL = rd64(s + 24) ^ rd64(s + 32);
    const bitflipH = rd64(s + 40) ^ rd64(s + 48);
    const lo = rd64(p) ^ bitflipL;
    const hi = rd64(p + len - 8) ^ bitflipH;
    const acc = <u64>len + bswap<u64>(lo) + hi + mul128fold64(lo, hi);
    return avalanche(acc);
  }
  if (len >= 4) {
    const first = rd32(p);
    const last = rd32(p + len - 4);
    const combined = last | (first << 32);
    let v = (rd64(s + 8) ^ rd64(s + 16)) ^ combined;
    v ^= rotl<u64>(v, 49) ^ rotl<u64>(v, 24);
    v *= PRIME_MX2;
    v ^= (v >> 35) + <u64>len;
    v *= PRIME_MX2;
    return v ^ (v >> 28);
  }
  if (len > 0) {
    const c1 = <u32>load<u8>(p);
    const c2 = <u32>load<u8>(p + (len >> 1));
    const c3 = <u32>load<u8>(p + len - 1);
    const combined = (c1 << 16) | (c2 << 24) | c3 | (<u32>len << 8);
    const bitflip = <u64>(load<u32>(s) ^ load<u32>(s + 4));
    return avalancheXXH64(<u64>combined ^ bitflip);
  }
  return avalancheXXH64(rd64(s + 56) ^ rd64(s + 64));
}

function hash17to128(p: usize, len: usize): u64 {
  const s = SECRET;
  let acc: u64 = <u64>len * PRIME64_1;
  if (len > 32) {
    if (len > 64) {
      if (len > 96) {
        acc += mix16(p + 48, s + 96);
        acc += mix16(p + len - 64, s + 112);
      }
      acc += mix16(p + 32, s + 64);
      acc += mix16(p + len - 48, s + 80);
    }
    acc += mix16(p + 16, s + 32);
    acc += mix16(p + len - 32, s + 48);
  }
  acc += mix16(p, s);
  acc += mix16(p + len - 16, s + 16);
  return avalanche(acc);
}

function hash129to240(p: usize, len: usize): u64 {
  const s = SECRET;
  let acc: u64 = <u64>len * PRIME64_1;
  for (let i: usize = 0; i < 8; i++) acc += mix16(p + 16 * i, s + 16 * i);
  acc = avalanche(acc);
  const nbRounds = len >> 4;
  for (let i: usize = 8; i < nbRounds; i++) acc += mix16(p + 16 * i, s + 16 * (i - 8) + 3);
  acc += mix16(p + len - 16, s + 119);
  return avalanche(acc);
}

// ---------------------------------------------------------------------------
// Long inputs: SIMD stripe accumulation.
//
// One stripe is 8 u64 lanes, held as four i64x2 vectors. For lane i:
//   acc[i]   += lo32(d ^ k) * hi32(d ^ k)
//   acc[i^1] += d
// Inside the loop the accumulators are kept pairwise SWAPPED (B = [acc1, acc0],
// ...), so the data adds need no shuffle: B += d adds d0 to acc1 and d1 to acc0.
// The products are produced in swapped lane order for free: one i32x4 shuffle
// of two xored vectors gathers their low halves as [lo1, lo0, lo3, lo2] and
// another their high halves in the same order; extmul_low / extmul_high then
// give [p1, p0] and [p3, p2], the 32x32->64 products already swapped.

/**
 * Accumulates `nb` stripes from `p` into the accumulators at `acc` (memory,
 * natural layout), continuing a block that already holds `soFar` stripes and
 * scrambling whenever a block completes. Returns the new stripes-so-far count.
 */
function consumeStripes(acc: usize, p: usize, nb: usize, soFar: u32): u32 {
  let b0 = v128.load(acc);
  let b1 = v128.load(acc, 16);
  let b2 = v128.load(acc, 32);
  let b3 = v128.load(acc, 48);
  b0 = i64x2.shuffle(b0, b0, 1, 0);
  b1 = i64x2.shuffle(b1, b1, 1, 0);
  b2 = i64x2.shuffle(b2, b2, 1, 0);
  b3 = i64x2.shuffle(b3, b3, 1, 0);
  while (nb > 0) {
    let n = <usize>(STRIPES_PER_BLOCK - soFar);
    if (n > nb) n = nb;
    let k = SECRET + (<usize>soFar << 3);
    const stop = p + (n << 6);
    // Two stripes a turn (fewer loop steps and address updates), then an odd last one.
    while (p + 2 * STRIPE <= stop) {
      {
        const x0 = v128.load(p);
        const x1 = v128.load(p, 16);
        const d0 = v128.xor(x0, v128.load(k));
        const d1 = v128.xor(x1, v128.load(k, 16));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 32);
        const x3 = v128.load(p, 48);
        const d2 = v128.xor(x2, v128.load(k, 32));
        const d3 = v128.xor(x3, v128.load(k, 48));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      {
        const x0 = v128.load(p, 64);
        const x1 = v128.load(p, 80);
        const d0 = v128.xor(x0, v128.load(k, 8));
        const d1 = v128.xor(x1, v128.load(k, 24));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 96);
        const x3 = v128.load(p, 112);
        const d2 = v128.xor(x2, v128.load(k, 40));
        const d3 = v128.xor(x3, v128.load(k, 56));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      p += 2 * STRIPE;
      k += 16;
    }
    if (p < stop) {
      {
        const x0 = v128.load(p);
        const x1 = v128.load(p, 16);
        const d0 = v128.xor(x0, v128.load(k));
        const d1 = v128.xor(x1, v128.load(k, 16));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 32);
        const x3 = v128.load(p, 48);
        const d2 = v128.xor(x2, v128.load(k, 32));
        const d3 = v128.xor(x3, v128.load(k, 48));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      p += STRIPE;
      k += 8;
    }
    soFar += <u32>n;
    nb -= n;
    if (soFar == STRIPES_PER_BLOCK) {
      // Scramble is lane-wise: apply it in the swapped layout with swapped keys.
      const ks = SECRET + SECRET_SCRAMBLE;
      const prime = i64x2.splat(PRIME32_1);
      const s0 = v128.load(ks);
      const s1 = v128.load(ks, 16);
      const s2 = v128.load(ks, 32);
      const s3 = v128.load(ks, 48);
      b0 = i64x2.mul(v128.xor(v128.xor(b0, i64x2.shr_u(b0, 47)), i64x2.shuffle(s0, s0, 1, 0)), prime);
      b1 = i64x2.mul(v128.xor(v128.xor(b1, i64x2.shr_u(b1, 47)), i64x2.shuffle(s1, s1, 1, 0)), prime);
      b2 = i64x2.mul(v128.xor(v128.xor(b2, i64x2.shr_u(b2, 47)), i64x2.shuffle(s2, s2, 1, 0)), prime);
      b3 = i64x2.mul(v128.xor(v128.xor(b3, i64x2.shr_u(b3, 47)), i64x2.shuffle(s3, s3, 1, 0)), prime);
      soFar = 0;
    }
  }
  v128.store(acc, i64x2.shuffle(b0, b0, 1, 0));
  v128.store(acc, i64x2.shuffle(b1, b1, 1, 0), 16);
  v128.store(acc, i64x2.shuffle(b2, b2, 1, 0), 32);
  v128.store(acc, i64x2.shuffle(b3, b3, 1, 0), 48);
  return soFar;
}

/** The final stripe: accumulate the 64 bytes at `p` with the secret at offset 121, no scramble. */
function accumulateLast(acc: usize, p: usize): void {
  const k = SECRET + SECRET_LAST_ACC;
  for (let o: usize = 0; o < 64; o += 16) {
    const x = v128.load(p + o);
    const d = v128.xor(x, v128.load(k + o));
    const lo = i32x4.shuffle(d, d, 0, 2, 0, 2);
    const hi = i32x4.shuffle(d, d, 1, 3, 1, 3);
    const prod = i64x2.extmul_low_i32x4_u(lo, hi);
    v128.store(acc + o, i64x2.add(i64x2.add(v128.load(acc + o), prod), i64x2.shuffle(x, x, 1, 0)));
  }
}

function mergeAccs(acc: usize, len: u64): u64 {
  const s = SECRET + SECRET_MERGE;
  let r: u64 = len * PRIME64_1;
  r += mul128fold64(rd64(acc) ^ rd64(s), rd64(acc + 8) ^ rd64(s + 8));
  r += mul128fold64(rd64(acc + 16) ^ rd64(s + 16), rd64(acc + 24) ^ rd64(s + 24));
  r += mul128fold64(rd64(acc + 32) ^ rd64(s + 32), rd64(acc + 40) ^ rd64(s + 40));
  r += mul128fold64(rd64(acc + 48) ^ rd64(s + 48), rd64(acc + 56) ^ rd64(s + 56));
  return avalanche(r);
}

/**
 * One-shot long input, accumulators in registers throughout (no state in memory):
 * the same stripe step as consumeStripes, the last stripe being one more step
 * with the secret at offset 121 and no scramble.
 */
function hashLong(p: usize, len: usize): u64 {
  // ACC_INIT in the swapped layout: [acc1, acc0], [acc3, acc2], ...
  let b0 = i64x2(<i64>PRIME64_1, <i64>PRIME32_3);
  let b1 = i64x2(<i64>PRIME64_3, <i64>PRIME64_2);
  let b2 = i64x2(<i64>PRIME32_2, <i64>PRIME64_4);
  let b3 = i64x2(<i64>PRIME32_1, <i64>PRIME64_5);
  let nb = (len - 1) >> 6;
  const last = p + len - STRIPE;
  let k: usize = 0;
  let stop: usize = 0;
  for (;;) {
    // Stripes of this block, then the last stripe (once every block is done).
    let n = nb;
    if (n > <usize>STRIPES_PER_BLOCK) n = <usize>STRIPES_PER_BLOCK;
    if (n > 0) {
      k = SECRET;
      stop = p + (n << 6);
    } else {
      k = SECRET + SECRET_LAST_ACC;
      p = last;
      stop = last + STRIPE;
    }
    // Two stripes a turn (fewer loop steps and address updates), then an odd last one.
    while (p + 2 * STRIPE <= stop) {
      {
        const x0 = v128.load(p);
        const x1 = v128.load(p, 16);
        const d0 = v128.xor(x0, v128.load(k));
        const d1 = v128.xor(x1, v128.load(k, 16));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 32);
        const x3 = v128.load(p, 48);
        const d2 = v128.xor(x2, v128.load(k, 32));
        const d3 = v128.xor(x3, v128.load(k, 48));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      {
        const x0 = v128.load(p, 64);
        const x1 = v128.load(p, 80);
        const d0 = v128.xor(x0, v128.load(k, 8));
        const d1 = v128.xor(x1, v128.load(k, 24));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 96);
        const x3 = v128.load(p, 112);
        const d2 = v128.xor(x2, v128.load(k, 40));
        const d3 = v128.xor(x3, v128.load(k, 56));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      p += 2 * STRIPE;
      k += 16;
    }
    if (p < stop) {
      {
        const x0 = v128.load(p);
        const x1 = v128.load(p, 16);
        const d0 = v128.xor(x0, v128.load(k));
        const d1 = v128.xor(x1, v128.load(k, 16));
        const lo01 = i32x4.shuffle(d0, d1, 2, 0, 6, 4);
        const hi01 = i32x4.shuffle(d0, d1, 3, 1, 7, 5);
        b0 = i64x2.add(i64x2.add(b0, x0), i64x2.extmul_low_i32x4_u(lo01, hi01));
        b1 = i64x2.add(i64x2.add(b1, x1), i64x2.extmul_high_i32x4_u(lo01, hi01));
        const x2 = v128.load(p, 32);
        const x3 = v128.load(p, 48);
        const d2 = v128.xor(x2, v128.load(k, 32));
        const d3 = v128.xor(x3, v128.load(k, 48));
        const lo23 = i32x4.shuffle(d2, d3, 2, 0, 6, 4);
        const hi23 = i32x4.shuffle(d2, d3, 3, 1, 7, 5);
        b2 = i64x2.add(i64x2.add(b2, x2), i64x2.extmul_low_i32x4_u(lo23, hi23));
        b3 = i64x2.add(i64x2.add(b3, x3), i64x2.extmul_high_i32x4_u(lo23, hi23));
      }
      p += STRIPE;
      k += 8;
    }
    if (n == 0) break;
    nb -= n;
    if (n == <usize>STRIPES_PER_BLOCK) {
      const ks = SECRET + SECRET_SCRAMBLE;
      const prime = i64x2.splat(PRIME32_1);
      const s0 = v128.load(ks);
      const s1 = v128.load(ks, 16);
      const s2 = v128.load(ks, 32);
      const s3 = v128.load(ks, 48);
      b0 = i64x2.mul(v128.xor(v128.xor(b0, i64x2.shr_u(b0, 47)), i64x2.shuffle(s0, s0, 1, 0)), prime);
      b1 = i64x2.mul(v128.xor(v128.xor(b1, i64x2.shr_u(b1, 47)), i64x2.shuffle(s1, s1, 1, 0)), prime);
      b2 = i64x2.mul(v128.xor(v128.xor(b2, i64x2.shr_u(b2, 47)), i64x2.shuffle(s2, s2, 1, 0)), prime);
      b3 = i64x2.mul(v128.xor(v128.xor(b3, i64x2.shr_u(b3, 47)), i64x2.shuffle(s3, s3, 1, 0)), prime);
    }
  }
  const s = SECRET + SECRET_MERGE;
  let r: u64 = <u64>len * PRIME64_1;
  r += mul128fold64(<u64>i64x2.extract_lane(b0, 1) ^ rd64(s), <u64>i64x2.extract_lane(b0, 0) ^ rd64(s + 8));
  r += mul128fold64(<u64>i64x2.extract_lane(b1, 1) ^ rd64(s + 16), <u64>i64x2.extract_lane(b1, 0) ^ rd64(s + 24));
  r += mul128fold64(<u64>i64x2.extract_lane(b2, 1) ^ rd64(s + 32), <u64>i64x2.extract_lane(b2, 0) ^ rd64(s + 40));
  r += mul128fold64(<u64>i64x2.extract_lane(b3, 1) ^ rd64(s + 48), <u64>i64x2.extract_lane(b3, 0) ^ rd64(s + 56));
  return avalanche(r);
}

/** XXH3-64 of `len` bytes at `p`. */
export function xxh3(p: usize, len: usize): u64 {
  if (len <= 16) return hashLe16(p, len);
  if (len <= 128) return hash17to128(p, len);
  if (len <= 240) return hash129to240(p, len);
  return hashLong(p, len);
}

// ---------------------------------------------------------------------------
// Streaming state (in linear memory, 16-byte aligned):
//   +0    acc[8]          u64 x 8
//   +64   buffer[256]
//   +320  bufferedSize    u32
//   +324  stripesSoFar    u32
//   +328  totalLen        u64

// @ts-ignore: decorator
@inline export const XXH3_STATE_BYTES: usize = 336;
// @ts-ignore: decorator
@inline const ST_BUF: usize = 64;
// @ts-ignore: decorator
@inline const ST_BUFFERED: usize = 320;
// @ts-ignore: decorator
@inline const ST_SOFAR: usize = 324;
// @ts-ignore: decorator
@inline const ST_TOTAL: usize = 328;
// @ts-ignore: decorator
@inline const BUF_SIZE: usize = 256;
// @ts-ignore: decorator
@inline const BUF_STRIPES: usize = 4;

export function xxh3Reset(st: usize): void {
  memory.copy(st, ACC_INIT, 64);
  store<u32>(st, 0, ST_BUFFERED);
  store<u32>(st, 0, ST_SOFAR);
  store<u64>(st, 0, ST_TOTAL);
}

export function xxh3Update(st: usize, p: usize, len: usize): void {
  if (len == 0) return;
  store<u64>(st, load<u64>(st, ST_TOTAL) + <u64>len, ST_TOTAL);
  let buffered = <usize>load<u32>(st, ST_BUFFERED);
  const buf = st + ST_BUF;
  if (buffered + len <= BUF_SIZE) {
    memory.copy(buf + buffered, p, len);
    store<u32>(st, <u32>(buffered + len), ST_BUFFERED);
    return;
  }
  const end = p + len;
  let soFar = load<u32>(st, ST_SOFAR);
  if (buffered > 0) {
    const fill = BUF_SIZE - buffered;
    memory.copy(buf + buffered, p, fill);
    p += fill;
    soFar = consumeStripes(st, buf, BUF_STRIPES, soFar);
    buffered = 0;
  }
  // More than a buffer left: consume whole stripes straight from the input,
  // always keeping at least one byte back for the final stripe.
  if (end - p > BUF_SIZE) {
    const nb = (end - p - 1) >> 6;
    soFar = consumeStripes(st, p, nb, soFar);
    p += nb << 6;
    // The last consumed stripe, for a digest whose tail is shorter than a stripe.
    memory.copy(buf + BUF_SIZE - STRIPE, p - STRIPE, STRIPE);
  }
  memory.copy(buf, p, end - p);
  store<u32>(st, <u32>(end - p), ST_BUFFERED);
  store<u32>(st, soFar, ST_SOFAR);
}

/** Specialised update with 8 bytes (a u64, little-endian), e.g. a frame checksum. */
export function xxh3Update64(st: usize, v: u64): void {
  const buffered = <usize>load<u32>(st, ST_BUFFERED);
  if (buffered + 8 <= BUF_SIZE) {
    store<u64>(st + ST_BUF + buffered, v);
    store<u32>(st, <u32>(buffered + 8), ST_BUFFERED);
    store<u64>(st, load<u64>(st, ST_TOTAL) + 8, ST_TOTAL);
    return;
  }
  store<u64>(LAST_STRIPE_TMP, v);
  xxh3Update(st, LAST_STRIPE_TMP, 8);
}

/** Digest of everything fed so far; the state is left unchanged. */
export function xxh3Digest(st: usize): u64 {
  const total = load<u64>(st, ST_TOTAL);
  const buf = st + ST_BUF;
  const buffered = <usize>load<u32>(st, ST_BUFFERED);
  if (total <= 240) return xxh3(buf, <usize>total);
  const acc = ACC_TMP;
  memory.copy(acc, st, 64);
  if (buffered >= STRIPE) {
    const nb = (buffered - 1) >> 6;
    consumeStripes(acc, buf, nb, load<u32>(st, ST_SOFAR));
    accumulateLast(acc, buf + buffered - STRIPE);
  } else {
    const tmp = LAST_STRIPE_TMP;
    const catchup = STRIPE - buffered;
    memory.copy(tmp, buf + BUF_SIZE - catchup, catchup);
    memory.copy(tmp + catchup, buf, buffered);
    accumulateLast(acc, tmp);
  }
  return mergeAccs(acc, total);
}
