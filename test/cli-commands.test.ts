/**
 * Every `segscan` command and every exit status, through the BUILT CLI
 * (dist/src/cli/main.js; `npm test` builds first): help, usage errors (16),
 * operational errors (8), repair dry run (4) and --apply (1, then scan 0),
 * restore bringing every byte back, dump, gen, demo, bench, and Ctrl-C (32)
 * changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { SCENARIOS, generateDataDir, type GeneratedDataDir } from "../src/gen/index.js";
import type { JsonScanReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { parseBytes } from "../src/cli/parse.js";
import { parseRate } from "../src/cli/scrub.js";
import { CLI, MAX_CLI_PROCESSES, peakCliProcesses, runCli, spawnBounded, startCli } from "./helpers/cli.js";

const BENCH = fileURLToPath(new URL("../dist/bench/run.js", import.meta.url));

/** Every file under `dir` → sha256 (directories named *.segscan excluded when asked). */
async function tree(dir: string, options: { skipSegscan?: boolean } = {}): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (options.skipSegscan && entry.name.endsWith(".segscan")) continue;
        await walk(path);
      } else {
        out.set(
          relative(dir, path),
          createHash("sha256")
            .update(await readFile(path))
            .digest("hex"),
        );
      }
    }
  };
  await walk(dir);
  return out;
}

/** Every file and directory under `dir` → size, mtime and ctime (cheap for huge sparse files; any write changes them). */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const info = await stat(path);
      out.set(relative(dir, path), `${info.size}:${info.mtimeMs}:${info.ctimeMs}`);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(dir);
  return out;
}

function jsonReport(text: string): JsonScanReport {
  const parsed: unknown = JSON.parse(text);
  expect(validateJsonReport(parsed)).toEqual([]);
  return parsed as JsonScanReport;
}

let root: string;
let counter = 0;
const fresh = (name: string): string => join(root, `${name}-${++counter}`);

