/**
 * The cluster view as the package entry exports it (docs/fleet.md): the merger,
 * its report reader and the fleet schema load on first use, so importing the
 * package loads no TypeBox. `FleetReportSchema` is the schema object
 * itself once anything reads it.
 */
import { canRequireModules, loadedOnUse, once, requireFrom } from "../io/lazy.js";

type FleetModule = typeof import("./index.js");
const imported: FleetModule | null = canRequireModules(import.meta.url) ? null : await import("./index.js");
const load = once((): FleetModule => imported ?? requireFrom<FleetModule>(import.meta.url, "./index.js"));

export { ReportInputError } from "./errors.js";

export const fleetExitCode: FleetModule["fleetExitCode"] = (summary) => load().fleetExitCode(summary);
export const mergeReports: FleetModule["mergeReports"] = (reports) => load().mergeReports(reports);
export const runFleet: FleetModule["runFleet"] = (sources, onPartition) => load().runFleet(sources, onPartition);
export const openReport: FleetModule["openReport"] = (file, name) => load().openReport(file, name);
export const validateFleetReport: FleetModule["validateFleetReport"] = (value) => load().validateFleetReport(value);
export const fleetJsonSchemaText: FleetModule["fleetJsonSchemaText"] = () => load().fleetJsonSchemaText();
export const FleetReportSchema: FleetModule["FleetReportSchema"] = loadedOnUse(() => load().FleetReportSchema);
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
} from "./index.js";
