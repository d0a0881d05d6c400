/** segscan's library surface (docs/interfaces.md §9.1). */
import { callsOf, canRequireModules, onFirstUse, requireFrom } from "./io/lazy.js";
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
export { toJsonReport, stringifyJson } from "./report/json.js";
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
// Repair (docs/repair.md §6.2): plan, apply with a journal, restore (loaded on first use: below), and the errors they throw.
export { CUT_PROOF_BYTES, OFFSET_EVIDENCE_MAX_BYTES, RESTORE_SEARCH_DEPTH } from "./repair/limits.js";
export { readJournal, readJournalEntries } from "./repair/journal.js";
export {
  ForgetRefusedError,
  JournalCorruptError,
  PlanError,
  PreserveError,
  RepairError,
  RestoreConflictError,
  SalvageRefusedError,
  StalePlanError,
  TargetRefusedError,
} from "./repair/errors.js";
export { HealRefusedError } from "./repair/errors.js";
export { LockHeldError, WriterOpenError } from "./repair/lock.js";
export type * from "./repair/index.js";
export { scanNode, isNodeRoot } from "./node/scan.js";
export type * from "./domain/node.js";
export { nodeToJson } from "./report/node-json.js";
export { ReportInputError } from "./fleet/errors.js";
export type {
  ClusterVerdict,
  FleetReport,
  FleetPartition,
  FleetReplica,
  FleetMetadata,
  FleetStep,
  FleetSummary,
  FleetNode,
  MergeInput,
} from "./fleet/index.js";

// Loaded on first use (src/io/lazy.ts, docs/benchmarks.md "Cold code"): importing the package loads no
// schema, planner or fleet merger; each export below loads its module on its first call.
type RepairModule = typeof import("./repair/index.js");
type PlanTextModule = typeof import("./report/repair-format.js");
type ValidationModule = typeof import("./report/json-validate.js");
type NodeSchemaModule = typeof import("./report/node-schema.js");
type FleetModule = typeof import("./fleet/index.js");
const repair = onFirstUse<RepairModule>(canRequireModules(import.meta.url) ? null : await import("./repair/index.js"), () =>
  requireFrom<RepairModule>(import.meta.url, "./repair/index.js"),
);
const planText = onFirstUse<PlanTextModule>(canRequireModules(import.meta.url) ? null : await import("./report/repair-format.js"), () =>
  requireFrom<PlanTextModule>(import.meta.url, "./report/repair-format.js"),
);
const validation = onFirstUse<ValidationModule>(canRequireModules(import.meta.url) ? null : await import("./report/json-validate.js"), () =>
  requireFrom<ValidationModule>(import.meta.url, "./report/json-validate.js"),
);
const nodeSchema = onFirstUse<NodeSchemaModule>(canRequireModules(import.meta.url) ? null : await import("./report/node-schema.js"), () =>
  requireFrom<NodeSchemaModule>(import.meta.url, "./report/node-schema.js"),
);
const fleet = onFirstUse<FleetModule>(canRequireModules(import.meta.url) ? null : await import("./fleet/index.js"), () =>
  requireFrom<FleetModule>(import.meta.url, "./fleet/index.js"),
);

export const {
  planRepair,
  parsePlan,
  isEmptyPlan,
  planSalvage,
  planHeal,
  applyRepair,
  restore,
  findRestorable,
  planForget,
  forget,
  clearLostOffsets,
} = callsOf(repair, [
  "planRepair",
  "parsePlan",
  "isEmptyPlan",
  "planSalvage",
  "planHeal",
  "applyRepair",
  "restore",
  "findRestorable",
  "planForget",
  "forget",
  "clearLostOffsets",
]);
export const { formatApplied, formatPlan } = callsOf(planText, ["formatApplied", "formatPlan"]);
export const { validateJsonReport, validateNdjsonReport } = callsOf(validation, ["validateJsonReport", "validateNdjsonReport"]);
export const { validateNodeJson } = callsOf(nodeSchema, ["validateNodeJson"]);
export const { fleetExitCode, mergeReports, runFleet, openReport, validateFleetReport, fleetJsonSchemaText } = callsOf(fleet, [
  "fleetExitCode",
  "mergeReports",
  "runFleet",
  "openReport",
  "validateFleetReport",
  "fleetJsonSchemaText",
]);
