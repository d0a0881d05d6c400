/**
 * The files the CLI writes never replace what it was asked only to read, and a
 * failed write to stdout never passes for success (docs/interfaces.md §9.2
 * "Exit status", docs/html-report.md). Through the BUILT CLI, with temp dirs:
 * `--html` aimed at a scanned segment, at a report being read, or at any
 * existing file that is not a page is refused before any work, the target's
 * bytes unchanged; a full disk under stdout adds the operational bit (8) to
 * the verdict's code instead of an uncaught throw (exit 1, which in segscan
 * means "repairs were applied").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, openSync, closeSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli } from "./helpers/cli.js";

let root: string;
let nodeRoot: string;
let segment: string;
let reportPath: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-adv-outputs-"));
  nodeRoot = join(root, "node");
  expect((await runCli(["gen", nodeRoot, "--size", "tiny", "--seed", "5", "--node"])).code).toBe(0);
  segment = join(nodeRoot, "streams", "1", "topics", "1", "partitions", "1", "00000000000000000000.log");
  const scan = await runCli(["scan", nodeRoot, "--json", "--no-progress"]);
  reportPath = join(root, "report.json");
  await writeFile(reportPath, scan.stdout);
}, 120_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe.concurrent("--html never replaces a file it was asked only to read", () => {
  it("scan <node> --html <a segment of that node>: usage error, the segment unchanged", async () => {
    const before = await readFile(segment);
    const run = await runCli(["scan", nodeRoot, "--html", segment, "--no-progress"]);
    expect(run.code).toBe(16);
    expect(run.stderr).toMatch(/--html: the page .* lies inside .*which the scan reads/);
    expect((await readFile(segment)).equals(before)).toBe(true);
  });

  it("scan <node> --html <an existing file that is not a page>: usage error, the file unchanged", async () => {
    const notes = join(root, "notes.txt");
    await writeFile(notes, "operator notes, not a page\n");
    const run = await runCli(["scan", nodeRoot, "--html", notes, "--no-progress"]);
    expect(run.code).toBe(16);
    expect(await readFile(notes, "utf8")).toBe("operator notes, not a page\n");
  });

  it("report <report.json> --html <that same report>: usage error, the report unchanged", async () => {
    const before = await readFile(reportPath, "utf8");
    const run = await runCli(["report", reportPath, "--html", reportPath]);
    expect(run.code).toBe(16);
    expect(await readFile(reportPath, "utf8")).toBe(before);
  });

  it("fleet <report.json> --html <that same report>: usage error, the report unchanged", async () => {
    const before = await readFile(reportPath, "utf8");
    const run = await runCli(["fleet", reportPath, "--html", reportPath]);
    expect(run.code).toBe(16);
    expect(await readFile(reportPath, "utf8")).toBe(before);
  });

  it("a page segscan drew is replaced by the next one (a new path, then the same path again)", async () => {
    const page = join(root, "page.html");
    for (let round = 0; round < 2; round++) {
      const run = await runCli(["scan", nodeRoot, "--html", page, "--no-progress"]);
      expect(run.code).toBe(0);
      expect(await readFile(page, "utf8")).toMatch(/^<!doctype html>/i);
    }
  });
});

describe("a failed write to stdout is never success", () => {
  it.skipIf(!existsSync("/dev/full"))("scan <clean node> > /dev/full: exit 8 (operational), never 0 nor 1", () => {
    const full = openSync("/dev/full", "w");
    try {
      const run = spawnSync(process.execPath, [CLI, "scan", nodeRoot, "--no-progress"], {
        stdio: ["ignore", full, "pipe"],
        encoding: "utf8",
      });
      expect(run.status).toBe(8);
      expect(run.stderr).toMatch(/cannot write to stdout \(ENOSPC\)/);
    } finally {
      closeSync(full);
    }
  });
});
