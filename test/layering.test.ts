/**
 * The one-way flow of imports (issue 16 item 17): leaf modules stay leaves and
 * no module reaches back up. A cheap regex over the sources, type imports included.
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

function importsMatching(from: RegExp, to: RegExp): string[] {
  return [...graph].flatMap(([file, targets]) => (from.test(file) ? targets.filter((t) => to.test(t)).map((t) => `${file} → ${t}`) : []));
}

describe("import layering", () => {
  it("reads the graph (the check cannot pass vacuously)", () => {
    expect(graph.get("format/encode.ts")).toContain("hash/xxh3.ts");
    expect(graph.get("engine/wasm/engine.ts")).toContain("engine/limits.ts");
  });

  it("src/hash is a leaf", () => {
    expect(importsMatching(/^hash\//, /./)).toEqual([]);
  });

  it("src/format reaches no engine, io, recovery, report, repair or cli module", () => {
    expect(importsMatching(/^format\//, /^(engine|io|recovery|report|repair|cli|gen)\//)).toEqual([]);
  });

  it("neither engine imports the other", () => {
    expect(importsMatching(/^engine\/wasm\//, /^engine\/ts\//)).toEqual([]);
    expect(importsMatching(/^engine\/ts\//, /^engine\/wasm\//)).toEqual([]);
  });

  it("src/io does not depend on the report", () => {
    expect(importsMatching(/^io\//, /^(report|recovery|repair|cli)\//)).toEqual([]);
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
