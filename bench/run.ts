/**
 * The benchmark suite (docs/benchmarks.md §10), run by `segscan bench [--json]` and directly
 * as `node dist/bench/run.js [--json] [--quick] [--scaling]`.
 *
 * Tasks (each row's ratio is its MB/s over the MB/s of the task's reference row,
 * measured in the same run):
 * - XXH3-64 over one 64 MiB input and over 1024 distinct 1 KiB inputs per op:
 *   wasm engine, ts engine, hash-wasm `createXXHash3(0, 0)`; reference hash-wasm
 *   (the ts engine when hash-wasm, a devDependency, cannot be imported).
 * - deep verification walk (`scanPartition`, verify "full") of a 256 MiB segment
 *   of ~1 KiB messages in batches of 64–100, an index entry per ~1 MiB; wasm and
 *   ts; reference "raw-read": the positioned read of the same file in 1 MiB
 *   windows into one reused buffer through `FileHandle.read` (the I/O path the
 *   scan itself uses), with the page cache warm. "raw-read-sync" (`readSync`,
 *   no thread-pool round trip per window) is shown beside it as the lower floor.
 * - the damage probe (`scanPartition`, verify "tail") over a 256 MiB residue of
 *   zeros, of random bytes and of crafted decoding headers behind one small
 *   batch (bench/data.ts); wasm and ts; reference: the raw read of the same file.
 * `--scaling` runs the scans at 64 MiB, 256 MiB and 1 GiB instead and shows the
 * probe's budget plateau on crafted residues.
 *
 * Data sets are generated once and cached outside the repo (bench/data.ts).
 * Every scan's report is checked once before it is timed (untimed; it also warms
 * the JIT), so a row never times a scan that reached the wrong answer unnoticed.
 * The contenders of a task are timed in interleaved rounds (see Plan).
 * MB = 10^6 bytes; MB/s comes from the median time per op.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync, realpathSync } from "node:fs";
import { open } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";
import { createEngine } from "../src/engine/index.js";
import type { Engine } from "../src/engine/types.js";
import { PROBE_BUDGET_UNITS } from "../src/format/constants.js";
// From the package entry, as a service imports it: its async scans then run on the scan thread (docs/engines.md §7.6).
import { scanPartition } from "../src/index.js";
import type { ScanReport } from "../src/domain/scan.js";
import { ByteSource, type DataKind, type DataSet, cacheRoot, ensureDataSet } from "./data.js";
import { scanWalFile, walProbeData, walProblem, walVerifyData } from "./wal.js";

export interface BenchRow {
  task: string;
  /** "wasm", "wasm-blocking", "ts", "hash-wasm", "raw-read" or "raw-read-sync". */
  engine: string;
  bytesPerOp: number;
  /** 10^6 bytes per second, from the median time per op. */
  mbPerSec: number;
  /** mbPerSec ÷ the reference row's mbPerSec (same task, same run). */
  ratio: number;
  /** The `engine` of the task's reference row. */
  reference: string;
}

