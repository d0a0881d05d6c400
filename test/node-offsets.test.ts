/**
 * docs/node.md N4–N6, N8: offsets compared with the head after the planned
 * segment repair, purge.gen, the cross-check and the boot forecast, scanned
 * as a node root; read failures are `failed`, and `scan` writes nothing.
 */
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateDataDir } from "../src/gen/generate.js";
import type { ScanFs } from "../src/io/fs.js";
import { nodeScanFs } from "../src/io/fs.js";
import { encodeOffsetRecord, writeNodeMetadata } from "../src/gen/node/node.js";
import { partitionHead } from "../src/node/partition-dir.js";
import { nodeFindings } from "../src/node/scan.js";
import { encodeSuperblockRecord, encodeVsrState } from "../src/format/superblock.js";
import type { BootForecastEntry } from "../src/domain/node.js";
import { scanPath } from "../src/node/scan-path.js";
import { applyRepair, planRepair } from "../src/repair/index.js";
import { runCli } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { tempDir } from "./helpers/node-wal.js";

const engines = await allEngines();
const engine = engines[0]!;
const P1 = "streams/1/topics/1/partitions/1";

async function node(fault?: string, options: { scenario?: string } = {}): Promise<string> {
  const root = tempDir();
  const generated = await generateDataDir(root, { size: "tiny", seed: 7, ...options });
  await writeNodeMetadata(root, generated.partitions, fault === undefined ? {} : { fault });
  return root;
}

