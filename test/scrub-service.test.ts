/**
 * `scrub` as a service (docs/scrub.md §5, §6): `--watch` says what it runs
 * with before its first pass; the text summary names the state file; the
 * metrics carry `segscan_build_info` and
 * `segscan_scrub_last_success_timestamp_seconds` under a strict parser; the
 * systemd example keeps its state in a `StateDirectory=`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { METRICS_HEADER } from "../src/scrub/metrics.js";
import { SEGSCAN_VERSION } from "../src/version.js";
import { runCli, startCli } from "./helpers/cli.js";
import { buildChain, indexAt, tempDataDir, tempPartition, trackedTempDir, writeSegment } from "./helpers/fixtures.js";
import { parsePrometheusText } from "./helpers/prometheus.js";

/** A partition of a sealed and an active segment (3 batches each) under `root`. */
function partition(root = tempDataDir()): { root: string; dir: string } {
  const dir = tempPartition(1, root);
  const sealed = buildChain({ startOffset: 0n, counts: [3, 3, 3], payloadBytes: 200, seed: 41 });
  writeSegment(dir, 0n, sealed.log, indexAt(sealed, [0, 1, 2]));
  const activeChain = buildChain({ startOffset: sealed.nextOffset, counts: [3, 3, 3], payloadBytes: 200, seed: 42 });
  writeSegment(dir, sealed.nextOffset, activeChain.log, indexAt(activeChain, [0, 1, 2]));
  return { root, dir };
}

/** Runs `segscan scrub …` and sends SIGTERM once the first pass's summary is printed. */
async function watchOnePass(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const { child, done } = await startCli(["scrub", ...args, "--watch", "--interval", "1h"]);
  let stopped = false;
  child.stdout!.on("data", (chunk: string) => {
    if (!stopped && /scrub pass complete|"type":"pass-complete"/.test(chunk)) {
      stopped = true;
      child.kill("SIGTERM");
    }
  });
  return done;
}

