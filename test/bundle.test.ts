/**
 * The CLI runs from its bundle, compiled from V8's code cache when one is kept
 * (docs/benchmarks.md "Cold code", src/cli/code-cache.ts): the bundle answers
 * as the compiled modules do, the cache is written once per command, reused,
 * and a damaged, rejected or unwritable cache costs only the cache, never the
 * output. Which modules load is seen by a module resolve hook in the child.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI } from "./helpers/cli.js";
import { tempDataDir } from "./helpers/fixtures.js";

const BUNDLE = fileURLToPath(new URL("../dist/segscan-cli.cjs", import.meta.url));
const PACKAGE_BUNDLE = fileURLToPath(new URL("../dist/segscan.js", import.meta.url));

let nodeRoot: string;
let hooks: string;

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The files of this package the process loaded as modules (dist/… paths). */
  loaded: string[];
}

/** `segscan <args>` with `env` (the cache directory, or none), its output and the package modules it loaded. */
function segscan(args: readonly string[], env: NodeJS.ProcessEnv, nodeFlags: readonly string[] = []): Result {
  const log = join(tempDataDir(), "load.log");
  writeFileSync(log, "");
  const base = { ...process.env };
  delete base.SEGSCAN_CODE_CACHE;
  delete base.FORCE_COLOR;
  const run = spawnSync(process.execPath, [...nodeFlags, "--import", hooks, CLI, ...args], {
    encoding: "utf8",
    env: { ...base, NO_COLOR: "1", SEGSCAN_LOAD_LOG: log, ...env },
  });
  const loaded = readFileSync(log, "utf8")
    .split("\n")
    .filter((url) => url.includes("/dist/"))
    .map((url) => url.replace(/.*\/dist\//, "dist/"));
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, loaded };
}

/** The cache files in `dir` with their bytes and modification times. */
function cacheFiles(dir: string): { name: string; bytes: Buffer; mtimeMs: number }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((name) => ({ name, bytes: readFileSync(join(dir, name)), mtimeMs: statSync(join(dir, name)).mtimeMs }));
}

beforeAll(() => {
  const dir = tempDataDir();
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
  expect(gen.status, gen.stderr).toBe(0);
});

describe("the bundled CLI", () => {
  it("the build wrote the CLI's and the package entry's bundles", () => {
    expect(existsSync(BUNDLE)).toBe(true);
    expect(existsSync(PACKAGE_BUNDLE)).toBe(true);
  });

  it("runs the bundle, and answers as the compiled modules do (worker threads too)", () => {
    const off = { SEGSCAN_CODE_CACHE: "off" };
    for (const args of [
      ["scan", nodeRoot, "--no-progress", "--json", "--concurrency", "2"],
      ["scan", nodeRoot, "--no-progress", "--deep", "--concurrency", "1"],
      ["--help"],
    ]) {
      const bundled = segscan(args, off);
      const modules = segscan(args, { ...off, SEGSCAN_NO_BUNDLE: "1" });
      expect(bundled.status, bundled.stderr).toBe(modules.status);
      expect(bundled.stderr).toBe(modules.stderr);
      expect(normalized(bundled.stdout)).toBe(normalized(modules.stdout));
      expect(modules.loaded.length).toBeGreaterThan(5);
      // On one thread nothing but the loader loads from dist/src (worker threads run the compiled worker entries).
      if (!args.includes("2")) expect(bundled.loaded).toEqual(["dist/src/cli/main.js", "dist/src/cli/code-cache.js"]);
    }
  });

  it("the package entry's bundle exports what the compiled entry does, and scans, validates and plans as it does", () => {
    const script = `
      const bundled = await import(${JSON.stringify(pathToFileURL(PACKAGE_BUNDLE).href)});
      const compiled = await import(${JSON.stringify(pathToFileURL(fileURLToPath(new URL("../dist/src/index.js", import.meta.url))).href)});
      const answers = async (segscan) => {
        const report = await segscan.scanPath(${JSON.stringify(nodeRoot)}, { concurrency: 2 });
        const json = JSON.parse(JSON.stringify(segscan.toJsonReport(report)));
        const problems = segscan.validateJsonReport(json);
        delete json.summary.elapsedMs;
        const plan = await segscan.planRepair(report);
        return { names: Object.keys(segscan).sort(), json, problems, empty: segscan.isEmptyPlan(plan),
          snapshot: report.node?.metadata.snapshot?.partitions ?? null, version: segscan.SEGSCAN_VERSION };
      };
      console.log(JSON.stringify([await answers(bundled), await answers(compiled)]));
    `;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    const [bundled, compiled] = JSON.parse(run.stdout) as { names: string[]; problems: string[]; snapshot: number }[];
    expect(bundled).toEqual(compiled);
    expect(bundled!.names.length).toBeGreaterThan(50);
    expect(bundled!.problems).toEqual([]);
    expect(bundled!.snapshot).toBe(2);
  });

  it("`--version` still answers without the bundle", () => {
    const run = segscan(["--version"], { SEGSCAN_CODE_CACHE: "off" });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(run.loaded).toEqual(["dist/src/cli/main.js", "dist/src/version.js"]);
  });
});