export interface RunBenchOptions {
  json: boolean;
  /** Small sizes (16 MiB) for a fast smoke run. */
  quick?: boolean;
  /** The scaling check: the scans at 64 MiB, 256 MiB and 1 GiB, and the probe's budget plateau. */
  scaling?: boolean;
  /** Where the table (or the JSON) goes; default console.log. */
  log?: (line: string) => void;
  /** Where progress and notes go; default stderr. */
  progress?: (line: string) => void;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
/** The raw read's window, like the scan's default window. */
const RAW_WINDOW_BYTES = 1 * MiB;

interface Timing {
  medianMs: number;
  meanMs: number;
  samples: number;
}

/**
 * The contenders of one task are measured in interleaved rounds (each round runs
 * every contender in turn), and each contender's samples of all rounds are
 * pooled: a machine whose load drifts during the run (other processes on a
 * shared box) then skews every row of a task alike instead of one row.
 */
interface Plan {
  rounds: number;
  /** Per contender and round (tinybench `iterations`). */
  iterationsPerRound: number;
  /** ms per contender and round (tinybench `time`; it runs until both are met). */
  timePerRound: number;
  /** tinybench warmup iterations, first round only; 0 for scans (their untimed checking run warms them). */
  warmupIterations: number;
}

interface Contender {
  engine: string;
  fn: () => unknown;
  isAsync: boolean;
}

const HASH_PLAN: Plan = { rounds: 5, iterationsPerRound: 3, timePerRound: 60, warmupIterations: 3 };
const SCAN_PLAN: Plan = { rounds: 7, iterationsPerRound: 1, timePerRound: 0, warmupIterations: 0 };
const QUICK_HASH_PLAN: Plan = { rounds: 3, iterationsPerRound: 2, timePerRound: 15, warmupIterations: 2 };
const QUICK_SCAN_PLAN: Plan = { rounds: 3, iterationsPerRound: 1, timePerRound: 0, warmupIterations: 0 };

async function measureGroup(label: string, contenders: readonly Contender[], plan: Plan): Promise<Array<[string, Timing]>> {
  const samples = contenders.map((): number[] => []);
  for (let round = 0; round < plan.rounds; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[i]!;
      const warmup = round === 0 && plan.warmupIterations > 0;
      const bench = new Bench({
        name: `${label} ${contender.engine}`,
        iterations: plan.iterationsPerRound,
        time: plan.timePerRound,
        warmup,
        warmupIterations: plan.warmupIterations,
        warmupTime: 0,
        retainSamples: true,
        throws: true,
      });
      bench.add(contender.engine, contender.fn as () => void, { async: contender.isAsync });
      const [task] = await bench.run();
      const result = task?.result;
      if (!result || (result.state !== "completed" && result.state !== "aborted-with-statistics")) {
        throw new Error(`bench task ${label} ${contender.engine} did not complete (${result?.state ?? "no result"})`);
      }
      samples[i]!.push(...(result.latency.samples ?? [result.latency.p50]));
    }
  }
  return contenders.map((contender, i) => {
    const sorted = samples[i]!.slice().sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const medianMs = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    const meanMs = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    return [contender.engine, { medianMs, meanMs, samples: sorted.length }];
  });
}

