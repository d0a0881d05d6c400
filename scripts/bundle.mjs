#!/usr/bin/env node
/**
 * The bundles (docs/benchmarks.md "Cold code"): after `tsc`, esbuild puts the
 * CLI and the package entry each in one file, so a run parses one script
 * instead of resolving and loading a hundred modules, and the CLI's bundle can
 * be compiled from V8's code cache (src/cli/code-cache.ts).
 *
 *   dist/segscan-cli.cjs   the CLI (entry src/cli/program.ts), CommonJS: run by
 *                          dist/src/cli/main.js through `vm.Script`, whose code
 *                          cache only takes classic scripts
 *   dist/segscan.js        the package entry (src/index.ts), an ES module: the
 *                          `exports` of package.json; its types stay dist/src/*.d.ts
 *
 * The package's dependencies are bundled too; only `node:` modules stay outside.
 * The modules written against their own location are rewritten here, on the
 * way into the bundle, so each keeps the URL it has in dist/src:
 *
 * - `import.meta.url` becomes the URL of the module's compiled file under
 *   dist/src (so `segscan.wasm`, `package.json` and the worker entries are
 *   found where they always are; the worker threads run dist/src, compiled);
 * - `requireFrom(import.meta.url, "./x.js")` (src/io/lazy.ts: the package
 *   entry's exports loaded on first use) becomes `require("./x.js")`, which
 *   esbuild bundles as a module evaluated on first use, and the top-level
 *   `await import(…)` beside it (for runtimes without `require(esm)`) is
 *   dropped: a classic script has no top-level await;
 * - `import(variable)` resolves from the module's compiled location.
 *
 * The build fails when one of these patterns is seen in a form it does not
 * rewrite, rather than ship a bundle that looks for files in the wrong place.
 */
import { readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");

/** What the rewritten `import.meta.url` calls: the module's compiled URL, from its path under dist/. */
const MODULE_URL = "__segscanModuleUrl";
/**
 * What the rewritten `import(variable)` calls. In the CLI's bundle, a classic
 * script compiled by `vm.Script`, a script restored from V8's code cache has
 * no dynamic-import callback on Node 20 ("A dynamic import callback was not
 * specified"): the loader (src/cli/main.ts) hands in its own `import` as
 * `globalThis.__segscanDynamicImport`. The package bundle, an ES module, imports itself.
 */
const DYNAMIC_IMPORT = "__segscanImport";

const LAZY_IMPORT = /canRequireModules\(import\.meta\.url\)\s*\?\s*null\s*:\s*await import\(("[^"]+")\)/g;
const LAZY_REQUIRE = /\brequireFrom(?:<[^>()]*>)?\(import\.meta\.url,\s*("[^"]+")\)/g;
const VARIABLE_IMPORT = /\bimport\(\s*([A-Za-z_$][\w$]*)\s*\)/g;

/** The source of one module of src/, rewritten as the file comment says. */
export function rewriteModule(source, distRelativePath) {
  const moduleUrl = `${MODULE_URL}(${JSON.stringify(distRelativePath)})`;
  let text = source.replace(LAZY_IMPORT, "null").replace(LAZY_REQUIRE, "require($1)");
  text = text.replace(VARIABLE_IMPORT, `${DYNAMIC_IMPORT}(new URL($1, ${moduleUrl}).href)`);
  for (const leftover of [/\brequireFrom\(/, /canRequireModules\(import\.meta\.url\)/]) {
    const at = text.search(leftover);
    if (at >= 0 && !isImportOrDefinition(text, at)) {
      throw new Error(
        `bundle: ${distRelativePath}: a lazy load the bundler does not rewrite (${leftover}) near: ${text.slice(at, at + 80)}`,
      );
    }
  }
  return text.replaceAll("import.meta.url", moduleUrl);
}

/** Whether the match at `at` is on an `import {…}` line or the function's own definition (src/io/lazy.ts). */
function isImportOrDefinition(text, at) {
  const lineStart = text.lastIndexOf("\n", at) + 1;
  const line = text.slice(lineStart, text.indexOf("\n", at));
  return /^\s*import\b/.test(line) || /^\s*export function\b/.test(line);
}

/** esbuild plugin: src/**.ts through `rewriteModule`. */
const segscanModules = {
  name: "segscan-modules",
  setup(pluginBuild) {
    const srcDir = join(root, "src") + sep;
    pluginBuild.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(srcDir)) return undefined;
      const distRelativePath = relative(dist, join(dist, relative(root, args.path)))
        .split(sep)
        .join("/")
        .replace(/\.ts$/, ".js");
      return { contents: rewriteModule(await readFile(args.path, "utf8"), distRelativePath), loader: "ts" };
    });
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  // Bundled modules evaluate on first use as they did as files (`import()` and `require` of a bundled module).
  splitting: false,
  // Kept readable: the breakdown (bench/breakdown.ts) maps profile lines to modules by esbuild's `// src/…` comments.
  minify: false,
  legalComments: "inline",
  logLevel: "warning",
  plugins: [segscanModules],
  // `import(variable)` stays a real dynamic import (the bench suite, a separate file).
  supported: { "dynamic-import": true },
};

export async function bundle() {
  await build({
    ...common,
    entryPoints: [join(root, "src/cli/program.ts")],
    outfile: join(dist, "segscan-cli.cjs"),
    format: "cjs",
    // dist/segscan-cli.cjs sits in dist/: a module's compiled URL is its path under it.
    banner: {
      js: [
        `"use strict";`,
        `const ${MODULE_URL} = (path) => require("node:url").pathToFileURL(require("node:path").join(__dirname, path)).href;`,
        `const ${DYNAMIC_IMPORT} = (url) => (globalThis.__segscanDynamicImport ?? ((u) => import(u)))(url);`,
      ].join("\n"),
    },
  });
  await build({
    ...common,
    entryPoints: [join(root, "src/index.ts")],
    outfile: join(dist, "segscan.js"),
    format: "esm",
    banner: {
      js: [
        `import { createRequire as __segscanCreateRequire } from "node:module";`,
        `const require = __segscanCreateRequire(import.meta.url);`,
        `const ${MODULE_URL} = (path) => new URL(path, import.meta.url).href;`,
        `const ${DYNAMIC_IMPORT} = (url) => import(url);`,
      ].join("\n"),
    },
  });
  // A one-line summary for the build log.
  const sizes = await Promise.all(
    ["segscan-cli.cjs", "segscan.js"].map(async (name) => `${name} ${(await readFile(join(dist, name))).length} B`),
  );
  process.stdout.write(`bundle: ${sizes.join(", ")}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await bundle();
}
