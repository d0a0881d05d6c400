/**
 * The engines this package made (createEngine, createTsEngine): a scan can
 * hand such an engine's kind to another thread, which makes the same engine
 * there (src/node/placement.ts). An engine a caller wrote itself is used
 * where it was given.
 */
const own = new WeakSet<object>();

/** Records `engine` as one of this package's, and returns it. */
export function ownEngine<T extends object>(engine: T): T {
  own.add(engine);
  return engine;
}

/** Whether this package made `engine`. */
export function isOwnEngine(engine: object): boolean {
  return own.has(engine);
}
