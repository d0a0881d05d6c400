/** Assertions at boundaries: an invariant the code relies on, checked where a value crosses into it. */

/** A broken invariant: a bug in segscan (or a caller past the documented contract), never a finding about the data. */
export class AssertionError extends Error {
  override readonly name = "AssertionError";
}

/** Throws an AssertionError saying `what` was expected when `condition` is false. */
export function assert(condition: boolean, what: string): asserts condition {
  if (!condition) throw new AssertionError(`assertion failed: ${what}`);
}
