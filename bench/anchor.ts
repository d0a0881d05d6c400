/**
 * segscan against the code it reviews (docs/benchmarks.md): the
 * segscan CLI and Iggy's own segment code (a program built from verbatim
 * copies of it, given as `--iggy-bin`) timed as whole processes, start-up
 * included, on the same cached trees, alternating A B A B, with the median of
 * each side and the ratio of the medians printed per row.
 *
 *   node dist/bench/anchor.js --iggy-bin PATH [--pairs 5] [--rows deep,tail,big,wide,version,import] [--breakdown]
 *
 * `--breakdown` first prints where the 2,000-partition tail and deep scans
 * spend their time (bench/breakdown.ts), then the rows.
 *
 * Rows (each names its commands):
 *   deep     2,000 partitions × 204 KiB: `segscan scan --deep` vs `read-dir`
 *   tail     the same tree: `segscan scan` vs `recover`
 *   big      one 128 MiB segment: `segscan scan --deep` vs `read-dir`
 *   wide     50,000 partitions × ≈ 105 KiB: `segscan scan` vs `recover` (≈ 5 GiB cached; generated once)
 *   version  `segscan --version` vs `node -e 0` (needs no Iggy program)
 *   import   `import("segscan")` in a fresh process, timed inside it (needs no Iggy program)
 *
 * Without `--iggy-bin` (or when the file is missing) the Iggy rows are skipped
 * with a line saying so. Trees come from the bench cache (bench/scale.ts,
 * bench/data.ts) and are read once before timing, so both sides read from the
 * page cache. The 1-minute load average is printed before and after: this is a
 * shared 2-core machine.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { breakdown, breakdownText } from "./breakdown.js";
import { ensureDataSet } from "./data.js";
import { machineLine } from "./run.js";
import { ensureScaleTree } from "./scale.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const ROWS = ["deep", "tail", "big", "wide", "version", "import"] as const;
type RowName = (typeof ROWS)[number];

interface AnchorArgs {
  iggyBin: string | null;
  pairs: number;
  rows: RowName[];
  breakdown: boolean;
}

function parseArgs(argv: readonly string[]): AnchorArgs {
  const args: AnchorArgs = { iggyBin: null, pairs: 5, rows: ["deep", "tail", "big", "version", "import"], breakdown: false };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === "--breakdown") {
      args.breakdown = true;
      continue;
    }
    if (argv[i] === "--iggy-bin" && value !== undefined) args.iggyBin = value;
    else if (argv[i] === "--pairs" && Number.isSafeInteger(Number(value)) && Number(value) >= 1) args.pairs = Number(value);
    else if (argv[i] === "--rows" && value !== undefined) {
      const rows = value.split(",");
      for (const row of rows)
        if (!(ROWS as readonly string[]).includes(row)) throw new RangeError(`unknown row ${row}: one of ${ROWS.join(",")}`);
      args.rows = rows as RowName[];
    } else {
      throw new RangeError(
        `unknown argument ${argv[i]}; usage: anchor.js --iggy-bin PATH [--pairs 5] [--rows ${ROWS.join(",")}] [--breakdown]`,
      );
    }
    i++;
  }
  return args;
}

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const ENTRY = fileURLToPath(new URL("../src/index.js", import.meta.url));

/** GNU time, when installed: also gives each process's CPU time (user + system), which other load skews less than wall time. */
const GNU_TIME = "/usr/bin/time";
const CPU_MARK = "segscan-anchor-cpu";

interface Timed {
  wallMs: number;
  /** User + system CPU of the process and its threads (ms), or NaN without GNU time. */
  cpuMs: number;
}

