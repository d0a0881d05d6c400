/**
 * The cluster view on real reports (docs/fleet.md). `gen --cluster 3` writes three
 * node roots with replica-specific faults; each is scanned (both engines, tail
 * and deep) and the reports merged. One scenario per verdict: a torn tail one
 * replica has and another holds, interior damage on one with a clean copy
 * elsewhere, the same range lost on all, a lagging replica, a divergent batch,
 * a torn tail everywhere with a group offset past every head, and the metadata
 * plane (committed ops no node holds, mismatched identities). Then the CLI on
 * `--ndjson` reports: text, `--json` (validated against docs/fleet.schema.json),
 * `--html`, exit codes, and the errors that name a file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import {
  type FleetPartition,
  type FleetReport,
  fleetExitCode,
  fleetJsonSchemaText,
  mergeReports,
  validateFleetReport,
} from "../src/fleet/index.js";
import { generateCluster } from "../src/gen/index.js";
import { scanPath } from "../src/node/scan-path.js";
import { toJsonReport } from "../src/report/json.js";
import { allEngines } from "./helpers/engines.js";
import { runCli } from "./helpers/cli.js";
import { trackedTempDir } from "./helpers/fixtures.js";

const NODES = ["node-0", "node-1", "node-2"];
const KEYS = {
  clean: "streams/1/topics/1/partitions/1",
  tornOnOne: "streams/1/topics/1/partitions/2",
  interiorOnOne: "streams/1/topics/2/partitions/1",
  lostEverywhere: "streams/1/topics/2/partitions/2",
  lagging: "streams/1/topics/3/partitions/1",
  divergent: "streams/1/topics/3/partitions/2",
  tornEverywhere: "streams/1/topics/4/partitions/1",
  cleanToo: "streams/1/topics/4/partitions/2",
};

let engines: Engine[] = [];
let dir = "";
beforeAll(async () => {
  engines = await allEngines();
  dir = trackedTempDir("segscan-fleet-");
  await generateCluster(join(dir, "cluster"), 3, { seed: 7 });
});

async function mergeScans(engine: Engine, verify: "tail" | "full"): Promise<FleetReport> {
  const reports = [];
  for (const name of NODES) {
    const report = toJsonReport(await scanPath(join(dir, "cluster", name), { engine, verify, replicaCount: 3 }));
    reports.push({ name, report });
  }
  return mergeReports(reports);
}

const byKey = (report: FleetReport, key: string): FleetPartition => report.partitions.find((p) => p.key === key)!;
const roles = (partition: FleetPartition) => partition.replicas.map((r) => r.role);

/** Everything but the nodes' engine/verify labels: what must not depend on the engine. */
const comparable = (report: FleetReport) => ({ partitions: report.partitions, metadata: report.metadata, summary: report.summary });

