/**
 * docs/scrub.md §3.1: the only files `scrub` writes are its state and its
 * metrics, and neither may land on anything else. A path inside the scrubbed
 * tree (as given, or once its symlinks are resolved), inside the node root
 * holding a scrubbed partition, a dangling symlink, a directory, the same file
 * for both, and an existing file the scrub did not write are refused before
 * the pass (exit 16, nothing created or changed); a symlink to the scrub's own
 * file elsewhere is followed and stays a symlink; the atomic write checks
 * again just before its rename and leaves a file swapped in meanwhile alone.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { type PassSummary, type ScrubEvent, zeroFindingCounts } from "../src/scrub/findings.js";
import { METRICS_HEADER, formatMetrics, writeMetrics } from "../src/scrub/metrics.js";
import { OutputFileError, checkOutputPath, protectedTrees } from "../src/scrub/output-file.js";
import { checkScrubOutputs } from "../src/scrub/outputs.js";
import { scrub } from "../src/scrub/scrub.js";
import { isScrubStateHead } from "../src/scrub/state.js";
import { CLI, runCli } from "./helpers/cli.js";
import { trackedTempDir } from "./helpers/fixtures.js";

/** A generated tiny node root (2 partitions, metadata/ with its WAL), in a fresh temp dir of its own. */
async function node(): Promise<string> {
  const root = join(trackedTempDir("segscan-scrub-outputs-"), "node");
  const generated = await generateDataDir(root, { size: "tiny", seed: 3 });
  await writeNodeMetadata(root, generated.partitions, {});
  return root;
}

/** Every path under `root` with the hash of its bytes (a dir: "dir"; a symlink: its target). */
function contents(root: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const name of readdirSync(root, { recursive: true }) as string[]) {
    const path = join(root, name);
    const info = lstatSync(path);
    entries[name] = info.isSymbolicLink()
      ? `-> ${readlinkSync(path)}`
      : info.isDirectory()
        ? "dir"
        : createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return entries;
}

function firstLog(root: string): string {
  const name = (readdirSync(root, { recursive: true }) as string[]).filter((n) => n.endsWith(".log")).sort()[0]!;
  return join(root, name);
}

/**
 * Whether this machine lets an unprivileged process bind-mount in a user and
 * mount namespace of its own (`unshare -rm`): no mount outside it is touched.
 */
const canBindMount = spawnSync("unshare", ["-rm", "true"]).status === 0;

/** A directory outside the node for the operator's own files. */
const elsewhere = (): string => trackedTempDir("segscan-scrub-elsewhere-");

