/**
 * Several paths never drop the node checks (docs/node.md N0, docs/interfaces.md
 * §9.2): `scan nodeA nodeB`, a dir holding node roots, a node root plus a
 * partition (in either order) give every node root its own node section in
 * the text, `--json`, `--ndjson` and the HTML data, and every one counts in
 * the one verdict and the exit status. Where that cannot be (nested node
 * roots, `repair` of several node roots) the CLI refuses with a usage error.
 * Through the BUILT CLI, on node roots written by `segscan gen`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { scanIter, scanPath } from "../src/node/scan-path.js";
import { planRepair } from "../src/repair/index.js";
import type { JsonScanReport } from "../src/report/json.js";
import { validateJsonReport, validateNdjsonReport } from "../src/report/json-validate.js";
import { type Run, runCli } from "./helpers/cli.js";

let root: string;
/** A node root whose snapshot.bin is corrupt: scanned alone, REFUSED (exit 4). */
let corrupt: string;
/** A clean node root of the same shape. */
let clean: string;
/** The dir holding both. */
let cluster: string;

const partitionOf = (node: string, topic: number, partition: number): string =>
  join(node, "streams", "1", "topics", String(topic), "partitions", String(partition));

function json(run: Run): JsonScanReport {
  const parsed = JSON.parse(run.stdout) as unknown;
  expect(validateJsonReport(parsed)).toEqual([]);
  return parsed as JsonScanReport;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-cli-node-roots-"));
  cluster = join(root, "cluster");
  corrupt = join(cluster, "node-a");
  clean = join(cluster, "node-b");
  const [a, b] = await Promise.all([
    runCli(["gen", corrupt, "--size", "tiny", "--node-fault", "snapshot-corrupt"]),
    runCli(["gen", clean, "--size", "tiny", "--node"]),
  ]);
  expect([a.code, b.code]).toEqual([0, 0]);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe.concurrent("every node root gets its node section and counts in the verdict", () => {
  it("alone, the corrupt node root is REFUSED (exit 4)", async () => {
    const run = await runCli(["scan", corrupt, "--json"]);
    expect(run.code).toBe(4);
    expect(json(run).node?.verdict).toBe("refused");
  });

  for (const [name, paths] of [
    ["two node roots given", () => [corrupt, clean]],
    ["the clean one first", () => [clean, corrupt]],
    ["a dir holding both (found by discovery)", () => [cluster]],
  ] as const) {
    it(`${name}: text, --json and --ndjson carry both node sections; verdict REFUSED, exit 4`, async () => {
      const given = paths();
      const [text, full, lines] = await Promise.all([
        runCli(["scan", ...given]),
        runCli(["scan", ...given, "--json"]),
        runCli(["scan", ...given, "--ndjson"]),
      ]);
      for (const run of [text, full, lines]) expect(run.code, run.stderr).toBe(4);
      expect(text.stdout.split("\n")[0]).toBe("verdict REFUSED");
      expect(text.stdout).toContain(`node ${corrupt}  REFUSED`);
      expect(text.stdout).toContain(`node ${clean}  CLEAN`);
      expect(text.stdout).toMatch(/refused +SnapshotCorrupt metadata\/snapshot\.bin/);

      const report = json(full);
      expect(report.verdict).toBe("refused");
      expect(report.node).toBeUndefined();
      const byPath = Object.fromEntries((report.nodes ?? []).map((node) => [node.path, node.verdict]));
      expect(byPath).toEqual({ [corrupt]: "refused", [clean]: "clean" });
      expect(report.partitions).toHaveLength(4);

      const parsed = lines.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown> & { path?: string; node?: { path: string } });
      // docs/interfaces.md §9.3: each line checked against its schema by its type, and the lines together as a report.
      expect(validateNdjsonReport(parsed)).toEqual([]);
      const last = parsed.at(-1) as { type: string; verdict: string; nodes?: { path: string; verdict: string }[] };
      expect(last.type).toBe("summary");
      expect(last.verdict).toBe("refused");
      expect(Object.fromEntries((last.nodes ?? []).map((node) => [node.path, node.verdict]))).toEqual(byPath);
      // Each partition line carries its own node's entry for its dir, whichever node it lies under.
      for (const line of parsed.slice(0, -1)) expect(line.node?.path).toBe(line.path);
    });
  }

  it("--html: the page's data holds both node sections and the one verdict", async () => {
    const page = join(root, "two-nodes.html");
    const run = await runCli(["scan", corrupt, clean, "--html", page]);
    expect(run.code).toBe(4);
    const html = readFileSync(page, "utf8");
    const match = /<script type="application\/json" id="segscan-data"( data-encoding="gzip\+base64")?>([^<]*)<\/script>/.exec(html);
    expect(match).not.toBeNull();
    const data = JSON.parse(match![1] ? gunzipSync(Buffer.from(match![2]!, "base64")).toString("utf8") : match![2]!) as JsonScanReport;
    expect(data.verdict).toBe("refused");
    expect(data.nodes?.map((node) => node.path)).toEqual([corrupt, clean]);
  });

  it("a node root plus a partition of another node: the node root keeps its section (REFUSED, exit 4)", async () => {
    const run = await runCli(["scan", partitionOf(clean, 1, 1), corrupt, "--json"]);
    expect(run.code).toBe(4);
    const report = json(run);
    expect(report.node?.path).toBe(corrupt);
    expect(report.partitions.map((partition) => partition.path)).toContain(partitionOf(clean, 1, 1));
  });

  it("a partition of a node root given before the node root: the same node section as the node root alone", async () => {
    const [alone, both] = await Promise.all([
      runCli(["scan", clean, "--json", "--concurrency", "1"]),
      runCli(["scan", partitionOf(clean, 1, 2), clean, "--json", "--concurrency", "1"]),
    ]);
    expect(both.code).toBe(0);
    expect(json(both).node).toEqual(json(alone).node);
    expect(json(both).partitions.map((partition) => partition.path)).toEqual(json(alone).partitions.map((partition) => partition.path));
  });

  it("repair given several node roots is a usage error naming one command per root; nothing is planned", async () => {
    const run = await runCli(["repair", corrupt, clean]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`segscan repair ${corrupt}; segscan repair ${clean}`);
    expect(run.stdout).toBe("");
  });

  it("fleet refuses a report of several node roots (it merges one node per report), never merging them as one replica", async () => {
    const json = join(root, "two-nodes.json");
    const ndjson = join(root, "two-nodes.ndjson");
    const [full, lines] = await Promise.all([runCli(["scan", corrupt, clean, "--json"]), runCli(["scan", corrupt, clean, "--ndjson"])]);
    writeFileSync(json, full.stdout);
    writeFileSync(ndjson, lines.stdout);
    for (const report of [json, ndjson]) {
      const run = await runCli(["fleet", report]);
      expect(run.code).toBe(8);
      expect(run.stderr).toContain("covers 2 node roots");
    }
  });

  it("the library: scanPath and scanIter give `nodes`; planRepair refuses a report of several node roots", async () => {
    const report = await scanPath([corrupt, clean], { concurrency: 1 });
    expect(report.nodes?.map((node) => [node.path, node.verdict])).toEqual([
      [corrupt, "refused"],
      [clean, "clean"],
    ]);
    expect(report.node).toBeUndefined();
    const iterator = scanIter([cluster], { concurrency: 1 });
    let next = await iterator.next();
    while (!next.done) next = await iterator.next();
    expect(next.value.nodes?.map((node) => node.path)).toEqual([corrupt, clean]);
    await expect(planRepair(report)).rejects.toThrow(/2 node roots .*plan each node root on its own/);
  });
});

describe("combinations that cannot be honoured are usage errors", () => {
  it("node roots nested one inside the other: exit 16, never a scan without the inner node's checks", async () => {
    const outer = join(root, "nested");
    expect((await runCli(["gen", outer, "--size", "tiny", "--node"])).code).toBe(0);
    // A stream dir holding metadata/: a node root inside the outer one's streams/ tree.
    mkdirSync(join(outer, "streams", "1", "metadata"));
    const run = await runCli(["scan", outer]);
    expect(run.code).toBe(16);
    expect(run.stderr).toMatch(/nested one inside the other/);
  });
});
