/**
 * `createEngine` (docs/interfaces.md §9.1): wasm by default; ts on request, or — with a
 * warning — when no engine was asked for and the wasm engine is unavailable
 * (WebAssembly missing, or the module fails to load or compile, e.g. a runtime
 * without SIMD). An engine asked for by name must load, or the call throws.
 */
import type { Engine, EngineKind } from "./types.js";
import { createTsEngine } from "./ts/engine.js";

export type { Engine, EngineKind, EngineWindow, Hasher, KernelLimits } from "./types.js";
export { createTsEngine } from "./ts/engine.js";

export interface CreateEngineOptions {
  /**
   * Called with a warning when the default wasm engine is unavailable and ts is
   * used instead. Default: `process.emitWarning`.
   */
  onWarning?: (message: string) => void;
}

const ENGINE_KINDS: readonly EngineKind[] = ["wasm", "ts"];

function isEngineKind(kind: string): kind is EngineKind {
  return (ENGINE_KINDS as readonly string[]).includes(kind);
}

/**
 * `kind` may be any string (e.g. straight from a CLI flag or config file): an
 * unknown one throws a RangeError naming the accepted kinds.
 */
export async function createEngine(kind?: EngineKind | string, options: CreateEngineOptions = {}): Promise<Engine> {
  if (kind !== undefined && !isEngineKind(kind)) {
    throw new RangeError(`unknown engine ${JSON.stringify(kind)}: expected ${ENGINE_KINDS.map((k) => `"${k}"`).join(" or ")}`);
  }
  if (kind === "ts") return createTsEngine();
  const explicit = kind === "wasm";
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message));
  if (!hasWebAssembly()) {
    if (explicit)
      throw new Error('segscan: the wasm engine was asked for, but WebAssembly is unavailable in this runtime; use the "ts" engine');
    warn("segscan: WebAssembly is unavailable in this runtime; using the TypeScript engine");
    return createTsEngine();
  }
  try {
    const { createWasmEngine } = await import("./wasm/engine.js");
    return await createWasmEngine();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    if (explicit) {
      throw new Error(`segscan: the wasm engine could not be loaded (${reason}); use the "ts" engine where Wasm cannot run`, { cause });
    }
    warn(`segscan: the wasm engine could not be loaded (${reason}); using the TypeScript engine`);
    return createTsEngine();
  }
}

function hasWebAssembly(): boolean {
  return typeof (globalThis as { WebAssembly?: unknown }).WebAssembly === "object";
}