describe("scrub --state/--metrics never land on a scanned file", () => {
  it("the reproduction: --state <a segment> --metrics <the WAL> exits 16 and changes nothing under the node", async () => {
    const root = await node();
    const segment = firstLog(root);
    expect(basename(segment)).toBe("00000000000000000000.log");
    const wal = join(root, "metadata", "journal.wal");
    const before = contents(root);
    const run = await runCli(["scrub", root, "--state", segment, "--metrics", wal, "--rate", "unlimited"]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`--state: the state file ${segment} lies inside ${root}, which the scrub reads`);
    expect(run.stderr).toContain("nothing was scrubbed");
    expect(run.stdout).toBe("");
    expect(contents(root)).toEqual(before);
    // The metrics path alone is refused the same way.
    const metricsOnly = await runCli(["scrub", root, "--state", join(elsewhere(), "s.json"), "--metrics", wal]);
    expect(metricsOnly.code).toBe(16);
    expect(metricsOnly.stderr).toContain(`--metrics: the metrics file ${wal} lies inside ${root}`);
    expect(contents(root)).toEqual(before);
  });

  it("a new file inside the tree, a path through a symlink into it, a symlink onto a segment: all refused, nothing created", async () => {
    const root = await node();
    const segment = firstLog(root);
    const outside = elsewhere();
    symlinkSync(join(root, "metadata"), join(outside, "metadata-link"));
    symlinkSync(segment, join(outside, "segment-link.json"));
    symlinkSync(root, join(outside, "node-link"));
    const before = contents(root);
    const cases: [string, string][] = [
      [join(root, "scrub-state.json"), `lies inside ${root}`],
      [join(root, "new-dir", "state.json"), `lies inside ${root}`],
      [join(outside, "metadata-link", "journal.wal"), `(${join(root, "metadata", "journal.wal")}) lies inside ${root}`],
      [join(outside, "metadata-link", "new.json"), `(${join(root, "metadata", "new.json")}) lies inside ${root}`],
      [join(outside, "segment-link.json"), `(${segment}) lies inside ${root}`],
    ];
    for (const [state, says] of cases) {
      const run = await runCli(["scrub", root, "--state", state, "--rate", "unlimited"]);
      expect(run.code, state).toBe(16);
      expect(run.stderr, state).toContain(says);
    }
    // The root given through a symlink: the same tree.
    const viaLink = await runCli(["scrub", join(outside, "node-link"), "--state", join(root, "s.json")]);
    expect(viaLink.code).toBe(16);
    expect(contents(root)).toEqual(before);
    expect(readdirSync(outside).sort()).toEqual(["metadata-link", "node-link", "segment-link.json"]);
  });

  it.skipIf(!canBindMount)("a path reaching the node through a bind mount (no symlink to resolve) is inside it too", async () => {
    const root = await node();
    const mountPoint = join(elsewhere(), "mnt");
    mkdirSync(mountPoint);
    const before = contents(root);
    // In a namespace of its own: the bind mount lives and dies with this one command.
    const script = 'mount --bind "$1" "$2" && exec "$3" "$4" scrub "$1" --state "$2/metadata/new-state.json" --rate unlimited';
    const run = spawnSync("unshare", ["-rm", "sh", "-c", script, "sh", root, mountPoint, process.execPath, CLI], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(16);
    expect(run.stderr).toContain(
      `--state: the state file ${mountPoint}/metadata/new-state.json lies inside ${root} (reached by another path, a bind mount`,
    );
    expect(contents(root)).toEqual(before);
  });

  it("a partition or a .log scrubbed alone: its node root and its partition dir are protected too", async () => {
    const root = await node();
    const segment = firstLog(root);
    const partition = dirname(segment);
    const before = contents(root);
    for (const [target, state, tree] of [
      [partition, join(root, "metadata", "state.json"), root],
      [segment, join(partition, "state.json"), partition],
      [segment, join(root, "state.json"), root],
    ] as const) {
      const run = await runCli(["scrub", target, "--state", state, "--rate", "unlimited"]);
      expect(run.code, `${target} ${state}`).toBe(16);
      expect(run.stderr).toContain(`lies inside ${tree}`);
    }
    expect(contents(root)).toEqual(before);
    expect(await protectedTrees(partition)).toEqual([partition, root]);
  });

  it("an existing file the scrub did not write is refused and kept; the scrub's own files are replaced", async () => {
    const root = await node();
    const dir = elsewhere();
    const notes = join(dir, "notes.json");
    const otherExporter = join(dir, "node.prom");
    const empty = join(dir, "empty.json");
    writeFileSync(notes, '{"version": 1, "root": "not ours"}\n');
    writeFileSync(otherExporter, "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.5\n");
    writeFileSync(empty, "");
    const state = join(dir, "state.json");
    for (const [args, says] of [
      [["--state", notes], `--state: the state file ${notes} exists and is not a state file segscan wrote (it holds something else)`],
      [["--state", empty], `--state: the state file ${empty} exists and is not a state file segscan wrote (it is empty)`],
      [
        ["--state", state, "--metrics", otherExporter],
        `--metrics: the metrics file ${otherExporter} exists and is not a metrics file segscan wrote`,
      ],
    ] as const) {
      const run = await runCli(["scrub", root, ...args, "--rate", "unlimited"]);
      expect(run.code, args.join(" ")).toBe(16);
      expect(run.stderr).toContain(says);
    }
    expect(readFileSync(notes, "utf8")).toBe('{"version": 1, "root": "not ours"}\n');
    expect(readFileSync(otherExporter, "utf8")).toContain("node_load1 0.5");
    expect(readFileSync(empty, "utf8")).toBe("");
    expect(existsSync(state)).toBe(false);

    // The scrub's own: a state and metrics it wrote, and a metrics file of an earlier release (no header line).
    const metrics = join(dir, "segscan.prom");
    expect((await runCli(["scrub", root, "--state", state, "--metrics", metrics, "--rate", "unlimited"])).code).toBe(0);
    expect(isScrubStateHead(readFileSync(state, "utf8"))).toBe(true);
    const legacy = readFileSync(metrics, "utf8").replace(`${METRICS_HEADER}\n`, "");
    expect(legacy.startsWith("# HELP segscan_")).toBe(true);
    writeFileSync(metrics, legacy);
    const again = await runCli(["scrub", root, "--state", state, "--metrics", metrics, "--rate", "unlimited"]);
    expect(again.code).toBe(0);
    expect(readFileSync(metrics, "utf8").startsWith(`${METRICS_HEADER}\n`)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(["empty.json", "node.prom", "notes.json", "segscan.prom", "state.json"]);
  });

  it("--state and --metrics naming one file (directly or through a symlink), a directory, a dangling link into the node, a loop: refused", async () => {
    const root = await node();
    const dir = elsewhere();
    const state = join(dir, "state.json");
    symlinkSync(state, join(dir, "alias.prom")); // to a state not written yet
    symlinkSync(join(root, "metadata", "new.json"), join(dir, "dangling.json"));
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    mkdirSync(join(dir, "a-dir"));
    const before = contents(root);
    for (const [args, says] of [
      [["--state", state, "--metrics", state], `--metrics: the metrics file ${state} is the state file ${state}`],
      [["--state", state, "--metrics", join(dir, "alias.prom")], `(both are ${state})`],
      [["--state", join(dir, "a-dir")], "is a directory, not a regular file"],
      [["--state", join(dir, "dangling.json")], `(${join(root, "metadata", "new.json")}) lies inside ${root}`],
      [["--state", join(dir, "loop-a")], `--state: cannot resolve the state file ${join(dir, "loop-a")}`],
    ] as const) {
      const run = await runCli(["scrub", root, ...args, "--rate", "unlimited"]);
      expect(run.code, args.join(" ")).toBe(16);
      expect(run.stderr, args.join(" ")).toContain(says);
    }
    expect(readdirSync(dir).sort()).toEqual(["a-dir", "alias.prom", "dangling.json", "loop-a", "loop-b"]);
    expect(contents(root)).toEqual(before);
  });

  it("a symlink to a state not written yet outside the tree is followed: the state is created where it points", async () => {
    const root = await node();
    const dir = elsewhere();
    const target = join(dir, "states", "node.json");
    symlinkSync(target, join(dir, "state.json"));
    const run = await runCli(["scrub", root, "--state", join(dir, "state.json"), "--rate", "unlimited"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`state saved to ${target}\n`);
    expect(lstatSync(join(dir, "state.json")).isSymbolicLink()).toBe(true);
    expect(isScrubStateHead(readFileSync(target, "utf8"))).toBe(true);
  });

  it("a symlink to the scrub's own state elsewhere is followed: the target is replaced, the link stays a link", async () => {
    const root = await node();
    const real = join(elsewhere(), "state.json");
    const linkDir = elsewhere();
    const link = join(linkDir, "state.json");
    expect((await runCli(["scrub", root, "--state", real, "--rate", "unlimited"])).code).toBe(0);
    symlinkSync(real, link);
    const inode = statSync(real).ino;
    const run = await runCli(["scrub", root, "--state", link, "--rate", "unlimited", "--reverify-after", "0"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`state saved to ${real}\n`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(statSync(real).ino).not.toBe(inode); // replaced by rename
    expect(readdirSync(linkDir)).toEqual(["state.json"]);
  });

  it("the library refuses a state inside the tree (StateFileError) before any event; checkScrubOutputs names the output", async () => {
    const root = await node();
    const before = contents(root);
    const events: ScrubEvent[] = [];
    await expect(
      (async () => {
        for await (const event of scrub(root, { state: join(root, "metadata", "journal.wal"), rate: Infinity })) events.push(event);
      })(),
    ).rejects.toMatchObject({ name: "StateFileError", message: expect.stringContaining("lies inside") });
    expect(events).toEqual([]);
    expect(contents(root)).toEqual(before);
    await expect(checkScrubOutputs(root, join(elsewhere(), "s.json"), join(root, "m.prom"))).rejects.toMatchObject({
      name: "ScrubOutputError",
      output: "metrics",
    });
  });

  it("the write checks again before its rename: a foreign file or a symlink swapped in meanwhile is left alone", async () => {
    const root = await node();
    const dir = elsewhere();
    const metrics = join(dir, "segscan.prom");
    const resolved = await checkOutputPath(
      { path: metrics, what: "metrics file", recognise: (head) => head.startsWith(METRICS_HEADER) },
      await protectedTrees(root),
    );
    expect(resolved).toBe(metrics);
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
      findings: 0,
      statePath: null,
      lastFullPassAt: null,
      lastSuccessAt: null,
      totals: { bytesVerified: 0, segmentsVerified: 0, passesCompleted: 0 },
      failingPartitions: [],
      node: null,
    };
    const input = { root, summary, rateLimitBytesPerSecond: Infinity };
    // Another tool's file appears after the check.
    writeFileSync(metrics, "other_tool_up 1\n");
    await expect(writeMetrics(metrics, input)).rejects.toBeInstanceOf(OutputFileError);
    expect(readFileSync(metrics, "utf8")).toBe("other_tool_up 1\n");
    // A symlink onto a segment appears after the check: the rename would replace the link, but nothing is replaced.
    unlinkSync(metrics);
    symlinkSync(firstLog(root), metrics);
    const segmentBefore = readFileSync(firstLog(root));
    await expect(writeMetrics(metrics, input)).rejects.toThrow(/is now a symlink/);
    expect(lstatSync(metrics).isSymbolicLink()).toBe(true);
    expect(readFileSync(firstLog(root))).toEqual(segmentBefore);
    // No temp file is left beside it, and the scrub's own file is replaced as before.
    expect(readdirSync(dir)).toEqual(["segscan.prom"]);
    unlinkSync(metrics);
    await writeMetrics(metrics, input);
    expect(readFileSync(metrics, "utf8")).toBe(formatMetrics(input));
    await writeMetrics(metrics, input);
    expect(readdirSync(dir)).toEqual(["segscan.prom"]);
  });
});
