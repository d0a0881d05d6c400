/**
 * docs/node.md N0–N3, N9: every generated N1–N3 fault, scanned as a node root
 * on both engines: the expected finding with its severity, the node verdict,
 * identical reports across engines and window sizes, the JSON node section
 * valid against its TypeBox schema, and a clean node clean.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NODE_FAULTS } from "../src/gen/node/node.js";
import { isNodeRoot, nodeFindings, scanNode } from "../src/node/scan.js";
import { nodeToJson } from "../src/report/node-json.js";
import { validateNodeJson } from "../src/report/node-schema.js";
import { scanIter, scanPath } from "../src/node/scan-path.js";
import { toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { scanExitCode } from "../src/cli/exit.js";
import { worstSeverity } from "../src/domain/node.js";
import { allEngines } from "./helpers/engines.js";
import { type ScanFs, nodeScanFs, withListing } from "../src/io/fs.js";
import type { PartitionReport } from "../src/domain/scan.js";
import { tempDir } from "./helpers/node-wal.js";
import { tinyNode } from "./helpers/metadata-node.js";

const engines = await allEngines();

const node = (fault?: string): Promise<string> => tinyNode({ seed: 7, fault });

describe("a clean generated node", () => {
  it("is clean on both engines, with the WAL op range, snapshot counts and superblock pairing", async () => {
    const root = await node();
    for (const engine of engines) {
      const report = await scanPath(root, { engine, concurrency: 1 });
      expect(report.node).toBeDefined();
      const nodeReport = report.node!;
      expect(nodeFindings(nodeReport)).toEqual([]);
      expect(nodeReport.verdict).toBe("clean");
      expect(nodeReport.metadata.wal).toMatchObject({ entries: 16, ops: { first: 40n, last: 55n } });
      expect(nodeReport.metadata.snapshot).toMatchObject({ sealed: true, sequenceNumber: 40n, streams: 1, topics: 1, partitions: 2 });
      expect(nodeReport.metadata.superblock?.vsr).toMatchObject({ checkpointOp: 40n, commitMax: 55n });
      expect(nodeReport.metadata.snapshot?.contents?.streams[0]?.topics[0]).toMatchObject({
        consumerGroupIds: [1],
        partitions: [{ id: 1 }, { id: 2 }],
      });
      expect(report.partitions).toHaveLength(2);
      const json = JSON.parse(JSON.stringify(toJsonReport(report)));
      expect(validateJsonReport(json)).toEqual([]);
      expect(json.node.metadata.wal.ops).toEqual({ first: "40", last: "55" });
      expect(scanExitCode(report)).toBe(0);
    }
  });

  it("the node schema rejects a wrong shape (u64 as a number, an unknown key, a bad severity)", async () => {
    const root = await node("wal-torn-tail");
    const json = JSON.parse(JSON.stringify(toJsonReport(await scanPath(root, { engine: engines[0]!, concurrency: 1 }))));
    expect(validateJsonReport(json)).toEqual([]);
    const broken = structuredClone(json);
    broken.node.metadata.wal.ops.first = 40;
    broken.node.metadata.extra = true;
    const problems = validateJsonReport(broken);
    expect(problems, problems.join("\n")).not.toEqual([]);
    // The u64-as-number is reported at or inside the nullable wal object; the extra key by name.
    expect(
      problems.some((p) => p.startsWith("$.node.metadata.wal")),
      problems.join("\n"),
    ).toBe(true);
    expect(
      problems.some((p) => p.startsWith("$.node.metadata.extra") || (p.startsWith("$.node.metadata") && p.includes("extra"))),
      problems.join("\n"),
    ).toBe(true);
    const severity = structuredClone(json);
    severity.node.metadata.findings.push({ severity: "fatal", code: "X", path: "p", message: "m" });
    expect(
      validateJsonReport(severity).some(
        (p) => p.startsWith("$.node.metadata.findings.0.severity") || p.startsWith("$.node.metadata.findings[0].severity"),
      ),
    ).toBe(true);
  });

  it("a partition dir or a .log keeps today's behaviour (no node section)", async () => {
    const root = await node();
    const report = await scanPath(join(root, "streams/1/topics/1/partitions/1"), { engine: engines[0]!, concurrency: 1 });
    expect(report.node).toBeUndefined();
  });
});

describe("every N1–N3 fault the generator injects", () => {
  for (const fault of NODE_FAULTS) {
    it(`${fault.name}: ${fault.expected.code || "clean"} (${fault.expected.severity})`, async () => {
      const root = await node(fault.name);
      const jsons: string[] = [];
      for (const engine of engines) {
        for (const windowBytes of [4096, 1 << 20]) {
          const report = (await scanPath(root, { engine, windowBytes, concurrency: 1 })).node!;
          const findings = nodeFindings(report);
          if (fault.expected.code === "") {
            expect(findings).toEqual([]);
          } else {
            expect(findings.map((f) => [f.code, f.severity])).toContainEqual([fault.expected.code, fault.expected.severity]);
          }
          expect(report.verdict).toBe(worstSeverity(findings.map((f) => f.severity)));
          for (const finding of findings) expect(finding.message.length).toBeGreaterThan(20);
          const json = JSON.parse(JSON.stringify(nodeToJson(report)));
          expect(validateNodeJson(json)).toEqual([]);
          jsons.push(JSON.stringify(json));
        }
      }
      expect(new Set(jsons).size).toBe(1);
    });
  }
});

describe("a snapshot whose op is unknown", () => {
  it("a corrupt snapshot refuses without a spurious WalSnapshotHole (S is unknown, not 0)", async () => {
    for (const fault of ["snapshot-corrupt", "snapshot-garbage"]) {
      const report = await scanNode(await node(fault), { engine: engines[0]! });
      // Each partition's purge.gen has no snapshot to compare with (docs/node.md N5: info).
      expect(nodeFindings(report).map((f) => f.code)).toEqual(["SnapshotCorrupt", "PurgeGenerationUnchecked", "PurgeGenerationUnchecked"]);
    }
  });
});

describe("scanNode options", () => {
  it("reports WAL progress, honours an aborted signal, and uses the given budget", async () => {
    const root = await node("wal-zero-tail");
    const events: { path: string; bytesDone: number; bytesTotal: number }[] = [];
    const report = await scanNode(root, {
      engine: engines[0]!,
      windowBytes: 4096,
      probeBudgetUnits: 1000,
      onProgress: (event) => events.push(event),
    });
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)!.path).toBe(join(root, "metadata/journal.wal"));
    expect(report.metadata.wal!.budget.limitUnits).toBe(1000);
    expect(report.metadata.wal!.findings.map((f) => f.code)).toEqual(["WalUnverifiedResidue"]);
    const controller = new AbortController();
    controller.abort();
    await expect(scanNode(root, { engine: engines[0]!, signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("what a user can break gives a finding, never an exception", () => {
  const cases: [string, (root: string) => void, string][] = [
    ["empty snapshot.bin", (root) => writeFileSync(join(root, "metadata/snapshot.bin"), new Uint8Array(0)), "SnapshotCorrupt"],
    [
      "truncated snapshot.bin",
      (root) => writeFileSync(join(root, "metadata/snapshot.bin"), new Uint8Array([0x97, 0x03])),
      "SnapshotCorrupt",
    ],
    [
      "msgpack of the wrong shape",
      (root) => writeFileSync(join(root, "metadata/snapshot.bin"), new Uint8Array([0x93, 0x01, 0x02, 0x03])),
      "SnapshotCorrupt",
    ],
    [
      "msgpack array header claiming 2^32-1 elements",
      (root) => writeFileSync(join(root, "metadata/snapshot.bin"), new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 0x03])),
      "SnapshotCorrupt",
    ],
    ["superblock slot of 3 bytes", (root) => writeFileSync(join(root, "metadata/superblock.a"), new Uint8Array(3)), "SuperblockUnreadable"],
    [
      "oversized superblock slot",
      (root) => writeFileSync(join(root, "metadata/superblock.b"), new Uint8Array(5000)),
      "SuperblockUnreadable",
    ],
    [
      "superblock slot that is a directory",
      (root) => {
        rmSync(join(root, "metadata/superblock.a"));
        mkdirSync(join(root, "metadata/superblock.a"));
      },
      "SuperblockUnreadable",
    ],
    [
      "snapshot.bin that is a directory",
      (root) => {
        rmSync(join(root, "metadata/snapshot.bin"));
        mkdirSync(join(root, "metadata/snapshot.bin"));
      },
      "SnapshotReadFailure",
    ],
    // commit_max 55 is above the snapshot's op 40: a WAL that proves no op is a committed-op loss (docs/node.md N1.1), not a torn tail.
    [
      "journal.wal of garbage",
      (root) => writeFileSync(join(root, "metadata/journal.wal"), new Uint8Array(1000).fill(0xab)),
      "WalCommittedOpsLost",
    ],
    [
      "journal.wal of 100 bytes",
      (root) => writeFileSync(join(root, "metadata/journal.wal"), new Uint8Array(100).fill(6)),
      "WalCommittedOpsLost",
    ],
    [
      "journal.wal is a directory",
      (root) => {
        const p = join(root, "metadata/journal.wal");
        rmSync(p);
        mkdirSync(p);
      },
      "WalReadFailure",
    ],
  ];
  for (const [name, breakIt, code] of cases) {
    it(name, async () => {
      const root = await node();
      breakIt(root);
      for (const engine of engines) {
        const report = await scanNode(root, { engine });
        const codes = nodeFindings(report).map((f) => f.code);
        if (code !== "") expect(codes).toContain(code);
      }
    });
  }

  it("unreadable files are failed items naming path and cause, never evidence", async () => {
    const root = await node();
    for (const [victim, code] of [
      ["journal.wal", "WalReadFailure"],
      ["snapshot.bin", "SnapshotReadFailure"],
      ["superblock.b", "SuperblockReadFailure"],
    ] as const) {
      const failing: ScanFs = {
        ...nodeScanFs,
        async open(path) {
          if (path.endsWith(`metadata/${victim}`)) throw Object.assign(new Error("permission denied"), { code: "EACCES" });
          return nodeScanFs.open(path);
        },
      };
      const report = await scanNode(root, { engine: engines[0]! }, failing);
      const failed = nodeFindings(report).find((f) => f.code === code)!;
      expect(failed, victim).toMatchObject({ severity: "failed" });
      expect(failed.message).toContain("EACCES");
      expect(failed.message).toContain(victim);
      expect(report.verdict).toBe("failed");
    }
  });

  it("a WAL with no metadata superblock and no snapshot is still judged", async () => {
    const root = tempDir();
    mkdirSync(join(root, "metadata"));
    writeFileSync(join(root, "metadata/journal.wal"), new Uint8Array(0));
    const report = await scanNode(root, { engine: engines[0]! });
    expect(report.verdict).toBe("clean");
    expect(report.metadata.superblock?.state).toBe("empty");
  });
});

describe("the node pass over partition dirs", () => {
  it("answers absent optional files from one listing per partition: no stat of a path that does not exist", async () => {
    const root = await node();
    const attempted: string[] = [];
    const counting: ScanFs = {
      ...nodeScanFs,
      stat: (path) => {
        attempted.push(path);
        return nodeScanFs.stat(path);
      },
      open: (path) => {
        attempted.push(path);
        return nodeScanFs.open(path);
      },
    };
    const plain = await scanPath(root, { engine: engines[0]!, concurrency: 1 });
    const listed = await scanPath(root, { engine: engines[0]!, concurrency: 1 }, counting);
    expect(toJsonReport({ ...listed, summary: { ...listed.summary, elapsedMs: 0 } })).toEqual(
      toJsonReport({ ...plain, summary: { ...plain.summary, elapsedMs: 0 } }),
    );
    const partitionDirs = listed.partitions.map((partition) => partition.path);
    const probedAbsent = attempted.filter((path) => partitionDirs.some((dir) => path.startsWith(`${dir}/`)) && !existsSync(path));
    expect(probedAbsent).toEqual([]);
    // The files that do exist are still read: the clean node's purge.gen and offsets are in the node section.
    expect(listed.node!.partitions.some((partition) => partition.purgeGeneration?.present === true)).toBe(true);
    expect(attempted.some((path) => path.endsWith("purge.gen"))).toBe(true);
  });

  it("withListing: knownAbsent only for names the listing did not hold, and whatever lies under them", () => {
    const fs = withListing(nodeScanFs, "/data/p/1", new Set(["purge.gen", "offsets"]));
    expect(fs.knownAbsent!("/data/p/1/superblock.a")).toBe(true);
    expect(fs.knownAbsent!("/data/p/1/purge.gen")).toBe(false);
    expect(fs.knownAbsent!("/data/p/1/offsets/consumers")).toBe(false);
    expect(fs.knownAbsent!("/data/p/1/nothing/deeper")).toBe(true);
    expect(fs.knownAbsent!("/data/p/10/superblock.a")).toBe(false);
    expect(fs.knownAbsent!("/data/p/1")).toBe(false);
  });
});

describe("a failed read is failed, never evidence", () => {
  const failure = (code: "EACCES" | "EIO"): Error =>
    Object.assign(new Error(code === "EACCES" ? "EACCES: permission denied" : "EIO: i/o error"), { code });
  /** nodeScanFs, but `list` of `dir` fails (EIO) on the listings numbered in `failing` (1-based). */
  function flakyListing(dir: string, failing: readonly number[]): ScanFs {
    let listings = 0;
    return {
      ...nodeScanFs,
      list: (path) => (path === dir && failing.includes(++listings) ? Promise.reject(failure("EIO")) : nodeScanFs.list(path)),
    };
  }

  it("a partitions dir the node pass cannot list is failed (StreamsDirUnreadable), never MissingPartitionDir", async () => {
    // Partition 2's dir is gone and no WAL op makes the cross-check inconclusive: an absent dir is MissingPartitionDir.
    const root = await node("missing-dir");
    const engine = engines[0]!;
    const missing = nodeFindings(await scanNode(root, { engine })).filter((f) => f.code === "MissingPartitionDir");
    expect(missing.map((f) => f.path)).toEqual([join(root, "streams/1/topics/1/partitions/2")]);
    // A partitions dir that cannot be listed is no evidence that its partition dirs are missing.
    const partitionsDir = join(root, "streams/1/topics/1/partitions");
    const denied: ScanFs = {
      ...nodeScanFs,
      list: (path) => (path === partitionsDir ? Promise.reject(failure("EACCES")) : nodeScanFs.list(path)),
    };
    for (const report of [await scanNode(root, { engine }, denied), (await scanPath(root, { engine, concurrency: 1 }, denied)).node!]) {
      const findings = nodeFindings(report);
      expect(findings.map((f) => f.code)).not.toContain("MissingPartitionDir");
      expect(report.crossCheck.missingDirs).toEqual([]);
      expect(findings.filter((f) => f.code === "StreamsDirUnreadable")).toEqual([
        expect.objectContaining({
          severity: "failed",
          path: partitionsDir,
          message: expect.stringContaining("permission denied (EACCES)"),
        }),
      ]);
      expect(report.verdict).toBe("failed");
      expect(report.bootForecast.map((entry) => entry.effect)).not.toContain("recreate-partition-empty");
    }
  });

  it("a node root whose check fails: isNodeRoot rejects naming path and cause, and the scan reports the root failed", async () => {
    const root = await node();
    const engine = engines[0]!;
    await expect(isNodeRoot(root, flakyListing(root, [1]))).rejects.toMatchObject({
      name: "ScanFailure",
      code: "ListFailure",
      path: root,
      message: expect.stringContaining(`cannot list the directory ${root}: i/o error (EIO)`),
    });
    await expect(isNodeRoot(join(root, "absent"), nodeScanFs)).resolves.toBe(false);
    // Discovery lists the root first and succeeds; the node root check (the second listing) fails.
    const report = await scanPath(root, { engine, concurrency: 1 }, flakyListing(root, [2]));
    // scanIter checks the root before discovery walks it: there the first listing fails.
    const streamed: PartitionReport[] = [];
    const iterator = scanIter(root, { engine, concurrency: 1 }, flakyListing(root, [1]));
    let next = await iterator.next();
    for (; !next.done; next = await iterator.next()) streamed.push(next.value);
    for (const partitions of [report.partitions, streamed]) {
      expect(partitions.map((p) => [p.path, p.verdict])).toEqual([
        [root, "failed"],
        [join(root, "streams/1/topics/1/partitions/1"), "clean"],
        [join(root, "streams/1/topics/1/partitions/2"), "clean"],
      ]);
      expect(partitions[0]!.error).toMatchObject({ code: "ListFailure", path: root, message: expect.stringContaining("i/o error (EIO)") });
    }
    expect(report.node).toBeUndefined();
    expect(next.value).not.toHaveProperty("node");
    expect(report.summary.failed).toBe(1);
    expect(scanExitCode(report) & 8).toBe(8);
  });

  it("a leftover .tmp whose stat fails is a failed TmpReadFailure, not absent", async () => {
    const root = await node();
    const tmp = join(root, "metadata/journal.wal.tmp");
    const denied: ScanFs = { ...nodeScanFs, stat: (path) => (path === tmp ? Promise.reject(failure("EACCES")) : nodeScanFs.stat(path)) };
    const report = await scanNode(root, { engine: engines[0]! }, denied);
    expect(nodeFindings(report).filter((f) => f.path === tmp)).toEqual([
      expect.objectContaining({
        severity: "failed",
        code: "TmpReadFailure",
        message: expect.stringContaining("permission denied (EACCES)"),
      }),
    ]);
    expect(report.verdict).toBe("failed");
  });
});
