/**
 * Loading a module of this package on first use (docs/benchmarks.md): the package entry
 * and the CLI load no schema until one is checked against. A synchronous
 * function (`validateJsonReport`) loads its module with `require`, which loads
 * ES modules synchronously on Node ≥ 20.19 and ≥ 22.12. Where it cannot (an
 * older Node, Deno, or this package run from its TypeScript source, as the
 * tests do), the module is imported with the one that needs it, as before.
 */
import { createRequire } from "node:module";

/** Whether the module at `moduleUrl` can `requireFrom` its siblings: the compiled `.js`, on a runtime whose `require` loads ES modules. */
export function canRequireModules(moduleUrl: string): boolean {
  const features = (globalThis as { process?: { features?: { require_module?: boolean } } }).process?.features;
  return features?.require_module === true && moduleUrl.endsWith(".js");
}

/** `specifier`, resolved from `moduleUrl`, loaded now (call only where `canRequireModules(moduleUrl)`). */
export function requireFrom<T>(moduleUrl: string, specifier: string): T {
  return createRequire(moduleUrl)(specifier) as T;
}

/** A package dependency loaded now, through its CommonJS build (any Node, and Deno): for the dependencies only a few scans need (docs/benchmarks.md). */
export function requirePackage<T>(moduleUrl: string, name: string): T {
  return createRequire(moduleUrl)(name) as T;
}

/** `load()`'s value, computed on the first call and kept. */
export function once<T>(load: () => T): () => T {
  let loaded = false;
  let value: T | undefined;
  return () => {
    if (!loaded) {
      value = load();
      loaded = true;
    }
    return value as T;
  };
}

/** The object `get()` returns, loaded on the first operation on it. */
export function loadedOnUse<T extends object>(get: () => T): T {
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(get(), key),
    has: (_target, key) => Reflect.has(get(), key),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(get(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(get()),
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}
