/**
 * docs/scrub.md §1.1: `scrub` on a node root checks the
 * whole node. Every `gen --node-fault` is reported by a scrub pass with the
 * finding `scan` reports, on both engines; findings about files the server is
 * writing (the WAL's live tail, a `.tmp`, offsets ahead of the written head)
 * wait until the file settles; a torn read seen once is not reported; the
 * corrupt snapshot exits 4 through the CLI, and the metrics name the item, the
 * failing file and the partition of a failing segment, under a strict parser.
 */
import { execFile } from "node:child_process";
import { appendFileSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { generateDataDir } from "../src/gen/generate.js";
import { NODE_FAULTS, writeNodeMetadata } from "../src/gen/node/node.js";
import { type ScanFs, nodeScanFs } from "../src/io/fs.js";
import {
  NODE_ITEMS,
  NODE_SEVERITIES,
  type NodeDeferredEvent,
  type PassSummary,
  type ScrubEvent,
  type ScrubFinding,
  emptyNodeCheckSummary,
  passOutcome,
  zeroFindingCounts,
} from "../src/scrub/findings.js";
import { MAX_NODE_PATH_SERIES, MAX_PARTITION_SERIES, formatMetrics } from "../src/scrub/metrics.js";
import { type ScrubOptions, scrub } from "../src/scrub/scrub.js";
import { CLI } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { tempDir } from "./helpers/node-wal.js";
import { parsePrometheusText } from "./helpers/prometheus.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** A generated tiny node (2 partitions) with at most one node fault. */
async function node(fault?: string): Promise<string> {
  const root = join(tempDir("segscan-scrub-node-"), "node");
  const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
  await writeNodeMetadata(root, generated.partitions, fault === undefined ? {} : { fault });
  return root;
}

/** Every file and dir under `root` back-dated by `ageMs`: a node the server has left alone that long. */
function age(root: string, ageMs: number): void {
  const when = (Date.now() - ageMs) / 1000;
  for (const name of readdirSync(root, { recursive: true }) as string[]) utimesSync(join(root, name), when, when);
}

interface Pass {
  events: ScrubEvent[];
  segmentFindings: ScrubFinding[];
  nodeFindings: ScrubFinding[];
  deferred: NodeDeferredEvent[];
  summary: PassSummary;
}

async function pass(root: string, options: ScrubOptions): Promise<Pass> {
  const events: ScrubEvent[] = [];
  for await (const event of scrub(root, { rate: Infinity, state: null, ...options })) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "pass-complete") throw new Error("a pass ends with pass-complete");
  const findings = events.flatMap((event) => (event.type === "finding" ? [event.finding] : []));
  return {
    events,
    segmentFindings: findings.filter((finding) => finding.item === undefined),
    nodeFindings: findings.filter((finding) => finding.item !== undefined),
    deferred: events.flatMap((event) => (event.type === "node-deferred" ? [event] : [])),
    summary: last.summary,
  };
}

const codes = (findings: readonly ScrubFinding[]): [string, string | undefined][] =>
  findings.map((finding) => [finding.code, finding.severity]);

describe("scrub a node root: every node fault is reported (both engines)", () => {
  it("a clean node: the node items are checked, nothing is found or deferred", async () => {
    const root = await node();
    for (const engine of engines) {
      const result = await pass(root, { engine, nodeSettleMs: 0, sealedSettleMs: 0 });
      expect(result.segmentFindings).toEqual([]);
      expect(result.nodeFindings).toEqual([]);
      expect(result.deferred).toEqual([]);
      expect(result.events).toContainEqual({ type: "node-checked", path: root, findings: 0, deferred: 0, looks: 1 });
      expect(result.summary.node).toEqual(emptyNodeCheckSummary());
      expect(passOutcome(result.summary)).toEqual({ problems: 0, failures: 0 });
    }
  });

  for (const fault of NODE_FAULTS) {
    it(`${fault.name}: ${fault.expected.code || "clean"} (${fault.expected.severity})`, async () => {
      const root = await node(fault.name);
      for (const engine of engines) {
        const result = await pass(root, { engine, nodeSettleMs: 0, sealedSettleMs: 0 });
        if (fault.expected.code === "") {
          expect(result.nodeFindings).toEqual([]);
          continue;
        }
        expect(codes(result.nodeFindings), engine.kind).toContainEqual([fault.expected.code, fault.expected.severity]);
        // Confirmed by a second look; nothing the generator wrote is a write in progress.
        expect(result.deferred).toEqual([]);
        expect(result.events).toContainEqual(expect.objectContaining({ type: "node-checked", looks: 2 }));
        const finding = result.nodeFindings.find((f) => f.code === fault.expected.code)!;
        expect(finding.message.length).toBeGreaterThan(20);
        expect(NODE_ITEMS).toContain(finding.item);
        // Exit status as `scan`: repairable/refused → 4, failed → 8, info/warn → 0 (unless another finding says more).
        const outcome = passOutcome(result.summary);
        if (fault.expected.severity === "repairable" || fault.expected.severity === "refused") expect(outcome.problems).toBeGreaterThan(0);
        if (fault.expected.severity === "failed") expect(outcome.failures).toBeGreaterThan(0);
        const counted = result.nodeFindings.filter((f) => ["repairable", "refused", "failed"].includes(f.severity!));
        expect(result.summary.node!.failing).toEqual(
          counted.map((f) => ({ item: f.item, code: f.code, severity: f.severity, path: f.path })),
        );
      }
    });
  }
});

