/**
 * The operator's first screen (docs/interfaces.md §9.2 "The text report"):
 * problems first, each finding one short line with a next step that runs as
 * printed, clean partitions counted, the full explanation under --verbose;
 * next steps name the real path, shell-quoted, with the argv beside them in
 * the JSON; one node cannot claim a peer holds what it lacks; help, numbers
 * and units said one way. Through the BUILT CLI, on data written by `segscan gen`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellQuote } from "../src/domain/command.js";
import type { JsonScanReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { type Run, runCli } from "./helpers/cli.js";

let root: string;

function json(run: Run): JsonScanReport {
  const parsed = JSON.parse(run.stdout) as unknown;
  expect(validateJsonReport(parsed)).toEqual([]);
  return parsed as JsonScanReport;
}

/** Every `next step` and `nextCommand` of a --json report: the partitions' and every node finding's. */
function nextSteps(report: JsonScanReport): { nextStep: string; nextCommand?: string[] | null }[] {
  const steps: { nextStep: string; nextCommand?: string[] | null }[] = [...report.partitions];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === "object") {
      if ("nextStep" in value && "code" in value) steps.push(value as { nextStep: string; nextCommand?: string[] | null });
      for (const inner of Object.values(value)) collect(inner);
    }
  };
  collect(report.node);
  collect(report.nodes);
  return steps;
}

