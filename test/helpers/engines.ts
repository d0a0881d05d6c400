/** Both engines, for tests that must hold on each. The wasm engine needs the built dist/segscan.wasm. */
import { createTsEngine } from "../../src/engine/ts/engine.js";
import type { Engine } from "../../src/engine/types.js";

export async function allEngines(): Promise<Engine[]> {
  const engines: Engine[] = [createTsEngine()];
  try {
    const { createWasmEngine } = await import("../../src/engine/wasm/engine.js");
    engines.push(await createWasmEngine());
  } catch (error) {
    if (process.env.SEGSCAN_REQUIRE_WASM) throw error;
  }
  return engines;
}