describe("scrub beside a running server: what is not a finding yet (docs/scrub.md §1.1)", () => {
  it("findings about files just written wait for the settle time; the same files left alone a minute are reported", async () => {
    const cases: [string, string][] = [
      ["wal-torn-tail", "WalTornTail"],
      ["wal-tmp", "WalTmpPresent"],
      ["offset-ahead", "OffsetAheadOfHead"],
      ["partition-frontier-ahead", "OffsetFrontierAhead"],
    ];
    for (const [fault, code] of cases) {
      const root = await node(fault);
      const fresh = await pass(root, { engine: engines[0]! });
      expect(
        codes(fresh.nodeFindings).map(([c]) => c),
        fault,
      ).not.toContain(code);
      expect(fresh.deferred.map((d) => [d.code, d.reason])).toContainEqual([code, "settling"]);
      expect(fresh.summary.node!.deferred.settling).toBeGreaterThan(0);
      age(root, 120_000);
      const settled = await pass(root, { engine: engines[0]! });
      expect(
        codes(settled.nodeFindings).map(([c]) => c),
        fault,
      ).toContain(code);
      expect(settled.deferred).toEqual([]);
    }
  });

  it("findings that cannot be a write in progress are reported at once: a corrupt snapshot, interior WAL damage, a corrupt offset", async () => {
    for (const [fault, code] of [
      ["snapshot-corrupt", "SnapshotCorrupt"],
      ["wal-interior-damage", "WalInteriorDamage"],
      ["wal-gap", "WalGap"],
      ["offset-corrupt", "OffsetCorrupt"],
      ["purge-ahead", "PurgeGenerationAhead"],
    ]) {
      const result = await pass(await node(fault), { engine: engines[0]! });
      expect(
        codes(result.nodeFindings).map(([c]) => c),
        fault,
      ).toContain(code);
    }
  });

  it("a WAL entry being appended (a torn tail at the live end) is never a finding while the WAL is fresh", async () => {
    const root = await node();
    const wal = join(root, "metadata", "journal.wal");
    const bytes = readFileSync(wal);
    // Half of a copy of the first entry's header: what a reader sees mid-append.
    appendFileSync(wal, bytes.subarray(0, 100));
    const live = await pass(root, { engine: engines[0]! });
    expect(live.nodeFindings).toEqual([]);
    expect(live.deferred.map((d) => [d.code, d.reason])).toEqual([["WalTornTail", "settling"]]);
    expect(passOutcome(live.summary)).toEqual({ problems: 0, failures: 0 });
    // The server finished the append: nothing left to defer.
    writeFileSync(wal, bytes);
    expect((await pass(root, { engine: engines[0]! })).deferred).toEqual([]);
    // A torn tail nobody has touched for two minutes is no append in progress.
    appendFileSync(wal, bytes.subarray(0, 100));
    age(root, 120_000);
    expect(codes((await pass(root, { engine: engines[0]! })).nodeFindings)).toEqual([["WalTornTail", "repairable"]]);
  });

  it("a torn read seen by the first look only (a write caught halfway) is not reported: unconfirmed", async () => {
    const root = await node();
    age(root, 120_000);
    const snapshotPath = join(root, "metadata", "snapshot.bin");
    let tornReads = 1;
    // The first read of snapshot.bin sees its trailer's checksum mid-rewrite.
    const tearing: ScanFs = {
      ...nodeScanFs,
      async open(path) {
        const file = await nodeScanFs.open(path);
        if (path !== snapshotPath || tornReads-- <= 0) return file;
        return {
          async read(target, position) {
            const count = await file.read(target, position);
            target[count - 1]! ^= 0xff;
            return count;
          },
          close: () => file.close(),
        };
      },
    };
    const result = await pass(root, { engine: engines[0]!, scanFs: tearing });
    expect(tornReads).toBeLessThanOrEqual(0);
    expect(result.nodeFindings).toEqual([]);
    // The snapshot, and what the first look could not compare with it (purge.gen: no snapshot to compare with).
    expect(result.deferred.map((d) => [d.code, d.reason])).toEqual([
      ["SnapshotCorrupt", "unconfirmed"],
      ["PurgeGenerationUnchecked", "unconfirmed"],
      ["PurgeGenerationUnchecked", "unconfirmed"],
    ]);
    expect(result.events).toContainEqual(expect.objectContaining({ type: "node-checked", findings: 0, deferred: 3, looks: 2 }));
  });

  it("a segment finding makes its partition's head unknown: no offset is compared with it", async () => {
    const root = await node("offset-ahead");
    age(root, 120_000);
    const log = join(
      root,
      "streams/1/topics/1/partitions/1",
      readdirSync(join(root, "streams/1/topics/1/partitions/1")).find((n) => n.endsWith(".log"))!,
    );
    const bytes = readFileSync(log);
    bytes[300]! ^= 1;
    writeFileSync(log, bytes);
    const when = (Date.now() - 120_000) / 1000;
    utimesSync(log, when, when);
    const result = await pass(root, { engine: engines[0]! });
    expect(result.segmentFindings.length).toBeGreaterThan(0);
    expect(codes(result.nodeFindings).map(([c]) => c)).not.toContain("OffsetAheadOfHead");
    expect(result.summary.failingPartitions).toEqual([
      { partition: join(root, "streams/1/topics/1/partitions/1"), findings: result.segmentFindings.length },
    ]);
  });

  it("a partition dir, a .log or a dir below the root gets no node check", async () => {
    const root = await node("snapshot-corrupt");
    for (const path of [join(root, "streams/1/topics/1/partitions/1"), join(root, "streams")]) {
      const result = await pass(path, { engine: engines[0]! });
      expect(result.nodeFindings).toEqual([]);
      expect(result.summary.node).toBeNull();
      expect(result.events.some((event) => event.type === "node-checked")).toBe(false);
    }
  });
});

