/**
 * The one-way flow of imports: every
 * folder of src/ sits in a declared layer and imports only the layers below it,
 * so no folder reaches back up and folders cannot import each other in a loop.
 * A cheap regex over the sources, type imports included.
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** `src/`-relative module → the `src/`-relative modules it imports (static, dynamic and re-exports). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(specifier)].map((m) => relative(SRC, resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"))));
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

const graph = importGraph();

/**
 * The layers of src/, lowest first (docs/architecture.md): a module may
 * import its own layer and the layers below it, never one above. `node`
 * composes `recovery`; `repair` plans and applies over both (its one plan
 * holds the WAL cut and the offset steps beside the segment steps). `version.ts`
 * (the package version) and `assert.ts` (the precondition helper), both
 * leaves, sit at the bottom, the library surface
 * `index.ts` at the top; every other layer is a folder.
 */
const LAYERS = [
  "version.ts",
  "assert.ts",
  "hash",
  "format",
  "io",
  "engine",
  "domain",
  "policy",
  "recovery",
  "node",
  "repair",
  "scrub",
  "report",
  "fleet",
  "gen",
  "cli",
  "index.ts",
  "schemas.ts",
] as const;

/** A module's layer: its top folder under src/, or the file's own name at the top level. */
function layerOf(module: string): string {
  return module.split("/")[0]!;
}

/** Every import from a layer to a layer above it (so also every import cycle between folders), and every module in no declared layer. */
function layerViolations(modules: ReadonlyMap<string, readonly string[]>, layers: readonly string[]): string[] {
  const rank = (module: string): number => layers.indexOf(layerOf(module));
  const violations: string[] = [];
  for (const [file, targets] of modules) {
    if (rank(file) < 0) {
      violations.push(`${file} is in no declared layer`);
      continue;
    }
    for (const target of targets) {
      if (rank(target) < 0) violations.push(`${file} → ${target}: ${target} is in no declared layer`);
      else if (rank(target) > rank(file))
        violations.push(`${file} → ${target}: ${layerOf(file)} imports ${layerOf(target)}, a layer above it`);
    }
  }
  return violations;
}

/** The folder graph: layer → the other layers it imports. */
function folderGraph(modules: ReadonlyMap<string, readonly string[]>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of modules) {
    const from = folders.get(layerOf(file)) ?? new Set<string>();
    folders.set(layerOf(file), from);
    for (const target of targets) if (layerOf(target) !== layerOf(file)) from.add(layerOf(target));
  }
  return folders;
}

function importsMatching(from: RegExp, to: RegExp): string[] {
  return [...graph].flatMap(([file, targets]) => (from.test(file) ? targets.filter((t) => to.test(t)).map((t) => `${file} → ${t}`) : []));
}

describe("import layering", () => {
  it("reads the graph (the check cannot pass vacuously)", () => {
    expect(graph.get("format/encode.ts")).toContain("hash/xxh3.ts");
    expect(graph.get("engine/wasm/engine.ts")).toContain("engine/limits.ts");
    // Folders do import each other: the layer check below has edges to judge.
    const folders = folderGraph(graph);
    expect(folders.get("node")).toContain("recovery");
    expect(folders.get("recovery")).toContain("io");
    expect(folders.get("cli")?.size).toBeGreaterThan(5);
    // Every declared layer holds a module.
    expect(new Set([...graph.keys()].map(layerOf))).toEqual(new Set(LAYERS));
  });

  it("the layer check catches an import upwards, a folder cycle and an undeclared folder (it cannot pass vacuously)", () => {
    const layers = ["low", "mid", "high"];
    expect(layerViolations(new Map([["high/a.ts", ["mid/b.ts", "low/c.ts"]]]), layers)).toEqual([]);
    expect(layerViolations(new Map([["low/c.ts", ["high/a.ts"]]]), layers)).toEqual([
      "low/c.ts → high/a.ts: low imports high, a layer above it",
    ]);
    // Two folders importing each other (files need not form a cycle): one of the two edges points up.
    const cycle = new Map([
      ["mid/b.ts", ["low/c.ts"]],
      ["low/d.ts", ["mid/e.ts"]],
    ]);
    expect(layerViolations(cycle, layers)).toEqual(["low/d.ts → mid/e.ts: low imports mid, a layer above it"]);
    expect(layerViolations(new Map([["other/x.ts", ["low/c.ts"]]]), layers)).toEqual(["other/x.ts is in no declared layer"]);
  });

  it("every folder imports only the layers below it (so no folder cycle)", () => {
    expect(layerViolations(graph, LAYERS)).toEqual([]);
  });

  it("src/hash and version.ts are leaves", () => {
    expect(importsMatching(/^hash\//, /./)).toEqual([]);
    expect(graph.get("version.ts")).toEqual([]);
  });

  it("neither engine imports the other", () => {
    expect(importsMatching(/^engine\/wasm\//, /^engine\/ts\//)).toEqual([]);
    expect(importsMatching(/^engine\/ts\//, /^engine\/wasm\//)).toEqual([]);
  });

  it("has no import cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (node: string, path: string[]): void => {
      if (state.get(node) === "done") return;
      if (state.get(node) === "open") {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" → "));
        return;
      }
      state.set(node, "open");
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, "done");
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});
