/**
 * The cluster view's two inputs that grow without bound (docs/benchmarks.md
 * "fleet"): reading an `--ndjson` report's last line behind megabytes of
 * trailing newlines, and merging one partition whose replicas hold tens of
 * thousands of ranges. Each row doubles its size; a linear or n·log n
 * algorithm keeps the time per unit flat (a quadratic one doubles it).
 * `node dist/bench/fleet.js [--json]` — the reports are written to a temp dir
 * and removed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { partitionIdentity } from "../src/fleet/adapter.js";
import { mergePartition } from "../src/fleet/merge.js";
import { openReport } from "../src/fleet/source.js";
import type { JsonPartition, JsonSegment } from "../src/report/json.js";
import { SEGSCAN_VERSION } from "../src/version.js";

const MiB = 1024 * 1024;
const PADDING_MIB = [16, 32, 64];
/** Segments per replica; half of them refused, so each replica claims half as many unreadable ranges. */
const SEGMENTS = [8_192, 16_384, 32_768, 65_536];
const ROUNDS = 3;

export interface FleetBenchRow {
  task: string;
  size: number;
  unit: string;
  ms: number;
  /** Milliseconds per 1,000 units: flat across a task's rows when the work grows linearly. */
  msPerThousand: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function time(run: () => Promise<unknown> | unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** An `--ndjson` report of no partition whose summary line is followed by `mib` MiB of newlines. */
function paddedReport(file: string, mib: number): void {
  const summary = { partitions: 0, clean: 0, repairable: 0, refused: 0, failed: 0, bytesScanned: 0, elapsedMs: 1 };
  const header = {
    segscan: SEGSCAN_VERSION,
    engine: "ts",
    verdict: "clean",
    options: { verify: "tail", replicaCount: 3, probeBudgetUnits: 100, windowBytes: 65536 },
    summary,
  };
  writeFileSync(file, `${JSON.stringify(header)}\n${"\n".repeat(mib * MiB)}`);
}

/** One replica's line: `segments` segments of 10 offsets, every odd one refused by its index (its offsets unreadable). */
function replicaLine(root: string, segments: number): JsonPartition {
  const list = [];
  for (let i = 0; i < segments; i++) {
    const start = BigInt(i * 10);
    const refused = i % 2 === 1;
    list.push({
      startOffset: start.toString(),
      endOffset: refused ? null : (start + 9n).toString(),
      logPath: `${root}/${start.toString().padStart(20, "0")}.log`,
      messagesSize: 4096,
      outcome: refused ? "refused" : "clean",
      walkedSize: refused ? 0 : 4096,
      gaps: [],
      refusal: refused
        ? { code: "IndexEntriesNotMonotone", message: "index entries go backwards", segment: start.toString(), entryIndex: 1 }
        : null,
      lastBatch: null,
      batchChecksumsXxh3: null,
      scope: [],
    } as unknown as JsonSegment);
  }
  return {
    path: root,
    verdict: "refused",
    action: "rebuild-from-peers",
    refusal: null,
    error: null,
    segments: list,
    nextStep: "rebuild this partition from a replica",
  } as unknown as JsonPartition;
}

export async function runFleetBench(): Promise<FleetBenchRow[]> {
  const rows: FleetBenchRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), "segscan-bench-fleet-"));
  try {
    for (const mib of PADDING_MIB) {
      const file = join(dir, `padded-${mib}.ndjson`);
      paddedReport(file, mib);
      const ms = await time(async () => {
        const source = await openReport(file, "n");
        await source.lines.next();
      });
      rows.push({ task: "ndjson last line behind newlines", size: mib * 1024, unit: "KiB", ms, msPerThousand: (ms / (mib * 1024)) * 1000 });
    }
    const key = "streams/1/topics/1/partitions/1";
    const identity = partitionIdentity(`/n0/${key}`)!;
    for (const segments of SEGMENTS) {
      const lines = ["n0", "n1", "n2"].map((node) => replicaLine(`/${node}/${key}`, segments));
      let lost = 0;
      const ms = await time(() => {
        lost = mergePartition(identity, ["n0", "n1", "n2"], lines).lost.length;
      });
      // Each replica claims segments/2 ranges, and each is lost everywhere.
      if (lost !== segments / 2) throw new Error(`the merge found ${lost} lost ranges, expected ${segments / 2}`);
      const ranges = (3 * segments) / 2;
      rows.push({ task: "merge: claims on lost ranges", size: ranges, unit: "ranges", ms, msPerThousand: (ms / ranges) * 1000 });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

async function main(): Promise<void> {
  const rows = await runFleetBench();
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  console.log("| task | size | ms (median of 3) | ms per 1,000 units |");
  console.log("| --- | --- | --- | --- |");
  for (const row of rows) {
    console.log(
      `| ${row.task} | ${row.size.toLocaleString("en-US")} ${row.unit} | ${row.ms.toFixed(1)} | ${row.msPerThousand.toFixed(3)} |`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
