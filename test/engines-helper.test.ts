/**
 * The tests' engine helper (issue 16 item 12) requires the wasm engine: with
 * the module missing, every suite that uses `allEngines()` fails instead of
 * silently running on the TS engine alone. SEGSCAN_SKIP_WASM=1 is the only opt-out.
 */
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
    vi.stubEnv("SEGSCAN_SKIP_WASM", "");
    expect((await allEngines()).map((engine) => engine.kind)).toEqual(["ts", "wasm"]);
  });

  it("fails loudly when the wasm module is missing", async () => {
    vi.stubEnv("SEGSCAN_SKIP_WASM", "");
    wasmLoad.missing = true;
    await expect(allEngines()).rejects.toThrow(/wasm engine is required.*segscan\.wasm not found.*SEGSCAN_SKIP_WASM=1/);
  });

  it("SEGSCAN_SKIP_WASM=1 is the explicit opt-out", async () => {
    vi.stubEnv("SEGSCAN_SKIP_WASM", "1");
    wasmLoad.missing = true;
    expect((await allEngines()).map((engine) => engine.kind)).toEqual(["ts"]);
  });
});
