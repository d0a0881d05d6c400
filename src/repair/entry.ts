/**
 * Repair as the package entry exports it (docs/interfaces.md §9.1): the
 * planner, the runner and restore load on first use (docs/benchmarks.md), so a service
 * that only scans does not load them. What is cheap loads now: the errors (a
 * caller's `instanceof` needs the classes themselves), the journal reader and
 * the limits. Only the documented calls are here: the file layer seam of the
 * crash tests, the lock and the preflight's parts are internals (tests import
 * them from their modules).
 */
import { canRequireModules, once, requireFrom } from "../io/lazy.js";

type RepairModule = typeof import("./index.js");
const imported: RepairModule | null = canRequireModules(import.meta.url) ? null : await import("./index.js");
const load = once((): RepairModule => imported ?? requireFrom<RepairModule>(import.meta.url, "./index.js"));

export { CUT_PROOF_BYTES, OFFSET_EVIDENCE_MAX_BYTES, RESTORE_SEARCH_DEPTH } from "./limits.js";
export { readJournal, readJournalEntries } from "./journal.js";
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
} from "./errors.js";
export { HealRefusedError } from "./errors.js";
export { LockHeldError, WriterOpenError } from "./lock.js";

// Each call hands on all its arguments: a parameter the module gains is never dropped here.
export const planRepair: RepairModule["planRepair"] = (...args) => load().planRepair(...args);
export const parsePlan: RepairModule["parsePlan"] = (...args) => load().parsePlan(...args);
export const isEmptyPlan: RepairModule["isEmptyPlan"] = (...args) => load().isEmptyPlan(...args);
export const planSalvage: RepairModule["planSalvage"] = (...args) => load().planSalvage(...args);
export const planHeal: RepairModule["planHeal"] = (...args) => load().planHeal(...args);
export const applyRepair: RepairModule["applyRepair"] = (...args) => load().applyRepair(...args);
export const restore: RepairModule["restore"] = (...args) => load().restore(...args);
export const findRestorable: RepairModule["findRestorable"] = (...args) => load().findRestorable(...args);
export const planForget: RepairModule["planForget"] = (...args) => load().planForget(...args);
export const forget: RepairModule["forget"] = (...args) => load().forget(...args);
export const clearLostOffsets: RepairModule["clearLostOffsets"] = (...args) => load().clearLostOffsets(...args);
export type * from "./index.js";
