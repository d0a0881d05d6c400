/**
 * `segscan dump` of a node's metadata files (docs/interfaces.md §9.5,
 * docs/node.md N1, N2): the WAL's entries as the scan's own reader sees them,
 * a torn or corrupt entry shown as what it is with its byte position, the
 * snapshot's trailer, header and counts as the scan reads them; `--json` in
 * the one shape of docs/dump.schema.json (generated, and checked here); any
 * other file a usage error (16), never listed as segment damage.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { WAL_OPERATION_NAMES, isValidOperation } from "../src/format/wal.js";
import { generateDataDir } from "../src/gen/generate.js";
import { nodeScanFs } from "../src/io/fs.js";
import { inspectSnapshot, scanSnapshot } from "../src/node/snapshot.js";
import { type WalDumpEntry, dumpWal } from "../src/node/wal/dump.js";
import { scanWal } from "../src/node/wal/scan.js";
import { dumpJsonSchemaText, validateDumpJson } from "../src/report/dump-schema.js";
import { runCli } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { tinyNode } from "./helpers/metadata-node.js";
import { tempDir } from "./helpers/node-wal.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

const WINDOWS = [4096, 1 << 20] as const;

async function listed(path: string, engine: Engine, windowBytes: number) {
  const entries: WalDumpEntry[] = [];
  const result = await dumpWal(path, {
    engine,
    scanFs: nodeScanFs,
    windowBytes,
    onEntry: async (entry) => {
      entries.push(entry);
    },
  });
  return { entries, result };
}

/** A CLI dump's JSON, checked against docs/dump.schema.json's shape. */
// biome-ignore lint/suspicious/noExplicitAny: the test reads parsed JSON freely
function parsed(stdout: string): any {
  const document: unknown = JSON.parse(stdout);
  expect(validateDumpJson(document)).toEqual([]);
  return document;
}