describe("fleet on gen --cluster 3, scanned by both engines", () => {
  for (const verify of ["tail", "full"] as const) {
    it(`every verdict (${verify === "full" ? "--deep" : "tail mode"}); both engines agree`, async () => {
      const merged = [];
      for (const engine of engines) merged.push(await mergeScans(engine, verify));
      for (const other of merged.slice(1)) expect(comparable(other)).toEqual(comparable(merged[0]!));
      const fleet = merged[0]!;
      expect(validateFleetReport(fleet)).toEqual([]);
      expect(fleet.partitions.map((p) => p.key)).toEqual(Object.values(KEYS).sort());

      expect(byKey(fleet, KEYS.clean).verdict).toBe("clean");
      expect(byKey(fleet, KEYS.cleanToo).verdict).toBe("clean");

      // A torn tail on node-1 that node-0 and node-2 hold whole: nothing lost, rebuild node-1 from node-0.
      const torn = byKey(fleet, KEYS.tornOnOne);
      expect(torn.verdict).toBe("degraded");
      expect(torn.lost).toEqual([]);
      expect(roles(torn)).toEqual(["in-sync", "damaged", "in-sync"]);
      expect(torn.replicas[1]!.cuts).toHaveLength(1);
      expect(torn.replicas[1]!.rebuildFrom).toBe("node-0");
      expect(BigInt(torn.replicas[1]!.missing[0]!.from)).toBe(BigInt(torn.replicas[1]!.cuts[0]!.fromOffset));

      // Interior damage on node-0, a clean copy on the others: rebuild node-0 from node-1 (a tie with node-2: node order).
      const interior = byKey(fleet, KEYS.interiorOnOne);
      expect(interior.verdict).toBe("degraded");
      expect(interior.lost).toEqual([]);
      expect(roles(interior)).toEqual(["damaged", "in-sync", "in-sync"]);
      expect(interior.replicas[0]!.refusals[0]!.code).toBe("InteriorDamage");
      expect(interior.replicas[0]!.rebuildFrom).toBe("node-1");

      // The same batch damaged everywhere: an exact range lost on every replica, nobody to rebuild from.
      const lost = byKey(fleet, KEYS.lostEverywhere);
      expect(lost.verdict).toBe("lost");
      const durable = lost.lost.filter((r) => r.kind === "durable");
      expect(durable).toHaveLength(1);
      expect(durable[0]!.openEnded).toBe(false);
      expect(durable[0]!.claimedBy.map((c) => c.node)).toEqual(NODES);
      expect(BigInt(durable[0]!.count)).toBe(BigInt(durable[0]!.to) - BigInt(durable[0]!.from) + 1n);
      for (const replica of lost.replicas) {
        expect(replica.rebuildFrom).toBeNull();
        expect(replica.unreadable[0]).toMatchObject({ from: durable[0]!.from, to: durable[0]!.to });
      }

      // node-2 ends early but cleanly: it lags, the cluster catches it up.
      const lagging = byKey(fleet, KEYS.lagging);
      expect(lagging.verdict).toBe("lagging");
      expect(roles(lagging)).toEqual(["in-sync", "in-sync", "lagging"]);
      expect(lagging.replicas[2]!.rebuildFrom).toBe("node-0");
      expect(BigInt(lagging.replicas[2]!.behind!)).toBe(BigInt(lagging.head!) - BigInt(lagging.replicas[2]!.head!));

      // node-1's last batch has other messages under the same offsets: every replica is clean, the cluster is split.
      const divergent = byKey(fleet, KEYS.divergent);
      expect(divergent.verdict).toBe("diverged");
      expect(divergent.replicas.every((r) => r.verdict === "clean")).toBe(true);
      expect(divergent.divergence).toHaveLength(1);
      expect(divergent.divergence[0]!.kind).toBe("last-batch");
      expect(new Set(divergent.divergence[0]!.replicas.map((r) => r.checksum)).size).toBe(2);

      // The same torn tail everywhere: never acknowledged; the group offset stored at the old end is past every head.
      const tornAll = byKey(fleet, KEYS.tornEverywhere);
      expect(tornAll.verdict).toBe("degraded");
      expect(tornAll.lost.filter((r) => r.kind === "durable")).toEqual([]);
      // One group's offset, stored on every node: one entry, counted once.
      expect(tornAll.offsetsAhead).toHaveLength(1);
      expect(tornAll.offsetsAhead[0]!.nodes.map((o) => o.node)).toEqual(NODES);
      for (const ahead of tornAll.offsetsAhead) {
        expect(ahead.kind).toBe("group");
        expect(BigInt(ahead.reminted)).toBe(BigInt(ahead.offset) - BigInt(tornAll.head!));
      }

      // The metadata plane: ops 52..55 committed, every WAL lost them; node-2 in another cluster; node-0 and node-1 both replica 0.
      expect(fleet.metadata.highestCommitted).toBe("55");
      expect(fleet.metadata.opsLost).toEqual({ from: "52", to: "55", count: "4" });
      expect(fleet.metadata.nodes.map((n) => [n.replicaId, n.replicaCount, n.heldOp])).toEqual([
        [0, 3, "51"],
        [0, 3, "51"],
        [2, 3, "51"],
      ]);
      expect(fleet.metadata.identityConflicts.map((c) => [c.code, c.nodes])).toEqual([
        ["ClusterMismatch", ["node-2"]],
        ["DuplicateReplicaId", ["node-0", "node-1"]],
      ]);

      expect(fleet.summary).toMatchObject({ partitions: 8, clean: 2, lagging: 1, degraded: 3, lost: 1, diverged: 1, failed: 0 });
      expect(fleet.summary.lostOffsets).toBe(durable[0]!.count);
      expect(fleetExitCode(fleet.summary)).toBe(4);
    });
  }

  it("a cluster whose faults lose nothing exits 0: a torn tail held elsewhere, interior damage with a clean copy, a lagging replica", async () => {
    const clean = join(dir, "benign");
    await generateCluster(clean, 3, { seed: 9, faults: ["torn-on-one", "interior-on-one", "lagging"] });
    const reports = [];
    for (const name of NODES) reports.push({ name, report: toJsonReport(await scanPath(join(clean, name), { engine: engines[0]! })) });
    const fleet = await mergeReports(reports);
    expect(fleet.summary).toMatchObject({ partitions: 4, clean: 1, lagging: 1, degraded: 2, lost: 0, diverged: 0, identityConflicts: 0 });
    expect(fleet.metadata.opsLost).toBeNull();
    expect(fleetExitCode(fleet.summary)).toBe(0);
  });
});

