/**
 * Many partitions in flight on one thread give exactly the
 * sequential report (a failing read fails only its own partition), the
 * streaming library iterator `scanIter`, and the CLI's streamed outputs
 * (`scan --ndjson`, and the text report printed partition by partition).
 * The CLI cases run the BUILT package (`npm test` builds first).
 */
import { spawn } from "node:child_process";
import { truncateSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { type ScanFs, nodeScanFs } from "../src/io/fs.js";
import { resolveScanOptions } from "../src/recovery/options.js";
import { loadPartition } from "../src/recovery/partition.js";
import { PARTITIONS_IN_FLIGHT } from "../src/recovery/scan.js";
import { discover } from "../src/recovery/targets.js";
import { POOL_MIN_BYTES, POOL_MIN_BYTES_PER_PARTITION, poolPays } from "../src/node/placement.js";
import { scanIter, scanPath } from "../src/node/scan-path.js";
import { formatReport } from "../src/report/format.js";
import type { toJsonReport } from "../src/report/json.js";
import { validateNdjsonReport } from "../src/report/json-validate.js";
import type { PartitionReport } from "../src/domain/scan.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

const CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
const PARTITIONS = 14;
/** The partition whose log reads fail (EIO), among healthy ones on both sides. */
const FAILING_PARTITION = 6;

/** Clean, torn-tail, index-less and truncated partitions, in turn. */
function makeDataDir(): string {
  const dataDir = tempDataDir();
  for (let p = 1; p <= PARTITIONS; p++) {
    const dir = tempPartition(p, dataDir);
    const chain = buildChain({ counts: [3, 4, 5, 6], seed: p });
    const kind = p % 4;
    if (kind === 0) writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 2]));
    if (kind === 1) writeSegment(dir, 0n, concat([chain.log, randomBytes(2000, p)]), indexAt(chain, [0]));
    if (kind === 2) writeSegment(dir, 0n, chain.log);
    if (kind === 3) {
      const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [1]));
      truncateSync(logPath, chain.log.length - 7);
    }
  }
  return dataDir;
}

/** The real filesystem, but every log read of one partition fails; counts the files open at once. */
function faultyFs(failingDirectory: string): ScanFs & { maxOpenFiles: number } {
  let openFiles = 0;
  const fs = {
    ...nodeScanFs,
    maxOpenFiles: 0,
    async open(path: string) {
      const file = await nodeScanFs.open(path);
      openFiles++;
      fs.maxOpenFiles = Math.max(fs.maxOpenFiles, openFiles);
      return {
        async read(target: Uint8Array, position: number) {
          if (path.startsWith(failingDirectory + "/") && path.endsWith(".log")) {
            throw Object.assign(new Error("injected EIO"), { code: "EIO" });
          }
          return file.read(target, position);
        },
        async close() {
          openFiles--;
          await file.close();
        },
      };
    },
  };
  return fs;
}

async function sequentialReports(dataDir: string, engine: Engine, scanFs: ScanFs): Promise<PartitionReport[]> {
  const resolved = resolveScanOptions({ engine });
  const { targets } = await discover([dataDir], scanFs);
  const reports: PartitionReport[] = [];
  for (const target of targets) reports.push(await loadPartition(target.path, { engine, scanFs, options: resolved }, target.singleLog));
  return reports;
}

describe("partitions in flight on one thread", async () => {
  for (const engine of await allEngines()) {
    it(`give the sequential report, in path order, with a failing partition failing alone (${engine.kind})`, async () => {
      const dataDir = makeDataDir();
      const failing = (await discover([dataDir], nodeScanFs)).targets[FAILING_PARTITION - 1]!.path;
      const sequential = await sequentialReports(dataDir, engine, faultyFs(failing));
      const inFlightFs = faultyFs(failing);
      const report = await scanPath(dataDir, { engine, concurrency: 1, io: "async" }, inFlightFs);
      // Several partitions' files were open at once: the loads did overlap.
      expect(inFlightFs.maxOpenFiles).toBeGreaterThan(1);
      expect(inFlightFs.maxOpenFiles).toBeLessThanOrEqual(2 * PARTITIONS_IN_FLIGHT);
      expect(report.partitions).toEqual(sequential);
      expect(report.partitions.map((partition) => partition.path)).toEqual(
        [...report.partitions.map((partition) => partition.path)].sort(),
      );
      const failed = report.partitions.filter((partition) => partition.verdict === "failed");
      expect(failed.map((partition) => [partition.path, partition.error?.code])).toEqual([[failing, "ReadFailure"]]);
      expect(report.summary).toMatchObject({ partitions: PARTITIONS, failed: 1 });
      expect(report.summary.repairable).toBeGreaterThan(0);
    });
  }

  it("blocking io gives the same report as async io", async () => {
    const dataDir = makeDataDir();
    const [engine] = await allEngines();
    const blocking = await scanPath(dataDir, { engine: engine!, io: "blocking", concurrency: 1 });
    const async = await scanPath(dataDir, { engine: engine!, io: "async", concurrency: 1 });
    expect(async.partitions).toEqual(blocking.partitions);
  });
});

describe("the worker pool decision", () => {
  it("many small partitions stay on one thread however many bytes they hold; few large ones go to the pool", () => {
    const MiB = 1024 * 1024;
    // 2,000 partitions of 204 KiB: 400 MiB, far past POOL_MIN_BYTES, yet slower on the pool.
    expect(poolPays(2000 * 204 * 1024, 2000)).toBe(false);
    expect(poolPays(64 * 25 * MiB, 64)).toBe(true);
    expect(poolPays(POOL_MIN_BYTES - 1, 1)).toBe(false);
    expect(poolPays(1000 * POOL_MIN_BYTES_PER_PARTITION, 1000)).toBe(true);
  });
});

