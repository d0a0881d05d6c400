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

// Each call hands on all its arguments: a parameter the module gains is never dropped here.
export const fleetExitCode: FleetModule["fleetExitCode"] = (...args) => load().fleetExitCode(...args);
export const mergeReports: FleetModule["mergeReports"] = (...args) => load().mergeReports(...args);
export const runFleet: FleetModule["runFleet"] = (...args) => load().runFleet(...args);
export const openReport: FleetModule["openReport"] = (...args) => load().openReport(...args);
export const validateFleetReport: FleetModule["validateFleetReport"] = (...args) => load().validateFleetReport(...args);
export const fleetJsonSchemaText: FleetModule["fleetJsonSchemaText"] = (...args) => load().fleetJsonSchemaText(...args);
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
