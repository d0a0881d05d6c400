/** segscan's library surface (docs/interfaces.md §9.1). */
export { createEngine, createTsEngine } from "./engine/index.js";
export type { Engine, EngineKind, EngineWindow, Hasher, KernelLimits } from "./engine/index.js";
export { discoverTargets, discoverStream } from "./recovery/targets.js";
export { SEGSCAN_VERSION } from "./version.js";
export type { DiscoverySink, DiscoveredRoot, ScanTarget } from "./recovery/targets.js";
export { ScanPathsError, scanPartition, scanPath, scanIter } from "./node/scan-path.js";
export type { ScanOptions, ProgressEvent } from "./recovery/options.js";
export type { ScanFs, ReadableFile, DirectoryEntry, FileStat } from "./io/fs.js";
export { nodeBlockingScanFs, nodeScanFs } from "./io/fs.js";
export { ScanFailure } from "./io/errors.js";
export { decideAction } from "./policy/policy.js";
export { decideSalvage } from "./policy/salvage.js";
export type { SalvageDecision, SalvageRefusalCode, SegmentSalvage } from "./policy/salvage.js";
// docs/repair.md §6.4: the one next step of a partition and of a node finding: its line, and the command in it as an argv array.
export { type NextStep, nodeFindingNext, nodeFindingNextStep, partitionNext, partitionNextStep } from "./policy/next-step.js";
export type * from "./domain/scan.js";
export { scanNodes, scanVerdict } from "./domain/scan.js";
export { shellQuote } from "./domain/command.js";
export * from "./format/constants.js";
export { encodeBatch, encodeIndex, encodeIndexEntry, segmentStem } from "./format/encode.js";
export type { BatchInput, MessageInput } from "./format/encode.js";
export {
  readBatchHeader,
  readFrameHeader,
  readIndexEntry,
  headerDecodeStatus,
  VerifyStatus,
  VERIFY_STATUS_NAMES,
} from "./format/records.js";
export type { BatchHeader, FrameHeader, IndexEntry } from "./format/records.js";
export { scrub } from "./scrub/entry.js";
export { FINDING_CODES } from "./scrub/findings.js";
export { DEFAULT_REVERIFY_AFTER_MS, DEFAULT_SCRUB_RATE_BYTES_PER_SECOND } from "./scrub/rate.js";
export { defaultStatePath } from "./scrub/state.js";
export { formatMetrics, writeMetrics } from "./scrub/metrics.js";
export type { ScrubOptions, ScrubProgress, ScrubEvent, ScrubFinding, FindingCode, PassSummary } from "./scrub/index.js";
export { toJsonReport, stringifyJson, validateJsonReport, validateNdjsonReport } from "./report/json.js";
export type {
  JsonScanReport,
  JsonPartition,
  JsonSegment,
  JsonRefusal,
  JsonResidue,
  JsonGap,
  JsonScanOptions,
  JsonPartitionScopeRange,
  JsonSegmentScopeRange,
} from "./report/json.js";
// Repair (docs/repair.md §6.2): plan, apply with a journal, restore, and the errors they throw.
export * from "./repair/entry.js";
export { formatApplied, formatPlan } from "./report/repair-format.js";
export { scanNode, isNodeRoot } from "./node/scan.js";
export type * from "./domain/node.js";
export { nodeToJson } from "./report/node-json.js";
export { NodeJsonSchema, validateNodeJson } from "./report/node-schema-entry.js";
export {
  mergeReports,
  runFleet,
  openReport,
  ReportInputError,
  fleetExitCode,
  validateFleetReport,
  fleetJsonSchemaText,
  FleetReportSchema,
} from "./fleet/entry.js";
export type { FleetReport, FleetPartition, FleetReplica, FleetMetadata, FleetSummary, FleetNode, MergeInput } from "./fleet/entry.js";
