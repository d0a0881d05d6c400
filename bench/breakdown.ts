/**
 * Where a whole `segscan scan` process spends its time (docs/benchmarks.md
 * "Breakdown"): the CLI run once under V8's sampling profiler on every thread
 * (`--cpu-prof`), each sample's self time put in one category by the function
 * and script it was taken in, beside the process's wall and CPU time, a bare
 * `node -e 0`, and the syscalls `strace -f -c` counts in a separate run.
 *
 *   node dist/bench/breakdown.js <tree> [--deep] [--runs 3]     (or: anchor.js --breakdown)
 *
 * The profiler adds a few percent; the strace run is separate because strace
 * slows every syscall. Categories (the first that matches wins):
 *
 * | category            | samples taken in                                                                  |
 * | ------------------- | --------------------------------------------------------------------------------- |
 * | gc                  | `(garbage collector)`                                                             |
 * | wasm                | a Wasm function (`wasm://` scripts, `wasm-function[…]` names)                     |
 * | module load         | Node's module loader (`node:internal/modules/…`) and code it runs before `main`;  |
 * |                     | the bundle's loader (`loadBundle`) and a bundled module's body run on first use   |
 * | syscalls (js side)  | the fs bindings: `readSync`, `openSync`, `fstat`, `readdir`, `close`, …           |
 * | discovery           | src/recovery/targets.ts (the directory walk; in the bundle, by its line)          |
 * | segscan js          | any other script of this package (walk, verdicts, reports, the CLI)               |
 * | node js             | any other `node:` script (streams, workers, buffers)                              |
 * | v8 (program)        | `(program)`: compilation, the interpreter's own work, the embedder                |
 * | idle                | `(idle)`: a thread waiting (a worker with no partition, the main thread on them)  |
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
/** The bundle the CLI runs (scripts/bundle.mjs), when built. */
const CLI_BUNDLE = fileURLToPath(new URL("../segscan-cli.cjs", import.meta.url));
const PACKAGE_DIST = fileURLToPath(new URL("../", import.meta.url));

/** The sampling interval asked of V8 (µs): fine enough for a 200 ms run, coarse enough to cost little. */
const PROFILE_INTERVAL_US = 250;

export const CATEGORIES = [
  "gc",
  "wasm",
  "module load",
  "syscalls (js side)",
  "discovery",
  "segscan js",
  "node js",
  "v8 (program)",
  "idle",
] as const;
export type Category = (typeof CATEGORIES)[number];

/** The fs binding functions whose samples are the syscalls' own time as seen from JavaScript. */
const FS_BINDINGS = new Set([
  "readSync",
  "read",
  "openSync",
  "open",
  "closeSync",
  "close",
  "fstatSync",
  "fstat",
  "statSync",
  "stat",
  "lstat",
  "lstatSync",
  "readdirSync",
  "readdir",
  "realpathSync",
  "realpath",
  "readFileUtf8",
  "readFileSync",
  "existsSync",
  "opendirSync",
]);

interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based, as V8 writes it. */
  lineNumber?: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The category of one sample, from its own frame and whether a module-loading frame is on its stack. */
export function categoryOf(frame: CallFrame, underModuleLoad: boolean): Category {
  const { functionName, url } = frame;
  if (functionName === "(garbage collector)") return "gc";
  if (functionName === "(idle)") return "idle";
  if (url.startsWith("wasm://") || functionName.startsWith("wasm-function") || functionName.startsWith("$")) return "wasm";
  if (functionName === "(program)" || functionName === "(root)") return underModuleLoad ? "module load" : "v8 (program)";
  if (underModuleLoad || url.startsWith("node:internal/modules")) return "module load";
  if (FS_BINDINGS.has(functionName) && (url === "" || url.startsWith("node:"))) return "syscalls (js side)";
  if (url.includes("/recovery/targets.")) return "discovery";
  if (url.includes(PACKAGE_DIST) || url.includes("/segscan/dist/")) return "segscan js";
  if (url.startsWith("node:") || url === "") return "node js";
  return "segscan js";
}

/**
 * The CLI runs from one bundle (dist/segscan-cli.cjs, scripts/bundle.mjs): a frame in it is told apart by the module
 * its line lies in, from the `// src/…` comment esbuild writes above each module's code. `sourceAt(line)` names it.
 */
