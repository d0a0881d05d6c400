/**
 * The npm tarball holds what runs and nothing it does not need: pack it,
 * install it into a throwaway consumer, import it, scan, and run the CLI.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildChain, concat, indexAt, tempPartition, writeSegment } from "./helpers/fixtures.js";

const root = fileURLToPath(new URL("..", import.meta.url));

describe("the packed tarball", () => {
  it("installs into a consumer project that imports it, scans, and runs `npx segscan --help`", () => {
    const packDir = mkdtempSync(join(tmpdir(), "segscan-pack-"));
    // The build already ran (npm test builds first); skip lifecycle scripts.
    const packed = JSON.parse(execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], { cwd: root, encoding: "utf8" }));
    const files: string[] = packed[0].files.map((file: { path: string }) => file.path);
    expect(files).toContain("dist/segscan.wasm");
    expect(files).toContain("dist/src/index.js");
    expect(files).toContain("dist/src/index.d.ts");
    expect(files).toContain("dist/src/cli/main.js");
    expect(files).toContain("dist/src/recovery/worker.js");
    expect(files.filter((file) => /^(test|assembly|bench\/.*\.ts|src\/.*\.ts$)/.test(file) && !file.endsWith(".d.ts"))).toEqual([]);
    expect(files.some((file) => file.endsWith(".map") || file.endsWith(".wat"))).toBe(false);

    const consumer = mkdtempSync(join(tmpdir(), "segscan-consumer-"));
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", type: "module", private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(packDir, packed[0].filename)], { cwd: consumer, stdio: "pipe" });

    const partition = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(partition, 0n, concat([chain.log, new Uint8Array(1000)]), indexAt(chain, [0]));
    writeFileSync(join(consumer, "check.mjs"), `
      import { createEngine, scanPartition } from "segscan";
      const engine = await createEngine();
      const report = await scanPartition(process.argv[2], { engine });
      console.log(JSON.stringify({ engine: report.engine, verdict: report.partitions[0].verdict, end: String(report.partitions[0].segments[0].endOffset) }));
    `);
    const output = JSON.parse(execFileSync("node", ["check.mjs", partition], { cwd: consumer, encoding: "utf8" }));
    expect(output).toEqual({ engine: "wasm", verdict: "repairable", end: "6" });

    const help = execFileSync("npx", ["--no-install", "segscan", "--help"], { cwd: consumer, encoding: "utf8" });
    expect(help).toMatch(/Usage: segscan/);
    expect(help).toMatch(/scan/);
  }, 180_000);
});
