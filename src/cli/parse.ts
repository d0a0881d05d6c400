/** Flag value parsers: a bad value is a commander InvalidArgumentError, so it exits 16. */
import { InvalidArgumentError } from "commander";

/** A non-negative integer, with `_` or `,` digit separators allowed. */
export function parseInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const text = raw.trim().replace(/[_,]/g, "");
    if (!/^\d+$/.test(text)) {
      throw new InvalidArgumentError(
        `must be a non-negative integer${min > 0 || max < Number.MAX_SAFE_INTEGER ? ` in [${min}, ${max}]` : ""}, got "${raw}"`,
      );
    }
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`must be an integer in [${min}, ${max}], got ${raw}`);
    }
    return value;
  };
}

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** A byte size: `65536`, `64KiB`, `1M`, `1.5MiB`, `1TiB` (binary units up to TiB; the flags' ranges end far below PiB). */
export function parseBytes(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(raw.replace(/[_,]/g, ""));
    const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
    if (!match || unit === undefined) {
      throw new InvalidArgumentError(`expected a byte size such as 1048576, 64KiB or 1MiB, got "${raw}"`);
    }
    const value = Math.round(Number(match[1]) * unit);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      // Spell out the bytes only when the flag was not already a plain byte count.
      const bytes = String(value) === raw.trim() ? "" : ` (${value} bytes)`;
      throw new InvalidArgumentError(`must be a size in [${min}, ${max}] bytes, got ${raw.trim()}${bytes}`);
    }
    return value;
  };
}

/**
 * A flag that may be given once: commander keeps the last of a repeated flag,
 * which would drop the first value silently, so a second one is a usage error
 * (`why` says why the flag takes one value).
 */
export function parseOnce(flag: string, why: string) {
  return (raw: string, previous: string | undefined): string => {
    if (previous !== undefined) {
      throw new InvalidArgumentError(`${flag} is given twice ("${previous}", then "${raw}"): ${why}; give it once`);
    }
    return raw;
  };
}

const DURATION_UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** A duration: `30d`, `12h`, `90m`, `45s`, `2w`, or `0` (no minimum age); in milliseconds. */
export function parseDuration(raw: string): number {
  const match = /^\s*(\d+)\s*([smhdw]?)\s*$/.exec(raw.replace(/[_,]/g, ""));
  const unit = match ? (match[2] === "" ? (match[1] === "0" ? 1 : undefined) : DURATION_UNITS_MS[match[2]!]) : undefined;
  if (!match || unit === undefined) throw new InvalidArgumentError(`expected a duration such as 30d, 12h, 90m or 0, got "${raw}"`);
  const value = Number(match[1]) * unit;
  if (!Number.isSafeInteger(value)) throw new InvalidArgumentError(`the duration ${raw.trim()} is too long`);
  return value;
}

/**
 * A path operand as the commands segscan prints will carry it: a relative
 * path beginning with `-` (given after `--`) gets `./` in front, so a next
 * step pasted from the report (`segscan repair ./-data`) reaches the command
 * as a path, never as an option (docs/interfaces.md §9.2). `-` alone (stdin
 * where a command takes it) is left as it is.
 */
export function operandPath(path: string): string {
  return path.startsWith("-") && path !== "-" ? `./${path}` : path;
}
