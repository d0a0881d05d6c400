/** The scrub library surface (docs/scrub.md). */
export {
  scrub,
  DEFAULT_REVERIFY_AFTER_MS,
  SEALED_SETTLE_MS,
  ACTIVE_SETTLE_MS,
  REVERIFY_SPREAD,
  STATE_SAVE_INTERVAL_MS,
  type ScrubOptions,
  type ScrubProgress,
} from "./scrub.js";
export { FINDING_CODES, NODE_ITEMS, NODE_SEVERITIES, COUNTED_NODE_SEVERITIES, DEFER_REASONS, passOutcome } from "./findings.js";
export { NODE_SETTLE_MS } from "./node.js";
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
  NodeItem,
  NodeSeverity,
  NodeCheckSummary,
  NodeCheckedEvent,
  NodeDeferredEvent,
  DeferReason,
} from "./findings.js";
export { TokenBucket, DEFAULT_SCRUB_RATE_BYTES_PER_SECOND, BURST_SECONDS } from "./rate.js";
export {
  defaultStatePath,
  defaultStateDirectory,
  loadState,
  SCRUB_STATE_VERSION,
  SCRUB_STATE_FORMAT,
  isScrubStateHead,
  StateFileError,
  type ScrubState,
  type SegmentState,
} from "./state.js";
export {
  formatMetrics,
  writeMetrics,
  isScrubMetricsHead,
  METRICS_HEADER,
  MAX_PARTITION_SERIES,
  MAX_NODE_PATH_SERIES,
  type MetricsInput,
} from "./metrics.js";
export { OutputFileError } from "./output-file.js";
export { checkScrubOutputs, ScrubOutputError, type ScrubOutput, type ScrubOutputs } from "./outputs.js";
