/** The cluster view: a merge of several nodes' scan reports (docs/fleet.md). */
export { type PartitionIdentity, type PartitionLine, type ReplicaView, partitionIdentity, replicaView } from "./adapter.js";
export {
  addToSummary,
  clusterVerdict,
  contextOf,
  emptySummary,
  fleetExitCode,
  hexChecksum,
  hexId,
  type MergeContext,
  mergeMetadata,
  mergePartition,
} from "./merge.js";
export { type Range, intersect, normalize, subtract, totalSize, union } from "./ranges.js";
export { checkNames, type FleetResult, type MergeInput, mergeReports, runFleet } from "./run.js";
export * from "./schema.js";
export { looksLikeNdjson, MAX_TEXT_BYTES, openReport, ReportInputError, type ReportSource, scanReportFromNdjson } from "./source.js";
export {
  everyReplicaWords,
  formatFleetPartition,
  formatFleetProblems,
  formatFleetSummary,
  formatFleetVerdict,
  formatSteps,
  fleetOutcomeLine,
  isNotable,
} from "./format.js";
export { clusterSteps, partitionSteps, step } from "./steps.js";
export { FLEET_LOST_COLOR, FLEET_VERDICT_COLORS, renderFleetHtml } from "./html.js";