describe("scanIter", async () => {
  for (const engine of await allEngines()) {
    it(`yields scanPath's partitions in path order and returns its summary (${engine.kind})`, async () => {
      const dataDir = makeDataDir();
      const whole = await scanPath(dataDir, { engine, verify: "full", concurrency: 1 });
      const streamed: PartitionReport[] = [];
      for await (const partition of scanIter(dataDir, { engine, verify: "full", concurrency: 1 })) streamed.push(partition);
      expect(streamed).toEqual(whole.partitions);

      const iterator = scanIter([dataDir], { engine, verify: "full", concurrency: 1 });
      let next = await iterator.next();
      while (!next.done) next = await iterator.next();
      // The data dir holds streams/, so it is a node root (docs/node.md N0): the return value carries scanPath's node section.
      expect(whole.node).toBeDefined();
      expect({ ...next.value, elapsedMs: 0 }).toEqual({ ...whole.summary, node: whole.node, elapsedMs: 0 });
    });

    it(`returns just the summary below a node root (${engine.kind})`, async () => {
      const streamsDir = join(makeDataDir(), "streams");
      const whole = await scanPath(streamsDir, { engine, concurrency: 1 });
      expect(whole.node).toBeUndefined();
      const iterator = scanIter(streamsDir, { engine, concurrency: 1 });
      let next = await iterator.next();
      while (!next.done) next = await iterator.next();
      expect({ ...next.value, elapsedMs: 0 }).toEqual({ ...whole.summary, elapsedMs: 0 });
    });
  }

  it("checks its options before reading anything", async () => {
    const iterator = scanIter(tempDataDir(), { verify: "deep" as never });
    await expect(iterator.next()).rejects.toThrow(RangeError);
  });

  it("a consumer that stops early leaves no load running (the generator settles)", async () => {
    const dataDir = makeDataDir();
    const [engine] = await allEngines();
    let seen = 0;
    for await (const partition of scanIter(dataDir, { engine: engine!, io: "async" })) {
      expect(partition.path).toContain(dataDir);
      if (++seen === 2) break;
    }
    expect(seen).toBe(2);
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const withoutElapsed = (summary: { elapsedMs: number }): unknown => ({ ...summary, elapsedMs: 0 });

describe("segscan scan --ndjson and the streamed text report", () => {
  it("--ndjson prints the --json report's partitions one per line, then the rest of that report", async () => {
    const dataDir = makeDataDir();
    const json = await runCli(["scan", "--json", "--deep", dataDir]);
    const ndjson = await runCli(["scan", "--ndjson", "--deep", dataDir]);
    expect(ndjson.code).toBe(json.code);
    expect(ndjson.code).toBe(4); // repairable partitions, none failed
    const report = JSON.parse(json.stdout) as ReturnType<typeof toJsonReport>;
    const lines = ndjson.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(PARTITIONS + 1);
    // A node root: each partition line also carries its dir's entry of the node section.
    const partitionLines = lines.slice(0, -1);
    // docs/interfaces.md §9.3: every line says what it is.
    expect(partitionLines.map((line) => line.type)).toEqual(report.partitions.map(() => "partition"));
    expect(lines.at(-1)!.type).toBe("summary");
    expect(validateNdjsonReport(lines)).toEqual([]);
    // A line without its type, or of the wrong type, is not an --ndjson line.
    const { type: _untyped, ...untyped } = lines[0]!;
    expect(validateNdjsonReport([untyped, ...lines.slice(1)])).toEqual(["line 1: $.type: missing"]);
    expect(validateNdjsonReport([...lines.slice(0, -1), { ...lines.at(-1), type: "partition" }])[0]).toMatch(/^line \d+: \$\.type/);
    expect(partitionLines.map(({ node: _node, type: _type, ...partition }) => partition)).toEqual(report.partitions);
    expect(partitionLines.map((line) => line.node)).toEqual(report.node!.partitions);
    const { type: _type, ...lastLine } = lines.at(-1)!;
    const last = lastLine as unknown as Omit<typeof report, "partitions">;
    // The last line carries the rest of the --json report's node section (no dir is left without a partition here).
    expect(last.node?.path).toBe(dataDir);
    expect(last.node?.partitions).toEqual([]);
    const { partitions: _partitions, ...rest } = report;
    expect({ ...last, summary: withoutElapsed(last.summary), node: { ...last.node!, partitions: report.node!.partitions } }).toEqual({
      ...rest,
      summary: withoutElapsed(rest.summary),
    });
  });

  it("the text report of a streamed scan is formatReport's text", async () => {
    const dataDir = join(makeDataDir(), "streams");
    const [engine] = await allEngines();
    const run = await runCli(["scan", "--engine", engine!.kind, dataDir]);
    const library = await scanPath(dataDir, { engine: engine!, concurrency: 1 });
    const summaryLine = /^verdict \S+ · \d+ partitions: .*$/m;
    const text = formatReport(library).replace(summaryLine, "SUMMARY");
    expect(run.stdout.replace(summaryLine, "SUMMARY").startsWith(text)).toBe(true);
    expect(run.stdout).toMatch(/14 partitions: 3 clean, 11 repairable, 0 refused, 0 failed/);
    expect(run.code).toBe(4);
  });

  it("--json with --ndjson is a usage error (exit 16)", async () => {
    const run = await runCli(["scan", "--json", "--ndjson", makeDataDir()]);
    expect(run.code).toBe(16);
    expect(run.stderr).toMatch(/--json and --ndjson/);
  });
});
