/**
 * A link to a directory inside a node's streams/ (docs/interfaces.md §4): the
 * server follows it and serves its partition, discovery never follows a link,
 * so the scan must not pass for clean. Through the BUILT CLI and the library;
 * scrub walks the same discovery and keeps the same rule.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rename, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanPath } from "../src/index.js";
import { nodeScanFs } from "../src/io/fs.js";
import { scanNode } from "../src/node/scan.js";
import { discoverNodeLayout } from "../src/recovery/targets.js";
import { passOutcome } from "../src/scrub/findings.js";
import { scrub } from "../src/scrub/scrub.js";
import { runCli } from "./helpers/cli.js";

let root: string;
let node: string;
let linked: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-adv-links-"));
  node = join(root, "node");
  expect((await runCli(["gen", node, "--size", "tiny"])).code).toBe(0);
  linked = join(node, "streams", "1", "topics", "1", "partitions", "2");
  await rename(linked, join(root, "elsewhere"));
  await symlink(join(root, "elsewhere"), linked);
}, 120_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("a partition directory that is a link inside a node's streams/", () => {
  it("is a failed partition (LinkNotFollowed): never CLEAN, exit 8, and the JSON names it", async () => {
    const text = await runCli(["scan", "--no-progress", node]);
    expect(text.code).toBe(8);
    expect(text.stdout).not.toMatch(/verdict CLEAN/);
    expect(text.stdout).toMatch(/^verdict FAILED/);
    const json = await runCli(["scan", "--json", node]);
    expect(json.code).toBe(8);
    const report = JSON.parse(json.stdout);
    const failed = report.partitions.filter((partition: { verdict: string }) => partition.verdict === "failed");
    expect(failed).toHaveLength(1);
    expect(failed[0].path).toBe(linked);
    expect(failed[0].error.code).toBe("LinkNotFollowed");
  });

  it("the library's scan says the same (the one discovery)", async () => {
    const report = await scanPath(node);
    const failed = report.partitions.filter((partition) => partition.verdict === "failed");
    expect(failed.map((partition) => partition.path)).toEqual([linked]);
  });

  it("a scan that starts below streams/ (the topic dir) fails the link too, never CLEAN", async () => {
    const topic = join(node, "streams", "1", "topics", "1");
    const text = await runCli(["scan", "--no-progress", topic]);
    expect(text.code).toBe(8);
    expect(text.stdout).toMatch(/^verdict FAILED/);
    expect(text.stdout).toContain("LinkNotFollowed");
  });

  it("its target scanned by its own path is judged (the advice works)", async () => {
    const direct = await runCli(["scan", "--no-progress", linked]);
    expect(direct.code).toBe(0);
    expect(direct.stdout).toMatch(/^verdict CLEAN/);
  });

  it("scrub reports it as scan does: an unread partition (failure, exit 8), never followed, never clean", async () => {
    const events = [];
    for await (const event of scrub(node, { rate: Number.POSITIVE_INFINITY, state: null, nodeSettleMs: 0, sealedSettleMs: 0 }))
      events.push(event);
    const findings = events.flatMap((event) => (event.type === "finding" ? [event.finding] : []));
    const atLink = findings.filter((finding) => finding.path === linked && finding.item === undefined);
    expect(atLink).toEqual([expect.objectContaining({ code: "UnreadableFile", message: expect.stringContaining("symbolic link") })]);
    // Nothing under the link was read: no segment of it was verified or skipped.
    expect(events.filter((event) => "path" in event && typeof event.path === "string" && event.path.startsWith(`${linked}/`))).toEqual([]);
    const last = events.at(-1);
    if (last?.type !== "pass-complete") throw new Error("a pass ends with pass-complete");
    expect(passOutcome(last.summary).failures).toBeGreaterThan(0);
    const cli = await runCli(["scrub", node, "--rate", "unlimited", "--state", join(root, "scrub.json")]);
    expect(cli.code).toBe(8);
    expect(cli.stdout + cli.stderr).toContain(linked);
  });
});

describe("a topic dir that is a link inside a node's streams/: the node checks take discovery's layout", () => {
  let other: string;
  let topic: string;
  beforeAll(async () => {
    other = join(root, "node-topic-link");
    expect((await runCli(["gen", other, "--size", "tiny"])).code).toBe(0);
    topic = join(other, "streams", "1", "topics", "1");
    await rename(topic, join(root, "topic-elsewhere"));
    await symlink(join(root, "topic-elsewhere"), topic);
  }, 120_000);

  it("discovery reports the link in the layout, and lists nothing under it", async () => {
    const layout = await discoverNodeLayout(other, nodeScanFs);
    expect(layout).toEqual([{ kind: "link", root: other, below: ["streams", "1", "topics", "1"] }]);
    const plain = await discoverNodeLayout(node, nodeScanFs);
    expect(plain).toEqual([
      { kind: "partitions", root: node, below: ["streams", "1", "topics", "1", "partitions"], dirs: expect.arrayContaining(["1", "2"]) },
    ]);
  });

  it("its partitions are unknown, never missing: the scan fails the link, the node section judges no dir under it", async () => {
    const report = await scanPath(other);
    expect(report.partitions.map((partition) => [partition.path, partition.error?.code])).toEqual([[topic, "LinkNotFollowed"]]);
    for (const section of [report.node!, await scanNode(other)]) {
      expect(section.crossCheck.missingDirs).toEqual([]);
      expect(section.partitions).toEqual([]);
      expect(section.bootForecast.map((entry) => entry.effect)).not.toContain("recreate-partition-empty");
    }
    expect(report.node!.verdict).toBe("failed");
  });
});
