/**
 * The scrubber as the package entry exports it: its module loads on the first
 * pass (docs/benchmarks.md), so a service that only scans does not load it. `yield*`
 * hands `return()` and `throw()` of the caller's loop to the scrubber itself.
 */
import type { ScrubOptions } from "./scrub.js";
import type { ScrubEvent } from "./findings.js";

export async function* scrub(root: string, options: ScrubOptions = {}): AsyncGenerator<ScrubEvent, void, undefined> {
  const scrubber = await import("./scrub.js");
  yield* scrubber.scrub(root, options);
}
