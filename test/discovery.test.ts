/**
 * Discovery and listing hardening:
 * directory links are never followed, overlapping paths scan each partition
 * once, loops and aborts end discovery, one unreadable directory fails only
 * itself, nothing that is not a regular file is ever opened, segment names are
 * exactly Iggy's, and every library option is checked up front.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import type { Engine } from "../src/engine/types.js";
import { describeCause } from "../src/io/errors.js";
import { type ScanFs, NotRegularFileError, nodeScanFs } from "../src/io/fs.js";
import { discover, discoverStream } from "../src/recovery/targets.js";
import { scanPartition } from "../src/node/scan-path.js";
import { scanIter, scanPath } from "../src/node/scan-path.js";
import { type ScanOptions, maxConcurrency, resolveScanOptions } from "../src/recovery/options.js";
import type { PartitionReport } from "../src/domain/scan.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, indexAt, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** One clean segment in a fresh partition `p` under `dataDir`. */
function cleanPartition(dataDir: string, p: number): string {
  const dir = tempPartition(p, dataDir);
  const chain = buildChain({ counts: [3], seed: p });
  writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
  return dir;
}

/** Scans with every engine, asserts the reports agree, returns one. */
async function scanEach(paths: string | string[], options: ScanOptions = {}, scanFs?: ScanFs): Promise<PartitionReport[]> {
  const reports = [];
  for (const engine of engines) reports.push((await scanPath(paths, { ...options, engine }, scanFs)).partitions);
  const strip = (partitions: PartitionReport[]) => partitions.map((partition) => ({ ...partition, bytesScanned: 0 }));
  for (const other of reports.slice(1)) expect(strip(other)).toEqual(strip(reports[0]!));
  return reports[0]!;
}

function mkfifo(path: string): void {
  execFileSync("mkfifo", [path]);
}

/** A ScanFs that records every path it opens. */
function recordingFs(opened: string[]): ScanFs {
  return {
    ...nodeScanFs,
    async open(path) {
      opened.push(path);
      return nodeScanFs.open(path);
    },
  };
}

describe("directory links are not followed (16.3)", () => {
  it("`again -> .` inside a partition gives 2 partitions, not 42, and is reported as ignored", async () => {
    const dataDir = tempDataDir();
    const first = cleanPartition(dataDir, 1);
    cleanPartition(dataDir, 2);
    symlinkSync(".", join(first, "again"));
    const partitions = await scanEach(dataDir);
    expect(partitions.map((p) => p.path)).toEqual([first, join(dataDir, "streams/1/topics/1/partitions/2")]);
    expect(partitions[0]!.ignored).toEqual([expect.objectContaining({ path: join(first, "again"), kind: "directory-symlink" })]);
    expect(partitions[0]!.verdict).toBe("clean");
  });

  it("a link outside any partition is listed in the report's `skipped`, not followed", async () => {
    const dataDir = tempDataDir();
    cleanPartition(dataDir, 1);
    const link = join(dataDir, "streams/1/topics/mirror");
    symlinkSync(join(dataDir, "streams/1/topics/1"), link);
    const report = await scanPath(dataDir, { engine: createTsEngine() });
    expect(report.partitions).toHaveLength(1);
    expect(report.skipped).toEqual([expect.objectContaining({ path: link, kind: "directory-symlink" })]);
  });

  it("overlapping paths (`dir dir/streams`) scan each partition once", async () => {
    const dataDir = tempDataDir();
    cleanPartition(dataDir, 1);
    cleanPartition(dataDir, 2);
    const partitions = await scanEach([dataDir, join(dataDir, "streams"), join(dataDir, "streams/1/topics/1/partitions/2")]);
    expect(partitions.map((p) => p.path.split("/").pop())).toEqual(["1", "2"]);
  });

  it("a node root lists partitions under streams/ only: the server's logs/*.log are no partition", async () => {
    const dataDir = tempDataDir();
    cleanPartition(dataDir, 1);
    mkdirSync(join(dataDir, "logs"));
    writeFileSync(join(dataDir, "logs", "iggy-server.log"), "2026-11-30 INFO started\n");
    const discovery = await discover([dataDir], nodeScanFs);
    expect(discovery.targets.map((t) => t.path)).toEqual([join(dataDir, "streams/1/topics/1/partitions/1")]);
    expect(discovery.roots).toEqual([expect.objectContaining({ nodeRoot: true, targets: 1 })]);
  });
});

