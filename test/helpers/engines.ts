/**
 * Both engines, for tests that must hold on each (docs/engines.md §8).
 *
 * The wasm engine is REQUIRED: it needs the built `dist/segscan.wasm`
 * (`npm run build:wasm`; `npm test` builds first), and a missing or broken
 * module fails the test run instead of silently testing the TS engine alone.
 * Opt-out, for a host that cannot run the module at all: SEGSCAN_SKIP_WASM=1
 * runs the TS engine only (never set it in CI).
 */
import { createTsEngine } from "../../src/engine/ts/engine.js";
import type { Engine } from "../../src/engine/types.js";

/** The documented opt-out: any non-empty value other than "0". */
export function wasmSkipped(): boolean {
  const value = process.env.SEGSCAN_SKIP_WASM;
  return value !== undefined && value !== "" && value !== "0";
}

export async function allEngines(): Promise<Engine[]> {
  const engines: Engine[] = [createTsEngine()];
  if (wasmSkipped()) return engines;
  try {
    const { createWasmEngine } = await import("../../src/engine/wasm/engine.js");
    engines.push(await createWasmEngine());
  } catch (error) {
    throw new Error(
      `the wasm engine is required by the tests but could not be loaded (${(error as Error).message}); ` +
        "run `npm run build:wasm`, or set SEGSCAN_SKIP_WASM=1 to test the TypeScript engine only",
      { cause: error },
    );
  }
  return engines;
}
