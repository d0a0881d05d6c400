/**
 * Numbers as people read them, one way everywhere (docs/interfaces.md §9.2):
 * counts, positions and sizes in bytes with thousands separators (`453,347`),
 * checksums and ids as `0x` and 16 hex digits. A low layer, so that every
 * message (recovery, node, repair) formats them alike; JSON keeps plain values.
 */

/** Groups digits for legibility: 2281701376 → "2,281,701,376". */
export function formatCount(value: number | bigint): string {
  return value.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Hex digits of a u64. */
const U64_HEX_DIGITS = 16;

/**
 * A checksum or id as `0x` and 16 hex digits (0x28a5835201419e2e,
 * 0x0f07c8a660179428); a wider value (a u128 trailer field) as 32.
 */
export function formatHex64(value: bigint): string {
  const hex = value.toString(16);
  const width = Math.ceil(Math.max(hex.length, 1) / U64_HEX_DIGITS) * U64_HEX_DIGITS;
  return `0x${hex.padStart(width, "0")}`;
}

/** 1536 → "1.5 KiB"; exact below 1 KiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${value} B`;
  return Number.isInteger(value) ? `${value} ${units[unit]}` : `${value.toFixed(1)} ${units[unit]}`;
}

/** "1 step", "3,000 steps", "2 entries". */
export function formatPlural(count: number, word: string, plural = `${word}s`): string {
  return `${formatCount(count)} ${count === 1 ? word : plural}`;
}