describe("discovery ends on loops and on abort (17.7)", () => {
  it("two directory link loops: the scan returns with the real partitions only", async () => {
    const dataDir = tempDataDir();
    const p1 = cleanPartition(dataDir, 1);
    symlinkSync("..", join(dataDir, "streams/1/topics/1/partitions/up"));
    symlinkSync(join(dataDir, "streams"), join(dataDir, "streams/1/topics/1/partitions/back"));
    symlinkSync("../..", join(p1, "loop"));
    const partitions = await scanEach(dataDir);
    expect(partitions.map((p) => p.path)).toEqual([p1]);
  });

  it("an abort during discovery rejects at the next directory, listing nothing more", async () => {
    const dataDir = tempDataDir();
    for (const p of [1, 2, 3]) cleanPartition(dataDir, p);
    symlinkSync("..", join(dataDir, "streams/1/loop"));
    const controller = new AbortController();
    let listings = 0;
    const abortingFs: ScanFs = {
      ...nodeScanFs,
      async list(directory) {
        listings++;
        controller.abort();
        return nodeScanFs.list(directory);
      },
    };
    await expect(scanPath(dataDir, { engine: createTsEngine(), signal: controller.signal }, abortingFs)).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(listings).toBe(1);
  });

  it("a loop that is no link (a bind mount: one device and inode under two paths) is listed once", async () => {
    let listings = 0;
    const bindLoop: ScanFs = {
      ...nodeScanFs,
      async stat() {
        return { size: 4096, isFile: false, isDirectory: true, fileId: "2049:77" };
      },
      async list() {
        listings++;
        return [{ name: "mnt", isFile: false, isDirectory: true, isSymbolicLink: false }];
      },
      realpath: async (path) => path,
    };
    expect((await discover(["/bind"], bindLoop)).targets).toEqual([]);
    expect(listings).toBe(1);
  });
});

describe("one unreadable directory fails only itself (17.8)", () => {
  it("a directory that cannot be listed is a failed ListFailure partition beside the others", async () => {
    const dataDir = tempDataDir();
    for (const p of [1, 2, 3]) cleanPartition(dataDir, p);
    const denied = join(dataDir, "streams/1/topics/1/partitions/2");
    // Tests run as root in CI (root ignores chmod 000): inject EACCES through the ScanFs seam.
    const denyFs: ScanFs = {
      ...nodeScanFs,
      async list(directory) {
        if (directory === denied)
          throw Object.assign(new Error(`EACCES: permission denied, scandir '${denied}'`), {
            code: "EACCES",
            syscall: "scandir",
            path: denied,
          });
        return nodeScanFs.list(directory);
      },
    };
    const partitions = await scanEach(dataDir, {}, denyFs);
    expect(partitions.map((p) => [p.path.split("/").pop(), p.verdict])).toEqual([
      ["1", "clean"],
      ["2", "failed"],
      ["3", "clean"],
    ]);
    expect(partitions[1]!.action).toBe("retry");
    expect(partitions[1]!.error).toMatchObject({ code: "ListFailure", path: denied });
    expect(partitions[1]!.error!.message).toBe(
      `cannot list the directory ${denied}: permission denied (EACCES); nothing under it was scanned and nothing was changed`,
    );
  });

  it("a nonexistent path among several is a failed item; the others are still reported", async () => {
    const dataDir = tempDataDir();
    const p1 = cleanPartition(dataDir, 1);
    const missing = join(dataDir, "nonexistent");
    const report = await scanPath([p1, missing], { engine: createTsEngine() });
    expect(report.partitions.map((p) => [p.path, p.verdict])).toEqual([
      [p1, "clean"],
      [missing, "failed"],
    ]);
    expect(report.partitions[1]!.error!.message).toContain("no such file or directory (ENOENT)");
    expect(report.summary).toMatchObject({ partitions: 2, clean: 1, failed: 1 });
  });
});

