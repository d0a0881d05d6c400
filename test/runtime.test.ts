/**
 * docs/recovery.md §3.6 and §7: read failures fail stop and are never evidence; the scan
 * yields with macrotasks, stays within its window's memory, can be cancelled,
 * and reports progress.
 */
import { truncateSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { DEFAULT_WINDOW_BYTES } from "../src/format/constants.js";
import type { WasmEngine } from "../src/engine/wasm/engine.js";
import { type ScanFs, nodeScanFs } from "../src/io/fs.js";
import { scanPartition } from "../src/node/scan-path.js";
import { scanPath } from "../src/node/scan-path.js";
import type { ProgressEvent } from "../src/recovery/options.js";
import { formatReport } from "../src/report/format.js";
import { type Run, spawnBounded } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, concat, indexAt, tempPartition, writeSegment } from "./helpers/fixtures.js";

/** A filesystem whose reads of `path` misbehave after `afterBytes`. */
function faultyFs(path: string, fault: "eio" | "short" | "open"): ScanFs {
  return {
    ...nodeScanFs,
    async open(target) {
      if (target === path && fault === "open") throw Object.assign(new Error("permission denied"), { code: "EACCES" });
      const file = await nodeScanFs.open(target);
      if (target !== path) return file;
      return {
        async read(buffer, position) {
          if (fault === "eio" && position > 0) throw Object.assign(new Error("input/output error"), { code: "EIO" });
          if (fault === "short") return file.read(buffer.subarray(0, Math.min(buffer.length, Math.max(0, 1000 - position))), position);
          return file.read(buffer, position);
        },
        close: () => file.close(),
      };
    },
  };
}

describe("read failures are not evidence (docs/recovery.md §3.6)", () => {
  const setup = () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5, 6, 7] });
    const { logPath } = writeSegment(dir, 0n, concat([chain.log, new Uint8Array(10_000)]), indexAt(chain, [0]));
    return { dir, logPath };
  };

  for (const [fault, code] of [
    ["eio", "ReadFailure"],
    ["short", "StorageSizeMismatch"],
    ["open", "OpenFailure"],
  ] as const) {
    it(`${fault} → failed / ${code}, action retry, no torn-tail verdict`, async () => {
      const { dir, logPath } = setup();
      const report = await scanPartition(dir, { engine: createTsEngine(), windowBytes: 4096 }, faultyFs(logPath, fault));
      const partition = report.partitions[0]!;
      expect(partition.verdict).toBe("failed");
      expect(partition.action).toBe("retry");
      expect(partition.error).toMatchObject({ code, path: logPath });
      expect(partition.error!.message).toContain(logPath);
      expect(partition.segments.some((segment) => segment.outcome === "torn-tail")).toBe(false);
      expect(report.summary.failed).toBe(1);
    });
  }
});

describe("failure messages name path, operation and cause once (17.9)", () => {
  it("an open refused with Node's own EACCES text reads as one sentence, with no repeated code or path", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const denyFs: ScanFs = {
      ...nodeScanFs,
      async open(path) {
        if (path === logPath)
          throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: "EACCES", syscall: "open", path });
        return nodeScanFs.open(path);
      },
    };
    const report = await scanPartition(dir, { engine: createTsEngine() }, denyFs);
    const error = report.partitions[0]!.error!;
    expect(error.message).toBe(`cannot open ${logPath}: permission denied (EACCES); nothing was changed`);
    const human = formatReport(report, { verbose: true });
    expect(human).toContain(`OpenFailure: ${error.message}`);
    // The path is in the message: the human line does not repeat it.
    expect(human.split(logPath).length - 1).toBe(1);
  });
});

describe("a single .log whose index cannot be stat'ed (docs/recovery.md §3.6)", () => {
  it("fails with OpenFailure rather than taking the index-less arm", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    const { logPath, indexPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const denyIndex: ScanFs = {
      ...nodeScanFs,
      async stat(path) {
        if (path === indexPath) throw Object.assign(new Error("permission denied"), { code: "EACCES" });
        return nodeScanFs.stat(path);
      },
    };
    const report = await scanPath(logPath, { engine: createTsEngine() }, denyIndex);
    expect(report.partitions[0]).toMatchObject({ verdict: "failed", action: "retry", error: { code: "OpenFailure", path: indexPath } });
  });
});

/** The residue review blocker 1 scans: memory must not grow with it. */
const RESIDUE_BYTES = 64 * 1024 * 1024;

/**
 * What a scan with the default 1 MiB window may add: the window and a small
 * constant (a wasm instance's static data, a read-ahead pad, a spare instance),
 * a quarter of the residue, so a scan that held the residue would fail.
 */
const MEMORY_GROWTH_BOUND_BYTES = 16 * 1024 * 1024;

/**
 * Run in a child (argv: partition dir, engine, io): scans with the BUILT
 * package, sampling RSS and the engine's memory at every progress event from
 * just after the engine was made, and taking the process's peak RSS
 * (getrusage maxrss) at the end; prints JSON.
 */
const RSS_PROBE_SCRIPT = `
  const { createEngine, scanPartition } = await import(${JSON.stringify(new URL("../dist/src/index.js", import.meta.url).href)});
  const [dir, engineKind, io, warmDir] = process.argv.slice(1);
  const engine = await createEngine(engineKind);
  const engineBytes = () => (typeof engine.memoryBytes === "function" ? engine.memoryBytes() : 0);
  // A scan of a partition with no residue first: with async io the scan runs on the scan thread, whose isolate
  // and engine are a fixed cost of the first scan, not growth with the residue.
  await scanPartition(warmDir, { engine, io });
  const baselineRss = process.memoryUsage().rss;
  const engineBaseline = engineBytes();
  let peakRss = baselineRss;
  let peakEngine = engineBaseline;
  const report = await scanPartition(dir, { engine, io, onProgress: () => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakEngine = Math.max(peakEngine, engineBytes());
  } });
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);
  console.log(JSON.stringify({ outcome: report.partitions[0].segments[0].outcome, baselineRss, peakRss, engineGrowth: peakEngine - engineBaseline }));
`;