describe("V8's code cache for the bundle", () => {
  const scan = (): string[] => ["scan", nodeRoot, "--no-progress", "--json", "--concurrency", "1"];

  it("is written by the first run, reused unchanged by the next, and extended once for another command", () => {
    const cache = join(tempDataDir(), "cache");
    const first = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
    expect(first.status, first.stderr).toBe(0);
    const written = cacheFiles(cache);
    expect(written.map((file) => file.name)).toEqual([expect.stringMatching(/^cli-[0-9a-f]{32}\.v8cache$/)]);
    // Reused: V8 took the code (a rejected file would be written again) and the run's output is the same.
    const second = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
    expect(normalized(second.stdout)).toBe(normalized(first.stdout));
    expect(cacheFiles(cache)).toEqual(written);
    // Another command's code joins the file once; after that it stays as it is.
    expect(segscan(["--help"], { SEGSCAN_CODE_CACHE: cache }).status).toBe(0);
    const extended = cacheFiles(cache);
    expect(extended[0]!.bytes.equals(written[0]!.bytes)).toBe(false);
    for (const args of [["--help"], scan()]) expect(segscan(args, { SEGSCAN_CODE_CACHE: cache }).status).toBe(0);
    expect(cacheFiles(cache)).toEqual(extended);
  });

  it("a damaged file (torn, altered, or not a cache file) is ignored with the same output, and replaced", () => {
    const cache = join(tempDataDir(), "cache");
    const reference = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
    const [file] = cacheFiles(cache);
    const path = join(cache, file!.name);
    const damages: [string, (bytes: Buffer) => Buffer][] = [
      [
        "a flipped byte in V8's data",
        (bytes) => Buffer.from(bytes.map((byte, i) => (i === Math.floor(bytes.length / 2) ? byte ^ 0xff : byte))),
      ],
      ["torn", (bytes) => bytes.subarray(0, Math.floor(bytes.length / 3))],
      ["not a cache file", () => Buffer.from("not a cache file\n")],
    ];
    for (const [what, damage] of damages) {
      writeFileSync(path, damage(file!.bytes));
      const run = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
      expect(run.status, `${what}: ${run.stderr}`).toBe(reference.status);
      expect(normalized(run.stdout), what).toBe(normalized(reference.stdout));
      expect(run.stderr, what).toBe("");
      // Replaced by a good file, which the next run reuses as it is.
      const replaced = cacheFiles(cache);
      expect(replaced.length, what).toBe(1);
      expect(replaced[0]!.bytes.length, what).toBeGreaterThan(1000);
      expect(normalized(segscan(scan(), { SEGSCAN_CODE_CACHE: cache }).stdout)).toBe(normalized(reference.stdout));
      expect(cacheFiles(cache), what).toEqual(replaced);
    }
  });

  it("data V8 rejects (made under other V8 flags) is ignored with the same output, and replaced", () => {
    const cache = join(tempDataDir(), "cache");
    const other = join(tempDataDir(), "other");
    const reference = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
    const [ours] = cacheFiles(cache);
    // The same bundle's cache made under another V8 flag, put where this runtime looks: V8 refuses it (cachedDataRejected).
    expect(segscan(scan(), { SEGSCAN_CODE_CACHE: other }, ["--max-lazy"]).status).toBe(reference.status);
    const [theirs] = cacheFiles(other);
    expect(theirs!.name).not.toBe(ours!.name);
    writeFileSync(join(cache, ours!.name), theirs!.bytes);
    const run = segscan(scan(), { SEGSCAN_CODE_CACHE: cache });
    expect(normalized(run.stdout)).toBe(normalized(reference.stdout));
    expect(run.stderr).toBe("");
    const replaced = cacheFiles(cache);
    expect(replaced[0]!.bytes.equals(theirs!.bytes)).toBe(false);
    expect(normalized(segscan(scan(), { SEGSCAN_CODE_CACHE: cache }).stdout)).toBe(normalized(reference.stdout));
    expect(cacheFiles(cache)).toEqual(replaced);
  });

  it("an unwritable place, `off`, or a place inside the scanned directory: no cache, the same output", () => {
    const reference = segscan(scan(), { SEGSCAN_CODE_CACHE: "off" });
    const notADirectory = join(tempDataDir(), "a-file");
    writeFileSync(notADirectory, "x");
    const unwritable = segscan(scan(), { SEGSCAN_CODE_CACHE: join(notADirectory, "cache") });
    expect(normalized(unwritable.stdout)).toBe(normalized(reference.stdout));
    expect(unwritable.stderr).toBe("");
    expect(unwritable.status).toBe(reference.status);
    // Inside the data the scan reads: nothing is written there.
    const inside = join(nodeRoot, "segscan-cache");
    const scanned = segscan(scan(), { SEGSCAN_CODE_CACHE: inside });
    expect(normalized(scanned.stdout)).toBe(normalized(reference.stdout));
    expect(existsSync(inside)).toBe(false);
    // Neither the user's cache directory when the cache is off.
    const home = tempDataDir();
    expect(normalized(segscan(scan(), { SEGSCAN_CODE_CACHE: "off", HOME: home, XDG_CACHE_HOME: "" }).stdout)).toBe(
      normalized(reference.stdout),
    );
    expect(readdirSync(home)).toEqual([]);
    // By default it is the user's cache directory.
    expect(normalized(segscan(scan(), { HOME: home, XDG_CACHE_HOME: "" }).stdout)).toBe(normalized(reference.stdout));
    expect(cacheFiles(join(home, ".cache", "segscan")).length).toBe(1);
  });
});

/** Output with the run's own timings taken out (`… in 0.01 s (7.1 MiB/s)`, `"elapsedMs": 3`). */
function normalized(text: string): string {
  return text
    .replace(/"(durationMs|elapsedMs|startedAt|finishedAt)":\s*("[^"]*"|[\d.]+)/g, '"$1":0')
    .replace(/ in [\d.]+ (s|ms)\b( \([\d.]+ [KMG]?i?B\/s\))?/g, " in T");
}
