/** `createEngine` (SPEC §9.1): wasm by default, ts on request or where WebAssembly is missing. */
import type { Engine, EngineKind } from "./types.js";
import { createTsEngine } from "./ts/engine.js";

export type { Engine, EngineKind, EngineWindow, Hasher, KernelLimits } from "./types.js";
export { createTsEngine } from "./ts/engine.js";

export interface CreateEngineOptions {
  /** Called with a warning when the default wasm engine is unavailable and ts is used instead. */
  onWarning?: (message: string) => void;
}

export async function createEngine(kind?: EngineKind, options: CreateEngineOptions = {}): Promise<Engine> {
  if (kind === "ts") return createTsEngine();
  if (kind !== undefined && kind !== "wasm") {
    throw new TypeError(`unknown engine "${String(kind)}": expected "wasm" or "ts"`);
  }
  if (!hasWebAssembly() && kind === undefined) {
    const warn = options.onWarning ?? ((message: string) => process.emitWarning(message));
    warn("segscan: WebAssembly is unavailable in this runtime; using the TypeScript engine");
    return createTsEngine();
  }
  const { createWasmEngine } = await import("./wasm/engine.js");
  return createWasmEngine();
}

function hasWebAssembly(): boolean {
  return typeof (globalThis as { WebAssembly?: unknown }).WebAssembly === "object";
}
