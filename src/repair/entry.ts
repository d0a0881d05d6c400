/**
 * Repair as the package entry exports it (docs/interfaces.md §9.1): the
 * planner, the runner and restore load on first use (issue 23), so a service
 * that only scans does not load them. What is cheap loads now: the errors (a
 * caller's `instanceof` needs the classes themselves), the filesystem layer,
 * the lock, the journal reader, the preserve-dir names and the limits.
 */
import { canRequireModules, once, requireFrom } from "../io/lazy.js";

type RepairModule = typeof import("./index.js");
const imported: RepairModule | null = canRequireModules(import.meta.url) ? null : await import("./index.js");
const load = once((): RepairModule => imported ?? requireFrom<RepairModule>(import.meta.url, "./index.js"));

export { PRESERVE_DIR_SUFFIX, indexPathOf, preserveDirOf, realPreserveDirOf } from "./preserve-dir.js";
export { PLAN_VERSION } from "./plan-types.js";
export { CUT_PROOF_BYTES, OFFSET_EVIDENCE_MAX_BYTES, RESTORE_SEARCH_DEPTH } from "./limits.js";
export { JOURNAL_NAME, readJournal, readJournalEntries } from "./journal.js";
export { InjectedFault, createFaultyFs, nodeRepairFs } from "./fs-layer.js";
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
export { HealRefusedError } from "./heal/errors.js";
export { LOCK_NAME, LockHeldError, WriterOpenError, acquireLock, findWriters } from "./lock.js";

export const planRepair: RepairModule["planRepair"] = (source, options) => load().planRepair(source, options);
export const parsePlan: RepairModule["parsePlan"] = (value, source) => load().parsePlan(value, source);
export const isEmptyPlan: RepairModule["isEmptyPlan"] = (plan) => load().isEmptyPlan(plan);
export const planSteps: RepairModule["planSteps"] = (plan) => load().planSteps(plan);
export const firstDifference: RepairModule["firstDifference"] = (a, b, at) => load().firstDifference(a, b, at);
export const planSalvage: RepairModule["planSalvage"] = (source, options) => load().planSalvage(source, options);
export const refusedSalvagePlan: RepairModule["refusedSalvagePlan"] = (report, error) => load().refusedSalvagePlan(report, error);
export const isSalvageTarget: RepairModule["isSalvageTarget"] = (target) => load().isSalvageTarget(target);
export const planHeal: RepairModule["planHeal"] = (local, peer, options) => load().planHeal(local, peer, options);
export const refusedHealPlan: RepairModule["refusedHealPlan"] = (report, error) => load().refusedHealPlan(report, error);
export const isHealTarget: RepairModule["isHealTarget"] = (target) => load().isHealTarget(target);
export const applyRepair: RepairModule["applyRepair"] = (plan, options) => load().applyRepair(plan, options);
export const planScanOptions: RepairModule["planScanOptions"] = (plan, engine, signal) => load().planScanOptions(plan, engine, signal);
export const refuseLoneSegment: RepairModule["refuseLoneSegment"] = (target, options) => load().refuseLoneSegment(target, options);
export const restore: RepairModule["restore"] = (partitionDir, options) => load().restore(partitionDir, options);
export const findRestorable: RepairModule["findRestorable"] = (target, fsLayer) => load().findRestorable(target, fsLayer);
export const findForgettable: RepairModule["findForgettable"] = (target, fsLayer) => load().findForgettable(target, fsLayer);
export const planForget: RepairModule["planForget"] = (dir, options) => load().planForget(dir, options);
export const forget: RepairModule["forget"] = (dir, options) => load().forget(dir, options);
export const clearLostOffsets: RepairModule["clearLostOffsets"] = (dir, options) => load().clearLostOffsets(dir, options);
export type * from "./index.js";