async function runBounded(command: string, args: string[]): Promise<Run> {
  return (await spawnBounded(command, args, {})).done;
}

describe("runtime behaviour (docs/engines.md §7)", () => {
  it("review blocker 1: a timer beside the scan of a 64 MiB residue keeps firing (a real macrotask yield), and memory does not grow with the residue", async () => {
    for (const [engine, io] of (await allEngines()).flatMap(
      (engine) =>
        [
          [engine, "async"],
          [engine, "blocking"],
        ] as const,
    )) {
      const dir = tempPartition();
      const chain = buildChain({ counts: [3, 4] });
      const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
      truncateSync(logPath, chain.log.length + RESIDUE_BYTES);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      // arrayBuffers does not count WebAssembly.Memory: the wasm engine's own figure does.
      const engineMemoryBytes = (): number => ("memoryBytes" in engine ? (engine as WasmEngine).memoryBytes() : 0);
      let peakArrayBuffers = 0;
      let peakEngineMemoryBytes = 0;
      const baseline = process.memoryUsage().arrayBuffers;
      const engineBaseline = engineMemoryBytes();
      const onProgress = () => {
        peakArrayBuffers = Math.max(peakArrayBuffers, process.memoryUsage().arrayBuffers);
        peakEngineMemoryBytes = Math.max(peakEngineMemoryBytes, engineMemoryBytes());
      };
      const ticksBefore = ticks;
      const report = await scanPartition(dir, { engine, io, onProgress });
      clearInterval(timer);
      expect(report.partitions[0]!.segments[0]!.outcome).toBe("torn-tail");
      // A microtask-only "yield" would let no interval callback run during the scan.
      expect(ticks - ticksBefore).toBeGreaterThan(0);
      // Buffers: one 1 MiB window plus a small constant, never the residue's 64 MiB.
      expect(peakArrayBuffers - baseline).toBeLessThan(MEMORY_GROWTH_BOUND_BYTES);
      if (engine.kind === "wasm") {
        // The window's instance (new, or reused from the previous scan) was sampled while it was open.
        expect(peakEngineMemoryBytes).toBeGreaterThanOrEqual(DEFAULT_WINDOW_BYTES);
        expect(peakEngineMemoryBytes - engineBaseline, `${engine.kind}/${io}`).toBeLessThan(MEMORY_GROWTH_BOUND_BYTES);
      }
    }
  });

  it("review blocker 1, measured from outside: a child process scanning a 64 MiB residue grows its RSS by less than the bound", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    truncateSync(logPath, chain.log.length + RESIDUE_BYTES);
    const warmDir = tempPartition();
    writeSegment(warmDir, 0n, chain.log, indexAt(chain, [0]));
    for (const engineKind of ["wasm", "ts"] as const) {
      for (const io of ["async", "blocking"] as const) {
        const run = await runBounded(process.execPath, ["--input-type=module", "-e", RSS_PROBE_SCRIPT, dir, engineKind, io, warmDir]);
        expect(run.code, run.stderr).toBe(0);
        const probe = JSON.parse(run.stdout) as { outcome: string; baselineRss: number; peakRss: number; engineGrowth: number };
        expect(probe.outcome).toBe("torn-tail");
        expect(probe.peakRss - probe.baselineRss, `${engineKind}/${io} RSS growth`).toBeLessThan(MEMORY_GROWTH_BOUND_BYTES);
        expect(probe.engineGrowth, `${engineKind}/${io} engine memory growth`).toBeLessThan(MEMORY_GROWTH_BOUND_BYTES);
      }
    }
  });

  it("an AbortSignal stops the scan promptly with no side effect", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    truncateSync(logPath, chain.log.length + 32 * 1024 * 1024);
    const controller = new AbortController();
    const events: ProgressEvent[] = [];
    const scan = scanPartition(dir, {
      engine: createTsEngine(),
      windowBytes: 64 * 1024,
      signal: controller.signal,
      onProgress: (event) => {
        events.push(event);
        if (events.length === 3) controller.abort();
      },
    });
    await expect(scan).rejects.toMatchObject({ name: "AbortError" });
    expect(events.length).toBe(3);
  });

  it("progress reports bytes done of bytes total, ending at the total", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: Array(30).fill(20) });
    writeSegment(dir, 0n, chain.log);
    const events: ProgressEvent[] = [];
    await scanPartition(dir, { engine: createTsEngine(), windowBytes: 4096, onProgress: (event) => events.push(event) });
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) {
      expect(event.bytesTotal).toBe(chain.log.length);
      expect(event.bytesDone).toBeLessThanOrEqual(event.bytesTotal);
    }
    expect(events.at(-1)!.bytesDone).toBe(chain.log.length);
    const done = events.map((event) => event.bytesDone);
    expect([...done].sort((a, b) => a - b)).toEqual(done);
  });

  it("rejects bad options with a clear error", async () => {
    const dir = tempPartition();
    await expect(scanPartition(dir, { windowBytes: 100 })).rejects.toThrow(/windowBytes/);
    await expect(scanPartition(dir, { replicaCount: 0 })).rejects.toThrow(/replicaCount/);
  });
});
