import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shellQuote, shellQuoteWord } from "../src/domain/command.js";

/** What bash parses from `line`: each word on its own, NUL-separated. */
function bashWords(line: string): string[] {
  const out = execFileSync("bash", ["-c", `printf '%s\\0' ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

describe("shellQuote", () => {
  it("leaves plain words alone and quotes the rest", () => {
    expect(shellQuote(["segscan", "repair", "/var/lib/iggy", "--apply"])).toBe("segscan repair /var/lib/iggy --apply");
    expect(shellQuoteWord("a b")).toBe("'a b'");
    expect(shellQuoteWord("it's")).toBe(`'it'\\''s'`);
    expect(shellQuoteWord("")).toBe("''");
    expect(shellQuoteWord("<node root>")).toBe("'<node root>'");
    expect(shellQuoteWord("a\nb")).toBe("$'a\\nb'");
    expect(shellQuoteWord("\u001b]0;x\u0007")).toBe("$'\\x1b]0;x\\x07'");
  });

  it("bash reads back exactly the argv it was given, whatever the bytes", () => {
    const word = fc.string({
      unit: fc.constantFrom(
        "a",
        " ",
        "'",
        '"',
        "\\",
        "$",
        "`",
        "!",
        "*",
        "\n",
        "\r",
        "\t",
        "\u001b",
        "é",
        "\u202e",
        "~",
        "#",
        ";",
        "&",
        "|",
        "(",
        "=",
        "@",
        "-",
      ),
      maxLength: 12,
    });
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 4 }), (argv) => {
        expect(bashWords(shellQuote(argv))).toEqual(argv);
      }),
      { numRuns: 150 },
    );
  });
});
