/**
 * XXH3-64 (seed 0, default 192-byte secret) in pure TypeScript.
 *
 * Written from the xxHash specification (doc/xxhash_spec.md in Cyan4973/xxHash).
 *
 * All 64-bit arithmetic is done on (hi, lo) pairs of unsigned 32-bit numbers;
 * BigInt is only used to build the returned value. In the long-input hot loop
 * the 8 accumulators live in 16 local doubles that are allowed to grow past
 * 2^32 ("deferred carries"): each one receives at most 2 additions of a value
 * < 2^32 per stripe and at most 16 stripes are run before the halves are
 * normalised again, so every sum stays far below 2^53 and is exact.
 *
 * The high half of a 32x32->64 product is recovered exactly from the double
 * product: the low half is known exactly from Math.imul, and
 * (a*b - lo) / 2^32 is within 2^-20 of the integer high half, so rounding it
 * to the nearest integer gives the exact value.
 */

/** The default 192-byte kSecret, exported so the AssemblyScript port can be checked against it. */
export const XXH3_DEFAULT_SECRET: Uint8Array = Uint8Array.from([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97,
  0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff,
  0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91,
  0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46,
  0xa9, 0xde, 0xac, 0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0,
  0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81,
  0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b,
  0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28,
  0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]);

const SECRET_LEN = 192;
const STRIPE_LEN = 64;
const STRIPES_PER_BLOCK = (SECRET_LEN - STRIPE_LEN) / 8; // 16
const MIDSIZE_MAX = 240;
/** Secret byte offsets used by the long path. */
const SECRET_SCRAMBLE = SECRET_LEN - STRIPE_LEN; // 128
const SECRET_LAST_STRIPE = SECRET_LEN - 71; // 121
const SECRET_MERGE = 11;
/** Streaming buffer size: unconsumed input kept by Xxh3Stream. */
const BUF_LEN = 256;

const TWO_32 = 4294967296;
const TWO_M32 = 1 / TWO_32;
/** Adding and subtracting 1.5 * 2^52 rounds a double of magnitude < 2^51 to the nearest integer. */
const ROUND = 6755399441055744;

// Constants as (hi, lo) u32 halves.
const P32_1 = 0x9e3779b1;
const P32_2 = 0x85ebca77;
const P32_3 = 0xc2b2ae3d;
const P64_1_H = 0x9e3779b1,
  P64_1_L = 0x85ebca87;
const P64_2_H = 0xc2b2ae3d,
  P64_2_L = 0x27d4eb4f;
const P64_3_H = 0x165667b1,
  P64_3_L = 0x9e3779f9;
const P64_4_H = 0x85ebca77,
  P64_4_L = 0xc2b2ae63;
const P64_5_H = 0x27d4eb2f,
  P64_5_L = 0x165667c5;
const PMX1_H = 0x16566791,
  PMX1_L = 0x9e3779f9;
const PMX2_H = 0x9fb21c65,
  PMX2_L = 0x1e98df25;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** S32[o] = little-endian u32 of the secret at byte offset o (any o in 0..188). */
const S32 = new Uint32Array(SECRET_LEN - 3);
for (let o = 0; o < S32.length; o++) {
  S32[o] =
    (XXH3_DEFAULT_SECRET[o]! |
      (XXH3_DEFAULT_SECRET[o + 1]! << 8) |
      (XXH3_DEFAULT_SECRET[o + 2]! << 16) |
      (XXH3_DEFAULT_SECRET[o + 3]! << 24)) >>>
    0;
}

// ---------------------------------------------------------------------------
// Scalar u64 helpers on (hi, lo) pairs. Results that need two halves return
// the low half and leave the high half in `rh`.
// ---------------------------------------------------------------------------

let rh = 0;

/** High 32 bits of the 64-bit product of two u32 values. */
function mulhi32(a: number, b: number): number {
  const lo = Math.imul(a, b) >>> 0;
  return (a * b - lo) * TWO_M32 + ROUND - ROUND;
}

/** (ah:al) * (bh:bl) mod 2^64. */
function mul64(ah: number, al: number, bh: number, bl: number): number {
  al >>>= 0;
  bl >>>= 0;
  rh = (mulhi32(al, bl) + Math.imul(al, bh) + Math.imul(ah, bl)) >>> 0;
  return Math.imul(al, bl) >>> 0;
}

