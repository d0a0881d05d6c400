/**
 * The package version, read from the one place it is written: package.json.
 * The module sits at `src/version.ts` when run from source and at
 * `dist/src/version.js` when built or installed from the tarball, so the
 * manifest is looked for in the directories above this module, nearest first,
 * and accepted only when its name is segscan's. Plain `node:fs`, so it also
 * works under Deno (which needs `--allow-read` for the scan anyway).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "segscan";
/** `src/` → root is 1 level up, `dist/src/` → 2; one more level tolerates a nested layout. */
const MAX_LEVELS_UP = 3;

function readPackageVersion(): string {
  const tried: string[] = [];
  for (let level = 1; level <= MAX_LEVELS_UP; level++) {
    const url = new URL(`${"../".repeat(level)}package.json`, import.meta.url);
    const path = fileURLToPath(url);
    tried.push(path);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    const manifest = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (manifest.name === PACKAGE_NAME && typeof manifest.version === "string") return manifest.version;
  }
  throw new Error(`segscan: cannot find its package.json (looked at ${tried.join(", ")}); the installed package is incomplete`);
}

export const SEGSCAN_VERSION: string = readPackageVersion();
