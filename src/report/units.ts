/** Byte sizes and counts as people read them; apart from the formatter so that the plan text loads no colours (issue 23). */

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

/** Groups digits for legibility: 2281701376 → "2,281,701,376". */
export function formatCount(value: number | bigint): string {
  return value.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Microseconds since the epoch, in years 1970..9999, as ISO 8601 with µs; "" for anything else (not a plausible timestamp). */
export function isoMicros(micros: bigint): string {
  if (micros <= 0n || micros >= 253402300800000000n) return "";
  const date = new Date(Number(micros / 1000n)).toISOString();
  return date.slice(0, -1) + (micros % 1000n).toString().padStart(3, "0") + "Z";
}