/** The argv bash reads from a printed command line (its words after `segscan`, printed NUL-separated). */
function bashArgv(commandLine: string): string[] {
  const run = spawnSync("bash", ["-c", `segscan() { printf '%s\\0' segscan "$@"; }; ${commandLine}`], { encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split("\0").slice(0, -1);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-first-screen-"));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("a newcomer's first 24 lines (1,000 partitions, one damaged, a torn WAL)", () => {
  let node: string;
  let text: Run;

  beforeAll(async () => {
    node = join(root, "big-node");
    const gen = await runCli([
      "gen",
      node,
      "--node-fault",
      "wal-torn-tail",
      "--scenario",
      "payload-bitflip",
      "--topics",
      "10",
      "--partitions",
      "100",
      "--size",
      "tiny",
      "--segment-bytes",
      "8KiB",
    ]);
    expect(gen.code, gen.stderr).toBe(0);
    text = await runCli(["scan", node]);
  }, 600_000);

  it("shows the verdict, both problems and their runnable commands within the first 24 lines", () => {
    expect(text.code).toBe(4);
    const first = text.stdout.split("\n").slice(0, 24);
    expect(first[0]).toBe("verdict REFUSED");
    const damaged = join(node, "streams", "1", "topics", "1", "partitions", "1");
    const at = (pattern: RegExp): number => first.findIndex((line) => pattern.test(line));
    // The torn WAL: its finding in one line, then its next step ending in the command.
    const wal = at(/^ {2}repairable +WalTornTail metadata\/journal\.wal: /);
    expect(wal).toBeGreaterThan(0);
    expect(first[wal + 1]).toBe(`             next step: repair: ${shellQuote(["segscan", "repair", node, "--apply"])}`);
    // The damaged partition: its path, verdict and action, its finding, its next step.
    const partition = at(new RegExp(`^${damaged.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}  REFUSED → tombstone$`));
    expect(partition).toBeGreaterThan(wal);
    expect(first[partition + 1]).toMatch(/^ {2}InteriorDamage: proven 0\.\.\d+ .*· unreadable \d+\.\.\d+ .*· intact \d+\.\.\d+/);
    expect(first[partition + 2]).toBe(`  next step: salvage: ${shellQuote(["segscan", "salvage", damaged, "--apply"])}`);
    expect(first).toContain("999 clean partitions (--all lists them)");
    expect(first.some((line) => line.startsWith("verdict REFUSED · 1,000 partitions: 999 clean, 0 repairable, 1 refused"))).toBe(true);
    // Each finding is one short line, cut to 100 columns (only a command is never cut).
    for (const line of [first[wal]!, first[partition + 1]!]) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it("--verbose gives the full explanation; --all lists the clean partitions too", async () => {
    const [verbose, all] = await Promise.all([runCli(["scan", node, "--verbose"]), runCli(["scan", node, "--all"])]);
    expect(verbose.code).toBe(4);
    expect(verbose.stdout).toMatch(/is followed by a complete, verifying batch at byte [\d,]+ that extends the chain/);
    expect(verbose.stdout).toMatch(/next step: salvage: segscan salvage \S+ --apply keeps 0\.\.\d+ and \d+\.\.\d+ and records/);
    expect(verbose.stdout).toContain("999 clean partitions (--all lists them)");
    expect(all.code).toBe(4);
    const cleanLines = all.stdout.split("\n").filter((line) => / {2}clean {2}offsets /.test(line));
    expect(cleanLines).toHaveLength(999);
  });
});

describe.concurrent("next steps run as printed", () => {
  it("a node in a dir named with a space, a quote and a dollar: text and JSON name the real path, bash reads back the argv", async () => {
    const dir = join(root, "it's a $dir");
    await mkdir(dir);
    const node = join(dir, "node");
    expect((await runCli(["gen", node, "--size", "tiny", "--scenario", "torn-tail", "--node-fault", "wal-torn-tail"])).code).toBe(0);
    const [text, full, verbose] = await Promise.all([
      runCli(["scan", node]),
      runCli(["scan", node, "--json"]),
      runCli(["scan", node, "--verbose"]),
    ]);
    expect(text.code).toBe(4);
    const report = json(full);
    const steps = nextSteps(report).filter((step) => step.nextCommand != null);
    expect(steps.length).toBeGreaterThanOrEqual(2);
    for (const step of steps) {
      const argv = step.nextCommand!;
      expect(argv[0]).toBe("segscan");
      expect(argv.some((word) => word.startsWith(node))).toBe(true);
      const printed = shellQuote(argv);
      expect(step.nextStep).toContain(printed);
      expect(verbose.stdout).toContain(`next step: ${step.nextStep}`);
      expect(bashArgv(printed)).toEqual(argv);
    }
    // The short lines end with the command: pasted, it runs as it is.
    const shortCommands = text.stdout
      .split("\n")
      .filter((line) => line.includes("next step: ") && line.includes("segscan "))
      .map((line) => line.slice(line.indexOf("segscan ")));
    expect(shortCommands.length).toBeGreaterThanOrEqual(2);
    for (const line of shortCommands) expect(steps.map((step) => step.nextCommand)).toContainEqual(bashArgv(line));
    // The summary's hints too: the repair of the whole node, and its undo.
    expect(text.stdout).toContain(`${shellQuote(["segscan", "repair", node])} shows the plan`);
    for (const output of [text.stdout, verbose.stdout, full.stdout]) expect(output).not.toMatch(/<partition>|<node root>|<same paths>/);
  });

  it("with --replicas 3 a refused partition's step says 'if a peer holds', never that a replica does", async () => {
    const data = join(root, "replicas");
    expect((await runCli(["gen", data, "--size", "tiny", "--scenario", "payload-bitflip"])).code).toBe(0);
    const partition = join(data, "streams", "1", "topics", "1", "partitions", "1");
    const run = await runCli(["scan", partition, "--replicas", "3", "--json"]);
    const step = json(run).partitions[0]!;
    expect(step.action).toBe("rebuild-from-peers");
    expect(step.nextStep).toMatch(
      /^if a peer holds \d+\.\.\d+ \(check with `segscan fleet`\), rebuild this partition from it, else restore/,
    );
    expect(step.nextStep).not.toMatch(/rebuild this partition from a replica/);
  });

  it("a cluster node that lost committed metadata ops: 'if a peer holds them (check with segscan fleet)', never 'nothing to do here'", async () => {
    const node = join(root, "cluster-node");
    expect((await runCli(["gen", node, "--size", "tiny", "--node-fault", "wal-committed-lost-cluster"])).code).toBe(0);
    const [text, full] = await Promise.all([runCli(["scan", node, "--verbose"]), runCli(["scan", node, "--json"])]);
    expect(text.code).toBe(0); // warn alone exits 0
    const lost = json(full).node!.metadata.wal!.findings.find((finding) => finding.code === "WalCommittedOpsLost")!;
    expect(lost.severity).toBe("warn");
    expect(lost.message).toContain(
      "holds them (check with `segscan fleet`), it re-supplies them when this replica rejoins; if none does, they are lost",
    );
    expect(lost.nextStep).toMatch(/^if a peer holds ops 52\.\.55 \(check with `segscan fleet`\)/);
    for (const output of [text.stdout, full.stdout]) {
      expect(output).not.toMatch(/nothing to do here|hold them and re-supply them|the other \d+ replicas hold/);
    }
  });
});

describe.concurrent("every target gets the verdict line; numbers, units and help said one way", () => {
  it("a partition dir and a lone .log: the verdict is the first line", async () => {
    const data = join(root, "targets");
    expect((await runCli(["gen", data, "--size", "tiny", "--scenario", "torn-tail"])).code).toBe(0);
    const partition = join(data, "streams", "1", "topics", "1", "partitions", "1");
    // The tail segment: the torn one.
    const log = join(
      partition,
      readdirSync(partition)
        .filter((name) => name.endsWith(".log"))
        .sort()
        .at(-1)!,
    );
    const [dir, file] = await Promise.all([runCli(["scan", partition]), runCli(["scan", log])]);
    for (const run of [dir, file]) {
      expect(run.code).toBe(4);
      expect(run.stdout.split("\n")[0]).toBe("verdict REPAIRABLE");
    }
  });

  it("the header says once what a probe unit is; byte positions carry separators; checksums are 16 hex digits", async () => {
    const data = join(root, "numbers");
    expect((await runCli(["gen", data, "--size", "tiny", "--scenario", "payload-bitflip", "--node-fault", "snapshot-corrupt"])).code).toBe(
      0,
    );
    const run = await runCli(["scan", data, "--verbose"]);
    expect(run.stdout.split("a unit is one byte the probe examines")).toHaveLength(2);
    expect(run.stdout).toMatch(/probe budget 2,281,701,376 units \(a unit is one byte the probe examines\)/);
    expect(run.stdout).toMatch(/damage at byte \d{1,3}(,\d{3})+ is followed by a complete, verifying batch at byte \d{1,3}(,\d{3})+/);
    expect(run.stdout).toMatch(/trailer checksum 0x[0-9a-f]{16} does not match the payload's XXH3-64 0x[0-9a-f]{16}/);
  });

  it("--help: exit 0 covers warn and info; repair says to stop iggy-server first; restore takes a node root", async () => {
    const words = (run: Run): string => run.stdout.replace(/\s+/g, " ");
    const [top, repair, restore, scan] = await Promise.all([
      runCli(["--help"]),
      runCli(["repair", "--help"]),
      runCli(["restore", "--help"]),
      runCli(["scan", "--help"]),
    ]);
    expect(words(top)).toContain("0 every partition is clean; node findings of severity warn or info are shown but do not count");
    expect(words(repair)).toContain("Stop iggy-server first");
    expect(words(restore)).toMatch(/Usage: segscan restore \[options\] <path>/);
    expect(words(restore)).toContain("given a node root or a data dir, restores metadata/ and every partition below it");
    expect(words(restore)).toContain("Stop iggy-server first");
    for (const flag of ["--verbose", "--all", "--ndjson"]) expect(scan.stdout).toContain(flag);
  });
});

describe("the repair plan has one 'left alone' section", () => {
  it("node findings the plan does not act on and refused partitions are listed together, once", async () => {
    const node = join(root, "left-alone");
    expect((await runCli(["gen", node, "--size", "tiny", "--scenario", "payload-bitflip", "--node-fault", "offset-ahead"])).code).toBe(0);
    const run = await runCli(["repair", node]);
    expect(run.code).toBe(4);
    expect(run.stdout.match(/^left alone:$/gm)).toHaveLength(1);
    expect(run.stdout).not.toContain("left untouched");
    const section = run.stdout.slice(run.stdout.indexOf("left alone:"));
    expect(section).toMatch(/OffsetAheadOfHead at /);
    expect(section).toMatch(/partitions\/1: refused, action tombstone/);
    expect(readFileSync(join(node, "metadata", "journal.wal")).length).toBeGreaterThan(0);
  });
});