describe("node findings in the metrics (docs/scrub.md §5)", () => {
  it("every item and severity has a series; failing files and partitions are capped by named constants", () => {
    const node = emptyNodeCheckSummary();
    node.findings.offsets.refused = MAX_NODE_PATH_SERIES + 3;
    node.failing = Array.from({ length: MAX_NODE_PATH_SERIES + 3 }, (_, i) => ({
      item: "offsets" as const,
      code: "OffsetCorrupt",
      severity: "refused" as const,
      path: `/n/streams/1/topics/1/partitions/1/offsets/consumers/${i}`,
    }));
    node.deferred.settling = 2;
    const summary: PassSummary = {
      startedAt: new Date(0).toISOString(),
      finishedAt: new Date(1000).toISOString(),
      elapsedMs: 1000,
      complete: true,
      segmentsVerified: 0,
      segmentsSkipped: 0,
      segmentsDeleted: 0,
      bytesVerified: 0,
      bytesRead: 0,
      bytesPerSecond: 0,
      findingsByCode: zeroFindingCounts(),
      findings: MAX_NODE_PATH_SERIES + 3,
      statePath: null,
      lastFullPassAt: null,
      lastSuccessAt: null,
      totals: { bytesVerified: 0, segmentsVerified: 0, passesCompleted: 1 },
      failingPartitions: Array.from({ length: MAX_PARTITION_SERIES + 5 }, (_, i) => ({
        partition: `/n/p/${String(i).padStart(3, "0")}`,
        findings: 1,
      })),
      node,
    };
    const parsed = parsePrometheusText(formatMetrics({ root: "/n", summary, rateLimitBytesPerSecond: 1 }));
    expect(parsed.get("segscan_scrub_node_findings")!.samples).toHaveLength(NODE_ITEMS.length * NODE_SEVERITIES.length);
    expect(parsed.get("segscan_scrub_node_finding")!.samples).toHaveLength(MAX_NODE_PATH_SERIES);
    expect(parsed.get("segscan_scrub_node_findings_unlisted")!.samples[0]!.value).toBe(3);
    expect(parsed.get("segscan_scrub_partition_findings")!.samples).toHaveLength(MAX_PARTITION_SERIES);
    expect(parsed.get("segscan_scrub_partition_findings")!.samples[0]!.labels).toEqual({ root: "/n", partition: "/n/p/000" });
    expect(parsed.get("segscan_scrub_failing_partitions")!.samples[0]!.value).toBe(MAX_PARTITION_SERIES + 5);
    expect(parsed.get("segscan_scrub_partitions_unlisted")!.samples[0]!.value).toBe(5);
    expect(parsed.get("segscan_scrub_node_deferred")!.samples.find((s) => s.labels.reason === "settling")!.value).toBe(2);
  });
});

