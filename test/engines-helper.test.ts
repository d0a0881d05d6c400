/**
 * The tests' engine helper requires the wasm engine: with
 * the module missing, every suite that uses `allEngines()` fails instead of
 * silently running on the TS engine alone, and there is no opt-out.
 */
import { readFileSync, readdirSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";

const wasmLoad = vi.hoisted(() => ({ missing: false }));

vi.mock("../src/engine/wasm/engine.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/engine/wasm/engine.js")>();
  return {
    ...original,
    createWasmEngine: async () => {
      if (wasmLoad.missing) throw new Error("segscan.wasm not found at /x/dist/segscan.wasm (run `npm run build:wasm`)");
      return original.createWasmEngine();
    },
  };
});

const { allEngines } = await import("./helpers/engines.js");

afterEach(() => {
  wasmLoad.missing = false;
  vi.unstubAllEnvs();
});

describe("allEngines()", () => {
  it("returns both engines", async () => {
    expect((await allEngines()).map((engine) => engine.kind)).toEqual(["ts", "wasm"]);
  });

  it("fails loudly when the wasm module is missing", async () => {
    wasmLoad.missing = true;
    await expect(allEngines()).rejects.toThrow(/wasm engine is required.*segscan\.wasm not found.*npm run build:wasm/);
  });

  it("SEGSCAN_SKIP_WASM is no opt-out any more (it never gave a passing run): a missing module still fails", async () => {
    vi.stubEnv("SEGSCAN_SKIP_WASM", "1");
    wasmLoad.missing = true;
    await expect(allEngines()).rejects.toThrow(/wasm engine is required/);
  });

  it("no doc offers SEGSCAN_SKIP_WASM", () => {
    const root = new URL("..", import.meta.url);
    const docs = ["README.md", ...readdirSync(new URL("docs/", root)).map((name) => `docs/${name}`)].filter((path) => path.endsWith(".md"));
    const offering = docs.filter((path) => readFileSync(new URL(path, root), "utf8").includes("SEGSCAN_SKIP_WASM"));
    expect(offering).toEqual([]);
  });
});
