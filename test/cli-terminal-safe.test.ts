/**
 * File and directory names holding terminal escape sequences
 * (`ESC ] 0 ; pwned BEL` retitles the terminal, `ESC [ 2 J` clears it) reach
 * every human-readable line escaped (`\x1b`), never as raw control bytes; the
 * JSON output keeps the exact names.
 */
import { copyFileSync, cpSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { escapeControl, escapeControlKeepingLines, terminalSafe } from "../src/report/terminal-safe.js";
import { type Run, runCli } from "./helpers/cli.js";
import { trackedTempDir } from "./helpers/fixtures.js";

const ESC = "\u001b";
const BEL = "\u0007";
/** A partition dir named to retitle the terminal. */
const TITLE_NAME = `9${ESC}]0;pwned${BEL}`;
/** A scratch file and a bad segment name that would clear the screen. */
const CLEAR = `${ESC}[2J`;
/** Every control character but the line feed: none may reach the terminal raw. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
/** The colour sequences segscan itself writes (SGR), removed before looking with FORCE_COLOR. */
const SGR = /\u001b\[[0-9;]*m/g;

const PARTITIONS = "streams/1/topics/1/partitions";

/** The text of a run that a terminal would show: stdout, then stderr. */
const shown = (run: Run): string => run.stdout + run.stderr;

let root: string;

beforeAll(async () => {
  root = join(trackedTempDir("segscan-terminal-"), "node");
  const generated = await runCli(["gen", root, "--node", "--scenario", "torn-tail"]);
  expect(generated.code, generated.stderr).toBe(0);
  const partitions = join(root, PARTITIONS);
  // A copy of the torn partition under a hostile name: repairable, an orphan dir of the node.
  cpSync(join(partitions, "1"), join(partitions, TITLE_NAME), { recursive: true });
  writeFileSync(join(partitions, "2", `x${CLEAR}.staging`), "scratch");
  writeFileSync(join(partitions, "2", `${CLEAR}.log`), "");
  const firstLog = readdirSync(join(partitions, "2")).find((name) => /^\d{20}\.log$/.test(name))!;
  copyFileSync(join(partitions, "2", firstLog), join(root, "..", `dump${CLEAR}.log`));
  symlinkSync("../../1", join(root, "streams/1/topics", `link${CLEAR}`));
});

describe("the escaping helpers", () => {
  it("show C0, DEL and C1 as \\xHH; the line-keeping form keeps only the line feed", () => {
    expect(escapeControl(`a${ESC}]0;t${BEL}b\n\t\u007f\u009bc`)).toBe("a\\x1b]0;t\\x07b\\x0a\\x09\\x7f\\x9bc");
    expect(escapeControlKeepingLines(`a${CLEAR}\nb\r`)).toBe("a\\x1b[2J\nb\\x0d");
    expect(escapeControl("streams/1/topics/1/partitions/1 · ok → é")).toBe("streams/1/topics/1/partitions/1 · ok → é");
  });

  it("terminalSafe copies plain data with every string escaped, leaving the original and non-strings alone", () => {
    const original = { path: `p${ESC}`, list: [`q${BEL}`, 7n, null], nested: { set: new Set([`r${ESC}`]) }, bytes: new Uint8Array([27]) };
    const copy = terminalSafe(original);
    expect(copy).toEqual({ path: "p\\x1b", list: ["q\\x07", 7n, null], nested: { set: new Set(["r\\x1b"]) }, bytes: original.bytes });
    expect(original.path).toBe(`p${ESC}`);
  });
});

describe("text output escapes control characters in names (scan, repair, restore, scrub, dump)", () => {
  for (const target of ["node root", "streams dir (streamed text report)"] as const) {
    it(`scan and repair (dry run) of the ${target}: no raw control byte, the names shown escaped`, async () => {
      const path = target === "node root" ? root : join(root, "streams");
      const [scan, repair, colored, verbose] = await Promise.all([
        runCli(["scan", path]),
        runCli(["repair", path]),
        runCli(["scan", path], { FORCE_COLOR: "1" }),
        runCli(["scan", path, "--verbose"]),
      ]);
      expect(scan.code).toBe(4);
      expect(repair.code).toBe(4);
      expect(verbose.code).toBe(4);
      for (const run of [scan, repair, verbose]) {
        expect(shown(run)).not.toMatch(RAW_CONTROL);
        expect(run.stdout).toContain("9\\x1b]0;pwned\\x07");
        expect(run.stderr).toContain("link\\x1b[2J");
      }
      expect(verbose.stdout).toContain("sweep x\\x1b[2J.staging");
      expect(verbose.stdout).toContain("ignored \\x1b[2J.log");
      // The next step's command shows the name as bash reads it back ($'…'), never as raw bytes.
      expect(scan.stdout).toContain("9\\x1b]0;pwned\\x07' --apply");
      expect(repair.stdout).toMatch(/partition .*9\\x1b\]0;pwned\\x07/);
      expect(colored.stdout).toMatch(SGR);
      expect(shown(colored).replace(SGR, "")).not.toMatch(RAW_CONTROL);
    });
  }

  it("--json keeps the exact names (JSON escapes them itself)", async () => {
    const run = await runCli(["scan", root, "--json"]);
    const report = JSON.parse(run.stdout) as { partitions: { path: string }[] };
    expect(report.partitions.map((p) => p.path)).toContain(join(root, PARTITIONS, TITLE_NAME));
    expect(run.stdout).not.toMatch(RAW_CONTROL);
  });

  it("repair --apply, restore, scrub and dump: no raw control byte", async () => {
    const partition = join(root, "..", "apply", TITLE_NAME);
    cpSync(join(root, PARTITIONS, TITLE_NAME), partition, { recursive: true });
    const applied = await runCli(["repair", partition, "--apply"]);
    expect(applied.code, applied.stderr).toBe(1);
    const restored = await runCli(["restore", partition]);
    expect(restored.code, restored.stderr).toBe(0);
    const [scrubbed, dumped] = await Promise.all([
      runCli(["scrub", join(root, PARTITIONS, TITLE_NAME), "--state", join(root, "..", "scrub.json"), "--reverify-after", "0"]),
      runCli(["dump", join(root, "..", `dump${CLEAR}.log`)]),
    ]);
    expect(dumped.code).toBe(0);
    expect(dumped.stdout).toContain("Dumping ");
    expect(dumped.stdout).toContain("dump\\x1b[2J.log");
    for (const run of [applied, restored, scrubbed, dumped]) expect(shown(run)).not.toMatch(RAW_CONTROL);
    expect(applied.stdout).toContain("9\\x1b]0;pwned\\x07");
    expect(restored.stdout).toContain("9\\x1b]0;pwned\\x07");
  });

  it("usage errors and commander's own messages escape the path or flag they quote", async () => {
    const [missing, unknownFlag] = await Promise.all([
      runCli(["restore", join(root, `missing${CLEAR}`)]),
      runCli(["scan", root, `--bogus${CLEAR}`]),
    ]);
    expect(missing.code).toBe(8);
    expect(missing.stderr).toContain("missing\\x1b[2J");
    expect(unknownFlag.code).toBe(16);
    for (const run of [missing, unknownFlag]) expect(shown(run)).not.toMatch(RAW_CONTROL);
  });
});