describe("dump metadata/journal.wal", () => {
  it("lists every entry the scan's walk proves, in file order, on both engines and any window", async () => {
    const wal = join(await tinyNode({ seed: 3 }), "metadata/journal.wal");
    const size = readFileSync(wal).length;
    for (const engine of engines) {
      const scanned = await scanWal(wal, size, {
        engine,
        scanFs: nodeScanFs,
        windowBytes: 1 << 20,
        probeBudgetUnits: 1 << 20,
        snapshotOp: 40n,
        superblockCluster: null,
      });
      for (const windowBytes of WINDOWS) {
        const { entries, result } = await listed(wal, engine, windowBytes);
        expect(result).toEqual({ size, entries: 16, verified: 16, unsealed: 0, stopped: null });
        expect(entries.map((entry) => entry.header.op)).toEqual(scanned.report.operations.map((entry) => entry.op));
        expect(entries.every((entry) => entry.verify === "ok" && entry.problem === null)).toBe(true);
        // Entries tile the file; each one's parent is the checksum of the one before it.
        expect(entries[0]!.position).toBe(0);
        entries.slice(1).forEach((entry, i) => {
          expect(entry.position).toBe(entries[i]!.position + entries[i]!.header.size);
          expect(entry.header.parent).toBe(entries[i]!.header.checksum);
        });
      }
    }
  });

  it("the CLI: one line per entry (op, operation, parent, checksums, size, verify), exit 0; --json in the schema's shape", async () => {
    const wal = join(await tinyNode({ seed: 4 }), "metadata/journal.wal");
    const text = await runCli(["dump", wal], { NO_COLOR: "1" });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n").filter((line) => line.startsWith("position: "));
    expect(lines).toHaveLength(16);
    expect(lines[0]).toMatch(
      /^position: 0 op: 40 size: \d+ operation: \d+ \([A-Za-z]+\) commit: \d+ parent: 0x[0-9a-f]{32} checksum: 0x[0-9a-f]{32} bodyChecksum: 0x[0-9a-f]{32} .* verify: ok$/,
    );
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(/^16 entries, 16 verified, [\d.]+ KiB$/);
    const json = await runCli(["dump", wal, "--json"]);
    expect(json.code).toBe(0);
    const document = parsed(json.stdout);
    expect(document).toMatchObject({ kind: "wal", file: wal, verified: 16, unsealed: 0, stopped: null });
    expect(document.entries.map((entry: { op: string }) => entry.op)).toEqual(Array.from({ length: 16 }, (_, i) => `${40 + i}`));
    expect(document.entries[1].parent).toBe(document.entries[0].checksum);
  });

  it("a torn last entry is listed as a short entry at its byte position, and the listing says where it stopped; exit 4", async () => {
    const wal = join(await tinyNode({ seed: 5, fault: "wal-torn-tail" }), "metadata/journal.wal");
    const size = readFileSync(wal).length;
    for (const engine of engines) {
      for (const windowBytes of WINDOWS) {
        const { entries, result } = await listed(wal, engine, windowBytes);
        const last = entries.at(-1)!;
        expect(last).toMatchObject({ verify: "short-entry", header: { op: 55n } });
        expect(last.problem).toMatch(/^entry claims \d+ bytes but only \d+ remain$/);
        expect(result.stopped).toEqual({
          position: last.position,
          bytes: size - last.position,
          reason: last.problem,
          evidence: "short-entry",
          claimedOp: 55n,
        });
      }
    }
    const text = await runCli(["dump", wal], { NO_COLOR: "1" });
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/ op: 55 .* verify: short-entry \(entry claims \d+ bytes but only \d+ remain\)\n/);
    expect(text.stdout).toMatch(
      /listing stopped at byte [\d,]+: entry claims \d+ bytes but only \d+ remain; the last \d+ bytes are a short last entry/,
    );
    expect(text.stdout).toContain("16 entries, 15 verified, 1 failed to verify");
    const json = parsed((await runCli(["dump", wal, "--json"])).stdout);
    expect(json.stopped).toMatchObject({ evidence: "short-entry", claimedOp: "55" });
  });

  it("a zero-filled tail stops the listing and is said to be zero; exit 4", async () => {
    const wal = join(await tinyNode({ seed: 6, fault: "wal-zero-tail" }), "metadata/journal.wal");
    const run = await runCli(["dump", wal, "--json"]);
    expect(run.code).toBe(4);
    const document = parsed(run.stdout);
    expect(document.entries).toHaveLength(16);
    expect(document.stopped).toMatchObject({ bytes: 65536, evidence: "zero-filled", claimedOp: null });
    expect((await runCli(["dump", wal], { NO_COLOR: "1" })).stdout).toContain("the last 65,536 bytes are all zero, never written");
  });

  it("a damaged entry in the middle is listed with the check that failed, and the entries after it still are", async () => {
    const wal = join(await tinyNode({ seed: 7, fault: "wal-interior-damage" }), "metadata/journal.wal");
    const { entries, result } = await listed(wal, engines[0]!, 4096);
    const damaged = entries.filter((entry) => entry.verify !== "ok");
    expect(damaged).toHaveLength(1);
    expect(damaged[0]).toMatchObject({ verify: "body-checksum" });
    expect(damaged[0]!.problem).toMatch(/^body checksum mismatch/);
    expect(result).toMatchObject({ entries: 16, verified: 15, stopped: null });
    expect(entries.indexOf(damaged[0]!)).toBeLessThan(15);
    expect((await runCli(["dump", wal])).code).toBe(4);
  });

  it("unsealed entries are shown as unsealed (nothing proves them), as scan warns; exit 0", async () => {
    const wal = join(await tinyNode({ seed: 8, fault: "wal-unsealed" }), "metadata/journal.wal");
    const run = await runCli(["dump", wal], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").filter((line) => line.endsWith("verify: unsealed"))).toHaveLength(3);
    expect(run.stdout).toContain("16 entries, 13 verified, 3 unsealed (nothing proves their bytes)");
  });

  it("WAL_OPERATION_NAMES names exactly the valid operations", () => {
    for (let value = 0; value < 256; value++) expect(WAL_OPERATION_NAMES.has(value), `${value}`).toBe(isValidOperation(value));
  });
});