/** A small sample with one scenario per partition. */
function sample(scenarios: string[], seed = 2): Promise<GeneratedDataDir> {
  return generateDataDir(fresh(scenarios.join("+") || "clean"), {
    size: "tiny",
    seed,
    scenarios,
    topicsPerStream: 1,
    partitionsPerTopic: Math.max(1, scenarios.length),
  });
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm run build, or npx tsc -p tsconfig.json)`);
  root = await mkdtemp(join(tmpdir(), "segscan-cli-cmd-"));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe.concurrent("help and version (exit 0)", () => {
  // First: the bounded spawner (helpers/cli.ts) is FIFO; queued behind the --help cases' 16 processes it waited seconds.
  it("--version prints the version", async () => {
    const run = await runCli(["--version"]);
    expect(run.code).toBe(0);
    // The one version: package.json's (src/version.ts reads it).
    const manifest = JSON.parse(await readFile(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8")) as { version: string };
    expect(run.stdout.trim()).toBe(manifest.version);
  });

  it("segscan --help lists every command and the exit statuses", async () => {
    for (const args of [["--help"], ["help"]]) {
      const run = await runCli(args);
      expect(run.code).toBe(0);
      for (const command of ["scan", "repair", "restore", "dump", "gen", "demo", "bench"]) expect(run.stdout).toContain(command);
      expect(run.stdout).toMatch(/16\s+usage error/);
      expect(run.stdout).toMatch(/32\s+cancelled/);
    }
  });

  it("every command has --help naming its flags", async () => {
    const flags: Record<string, string[]> = {
      scan: ["<path...>", "--json", "--engine", "--deep", "--replicas", "--probe-budget", "--window", "--concurrency", "--no-progress"],
      repair: [
        "<path...>",
        "--apply",
        "--json",
        "--engine",
        "--deep",
        "--replicas",
        "--probe-budget",
        "--window",
        "--concurrency",
        "--no-progress",
      ],
      restore: ["<path>", "node root"],
      dump: ["<file>", "--messages", "--json"],
      gen: ["[dir]", "--scenario", "--list", "--seed"],
      demo: [],
      bench: ["--json"],
    };
    await Promise.all(
      Object.entries(flags).map(async ([command, expected]) => {
        const [viaFlag, viaHelp] = await Promise.all([runCli([command, "--help"]), runCli(["help", command])]);
        expect(viaFlag.code, command).toBe(0);
        expect(viaHelp.code, command).toBe(0);
        expect(viaFlag.stdout).toContain(`Usage: segscan ${command}`);
        for (const flag of expected) expect(viaFlag.stdout, `${command} ${flag}`).toContain(flag);
      }),
    );
  });
});

describe.concurrent("usage errors exit 16", () => {
  let data: string;
  let file: string;
  beforeAll(async () => {
    data = (await sample([])).dir;
    file = join(root, "notes.txt");
    await writeFile(file, "not a segment");
  });

  const cases: [string, () => string[]][] = [
    ["no arguments", () => []],
    ["an unknown command", () => ["frobnicate"]],
    ["scan without a path", () => ["scan"]],
    ["an unknown engine", () => ["scan", data, "--engine", "java"]],
    ["--replicas 0", () => ["scan", data, "--replicas", "0"]],
    ["--replicas two", () => ["scan", data, "--replicas", "two"]],
    ["--window below the minimum", () => ["scan", data, "--window", "1"]],
    ["--window above the maximum", () => ["scan", data, "--window", "1TiB"]],
    ["--window garbage", () => ["scan", data, "--window", "lots"]],
    ["--probe-budget -1", () => ["scan", data, "--probe-budget", "-1"]],
    ["--concurrency 0", () => ["scan", data, "--concurrency", "0"]],
    ["an unknown flag", () => ["scan", data, "--bogus"]],
    ["scan of a file that is not a .log", () => ["scan", file]],
    ["repair without a path", () => ["repair"]],
    ["a flag missing its value", () => ["repair", data, "--engine"]],
    ["restore without a dir", () => ["restore"]],
    ["restore of two dirs", () => ["restore", data, data]],
    ["restore of a file", () => ["restore", file]],
    ["dump without a file", () => ["dump"]],
    ["dump of a directory", () => ["dump", data]],
    ["dump of a file that is not a segment, WAL or snapshot", () => ["dump", file]],
    ["gen without a dir", () => ["gen"]],
    ["gen of an unknown scenario", () => ["gen", join(root, "never"), "--scenario", "meteor-strike"]],
    ["gen with a bad seed", () => ["gen", join(root, "never"), "--seed", "x"]],
    ["gen with an unknown size", () => ["gen", join(root, "never"), "--size", "huge"]],
    ["gen into a non-empty dir", () => ["gen", data]],
    ["gen with --node-fault twice", () => ["gen", join(root, "never"), "--node-fault", "wal-gap", "--node-fault", "wal-tmp"]],
    [
      "gen flushing below one batch (4 KiB segments flushed every 1 KiB ran away)",
      () => ["gen", join(root, "never"), "--size", "tiny", "--segment-bytes", "4KiB", "--flush-bytes", "1KiB"],
    ],
    ["gen --cluster flushing below one batch", () => ["gen", join(root, "never"), "--cluster", "3", "--flush-bytes", "1KiB"]],
    ["demo with an argument", () => ["demo", "extra"]],
    ["bench with an unknown flag", () => ["bench", "--bogus"]],
  ];
  for (const [name, args] of cases) {
    it(name, async () => {
      const run = await runCli(args());
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(16);
      expect(run.stderr.length).toBeGreaterThan(0);
      expect(existsSync(join(root, "never"))).toBe(false);
    });
  }
});

describe("byte sizes and rates: the units table", () => {
  it("accepts every binary unit up to TiB, in any case, with or without /s", () => {
    const units: [string, number][] = [
      ["", 1],
      ["b", 1],
      ["k", 2 ** 10],
      ["KB", 2 ** 10],
      ["KiB", 2 ** 10],
      ["m", 2 ** 20],
      ["MB", 2 ** 20],
      ["MiB", 2 ** 20],
      ["g", 2 ** 30],
      ["GB", 2 ** 30],
      ["GiB", 2 ** 30],
      ["t", 2 ** 40],
      ["TB", 2 ** 40],
      ["TiB", 2 ** 40],
    ];
    for (const [unit, bytes] of units) expect(parseBytes(0)(`3${unit}`), unit).toBe(3 * bytes);
    expect(parseRate("1TiB/s")).toBe(2 ** 40);
    expect(parseRate("1GiB/s")).toBe(2 ** 30);
    expect(parseRate("1.5TiB")).toBe(1.5 * 2 ** 40);
    expect(parseRate("unlimited")).toBe(Infinity);
    expect(() => parseRate("1PiB/s")).toThrow(/expected a byte size/);
  });

  it("scrub --rate 1TiB/s runs (it was refused while GiB worked)", async () => {
    const data = join(root, "rate-tib");
    await generateDataDir(data, { size: "small", topicsPerStream: 1, partitionsPerTopic: 1 });
    const run = await runCli(["scrub", data, "--rate", "1TiB/s", "--state", join(root, "rate-tib.json")]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("scrub pass complete");
  });
});

describe.concurrent("operational errors exit 8", () => {
  it("scan, repair, dump and restore of a missing path", async () => {
    const missing = join(root, "does-not-exist");
    for (const args of [
      ["scan", missing],
      ["repair", missing, "--apply"],
      ["dump", join(missing, "0.log")],
      ["restore", missing],
    ]) {
      const run = await runCli(args);
      expect(run.code, args.join(" ")).toBe(8);
      expect(run.stderr).toMatch(/ENOENT/);
    }
  });

  it("a failed partition (a read error) is reported, never classified, and exits 8", async () => {
    const generated = await sample([]);
    const segment = generated.partitions[0]!.segments[0]!;
    const dir = fresh("failed");
    await mkdir(dir);
    const log = join(dir, `${segment.stem}.log`);
    await writeFile(log, await readFile(segment.logPath));
    // An ".index" that is a directory: never opened, it fails the partition as NotRegularFile.
    await mkdir(join(dir, `${segment.stem}.index`));
    const before = await tree(dir);
    const run = await runCli(["scan", log, "--json"]);
    expect(run.code).toBe(8);
    const report = jsonReport(run.stdout);
    expect(report.partitions[0]!.verdict).toBe("failed");
    expect(report.partitions[0]!.action).toBe("retry");
    expect(report.partitions[0]!.error?.code).toBe("NotRegularFile");
    const human = await runCli(["repair", log, "--apply"]);
    expect(human.code).toBe(8);
    expect(human.stdout).toContain("NotRegularFile");
    expect(await tree(dir)).toEqual(before);
  });
});

describe("repair and restore", () => {
  it("dry run exits 4 and changes nothing; --apply exits 1; scan then exits 0; restore brings every byte back", async () => {
    const generated = await sample(["torn-tail", "zero-tail", "lost-index", "scratch-files", "torn-index"]);
    const dir = generated.dir;
    const original = await tree(dir);

    const dry = await runCli(["repair", dir]);
    expect(dry.code, dry.stderr).toBe(4);
    expect(dry.stdout).toMatch(/Repair plan: \d+ steps on 5 partitions\./);
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(await tree(dir)).toEqual(original);

    const json = await runCli(["repair", dir, "--json"]);
    expect(json.code).toBe(4);
    const parsed = JSON.parse(json.stdout) as { report: unknown; plan: { targets: unknown[] }; applied: unknown; after: unknown };
    expect(validateJsonReport(parsed.report)).toEqual([]);
    expect(parsed.plan.targets).toHaveLength(5);
    expect(parsed.applied).toBeNull();

    const apply = await runCli(["repair", dir, "--apply"]);
    expect(apply.code, `${apply.stdout}\n${apply.stderr}`).toBe(1);
    expect(apply.stdout).toContain("all 5 repaired partition(s) are clean now");
    expect(await tree(dir, { skipSegscan: true })).not.toEqual(original);

    const scan = await runCli(["scan", dir, "--json"]);
    expect(scan.code).toBe(0);
    expect(jsonReport(scan.stdout).summary.clean).toBe(5);

    const again = await runCli(["repair", dir, "--apply"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to repair");

    for (const partition of generated.partitions) {
      const restored = await runCli(["restore", partition.path]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toContain(`restored ${partition.path}`);
    }
    expect(await tree(dir, { skipSegscan: true })).toEqual(original);

    const twice = await runCli(["restore", generated.partitions[0]!.path]);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain("nothing to restore");

    const rescan = await runCli(["scan", dir]);
    expect(rescan.code).toBe(4);
  });

  it("--apply with a refusal left exits 5 (1|4) and never touches the refused partition", async () => {
    const generated = await sample(["torn-tail", "payload-bitflip"]);
    const refused = generated.partitions[1]!.path;
    const before = await tree(refused);
    const apply = await runCli(["repair", generated.dir, "--apply", "--json"]);
    expect(apply.code, apply.stderr).toBe(5);
    const parsed = JSON.parse(apply.stdout) as { report: unknown; after: unknown; applied: { targets: { path: string }[] } };
    expect(validateJsonReport(parsed.report)).toEqual([]);
    expect(validateJsonReport(parsed.after)).toEqual([]);
    expect(parsed.applied.targets.map((p) => p.path)).toEqual([generated.partitions[0]!.path]);
    expect(await tree(refused)).toEqual(before);
    expect(existsSync(`${refused}.segscan`)).toBe(false);
    const scan = await runCli(["scan", generated.dir]);
    expect(scan.code).toBe(4);
    expect(scan.stdout).toContain("InteriorDamage");
  });

  it("repairs one .log scanned alone", async () => {
    const generated = await sample(["torn-tail"]);
    const log = generated.partitions[0]!.segments.at(-1)!.logPath;
    const apply = await runCli(["repair", log, "--apply"]);
    expect(apply.code, `${apply.stdout}\n${apply.stderr}`).toBe(1);
    expect((await runCli(["scan", log])).code).toBe(0);
  });
});

describe.concurrent("dump", () => {
  let clean: GeneratedDataDir;
  beforeAll(async () => {
    clean = await sample([]);
  });

  it("lists one line per batch, every one verified; exit 0", async () => {
    const segment = clean.partitions[0]!.segments[0]!;
    const run = await runCli(["dump", segment.logPath]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n").filter((line) => line.startsWith("position: "));
    expect(lines).toHaveLength(segment.batches.length);
    lines.forEach((line, i) => {
      const batch = segment.batches[i]!;
      expect(line).toContain(`position: ${batch.position} baseOffset: ${batch.baseOffset} `);
      expect(line).toContain(`count: ${batch.messageCount} `);
      expect(line).toContain(`length: ${batch.length} `);
      expect(line).toMatch(/verify: ok$/);
    });
    expect(run.stdout).toContain(`${segment.batches.length} batches, ${segment.batches.length} verified`);
  });

  it("--messages lists every frame; a 4 KiB window streams the big batches to the same result", async () => {
    const segment = clean.partitions[0]!.segments[0]!;
    const [run, small] = await Promise.all([
      runCli(["dump", segment.logPath, "--messages"]),
      runCli(["dump", segment.logPath, "--messages", "--window", "4KiB", "--engine", "ts"]),
    ]);
    expect(run.code).toBe(0);
    expect(small.code).toBe(0);
    const frames = run.stdout.split("\n").filter((line) => line.startsWith("| offset: "));
    expect(frames).toHaveLength(segment.messages);
    expect(frames.every((line) => line.includes("checksum: ok"))).toBe(true);
    expect(frames[0]).toContain(`| offset: ${segment.startOffset} `);
    expect(frames[0]).toContain('{"event":');
    expect(segment.batches.some((batch) => batch.length > 4096)).toBe(true);
    const body = (text: string): string => text.split("\n").slice(1).join("\n");
    expect(body(small.stdout)).toBe(body(run.stdout));
  });

  it("--json is machine-readable, u64 values as strings", async () => {
    const segment = clean.partitions[0]!.segments[1]!;
    const run = await runCli(["dump", segment.logPath, "--json", "--messages"]);
    expect(run.code).toBe(0);
    const dump = JSON.parse(run.stdout) as {
      size: number;
      verified: number;
      stopped: unknown;
      batches: {
        position: number;
        baseOffset: string;
        baseTimestamp: string;
        originTimestamp: string;
        verify: string;
        messages: {
          offset: string;
          checksum: string;
          timestamp: string;
          originTimestamp: string;
          userHeaders: { keyKind: string; key: string; valueKind: string; value: string }[];
        }[];
      }[];
    };
    expect(dump.size).toBe(segment.size);
    expect(dump.stopped).toBeNull();
    expect(dump.verified).toBe(segment.batches.length);
    expect(dump.batches.map((b) => b.baseOffset)).toEqual(segment.batches.map((b) => b.baseOffset.toString()));
    expect(dump.batches.flatMap((b) => b.messages)).toHaveLength(segment.messages);
    expect(dump.batches[0]!.messages[0]!.offset).toBe(segment.startOffset.toString());
    // Named as Iggy names them: a message's timestamp is its batch's base timestamp; origin = batch origin + delta.
    for (const batch of dump.batches) {
      for (const message of batch.messages) {
        expect(message.timestamp).toBe(batch.baseTimestamp);
        expect(BigInt(message.originTimestamp)).toBeGreaterThanOrEqual(BigInt(batch.originTimestamp));
      }
    }
    // gen writes Iggy's TLV user headers; dump decodes them.
    const headers = dump.batches.flatMap((b) => b.messages).flatMap((m) => m.userHeaders);
    expect(headers).toContainEqual({ keyKind: "string", key: '"content-type"', valueKind: "string", value: '"application/json"' });
    expect(headers.some((h) => h.key === '"trace-id"' && h.valueKind === "raw" && /^0x[0-9a-f]{32}$/.test(h.value))).toBe(true);
  });

  it("says where a torn tail stops the listing; exit 4", async () => {
    const generated = await sample(["torn-tail"]);
    const run = await runCli(["dump", generated.partitions[0]!.segments.at(-1)!.logPath]);
    expect(run.code).toBe(4);
    expect(run.stdout).toMatch(/verify: batch-beyond-file/);
    expect(run.stdout).toMatch(/listing stopped at byte [\d,]+: the batch claims/);
  });

  it("stops at the first header that does not decode, and says so", async () => {
    const generated = await sample(["length-bitflip"]);
    const segment = generated.partitions[0]!.segments.at(-1)!;
    const run = await runCli(["dump", segment.logPath]);
    expect(run.code).toBe(4);
    expect(run.stdout).toContain("does not decode (length-over-cap)");
    const listed = run.stdout.split("\n").filter((line) => line.startsWith("position: "));
    expect(listed.length).toBeLessThan(segment.batches.length);
    expect(listed.every((line) => line.endsWith("verify: ok"))).toBe(true);
  });

  it("shows a damaged batch's verify result and keeps listing after it", async () => {
    const generated = await sample(["payload-bitflip"]);
    const segment = generated.partitions[0]!.segments[1]!;
    const run = await runCli(["dump", segment.logPath, "--messages"]);
    expect(run.code).toBe(4);
    const lines = run.stdout.split("\n").filter((line) => line.startsWith("position: "));
    expect(lines).toHaveLength(segment.batches.length);
    expect(lines.filter((line) => line.endsWith("verify: frame-checksum"))).toHaveLength(1);
    expect(run.stdout).toContain("checksum: mismatch");
  });

  it("lists a .index's entries and flags a torn entry", async () => {
    const generated = await sample(["torn-index"]);
    const segment = generated.partitions[0]!.segments.at(-1)!;
    const run = await runCli(["dump", segment.indexPath]);
    expect(run.code).toBe(4);
    expect(run.stdout.split("\n").filter((line) => line.startsWith("entry: "))).toHaveLength(segment.indexEntries.length);
    expect(run.stdout).toMatch(/trailing bytes: a partial entry/);
    const ok = await runCli(["dump", clean.partitions[0]!.segments[0]!.indexPath, "--json"]);
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as { entries: unknown[] }).entries).toHaveLength(clean.partitions[0]!.segments[0]!.indexEntries.length);
  });
});

describe.concurrent("dump's count, exit codes in help, repeated --scenario", () => {
  it("dump counts the batches that failed to verify on its last line, exit 4", async () => {
    const generated = await sample(["payload-bitflip"]);
    const segment = generated.partitions[0]!.segments[1]!;
    const run = await runCli(["dump", segment.logPath]);
    expect(run.code).toBe(4);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(
      new RegExp(`^${segment.batches.length} batches, ${segment.batches.length - 1} verified, 1 failed to verify, `),
    );
  });

  it("restore --help and dump --help list their exit codes, as scan's does", async () => {
    const [restoreHelp, dumpHelp] = await Promise.all([runCli(["restore", "--help"]), runCli(["dump", "--help"])]);
    expect(restoreHelp.code).toBe(0);
    expect(restoreHelp.stdout).toMatch(/Exit status:\n {2}0 {3}every journal's steps were undone/);
    for (const code of ["8", "16", "32"]) expect(restoreHelp.stdout).toMatch(new RegExp(`\n {2}${code} +\\S`));
    expect(dumpHelp.code).toBe(0);
    expect(dumpHelp.stdout).toMatch(/Exit status:\n {2}0 {3}every batch verified/);
    for (const code of ["4", "8", "16", "32"]) expect(dumpHelp.stdout).toMatch(new RegExp(`\n {2}${code} +\\S`));
  });

  it("gen takes --scenario more than once: the i-th fault goes into the i-th partition", async () => {
    const dir = join(root, "two-scenarios");
    const run = await runCli(["gen", dir, "--scenario", "torn-tail", "--scenario", "zero-tail", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const written = JSON.parse(run.stdout) as { partitions: { path: string }[]; faults: { scenario: string; partition: string }[] };
    expect(written.faults.map((fault) => [fault.scenario, fault.partition])).toEqual([
      ["torn-tail", written.partitions[0]!.path],
      ["zero-tail", written.partitions[1]!.path],
    ]);
    const unknown = await runCli(["gen", join(root, "never"), "--scenario", "torn-tail", "--scenario", "meteor-strike"]);
    expect(unknown.code).toBe(16);
    expect(unknown.stderr).toContain('unknown scenario "meteor-strike"');
  });

  it("gen refuses a second --node-fault instead of keeping only the last (one node fault per data dir)", async () => {
    const dir = join(root, "two-node-faults");
    const run = await runCli(["gen", dir, "--size", "tiny", "--node-fault", "wal-gap", "--node-fault", "wal-tmp"]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain('--node-fault is given twice ("wal-gap", then "wal-tmp")');
    expect(existsSync(dir)).toBe(false);
  });
});

describe.concurrent("gen, demo, bench", () => {
  it("gen --list names every scenario with its expected verdict", async () => {
    const run = await runCli(["gen", "--list"]);
    expect(run.code).toBe(0);
    for (const scenario of SCENARIOS) expect(run.stdout).toContain(scenario.name);
    const json = await runCli(["gen", "--list", "--json"]);
    expect((JSON.parse(json.stdout) as { name: string }[]).map((s) => s.name)).toEqual(SCENARIOS.map((s) => s.name));
  });

  it("gen writes the same sample for the same seed, and scan finds the injected fault", async () => {
    const a = fresh("gen-a");
    const b = fresh("gen-b");
    const [runA, runB] = await Promise.all([
      runCli(["gen", a, "--scenario", "zero-tail", "--seed", "4", "--size", "tiny"]),
      runCli(["gen", b, "--scenario", "zero-tail", "--seed", "4", "--size", "tiny"]),
    ]);
    expect(runA.code, runA.stderr).toBe(0);
    expect(runB.code).toBe(0);
    expect(runA.stdout).toContain("zero-tail →");
    expect(runA.stdout).toContain("expected: repairable");
    expect(await tree(a)).toEqual(await tree(b));
    const scan = await runCli(["scan", a, "--json"]);
    expect(scan.code).toBe(4);
    expect(jsonReport(scan.stdout).partitions[0]!.segments.at(-1)!.residue?.allZero).toBe(true);
  });

  it("gen honours size flags", async () => {
    const dir = fresh("gen-sized");
    const run = await runCli([
      "gen",
      dir,
      "--size",
      "tiny",
      "--segments",
      "4",
      "--partitions",
      "1",
      "--segment-bytes",
      "48KiB",
      "--flush-bytes",
      "16KiB",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { partitions: { segments: { size: number; indexEntries: number }[] }[] };
    expect(out.partitions).toHaveLength(1);
    expect(out.partitions[0]!.segments).toHaveLength(4);
    for (const segment of out.partitions[0]!.segments) {
      expect(segment.size).toBeGreaterThanOrEqual(48 * 1024);
      expect(segment.indexEntries).toBeGreaterThanOrEqual(3);
    }
  });

  it("demo writes a faulty sample, shows the report and the plan, and exits 0", async () => {
    const run = await runCli(["demo", "--engine", "ts"]);
    const dir = /rm -r (\S+)/.exec(run.stdout)?.[1];
    try {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("segscan demo");
      expect(run.stdout).toContain("6 partitions: 1 clean, 4 repairable, 1 refused, 0 failed");
      expect(run.stdout).toContain("InteriorDamage");
      expect(run.stdout).toMatch(/Repair plan: \d+ steps on 4 partitions and the metadata WAL\./);
      expect(run.stdout).toContain("--apply");
      expect(dir).toBeDefined();
      expect(existsSync(dir!)).toBe(true);
      // "Try it yourself" (17.16): every command works as printed, run from the project directory.
      const tries = run.stdout
        .slice(run.stdout.indexOf("Try it yourself"))
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line.startsWith("npx ") || line.startsWith("segscan "));
      expect(tries.map((line) => line.split(" ").slice(0, 3).join(" "))).toEqual([
        "npx segscan repair",
        "npx segscan scan",
        "npx segscan restore",
        "npx segscan dump",
      ]);
      const projectDir = fileURLToPath(new URL("..", import.meta.url));
      const codes = [];
      for (const line of tries) {
        // `npx segscan` runs the package's own bin (package.json "bin", checked below and, from the
        // tarball, in pack.test.ts). It is run here as that bin directly: npx's first use in a new
        // directory runs the package's `prepare` (a clean rebuild), which would pull dist/ from
        // under the test files running beside this one.
        const [, , ...args] = line.split(" ");
        const tried = spawnSync(process.execPath, [CLI, ...args], { cwd: projectDir, encoding: "utf8" });
        codes.push(tried.status);
      }
      // dump exits 4 because restore put the torn tail back.
      expect(codes).toEqual([5, 4, 0, 4]);
    } finally {
      if (dir?.includes("segscan-demo-")) await rm(dir, { recursive: true, force: true });
    }
  });

  it("bench runs the suite when built, else exits 8 saying so", async () => {
    if (!existsSync(BENCH)) {
      const run = await runCli(["bench"]);
      expect(run.code).toBe(8);
      expect(run.stderr).toContain("not built");
      return;
    }
    const run = await runCli(["bench", "--json", "--quick"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as { task: string; engine: string; bytesPerOp: number; mbPerSec: number; ratio: number }[];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(typeof row.task).toBe("string");
      expect(typeof row.engine).toBe("string");
      expect(row.bytesPerOp).toBeGreaterThan(0);
      expect(row.mbPerSec).toBeGreaterThan(0);
      expect(row.ratio).toBeGreaterThan(0);
    }
    expect(new Set(rows.map((row) => row.engine))).toContain("wasm");
  });
});

describe("cancellation and the progress bar", () => {
  let big: GeneratedDataDir;
  beforeAll(async () => {
    // The canonical delayed-allocation crash: a 1 GiB zero tail (sparse), long enough to show a bar anywhere.
    big = await sample(["clean"]);
    const segment = big.partitions[0]!.segments.at(-1)!;
    await truncate(segment.logPath, segment.size + 1024 * 1024 * 1024);
  });

  /**
   * Resolves once the child is well into reading the zero tail (Linux:
   * /proc/<pid>/io rchar), so the scan, and the signal handler installed
   * before it, are running.
   */
  async function scanning(pid: number): Promise<void> {
    for (let i = 0; i < 1200; i++) {
      const io = await readFile(`/proc/${pid}/io`, "utf8").catch(() => "");
      const read = /rchar:\s*(\d+)/.exec(io)?.[1];
      if (read !== undefined && Number(read) > 64 * 1024 * 1024) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error("the CLI never started reading");
  }

  it.skipIf(process.platform !== "linux")("SIGINT cancels a scan or a repair: exit 32, nothing changed", async () => {
    const before = await snapshot(big.dir);
    for (const args of [
      ["scan", big.dir, "--engine", "ts"],
      ["repair", big.dir, "--apply", "--engine", "ts"],
    ]) {
      const { child, done } = await startCli(args);
      await scanning(child.pid!);
      child.kill("SIGINT");
      const run = await done;
      expect(run.code, `${args.join(" ")}\n${run.stdout}\n${run.stderr}`).toBe(32);
      expect(run.stderr).toContain("cancelled");
      expect(run.stdout).toBe("");
    }
    expect(await snapshot(big.dir)).toEqual(before);
    expect(existsSync(`${big.partitions[0]!.path}.segscan`)).toBe(false);
  });

  const hasScript = process.platform === "linux" && spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("on a TTY a long scan shows a progress bar on stderr; --no-progress and --json hide it", async () => {
    const inPty = async (args: string[]): Promise<string> => {
      const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(" ");
      const { done } = await spawnBounded("script", ["-qfec", command, "/dev/null"], { env: { ...process.env, TERM: "xterm" } });
      return (await done).stdout;
    };
    const [shown, hidden, json] = await Promise.all([
      inPty(["scan", big.dir, "--concurrency", "1", "--engine", "ts"]),
      inPty(["scan", big.dir, "--concurrency", "1", "--no-progress"]),
      inPty(["scan", big.dir, "--concurrency", "1", "--json"]),
    ]);
    expect(shown).toMatch(/scanning .*% · [\d.]+ (B|KiB|MiB|GiB) of 1(\.0)? GiB · [\d.]+ (B|KiB|MiB|GiB)\/s · ETA/);
    expect(shown).toContain("torn tail");
    expect(shown).toMatch(/\x1b\[3\dm/);
    expect(hidden).not.toContain("scanning");
    expect(hidden).toContain("torn tail");
    expect(json).not.toContain("scanning");
  });
});

describe("npm run demo builds only when the build is stale (17.16)", () => {
  it("the demo script runs the built CLI, and buildIsStale follows source and output times", async () => {
    const pkg = JSON.parse(await readFile(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8")) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.scripts.demo).toBe("node scripts/run-built.mjs demo");
    expect(pkg.bin.segscan).toBe("./dist/src/cli/main.js");
    const { buildIsStale, BUILD_OUTPUTS } = await import("../scripts/run-built.mjs");
    const project = fresh("project");
    await mkdir(join(project, "src"), { recursive: true });
    await writeFile(join(project, "src", "a.ts"), "export {};");
    expect(buildIsStale(project)).toBe(true); // nothing built yet
    const { utimes } = await import("node:fs/promises");
    const past = new Date(Date.now() - 60_000);
    await utimes(join(project, "src", "a.ts"), past, past);
    await utimes(join(project, "src"), past, past);
    for (const output of BUILD_OUTPUTS) {
      await mkdir(join(project, output, ".."), { recursive: true });
      await writeFile(join(project, output), "built");
    }
    expect(buildIsStale(project)).toBe(false); // fresh: no rebuild
    await writeFile(join(project, "src", "b.ts"), "export {};");
    const future = new Date(Date.now() + 60_000);
    await utimes(join(project, "src", "b.ts"), future, future);
    expect(buildIsStale(project)).toBe(true); // a source changed after the build
  });
});

describe.concurrent("paths that hold no partition, overlapping paths, unreadable paths (16.3, 16.6, 17.8)", () => {
  it("an empty directory exits 16 saying why; a node root with no partition exits 0 with a note", async () => {
    const empty = fresh("empty");
    await mkdir(empty);
    const run = await runCli(["scan", empty]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`${empty} holds no partition`);
    expect(run.stdout).toBe("");
    const node = fresh("node-root");
    await mkdir(join(node, "streams"), { recursive: true });
    await mkdir(join(node, "metadata"));
    const nodeRun = await runCli(["scan", node, "--json"]);
    expect(nodeRun.code, nodeRun.stderr).toBe(0);
    expect(nodeRun.stderr).toContain("node root");
    expect(jsonReport(nodeRun.stdout).partitions).toEqual([]);
  });

  it("a FIFO named like a segment .log exits 8 (NotRegularFile) at once, as a path or inside a partition", async () => {
    const dir = fresh("fifo");
    await mkdir(dir);
    const fifo = join(dir, "00000000000000000000.log");
    spawnSync("mkfifo", [fifo]);
    await writeFile(join(dir, "00000000000000000000.index"), new Uint8Array(16));
    for (const target of [fifo, dir]) {
      const run = await runCli(["scan", target, "--json"]);
      expect(run.code, target).toBe(8);
      expect(jsonReport(run.stdout).partitions[0]!.error).toMatchObject({ code: "NotRegularFile", path: fifo });
    }
    const fifoNamedLog = join(dir, "notes.log");
    spawnSync("mkfifo", [fifoNamedLog]);
    const odd = await runCli(["scan", fifoNamedLog, "--json"]);
    expect(odd.code).toBe(8);
    expect(jsonReport(odd.stdout).partitions[0]!.error!.code).toBe("NoSegments");
  });

  it("`repair dir dir/streams --apply` repairs each partition once and exits 1", async () => {
    const generated = await sample(["torn-tail", "zero-tail"]);
    const run = await runCli(["repair", generated.dir, join(generated.dir, "streams"), "--apply"]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(run.stdout.match(/^repaired /gm)).toHaveLength(2);
    expect(run.stdout).toContain("all 2 repaired partition(s) are clean now");
  });

  it("`scan p1 /nonexistent` still reports p1, lists the missing path as failed, and exits 8", async () => {
    const generated = await sample([]);
    const p1 = generated.partitions[0]!.path;
    const missing = join(root, "nonexistent");
    const run = await runCli(["scan", p1, missing, "--json"]);
    expect(run.code).toBe(8);
    const report = jsonReport(run.stdout);
    expect(report.partitions.map((p) => [p.path, p.verdict])).toEqual([
      [p1, "clean"],
      [missing, "failed"],
    ]);
    expect(report.partitions[1]!.error!.message).toContain("no such file or directory (ENOENT)");
    expect(run.stderr).toContain(missing);
    const human = await runCli(["scan", p1, missing]);
    expect(human.code).toBe(8);
    expect(human.stdout).toContain("1 clean, 0 repairable, 0 refused, 1 failed");
  });

  it("on the worker pool too, a missing path keeps its place beside the scanned partitions", async () => {
    const generated = await sample(["torn-tail", "clean"]);
    // A 64 MiB sparse zero tail puts the scan over the pool threshold.
    const tail = generated.partitions[0]!.segments.at(-1)!.logPath;
    await truncate(tail, (await stat(tail)).size + 64 * 1024 * 1024);
    const missing = join(root, "also-nonexistent");
    const run = await runCli(["scan", missing, generated.dir, "--json", "--concurrency", "2"]);
    expect(run.code).toBe(8 | 4);
    const report = jsonReport(run.stdout);
    expect(report.partitions.map((p) => [p.path, p.verdict])).toEqual([
      [missing, "failed"],
      [generated.partitions[0]!.path, "repairable"],
      [generated.partitions[1]!.path, "clean"],
    ]);
  });

  it("a chmod 000 partition dir is a failed ListFailure beside the others (unprivileged runs only)", async (context) => {
    if (process.getuid?.() === 0) {
      context.skip(
        "running as root: root ignores chmod 000, so this cannot fail a listing (test/discovery.test.ts injects EACCES through the ScanFs seam instead)",
      );
    }
    const generated = await sample(["torn-tail", "zero-tail"]);
    const denied = generated.partitions[1]!.path;
    const { chmod } = await import("node:fs/promises");
    await chmod(denied, 0o000);
    try {
      const run = await runCli(["scan", generated.dir, "--json"]);
      expect(run.code).toBe(8 | 4);
      const report = jsonReport(run.stdout);
      expect(report.partitions.find((p) => p.path === denied)!.error!.code).toBe("ListFailure");
      expect(report.partitions.find((p) => p.path === generated.partitions[0]!.path)!.verdict).toBe("repairable");
    } finally {
      await chmod(denied, 0o755);
    }
  });
});

describe.concurrent("inputs accepted before but not now, and clearer messages (17.11, 17.14, 17.15, 17.17)", () => {
  it("a .log with a non-segment name is listed as ignored, and a partition of only that is failed NoSegments (exit 8)", async () => {
    const dir = fresh("bad-name");
    await mkdir(dir);
    await writeFile(join(dir, "0x88.log"), new Uint8Array(100 * 1024));
    const json = await runCli(["scan", dir, "--json"]);
    expect(json.code).toBe(8);
    const partition = jsonReport(json.stdout).partitions[0]!;
    expect(partition.error).toMatchObject({ code: "NoSegments", path: dir });
    expect(partition.ignored).toEqual([expect.objectContaining({ path: join(dir, "0x88.log"), kind: "bad-segment-name" })]);
    const [human, brief] = await Promise.all([runCli(["scan", dir, "--verbose"]), runCli(["scan", dir])]);
    expect(human.stdout).toContain("ignored 0x88.log");
    expect(human.stdout).toContain("NoSegments");
    expect(brief.stdout).toMatch(/NoSegments: .*0x88\.log/);
  });

  it("--window 4095 names the value once; --probe-budget -1 says non-negative; --concurrency over the cap is refused", async () => {
    const data = (await sample([])).dir;
    const window = await runCli(["scan", data, "--window", "4095"]);
    expect(window.code).toBe(16);
    expect(window.stderr).toContain("got 4095");
    expect(window.stderr).not.toContain("(4095");
    const kib = await runCli(["scan", data, "--window", "3KiB"]);
    expect(kib.stderr).toContain("got 3KiB (3072 bytes)");
    const budget = await runCli(["scan", data, "--probe-budget", "-1"]);
    expect(budget.code).toBe(16);
    expect(budget.stderr).toContain("must be a non-negative integer");
    const { availableParallelism } = await import("node:os");
    const cap = 2 * availableParallelism();
    const many = await runCli(["scan", data, "--concurrency", String(cap + 1)]);
    expect(many.code).toBe(16);
    expect(many.stderr).toContain(`[1, ${cap}]`);
    const help = await runCli(["scan", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain(`1..${cap}`);
  });

  it("a raw errno failure is put in words: operation, path, cause and code, once (17.9)", async (context) => {
    if (!existsSync("/sys/kernel")) context.skip("no /sys here: no read-only filesystem to fail a mkdir on");
    const run = await runCli(["gen", "/sys/segscan-cannot-create"]);
    expect(run.code).toBe(8);
    expect(run.stderr.trim()).toMatch(/^segscan: cannot mkdir \/sys\/segscan-cannot-create: [a-z -]+ \((EPERM|EROFS|EACCES|ENOENT)\)$/);
  });

  it("gen onto an existing file is a usage error (16) with a sentence, writing nothing", async () => {
    const file = fresh("a-file");
    await writeFile(file, "x");
    const run = await runCli(["gen", file]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`${file} already exists and is not a directory`);
    expect(run.stderr).not.toMatch(/EEXIST/);
    expect(await readFile(file, "utf8")).toBe("x");
  });

  it('a dry-run repair lists a refused partition once under "left alone", with its reason', async () => {
    const generated = await sample(["hole", "torn-tail"]);
    const run = await runCli(["repair", generated.dir]);
    expect(run.code).toBe(4);
    const refused = generated.partitions[0]!.path;
    expect(run.stdout.split(refused).length - 1).toBe(1);
    expect(run.stdout.match(/left alone/g)).toHaveLength(1);
    expect(run.stdout).not.toContain("left untouched");
    expect(run.stdout).toMatch(/Hole: segment \d+ \(\d{20}\.log\)/);
  });
});

afterAll(() => {
  // Every CLI process above went through the bounded spawner (test/helpers/cli.ts).
  expect(peakCliProcesses()).toBeGreaterThan(0);
  expect(peakCliProcesses()).toBeLessThanOrEqual(MAX_CLI_PROCESSES);
});
