/**
 * Start-up loads nothing before it is needed: which modules the
 * built CLI and package entry load, recorded by a module resolve hook in the
 * child process. Timing belongs in bench/; this checks the loading itself, and
 * that what now loads on first use (the report schema, msgpack) still works.
 * The CLI runs here from its compiled modules (SEGSCAN_NO_BUNDLE=1): its
 * bundle holds the same modules in one file, each evaluated on first use as
 * here (test/bundle.test.ts checks the bundle).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBlockingScanFs } from "../src/io/fs.js";
import { discoverTargets } from "../src/recovery/targets.js";
import { CLI } from "./helpers/cli.js";

const ENTRY = fileURLToPath(new URL("../dist/src/index.js", import.meta.url));

let dir: string;
let hooks: string;
let partition: string;
let nodeRoot: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "segscan-startup-"));
  // Resolve hooks run on their own thread: each resolved URL is appended to the log the env names.
  const resolveHook = join(dir, "resolve-hook.mjs");
  writeFileSync(
    resolveHook,
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.SEGSCAN_LOAD_LOG, result.url + "\\n");
  return result;
}
`,
  );
  hooks = join(dir, "register.mjs");
  writeFileSync(hooks, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(resolveHook).href)});\n`);
  nodeRoot = join(dir, "data");
  const gen = spawnSync(process.execPath, [CLI, "gen", nodeRoot, "--size", "tiny", "--node", "--json"], { encoding: "utf8" });
  expect(gen.status).toBe(0);
  partition = (await discoverTargets(nodeRoot, nodeBlockingScanFs))[0]!.path;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files a node process loads (ESM imports; `require` of package code is caught through its own module list), and its output. */