/** Every file and directory under `root` with its bytes' hash, size and mtime. */
function treeState(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const info = statSync(path);
      if (info.isDirectory()) {
        out[path] = `dir ${info.mtimeMs}`;
        walk(path);
      } else {
        out[path] = `${info.size} ${info.mtimeMs} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
      }
    }
  };
  walk(root);
  return out;
}

function effects(forecast: readonly BootForecastEntry[]): string[] {
  return forecast.map((entry) => entry.effect);
}

describe("a torn tail under a committed consumer offset", () => {
  it("names the consumer, its stored offset, the head after the planned cut and the re-minted offsets", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    for (const candidate of engines) {
      const report = await scanPath(root, { engine: candidate, concurrency: 1 });
      const partition = report.partitions.find((p) => p.path === join(root, P1))!;
      expect(partition.verdict).toBe("repairable");
      const nodePartition = report.node!.partitions.find((p) => p.path === join(root, P1))!;
      const consumer = nodePartition.offsets.find((o) => o.kind === "consumer" && o.id === 7)!;
      const finding = consumer.findings.find((f) => f.code === "OffsetAheadOfHead")!;
      expect(finding).toMatchObject({ severity: "repairable", consumerKind: "consumer", consumerId: 7, storedOffset: 231n });
      const head = nodePartition.head.head!;
      expect(head).toBeLessThan(231n);
      expect(finding).toMatchObject({ head, remintedFirst: head + 1n, remintedLast: 231n });
      expect(finding.message).toContain(`consumer 7 stored offset 231 but the partition head is ${head}`);
      expect(finding.message).toContain(`offsets ${head + 1n}..231 will be re-minted`);
      expect(finding.message).toContain("after the torn-tail cut this plan makes");
      expect(report.node!.bootForecast).toContainEqual(expect.objectContaining({ effect: "clamp-offset", path: consumer.path }));
    }
  });

  it("the head used for offsets equals the head after the planned segment repair is applied", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const before = await scanPath(root, { engine, concurrency: 1 });
    const headBefore = before.node!.partitions.find((p) => p.path === join(root, P1))!.head.head;
    await applyRepair(await planRepair(before), { engine, checkWriters: false });
    const after = await scanPath(root, { engine, concurrency: 1 });
    const repaired = after.partitions.find((p) => p.path === join(root, P1))!;
    expect(repaired.verdict).toBe("clean");
    const lastAfter = repaired.segments.reduce<bigint | null>(
      (max, s) => (s.endOffset !== null && (max === null || s.endOffset > max) ? s.endOffset : max),
      null,
    );
    expect(headBefore).toBe(lastAfter);
    expect(after.node!.partitions.find((p) => p.path === join(root, P1))!.head.head).toBe(headBefore);
  });

  it("a partition superblock frontier above the stored offset prevents the re-mint: no finding", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const slot = encodeSuperblockRecord(
      1n,
      encodeVsrState({
        cluster: 1n,
        replicaId: 0,
        replicaCount: 1,
        view: 0,
        logView: 0,
        commitMax: 0n,
        checkpointOp: 0n,
        checkpointChecksum: 0n,
        offsetFrontier: 232n,
      }),
      engine,
    );
    writeFileSync(join(root, P1, "superblock.a"), slot);
    const report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    const partition = report.partitions.find((p) => p.path === join(root, P1))!;
    expect(partition.head).toMatchObject({ offsetFrontier: 232n, head: 231n });
    expect(partition.offsets.flatMap((o) => o.findings.map((f) => f.code))).not.toContain("OffsetAheadOfHead");
    expect(partition.findings.map((f) => f.code)).toContain("OffsetFrontierAhead");
  });
});

describe("partitionHead (Iggy's boot head, docs/node.md N4)", () => {
  const segment = (startOffset: bigint, endOffset: bigint | null, walkedSize: number) =>
    ({ startOffset, endOffset, walkedSize, messageCount: null }) as never;
  const report = (segments: unknown[], verdict = "clean", refusal: unknown = null) => ({ path: "p", verdict, refusal, segments }) as never;
  it("is the largest proven end, raised to frontier-1, start-1 for an empty chain, null when empty, unknown when failed", () => {
    expect(partitionHead(report([segment(0n, 9n, 100), segment(10n, 19n, 100)]), 0n).head).toBe(19n);
    expect(partitionHead(report([segment(0n, 9n, 100)]), 50n).head).toBe(49n);
    expect(partitionHead(report([segment(0n, 9n, 100)]), 5n).head).toBe(9n);
    expect(partitionHead(report([segment(30n, null, 0)]), 0n).head).toBe(29n);
    expect(partitionHead(report([segment(0n, null, 0)]), 0n).head).toBeNull();
    expect(partitionHead(report([segment(0n, 9n, 100)], "failed"), 0n).known).toBe(false);
    const fenced = partitionHead(report([segment(0n, 9n, 100)], "refused", { code: "Hole" }), 4n);
    expect(fenced).toMatchObject({ quarantined: true, head: 3n });
  });
});

describe("read failures are failed, never torn", () => {
  /** A ScanFs that fails `list` or `open` for paths ending with `suffix`. */
  function failing(suffix: string, operation: "list" | "open"): ScanFs {
    const error = (): Error => Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    return {
      ...nodeScanFs,
      list: (dir) => (operation === "list" && dir.endsWith(suffix) ? Promise.reject(error()) : nodeScanFs.list(dir)),
      open: (path) => (operation === "open" && path.endsWith(suffix) ? Promise.reject(error()) : nodeScanFs.open(path)),
    };
  }

  it("an offsets dir that exists but cannot be listed: failed, and the forecast says boot refuses", async () => {
    const root = await node();
    const { scanNode } = await import("../src/node/scan.js");
    const report = await scanNode(root, { engine }, failing(join(P1, "offsets", "consumers"), "list"));
    const finding = nodeFindings(report).find((f) => f.code === "OffsetsDirUnreadable")!;
    expect(finding.severity).toBe("failed");
    expect(report.verdict).toBe("failed");
    expect(report.bootForecast).toContainEqual(
      expect.objectContaining({ effect: "refuse-boot", path: join(root, P1, "offsets", "consumers") }),
    );
  });

  it("an offset file that cannot be read: failed OffsetReadFailure, its offset unknown", async () => {
    const root = await node();
    const { scanNode } = await import("../src/node/scan.js");
    const report = await scanNode(root, { engine }, failing(join(P1, "offsets", "consumers", "7"), "open"));
    const offset = report.partitions.find((p) => p.path === join(root, P1))!.offsets.find((o) => o.id === 7 && o.kind === "consumer")!;
    expect(offset.offset).toBeNull();
    expect(offset.findings.map((f) => [f.code, f.severity])).toEqual([["OffsetReadFailure", "failed"]]);
    expect(report.verdict).toBe("failed");
  });

  it("a purge.gen that cannot be read: failed PurgeGenerationReadFailure, and the forecast says boot refuses", async () => {
    const root = await node();
    const { scanNode } = await import("../src/node/scan.js");
    const report = await scanNode(root, { engine }, failing(join(P1, "purge.gen"), "open"));
    const purge = report.partitions.find((p) => p.path === join(root, P1))!.purgeGeneration!;
    expect(purge.findings.map((f) => [f.code, f.severity])).toEqual([["PurgeGenerationReadFailure", "failed"]]);
    expect(report.bootForecast).toContainEqual(expect.objectContaining({ effect: "refuse-boot", path: join(root, P1, "purge.gen") }));
  });

  it("the generated unlistable groups dir (a file in its place) is failed", async () => {
    const root = await node("offsets-dir-unreadable");
    const report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    expect(report.verdict).toBe("failed");
    expect(effects(report.bootForecast)).toContain("refuse-boot");
  });
});

describe("the boot forecast (docs/node.md N8)", () => {
  const cases: [string, string, boolean, { scenario?: string }?][] = [
    ["offset-corrupt", "unlink-offset-file", true],
    ["offset-ahead", "clamp-offset", false],
    ["offset-empty-partition", "clamp-offset", false],
    ["purge-lost", "re-purge-partition", true],
    ["purge-pending", "re-purge-partition", true],
    ["partition-superblock-corrupt", "tombstone-partition", false],
    ["missing-dir", "recreate-partition-empty", true],
    ["missing-dir-empty-topic", "recreate-partition-empty", false],
    ["wal-torn-tail", "truncate-wal-tail", false],
    ["wal-gap", "truncate-wal-from-op", true],
    ["snapshot-corrupt", "refuse-boot", false],
  ];
  for (const [fault, effect, destructive] of cases) {
    it(`${fault} → ${effect}${destructive ? " (destructive)" : ""}`, async () => {
      const report = (await scanPath(await node(fault), { engine, concurrency: 1 })).node!;
      expect(report.bootForecast).toContainEqual(expect.objectContaining({ effect, destructive }));
      const flags = report.bootForecast.map((entry) => entry.destructive);
      expect(flags).toEqual([...flags].sort((a, b) => Number(b) - Number(a)));
    });
  }

  it("a segment chain hole → quarantine-partition (destructive); staging files → sweep-scratch", async () => {
    const hole = (await scanPath(await node(undefined, { scenario: "hole" }), { engine, concurrency: 1 })).node!;
    expect(hole.bootForecast).toContainEqual(expect.objectContaining({ effect: "quarantine-partition", destructive: true }));
    expect(hole.partitions[0]!.head.quarantined).toBe(true);
    const scratch = (await scanPath(await node(undefined, { scenario: "scratch-files" }), { engine, concurrency: 1 })).node!;
    expect(scratch.bootForecast).toContainEqual(expect.objectContaining({ effect: "sweep-scratch", destructive: false }));
  });

  it("a clean generated node forecasts nothing", async () => {
    const report = (await scanPath(await node(), { engine, concurrency: 1 })).node!;
    expect(report.bootForecast).toEqual([]);
    expect(report.partitions.every((p) => p.offsets.length === 2 && p.purgeGeneration?.findings.length === 0)).toBe(true);
  });
});

describe("purge.gen rows without a fault (docs/node.md N5)", () => {
  it("matching revision and generation: clean, values reported; absent with G = 0: clean", async () => {
    const root = await node();
    let report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    expect(report.partitions[0]!.purgeGeneration).toMatchObject({
      present: true,
      generation: 0n,
      createdRevision: 1n,
      expectedGeneration: 0n,
      findings: [],
    });
    const { rmSync } = await import("node:fs");
    rmSync(join(root, P1, "purge.gen"));
    report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    expect(report.partitions[0]!.purgeGeneration).toMatchObject({ present: false, findings: [] });
    expect(report.verdict).toBe("clean");
  });
});

describe("cross-check (docs/node.md N6)", () => {
  it("orphan and missing dirs fill crossCheck; WAL ops that reshape streams make it inconclusive", async () => {
    const orphan = (await scanPath(await node("orphan-dir"), { engine, concurrency: 1 })).node!;
    expect(orphan.crossCheck.orphanDirs).toEqual([join(orphan.path, "streams/1/topics/1/partitions/99")]);
    const missing = (await scanPath(await node("missing-dir"), { engine, concurrency: 1 })).node!;
    expect(missing.crossCheck.missingDirs).toEqual([join(missing.path, "streams/1/topics/1/partitions/2")]);
    expect(missing.verdict).toBe("refused");
    const inconclusive = (await scanPath(await node("orphan-dir-inconclusive"), { engine, concurrency: 1 })).node!;
    expect(inconclusive.crossCheck).toEqual({ orphanDirs: [], missingDirs: [], inconclusiveStreams: [1] });
  });

  it("a fenced dir is listed as evidence on its partition; --include-fenced scans its segments read-only", async () => {
    const root = await node("fenced-dir");
    const report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    const partition = report.partitions.find((p) => p.path.endsWith(P1))!;
    expect(partition.fenced).toEqual([join(report.path, `${P1}.fenced.0`)]);
    expect(partition.findings.find((f) => f.code === "FencedDir")!.scannedVerdict).toBeUndefined();
    const before = treeState(root);
    const scanned = await scanPath(root, { engine, concurrency: 1, includeFenced: true });
    const finding = scanned.node!.partitions.find((p) => p.path.endsWith(P1))!.findings.find((f) => f.code === "FencedDir")!;
    expect(finding).toMatchObject({ severity: "info", scannedVerdict: "clean", scannedSegments: 1, scannedLastOffset: 78n });
    expect(finding.message).toContain("scanned read-only (--include-fenced): clean, 1 segment, offsets up to 78");
    // The fenced copy is not a partition of the report, and nothing was written.
    expect(scanned.partitions.map((p) => p.path)).not.toContain(join(root, `${P1}.fenced.0`));
    expect(treeState(root)).toEqual(before);
    await expect(scanPath(root, { engine, includeFenced: "yes" as never })).rejects.toThrow(/includeFenced must be a boolean/);
  });
});

describe("scan writes nothing", () => {
  it("the whole tree is byte-, size- and mtime-identical after scanning every node fault", async () => {
    for (const fault of [
      "offset-ahead-of-torn-tail",
      "offset-corrupt",
      "purge-lost",
      "missing-dir",
      "fenced-dir",
      "offset-checksum-torn",
    ]) {
      const root = await node(fault);
      const before = treeState(root);
      for (const candidate of engines) await scanPath(root, { engine: candidate, concurrency: 1 });
      expect(treeState(root)).toEqual(before);
    }
  });
});

describe("generator", () => {
  it("writes a checksummed consumer offset that decodes to half the partition's end", async () => {
    const root = await node();
    const bytes = readFileSync(join(root, P1, "offsets/consumers/7"));
    expect(Buffer.compare(bytes, encodeOffsetRecord(115n))).toBe(0);
  });
});

describe("CLI", () => {
  it("the human forecast lists destructive effects first; --include-fenced reaches the library", async () => {
    const root = await node("purge-lost");
    // A second, non-destructive effect on the same node: a clamp on partition 2.
    writeFileSync(join(root, "streams/1/topics/1/partitions/2/offsets/consumers/7"), encodeOffsetRecord(10_000n));
    const run = await runCli(["scan", root]);
    const forecast = run.stdout.slice(run.stdout.indexOf("If iggy-server starts now:")).split("\n").slice(1, 3);
    expect(forecast[0]).toMatch(/^\s+DESTRUCTIVE re-purge-partition /);
    expect(forecast[1]).toMatch(/^\s+clamp-offset /);
    const fenced = await node("fenced-dir");
    const withFenced = await runCli(["scan", fenced, "--include-fenced", "--verbose"]);
    expect(withFenced.stdout).toContain("scanned read-only (--include-fenced): clean, 1 segment");
    expect((await runCli(["scan", fenced])).stdout).not.toContain("--include-fenced");
  });
});

describe("names that only look like a fenced dir or an offset id", () => {
  it("<p>.fenced.abc and <p>.fenced. are neither partitions nor fenced dirs: no repair, no forecast there, a warn each", async () => {
    const { cpSync } = await import("node:fs");
    const root = await node("offset-ahead-of-torn-tail");
    const look = [`${P1}.fenced.abc`, `${P1}.fenced.`].map((dir) => join(root, dir));
    for (const dir of look) cpSync(join(root, P1), dir, { recursive: true });
    cpSync(join(root, P1), join(root, `${P1}.fenced.2`), { recursive: true });
    const report = await scanPath(root, { engine, concurrency: 1 });
    const inside = (path: string): boolean => look.some((dir) => path === dir || path.startsWith(`${dir}/`));
    expect(report.partitions.map((p) => p.path).filter(inside)).toEqual([]);
    expect(report.node!.partitions.map((p) => p.path).filter(inside)).toEqual([]);
    expect(report.node!.bootForecast.filter((entry) => inside(entry.path))).toEqual([]);
    const plan = await planRepair(report);
    expect(plan.targets.map((p) => p.path).filter(inside)).toEqual([]);
    const partition = report.node!.partitions.find((p) => p.path === join(root, P1))!;
    expect(partition.fenced).toEqual([join(root, `${P1}.fenced.2`)]);
    const invalid = partition.findings.filter((f) => f.code === "FencedDirNameInvalid");
    expect(invalid.map((f) => [f.severity, f.path])).toEqual([
      ["warn", join(root, `${P1}.fenced.`)],
      ["warn", join(root, `${P1}.fenced.abc`)],
    ]);
    expect(invalid[0]!.message).toContain("its suffix is not a decimal number (<partition>.fenced.<n>)");
    // The real partition keeps its own repair and clamp.
    expect(plan.targets.map((p) => p.path)).toContain(join(root, P1));
  });

  it("offsets 007 and 7 (one consumer id) are a warn OffsetDuplicateName naming both files", async () => {
    const { copyFileSync } = await import("node:fs");
    const root = await node();
    const consumers = join(root, P1, "offsets", "consumers");
    copyFileSync(join(consumers, "7"), join(consumers, "007"));
    const report = (await scanPath(root, { engine, concurrency: 1 })).node!;
    const partition = report.partitions.find((p) => p.path === join(root, P1))!;
    const duplicate = partition.findings.filter((f) => f.code === "OffsetDuplicateName");
    expect(duplicate).toEqual([
      {
        severity: "warn",
        code: "OffsetDuplicateName",
        path: join(consumers, "007"),
        consumerKind: "consumer",
        consumerId: 7,
        fileCount: 2,
        message: expect.stringContaining(`${join(consumers, "007")} and ${join(consumers, "7")} both name consumer 7`),
      },
    ]);
    expect(duplicate[0]!.message).toContain("the server's choice is undefined");
    expect(report.verdict).toBe("warn");
  });
});