describe("segscan fleet (CLI) on --ndjson reports", () => {
  let files: string[] = [];
  beforeAll(async () => {
    files = [];
    for (const name of NODES) {
      const run = await runCli(["scan", join(dir, "cluster", name), "--replicas", "3", "--ndjson"]);
      expect(run.code).toBe(4);
      const file = join(dir, `${name}.ndjson`);
      writeFileSync(file, run.stdout);
      files.push(file);
    }
  });
  const labelled = () => NODES.map((name, i) => `${name}=${files[i]}`);

  it("text: the verdict first, the cluster's problems, one block per partition not clean everywhere, the summary last; exit 4", async () => {
    const run = await runCli(["fleet", ...labelled()]);
    expect(run.code).toBe(4);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toBe(
      "verdict DIVERGED · 3 nodes, 8 partitions: 1 diverged, 1 lost, 3 degraded, 1 lagging, 2 clean · 4 committed ops lost, 2 identity conflicts",
    );
    expect(run.stdout).toContain("segscan fleet: 3 nodes (node-0, node-1, node-2), 8 partitions");
    expect(run.stdout).toContain("partitions: 2 clean, 1 lagging, 3 degraded, 0 unknown, 1 lost, 1 diverged, 0 failed");
    expect(run.stdout).toContain("ops 52..55 (4) were committed (commit_max on node-0, node-1, node-2) and no node that boots holds them");
    const headlines = lines.filter((line) => line.startsWith("streams/"));
    expect(headlines.map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      [KEYS.tornOnOne, "degraded"],
      [KEYS.interiorOnOne, "degraded"],
      [KEYS.lostEverywhere, "lost"],
      [KEYS.lagging, "lagging"],
      [KEYS.divergent, "diverged"],
      [KEYS.tornEverywhere, "degraded"],
    ]);
    expect(run.stdout).toContain("node-1 repairable: torn tail cut from");
    expect(run.stdout).toMatch(/→ rebuild from node-0/);
    // Problems first: the metadata plane's findings precede every partition, the summary follows them.
    expect(run.stdout.indexOf("ClusterMismatch")).toBeLessThan(run.stdout.indexOf(KEYS.tornOnOne));
    expect(run.stdout.indexOf("segscan fleet: 3 nodes")).toBeGreaterThan(run.stdout.indexOf(KEYS.tornEverywhere));
  });

  it("--json validates against the fleet schema and equals the library merge of the --json reports", async () => {
    const run = await runCli(["fleet", ...labelled(), "--json"]);
    expect(run.code).toBe(4);
    const fleet = JSON.parse(run.stdout) as FleetReport;
    expect(validateFleetReport(fleet)).toEqual([]);
    expect(fleet.nodes.map((n) => [n.name, n.format, n.partitions])).toEqual(NODES.map((name) => [name, "ndjson", 8]));
    const wasm = engines.find((engine) => engine.kind === "wasm")!;
    expect(comparable(fleet)).toEqual(comparable(await mergeScans(wasm, "tail")));
  });

  it("--json: the cluster's verdict, and next steps that name the node, the odd replica out, and commands that run", async () => {
    const run = await runCli(["fleet", ...labelled(), "--json"]);
    const fleet = JSON.parse(run.stdout) as FleetReport;
    expect(fleet.verdict).toBe("diverged");
    const root = (name: string) => join(dir, "cluster", name);

    // Lost on every replica: salvage the replica holding the most, rebuild the others from it, or restore a backup.
    const lost = byKey(fleet, KEYS.lostEverywhere);
    expect(lost.nextSteps.map((step) => [step.about, step.node, step.argv?.slice(0, 2) ?? null])).toEqual([
      ["lost", "node-0", ["segscan", "salvage"]],
      ["lost", null, null],
      ["lost", null, null],
    ]);
    expect(lost.nextSteps[0]!.argv).toEqual(["segscan", "salvage", join(root("node-0"), KEYS.lostEverywhere), "--apply"]);
    expect(lost.nextSteps[1]!.text).toMatch(/^then rebuild node-1 and node-2 from node-0; first copy node-1 and node-2's partition dirs/);
    expect(lost.nextSteps[2]!.text).toMatch(/^or restore this partition from a backup that holds \d+\.\.\d+$/);
    // The salvage's dry run (the command without --apply) runs and prints its plan.
    const dry = await runCli(lost.nextSteps[0]!.argv!.slice(1, -1));
    expect(dry.code, dry.stderr).toBe(4);
    expect(dry.stdout).toContain("Salvage plan");

    // A split brain: node-1 is the odd one out (node-0 and node-2 agree), checksums in hex; look at its batch, rebuild it.
    const divergent = byKey(fleet, KEYS.divergent);
    expect(divergent.divergence[0]!.odd).toEqual(["node-1"]);
    expect(divergent.divergence[0]!.majority!.nodes).toEqual(["node-0", "node-2"]);
    expect(divergent.divergence[0]!.message).toMatch(
      /node-1 is the odd one out \(node-1 0x[0-9a-f]{16} against node-0, node-2 0x[0-9a-f]{16}\)/,
    );
    expect(divergent.replicas.map((r) => r.role)).toEqual(["in-sync", "diverged", "in-sync"]);
    const look = divergent.nextSteps[0]!;
    expect(look).toMatchObject({ about: "diverged", node: "node-1" });
    expect(look.text).toContain("then rebuild node-1's replica from node-0");
    const dump = await runCli(look.argv!.slice(1));
    expect(dump.code, dump.stderr).toBe(0);
    expect(dump.stdout).toContain(`baseOffset: ${divergent.divergence[0]!.offset}`);

    // The metadata plane: each finding has a next step; cluster ids in hex.
    const steps = (about: string) => fleet.nextSteps.filter((step) => step.about === about);
    expect(steps("OpsLost")).toHaveLength(1);
    expect(steps("OpsLost")[0]!.text).toContain("restore metadata/ on one node from a backup that holds op 55");
    expect(steps("ClusterMismatch").map((step) => [step.node, step.argv])).toEqual([
      ["node-2", ["segscan", "scan", root("node-2"), "--replicas", "3", "--ndjson"]],
    ]);
    expect(steps("ClusterMismatch")[0]!.text).toMatch(
      /^node-2 is the odd one out \(cluster 0x[0-9a-f]{32}; node-0 and node-1 record 0x[0-9a-f]{32}\)/,
    );
    expect(fleet.metadata.identityConflicts[0]!.message).toMatch(/node-2 \(cluster 0x[0-9a-f]{32}\) belongs to another cluster/);
    expect(steps("DuplicateReplicaId")[0]!.text).toContain("node-0 and node-1 claim replica id 0 and no node claims 1");
    expect(fleet.warnings).toEqual([]);
  });

  it("--html writes one page: a row per partition not clean everywhere, a lane per replica, the lost range marked", async () => {
    const page = join(dir, "fleet.html");
    const run = await runCli(["fleet", ...labelled(), "--html", page]);
    expect(run.code).toBe(4);
    const html = readFileSync(page, "utf8");
    expect(html.match(/<section class="part"/g)).toHaveLength(6);
    expect(html.match(/class="lane"/g)).toHaveLength(18);
    expect(html).toMatch(/data-lost="\d+\.\.\d+"/);
    expect(html).toContain("2 partition(s) clean on every replica are not drawn");
  });

  it("labels default to each report's node root; the same root twice is a usage error (16) asking for name=path", async () => {
    const unlabelled = await runCli(["fleet", ...files, "--json"]);
    expect(unlabelled.code).toBe(4);
    expect((JSON.parse(unlabelled.stdout) as FleetReport).nodes.map((n) => n.name)).toEqual(
      NODES.map((name) => join(dir, "cluster", name)),
    );
    const twice = await runCli(["fleet", files[0]!, files[0]!]);
    expect(twice.code).toBe(16);
    expect(twice.stderr).toContain("name=path");
  });

  it("a malformed report, one of another version, a truncated one and a missing one: exit 8, the message names the file", async () => {
    const lines = readFileSync(files[0]!, "utf8").trimEnd().split("\n");
    const bad = join(dir, "bad.ndjson");
    writeFileSync(bad, [lines[0]!.replace('"verdict":"clean"', '"verdict":"fine"'), ...lines.slice(1)].join("\n"));
    const version = join(dir, "old.ndjson");
    writeFileSync(version, [...lines.slice(0, -1), lines.at(-1)!.replace(/"segscan":"[^"]*"/, '"segscan":"0.9.0"')].join("\n"));
    const truncated = join(dir, "short.ndjson");
    writeFileSync(truncated, [...lines.slice(0, 2), ...lines.slice(3)].join("\n"));
    const garbage = join(dir, "garbage.json");
    writeFileSync(garbage, "{not json");
    for (const [file, words] of [
      [bad, "line 1: $.verdict"],
      [version, "written by segscan 0.9.0"],
      [truncated, "disagree with its summary"],
      [garbage, "is not JSON"],
      [join(dir, "absent.ndjson"), "ENOENT"],
    ] as const) {
      const run = await runCli(["fleet", `a=${files[1]}`, `b=${file}`]);
      expect(run.code, file).toBe(8);
      expect(run.stderr).toContain(file);
      expect(run.stderr).toContain(words);
    }
  });

  it("--help documents the exit status", async () => {
    const run = await runCli(["fleet", "--help"]);
    expect(run.stdout).toContain("data lost on every replica");
    expect(run.stdout).toMatch(/16\s+usage error/);
  });
});

describe("gen --cluster (CLI)", () => {
  it("writes N node roots; --list shows the cluster faults; bad combinations are usage errors (16)", async () => {
    const target = join(dir, "cli-cluster");
    const run = await runCli(["gen", target, "--cluster", "2", "--cluster-fault", "lagging", "--json"]);
    expect(run.code).toBe(0);
    const written = JSON.parse(run.stdout) as { nodes: { name: string }[]; faults: { name: string; expected: { verdict: string } }[] };
    expect(written.nodes.map((n) => n.name)).toEqual(["node-0", "node-1"]);
    expect(written.faults.map((f) => [f.name, f.expected.verdict])).toEqual([["lagging", "lagging"]]);
    const list = await runCli(["gen", "--list"]);
    for (const name of ["torn-on-one", "lost-everywhere", "divergent", "identity-mismatch", "metadata-ops-lost"])
      expect(list.stdout).toContain(name);
    for (const args of [
      ["gen", join(dir, "x1"), "--cluster", "3", "--cluster-fault", "nope"],
      ["gen", join(dir, "x2"), "--cluster", "3", "--scenario", "torn-tail"],
      ["gen", join(dir, "x3"), "--cluster-fault", "lagging"],
      ["gen", join(dir, "x4"), "--cluster", "1"],
    ]) {
      const bad = await runCli(args);
      expect(bad.code, args.join(" ")).toBe(16);
    }
  });
});

describe("mergeReports (library)", () => {
  it("refuses a report that is not one, or of another version, naming it", async () => {
    const report = toJsonReport(await scanPath(join(dir, "cluster", "node-0"), { engine: engines[0]! }));
    await expect(
      mergeReports([
        { name: "a", report },
        { name: "b", report: { ...report, segscan: "0.1.0" } },
      ]),
    ).rejects.toThrow(/b was written by segscan 0\.1\.0/);
    const broken = { ...report, summary: { ...report.summary, partitions: 99 } };
    await expect(
      mergeReports([
        { name: "a", report },
        { name: "b", report: broken },
      ]),
    ).rejects.toThrow(/b is not a `segscan scan --json`.*summary\.partitions/);
  });
});

it("docs/fleet.schema.json is what the schema writes (npm run schema)", () => {
  expect(readFileSync(new URL("../docs/fleet.schema.json", import.meta.url), "utf8")).toBe(fleetJsonSchemaText());
});