describe("scrub as a service: start line, summary, metrics", () => {
  it("--watch says first what it scrubs, how often, how fast, and where it writes; each pass names the state file", async () => {
    const { root } = partition();
    const dir = trackedTempDir("segscan-scrub-watch-");
    const state = join(dir, "state.json");
    const metrics = join(dir, "segscan.prom");
    const text = await watchOnePass([root, "--state", state, "--metrics", metrics]);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe(`segscan ${SEGSCAN_VERSION} scrub --watch: ${root} every 1h, rate 64 MiB/s; state ${state}; metrics ${metrics}`);
    const summary = lines.findIndex((l) => l.startsWith("scrub pass complete: 2 segment(s) verified"));
    expect(lines.slice(summary + 1, summary + 3)).toEqual([`  state saved to ${state}`, `  metrics written to ${metrics}`]);

    const json = await watchOnePass([root, "--state", state, "--rate", "unlimited", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout.split("\n")[0]!)).toEqual({
      type: "watch-start",
      version: SEGSCAN_VERSION,
      root,
      intervalMs: 3_600_000,
      rateBytesPerSecond: null,
      statePath: state,
      metricsPath: null,
    });

    // A single pass (no --watch) has no start line, and its summary names the state too.
    const once = await runCli(["scrub", root, "--state", state, "--rate", "unlimited"]);
    expect(once.stdout).not.toContain("scrub --watch:");
    expect(once.stdout).toContain(`\n  state saved to ${state}\n`);
  });

  it("--watch stops, saying so, and exits 8 once its stdout cannot be written (the reader went away): it never scrubs on unheard", async () => {
    const { root } = partition();
    const state = join(trackedTempDir("segscan-scrub-epipe-"), "state.json");
    const { child, done } = await startCli(["scrub", root, "--state", state, "--rate", "unlimited", "--watch", "--interval", "1s"]);
    // The reader takes the start line, then goes away (as `| head -1` does); the next pass's output meets a closed pipe.
    child.stdout!.once("data", () => child.stdout!.destroy());
    const run = await done;
    expect(run.code).toBe(8);
    expect(run.stderr).toMatch(/scrub --watch: cannot write to stdout \(EPIPE\); stopping after the current window/);
    expect(JSON.parse(readFileSync(state, "utf8"))).toBeTypeOf("object");
  });

  it("metrics: a header line, segscan_build_info, and the last success, kept while a pass cannot read a file", async () => {
    const { root, dir: partitionDir } = partition();
    const dir = trackedTempDir("segscan-scrub-metrics-");
    const state = join(dir, "state.json");
    const metrics = join(dir, "segscan.prom");
    const args = ["scrub", root, "--state", state, "--metrics", metrics, "--rate", "unlimited"];
    expect((await runCli(args)).code).toBe(0);
    const text = readFileSync(metrics, "utf8");
    expect(text.split("\n")[0]).toBe(METRICS_HEADER);
    const first = parsePrometheusText(text);
    // node_exporter textfile conventions: every family has HELP and TYPE.
    for (const name of first.keys()) {
      expect(text, name).toContain(`\n# HELP ${name} `);
      expect(text, name).toContain(`\n# TYPE ${name} `);
    }
    expect(first.get("segscan_build_info")).toEqual({ type: "gauge", samples: [{ labels: { root, version: SEGSCAN_VERSION }, value: 1 }] });
    const success = first.get("segscan_scrub_last_success_timestamp_seconds")!;
    expect(success.type).toBe("gauge");
    const firstSuccess = success.samples[0]!.value;
    expect(firstSuccess).toBe(first.get("segscan_scrub_last_full_pass_timestamp_seconds")!.samples[0]!.value);
    expect(firstSuccess).toBeGreaterThan(0);

    // A FIFO named like a segment cannot be read: the pass completes, fails (exit 8), and is no success.
    const fifo = join(partitionDir, "00000000000000099999.log");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    expect((await runCli(args)).code).toBe(8);
    const failed = parsePrometheusText(readFileSync(metrics, "utf8"));
    expect(failed.get("segscan_scrub_findings")!.samples.find((s) => s.labels.code === "UnreadableFile")!.value).toBe(1);
    expect(failed.get("segscan_scrub_last_success_timestamp_seconds")!.samples[0]!.value).toBe(firstSuccess);
    expect(failed.get("segscan_scrub_last_full_pass_timestamp_seconds")!.samples[0]!.value).toBeGreaterThanOrEqual(firstSuccess);

    rmSync(fifo);
    expect((await runCli(args)).code).toBe(0);
    const again = parsePrometheusText(readFileSync(metrics, "utf8"));
    expect(again.get("segscan_scrub_last_success_timestamp_seconds")!.samples[0]!.value).toBe(
      again.get("segscan_scrub_last_full_pass_timestamp_seconds")!.samples[0]!.value,
    );
  });

  it("the systemd example keeps its state in StateDirectory= and passes it with --state, outside the data dir", () => {
    const doc = readFileSync(new URL("../docs/scrub.md", import.meta.url), "utf8");
    const units = [...doc.matchAll(/```ini\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(units.length).toBeGreaterThan(0);
    for (const unit of units.filter((u) => u.includes("ExecStart="))) {
      const stateDirectory = /^StateDirectory=(\S+)$/m.exec(unit)?.[1];
      expect(stateDirectory, unit).toBeDefined();
      const execStart = unit.slice(unit.indexOf("ExecStart=")).replace(/\\\n\s*/g, " ");
      const dataDir = /segscan scrub (\S+)/.exec(execStart)![1]!;
      const statePath = /--state (\S+)/.exec(execStart)?.[1];
      expect(statePath, unit).toBe(`/var/lib/${stateDirectory}/${statePath!.split("/").at(-1)}`);
      expect(dirname(statePath!).startsWith(dataDir)).toBe(false);
    }
  });
});