/** One whole process: its wall time (start to exit) and CPU time, or an error naming it when it fails. */
function timeProcess(command: readonly string[], okCodes: readonly number[] = [0]): Timed {
  const viaTime = existsSync(GNU_TIME);
  const argv = viaTime ? [GNU_TIME, "-f", `${CPU_MARK} %U %S`, ...command] : [...command];
  const startedAt = performance.now();
  const run = spawnSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", maxBuffer: 64 * MiB });
  const wallMs = performance.now() - startedAt;
  if (run.status === null || !okCodes.includes(run.status)) {
    throw new Error(`bench anchor: ${command.join(" ")} exited ${run.status ?? run.signal}: ${(run.stderr ?? "").slice(0, 400)}`);
  }
  const cpu = new RegExp(`${CPU_MARK} ([\\d.]+) ([\\d.]+)`).exec(run.stderr ?? "");
  return { wallMs, cpuMs: cpu === null ? Number.NaN : (Number(cpu[1]) + Number(cpu[2])) * 1000 };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

interface PairRow {
  row: string;
  segscan: string;
  other: string;
  /** Medians of the wall times (ms). */
  segscanMs: number;
  otherMs: number;
  ratio: number;
  /** Medians of the CPU times (ms; NaN without GNU time). */
  segscanCpuMs: number;
  otherCpuMs: number;
  segscanRuns: number[];
  otherRuns: number[];
}

/** `a` and `b` alternating, `pairs` times each, after one untimed run of each (warms the page cache). */
function alternate(row: string, a: readonly string[], b: readonly string[], pairs: number, okA: readonly number[] = [0]): PairRow {
  timeProcess(a, okA);
  timeProcess(b);
  const runsA: Timed[] = [];
  const runsB: Timed[] = [];
  for (let i = 0; i < pairs; i++) {
    runsA.push(timeProcess(a, okA));
    runsB.push(timeProcess(b));
  }
  const segscanMs = median(runsA.map((run) => run.wallMs));
  const otherMs = median(runsB.map((run) => run.wallMs));
  return {
    row,
    segscan: shown(a),
    other: shown(b),
    segscanMs,
    otherMs,
    ratio: segscanMs / otherMs,
    segscanCpuMs: median(runsA.map((run) => run.cpuMs)),
    otherCpuMs: median(runsB.map((run) => run.cpuMs)),
    segscanRuns: runsA.map((run) => run.wallMs),
    otherRuns: runsB.map((run) => run.wallMs),
  };
}

const shown = (command: readonly string[]): string =>
  command.map((part) => (part === process.execPath ? "node" : part === CLI ? "segscan" : part)).join(" ");

/** `import(entry)` timed inside a fresh process (ms), `runs` times: the package's own import cost, without Node's start-up. */
function importTimes(runs: number): number[] {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(ENTRY).href)}); process.stdout.write(String(performance.now() - t));`;
  const times: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`bench anchor: import failed: ${run.stderr}`);
    if (i > 0) times.push(Number(run.stdout));
  }
  return times;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const [loadAtStart = 0] = loadavg();
  console.log(`bench anchor: ${new Date().toISOString()}, ${args.pairs} alternating pairs per row, medians of whole processes`);
  const iggy = args.iggyBin !== null && existsSync(args.iggyBin) ? args.iggyBin : null;
  if (iggy === null) {
    console.log(
      args.iggyBin === null
        ? "bench anchor: skipped the Iggy rows: no --iggy-bin PATH given (the program built from Iggy's segment code)"
        : `bench anchor: skipped the Iggy rows: ${args.iggyBin} does not exist`,
    );
  }
  const progress = (line: string): void => console.error(line);
  if (args.breakdown) {
    const tree = await ensureScaleTree(2000, 200 * KiB, progress);
    for (const deep of [false, true]) console.log(`${breakdownText(breakdown(tree, deep, args.pairs))}\n`);
  }
  const rows: PairRow[] = [];
  const node = process.execPath;
  for (const name of args.rows) {
    if (name === "version") {
      rows.push(alternate("segscan --version vs node -e 0", [node, CLI, "--version"], [node, "-e", "0"], args.pairs));
    } else if (name === "import") {
      const times = importTimes(args.pairs);
      console.log(
        `import("segscan") in a fresh process: median ${median(times).toFixed(1)} ms (runs: ${times.map((t) => t.toFixed(1)).join(", ")})`,
      );
      continue;
    } else if (iggy !== null) {
      if (name === "deep" || name === "tail") {
        const tree = await ensureScaleTree(2000, 200 * KiB, progress);
        rows.push(
          name === "deep"
            ? alternate("2,000 × 204 KiB, deep", [node, CLI, "scan", tree, "--deep", "--no-progress"], [iggy, "read-dir", tree], args.pairs)
            : alternate("2,000 × 204 KiB, tail", [node, CLI, "scan", tree, "--no-progress"], [iggy, "recover", tree], args.pairs),
        );
      } else if (name === "big") {
        const set = await ensureDataSet("deep", 128 * MiB, progress);
        rows.push(
          alternate(
            "one 128 MiB segment, deep",
            [node, CLI, "scan", set.dir, "--deep", "--no-progress"],
            [iggy, "read-dir", set.dir],
            args.pairs,
          ),
        );
      } else if (name === "wide") {
        const tree = await ensureScaleTree(50_000, 16 * KiB, progress);
        rows.push(alternate("50,000 × 105 KiB, tail", [node, CLI, "scan", tree, "--no-progress"], [iggy, "recover", tree], args.pairs));
      }
    } else {
      continue;
    }
    const row = rows.at(-1)!;
    console.log(
      `${row.row}: ${row.segscan} ${seconds(row.segscanMs)} vs ${row.other} ${seconds(row.otherMs)} → ${row.ratio.toFixed(2)}× ` +
        `(cpu ${seconds(row.segscanCpuMs)} vs ${seconds(row.otherCpuMs)} → ${(row.segscanCpuMs / row.otherCpuMs).toFixed(2)}×; ` +
        `wall runs ms: ${row.segscanRuns.map((t) => t.toFixed(0)).join(",")} | ${row.otherRuns.map((t) => t.toFixed(0)).join(",")})`,
    );
  }
  if (rows.length > 0) {
    console.log("");
    console.log("| row | segscan | other | ratio (wall) | ratio (cpu) |");
    console.log("| --- | ---: | ---: | ---: | ---: |");
    for (const row of rows) {
      const cpuRatio = row.segscanCpuMs / row.otherCpuMs;
      console.log(
        `| ${row.row} | ${seconds(row.segscanMs)} | ${seconds(row.otherMs)} | ${row.ratio.toFixed(2)}× | ${Number.isFinite(cpuRatio) ? `${cpuRatio.toFixed(2)}×` : "n/a"} |`,
      );
    }
  }
  console.log(machineLine(loadAtStart));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
