/**
 * Both engines, for tests that must hold on each (docs/engines.md §8).
 *
 * The wasm engine is REQUIRED, with no opt-out: it needs the built
 * `dist/segscan.wasm` (`npm run build:wasm`; `npm test` builds first), and a
 * missing or broken module fails the test run instead of silently testing the
 * TS engine alone. (SEGSCAN_SKIP_WASM, an opt-out that never gave a passing
 * run because many suites use the wasm engine directly, was removed: every
 * Node.js ≥ 20 and Deno runs WebAssembly, and the test setup builds the module.)
 */
import { createTsEngine } from "../../src/engine/ts/engine.js";
import type { Engine } from "../../src/engine/types.js";

export async function allEngines(): Promise<Engine[]> {
  const engines: Engine[] = [createTsEngine()];
  try {
    const { createWasmEngine } = await import("../../src/engine/wasm/engine.js");
    engines.push(await createWasmEngine());
  } catch (error) {
    throw new Error(
      `the wasm engine is required by the tests but could not be loaded (${(error as Error).message}); ` +
        "run `npm run build:wasm` (the tests need both engines)",
      { cause: error },
    );
  }
  return engines;
}