function loaded(args: readonly string[]): { urls: string[]; stdout: string; status: number | null; stderr: string } {
  const log = join(dir, `load-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, "");
  const run = spawnSync(process.execPath, ["--import", hooks, ...args], {
    encoding: "utf8",
    // The compiled modules, not the bundle (which holds them all in one file): which of them load is what is checked.
    env: { ...process.env, SEGSCAN_LOAD_LOG: log, NO_COLOR: "1", SEGSCAN_NO_BUNDLE: "1" },
  });
  const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { urls, stdout: run.stdout, stderr: run.stderr, status: run.status };
}

const HEAVY = {
  engine: /\/dist\/src\/engine\/(ts|wasm)\//,
  schema: /@sinclair\/typebox|\/report\/(schema|node-schema|json-validate)\.js/,
  msgpack: /@msgpack\/msgpack/,
  html: /\/report\/html\//,
  repair: /\/dist\/src\/repair\//,
  gen: /\/dist\/src\/gen\//,
  scanner: /\/dist\/src\/(recovery\/scan|node\/scan-path)\.js/,
  planner: /\/dist\/src\/repair\/(plan|plan-partition|plan-node|plan-salvage|runner|steps|restore|preflight)\.js/,
  scrubber: /\/dist\/src\/scrub\/scrub\.js/,
  merger: /\/dist\/src\/fleet\/(index|run|merge|source)\.js/,
};

function present(urls: readonly string[], ...kinds: (keyof typeof HEAVY)[]): string[] {
  return kinds.filter((kind) => urls.some((url) => HEAVY[kind].test(url)));
}

describe("start-up loads nothing before it is needed", () => {
  it("`segscan --version` loads only the version", () => {
    const run = loaded([CLI, "--version"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(run.urls.filter((url) => url.includes("/dist/src/")).map((url) => url.replace(/.*\/dist\/src\//, ""))).toEqual([
      "cli/main.js",
      "version.js",
    ]);
    expect(run.urls.filter((url) => url.includes("node_modules"))).toEqual([]);
  });

  it("`segscan --help` loads no engine, schema, msgpack, scanner, renderer, repair or generator", () => {
    const run = loaded([CLI, "--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Usage: segscan");
    expect(present(run.urls, "engine", "schema", "msgpack", "html", "repair", "gen", "scanner")).toEqual([]);
  });

  it("`segscan scan` loads the scanner and engine, but no schema, msgpack, renderer, repair or generator", () => {
    const run = loaded([CLI, "scan", partition, "--no-progress"]);
    expect(run.status).toBe(0);
    expect(present(run.urls, "engine", "scanner")).toEqual(["engine", "scanner"]);
    expect(present(run.urls, "schema", "msgpack", "html", "repair", "gen")).toEqual([]);
  });

  it("`scan --html` loads the renderer; `report --html` validates with the schema loaded on first use", () => {
    const page = join(dir, "page.html");
    const json = join(dir, "scan.json");
    const scan = loaded([CLI, "scan", partition, "--no-progress", "--json", "--html", page]);
    expect(scan.status).toBe(0);
    expect(present(scan.urls, "html")).toEqual(["html"]);
    writeFileSync(json, scan.stdout);
    const report = loaded([CLI, "report", json, "--html", join(dir, "again.html")]);
    expect(report.status).toBe(0);
    // The schema loads through require (not seen by the resolve hook): the page was drawn, so the report validated.
    expect(present(report.urls, "html")).toEqual(["html"]);
  });

  it("importing the package loads no schema, msgpack, planner, scrubber or fleet merger; each loads on first use and works; the schema objects are the second entry's", () => {
    const script = `
      const segscan = await import(${JSON.stringify(pathToFileURL(ENTRY).href)});
      const before = process.env.SEGSCAN_LOAD_LOG;
      const { readFileSync } = await import("node:fs");
      const atImport = readFileSync(before, "utf8");
      const report = await segscan.scanPath(${JSON.stringify(nodeRoot)}, { concurrency: 1 });
      const json = JSON.parse(JSON.stringify(segscan.toJsonReport(report)));
      const problems = segscan.validateJsonReport(json);
      const nodeProblems = segscan.validateNodeJson(json.node);
      const broken = segscan.validateJsonReport({ ...json, summary: { ...json.summary, clean: -1 } });
      // The schema objects are the second entry's (package.json "exports": segscan/schemas), loaded when imported.
      const schemas = await import("segscan/schemas");
      const schemaKeys = Object.keys(schemas.NodeJsonSchema).sort().join(",");
      const schemaNames = Object.keys(schemas).sort();
      const inEntry = ["NodeJsonSchema", "FleetReportSchema"].filter((name) => name in segscan);
      // The planner, the scrubber and the fleet merger load on first use too, and answer as their modules do.
      const plan = await segscan.planRepair(report);
      const planned = { empty: segscan.isEmptyPlan(plan), same: JSON.stringify(segscan.parsePlan(JSON.parse(JSON.stringify(plan)))) === JSON.stringify(plan) };
      const scrubbed = [];
      for await (const event of segscan.scrub(${JSON.stringify(nodeRoot)}, { state: null, rate: 1e12 })) scrubbed.push(event.type);
      const repairModule = await import(${JSON.stringify(pathToFileURL(ENTRY.replace("index.js", "repair/index.js")).href)});
      const valueNames = (module) => Object.keys(module).filter((key) => typeof module[key] !== "undefined").sort();
      const repairNames = valueNames(repairModule).filter((name) => !(name in segscan));
      const entryNames = valueNames(segscan);
      const exitCode = segscan.fleetExitCode({ lost: 1, diverged: 0, identityConflicts: 0, metadataOpsLost: "0", failedReplicas: 0 });
      const { NodeJsonSchema } = await import(${JSON.stringify(pathToFileURL(ENTRY.replace("index.js", "report/node-schema.js")).href)});
      console.log(JSON.stringify({
        atImport, problems, nodeProblems, broken: broken.length,
        schemaKeys, realKeys: Object.keys(NodeJsonSchema).sort().join(","),
        sameShape: schemas.NodeJsonSchema === NodeJsonSchema, schemaNames, inEntry,
        snapshot: report.node?.metadata.snapshot?.partitions ?? null,
        planned, scrubbed, repairNames, entryNames, exitCode,
      }));
    `;
    const run = loaded(["--input-type=module", "-e", script]);
    expect(run.stderr).toBe("");
    const result = JSON.parse(run.stdout) as {
      atImport: string;
      problems: string[];
      nodeProblems: string[];
      broken: number;
      schemaKeys: string;
      realKeys: string;
      sameShape: boolean;
      schemaNames: string[];
      inEntry: string[];
      snapshot: number | null;
      planned: { empty: boolean; same: boolean };
      scrubbed: string[];
      repairNames: string[];
      entryNames: string[];
      exitCode: number;
    };
    const atImport = result.atImport.split("\n").filter(Boolean);
    expect(present(atImport, "schema", "msgpack", "html", "planner", "scrubber", "merger")).toEqual([]);
    // The tiny generated node is clean: an empty plan, which round-trips.
    expect(result.planned).toEqual({ empty: true, same: true });
    expect(result.scrubbed).toContain("pass-complete");
    // The entry exports repair's documented calls (docs/interfaces.md §9.1), not its internals or the crash tests' seams.
    const documented = [
      "planRepair",
      "parsePlan",
      "applyRepair",
      "restore",
      "findRestorable",
      "planSalvage",
      "planForget",
      "forget",
      "clearLostOffsets",
      "readJournal",
    ];
    expect(documented.filter((name) => result.repairNames.includes(name))).toEqual([]);
    const seams = [
      "createFaultyFs",
      "InjectedFault",
      "nodeRepairFs",
      "refuseLoneSegment",
      "planScanOptions",
      "acquireLock",
      "findWriters",
      "firstDifference",
    ];
    expect(seams.filter((name) => result.entryNames.includes(name))).toEqual([]);
    expect(result.exitCode).toBe(4);
    expect(atImport.filter((url) => url.includes("node_modules"))).toEqual([]);
    expect(result.problems).toEqual([]);
    expect(result.nodeProblems).toEqual([]);
    expect(result.broken).toBeGreaterThan(0);
    expect(result.schemaKeys).toBe(result.realKeys);
    expect(result.sameShape).toBe(true);
    expect(result.schemaNames).toEqual([
      "FleetReportSchema",
      "NdjsonPartitionLineSchema",
      "NdjsonSummaryLineSchema",
      "NodeJsonSchema",
      "ScanReportSchema",
    ]);
    expect(result.inEntry).toEqual([]);
    // The snapshot was decoded (msgpack, loaded on first use): it lists the two partitions.
    expect(result.snapshot).toBe(2);
  });
});
