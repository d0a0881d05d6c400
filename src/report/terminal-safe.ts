/**
 * Terminal-safe text. File and directory names come from
 * the disk and may hold any byte but `/` and NUL: a name holding `ESC ] 0 ;
 * … BEL` retitles the operator's terminal, `ESC [ 2 J` clears it, a newline
 * forges a line of the report. Every human-readable line shows such a
 * character as a visible escape (`\x1b`) instead; JSON output is untouched
 * (it is exact JSON, and JSON.stringify escapes C0 itself).
 */

/** C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F): the code points a terminal may act on. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The same, except the line feed that separates a text's own lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose
const CONTROL_CHARACTERS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

/** `\xHH`: every character CONTROL_CHARACTERS matches is at most U+009F, so two hex digits name it. */
function visibleEscape(character: string): string {
  return `\\x${character.charCodeAt(0).toString(16).padStart(2, "0")}`;
}

/** `text` with every control character (C0, DEL, C1, newline included) shown as `\xHH`: for one name, path or message. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL_CHARACTERS, visibleEscape);
}

/**
 * `text` with every control character but the line feed shown as `\xHH`: for
 * text composed of several lines (a warning, an error) whose names were not
 * escaped on their own. A newline inside a name still breaks the line there,
 * but no escape sequence reaches the terminal.
 */
export function escapeControlKeepingLines(text: string): string {
  return text.replace(CONTROL_CHARACTERS_BUT_NEWLINE, visibleEscape);
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A copy of plain data (a report, a plan, a result) with every string passed
 * through `escapeControl`, for the text formatters: what they print is then
 * safe whichever field a name reaches them in. Arrays, plain objects, Sets and
 * Maps are copied; numbers, bigints, booleans, null and other objects are kept.
 * A value that holds no control character is returned as it is (the text
 * formatters only read it). Never hand the copy to anything that acts on the
 * paths (repair, restore).
 */
export function terminalSafe<T>(value: T): T {
  // Nearly every report holds no control character at all: then it is its own safe copy (docs/benchmarks.md: copying
  // each partition's report before printing it was a tenth of a scan of many small partitions).
  if (!holdsControl(value)) return value;
  return safeCopy(value);
}

/** A control character in any string `terminalSafe` would escape (values, Set members, Map keys and values). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose
const ANY_CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

function holdsControl(value: unknown): boolean {
  if (typeof value === "string") return ANY_CONTROL_CHARACTER.test(value);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsControl);
  if (value instanceof Set) return [...value].some(holdsControl);
  if (value instanceof Map) return [...value].some(([key, item]: [unknown, unknown]) => holdsControl(key) || holdsControl(item));
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (Object.hasOwn(value, key) && holdsControl((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function safeCopy<T>(value: T): T {
  if (typeof value === "string") return escapeControl(value) as T;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => safeCopy(item)) as T;
  if (value instanceof Set) return new Set([...value].map((item: unknown) => safeCopy(item))) as T;
  if (value instanceof Map) return new Map([...value].map(([key, item]: [unknown, unknown]) => [safeCopy(key), safeCopy(item)])) as T;
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = safeCopy(item);
  return copy as T;
}
