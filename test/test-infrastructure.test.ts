/**
 * The test run's own machinery: the global setup (test/setup/global.ts) builds
 * before any test runs, so the test files that import dist/ never test a stale
 * build, and gives the run a temp dir; the fixture helper removes its temp dirs.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BUILD_OUTPUTS, staleBuildReason } from "./setup/global.js";
import { type Run, spawnBounded } from "./helpers/cli.js";
import { removeTempDirs, tempDataDir, tempPartition } from "./helpers/fixtures.js";

async function runBounded(command: string, args: string[], options: Parameters<typeof spawnBounded>[2]): Promise<Run> {
  return await (await spawnBounded(command, args, options)).done;
}

describe("build freshness", () => {
  it("dist/ is newer than every source when the tests run", () => {
    expect(staleBuildReason()).toBeNull();
  });

  it("calls a build stale when a source is newer than an output, or an output is missing", () => {
    const project = tempDataDir();
    const file = (path: string, mtimeSeconds: number): void => {
      mkdirSync(join(project, path, ".."), { recursive: true });
      writeFileSync(join(project, path), "x");
      utimesSync(join(project, path), mtimeSeconds, mtimeSeconds);
      utimesSync(join(project, path, ".."), 1000, 1000);
    };
    file("src/index.ts", 1000);
    file("assembly/index.ts", 1000);
    expect(staleBuildReason(project)).toBe("dist/segscan.wasm is missing");
    for (const output of BUILD_OUTPUTS) file(output, 2000);
    expect(staleBuildReason(project)).toBeNull();
    file("src/index.ts", 3000);
    expect(staleBuildReason(project)).toBe("src changed after the last build");
  });
});

describe("run temp directory", () => {
  it("is the run's own, removed by the global setup's teardown", async () => {
    const { tmpdir } = await import("node:os");
    expect(tmpdir()).toMatch(/segscan-vitest-[^/]+$/);
  });
});

describe("temp directories", () => {
  it("tempDataDir's directories are removed by the helper's afterAll (removeTempDirs)", () => {
    const dataDir = tempDataDir();
    const partition = tempPartition(3);
    writeFileSync(join(partition, "x"), "data");
    expect(existsSync(dataDir) && existsSync(partition)).toBe(true);
    removeTempDirs();
    expect(existsSync(dataDir)).toBe(false);
    expect(existsSync(partition)).toBe(false);
  });
});

describe("one version", () => {
  it("the version is written only in package.json: no source repeats it", async () => {
    const { readFileSync, readdirSync, statSync } = await import("node:fs");
    const root = new URL("..", import.meta.url).pathname;
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? sources(join(dir, name)) : [join(dir, name)]));
    const repeating = [...sources(join(root, "src")), ...sources(join(root, "bench"))].filter((path) =>
      readFileSync(path, "utf8").includes(`"${manifest.version}"`),
    );
    expect(repeating).toEqual([]);
  });
});

describe("clean build", () => {
  it("every compiled module in dist/ has its source: a removed source leaves no output behind", async () => {
    const { readdirSync, statSync } = await import("node:fs");
    const root = new URL("..", import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
    const orphans = [...files(join(root, "dist", "src")), ...files(join(root, "dist", "bench"))]
      .filter((path) => path.endsWith(".js"))
      .map((path) => path.slice(join(root, "dist").length + 1).replace(/\.js$/, ".ts"))
      .filter((source) => !existsSync(join(root, source)));
    expect(orphans).toEqual([]);
  });
});

describe("the browser tests in CI", () => {
  it(".ci/run requires them: it exports SEGSCAN_REQUIRE_BROWSER=1 before the tests run", () => {
    const script = readFileSync(fileURLToPath(new URL("../.ci/run", import.meta.url)), "utf8");
    const exported = script.indexOf("export SEGSCAN_REQUIRE_BROWSER=1\n");
    expect(exported).toBeGreaterThan(0);
    expect(exported).toBeLessThan(script.indexOf("npm test"));
  });

  it("without Chromium they fail when SEGSCAN_REQUIRE_BROWSER=1, and skip (saying so) when it is not set", async () => {
    const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST")));
    const run = (required: boolean): Promise<Run> =>
      runBounded(process.execPath, [vitest, "run", "test/html-report.test.ts", "-t", "Chromium"], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        env: {
          ...env,
          SEGSCAN_CHROMIUM: "/nonexistent/chromium",
          ...(required ? { SEGSCAN_REQUIRE_BROWSER: "1" } : { SEGSCAN_REQUIRE_BROWSER: "" }),
        },
      });
    const [required, optional] = [await run(true), await run(false)];
    expect(required.code, required.stdout + required.stderr).not.toBe(0);
    expect(required.stdout + required.stderr).toContain("SEGSCAN_REQUIRE_BROWSER=1 requires the browser tests");
    expect(optional.code, optional.stdout + optional.stderr).toBe(0);
    expect(optional.stdout + optional.stderr).toContain("html-report browser tests SKIPPED: no Chromium at /nonexistent/chromium");
  }, 240_000);
});