export function bundleSourceIndex(bundleText: string): (line: number) => string | null {
  const starts: { line: number; source: string }[] = [];
  bundleText.split("\n").forEach((text, line) => {
    const marker = /^\s*\/\/ ((?:src|bench|node_modules)\/\S+\.[cm]?[jt]s)$/.exec(text);
    if (marker !== null) starts.push({ line, source: marker[1]! });
  });
  return (line) => {
    let low = 0;
    let high = starts.length - 1;
    let found: string | null = null;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (starts[middle]!.line <= line) {
        found = starts[middle]!.source;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  };
}

/** A frame of the bundle, named by its module (`…/segscan-cli.cjs#src/recovery/targets.ts`); any other frame as it is. */
function withBundleSource(frame: CallFrame, bundlePath: string, sourceAt: ((line: number) => string | null) | null): CallFrame {
  if (sourceAt === null || frame.lineNumber === undefined) return frame;
  const path = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
  if (path !== bundlePath) return frame;
  const source = sourceAt(frame.lineNumber);
  return source === null ? frame : { ...frame, url: `${frame.url}#${source}` };
}

/**
 * Whether a frame loads code: Node's module loader, the CLI's bundle loader (src/cli/code-cache.ts `loadBundle`:
 * compiling the bundle and running its top level), or a bundled module's body run on first use (esbuild names
 * that function by the module's path).
 */
export function loadsModules(frame: CallFrame): boolean {
  return (
    frame.url.startsWith("node:internal/modules") ||
    frame.functionName === "loadBundle" ||
    /^(?:src|node_modules)\/\S+\.[cm]?[jt]s$/.test(frame.functionName)
  );
}

/** Self time per category (ms) of one profile; `bundle`: the CLI's bundle, to name its frames by module. */
export function categorize(
  profile: CpuProfile,
  bundle: { path: string; sourceAt: (line: number) => string | null } | null = null,
): Map<Category, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const loading = new Map<number, boolean>();
  const underModuleLoad = (id: number): boolean => {
    const known = loading.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const parent = parentOf.get(id);
    const here = loadsModules(node.callFrame);
    const value = here || (parent !== undefined && underModuleLoad(parent));
    loading.set(id, value);
    return value;
  };
  const totals = new Map<Category, number>(CATEGORIES.map((category) => [category, 0]));
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node === undefined) return;
    // timeDeltas[i] is the time since the previous sample: the interval this sample stands for.
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const category = categoryOf(withBundleSource(node.callFrame, bundle?.path ?? "", bundle?.sourceAt ?? null), underModuleLoad(id));
    totals.set(category, totals.get(category)! + ms);
  });
  return totals;
}

/** Syscalls whose time is a thread waiting (for a lock, an event, a child), not work done. */
const WAITING_SYSCALLS = new Set(["futex", "epoll_pwait", "epoll_wait", "poll", "ppoll", "wait4", "nanosleep", "clock_nanosleep"]);

/** One syscall row of `strace -c`: calls, errors and seconds. */
export interface SyscallRow {
  name: string;
  calls: number;
  seconds: number;
}

/** Parses the table `strace -f -c` prints on stderr. */
export function parseStraceSummary(text: string): SyscallRow[] {
  const rows: SyscallRow[] = [];
  for (const line of text.split("\n")) {
    const match = /^\s*([\d.]+)\s+([\d.]+)\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)\s*$/.exec(line);
    if (match !== null) rows.push({ name: match[4]!, calls: Number(match[3]), seconds: Number(match[2]) });
  }
  return rows;
}

