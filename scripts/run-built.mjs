#!/usr/bin/env node
/**
 * `npm run demo` (and any script that wants the CLI): runs the built CLI,
 * building first only when the build is missing or older than a source file,
 * so a fresh `npm install` (whose `prepare` built everything) starts at once.
 * Usage: node scripts/run-built.mjs <segscan arguments…>
 */
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What the build reads: a change to any of these makes the build stale. */
export const BUILD_INPUTS = ["src", "assembly", "bench", "scripts/bundle.mjs", "package.json", "tsconfig.json", "asconfig.json"];
/** What the build writes and the CLI needs. */
export const BUILD_OUTPUTS = ["dist/src/cli/main.js", "dist/segscan-cli.cjs", "dist/segscan.wasm"];

/** Newest modification time under `path` (a file or a directory tree), or 0 when it is absent. */
export function newestMtimeMs(path) {
  let info;
  try {
    info = statSync(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(join(path, name)));
  return newest;
}

/** True when an output is missing or some input changed after the oldest output was written. */
export function buildIsStale(root) {
  let oldestOutput = Infinity;
  for (const output of BUILD_OUTPUTS) {
    const mtime = newestMtimeMs(join(root, output));
    if (mtime === 0) return true;
    oldestOutput = Math.min(oldestOutput, mtime);
  }
  return BUILD_INPUTS.some((input) => newestMtimeMs(join(root, input)) > oldestOutput);
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  // Ctrl-C reaches the CLI too (same process group); it reports and exits 32, and so do we.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  if (buildIsStale(root)) {
    process.stderr.write("segscan: the build is missing or older than the sources; building first (npm run build)\n");
    const built = await run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], root);
    if (built !== 0) process.exit(built);
  }
  process.exit(await run(process.execPath, [join(root, "dist/src/cli/main.js"), ...process.argv.slice(2)], root));
}