/** 64x64 -> 128 multiply, folded: low64 xor high64. */
function mulFold(ah: number, al: number, bh: number, bl: number): number {
  ah >>>= 0;
  al >>>= 0;
  bh >>>= 0;
  bl >>>= 0;
  const ll = Math.imul(al, bl) >>> 0;
  const llH = mulhi32(al, bl);
  const lh = Math.imul(al, bh) >>> 0;
  const lhH = mulhi32(al, bh);
  const hl = Math.imul(ah, bl) >>> 0;
  const hlH = mulhi32(ah, bl);
  const hh = Math.imul(ah, bh) >>> 0;
  const hhH = mulhi32(ah, bh);
  const s1 = llH + lh + hl; // < 3 * 2^32
  const w1 = s1 >>> 0;
  const s2 = lhH + hlH + hh + (s1 - w1) * TWO_M32;
  const w2 = s2 >>> 0;
  const w3 = (hhH + (s2 - w2) * TWO_M32) >>> 0;
  rh = (w1 ^ w3) >>> 0;
  return (ll ^ w2) >>> 0;
}

/** XXH3 avalanche. */
function avalanche(h: number, l: number): number {
  l = (l ^ (h >>> 5)) >>> 0; // x ^= x >> 37
  l = mul64(h, l, PMX1_H, PMX1_L);
  h = rh;
  return (l ^ h) >>> 0; // x ^= x >> 32 (hi unchanged, stays in rh)
}

/** XXH64 avalanche. */
function avalancheXxh64(h: number, l: number): number {
  l = (l ^ (h >>> 1)) >>> 0; // x ^= x >> 33
  l = mul64(h, l, P64_2_H, P64_2_L);
  h = rh;
  l = (l ^ ((l >>> 29) | (h << 3))) >>> 0; // x ^= x >> 29
  h = (h ^ (h >>> 29)) >>> 0;
  l = mul64(h, l, P64_3_H, P64_3_L);
  h = rh;
  return (l ^ h) >>> 0; // x ^= x >> 32 (hi stays in rh)
}