describe("segscan scrub <node root> (CLI)", () => {
  const run = async (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: "1" } });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
  };

  it("a corrupt snapshot (the server would refuse to boot) exits 4 with the finding; the metrics name the item, the file and a failing segment's partition", async () => {
    const root = await node("snapshot-corrupt");
    const state = `${root}-state.json`;
    const metrics = `${root}-scrub.prom`;
    const text = await run(["scrub", root, "--state", state, "--rate", "unlimited"]);
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/FINDING SnapshotCorrupt \[snapshot, refused\] .*metadata\/snapshot\.bin/);
    // Info findings print as notes: no snapshot to compare purge.gen with.
    expect(text.stdout).toMatch(/INFO PurgeGenerationUnchecked \[purge-gen, info\]/);
    expect(text.stdout).toMatch(/node items checked/);

    // Bit rot in a sealed segment of partition 2, beside the corrupt snapshot.
    const partition = join(root, "streams/1/topics/1/partitions/2");
    const log = join(
      partition,
      readdirSync(partition)
        .filter((n) => n.endsWith(".log"))
        .sort()[0]!,
    );
    const bytes = readFileSync(log);
    bytes[bytes.length >> 1]! ^= 1;
    writeFileSync(log, bytes);
    const json = await run(["scrub", root, "--state", state, "--metrics", metrics, "--json", "--reverify-after", "0"]);
    expect(json.code).toBe(4);
    const events = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ScrubEvent);
    const snapshotFinding = events.find((event) => event.type === "finding" && event.finding.code === "SnapshotCorrupt");
    expect(snapshotFinding).toMatchObject({
      finding: { item: "snapshot", severity: "refused", path: join(root, "metadata/snapshot.bin"), segmentPath: null },
    });
    expect(events.some((event) => event.type === "finding" && event.finding.segmentPath === log)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "pass-complete", summary: { failingPartitions: [{ partition }] } });

    const parsed = parsePrometheusText(readFileSync(metrics, "utf8"));
    const nodeBy = (item: string, severity: string) =>
      parsed.get("segscan_scrub_node_findings")!.samples.find((s) => s.labels.item === item && s.labels.severity === severity)!.value;
    expect(nodeBy("snapshot", "refused")).toBe(1);
    expect(nodeBy("wal", "refused")).toBe(0);
    expect(parsed.get("segscan_scrub_node_finding")!.samples).toEqual([
      {
        labels: { root, item: "snapshot", code: "SnapshotCorrupt", severity: "refused", path: join(root, "metadata/snapshot.bin") },
        value: 1,
      },
    ]);
    expect(parsed.get("segscan_scrub_partition_findings")!.samples.map((s) => s.labels.partition)).toEqual([partition]);
    expect(parsed.get("segscan_scrub_node_checked")!.samples[0]!.value).toBe(1);
    expect(statSync(metrics).size).toBeGreaterThan(0);
  });

  it("--help says what the re-verify interval means for bit rot, and its default", async () => {
    const help = await run(["scrub", "--help"]);
    expect(help.stdout).toMatch(/default: 7d, as Ceph's weekly deep\s+scrub/);
    expect(help.stdout).toMatch(/Bit rot in it is found within\s+--reverify-after plus one --interval/);
  });
});
