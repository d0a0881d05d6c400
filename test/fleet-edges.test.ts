/**
 * The cluster view never says clean over what it was shown (docs/fleet.md):
 * adversarial reproductions on real clusters (`gen --cluster`, scanned by the
 * built CLI) and synthetic reports, each in temp dirs. A salvage's forward gap
 * is not held; a node root whose path holds a line terminator is merged; a
 * partition line that names no partition, a report that does not cover a
 * partition and a failed replica are unknown, never clean, never "lost on
 * every replica" unless every replica was judged; the next steps are real
 * commands that run; NDJSON reports with padding, a `type` per line or a node
 * line read as fleet reads them (and `segscan report` draws them); a report too
 * large to read whole says so.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync, writeSync, ftruncateSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { FleetPartition, FleetReport } from "../src/fleet/index.js";
import { MAX_TEXT_BYTES, validateFleetReport } from "../src/fleet/index.js";
import { generateCluster } from "../src/gen/index.js";
import { CLI, runCli } from "./helpers/cli.js";
import { trackedTempDir } from "./helpers/fixtures.js";
import { failedPartitionJson, ndjsonReportText, partitionJson } from "./helpers/fleet-reports.js";

const KEY2 = "streams/1/topics/1/partitions/2";

async function scanTo(file: string, path: string, replicas: number | null): Promise<void> {
  const run = await runCli(["scan", path, "--ndjson", ...(replicas === null ? [] : ["--replicas", String(replicas)])]);
  expect(run.code === 0 || run.code === 1 || run.code === 4 || run.code === 5, run.stderr).toBe(true);
  writeFileSync(file, run.stdout);
}

async function fleetJson(args: readonly string[]): Promise<{ code: number | null; report: FleetReport }> {
  const run = await runCli(["fleet", ...args, "--json"]);
  const report = JSON.parse(run.stdout) as FleetReport;
  expect(validateFleetReport(report)).toEqual([]);
  return { code: run.code, report };
}

const byKey = (report: FleetReport, key: string): FleetPartition => report.partitions.find((p) => p.key === key)!;

describe("a salvage's forward gap is not held by the salvaged replica", () => {
  it("three replicas lose one range; node-0 is salvaged and rescanned: still lost, exit 4, node-0 holds none of it", async () => {
    const dir = trackedTempDir("segscan-fleet-salvage-");
    await generateCluster(join(dir, "c"), 3, { faults: ["lost-everywhere"] });
    const files = [0, 1, 2].map((n) => join(dir, `n${n}.ndjson`));
    for (const n of [0, 1, 2]) await scanTo(files[n]!, join(dir, "c", `node-${n}`), 3);
    const before = await fleetJson(files.map((file, n) => `n${n}=${file}`));
    const lostBefore = byKey(before.report, KEY2).lost.filter((r) => r.kind === "durable");
    expect(before.code).toBe(4);
    expect(lostBefore).toHaveLength(1);

    const salvage = await runCli(["salvage", join(dir, "c", "node-0", KEY2), "--apply"]);
    expect(salvage.code, salvage.stderr).toBe(1);
    await scanTo(files[0]!, join(dir, "c", "node-0"), 3);
    const gaps = readFileSync(files[0]!, "utf8").match(/"gaps":\[\{[^\]]*\]/g) ?? [];
    expect(gaps).toHaveLength(1);

    const after = await fleetJson(files.map((file, n) => `n${n}=${file}`));
    expect(after.code).toBe(4);
    const partition = byKey(after.report, KEY2);
    expect(partition.verdict).toBe("lost");
    const lost = partition.lost.filter((r) => r.kind === "durable");
    expect(lost.map((r) => [r.from, r.to])).toEqual(lostBefore.map((r) => [r.from, r.to]));
    expect(lost[0]!.claimedBy).toContainEqual({ node: "n0", as: "ForwardGap" });
    const n0 = partition.replicas[0]!;
    for (const range of n0.proven) expect(BigInt(range.to) < BigInt(lost[0]!.from) || BigInt(range.from) > BigInt(lost[0]!.to)).toBe(true);
    const text = await runCli(["fleet", ...files.map((file, n) => `n${n}=${file}`)]);
    expect(text.code).toBe(4);
    expect(text.stdout).not.toContain("nothing lost");
    expect(text.stdout).toContain(`lost on every replica: ${lost[0]!.from}..${lost[0]!.to}`);
    expect(text.stdout).toMatch(/keep n0's replica, which holds the most .* its forward gaps skip/);
  }, 120_000);
});

describe("partition identity and coverage", () => {
  it("a node root whose path holds CR and LF is merged (not 'every partition is clean'); the commands quote it and run", async () => {
    const dir = trackedTempDir("segscan-fleet-crlf-");
    const cluster = join(dir, "odd\r\nname");
    await generateCluster(cluster, 3, { faults: ["lost-everywhere"] });
    const files = [0, 1, 2].map((n) => join(dir, `n${n}.ndjson`));
    for (const n of [0, 1, 2]) await scanTo(files[n]!, join(cluster, `node-${n}`), 3);
    const { code, report } = await fleetJson(files.map((file, n) => `n${n}=${file}`));
    expect(code).toBe(4);
    expect(report.summary).toMatchObject({ partitions: 2, lost: 1, unidentified: 0 });
    expect(report.verdict).toBe("lost");
    const salvage = byKey(report, KEY2).nextSteps.find((step) => step.argv?.[1] === "salvage")!;
    expect(salvage.node).toBe("n0");
    expect(salvage.argv).toEqual(["segscan", "salvage", join(cluster, "node-0", KEY2), "--apply"]);
    expect(salvage.command).toContain("$'");
    // The shell-quoted command runs as given: bash reads back the path with its CR and LF.
    const ran = spawnSync(
      "bash",
      ["-c", salvage.command!.replace(/^segscan /, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} `)],
      {
        encoding: "utf8",
      },
    );
    expect(ran.status, ran.stderr).toBe(1);
    expect(ran.stdout).toContain("re-scan: the salvaged partition is clean now");
    const text = await runCli(["fleet", ...files.map((file, n) => `n${n}=${file}`)]);
    expect(text.stdout).not.toContain("every partition is clean");
    expect(text.stdout).toContain("odd\\x0d\\x0aname");
    expect(text.stdout.split("\n").filter((line) => line.startsWith("name/")).length).toBe(0);
  }, 120_000);

  it("a partition line that names no partition is not merged: never clean, exit 8, the text says how many", async () => {
    const dir = trackedTempDir("segscan-fleet-unidentified-");
    const clean = [{ start: 0n, end: 99n, outcome: "clean" as const }];
    const a = join(dir, "a.ndjson");
    const b = join(dir, "b.ndjson");
    writeFileSync(a, ndjsonReportText([partitionJson(`/a/${KEY2}`, clean)]));
    writeFileSync(b, ndjsonReportText([partitionJson("/b/copy-of-p2", clean), partitionJson(`/b/${KEY2}`, clean)]));
    const { code, report } = await fleetJson([`a=${a}`, `b=${b}`]);
    expect(code).toBe(8);
    expect(report.summary).toMatchObject({ partitions: 1, clean: 1, unidentified: 1 });
    expect(report.verdict).toBe("unknown");
    expect(report.nodes.map((n) => n.unidentified)).toEqual([0, 1]);
    const text = await runCli(["fleet", `a=${a}`, `b=${b}`]);
    expect(text.code).toBe(8);
    expect(text.stdout.split("\n")[0]).toBe("verdict UNKNOWN · 2 nodes, 1 partition: 1 clean · 1 partition line not merged");
    expect(text.stdout).toContain("1 partition line name no partition: not merged, not judged");
    expect(text.stdout).not.toContain("every partition is clean");
  }, 60_000);

  it("a report that does not cover a partition: unknown, not 'no such partition'; lost only on every replica judged (1 of 2)", async () => {
    const dir = trackedTempDir("segscan-fleet-cover-");
    await generateCluster(join(dir, "c"), 2, { faults: ["torn-on-one", "interior-on-one"] });
    const n0 = join(dir, "n0.ndjson");
    const n1 = join(dir, "n1.ndjson");
    await scanTo(n0, join(dir, "c", "node-0"), 2);
    // node-1 scanned only under streams/1/topics/1, and without --replicas.
    await scanTo(n1, join(dir, "c", "node-1", "streams", "1", "topics", "1"), null);
    const { code, report } = await fleetJson([`node-0=${n0}`, `node-1=${n1}`]);
    expect(code).toBe(4 | 8);
    const key = "streams/1/topics/2/partitions/1";
    const partition = byKey(report, key);
    expect(partition.replicas.map((r) => r.role)).toEqual(["damaged", "unknown"]);
    expect(partition.replicas[1]!.rebuildFrom).toBeNull();
    expect(partition.judged).toEqual({ replicas: 1, of: 2 });
    expect(partition.verdict).toBe("lost");
    const first = partition.nextSteps[0]!;
    expect(first).toMatchObject({ about: "unknown", node: "node-1" });
    expect(first.argv).toEqual(["segscan", "scan", join(dir, "c", "node-1", key), "--replicas", "2"]);
    // Salvaging node-0 waits on node-1's scan: it may hold what node-0 lacks.
    expect(partition.nextSteps[1]!.text).toMatch(
      /^if node-1 holds none of [\d.,]+ either: stop iggy-server on node-0, then salvage its replica/,
    );
    expect(report.summary.lostOffsetsNotAllJudged).toBe(report.summary.lostOffsets);
    expect(report.nodes.map((n) => [n.coversRoot, n.replicas])).toEqual([
      [true, 2],
      [false, 1],
    ]);
    // node-1 was scanned for a solo copy: fleet warns, and says how to scan it again.
    expect(report.warnings.join("\n")).toContain("node-1's report was scanned with --replicas 1, but the cluster has 2 replicas");
    const rescan = report.nextSteps.find((step) => step.about === "replicas")!;
    expect(rescan.argv).toEqual(["segscan", "scan", join(dir, "c", "node-1"), "--replicas", "2", "--ndjson"]);
    expect(report.nextSteps.find((step) => step.about === "unknown")!.text).toContain("lacks 2 partitions other reports have");

    const text = await runCli(["fleet", `node-0=${n0}`, `node-1=${n1}`]);
    expect(text.code).toBe(12);
    expect(text.stdout).not.toContain("has no such partition");
    expect(text.stdout).not.toMatch(/ lost on every replica:/);
    expect(text.stdout).toContain("lost on every replica that could be judged (1 of 2)");
    expect(text.stdout).toContain("node-1: not covered by its report (not of its node root): what it holds is unknown");
  }, 120_000);
});

describe("failed replicas", () => {
  const dir = trackedTempDir("segscan-fleet-failed-");
  const clean = [{ start: 0n, end: 99n, outcome: "clean" as const }];
  const damaged = [
    { start: 0n, end: 49n, outcome: "refused" as const, refusal: "InteriorDamage" as const },
    { start: 60n, end: 99n, outcome: "clean" as const },
  ];

  it("one failed replica beside two clean ones: never 'every partition is clean'; exit 8", async () => {
    const files = ["a", "b", "c"].map((n) => join(dir, `${n}.ndjson`));
    writeFileSync(files[0]!, ndjsonReportText([partitionJson(`/a/${KEY2}`, clean)]));
    writeFileSync(files[1]!, ndjsonReportText([partitionJson(`/b/${KEY2}`, clean)]));
    writeFileSync(files[2]!, ndjsonReportText([failedPartitionJson(`/c/${KEY2}`)]));
    const run = await runCli(["fleet", ...files.map((file, i) => `${"abc"[i]}=${file}`)]);
    expect(run.code).toBe(8);
    expect(run.stdout.split("\n")[0]).toMatch(/^verdict FAILED/);
    expect(run.stdout).not.toContain("every partition is clean");
    expect(run.stdout).toContain("1 replica could not be judged (a failed scan): what they hold is unknown");
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "→ not everything could be judged (1 replica failed): what those hold is unknown: see the next steps above; nothing was changed",
    );
    expect(run.stdout).toContain("c's scan of this partition failed (ReadFailure: EIO: i/o error, read)");
    expect(run.stdout).toContain(`segscan scan /c/${KEY2} --replicas 3`);
  });

  it("a failed replica beside loss on the others: lost on every replica that could be judged (2 of 3), exit 12", async () => {
    const files = ["a", "b", "c"].map((n) => join(dir, `l${n}.ndjson`));
    writeFileSync(files[0]!, ndjsonReportText([partitionJson(`/a/${KEY2}`, damaged)]));
    writeFileSync(files[1]!, ndjsonReportText([partitionJson(`/b/${KEY2}`, damaged)]));
    writeFileSync(files[2]!, ndjsonReportText([failedPartitionJson(`/c/${KEY2}`)]));
    const run = await runCli(["fleet", ...files.map((file, i) => `${"abc"[i]}=${file}`)]);
    expect(run.code).toBe(12);
    expect(run.stdout).toContain("10 offsets lost on every replica that could be judged (2 of 3): 50..59");
    expect(run.stdout).not.toMatch(/lost on every replica[:;]/);
    expect(run.stdout).not.toContain("data is lost on every replica;");
  });
});

describe("NDJSON reports: padding, typed lines, a node line, a report too large to read whole", () => {
  let dir = "";
  let files: string[] = [];
  let reference: FleetReport;
  beforeAll(async () => {
    dir = trackedTempDir("segscan-fleet-ndjson-");
    await generateCluster(join(dir, "c"), 2, { faults: ["torn-on-one"] });
    files = [0, 1].map((n) => join(dir, `n${n}.ndjson`));
    for (const n of [0, 1]) await scanTo(files[n]!, join(dir, "c", `node-${n}`), 2);
    reference = (await fleetJson([`n0=${files[0]}`, `n1=${files[1]}`])).report;
  }, 120_000);

  const withoutFiles = (report: FleetReport) => ({ ...report, nodes: report.nodes.map(({ file: _file, ...node }) => node) });

  it("a report ending in 1 MiB of newlines (and one in CR LF and spaces) merges as the unpadded one", async () => {
    const padded = join(dir, "padded.ndjson");
    writeFileSync(padded, readFileSync(files[1]!, "utf8") + "\n".repeat(1024 * 1024));
    const crlf = join(dir, "crlf.ndjson");
    writeFileSync(crlf, readFileSync(files[1]!, "utf8").replaceAll("\n", "\r\n") + " \r\n".repeat(40_000));
    for (const file of [padded, crlf]) {
      const { code, report } = await fleetJson([`n0=${files[0]}`, `n1=${file}`]);
      expect(code, file).toBe(0);
      expect(withoutFiles(report)).toEqual(withoutFiles(reference));
    }
  }, 60_000);

  it("lines with a `type`, and the node section on a line of its own (first, or before the summary line), merge the same", async () => {
    const lines = readFileSync(files[1]!, "utf8").trimEnd().split("\n");
    const summary = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    const partitions = lines.slice(0, -1).map((line) => ({ type: "partition", ...(JSON.parse(line) as object) }));
    const { node, ...rest } = summary;
    const variants = {
      typed: [...partitions, { type: "summary", ...summary }],
      nodeLast: [...partitions, { type: "node", ...(node as object) }, { type: "summary", ...rest }],
      nodeFirst: [{ type: "node", ...(node as object) }, ...partitions, { type: "summary", ...rest }],
    };
    for (const [name, variant] of Object.entries(variants)) {
      const file = join(dir, `${name}.ndjson`);
      writeFileSync(file, variant.map((value) => `${JSON.stringify(value)}\n`).join(""));
      const { code, report } = await fleetJson([`n0=${files[0]}`, `n1=${file}`]);
      expect(code, name).toBe(0);
      expect(withoutFiles(report), name).toEqual(withoutFiles(reference));
    }
    const unknownType = join(dir, "unknown-type.ndjson");
    writeFileSync(unknownType, [{ type: "mystery" }, ...variants.typed].map((value) => `${JSON.stringify(value)}\n`).join(""));
    const run = await runCli(["fleet", `n0=${files[0]}`, `n1=${unknownType}`]);
    expect(run.code).toBe(8);
    expect(run.stderr).toContain('line 1: a line of type "mystery" before the summary line');
  }, 60_000);

  it("a --json report larger than one string holds says so (a sparse file: nothing is read whole)", async () => {
    const huge = join(dir, "huge.json");
    const fd = openSync(huge, "w");
    writeSync(fd, '{"segscan":"x","partitions":[');
    ftruncateSync(fd, MAX_TEXT_BYTES + 1);
    closeSync(fd);
    const run = await runCli(["fleet", `n0=${files[0]}`, `n1=${huge}`]);
    expect(run.code).toBe(8);
    expect(run.stderr).toContain(`${huge}: the report (one JSON value) is`);
    expect(run.stderr).toContain("too large to read whole; scan the node with --ndjson");
  }, 60_000);

  it("segscan report draws an --ndjson report (typed or not) as the page scan --ndjson --html drew", async () => {
    const page = join(dir, "scan.html");
    const ndjson = join(dir, "scan.ndjson");
    const scan = await runCli(["scan", join(dir, "c", "node-1"), "--ndjson", "--html", page]);
    writeFileSync(ndjson, scan.stdout);
    const again = join(dir, "again.html");
    const run = await runCli(["report", ndjson, "--html", again]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(again, "utf8")).toBe(readFileSync(page, "utf8"));
    const typed = join(dir, "scan-typed.ndjson");
    const lines = scan.stdout.trimEnd().split("\n");
    writeFileSync(
      typed,
      lines
        .map((line, i) => `${JSON.stringify({ type: i === lines.length - 1 ? "summary" : "partition", ...JSON.parse(line) })}\n`)
        .join(""),
    );
    const fromStdin = join(dir, "stdin.html");
    const piped = spawnSync(process.execPath, [CLI, "report", "-", "--html", fromStdin], { input: readFileSync(typed), encoding: "utf8" });
    expect(piped.status, piped.stderr).toBe(0);
    expect(readFileSync(fromStdin, "utf8")).toBe(readFileSync(page, "utf8"));
    const truncated = join(dir, "truncated.ndjson");
    writeFileSync(truncated, [...lines.slice(0, 1), ...lines.slice(2)].join("\n"));
    const bad = await runCli(["report", truncated, "--html", join(dir, "bad.html")]);
    expect(bad.code).toBe(16);
    expect(bad.stderr).toContain("disagree with its summary");
  }, 60_000);
});

describe("gen --cluster suggests scans fleet can trust", () => {
  it("prints each node's scan with --replicas N, shell-quoted", async () => {
    const dir = trackedTempDir("segscan-fleet-gen-");
    const target = join(dir, "a cluster");
    const run = await runCli(["gen", target, "--cluster", "3", "--cluster-fault", "none"]);
    expect(run.code).toBe(0);
    for (const n of [0, 1, 2])
      expect(run.stdout).toContain(`  segscan scan '${join(target, `node-${n}`)}' --replicas 3 --ndjson > node-${n}.ndjson`);
    expect(run.stdout).toContain("  segscan fleet node-0=node-0.ndjson node-1=node-1.ndjson node-2=node-2.ndjson");
    // The suggested commands run as printed, and fleet finds nothing to warn about.
    const script = run.stdout
      .split("\n")
      .filter((line) => line.startsWith("  segscan "))
      .map((line) => line.trim().replace(/^segscan /, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} `))
      .join("\n");
    const out = execFileSync("bash", ["-c", `cd ${JSON.stringify(dir)} && ${script}`], { encoding: "utf8" });
    expect(out.split("\n")[0]).toBe("verdict CLEAN · 3 nodes, 2 partitions: 2 clean");
    expect(out).not.toContain("warning");
  }, 120_000);
});
