/**
 * Node-scale benchmark (docs/benchmarks.md): N small partitions of
 * one segment each, scanned in tail and deep mode on one thread, against the
 * read-every-file floor of the same tree (walk the tree, `readSync` every
 * `.log` and `.index` whole), plus the peak RSS of a child process running
 * `segscan scan --ndjson` over the tree, for each N.
 *
 *   node dist/bench/scale.js [--sizes 1000,10000,50000] [--segment-bytes 16384] [--rounds 3]
 *
 * Trees are generated once into the bench cache ($SEGSCAN_BENCH_CACHE or
 * $TMPDIR/segscan-bench-cache): one partition is generated, then its two files
 * are copied N times (the scan never compares partitions, so copies cost it
 * exactly what distinct partitions would). Ratios are scan speed over floor
 * speed within one run (> 1 means faster than the floor); the 1-minute load
 * average is printed, since other processes skew wall times.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { loadavg } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../src/engine/index.js";
import { MIN_FLUSH_BYTES } from "../src/gen/generate.js";
import { generateDataDir } from "../src/gen/index.js";
import { scanPath } from "../src/node/scan-path.js";
import { cacheRoot } from "./data.js";
import { machineLine } from "./run.js";

/** Bump when the bytes written change: trees are cached by this name. */
const SCALE_DATA_VERSION = "scale-v2";
const KiB = 1024;
const DEFAULT_SIZES = [1000, 10_000];
/**
 * The generator's segmentBytes: a segment closes once it holds this much and
 * its last chunk holds ≥ 3 batches, so 16 KiB gives segments of ≈ 105 KiB
 * with a few index entries, like most partitions of a real node. The bench
 * prints the bytes actually read per partition.
 */
const DEFAULT_SEGMENT_BYTES = 16 * KiB;
const DEFAULT_ROUNDS = 3;
/** Partition directories per parent directory, so no listing holds 50,000 names. */
const PARTITIONS_PER_TOPIC = 1000;
/** The floor's read buffer: larger than any generated file. */
const FLOOR_BUFFER_BYTES = 8 * 1024 * KiB;

interface ScaleArgs {
  sizes: number[];
  segmentBytes: number;
  rounds: number;
}

function parseArgs(argv: readonly string[]): ScaleArgs {
  const args: ScaleArgs = { sizes: DEFAULT_SIZES, segmentBytes: DEFAULT_SEGMENT_BYTES, rounds: DEFAULT_ROUNDS };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    const positive = (text: string | undefined, flag: string): number => {
      const parsed = Number(text);
      if (!Number.isSafeInteger(parsed) || parsed < 1) throw new RangeError(`${flag} needs a positive integer, got ${String(text)}`);
      return parsed;
    };
    if (argv[i] === "--sizes") args.sizes = (value ?? "").split(",").map((part) => positive(part, "--sizes"));
    else if (argv[i] === "--segment-bytes") args.segmentBytes = positive(value, "--segment-bytes");
    else if (argv[i] === "--rounds") args.rounds = positive(value, "--rounds");
    else throw new RangeError(`unknown argument ${argv[i]}; usage: scale.js [--sizes 1000,10000] [--segment-bytes 16384] [--rounds 3]`);
    i++;
  }
  return args;
}