describe("nothing but regular files is opened (17.6)", () => {
  it("a FIFO segment .log with an .index fails NotRegularFile without being opened; abort still works", async () => {
    const dir = cleanPartition(tempDataDir(), 1);
    const fifo = join(dir, "00000000000000000003.log");
    mkfifo(fifo);
    writeFileSync(join(dir, "00000000000000000003.index"), new Uint8Array(16));
    for (const engine of engines) {
      const opened: string[] = [];
      const report = await scanPartition(dir, { engine }, recordingFs(opened));
      expect(report.partitions[0]!.verdict).toBe("failed");
      expect(report.partitions[0]!.error).toMatchObject({ code: "NotRegularFile", path: fifo });
      expect(report.partitions[0]!.error!.message).toContain(`${fifo} is not a regular file`);
      expect(opened).not.toContain(fifo);
      // The index beside the FIFO stays paired: no sweep of a live index.
      expect(report.partitions[0]!.sweep).toEqual([]);
    }
    const controller = new AbortController();
    controller.abort();
    await expect(scanPartition(dir, { engine: engines[0]!, signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("a FIFO .log without an .index is no clean empty segment, and a FIFO passed as the path fails too", async () => {
    const dir = tempPartition(1, tempDataDir());
    const fifo = join(dir, "00000000000000000000.log");
    mkfifo(fifo);
    expect((await scanEach(dir))[0]!.error).toMatchObject({ code: "NotRegularFile", path: fifo });
    expect((await scanEach(fifo))[0]!.error).toMatchObject({ code: "NotRegularFile", path: fifo });
  });

  it("a FIFO .index fails the partition naming the index; a FIFO .staging is ignored, never swept", async () => {
    const dir = tempPartition(1, tempDataDir());
    const chain = buildChain({ counts: [3] });
    const { indexPath } = writeSegment(dir, 0n, chain.log);
    mkfifo(indexPath);
    const opened: string[] = [];
    const report = await scanPartition(dir, { engine: createTsEngine() }, recordingFs(opened));
    expect(report.partitions[0]!.error).toMatchObject({ code: "NotRegularFile", path: indexPath });
    expect(opened).toEqual([]);

    const other = cleanPartition(tempDataDir(), 1);
    mkfifo(join(other, "00000000000000000000.log.staging"));
    const partition = (await scanEach(other))[0]!;
    expect(partition.sweep).toEqual([]);
    expect(partition.ignored).toEqual([
      expect.objectContaining({ kind: "not-regular-file", path: join(other, "00000000000000000000.log.staging") }),
    ]);
  });

  it("the filesystem layer itself refuses to open a FIFO, without blocking", async () => {
    const fifo = join(tempDataDir(), "00000000000000000000.log");
    mkfifo(fifo);
    await expect(nodeScanFs.open(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
    const { nodeBlockingScanFs } = await import("../src/io/fs.js");
    await expect(nodeBlockingScanFs.open(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
  });
});

describe("segment names and partitions with no segment (17.11, 17.12)", () => {
  it("a directory whose only .log is not a segment name fails NoSegments and lists the file", async () => {
    const dir = tempPartition(1, tempDataDir());
    writeFileSync(join(dir, "0x88.log"), new Uint8Array(100 * 1024).fill(7));
    const partition = (await scanEach(dir))[0]!;
    expect(partition.verdict).toBe("failed");
    expect(partition.error).toMatchObject({ code: "NoSegments", path: dir });
    expect(partition.error!.message).toContain("0x88.log");
    expect(partition.ignored).toEqual([expect.objectContaining({ path: join(dir, "0x88.log"), kind: "bad-segment-name" })]);
  });

  it("only 20-digit names are segments: `136.log`, a 27-digit name and u64 max + 1 are ignored", async () => {
    const dir = tempPartition(1, tempDataDir());
    const chain = buildChain({ counts: [200], payloadBytes: 4 });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const tail = buildChain({ counts: [2], startOffset: 200n, seed: 5 });
    writeSegment(dir, 200n, tail.log, indexAt(tail, [0]));
    const odd = ["136.log", `${"0".repeat(24)}200.log`, "18446744073709551616.log"];
    for (const name of odd) writeFileSync(join(dir, name), tail.log);
    const partition = (await scanEach(dir))[0]!;
    expect(partition.verdict).toBe("clean");
    expect(partition.refusal).toBeNull();
    expect(partition.segments.map((s) => s.startOffset)).toEqual([0n, 200n]);
    expect(partition.ignored.map((entry) => [entry.path.split("/").pop(), entry.kind]).sort()).toEqual(
      odd.map((name) => [name, "bad-segment-name"]).sort(),
    );
  });

  it("Hole, Overlap and EmptyNonTailSegment messages name both .log files", async () => {
    const cases = [
      { later: 9n, code: "Hole" },
      { later: 5n, code: "Overlap" },
    ] as const;
    for (const { later, code } of cases) {
      const dir = tempPartition(1, tempDataDir());
      const first = buildChain({ counts: [3, 4] });
      const next = buildChain({ counts: [2], startOffset: later });
      writeSegment(dir, 0n, first.log, indexAt(first, [0]));
      writeSegment(dir, later, next.log, indexAt(next, [0]));
      const refusal = (await scanEach(dir))[0]!.refusal!;
      expect(refusal.code).toBe(code);
      expect(refusal.message).toContain("00000000000000000000.log");
      expect(refusal.message).toContain(`${later.toString().padStart(20, "0")}.log`);
    }
    const dir = tempPartition(1, tempDataDir());
    const first = buildChain({ counts: [3] });
    writeSegment(dir, 0n, first.log, indexAt(first, [0]));
    writeSegment(dir, 3n, new Uint8Array(0), []);
    writeSegment(dir, 5n, buildChain({ counts: [2], startOffset: 5n }).log);
    const refusal = (await scanEach(dir))[0]!.refusal!;
    expect(refusal.code).toBe("EmptyNonTailSegment");
    expect(refusal.message).toContain("00000000000000000003.log");
    expect(refusal.message).toContain("00000000000000000005.log");
  });
});

describe("library options are checked up front (17.13)", () => {
  it("accepts an engine kind string and scans with that engine", async () => {
    const dir = cleanPartition(tempDataDir(), 1);
    expect((await scanPartition(dir, { engine: "ts" })).engine).toBe("ts");
    expect((await scanPath(dir, { engine: "wasm" })).engine).toBe("wasm");
  });

  const bad: [string, Record<string, unknown>, ErrorConstructor, RegExp][] = [
    ["an unknown engine kind", { engine: "java" }, RangeError, /engine/],
    ["an engine that is not one", { engine: { openWindow: 1 } }, TypeError, /engine/],
    ["onProgress that is not a function", { onProgress: 5 }, TypeError, /onProgress/],
    ["signal that is not an AbortSignal", { signal: "x" }, TypeError, /signal/],
    ["verify null", { verify: null }, RangeError, /verify/],
    ["verify deep", { verify: "deep" }, RangeError, /verify/],
    ["concurrency 0", { concurrency: 0 }, RangeError, /concurrency/],
    ["windowBytes as a string", { windowBytes: "4096" }, TypeError, /windowBytes/],
    ["io sync", { io: "sync" }, RangeError, /io/],
    ["a misspelt option", { replicas: 3 }, TypeError, /unknown scan option "replicas"/],
  ];
  for (const [name, options, type, pattern] of bad) {
    it(`refuses ${name} before reading anything`, async () => {
      const opened: string[] = [];
      const dir = cleanPartition(tempDataDir(), 1);
      for (const call of [
        () => scanPartition(dir, options as ScanOptions, recordingFs(opened)),
        () => scanPath(dir, options as ScanOptions, recordingFs(opened)),
      ]) {
        const error = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(type);
        expect((error as Error).message).toMatch(pattern);
      }
      expect(opened).toEqual([]);
    });
  }

  it("clamps concurrency above 2 × CPU count instead of starting thousands of workers", () => {
    expect(maxConcurrency()).toBe(2 * availableParallelism());
    expect(resolveScanOptions({ concurrency: 4096 }).concurrency).toBe(maxConcurrency());
    expect(resolveScanOptions({ concurrency: 1 }).concurrency).toBe(1);
  });

  it("scanPartition on a directory with no .log refuses and points at scanPath", async () => {
    const dataDir = tempDataDir();
    cleanPartition(dataDir, 1);
    await expect(scanPartition(dataDir, { engine: "ts" })).rejects.toThrow(/holds no \.log file.*scanPath/);
  });
});

describe("describeCause (17.9)", () => {
  it("gives the cause in words once, with its code, and no repeated path", () => {
    const nodeError = Object.assign(new Error("EACCES: permission denied, open '/d/00000000000000000000.log'"), { code: "EACCES" });
    expect(describeCause(nodeError)).toBe("permission denied (EACCES)");
    expect(describeCause(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }))).toBe(
      "no space left on device (ENOSPC)",
    );
    expect(describeCause(Object.assign(new Error("EROFS: read-only file system, mkdir '/x'"), { code: "EROFS" }))).toBe(
      "read-only file system (EROFS)",
    );
    expect(describeCause(Object.assign(new Error("weird"), { code: "EWEIRD" }))).toBe("weird (EWEIRD)");
    expect(describeCause(new Error("plain"))).toBe("plain");
  });
});

describe("streamed discovery", () => {
  /** One clean segment in `dir` (created). */
  function partitionAt(dir: string, seed: number): string {
    mkdirSync(dir, { recursive: true });
    const chain = buildChain({ counts: [2], seed });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    return dir;
  }

  it("yields every target in exact path order, also where a name sorts below '/' (a, a-b, a/x)", async () => {
    const root = tempDataDir();
    const dirs = ["a", "a/x", "a-b", "a.c/y", "a0", "b", "b/c/d"].map((name, seed) => partitionAt(join(root, name), seed));
    const sink = { skipped: [], roots: [] };
    const streamed: string[] = [];
    for await (const target of discoverStream([root], nodeScanFs, sink)) streamed.push(target.path);
    const pathOrder = [...dirs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    expect(streamed).toEqual(pathOrder);
    expect((await discover([root], nodeScanFs)).targets.map((target) => target.path)).toEqual(pathOrder);
    expect(sink.roots).toMatchObject([{ path: root, kind: "directory", targets: dirs.length }]);
    // The reports follow the same order, on both engines.
    expect((await scanEach(root, { concurrency: 1 })).map((partition) => partition.path)).toEqual(pathOrder);
  });

  it("hands over the first partition before the last directory is listed, and a scan loads it meanwhile", async () => {
    const dataDir = tempDataDir();
    for (let p = 1; p <= 24; p++) cleanPartition(dataDir, p);
    const events: string[] = [];
    const tracing: ScanFs = {
      ...nodeScanFs,
      async list(directory) {
        events.push(`list ${directory}`);
        return nodeScanFs.list(directory);
      },
      async open(path) {
        events.push(`open ${path}`);
        return nodeScanFs.open(path);
      },
    };
    const first = await discoverStream([dataDir], tracing, { skipped: [], roots: [] }).next();
    expect(first.value?.path).toBe(join(dataDir, "streams", "1", "topics", "1", "partitions", "1"));
    expect(events.filter((event) => event.startsWith("list")).length).toBeLessThan(10);
    events.length = 0;
    const paths: string[] = [];
    for await (const partition of scanIter(dataDir, { engine: engines[0]!, concurrency: 1 }, tracing)) paths.push(partition.path);
    expect(paths).toHaveLength(24);
    const firstOpen = events.findIndex((event) => event.startsWith("open"));
    const lastList = events.map((event) => event.startsWith("list")).lastIndexOf(true);
    expect(firstOpen).toBeGreaterThan(-1);
    expect(firstOpen).toBeLessThan(lastList);
  });

  it("scanIter refuses a file that is not a .log before it scans anything", async () => {
    const dataDir = tempDataDir();
    cleanPartition(dataDir, 1);
    const stray = join(dataDir, "notes.txt");
    writeFileSync(stray, "x");
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const partition of scanIter([dataDir, stray], { engine: engines[0]!, concurrency: 1 })) seen.push(partition.path);
      })(),
    ).rejects.toThrow(TypeError);
    expect(seen).toEqual([]);
  });
});

describe("a small partition's files are opened while it is listed", () => {
  /** Counts stats and opens per file name, and closes of what was opened. */
  function countingFs(failOpen?: (path: string) => boolean) {
    const stats: string[] = [];
    const opens: string[] = [];
    let open = 0;
    const fs: ScanFs = {
      ...nodeScanFs,
      async stat(path) {
        stats.push(path);
        return nodeScanFs.stat(path);
      },
      async open(path) {
        opens.push(path);
        if (failOpen?.(path)) throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: "EACCES" });
        const file = await nodeScanFs.open(path);
        open++;
        return {
          size: file.size,
          read: (target, position) => file.read(target, position),
          close: () => file.close().then(() => void open--),
        };
      },
    };
    return { fs, stats, opens, stillOpen: () => open };
  }

  it("one open per segment file, no stat of it, every handle closed; the report is the same as without", async () => {
    const dir = tempPartition(1);
    const chain = buildChain({ counts: [3, 2], seed: 5 });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 1]));
    const counting = countingFs();
    const withCounting = await scanPath(dir, { engine: engines[0]!, concurrency: 1, verify: "full" }, counting.fs);
    const plain = await scanPath(dir, { engine: engines[0]!, concurrency: 1, verify: "full" });
    expect(withCounting.partitions).toEqual(plain.partitions);
    const segmentFiles = (paths: string[]) => paths.filter((path) => /\.(log|index)$/.test(path)).map((path) => path.slice(dir.length + 1));
    expect(segmentFiles(counting.stats)).toEqual([]);
    expect(segmentFiles(counting.opens).sort()).toEqual(["00000000000000000000.index", "00000000000000000000.log"]);
    expect(counting.stillOpen()).toBe(0);
  });

  it("an open that fails after others were opened fails the partition (OpenFailure) and closes every handle", async () => {
    const dir = tempPartition(1);
    for (const [start, seed] of [
      [0n, 1],
      [3n, 2],
      [6n, 3],
    ] as const) {
      const chain = buildChain({ counts: [3], seed, startOffset: start });
      writeSegment(dir, start, chain.log, indexAt(chain, [0]));
    }
    const counting = countingFs((path) => path.endsWith("00000000000000000003.index"));
    const report = await scanPath(dir, { engine: engines[0]!, concurrency: 1 }, counting.fs);
    expect(report.partitions[0]!.error).toMatchObject({ code: "OpenFailure" });
    expect(report.partitions[0]!.error!.message).toContain("00000000000000000003.index");
    expect(counting.opens.length).toBeGreaterThan(1);
    expect(counting.stillOpen()).toBe(0);
  });
});