export interface Breakdown {
  command: string;
  runs: number;
  /** Medians (ms). */
  wallMs: number;
  cpuMs: number;
  nodeStartMs: number;
  /** Median self time per category over the runs, summed over every thread (ms). */
  categories: Record<Category, number>;
  threads: number;
  syscalls: { calls: number; seconds: number; top: SyscallRow[] } | null;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The wall and CPU time of one process (CPU from its rusage: every thread). */
function timed(argv: readonly string[]): { wallMs: number; cpuMs: number } {
  const startedAt = performance.now();
  const run = spawnSync("/usr/bin/time", ["-f", "breakdown-cpu %U %S", ...argv], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const wallMs = performance.now() - startedAt;
  if (run.status !== 0 && run.status !== 4) throw new Error(`bench breakdown: ${argv.join(" ")} exited ${run.status}: ${run.stderr}`);
  const cpu = /breakdown-cpu ([\d.]+) ([\d.]+)/.exec(run.stderr ?? "");
  return { wallMs, cpuMs: cpu === null ? Number.NaN : (Number(cpu[1]) + Number(cpu[2])) * 1000 };
}

/** The scan's own exit codes that are not failures: 0 clean, 4 problems found. */
const SCAN_OK = [0, 4];

function profiled(scanArgs: readonly string[]): { categories: Map<Category, number>; threads: number } {
  const dir = mkdtempSync(join(tmpdir(), "segscan-breakdown-"));
  try {
    const run = spawnSync(
      process.execPath,
      ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`, CLI, ...scanArgs],
      { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" },
    );
    if (run.status === null || !SCAN_OK.includes(run.status))
      throw new Error(`bench breakdown: profiled run exited ${run.status}: ${run.stderr}`);
    const totals = new Map<Category, number>(CATEGORIES.map((category) => [category, 0]));
    const files = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"));
    const bundle = existsSync(CLI_BUNDLE) ? { path: CLI_BUNDLE, sourceAt: bundleSourceIndex(readFileSync(CLI_BUNDLE, "utf8")) } : null;
    for (const file of files) {
      const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
      for (const [category, ms] of categorize(profile, bundle)) totals.set(category, totals.get(category)! + ms);
    }
    return { categories: totals, threads: files.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function straced(scanArgs: readonly string[]): Breakdown["syscalls"] {
  const dir = mkdtempSync(join(tmpdir(), "segscan-strace-"));
  const summary = join(dir, "strace.txt");
  try {
    const run = spawnSync("strace", ["-f", "-c", "-o", summary, process.execPath, CLI, ...scanArgs], { stdio: "ignore" });
    if (run.error !== undefined) return null; // strace is not installed
    const rows = parseStraceSummary(readFileSync(summary, "utf8")).filter((row) => row.name !== "total");
    return {
      calls: rows.reduce((sum, row) => sum + row.calls, 0),
      // A thread blocked in futex or epoll is waiting, not working: its time is not the syscalls' cost.
      seconds: rows.filter((row) => !WAITING_SYSCALLS.has(row.name)).reduce((sum, row) => sum + row.seconds, 0),
      top: [...rows].sort((a, b) => b.calls - a.calls).slice(0, 8),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The breakdown of `segscan scan <tree> [--deep]`, `runs` profiled runs after one untimed warm-up. */
export function breakdown(tree: string, deep: boolean, runs: number): Breakdown {
  const scanArgs = ["scan", tree, ...(deep ? ["--deep"] : []), "--no-progress"];
  timed([process.execPath, CLI, ...scanArgs]); // warms the page cache
  const walls: number[] = [];
  const cpus: number[] = [];
  const starts: number[] = [];
  const perRun: Map<Category, number>[] = [];
  let threads = 0;
  for (let i = 0; i < runs; i++) {
    const whole = timed([process.execPath, CLI, ...scanArgs]);
    walls.push(whole.wallMs);
    cpus.push(whole.cpuMs);
    starts.push(timed([process.execPath, "-e", "0"]).wallMs);
    const profile = profiled(scanArgs);
    perRun.push(profile.categories);
    threads = profile.threads;
  }
  const categories = Object.fromEntries(
    CATEGORIES.map((category) => [category, median(perRun.map((run) => run.get(category)!))]),
  ) as Record<Category, number>;
  return {
    command: `segscan ${scanArgs.join(" ")}`,
    runs,
    wallMs: median(walls),
    cpuMs: median(cpus),
    nodeStartMs: median(starts),
    categories,
    threads,
    syscalls: straced(scanArgs),
  };
}

/** The breakdown as a markdown table and a few lines (docs/benchmarks.md). */
export function breakdownText(result: Breakdown): string {
  const lines = [
    `${result.command}: wall ${result.wallMs.toFixed(0)} ms, cpu ${result.cpuMs.toFixed(0)} ms (medians of ${result.runs}; ` +
      `${result.threads} thread profile(s); node -e 0: ${result.nodeStartMs.toFixed(0)} ms; ${cpus().length} cores)`,
    "",
    "| where (self time, every thread) | ms |",
    "| --- | ---: |",
    ...CATEGORIES.map((category) => `| ${category} | ${result.categories[category].toFixed(1)} |`),
  ];
  if (result.syscalls !== null) {
    lines.push(
      "",
      `syscalls (strace -f -c, a separate run): ${result.syscalls.calls} calls, ${(result.syscalls.seconds * 1000).toFixed(1)} ms in the kernel (waits excluded; strace inflates it); ` +
        `most: ${result.syscalls.top.map((row) => `${row.name} ${row.calls}`).join(", ")}`,
    );
  } else {
    lines.push("", "syscalls: strace is not installed (apt-get install strace)");
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const tree = argv.find((arg) => !arg.startsWith("--"));
  if (tree === undefined) throw new RangeError("usage: breakdown.js <tree> [--deep] [--runs N]");
  const runsAt = argv.indexOf("--runs");
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 3;
  console.log(breakdownText(breakdown(tree, argv.includes("--deep"), runs)));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
