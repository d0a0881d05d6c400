/**
 * `createEngine()`: the default falls back to the TypeScript
 * engine, with a warning, when the wasm module cannot load or compile (here: a
 * compile error as a runtime without SIMD throws); an explicit "wasm" that
 * cannot load throws a clear error; an unknown kind is a RangeError.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

const wasmLoad = vi.hoisted(() => ({ fail: null as Error | null }));

vi.mock("../src/engine/wasm/engine.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/engine/wasm/engine.js")>();
  return {
    ...original,
    createWasmEngine: async () => {
      if (wasmLoad.fail) throw wasmLoad.fail;
      return original.createWasmEngine();
    },
  };
});

const { createEngine } = await import("../src/engine/index.js");

/** What a runtime without SIMD throws when compiling the module. */
function compileError(): Error {
  const error = new Error("WebAssembly.compile(): invalid simd opcode");
  error.name = "CompileError";
  return error;
}

afterEach(() => {
  wasmLoad.fail = null;
});

describe("createEngine", () => {
  it("loads wasm by default and on request when it can", async () => {
    expect((await createEngine()).kind).toBe("wasm");
    expect((await createEngine("wasm")).kind).toBe("wasm");
    expect((await createEngine("ts")).kind).toBe("ts");
  });

  it("falls back to ts with a warning when the wasm module fails to compile and no kind was asked for", async () => {
    wasmLoad.fail = compileError();
    const warnings: string[] = [];
    const engine = await createEngine(undefined, { onWarning: (message) => warnings.push(message) });
    expect(engine.kind).toBe("ts");
    expect(warnings).toEqual([
      expect.stringMatching(/wasm engine could not be loaded \(.*invalid simd opcode\); using the TypeScript engine/),
    ]);
  });

  it('an explicit "wasm" that cannot load throws, naming the cause', async () => {
    wasmLoad.fail = compileError();
    const warnings: string[] = [];
    await expect(createEngine("wasm", { onWarning: (message) => warnings.push(message) })).rejects.toThrow(
      /wasm engine could not be loaded \(.*invalid simd opcode\); use the "ts" engine/,
    );
    expect(warnings).toEqual([]);
  });

  it("an unknown engine kind is a RangeError (as the README promises)", async () => {
    await expect(createEngine("wsam")).rejects.toThrow(RangeError);
    await expect(createEngine("wsam")).rejects.toThrow(/unknown engine "wsam": expected "wasm" or "ts"/);
    await expect(createEngine("")).rejects.toThrow(RangeError);
  });
});
