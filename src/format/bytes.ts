/**
 * Little-endian field access (docs/format.md: all integers on disk are LE). u64 values
 * are always bigint here: they can exceed 2^53 and must never pass through a
 * JS number unchecked.
 */

export function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)) + bytes[at + 3]! * 0x1000000;
}

export function readU64(bytes: Uint8Array, at: number): bigint {
  const low = readU32(bytes, at);
  const high = readU32(bytes, at + 4);
  // Below 2^53 (offsets, timestamps in µs, lengths) the number is exact and one
  // BigInt conversion is several times cheaper than shift-and-or on bigints.
  return high < 0x200000 ? BigInt(high * 0x100000000 + low) : (BigInt(high) << 32n) | BigInt(low);
}

/** A little-endian u128 (a WAL checksum, a message id). */
export function readU128(bytes: Uint8Array, at: number): bigint {
  return (readU64(bytes, at + 8) << 64n) | readU64(bytes, at);
}

/**
 * A u64 that is a byte count or position, as a number. Throws rather than
 * lose precision: callers use it only where docs/format.md §2.2 bounds the value far below 2^53.
 */
export function readU64AsSafeNumber(bytes: Uint8Array, at: number): number {
  const high = readU32(bytes, at + 4);
  if (high >= 0x200000) {
    throw new RangeError(`u64 at byte ${at} exceeds 2^53`);
  }
  return high * 0x100000000 + readU32(bytes, at);
}

/** Reads a u64 and reports values that do not fit a safe number as Infinity (for length checks). */
export function readU64Clamped(bytes: Uint8Array, at: number): number {
  const high = readU32(bytes, at + 4);
  if (high >= 0x200000) return Number.POSITIVE_INFINITY;
  return high * 0x100000000 + readU32(bytes, at);
}

export function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

export function writeU64(bytes: Uint8Array, at: number, value: bigint): void {
  const masked = BigInt.asUintN(64, value);
  writeU32(bytes, at, Number(masked & 0xffffffffn));
  writeU32(bytes, at + 4, Number(masked >> 32n));
}

export function isAllZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** A u64 (an XXH3-64, a checksum) as 16 lower-case hex digits: how reports, WAL findings and the repair journal write it. */
export function hex64(value: bigint): string {
  return value.toString(16).padStart(16, "0");
}
