/**
 * Vitest global setup, once per run before any test file loads:
 *
 * 1. Build when `dist/` is missing or older than its sources. About 40% of the
 *    test files import `dist/` (the pool's workers, the CLI and the packed
 *    tarball only exist compiled), so a stale build would test old code.
 *    `npm test` is plain `vitest run`: this is its only build step.
 * 2. Give the run its own temp directory (TMPDIR, inherited by the test
 *    workers and every CLI process they spawn) and remove it at the end, so a
 *    temp directory a test forgets to remove never outlives the run; and its
 *    own directory for the CLI's code cache (SEGSCAN_CODE_CACHE).
 */
import { spawnSync } from "node:child_process";
import { type Stats, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** What the build reads: a change to any of these (or a file added/removed in a directory) makes dist/ stale. */
const BUILD_INPUTS = ["src", "bench", "assembly", "scripts/bundle.mjs", "package.json", "tsconfig.json", "asconfig.json"];
/** What the build writes last in each part (wasm, TypeScript, the bundles); the oldest one dates the build. */
export const BUILD_OUTPUTS = [
  "dist/segscan.wasm",
  "dist/src/index.js",
  "dist/src/cli/main.js",
  "dist/src/node/scan-worker.js",
  "dist/segscan-cli.cjs",
  "dist/segscan.js",
];

function newestMtimeMs(path: string): number {
  let info: Stats;
  try {
    info = statSync(path);
  } catch {
    return 0; // an input the project does not have (yet) cannot be newer than the build
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(join(path, name)));
  return newest;
}

/** Why dist/ must be rebuilt, or null when every output is newer than every input. */
export function staleBuildReason(projectRoot: string = root): string | null {
  let oldestOutput = Number.POSITIVE_INFINITY;
  for (const output of BUILD_OUTPUTS) {
    try {
      oldestOutput = Math.min(oldestOutput, statSync(join(projectRoot, output)).mtimeMs);
    } catch {
      return `${output} is missing`;
    }
  }
  for (const input of BUILD_INPUTS) {
    if (newestMtimeMs(join(projectRoot, input)) > oldestOutput) return `${input} changed after the last build`;
  }
  return null;
}

export default function setup(): () => void {
  const reason = staleBuildReason();
  if (reason !== null) {
    console.log(`[global setup] building (${reason})`);
    const build = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
    if (build.status !== 0)
      throw new Error(`npm run build failed (exit ${build.status ?? build.signal}); the tests would run a stale dist/`);
  }
  const runTemp = mkdtempSync(join(tmpdir(), "segscan-vitest-"));
  // The CLI's code cache (src/cli/code-cache.ts) in a directory of the run's own, not the user's cache.
  const codeCache = mkdtempSync(join(tmpdir(), "segscan-vitest-code-cache-"));
  process.env.SEGSCAN_CODE_CACHE = codeCache;
  process.env.TMPDIR = runTemp;
  return () => {
    rmSync(codeCache, { recursive: true, force: true });
    // Tests remove their own temp dirs; whatever is left here leaked, and is named so it can be fixed.
    const left = readdirSync(runTemp);
    if (left.length > 0)
      console.log(
        `[global teardown] removing ${left.length} temp entries tests left behind: ${left.slice(0, 10).join(", ")}${left.length > 10 ? ", …" : ""}`,
      );
    rmSync(runTemp, { recursive: true, force: true });
  };
}
