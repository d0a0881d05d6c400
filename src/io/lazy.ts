/**
 * The package entry's exports that load their module on first use
 * (docs/benchmarks.md "Cold code"; src/index.ts is their one user). Everywhere
 * else a module that only some calls need is an `await import()` at that call
 * (the CLI's commands, the engine, msgpack, the scrubber). An export called
 * synchronously (`validateJsonReport`, `parsePlan`, the schema objects) cannot
 * await: its module is `require`d on the first call, which loads ES modules on
 * Node ≥ 20.19 and ≥ 22.12. Where it cannot (an older Node, Deno, or the
 * TypeScript source, as the tests run it) the entry imports the module at once.
 * The bundler (scripts/bundle.mjs) turns both forms into its own load on first use.
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

/** The module: `imported` when the entry imported it at once, else `load()`'s on the first call, kept. */
export function onFirstUse<T>(imported: T | null, load: () => T): () => T {
  let value = imported;
  return () => {
    value ??= load();
    return value;
  };
}

/** The functions `names` of the module `load` gives, each loading it on its first call and handing on every argument. */
export function callsOf<M, K extends keyof M>(load: () => M, names: readonly K[]): Pick<M, K> {
  const calls = names.map((name) => [name, (...args: unknown[]) => (load()[name] as (...args: unknown[]) => unknown)(...args)]);
  return Object.fromEntries(calls) as Pick<M, K>;
}
