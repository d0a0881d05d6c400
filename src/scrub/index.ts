/** The scrub library surface (docs/scrub.md). */
export {
  scrub,
  DEFAULT_REVERIFY_AFTER_MS,
  SEALED_SETTLE_MS,
  REVERIFY_SPREAD,
  STATE_SAVE_INTERVAL_MS,
  type ScrubOptions,
  type ScrubProgress,
} from "./scrub.js";
export { FINDING_CODES } from "./findings.js";
export type {
  FindingCode,
  ScrubFinding,
  ScrubEvent,
  PassSummary,
  SegmentVerifiedEvent,
  SegmentSkippedEvent,
  FindingEvent,
  StateIgnoredEvent,
  PassCompleteEvent,
} from "./findings.js";
export { TokenBucket, DEFAULT_SCRUB_RATE_BYTES_PER_SECOND, BURST_SECONDS } from "./rate.js";
export {
  defaultStatePath,
  defaultStateDirectory,
  loadState,
  SCRUB_STATE_VERSION,
  StateFileError,
  type ScrubState,
  type SegmentState,
} from "./state.js";
export { formatMetrics, writeMetrics, type MetricsInput } from "./metrics.js";