describe("dump metadata/snapshot.bin", () => {
  it("shows the trailer, the root fields and the counts the scan reads; exit 0; --json in the schema's shape", async () => {
    const root = await tinyNode({ seed: 9 });
    const path = join(root, "metadata/snapshot.bin");
    const report = await scanSnapshot(path, nodeScanFs, engines[0]!);
    const inspection = await inspectSnapshot(path, nodeScanFs, engines[0]!);
    expect(inspection.report).toEqual(report);
    expect(inspection.trailer).toMatchObject({
      position: report.size - 20,
      storedChecksum: report.checksum,
      computedChecksum: report.checksum,
    });
    expect(inspection.header).toMatchObject({ version: 3, sequenceNumber: 40n, users: true, clientTable: true });
    const text = await runCli(["dump", path], { NO_COLOR: "1" });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^trailer: position: \d+ magic: 0x49534e50 checksum: 0x[0-9a-f]{32} computed: 0x[0-9a-f]{32} verify: ok$/m);
    expect(text.stdout).toMatch(/^header: version: 3 sequenceNumber: 40 createdAt: \d+ /m);
    expect(text.stdout).toContain(`counts: streams: ${report.streams} topics: ${report.topics} partitions: ${report.partitions} `);
    const document = parsed((await runCli(["dump", path, "--json"])).stdout);
    expect(document).toMatchObject({
      kind: "snapshot",
      size: report.size,
      trailer: { matches: true, storedChecksum: `0x${report.checksum!.toString(16).padStart(32, "0")}` },
      header: { version: 3, sequenceNumber: "40" },
      counts: { streams: report.streams, topics: report.topics, partitions: report.partitions },
      findings: [],
    });
  });

  it("a corrupt snapshot: the trailer's two checksums side by side, the scan's finding, exit 4", async () => {
    const path = join(await tinyNode({ seed: 10, fault: "snapshot-corrupt" }), "metadata/snapshot.bin");
    const run = await runCli(["dump", path, "--json"]);
    expect(run.code).toBe(4);
    const document = parsed(run.stdout);
    expect(document.trailer.matches).toBe(false);
    expect(document.trailer.storedChecksum).not.toBe(document.trailer.computedChecksum);
    expect(document.header).toBeNull();
    expect(document.findings.map((finding: { code: string }) => finding.code)).toEqual(["SnapshotCorrupt"]);
    expect((await runCli(["dump", path], { NO_COLOR: "1" })).stdout).toContain("verify: checksum-mismatch");
  });

  it("an unsealed snapshot has no trailer to show: the whole file is the payload, a warning, exit 0", async () => {
    const path = join(await tinyNode({ seed: 11, fault: "snapshot-unsealed" }), "metadata/snapshot.bin");
    const run = await runCli(["dump", path, "--json"]);
    expect(run.code).toBe(0);
    const document = parsed(run.stdout);
    expect(document).toMatchObject({ trailer: null, payloadBytes: document.size, header: { sequenceNumber: "40" } });
    expect(document.findings.map((finding: { code: string }) => finding.code)).toEqual(["SnapshotUnsealed"]);
  });
});

describe("dump takes segments and the metadata files, nothing else", () => {
  it("a superblock or a text file is not a segment: usage error 16, nothing listed", async () => {
    const root = await tinyNode({ seed: 12 });
    const notes = join(tempDir(), "notes.txt");
    writeFileSync(notes, "not a segment\n".repeat(40));
    for (const path of [join(root, "metadata/superblock.a"), notes]) {
      const run = await runCli(["dump", path]);
      expect(run.code, path).toBe(16);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(
        `${path} is not a segment (a .log or its .index), nor a node's metadata/journal.wal or metadata/snapshot.bin`,
      );
    }
  });

  it("a segment's and an index's --json carry their kind and fit the schema", async () => {
    const generated = await generateDataDir(join(tempDir(), "data"), { size: "tiny", seed: 13, scenario: "torn-index" });
    const segment = generated.partitions[0]!.segments.at(-1)!;
    const log = parsed((await runCli(["dump", segment.logPath, "--json", "--messages"])).stdout);
    expect(log).toMatchObject({ kind: "segment", stopped: null });
    const index = parsed((await runCli(["dump", segment.indexPath, "--json"])).stdout);
    expect(index.kind).toBe("index");
    expect(index.trailingBytes).toBeGreaterThan(0);
  });

  it("docs/dump.schema.json is what src/report/dump-schema.ts generates (npm run schema)", () => {
    const committed = fileURLToPath(new URL("../docs/dump.schema.json", import.meta.url));
    expect(readFileSync(committed, "utf8")).toBe(dumpJsonSchemaText());
  });
});
