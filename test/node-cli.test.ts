/**
 * docs/node.md N0, N9 through the CLI: `segscan gen --node-fault` writes a node
 * root, `segscan scan` prints the node section first and `--json` carries it;
 * exit codes per N0 (warn/info alone exit 0).
 */
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { scanIter, scanPath } from "../src/node/scan-path.js";
import { tempDir } from "./helpers/node-wal.js";

/** The JSON objects of `--ndjson` output, one per line. */
// biome-ignore lint/suspicious/noExplicitAny: the test reads parsed JSON freely
const parseLines = (stdout: string): any[] =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
const CLI = join(import.meta.dirname, "../dist/src/cli/main.js");
const run = async (args: string[]): Promise<{ code: number; stdout: string }> => {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: "1" } });
    return { code: 0, stdout };
  } catch (error) {
    const failure = error as { code: number; stdout: string };
    return { code: failure.code, stdout: failure.stdout };
  }
};

describe("segscan scan <node root>", () => {
  it("gen --list names the node faults", async () => {
    const list = await run(["gen", "--list"]);
    expect(list.stdout).toContain("wal-torn-tail");
    expect(list.stdout).toContain("checkpoint-mismatch");
  });

  it("a clean node: node section at the top, exit 0", async () => {
    const dir = join(tempDir(), "node");
    expect((await run(["gen", dir, "--size", "tiny", "--node"])).code).toBe(0);
    const scan = await run(["scan", dir]);
    expect(scan.code).toBe(0);
    const nodeAt = scan.stdout.indexOf(`node ${dir}  CLEAN`);
    expect(scan.stdout.startsWith("verdict CLEAN\n")).toBe(true);
    expect(nodeAt).toBeGreaterThan(0);
    expect(nodeAt).toBeLessThan(scan.stdout.indexOf("2 clean partitions (--all lists them)"));
    expect(scan.stdout).toContain("WAL        ops 40..55 (16 entries)");
    expect(scan.stdout).toContain("snapshot   op 40, 1 streams, 1 topics, 2 partitions, sealed");
    expect(scan.stdout).toContain("checkpoint op 40 (pairs with the snapshot)");
  });

  it("a torn WAL tail: repairable, exit 4, finding in one line and in --json", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-torn-tail"]);
    const scan = await run(["scan", dir]);
    expect(scan.code).toBe(4);
    expect(scan.stdout).toMatch(/repairable +WalTornTail metadata\/journal\.wal: the last \d+ bytes/);
    const json = await run(["scan", dir, "--json"]);
    const parsed = JSON.parse(json.stdout);
    expect(validateJsonReport(parsed)).toEqual([]);
    expect(parsed.node.verdict).toBe("repairable");
    expect(parsed.node.metadata.wal.findings[0]).toMatchObject({ severity: "repairable", code: "WalTornTail" });
  });

  it("--ndjson on a torn WAL tail: clean partitions, the node section in the last line, exit 4 from the node verdict", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-torn-tail"]);
    const ndjson = await run(["scan", dir, "--ndjson"]);
    const json = JSON.parse((await run(["scan", dir, "--json"])).stdout);
    expect(ndjson.code).toBe(4);
    const lines = parseLines(ndjson.stdout);
    expect(lines.slice(0, -1).map((partition) => partition.verdict)).toEqual(json.partitions.map(() => "clean"));
    expect(lines.at(-1).summary.repairable).toBe(0);
    // Each partition line carries its dir's node entry; the last line keeps the rest of the node section.
    const partitionLines = lines.slice(0, -1);
    expect(partitionLines.map((line) => line.node)).toEqual(json.node.partitions);
    expect({ ...lines.at(-1).node, partitions: partitionLines.map((line) => line.node) }).toEqual(json.node);
  });

  it.each(["offset-ahead-of-torn-tail", "partition-frontier-ahead", "wal-torn-tail"])(
    "--ndjson puts each partition dir's node entry on its partition's line as the node pass makes it: the same lines as from the whole report (%s)",
    async (fault) => {
      const dir = join(tempDir(), "node");
      await run(["gen", dir, "--size", "tiny", "--node-fault", fault]);
      const streamed = await run(["scan", dir, "--ndjson"]);
      // With --html the whole report is built first and its lines printed from it.
      const whole = await run(["scan", dir, "--ndjson", "--html", join(tempDir(), "report.html")]);
      expect(streamed.code).toBe(whole.code);
      const withoutTimes = (stdout: string): string => stdout.replace(/"elapsedMs":\d+/, '"elapsedMs":0');
      expect(withoutTimes(streamed.stdout)).toBe(withoutTimes(whole.stdout));
      const lines = parseLines(streamed.stdout);
      expect(lines.length).toBeGreaterThan(2);
      for (const partition of lines.slice(0, -1)) expect(partition.node.path).toBe(partition.path);
      expect(lines.at(-1).node.partitions).toEqual([]);
    },
  );

  it("--ndjson: partition dirs no scan target covers (no .log, a topic of empty dirs) go to the last line; together the same node section as --json", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "offset-ahead"]);
    const partitions = join(dir, "streams", "1", "topics", "1", "partitions");
    mkdirSync(join(partitions, "0"), { recursive: true });
    mkdirSync(join(partitions, "99"), { recursive: true });
    mkdirSync(join(dir, "streams", "1", "topics", "0", "partitions", "5"), { recursive: true });
    const ndjson = await run(["scan", dir, "--ndjson"]);
    const json = JSON.parse((await run(["scan", dir, "--json"])).stdout);
    expect(ndjson.code).toBe(4);
    const lines = parseLines(ndjson.stdout);
    const last = lines.at(-1);
    expect(last.node.partitions.map((entry: { path: string }) => entry.path)).toEqual([
      join(dir, "streams", "1", "topics", "0", "partitions", "5"),
      join(partitions, "0"),
      join(partitions, "99"),
    ]);
    const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : 1);
    const combined = [...lines.slice(0, -1).map((line) => line.node), ...last.node.partitions].sort(byPath);
    expect(combined).toEqual([...json.node.partitions].sort(byPath));
    expect({ ...last.node, partitions: [] }).toEqual({ ...json.node, partitions: [] });
    // The library's streamed scan keeps the whole section, in the same order as scanPath.
    const iterator = scanIter(dir, { concurrency: 1 });
    let next = await iterator.next();
    while (!next.done) next = await iterator.next();
    expect(toJsonReport({ ...(await scanPath(dir, { concurrency: 1 })), partitions: [] }).node).toEqual(
      toJsonReport({ segscan: "", engine: "wasm", options: json.options, partitions: [], summary: next.value, node: next.value.node! })
        .node,
    );
  });

  it("warn alone exits 0 (unsealed WAL entries)", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-unsealed"]);
    const scan = await run(["scan", dir]);
    expect(scan.code).toBe(0);
    expect(scan.stdout).toContain("WalUnsealed");
  });

  it("a WAL torn tail that Iggy would refuse to boot on: the repair plan says its cut removes that refusal", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-torn-tail-stale-copy"]);
    const scan = await run(["scan", dir]);
    expect(scan.stdout).toMatch(/If iggy-server starts now:\n\s+refuse-boot metadata\/journal\.wal/);
    const dry = await run(["repair", dir]);
    expect(dry.stdout).toMatch(/this plan removes:\n\s+refuse-boot metadata\/journal\.wal/);
    expect(dry.stdout).not.toMatch(/still to happen:[\s\S]*refuse-boot/);
  });

  it("repair --apply of a torn segment tail beside a refused WAL (a gap): exit 5, the node's refusal is not hidden by the repair", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--scenario", "torn-tail", "--node-fault", "wal-gap"]);
    const apply = await run(["repair", dir, "--apply"]);
    expect(apply.stdout).toContain("re-scan: all 1 repaired partition(s) are clean now");
    expect(apply.code).toBe(5);
  });

  it("repair: dry run exits 4 and lists the WAL cut; --apply exits 1; scan then exits 0; restore brings every byte back", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-torn-tail"]);
    const wal = join(dir, "metadata/journal.wal");
    const original = readFileSync(wal);
    const dry = await run(["repair", dir]);
    expect(dry.code).toBe(4);
    expect(dry.stdout).toMatch(/\nmetadata \S+\/metadata\n.*\n {2}truncate journal\.wal: [\d,]+ -> [\d,]+ bytes/);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
    const apply = await run(["repair", dir, "--apply"]);
    expect(apply.code).toBe(1);
    expect(readFileSync(wal).length).toBeLessThan(original.length);
    expect((await run(["scan", dir])).code).toBe(0);
    expect((await run(["restore", join(dir, "metadata")])).code).toBe(0);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
  });

  it("committed ops lost (docs/node.md N1.1): an emptied WAL under commit_max 55 is refused, exit 4, and the forecast says the boot runs without ops 41..55", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-emptied"]);
    const scan = await run(["scan", dir, "--verbose"]);
    expect(scan.code).toBe(4);
    expect(scan.stdout).toContain("WAL        no entries, 0 of 0 bytes proven  refused  (iggy: boots, warns and runs without ops 41..55)");
    expect(scan.stdout).toMatch(/refused +WalCommittedOpsLost metadata\/journal\.wal: ops 41\.\.55 were committed/);
    expect(scan.stdout).toMatch(
      /If iggy-server starts now:\n\s+DESTRUCTIVE run-without-committed-ops metadata\/journal\.wal: .*runs without ops 41\.\.55/,
    );
    const parsed = JSON.parse((await run(["scan", dir, "--json"])).stdout);
    expect(validateJsonReport(parsed)).toEqual([]);
    expect(parsed.node.metadata.wal.findings).toEqual([
      expect.objectContaining({ severity: "refused", code: "WalCommittedOpsLost", provenOp: "40", commitMax: "55", replicaCount: 1 }),
    ]);
  });

  it("a torn entry at commit_max on a solo node: no WAL cut in the repair plan, and the loss is still to happen after it", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-committed-torn"]);
    const scan = await run(["scan", dir, "--verbose"]);
    expect(scan.stdout).not.toContain("WalTornTail");
    expect(scan.stdout).toContain("not a never-acknowledged torn tail");
    const dry = await run(["repair", dir]);
    expect(dry.stdout).not.toContain("metadata: cut");
    expect(dry.stdout).toMatch(/still to happen:[\s\S]*DESTRUCTIVE run-without-committed-ops/);
  });

  it("torn-tail words follow the bytes: a complete entry whose body fails is not called never acknowledged", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "wal-torn-tail-stale-copy"]);
    const scan = await run(["scan", dir, "--verbose"]);
    expect(scan.stdout).toMatch(
      /repairable +WalTornTail metadata\/journal\.wal: .*segscan cannot tell a torn write from corruption of an acknowledged entry/,
    );
    expect(scan.stdout).not.toContain("never fsynced");
    const torn = join(tempDir(), "torn");
    await run(["gen", torn, "--size", "tiny", "--node-fault", "wal-torn-tail"]);
    expect((await run(["scan", torn, "--verbose"])).stdout).toMatch(
      /WalTornTail .*under the crash model \(a completed fsync leaves no short entry\), never fsynced, so never acknowledged/,
    );
  });

  it("an unsealed snapshot (its magic damaged) whose superblock lags: warn, its op reported, the server boots (exit 0)", async () => {
    const dir = join(tempDir(), "node");
    await run(["gen", dir, "--size", "tiny", "--node-fault", "snapshot-magic-damaged"]);
    const scan = await run(["scan", dir, "--verbose"]);
    expect(scan.code).toBe(0);
    expect(scan.stdout).toContain("snapshot   op 40, 1 streams, 1 topics, 2 partitions, unsealed");
    expect(scan.stdout).toContain("checkpoint op 30 (lags the snapshot's op 40");
    expect(scan.stdout).toMatch(/warn +SnapshotUnsealed metadata\/snapshot\.bin: .*The 20 bytes after its msgpack value are ignored/);
    expect(scan.stdout).toContain("(iggy: boots)");
    expect(scan.stdout).not.toContain("If iggy-server starts now");
    const parsed = JSON.parse((await run(["scan", dir, "--json"])).stdout);
    expect(parsed.node.metadata.snapshot).toMatchObject({ sealed: false, sequenceNumber: "40" });
    expect(parsed.node.bootForecast).toEqual([]);
  });

  it("an unknown node fault is a usage error", async () => {
    expect((await run(["gen", join(tempDir(), "x"), "--node-fault", "nope"])).code).toBe(16);
  });
});
