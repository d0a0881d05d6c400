/**
 * A command an operator can paste (docs/interfaces.md §9.2): every next step
 * that names a segscan command carries it as an argv array (for machines, the
 * JSON) and prints it shell-quoted (for people, the text and HTML). Paths come
 * from the disk and may hold any byte but `/` and NUL, so quoting is exact:
 * what bash (or zsh, ksh, dash ≥ 0.5.12) parses from `shellQuote(argv)` is
 * `argv` again, byte for byte.
 */

/** A word bash reads as itself: no quoting needed (a conservative set; `=` and `@` only after the first character). */
const PLAIN_WORD = /^[A-Za-z0-9_/.,:+-][A-Za-z0-9_/.,:+=@%-]*$/;

/**
 * Characters single quotes cannot carry through a terminal intact: C0, DEL, C1
 * (a terminal acts on them, and the text report shows them escaped), and the
 * Unicode line and bidi controls that reorder or break what is shown.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose
const NEEDS_ANSI_C = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** One character inside `$'…'`: the C escapes bash understands, `\xHH` or `\uHHHH` for the rest. */
function ansiCEscape(character: string): string {
  switch (character) {
    case "\\":
      return "\\\\";
    case "'":
      return "\\'";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
  }
  if (!NEEDS_ANSI_C.test(character)) return character;
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** One argument as a shell word: as it is when plain, in single quotes otherwise, in `$'…'` when it holds a control character. */
export function shellQuoteWord(word: string): string {
  if (word.length === 0) return "''";
  if (PLAIN_WORD.test(word)) return word;
  if (NEEDS_ANSI_C.test(word)) return `$'${Array.from(word, ansiCEscape).join("")}'`;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A whole command line: each argument quoted, joined by spaces. */
export function shellQuote(argv: readonly string[]): string {
  return argv.map(shellQuoteWord).join(" ");
}