function mbPerSec(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

// ---------------------------------------------------------------------------
// The raw read: the physical floor of every scan

async function rawRead(path: string, buffer: Uint8Array): Promise<number> {
  const handle = await open(path, "r");
  try {
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return position;
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

function rawReadSync(path: string, buffer: Uint8Array): number {
  const fd = openSync(path, "r");
  try {
    let position = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, 0, buffer.length, position);
      if (bytesRead === 0) return position;
      position += bytesRead;
    }
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------
// Scans and the checks of their reports

interface ScanSpec {
  verify: "full" | "tail";
  probeBudgetUnits?: number;
  /** The scan's read mode (ScanOptions.io); default async. */
  io?: "async" | "blocking";
}

function scanOptions(engine: Engine, spec: ScanSpec): Parameters<typeof scanPartition>[1] {
  return {
    engine,
    verify: spec.verify,
    concurrency: 1,
    ...(spec.probeBudgetUnits !== undefined ? { probeBudgetUnits: spec.probeBudgetUnits } : {}),
    ...(spec.io !== undefined ? { io: spec.io } : {}),
  };
}

interface ScanSummary {
  verdict: string;
  outcome: string;
  probe: string | null;
  spentUnits: number;
  walkedSize: number;
  /** What is wrong with the report, or null when it is what the data set must give. */
  problem: string | null;
}

/**
 * What docs/recovery.md §3.5's accounting must give on a probe data set (bench/data.ts):
 * 1 unit per candidate, plus batch_length for each candidate that passes the
 * checks and fails to verify: every crafted header after the first and, for
 * both crafted kinds, its shifted twin one byte before it (batch_length read as L << 8)
 * when that claim fits the file: no length cap applies to a candidate that fits
 * (docs/format.md §2.2, oversized batches), so a twin over 64 MiB is charged too. `spentUnits` is null where the budget runs out.
 */
function expectedProbe(set: DataSet, limitUnits: number): { verdict: "no-survivor" | "budget-exhausted"; spentUnits: number | null } {
  const first = set.residueStart + 1;
  const last = set.logBytes - 256;
  const candidates = last - first + 1;
  const length = set.craftedBatchBytes;
  if (!length || (set.kind !== "crafted" && set.kind !== "crafted-64k")) {
    return candidates > limitUnits ? { verdict: "budget-exhausted", spentUnits: null } : { verdict: "no-survivor", spentUnits: candidates };
  }
  const headers = Math.floor((set.logBytes - set.residueStart) / length);
  let charges = 0;
  for (let i = 1; i < headers; i++) {
    const header = set.residueStart + i * length;
    const twinClaim = length * 256;
    if (header - 1 + twinClaim <= set.logBytes) {
      charges += twinClaim;
      if (header - 1 - first + 1 + charges > limitUnits) return { verdict: "budget-exhausted", spentUnits: null };
    }
    charges += length;
    if (header - first + 1 + charges > limitUnits) return { verdict: "budget-exhausted", spentUnits: null };
  }
  const spent = candidates + charges;
  return spent > limitUnits ? { verdict: "budget-exhausted", spentUnits: null } : { verdict: "no-survivor", spentUnits: spent };
}

function summarize(report: ScanReport, set: DataSet, spec: ScanSpec): ScanSummary {
  const partition = report.partitions[0];
  const segment = partition?.segments[0];
  if (!partition || !segment)
    return { verdict: "?", outcome: "?", probe: null, spentUnits: 0, walkedSize: 0, problem: "no segment in the report" };
  const residue = segment.residue;
  const summary: ScanSummary = {
    verdict: partition.verdict,
    outcome: segment.outcome,
    probe: residue?.probe ?? null,
    spentUnits: partition.budget.spentUnits,
    walkedSize: segment.walkedSize,
    problem: null,
  };
  const problems: string[] = [];
  if (partition.error) problems.push(`error ${partition.error.code}: ${partition.error.message}`);
  if (set.kind === "deep") {
    if (partition.verdict !== "clean" || segment.outcome !== "clean")
      problems.push(`verdict ${partition.verdict}/${segment.outcome}, expected clean`);
    if (segment.walkedSize !== set.logBytes) problems.push(`walked ${segment.walkedSize} of ${set.logBytes} bytes`);
    if (segment.messageCount !== set.messageCount)
      problems.push(`messageCount ${String(segment.messageCount)}, expected ${set.messageCount}`);
    if (segment.index.mismatches !== 0) problems.push(`${segment.index.mismatches} index mismatches`);
  } else {
    const expected = expectedProbe(set, spec.probeBudgetUnits ?? PROBE_BUDGET_UNITS);
    if (segment.walkedSize !== set.residueStart) problems.push(`walk stopped at ${segment.walkedSize}, expected ${set.residueStart}`);
    if (residue?.probe !== expected.verdict) problems.push(`probe ${String(residue?.probe)}, expected ${expected.verdict}`);
    if (expected.spentUnits !== null && residue?.spentUnits !== expected.spentUnits)
      problems.push(`spent ${String(residue?.spentUnits)} units, expected ${expected.spentUnits}`);
    if (residue && residue.allZero !== (set.kind === "zeros")) problems.push(`allZero ${String(residue.allZero)}`);
  }
  summary.problem = problems.length > 0 ? problems.join("; ") : null;
  return summary;
}

// ---------------------------------------------------------------------------
// Machine and formatting

/** The machine, and its 1-minute load average at the start and end of the run (other processes skew wall times). */
export function machineLine(loadAtStart?: number): string {
  const cpuList = cpus();
  const model = cpuList[0]?.model.trim() ?? "unknown CPU";
  const [loadNow = 0] = loadavg();
  const load = loadAtStart === undefined ? loadNow.toFixed(2) : `${loadAtStart.toFixed(2)} → ${loadNow.toFixed(2)}`;
  return `machine: ${model}, ${cpuList.length} cores (availableParallelism ${availableParallelism()}), Node ${process.version}, ${process.platform}-${process.arch}, 1-min load average ${load}`;
}

function sizeLabel(bytes: number): string {
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB}GiB`;
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB}MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB}KiB`;
  return `${bytes}B`;
}

function formatTable(rows: readonly BenchRow[]): string[] {
  const header = ["task", "engine", "bytes/op", "MB/s", "ratio", "vs"];
  const body = rows.map((row) => [
    row.task,
    row.engine,
    String(row.bytesPerOp),
    row.mbPerSec >= 100 ? row.mbPerSec.toFixed(0) : row.mbPerSec.toFixed(1),
    `${row.ratio.toFixed(2)}×`,
    row.engine === row.reference ? "(reference)" : row.reference,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...body.map((cells) => cells[i]!.length)));
  const right = [false, false, true, true, true, false];
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (right[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const lines = [line(header), widths.map((w) => "-".repeat(w)).join("  ")];
  let lastTask: string | undefined;
  for (let i = 0; i < rows.length; i++) {
    if (lastTask !== undefined && rows[i]!.task !== lastTask) lines.push("");
    lastTask = rows[i]!.task;
    lines.push(line(body[i]!));
  }
  return lines;
}

// ---------------------------------------------------------------------------
// Row collection

class RowSet {
  readonly rows: BenchRow[] = [];

  /** Adds the rows of one task; `reference` must be one of them. */
  addTask(task: string, reference: string, bytesPerOp: number, timings: ReadonlyArray<[engine: string, timing: Timing]>): void {
    const referenceTiming = timings.find(([engine]) => engine === reference)?.[1];
    if (!referenceTiming) throw new Error(`task ${task}: no reference row ${reference}`);
    const referenceMbPerSec = mbPerSec(bytesPerOp, referenceTiming.medianMs);
    for (const [engine, timing] of timings) {
      const rate = mbPerSec(bytesPerOp, timing.medianMs);
      this.rows.push({ task, engine, bytesPerOp, mbPerSec: round(rate, 1), ratio: round(rate / referenceMbPerSec, 3), reference });
    }
  }
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

interface HashWasm {
  createXXHash3(
    seedLow?: number,
    seedHigh?: number,
  ): Promise<{
    init(): unknown;
    update(data: Uint8Array): unknown;
    digest(outputType: "binary"): Uint8Array;
    digest(outputType?: "hex"): string;
  }>;
}

async function loadHashWasm(): Promise<HashWasm | null> {
  try {
    // A devDependency only: an installed package without it skips the peer rows.
    const specifier = "hash-wasm";
    return (await import(specifier)) as HashWasm;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// The suite

interface Context {
  quick: boolean;
  notes: string[];
  progress: (line: string) => void;
  engines: { wasm: Engine; ts: Engine };
  rawBuffer: Uint8Array;
  /** Evict each data set from the page cache before its warming read (Linux, GNU dd). */
  evictWithDd: boolean;
}

async function hashTasks(context: Context, rows: RowSet): Promise<void> {
  const plan = context.quick ? QUICK_HASH_PLAN : HASH_PLAN;
  const hashWasm = await loadHashWasm();
  const peer = hashWasm ? await hashWasm.createXXHash3(0, 0) : null;
  const reference = peer ? "hash-wasm" : "ts";
  if (!peer)
    context.notes.push(
      "hash-wasm could not be imported (it is a devDependency only): its XXH3 rows are skipped and the ts engine is the XXH3 reference",
    );
  const { wasm, ts } = context.engines;
  const source = new ByteSource(0xa11ce);
  let sink = 0n;

  const bigBytes = context.quick ? 16 * MiB : 64 * MiB;
  const big = source.fill(new Uint8Array(bigBytes));
  const expected = ts.xxh3_64(big);
  if (wasm.xxh3_64(big) !== expected) context.notes.push("WARNING: wasm and ts XXH3-64 disagree on the large input");
  if (peer) {
    peer.init();
    peer.update(big);
    if (BigInt(`0x${peer.digest("hex")}`) !== expected) context.notes.push("WARNING: hash-wasm and ts XXH3-64 disagree on the large input");
  }
  const task = `xxh3-64 ${sizeLabel(bigBytes)}`;
  context.progress(`bench: ${task}…`);
  const bigContenders: Contender[] = [];
  if (peer) {
    bigContenders.push({
      engine: "hash-wasm",
      isAsync: false,
      fn: () => {
        peer.init();
        peer.update(big);
        return peer.digest("binary");
      },
    });
  }
  bigContenders.push({ engine: "wasm", isAsync: false, fn: () => (sink ^= wasm.xxh3_64(big)) });
  bigContenders.push({ engine: "ts", isAsync: false, fn: () => (sink ^= ts.xxh3_64(big)) });
  rows.addTask(task, reference, bigBytes, await measureGroup(task, bigContenders, plan));

  const sliceBytes = 1 * KiB;
  const sliceCount = 1024;
  const pool = source.fill(new Uint8Array(sliceBytes * sliceCount));
  const slices = Array.from({ length: sliceCount }, (_, i) => pool.subarray(i * sliceBytes, (i + 1) * sliceBytes));
  const smallTask = `xxh3-64 ${sliceCount}×${sizeLabel(sliceBytes)}`;
  context.progress(`bench: ${smallTask}…`);
  for (const slice of slices.slice(0, 16)) {
    const want = ts.xxh3_64(slice);
    if (wasm.xxh3_64(slice) !== want) context.notes.push("WARNING: wasm and ts XXH3-64 disagree on a 1 KiB input");
  }
  const smallContenders: Contender[] = [];
  if (peer) {
    smallContenders.push({
      engine: "hash-wasm",
      isAsync: false,
      fn: () => {
        let last: Uint8Array | undefined;
        for (const slice of slices) {
          peer.init();
          peer.update(slice);
          last = peer.digest("binary");
        }
        return last;
      },
    });
  }
  for (const [name, engine] of [
    ["wasm", wasm],
    ["ts", ts],
  ] as const) {
    smallContenders.push({
      engine: name,
      isAsync: false,
      fn: () => {
        let x = 0n;
        for (const slice of slices) x ^= engine.xxh3_64(slice);
        sink ^= x;
        return x;
      },
    });
  }
  rows.addTask(smallTask, reference, sliceBytes * sliceCount, await measureGroup(smallTask, smallContenders, plan));
  if (sink === 0xdeadn) context.progress("");
}

/**
 * Every timed pass must find the file in the page cache, in the same state for
 * every file. How the pages got there matters: on Linux 6.x pages cached by the
 * write path (the generator's writes) read ~2× slower than pages cached by
 * readahead (a file read from disk, as after a reboot), which would make the
 * floor differ from file to file. So each file is first evicted from the cache
 * (`dd iflag=nocache count=0`, a posix_fadvise DONTNEED of that file only) and
 * then read once, untimed, through readahead. Where dd is missing, only the
 * untimed read happens (noted in the output).
 */
async function warmPageCache(context: Context, set: DataSet): Promise<void> {
  if (context.evictWithDd) {
    const result = spawnSync("dd", [`if=${set.logPath}`, "iflag=nocache", "count=0"], { stdio: "ignore", timeout: 10_000 });
    if (result.error || result.status !== 0) {
      context.evictWithDd = false;
      context.notes.push(
        "could not evict data sets from the page cache with `dd iflag=nocache` (not Linux/GNU dd?): the cached pages of each file come from however it was last read or written, which can move the raw-read floor between files",
      );
    }
  }
  await rawRead(set.logPath, context.rawBuffer);
}

function rawReadContender(context: Context, set: DataSet): Contender {
  return { engine: "raw-read", isAsync: true, fn: () => rawRead(set.logPath, context.rawBuffer) };
}

/** Checks one scan of `set` (untimed; it also warms the JIT) and returns the contender that times it. */
async function scanContender(
  context: Context,
  set: DataSet,
  engine: Engine,
  spec: ScanSpec,
  label: string,
  name: string = engine.kind,
): Promise<{ contender: Contender; summary: ScanSummary }> {
  const options = scanOptions(engine, spec);
  const summary = summarize(await scanPartition(set.dir, options), set, spec);
  if (summary.problem)
    context.notes.push(`WARNING: ${label} ${name}: unexpected report (${summary.problem}); its timing measures that outcome`);
  return { contender: { engine: name, isAsync: true, fn: () => scanPartition(set.dir, options) }, summary };
}

const SCAN_TASKS: ReadonlyArray<{ kind: DataKind; name: string; spec: ScanSpec }> = [
  { kind: "deep", name: "deep-verify", spec: { verify: "full" } },
  { kind: "zeros", name: "probe zeros", spec: { verify: "tail" } },
  { kind: "random", name: "probe random", spec: { verify: "tail" } },
  { kind: "crafted", name: "probe crafted", spec: { verify: "tail" } },
];

async function scanTasks(context: Context, rows: RowSet): Promise<void> {
  const bytes = context.quick ? 16 * MiB : 256 * MiB;
  const plan = context.quick ? QUICK_SCAN_PLAN : SCAN_PLAN;
  for (const { kind, name, spec } of SCAN_TASKS) {
    const set = await ensureDataSet(kind, bytes, context.progress);
    const task = `${name} ${sizeLabel(bytes)}`;
    context.progress(`bench: ${task}…`);
    await warmPageCache(context, set);
    const contenders: Contender[] = [rawReadContender(context, set)];
    // The like-for-like pair for the CLI's blocking reads: raw-read-sync vs wasm-blocking.
    contenders.push({ engine: "raw-read-sync", isAsync: false, fn: () => rawReadSync(set.logPath, context.rawBuffer) });
    contenders.push((await scanContender(context, set, context.engines.wasm, spec, task)).contender);
    contenders.push(
      (await scanContender(context, set, context.engines.wasm, { ...spec, io: "blocking" }, task, "wasm-blocking")).contender,
    );
    contenders.push((await scanContender(context, set, context.engines.ts, spec, task)).contender);
    rows.addTask(task, "raw-read", set.logBytes, await measureGroup(task, contenders, plan));
  }
}

/** docs/node.md N1: verify a WAL and probe a damaged WAL tail, Wasm vs TS vs the raw-read floor (64 MiB each). */
async function walTasks(context: Context, rows: RowSet): Promise<void> {
  const bytes = context.quick ? 16 * MiB : 64 * MiB;
  const plan = context.quick ? QUICK_SCAN_PLAN : SCAN_PLAN;
  for (const [kind, set] of [
    ["verify", walVerifyData(bytes)],
    ["probe", walProbeData(bytes)],
  ] as const) {
    const task = `wal ${kind} ${sizeLabel(bytes)}`;
    context.progress(`bench: ${task}…`);
    await rawRead(set.path, context.rawBuffer);
    // The WAL scan reads with blocking positioned reads, so its like-for-like floor is raw-read-sync.
    const contenders: Contender[] = [
      { engine: "raw-read-sync", isAsync: false, fn: () => rawReadSync(set.path, context.rawBuffer) },
      { engine: "raw-read", isAsync: true, fn: () => rawRead(set.path, context.rawBuffer) },
    ];
    for (const engine of [context.engines.wasm, context.engines.ts]) {
      const problem = walProblem(kind, await scanWalFile(set, engine));
      if (problem !== null)
        context.notes.push(`WARNING: ${task} ${engine.kind}: unexpected report (${problem}); its timing measures that outcome`);
      contenders.push({ engine: engine.kind, isAsync: true, fn: () => scanWalFile(set, engine) });
    }
    rows.addTask(task, "raw-read-sync", set.bytes, await measureGroup(task, contenders, plan));
  }
}

// ---------------------------------------------------------------------------
// Scaling

interface ScalingPoint {
  bytes: number;
  logBytes: number;
  medianMs: number;
  summary?: ScanSummary;
}

function msPerGiB(point: ScalingPoint): number {
  return point.medianMs / (point.logBytes / GiB);
}

/** Linear within ±25 %: time per GiB at every size is within 25 % of the time per GiB at the largest size. */
function linearity(points: readonly ScalingPoint[]): { linear: boolean; spread: string } {
  const largest = points[points.length - 1]!;
  const base = msPerGiB(largest);
  const deviations = points.map((point) => msPerGiB(point) / base - 1);
  const worst = deviations.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a), 0);
  return { linear: deviations.every((d) => Math.abs(d) <= 0.25), spread: `${worst >= 0 ? "+" : ""}${(worst * 100).toFixed(0)} %` };
}

/**
 * The marginal cost between consecutive sizes, in ms per GiB of added file:
 * an affine time (fixed cost + per-byte cost) has equal marginal costs even when
 * the fixed cost makes the smallest size's ms/GiB look high.
 */
function marginal(points: readonly ScalingPoint[]): { slopes: number[]; linear: boolean; spread: string } {
  const slopes: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    slopes.push((b.medianMs - a.medianMs) / ((b.logBytes - a.logBytes) / GiB));
  }
  const last = slopes[slopes.length - 1]!;
  const deviations = slopes.map((slope) => slope / last - 1);
  const worst = deviations.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a), 0);
  return {
    slopes,
    linear: last > 0 && deviations.every((d) => Math.abs(d) <= 0.25),
    spread: `${worst >= 0 ? "+" : ""}${(worst * 100).toFixed(0)} %`,
  };
}

const SCALING_TASKS: ReadonlyArray<{ kind: DataKind; name: string; spec: ScanSpec }> = [
  ...SCAN_TASKS,
  { kind: "crafted-64k", name: "probe crafted-64k", spec: { verify: "tail" } },
];

async function scalingCheck(context: Context, rows: RowSet, lines: string[]): Promise<Record<string, unknown>> {
  const sizes = context.quick ? [16 * MiB, 32 * MiB, 64 * MiB] : [64 * MiB, 256 * MiB, 1 * GiB];
  const plan: Plan = { rounds: context.quick ? 3 : 5, iterationsPerRound: 1, timePerRound: 0, warmupIterations: 0 };
  /** An explicit small budget that the crafted probe runs into well inside the two larger residues. */
  const plateauBudget = 3 * sizes[0]!;
  const budgetLabel = `budget ${sizeLabel(plateauBudget)} units`;
  const series = new Map<string, ScalingPoint[]>();
  const add = (name: string, point: ScalingPoint): void => {
    const list = series.get(name) ?? [];
    list.push(point);
    series.set(name, list);
  };
  // Per scan, every size and contender is timed in the same interleaved rounds, so
  // load that drifts during the run cannot masquerade as a size effect.
  for (const { kind, name, spec } of SCALING_TASKS) {
    const perSize: Array<{ bytes: number; set: DataSet; task: string; seriesOf: Map<string, { series: string; summary?: ScanSummary }> }> =
      [];
    const contenders: Contender[] = [];
    for (const bytes of sizes) {
      const set = await ensureDataSet(kind, bytes, context.progress);
      const task = `scaling ${name} ${sizeLabel(bytes)}`;
      context.progress(`bench: ${task}…`);
      await warmPageCache(context, set);
      const seriesOf = new Map<string, { series: string; summary?: ScanSummary }>([["raw-read", { series: `${name}: raw-read` }]]);
      contenders.push({ ...rawReadContender(context, set), engine: `${bytes}|raw-read` });
      const variants: Array<[suffix: string, spec: ScanSpec]> = [["", spec]];
      if (kind === "crafted") variants.push([` (${budgetLabel})`, { ...spec, probeBudgetUnits: plateauBudget }]);
      for (const [suffix, variant] of variants) {
        for (const engine of [context.engines.wasm, context.engines.ts]) {
          const contenderName = `${engine.kind}${suffix}`;
          const { contender, summary } = await scanContender(context, set, engine, variant, task, contenderName);
          contenders.push({ ...contender, engine: `${bytes}|${contenderName}` });
          seriesOf.set(contenderName, { series: `${name}: ${contenderName}`, summary });
        }
      }
      perSize.push({ bytes, set, task, seriesOf });
    }
    const timings = await measureGroup(`scaling ${name}`, contenders, plan);
    for (const { bytes, set, task, seriesOf } of perSize) {
      const prefix = `${bytes}|`;
      const mine = timings
        .filter(([engine]) => engine.startsWith(prefix))
        .map(([engine, timing]): [string, Timing] => [engine.slice(prefix.length), timing]);
      for (const [engine, timing] of mine) {
        const entry = seriesOf.get(engine)!;
        add(entry.series, {
          bytes,
          logBytes: set.logBytes,
          medianMs: timing.medianMs,
          ...(entry.summary ? { summary: entry.summary } : {}),
        });
      }
      rows.addTask(task, "raw-read", set.logBytes, mine);
    }
  }

  const isBudgetBound = (points: readonly ScalingPoint[]): boolean => points.some((point) => point.summary?.probe === "budget-exhausted");
  lines.push(
    "",
    `scaling: median of ${plan.rounds} runs, all sizes of a scan interleaved in the same rounds; ms per GiB of file (time ÷ file size).`,
    "per-GiB: linear when ms/GiB at every size is within ±25 % of the largest size's;",
    "marginal: ms per added GiB between consecutive sizes (fixed costs cancel), linear when within ±25 % of the last one.",
  );
  const header = ["scan", ...sizes.map(sizeLabel), "per-GiB ±25 %?", "marginal ms/GiB", "marginal ±25 %?"];
  const table: string[][] = [];
  const json: Record<string, unknown> = { sizes, plateauBudgetUnits: plateauBudget, defaultBudgetUnits: PROBE_BUDGET_UNITS, series: {} };
  for (const [name, points] of series) {
    const perGiB = linearity(points);
    const slope = marginal(points);
    const bound = isBudgetBound(points);
    table.push([
      name,
      ...points.map((point) => `${msPerGiB(point).toFixed(0)} ms/GiB`),
      bound ? "budget-bound" : `${perGiB.linear ? "yes" : "NO"} (${perGiB.spread})`,
      slope.slopes.map((value) => value.toFixed(0)).join(" → "),
      bound ? "(see below)" : `${slope.linear ? "yes" : "NO"} (${slope.spread})`,
    ]);
    (json["series"] as Record<string, unknown>)[name] = {
      linearPerGiB: bound ? null : perGiB.linear,
      linearMarginal: bound ? null : slope.linear,
      marginalMsPerGiB: slope.slopes.map((value) => round(value, 1)),
      points: points.map((point) => ({
        bytes: point.bytes,
        logBytes: point.logBytes,
        ms: round(point.medianMs, 2),
        msPerGiB: round(msPerGiB(point), 1),
        ...(point.summary ? { verdict: point.summary.verdict, probe: point.summary.probe, spentUnits: point.summary.spentUnits } : {}),
      })),
    };
  }
  const widths = header.map((title, i) => Math.max(title.length, ...table.map((cells) => cells[i]!.length)));
  const leftAligned = new Set([0, header.length - 3, header.length - 1]);
  const fmt = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (leftAligned.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  lines.push(fmt(header), widths.map((w) => "-".repeat(w)).join("  "));
  for (const cells of table) lines.push(fmt(cells));

  lines.push("", `probe over crafted residues: time and spentUnits per residue size (default budget ${PROBE_BUDGET_UNITS} units)`);
  for (const [name, points] of series) {
    if (!name.startsWith("probe crafted") || name.endsWith("raw-read")) continue;
    lines.push(`  ${name}:`);
    for (const point of points) {
      lines.push(
        `    residue ${sizeLabel(point.bytes).padStart(6)}: ${point.medianMs.toFixed(0).padStart(6)} ms, spentUnits ${String(point.summary?.spentUnits ?? "?").padStart(10)}, ${point.summary?.probe ?? "?"}`,
      );
    }
    const bound = points.filter((point) => point.summary?.probe === "budget-exhausted");
    if (bound.length >= 2) {
      const times = bound.map((point) => point.medianMs);
      const growth = times[times.length - 1]! / times[0]!;
      const bytesGrowth = bound[bound.length - 1]!.logBytes / bound[0]!.logBytes;
      const spent = bound.map((point) => point.summary?.spentUnits ?? 0);
      const spentSpread = Math.max(...spent) / Math.min(...spent) - 1;
      const verdict =
        Math.abs(growth - 1) <= 0.25
          ? "plateau (within ±25 %): bounded by the budget, not the bytes"
          : growth < Math.sqrt(bytesGrowth)
            ? `bounded by the budget (time ×${growth.toFixed(2)} while the file grew ×${bytesGrowth.toFixed(0)}; ms-scale timings are noisy)`
            : "NOT bounded: time follows the bytes";
      lines.push(
        `    → where the budget is the limit (${bound.map((point) => sizeLabel(point.bytes)).join(", ")}): spentUnits within ${(spentSpread * 100).toFixed(2)} %, time ×${growth.toFixed(2)} from the smallest to the largest — ${verdict}`,
      );
    } else if (bound.length === 0) {
      const { linear } = marginal(points);
      lines.push(
        `    → the budget is never the limit here: spentUnits and time follow the bytes (marginal cost ${linear ? "linear" : "not linear within ±25 %"})`,
      );
    } else {
      lines.push("    → the budget ran out at one size only: no plateau to show");
    }
  }
  return json;
}

// ---------------------------------------------------------------------------

export async function runBench(options: RunBenchOptions): Promise<BenchRow[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const quick = options.quick === true;
  const [loadAtStart = 0] = loadavg();
  const context: Context = {
    quick,
    notes: [],
    progress,
    engines: { wasm: await createEngine("wasm"), ts: await createEngine("ts") },
    rawBuffer: new Uint8Array(RAW_WINDOW_BYTES),
    evictWithDd: process.platform === "linux",
  };
  progress(`bench: data cache ${cacheRoot()}`);
  const rows = new RowSet();
  const lines: string[] = [];
  let scaling: Record<string, unknown> | undefined;
  if (options.scaling) {
    scaling = await scalingCheck(context, rows, lines);
  } else {
    await hashTasks(context, rows);
    await scanTasks(context, rows);
    await walTasks(context, rows);
  }

  if (options.json) {
    for (const note of context.notes) progress(`bench: ${note}`);
    log(
      JSON.stringify(scaling ? { machine: machineLine(loadAtStart), rows: rows.rows, scaling, notes: context.notes } : rows.rows, null, 2),
    );
  } else {
    log(`segscan bench — ${machineLine(loadAtStart)}`);
    log(
      `MB = 10^6 bytes; MB/s from the median time per op; ratio = MB/s ÷ the reference row's MB/s in this run${quick ? "; --quick sizes" : ""}`,
    );
    if (context.evictWithDd)
      log("page cache: each data file is evicted (dd iflag=nocache) and read once through readahead before it is timed");
    log("");
    for (const line of formatTable(rows.rows)) log(line);
    for (const line of lines) log(line);
    if (context.notes.length > 0) {
      log("");
      for (const note of context.notes) log(`note: ${note}`);
    }
  }
  return rows.rows;
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  const args = new Set(process.argv.slice(2));
  const unknown = [...args].filter((arg) => !["--json", "--quick", "--scaling"].includes(arg));
  if (unknown.length > 0) {
    process.stderr.write(`usage: node dist/bench/run.js [--json] [--quick] [--scaling] (unknown: ${unknown.join(" ")})\n`);
    process.exitCode = 16;
  } else {
    runBench({ json: args.has("--json"), quick: args.has("--quick"), scaling: args.has("--scaling") }).catch((error: unknown) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 8;
    });
  }
}
