/**
 * The npm tarball holds what runs and nothing it does not need: pack it,
 * install it into a throwaway consumer, import it, scan, run the CLI, and run
 * the README's library example (extracted from README.md, so the two cannot drift).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { validateJsonReport } from "../src/report/json-validate.js";
import { buildChain, concat, indexAt, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
/** The data dir the README's example names; the test points it at a temp data dir. */
const README_DATA_DIR = "/var/lib/iggy";

/** The README's ```ts blocks that import the package by name (the Deno one imports a path). */
function readmeLibrarySnippets(readme: string): string[] {
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!).filter((code) => /from "segscan"/.test(code));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("the packed tarball", () => {
  let consumer = "";
  let files: string[] = [];

  beforeAll(() => {
    const packDir = tempDataDir();
    // The global setup built dist/ already; skip lifecycle scripts.
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], { cwd: root, encoding: "utf8" }),
    );
    files = packed[0].files.map((file: { path: string }) => file.path);
    consumer = tempDataDir();
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", type: "module", private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(packDir, packed[0].filename)], {
      cwd: consumer,
      stdio: "pipe",
    });
  }, 180_000);

  it("holds the compiled package, its LICENSE, and no sources, maps or map references", () => {
    expect(files).toContain("dist/segscan.wasm");
    expect(files).toContain("dist/src/index.js");
    expect(files).toContain("dist/src/index.d.ts");
    expect(files).toContain("dist/src/cli/main.js");
    expect(files).toContain("dist/src/node/scan-worker.js");
    expect(files).toContain("LICENSE");
    expect(files.filter((file) => /^(test|assembly|bench\/.*\.ts|src\/.*\.ts$)/.test(file) && !file.endsWith(".d.ts"))).toEqual([]);
    expect(files.some((file) => file.endsWith(".map") || file.endsWith(".wat"))).toBe(false);
    const installed = join(consumer, "node_modules", "segscan");
    const referencingMaps = filesUnder(join(installed, "dist")).filter(
      (path) => /\.(js|d\.ts)$/.test(path) && readFileSync(path, "utf8").includes("sourceMappingURL"),
    );
    expect(referencingMaps).toEqual([]);
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toMatch(/Apache License\s+Version 2\.0/);
  });

  it("imports, scans, and runs `npx segscan --help` and `--version` (the version is package.json's)", () => {
    const partition = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(partition, 0n, concat([chain.log, new Uint8Array(1000)]), indexAt(chain, [0]));
    writeFileSync(
      join(consumer, "check.mjs"),
      `
      import { createEngine, scanPartition, SEGSCAN_VERSION } from "segscan";
      const engine = await createEngine();
      const report = await scanPartition(process.argv[2], { engine });
      console.log(JSON.stringify({ engine: report.engine, verdict: report.partitions[0].verdict, end: String(report.partitions[0].segments[0].endOffset), version: report.segscan, exported: SEGSCAN_VERSION }));
    `,
    );
    const output = JSON.parse(execFileSync("node", ["check.mjs", partition], { cwd: consumer, encoding: "utf8" }));
    expect(output).toEqual({ engine: "wasm", verdict: "repairable", end: "6", version: manifest.version, exported: manifest.version });

    const help = execFileSync("npx", ["--no-install", "segscan", "--help"], { cwd: consumer, encoding: "utf8" });
    expect(help).toMatch(/Usage: segscan/);
    expect(help).toMatch(/scan/);
    expect(execFileSync("npx", ["--no-install", "segscan", "--version"], { cwd: consumer, encoding: "utf8" }).trim()).toBe(
      manifest.version,
    );
  });

  it("runs the README's library example: it type-checks against the packed types, scans, repairs and restores", () => {
    const snippets = readmeLibrarySnippets(readFileSync(join(root, "README.md"), "utf8"));
    expect(snippets.length).toBeGreaterThan(0);
    const dataDir = tempDataDir();
    const partition = tempPartition(1, dataDir);
    const chain = buildChain({ counts: [3, 4, 5] });
    const torn = concat([chain.log, new Uint8Array(700)]);
    writeSegment(partition, 0n, torn, indexAt(chain, [0, 1]));
    const logPath = join(partition, "00000000000000000000.log");

    snippets.forEach((snippet, i) => {
      const code = snippet.replaceAll(README_DATA_DIR, dataDir);
      const name = `readme-${i}.ts`;
      writeFileSync(join(consumer, name), code);
      // Type-check against the tarball's .d.ts (strict, as a TypeScript consumer would).
      execFileSync(
        process.execPath,
        [
          join(root, "node_modules", "typescript", "bin", "tsc"),
          "--noEmit",
          "--strict",
          "--skipLibCheck",
          "--target",
          "es2022",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--typeRoots",
          join(root, "node_modules", "@types"),
          "--types",
          "node",
          name,
        ],
        { cwd: consumer, encoding: "utf8" },
      );
      // The example uses no TypeScript-only syntax: run it as JavaScript.
      writeFileSync(join(consumer, `readme-${i}.mjs`), code);
      const stdout = execFileSync("node", [`readme-${i}.mjs`], { cwd: consumer, encoding: "utf8" });
      const lines = stdout
        .trim()
        .split("\n")
        .filter((line) => line.startsWith("{"));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(validateJsonReport(JSON.parse(line))).toEqual([]);
    });
    // applyRepair cut the torn tail, then restore put every byte back.
    expect(Buffer.compare(readFileSync(logPath), Buffer.from(torn))).toBe(0);
    expect(readdirSync(dataDir + "/streams/1/topics/1/partitions").sort()).toEqual(["1", "1.segscan"]);
  });
});
