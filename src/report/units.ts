/** Byte sizes, counts and short lines as people read them; apart from the formatter so that the plan text loads no colours. */

export { formatBytes, formatCount, formatHex64 } from "../domain/numbers.js";

/** The width a short finding line is cut to off a terminal: room for a path and the gist of the reason. */
export const BRIEF_COLUMNS = 100;
/** A short line is never cut narrower than this, however narrow the terminal. */
const MIN_BRIEF_COLUMNS = 60;

/** The width short lines are cut to: `columns` (a terminal's width) when given, BRIEF_COLUMNS otherwise, never below the minimum. */
export function briefColumns(columns: number | undefined): number {
  return Math.max(MIN_BRIEF_COLUMNS, columns ?? BRIEF_COLUMNS);
}

/** `text` cut at a word boundary to at most `columns` characters, ending in "…" when cut. */
export function clipLine(text: string, columns: number): string {
  if (text.length <= columns) return text;
  const room = Math.max(1, columns - 1);
  const space = text.lastIndexOf(" ", room);
  return `${text.slice(0, space > room / 2 ? space : room).trimEnd()}…`;
}

/** Microseconds since the epoch, in years 1970..9999, as ISO 8601 with µs; "" for anything else (not a plausible timestamp). */
export function isoMicros(micros: bigint): string {
  if (micros <= 0n || micros >= 253402300800000000n) return "";
  const date = new Date(Number(micros / 1000n)).toISOString();
  return date.slice(0, -1) + (micros % 1000n).toString().padStart(3, "0") + "Z";
}
