/** The cluster view: a merge of several nodes' scan reports (docs/fleet.md). */
export { type PartitionIdentity, type PartitionLine, type ReplicaView, partitionIdentity, replicaView } from "./adapter.js";
export { addToSummary, emptySummary, fleetExitCode, mergeMetadata, mergePartition } from "./merge.js";
export { type Range, intersect, normalize, subtract, totalSize, union } from "./ranges.js";
export { checkNames, type FleetResult, type MergeInput, mergeReports, runFleet } from "./run.js";
export * from "./schema.js";
export { openReport, ReportInputError, type ReportSource } from "./source.js";
export { formatFleetPartition, formatFleetSummary, fleetOutcomeLine, isNotable } from "./format.js";
export { FLEET_LOST_COLOR, renderFleetHtml } from "./html.js";