function bswap32(x: number): number {
  return (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

function readU32(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

const OUT = new DataView(new ArrayBuffer(8));
function toBigInt(h: number, l: number): bigint {
  OUT.setUint32(0, l, true);
  OUT.setUint32(4, h, true);
  return OUT.getBigUint64(0, true);
}

// ---------------------------------------------------------------------------
// Short inputs (0..240 bytes).
// ---------------------------------------------------------------------------

/** Result of the short path (b[off .. off+len)), low half returned, high half in rh. */
function hashShort(b: Uint8Array, off: number, len: number): number {
  if (len <= 16) {
    if (len > 8) return len9to16(b, off, len);
    if (len >= 4) return len4to8(b, off, len);
    if (len > 0) return len1to3(b, off, len);
    // empty: avalanche_XXH64(secret[56:64] ^ secret[64:72])
    return avalancheXxh64((S32[60]! ^ S32[68]!) >>> 0, (S32[56]! ^ S32[64]!) >>> 0);
  }
  if (len <= 128) return len17to128(b, off, len);
  return len129to240(b, off, len);
}

function len1to3(b: Uint8Array, off: number, len: number): number {
  const combined = b[off + len - 1]! | (len << 8) | (b[off]! << 16) | (b[off + (len >>> 1)]! << 24);
  const s = S32[0]! ^ S32[4]!;
  return avalancheXxh64(0, (s ^ combined) >>> 0);
}

function len4to8(b: Uint8Array, off: number, len: number): number {
  const first = readU32(b, off);
  const last = readU32(b, off + len - 4);
  // (secret[8:16] ^ secret[16:24]) ^ (last | first << 32)
  let h = (S32[12]! ^ S32[20]! ^ first) >>> 0;
  let l = (S32[8]! ^ S32[16]! ^ last) >>> 0;
  // x ^= rotl(x, 49) ^ rotl(x, 24)
  const r49h = (l << 17) | (h >>> 15);
  const r49l = (h << 17) | (l >>> 15);
  const r24h = (h << 24) | (l >>> 8);
  const r24l = (l << 24) | (h >>> 8);
  h = (h ^ r49h ^ r24h) >>> 0;
  l = (l ^ r49l ^ r24l) >>> 0;
  l = mul64(h, l, PMX2_H, PMX2_L);
  h = rh;
  l = (l ^ ((h >>> 3) + len)) >>> 0; // x ^= (x >> 35) + len
  l = mul64(h, l, PMX2_H, PMX2_L);
  h = rh;
  l = (l ^ ((l >>> 28) | (h << 4))) >>> 0; // x ^= x >> 28
  rh = (h ^ (h >>> 28)) >>> 0;
  return l;
}

function len9to16(b: Uint8Array, off: number, len: number): number {
  const lowH = (S32[28]! ^ S32[36]! ^ readU32(b, off + 4)) >>> 0;
  const lowL = (S32[24]! ^ S32[32]! ^ readU32(b, off)) >>> 0;
  const highH = (S32[44]! ^ S32[52]! ^ readU32(b, off + len - 4)) >>> 0;
  const highL = (S32[40]! ^ S32[48]! ^ readU32(b, off + len - 8)) >>> 0;
  const mL = mulFold(lowH, lowL, highH, highL);
  const mH = rh;
  // len + bswap64(low) + high + fold
  const sl = len + bswap32(lowH) + highL + mL;
  const l = sl >>> 0;
  const h = (bswap32(lowL) + highH + mH + (sl - l) * TWO_M32) >>> 0;
  return avalanche(h, l);
}

/** mixStep on the 16 input bytes at b[p] with the secret at byte offset so; low half returned, high in rh. */
function mix16(b: Uint8Array, p: number, so: number): number {
  return mulFold(
    readU32(b, p + 4) ^ S32[so + 4]!,
    readU32(b, p) ^ S32[so]!,
    readU32(b, p + 12) ^ S32[so + 12]!,
    readU32(b, p + 8) ^ S32[so + 8]!,
  );
}

function len17to128(b: Uint8Array, off: number, len: number): number {
  let l = mul64(0, len, P64_1_H, P64_1_L);
  let h = rh;
  for (let i = (len - 1) >> 5; i >= 0; i--) {
    const ml1 = mix16(b, off + i * 16, i * 32);
    const mh1 = rh;
    const ml2 = mix16(b, off + len - i * 16 - 16, i * 32 + 16);
    const mh2 = rh;
    const s = l + ml1 + ml2;
    l = s >>> 0;
    h = (h + mh1 + mh2 + (s - l) * TWO_M32) >>> 0;
  }
  return avalanche(h, l);
}

function len129to240(b: Uint8Array, off: number, len: number): number {
  let l = mul64(0, len, P64_1_H, P64_1_L);
  let h = rh;
  for (let i = 0; i < 8; i++) {
    const ml = mix16(b, off + i * 16, i * 16);
    const s = l + ml;
    l = s >>> 0;
    h = (h + rh + (s - l) * TWO_M32) >>> 0;
  }
  l = avalanche(h, l);
  h = rh;
  const chunks = len >>> 4;
  for (let i = 8; i < chunks; i++) {
    const ml = mix16(b, off + i * 16, (i - 8) * 16 + 3);
    const s = l + ml;
    l = s >>> 0;
    h = (h + rh + (s - l) * TWO_M32) >>> 0;
  }
  const ml = mix16(b, off + len - 16, 119);
  const s = l + ml;
  l = s >>> 0;
  h = (h + rh + (s - l) * TWO_M32) >>> 0;
  return avalanche(h, l);
}

// ---------------------------------------------------------------------------
// Long inputs (> 240 bytes): 8 accumulators, acc[2i] = low half, acc[2i+1] = high half.
// ---------------------------------------------------------------------------

function initAcc(acc: Uint32Array): void {
  acc[0] = P32_3;
  acc[1] = 0;
  acc[2] = P64_1_L;
  acc[3] = P64_1_H;
  acc[4] = P64_2_L;
  acc[5] = P64_2_H;
  acc[6] = P64_3_L;
  acc[7] = P64_3_H;
  acc[8] = P64_4_L;
  acc[9] = P64_4_H;
  acc[10] = P32_2;
  acc[11] = 0;
  acc[12] = P64_5_L;
  acc[13] = P64_5_H;
  acc[14] = P32_1;
  acc[15] = 0;
}

/**
 * Accumulates n stripes (n <= 16) read as u32 words w[wi ..], using the secret
 * from byte offset so (advancing by 8 per stripe). No scrambling here.
 */
function accumulate(acc: Uint32Array, w: Uint32Array, wi: number, n: number, so: number): void {
  let l0: number = acc[0]!,
    h0: number = acc[1]!;
  let l1: number = acc[2]!,
    h1: number = acc[3]!;
  let l2: number = acc[4]!,
    h2: number = acc[5]!;
  let l3: number = acc[6]!,
    h3: number = acc[7]!;
  let l4: number = acc[8]!,
    h4: number = acc[9]!;
  let l5: number = acc[10]!,
    h5: number = acc[11]!;
  let l6: number = acc[12]!,
    h6: number = acc[13]!;
  let l7: number = acc[14]!,
    h7: number = acc[15]!;
  let dl: number, dh: number, vl: number, vh: number, pl: number;
  for (const end = wi + n * 16; wi < end; wi += 16, so += 8) {
    // lane 0: product into acc 0, raw data into acc 1
    dl = w[wi + 0]!;
    dh = w[wi + 1]!;
    vl = (dl ^ S32[so + 0]!) >>> 0;
    vh = (dh ^ S32[so + 4]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l0 += pl;
    h0 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l1 += dl;
    h1 += dh;
    // lane 1: product into acc 1, raw data into acc 0
    dl = w[wi + 2]!;
    dh = w[wi + 3]!;
    vl = (dl ^ S32[so + 8]!) >>> 0;
    vh = (dh ^ S32[so + 12]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l1 += pl;
    h1 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l0 += dl;
    h0 += dh;
    // lane 2: product into acc 2, raw data into acc 3
    dl = w[wi + 4]!;
    dh = w[wi + 5]!;
    vl = (dl ^ S32[so + 16]!) >>> 0;
    vh = (dh ^ S32[so + 20]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l2 += pl;
    h2 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l3 += dl;
    h3 += dh;
    // lane 3: product into acc 3, raw data into acc 2
    dl = w[wi + 6]!;
    dh = w[wi + 7]!;
    vl = (dl ^ S32[so + 24]!) >>> 0;
    vh = (dh ^ S32[so + 28]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l3 += pl;
    h3 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l2 += dl;
    h2 += dh;
    // lane 4: product into acc 4, raw data into acc 5
    dl = w[wi + 8]!;
    dh = w[wi + 9]!;
    vl = (dl ^ S32[so + 32]!) >>> 0;
    vh = (dh ^ S32[so + 36]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l4 += pl;
    h4 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l5 += dl;
    h5 += dh;
    // lane 5: product into acc 5, raw data into acc 4
    dl = w[wi + 10]!;
    dh = w[wi + 11]!;
    vl = (dl ^ S32[so + 40]!) >>> 0;
    vh = (dh ^ S32[so + 44]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l5 += pl;
    h5 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l4 += dl;
    h4 += dh;
    // lane 6: product into acc 6, raw data into acc 7
    dl = w[wi + 12]!;
    dh = w[wi + 13]!;
    vl = (dl ^ S32[so + 48]!) >>> 0;
    vh = (dh ^ S32[so + 52]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l6 += pl;
    h6 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l7 += dl;
    h7 += dh;
    // lane 7: product into acc 7, raw data into acc 6
    dl = w[wi + 14]!;
    dh = w[wi + 15]!;
    vl = (dl ^ S32[so + 56]!) >>> 0;
    vh = (dh ^ S32[so + 60]!) >>> 0;
    pl = Math.imul(vl, vh) >>> 0;
    l7 += pl;
    h7 += (vl * vh - pl) * TWO_M32 + ROUND - ROUND;
    l6 += dl;
    h6 += dh;
  }
  // Normalise the deferred carries back into u32 halves.
  acc[0] = l0;
  acc[1] = h0 + (l0 - (l0 >>> 0)) * TWO_M32;
  acc[2] = l1;
  acc[3] = h1 + (l1 - (l1 >>> 0)) * TWO_M32;
  acc[4] = l2;
  acc[5] = h2 + (l2 - (l2 >>> 0)) * TWO_M32;
  acc[6] = l3;
  acc[7] = h3 + (l3 - (l3 >>> 0)) * TWO_M32;
  acc[8] = l4;
  acc[9] = h4 + (l4 - (l4 >>> 0)) * TWO_M32;
  acc[10] = l5;
  acc[11] = h5 + (l5 - (l5 >>> 0)) * TWO_M32;
  acc[12] = l6;
  acc[13] = h6 + (l6 - (l6 >>> 0)) * TWO_M32;
  acc[14] = l7;
  acc[15] = h7 + (l7 - (l7 >>> 0)) * TWO_M32;
}

/** Scrambles the accumulators with the last 64 bytes of the secret (end of a block). */
function scramble(acc: Uint32Array): void {
  for (let i = 0; i < 8; i++) {
    const so = SECRET_SCRAMBLE + 8 * i;
    const ah = acc[2 * i + 1]!;
    // x ^= x >> 47 touches only the low half; then xor secret
    const l = (acc[2 * i]! ^ (ah >>> 15) ^ S32[so]!) >>> 0;
    const h = (ah ^ S32[so + 4]!) >>> 0;
    // x *= PRIME32_1 (mod 2^64)
    acc[2 * i] = Math.imul(l, P32_1);
    acc[2 * i + 1] = mulhi32(l, P32_1) + Math.imul(h, P32_1);
  }
}

/**
 * Runs n whole stripes of words w[wi ..] through the block machinery, starting
 * `done` stripes into the current block; scrambles at every block end. Returns
 * the new stripe count within the block.
 */
function consumeWords(acc: Uint32Array, done: number, w: Uint32Array, wi: number, n: number): number {
  while (n > 0) {
    const m = Math.min(n, STRIPES_PER_BLOCK - done);
    accumulate(acc, w, wi, m, done * 8);
    wi += m * 16;
    n -= m;
    done += m;
    if (done === STRIPES_PER_BLOCK) {
      scramble(acc);
      done = 0;
    }
  }
  return done;
}

/** Scratch for unaligned (or big-endian) input: 64 KiB of words. */
const SCRATCH_STRIPES = 1024;
const SCRATCH32 = new Uint32Array(SCRATCH_STRIPES * 16);
const SCRATCH8 = new Uint8Array(SCRATCH32.buffer);

/** Copies nWords little-endian u32 words from b[off ..] into SCRATCH32[0 ..]. */
function loadScratch(b: Uint8Array, off: number, nWords: number): void {
  if (LITTLE_ENDIAN) {
    SCRATCH8.set(b.subarray(off, off + nWords * 4));
  } else {
    for (let i = 0; i < nWords; i++) SCRATCH32[i] = readU32(b, off + 4 * i);
  }
}

/** Like consumeWords, but for n stripes of bytes b[off ..] (any alignment). */
function consumeBytes(acc: Uint32Array, done: number, b: Uint8Array, off: number, n: number): number {
  if (n === 0) return done;
  const at = b.byteOffset + off;
  if (LITTLE_ENDIAN && (at & 3) === 0) {
    return consumeWords(acc, done, new Uint32Array(b.buffer, at, n * 16), 0, n);
  }
  while (n > 0) {
    const m = Math.min(n, SCRATCH_STRIPES);
    loadScratch(b, off, m * 16);
    done = consumeWords(acc, done, SCRATCH32, 0, m);
    off += m * STRIPE_LEN;
    n -= m;
  }
  return done;
}

/** Accumulates the final stripe b[off .. off+64) with its dedicated secret offset. */
function accumulateLastStripe(acc: Uint32Array, b: Uint8Array, off: number): void {
  loadScratch(b, off, 16);
  accumulate(acc, SCRATCH32, 0, 1, SECRET_LAST_STRIPE);
}

/** Final merge + avalanche for total input length `len` (a safe integer); low half returned, high in rh. */
function finalMerge(acc: Uint32Array, len: number): number {
  const lenH = Math.floor(len * TWO_M32) >>> 0;
  let l = mul64(lenH, len >>> 0, P64_1_H, P64_1_L);
  let h = rh;
  for (let i = 0; i < 4; i++) {
    const so = SECRET_MERGE + 16 * i;
    const ml = mulFold(
      acc[4 * i + 1]! ^ S32[so + 4]!,
      acc[4 * i]! ^ S32[so]!,
      acc[4 * i + 3]! ^ S32[so + 12]!,
      acc[4 * i + 2]! ^ S32[so + 8]!,
    );
    const s = l + ml;
    l = s >>> 0;
    h = (h + rh + (s - l) * TWO_M32) >>> 0;
  }
  return avalanche(h, l);
}

const ONE_SHOT_ACC = new Uint32Array(16);

/** XXH3-64, seed 0, default secret, as an unsigned bigint. */
export function xxh3_64(bytes: Uint8Array): bigint {
  const len = bytes.length;
  if (len <= MIDSIZE_MAX) {
    const l = hashShort(bytes, 0, len);
    return toBigInt(rh, l);
  }
  const acc = ONE_SHOT_ACC;
  initAcc(acc);
  // Every stripe but the one holding the last byte; the tail is then re-read as the last 64 bytes.
  consumeBytes(acc, 0, bytes, 0, Math.floor((len - 1) / STRIPE_LEN));
  accumulateLastStripe(acc, bytes, len - STRIPE_LEN);
  const l = finalMerge(acc, len);
  return toBigInt(rh, l);
}

const DIGEST_ACC = new Uint32Array(16);
const LAST_STRIPE = new Uint8Array(STRIPE_LEN);

/**
 * Streaming XXH3-64: update() across arbitrary chunk boundaries gives the same digest as one-shot.
 *
 * Invariants: `buf[0 .. bufLen)` holds all input not yet run through the
 * accumulators (1..256 bytes once anything was consumed; a stripe is consumed
 * only when at least one more byte is known to follow it). While
 * bufLen < 64 after a consumption, `buf[192 .. 256)` holds the last 64
 * consumed bytes, so the final stripe (last 64 input bytes) can be rebuilt.
 */
export class Xxh3Stream {
  private readonly acc = new Uint32Array(16);
  private readonly buf = new Uint8Array(BUF_LEN);
  private readonly buf32 = new Uint32Array(this.buf.buffer);
  private bufLen = 0;
  /** Stripes consumed in the current block (0..15). */
  private done = 0;
  private total = 0;

  constructor() {
    initAcc(this.acc);
  }

  reset(): this {
    initAcc(this.acc);
    this.bufLen = 0;
    this.done = 0;
    this.total = 0;
    return this;
  }

  update(bytes: Uint8Array): this {
    const n = bytes.length;
    if (n === 0) return this;
    this.total += n;
    const buf = this.buf;
    if (this.bufLen + n <= BUF_LEN) {
      buf.set(bytes, this.bufLen);
      this.bufLen += n;
      return this;
    }
    let pos = 0;
    if (this.bufLen > 0) {
      // Fill the buffer; more input follows it, so all 4 of its stripes can go.
      pos = BUF_LEN - this.bufLen;
      buf.set(bytes.subarray(0, pos), this.bufLen);
      this.done = LITTLE_ENDIAN
        ? consumeWords(this.acc, this.done, this.buf32, 0, BUF_LEN / STRIPE_LEN)
        : consumeBytes(this.acc, this.done, buf, 0, BUF_LEN / STRIPE_LEN);
      this.bufLen = 0;
      // buf[192 .. 256) now holds the last consumed stripe.
    }
    let rest = n - pos; // >= 1
    if (rest > STRIPE_LEN) {
      const k = Math.floor((rest - 1) / STRIPE_LEN);
      this.done = consumeBytes(this.acc, this.done, bytes, pos, k);
      pos += k * STRIPE_LEN;
      rest -= k * STRIPE_LEN; // 1..64
      buf.set(bytes.subarray(pos - STRIPE_LEN, pos), BUF_LEN - STRIPE_LEN);
    }
    buf.set(bytes.subarray(pos), 0);
    this.bufLen = rest;
    return this;
  }

  digest(): bigint {
    const total = this.total;
    const buf = this.buf;
    const bufLen = this.bufLen;
    if (total <= MIDSIZE_MAX) {
      // Nothing consumed yet: the whole input is in the buffer.
      const l = hashShort(buf, 0, total);
      return toBigInt(rh, l);
    }
    const acc = DIGEST_ACC;
    acc.set(this.acc);
    const k = Math.floor((bufLen - 1) / STRIPE_LEN);
    if (LITTLE_ENDIAN) consumeWords(acc, this.done, this.buf32, 0, k);
    else consumeBytes(acc, this.done, buf, 0, k);
    if (bufLen >= STRIPE_LEN) {
      accumulateLastStripe(acc, buf, bufLen - STRIPE_LEN);
    } else {
      const fromPrev = STRIPE_LEN - bufLen;
      LAST_STRIPE.set(buf.subarray(BUF_LEN - fromPrev, BUF_LEN), 0);
      LAST_STRIPE.set(buf.subarray(0, bufLen), fromPrev);
      accumulateLastStripe(acc, LAST_STRIPE, 0);
    }
    const l = finalMerge(acc, total);
    return toBigInt(rh, l);
  }
}