/** The cached tree of `count` partitions (generated once: one partition, copied). */
export async function ensureScaleTree(count: number, segmentBytes: number, progress: (line: string) => void): Promise<string> {
  const dir = join(cacheRoot(), SCALE_DATA_VERSION, `n${count}-s${segmentBytes}`);
  if (existsSync(join(dir, ".complete"))) return dir;
  progress(`bench scale: generating ${count} partitions of ${segmentBytes} bytes into ${dir} (once; cached)…`);
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const template = await generateDataDir(join(staging, "template"), {
    streams: 1,
    topicsPerStream: 1,
    partitionsPerTopic: 1,
    segmentsPerPartition: 1,
    segmentBytes,
    flushBytes: Math.max(MIN_FLUSH_BYTES, Math.floor(segmentBytes / 4)),
    maxBatchMessages: 8,
    force: true,
  });
  const segment = template.partitions[0]!.segments[0]!;
  for (let i = 0; i < count; i++) {
    const partition = join(staging, "streams", "1", "topics", String(1 + Math.floor(i / PARTITIONS_PER_TOPIC)), "partitions", String(i));
    mkdirSync(partition, { recursive: true });
    copyFileSync(segment.logPath, join(partition, basename(segment.logPath)));
    copyFileSync(segment.indexPath, join(partition, basename(segment.indexPath)));
  }
  rmSync(join(staging, "template"), { recursive: true, force: true });
  writeFileSync(join(staging, ".complete"), `${count} partitions × ${segment.size} bytes\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return dir;
}

/** The floor: find every `.log`/`.index` by walking the tree, and read each whole with `readSync`. Returns bytes read. */
function readEveryFile(dir: string, buffer: Uint8Array): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      total += readEveryFile(path, buffer);
    } else if (entry.name.endsWith(".log") || entry.name.endsWith(".index")) {
      const fd = openSync(path, "r");
      try {
        for (let count = readSync(fd, buffer); count > 0; count = readSync(fd, buffer)) total += count;
      } finally {
        closeSync(fd);
      }
    }
  }
  return total;
}

/** Peak RSS (bytes) of `segscan scan --ndjson <dir>` in a child process, from GNU time; null without /usr/bin/time. */
function childPeakRss(dir: string, deep: boolean, nodeOptions?: string): number | null {
  const time = "/usr/bin/time";
  if (!existsSync(time)) return null;
  const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
  const run = spawnSync(
    time,
    [
      "-f",
      "peak-rss-kib %M",
      process.execPath,
      cli,
      "scan",
      "--ndjson",
      "--no-progress",
      "--concurrency",
      "1",
      ...(deep ? ["--deep"] : []),
      dir,
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: nodeOptions === undefined ? process.env : { ...process.env, NODE_OPTIONS: nodeOptions },
    },
  );
  const match = /peak-rss-kib (\d+)/.exec(run.stderr ?? "");
  return match ? Number(match[1]) * KiB : null;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export interface ScaleRow {
  partitions: number;
  segmentBytes: number;
  /** `.log` + `.index` bytes per partition, as the floor read them. */
  bytesPerPartition: number;
  /** Median wall times (ms) of the floor and of each scan. */
  floorMs: number;
  tailMs: number;
  deepMs: number;
  /** Deep, `concurrency: 2` (the worker pool when the tree holds ≥ POOL_MIN_BYTES of logs). */
  deepPoolMs: number;
  /** Median CPU times (ms, user + system, this process) of the floor and the one-thread scans: less skewed by other load than wall times. */
  floorCpuMs: number;
  tailCpuMs: number;
  deepCpuMs: number;
  peakRssTailBytes: number | null;
  peakRssDeepBytes: number | null;
  /** Tail, with V8's young generation capped (NODE_OPTIONS=--max-semi-space-size=2): what the scan itself keeps, without V8 growing its nursery from 16 to 32 MiB on a long run. */
  peakRssTailCappedBytes: number | null;
  /** Deep, `io: "async"` (the library's default: the scan thread, docs/engines.md §7.6). */
  deepAsyncMs: number;
  /** Tail, `io: "async"`. */
  tailAsyncMs: number;
}

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

async function measure(count: number, args: ScaleArgs): Promise<ScaleRow> {
  const dir = await ensureScaleTree(count, args.segmentBytes, (line) => console.error(line));
  const engine = await createEngine("wasm");
  const buffer = new Uint8Array(FLOOR_BUFFER_BYTES);
  const wall = {
    floor: [] as number[],
    tail: [] as number[],
    deep: [] as number[],
    deepPool: [] as number[],
    deepAsync: [] as number[],
    tailAsync: [] as number[],
  };
  const cpu = { floor: [] as number[], tail: [] as number[], deep: [] as number[] };
  const treeBytes = readEveryFile(dir, buffer); // also warms the page cache
  // Round -1 is untimed: it warms the JIT of this thread and of the scan thread the async rows run on (docs/engines.md §7.6).
  for (let round = -1; round < args.rounds; round++) {
    const timed = round >= 0;
    let startedAt = performance.now();
    let cpuAt = cpuMs();
    readEveryFile(dir, buffer);
    if (timed) wall.floor.push(performance.now() - startedAt);
    if (timed) cpu.floor.push(cpuMs() - cpuAt);
    for (const [name, verify, concurrency, io] of [
      ["tail", "tail", 1, "blocking"],
      ["deep", "full", 1, "blocking"],
      ["deepPool", "full", 2, "blocking"],
      ["deepAsync", "full", 1, "async"],
      ["tailAsync", "tail", 1, "async"],
    ] as const) {
      startedAt = performance.now();
      cpuAt = cpuMs();
      const report = await scanPath(dir, { engine, verify, concurrency, io });
      if (timed) wall[name].push(performance.now() - startedAt);
      if (timed && (name === "tail" || name === "deep")) cpu[name].push(cpuMs() - cpuAt);
      if (report.summary.clean !== count)
        throw new Error(`bench scale: expected ${count} clean partitions, got ${JSON.stringify(report.summary)}`);
    }
  }
  return {
    partitions: count,
    segmentBytes: args.segmentBytes,
    bytesPerPartition: Math.round(treeBytes / count),
    floorMs: median(wall.floor),
    tailMs: median(wall.tail),
    deepMs: median(wall.deep),
    deepPoolMs: median(wall.deepPool),
    floorCpuMs: median(cpu.floor),
    tailCpuMs: median(cpu.tail),
    deepCpuMs: median(cpu.deep),
    peakRssTailBytes: childPeakRss(dir, false),
    peakRssDeepBytes: childPeakRss(dir, true),
    peakRssTailCappedBytes: childPeakRss(dir, false, "--max-semi-space-size=2"),
    deepAsyncMs: median(wall.deepAsync),
    tailAsyncMs: median(wall.tailAsync),
  };
}

const mib = (bytes: number | null): string => (bytes === null ? "n/a" : `${(bytes / (1024 * KiB)).toFixed(1)} MiB`);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const [loadAtStart = 0] = loadavg();
  const rows: ScaleRow[] = [];
  for (const count of args.sizes) {
    const row = await measure(count, args);
    rows.push(row);
    const ratio = (floor: number, scan: number): string => `${(floor / scan).toFixed(2)}×`;
    console.log(
      `${count} partitions × ${(row.bytesPerPartition / KiB).toFixed(0)} KiB (--segment-bytes ${args.segmentBytes}), blocking io, median of ${args.rounds}: ` +
        `floor ${row.floorMs.toFixed(0)} ms (cpu ${row.floorCpuMs.toFixed(0)} ms); ` +
        `tail 1 thread ${row.tailMs.toFixed(0)} ms = ${ratio(row.floorMs, row.tailMs)} floor (cpu ${ratio(row.floorCpuMs, row.tailCpuMs)}); ` +
        `deep 1 thread ${row.deepMs.toFixed(0)} ms = ${ratio(row.floorMs, row.deepMs)} (cpu ${ratio(row.floorCpuMs, row.deepCpuMs)}); ` +
        `deep concurrency 2 ${row.deepPoolMs.toFixed(0)} ms = ${ratio(row.floorMs, row.deepPoolMs)}; ` +
        `deep async io ${row.deepAsyncMs.toFixed(0)} ms = ${(row.deepAsyncMs / row.deepMs).toFixed(2)}× blocking; ` +
        `tail async io ${row.tailAsyncMs.toFixed(0)} ms = ${(row.tailAsyncMs / row.tailMs).toFixed(2)}× blocking; ` +
        `peak RSS of scan --ndjson: tail ${mib(row.peakRssTailBytes)}, deep ${mib(row.peakRssDeepBytes)}, tail with a 2 MiB semi-space ${mib(row.peakRssTailCappedBytes)}`,
    );
  }
  if (rows.length > 1) {
    const rss = rows.map((row) => row.peakRssTailBytes).filter((bytes): bytes is number => bytes !== null);
    if (rss.length === rows.length)
      console.log(`peak RSS growth ${rows[0]!.partitions} → ${rows.at(-1)!.partitions} partitions (tail): ${mib(rss.at(-1)! - rss[0]!)}`);
    const capped = rows.map((row) => row.peakRssTailCappedBytes).filter((bytes): bytes is number => bytes !== null);
    if (capped.length === rows.length)
      console.log(
        `peak RSS growth ${rows[0]!.partitions} → ${rows.at(-1)!.partitions} partitions (tail, 2 MiB semi-space): ${mib(capped.at(-1)! - capped[0]!)}`,
      );
  }
  console.log(machineLine(loadAtStart));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
