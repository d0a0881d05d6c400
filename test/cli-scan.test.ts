/**
 * `segscan scan` through the BUILT CLI (dist/src/cli/main.js; `npm test` builds
 * first) on every generated fault scenario: the exit status, the docs/interfaces.md §9.3 JSON
 * shape (strictly validated), the expected verdict and refusal, deep mode, both
 * engines giving the same report, replica policy, and the human report.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCENARIOS, generateDataDir, type GeneratedDataDir } from "../src/gen/index.js";
import type { JsonScanReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { CLI, type Run, runCli } from "./helpers/cli.js";

function parseReport(run: Run): JsonScanReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  expect(validateJsonReport(parsed)).toEqual([]);
  return parsed as JsonScanReport;
}

/** One tail-mode scan per scenario data dir, shared by every test that reads it. */
const tailRuns = new Map<string, Promise<Run>>();
function tailRun(name: string): Promise<Run> {
  let run = tailRuns.get(name);
  if (run === undefined) {
    run = runCli(["scan", samples.get(name)!.dir, "--json", "--concurrency", "1"]);
    tailRuns.set(name, run);
  }
  return run;
}

let root: string;
const samples = new Map<string, GeneratedDataDir>();

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm run build, or npx tsc -p tsconfig.json)`);
  root = await mkdtemp(join(tmpdir(), "segscan-cli-scan-"));
  await Promise.all(
    SCENARIOS.map(async (scenario) => {
      samples.set(scenario.name, await generateDataDir(join(root, scenario.name), { size: "tiny", seed: 3, scenario: scenario.name }));
    }),
  );
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe.concurrent("scan --json on every scenario", () => {
  for (const scenario of SCENARIOS) {
    const e = scenario.expected;
    it(`${scenario.name}: ${e.verdict}${e.refusal ? ` (${e.refusal})` : ""}, exit ${e.scanExit}`, async () => {
      const sample = samples.get(scenario.name)!;
      const tail = await tailRun(scenario.name);
      expect(tail.code, tail.stderr).toBe(e.scanExit);
      const report = parseReport(tail);
      expect(report.engine).toBe("wasm");
      expect(report.options).toEqual({ verify: "tail", replicaCount: 1, probeBudgetUnits: 2281701376, windowBytes: 1048576 });
      expect(report.partitions.map((p) => p.path)).toEqual(sample.partitions.map((p) => p.path));
      const [target, ...others] = report.partitions;
      expect(target!.verdict).toBe(e.verdict);
      expect(target!.action).toBe(e.action);
      expect(target!.refusal?.code ?? null).toBe(e.refusal);
      if (e.outcome !== null && e.outcome !== "clean") expect(target!.segments.map((s) => s.outcome)).toContain(e.outcome);
      for (const other of others) expect(other.verdict).toBe("clean");
    });
  }
});

describe.concurrent("every scenario at once", () => {
  const dirs = (): string[] => SCENARIOS.map((s) => samples.get(s.name)!.dir);
  const byScenario = (report: JsonScanReport, name: string) =>
    report.partitions.filter((p) => p.path.startsWith(samples.get(name)!.dir + "/"));

  it("--deep (worker pool) agrees with tail mode except where a scenario says otherwise", async () => {
    const run = await runCli(["scan", ...dirs(), "--json", "--deep"]);
    expect(run.code, run.stderr).toBe(4);
    const report = parseReport(run);
    expect(report.options.verify).toBe("full");
    for (const scenario of SCENARIOS) {
      const e = scenario.expected;
      const expectDeep = e.deep ?? { verdict: e.verdict, refusal: e.refusal };
      const [target, ...others] = byScenario(report, scenario.name);
      expect(target!.verdict, scenario.name).toBe(expectDeep.verdict);
      expect(target!.refusal?.code ?? null, scenario.name).toBe(expectDeep.refusal);
      for (const other of others) expect(other.verdict, scenario.name).toBe("clean");
    }
  });

  it("the TypeScript engine with a 64 KiB window gives the same report as wasm with 1 MiB", async () => {
    const [wasm, ts] = await Promise.all([
      runCli(["scan", ...dirs(), "--json"]),
      runCli(["scan", ...dirs(), "--json", "--engine", "ts", "--window", "64KiB", "--concurrency", "1"]),
    ]);
    expect(wasm.code, wasm.stderr).toBe(4);
    expect(ts.code, ts.stderr).toBe(4);
    const a = parseReport(wasm);
    const b = parseReport(ts);
    expect(a.engine).toBe("wasm");
    expect(b.engine).toBe("ts");
    expect(b.options.windowBytes).toBe(65536);
    // Bytes read depend on the window; everything else must be identical.
    expect(b.partitions).toEqual(a.partitions);
    expect({ ...b.summary, bytesScanned: 0, elapsedMs: 0 }).toEqual({ ...a.summary, bytesScanned: 0, elapsedMs: 0 });
  });
});

describe.concurrent("scenario details", () => {
  it("zero-tail and torn-tail are torn tails with no survivor; zero-tail's residue is all zero", async () => {
    for (const [name, allZero] of [
      ["zero-tail", true],
      ["torn-tail", false],
    ] as const) {
      const report = parseReport(await runCli(["scan", samples.get(name)!.partitions[0]!.path, "--json", "--concurrency", "1"]));
      const segment = report.partitions[0]!.segments.at(-1)!;
      expect(segment.outcome).toBe("torn-tail");
      expect(segment.residue).toMatchObject({ allZero, probe: "no-survivor", survivorPosition: null });
      expect(segment.walkedSize).toBe(segment.residue!.damagePosition);
      expect(segment.walkedSize + segment.residue!.bytes).toBe(segment.messagesSize);
    }
  });

  it("InteriorDamage names the damage and the survivor", async () => {
    for (const name of ["payload-bitflip", "length-bitflip"]) {
      const report = parseReport(await tailRun(name));
      const refusal = report.partitions[0]!.refusal!;
      if (refusal.code !== "InteriorDamage") throw new Error(`expected InteriorDamage, got ${refusal.code}`);
      expect(refusal.survivorPosition).toBeGreaterThan(refusal.damagePosition);
      const segment = report.partitions[0]!.segments.find((s) => s.refusal !== null)!;
      expect(segment.residue).toMatchObject({ probe: "survivor", survivorPosition: refusal.survivorPosition });
      expect(segment.messageCount).toBeNull();
    }
  });

  it("review blocker 6: with no override the budget is the build-time constant PROBE_BUDGET_UNITS, and crafted-residue exhausts it", async () => {
    const report = parseReport(await tailRun("crafted-residue"));
    const refusal = report.partitions[0]!.refusal!;
    if (refusal.code !== "UnverifiedResidue") throw new Error(`expected UnverifiedResidue, got ${refusal.code}`);
    expect(refusal.limitUnits).toBe(2281701376);
    expect(refusal.spentUnits).toBeGreaterThan(2281701376);
    expect(report.partitions[0]!.budget.spentUnits).toBe(refusal.spentUnits);
  });

  it("forward-gap records the gap and stays clean", async () => {
    const report = parseReport(await tailRun("forward-gap"));
    const gaps = report.partitions[0]!.segments.flatMap((s) => s.gaps);
    expect(gaps).toHaveLength(1);
    expect(BigInt(gaps[0]!.foundOffset) - BigInt(gaps[0]!.expectedOffset)).toBe(1000n);
  });

  it("lost-index takes the index-less arm and rebuilds; scratch-files lists both sweeps", async () => {
    const lost = parseReport(await tailRun("lost-index"));
    const segment = lost.partitions[0]!.segments[1]!;
    expect(segment.arm).toBe("index-less");
    expect(segment.index.rebuilt).toBe(true);
    expect(segment.index.rebuiltEntries).toBeGreaterThan(0);
    expect(segment.messageCount).toBeGreaterThan(0);
    const scratch = parseReport(await tailRun("scratch-files"));
    expect(scratch.partitions[0]!.sweep.map((s) => s.kind).sort()).toEqual(["orphan-index", "staging"]);
  });

  it("--replicas 3: rebuild-from-peers, except UnverifiedResidue stays a tombstone", async () => {
    const hole = parseReport(await runCli(["scan", samples.get("hole")!.dir, "--json", "--replicas", "3", "--concurrency", "1"]));
    expect(hole.options.replicaCount).toBe(3);
    expect(hole.partitions[0]!.action).toBe("rebuild-from-peers");
    const crafted = parseReport(
      await runCli(["scan", samples.get("crafted-residue")!.dir, "--json", "--replicas", "3", "--concurrency", "1"]),
    );
    expect(crafted.partitions[0]!.action).toBe("tombstone");
  });

  it("--probe-budget is recorded and can exhaust on a plain torn tail", async () => {
    const run = await runCli(["scan", samples.get("zero-tail")!.dir, "--json", "--probe-budget", "1000", "--concurrency", "1"]);
    expect(run.code).toBe(4);
    const report = parseReport(run);
    expect(report.options.probeBudgetUnits).toBe(1000);
    expect(report.partitions[0]!.refusal?.code).toBe("UnverifiedResidue");
  });

  it("one .log file scans as a partition of one segment; a partition dir as one partition", async () => {
    const sample = samples.get("torn-tail")!;
    const log = sample.partitions[0]!.segments.at(-1)!.logPath;
    const single = await runCli(["scan", log, "--json"]);
    expect(single.code).toBe(4);
    const report = parseReport(single);
    expect(report.partitions).toHaveLength(1);
    expect(report.partitions[0]!.segments).toHaveLength(1);
    expect(report.partitions[0]!.segments[0]!.outcome).toBe("torn-tail");
    const clean = await runCli(["scan", sample.partitions[1]!.path, join(sample.dir, "streams/1/topics"), "--json"]);
    expect(clean.code).toBe(4);
    expect(parseReport(clean).partitions.length).toBeGreaterThanOrEqual(2);
  });
});

describe("human report", () => {
  it("shows every partition, segment line, refusal message and a summary; exit 4", async () => {
    const dirs = SCENARIOS.map((s) => samples.get(s.name)!.dir);
    const [human, json, brief] = await Promise.all([
      runCli(["scan", ...dirs, "--verbose", "--all"]),
      runCli(["scan", ...dirs, "--json"]),
      runCli(["scan", ...dirs]),
    ]);
    expect(human.code).toBe(4);
    expect(json.code).toBe(4);
    expect(brief.code).toBe(4);
    const report = parseReport(json);
    expect(human.stdout).not.toMatch(/\x1b\[/);
    // Problems first: without --all the clean partitions are a count, each problem a short line and its next step.
    const clean = report.partitions.filter((partition) => partition.verdict === "clean");
    expect(brief.stdout).toContain(`${clean.length} clean partitions (--all lists them)`);
    for (const partition of report.partitions) {
      if (partition.verdict === "clean") expect(brief.stdout).not.toContain(`${partition.path}  `);
      else expect(brief.stdout).toContain(`${partition.path}  `);
      if (partition.refusal) expect(brief.stdout).toContain(`  ${partition.refusal.code}: `);
    }
    for (const partition of report.partitions) {
      expect(human.stdout).toContain(partition.path);
      if (partition.refusal) expect(human.stdout).toContain(partition.refusal.message);
      for (const segment of partition.segments) expect(human.stdout).toContain(segment.logPath.slice(segment.logPath.lastIndexOf("/") + 1));
    }
    const s = report.summary;
    expect(human.stdout).toContain(
      `${s.partitions} partitions: ${s.clean} clean, ${s.repairable} repairable, ${s.refused} refused, ${s.failed} failed`,
    );
    expect(human.stdout).toMatch(/torn-tail\s+cut at [\d,]+: residue .* no survivor/);
    expect(human.stdout).toContain("segscan repair");
  });

  it("colours only when asked (FORCE_COLOR) and never with NO_COLOR", async () => {
    const dir = samples.get("torn-tail")!.dir;
    const [forced, none, json] = await Promise.all([
      runCli(["scan", dir, "--concurrency", "1"], { FORCE_COLOR: "1" }),
      runCli(["scan", dir, "--concurrency", "1"], { FORCE_COLOR: "1", NO_COLOR: "1" }),
      runCli(["scan", dir, "--json", "--concurrency", "1"], { FORCE_COLOR: "1" }),
    ]);
    expect(forced.code, forced.stderr).toBe(4);
    expect(forced.stdout).toMatch(/\x1b\[/);
    expect(none.stdout).not.toMatch(/\x1b\[/);
    expect(json.stdout).not.toMatch(/\x1b\[/);
    const strip = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, "").replace(/read in .*$/m, "");
    expect(strip(forced.stdout)).toBe(strip(none.stdout));
  });

  it("a clean data dir exits 0 and prints no progress bar off a TTY", async () => {
    const run = await runCli(["scan", samples.get("clean")!.dir]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("2 partitions: 2 clean, 0 repairable, 0 refused, 0 failed");
  });
});
