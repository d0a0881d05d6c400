/** Repair (docs/repair.md §6.2, docs/node.md N7) and salvage (§6.5): one plan for the whole node, one table of step kinds, one journaled runner, one restore. */
export {
  PLAN_VERSION,
  PRESERVE_DIR_SUFFIX,
  firstDifference,
  isEmptyPlan,
  parsePlan,
  planRepair,
  planSteps,
  preserveDirOf,
  realPreserveDirOf,
} from "./plan.js";
export type {
  ForecastEffect,
  HealPiece,
  HealRange,
  HealRecord,
  LeftAlone,
  ObservedFile,
  PartitionFingerprint,
  PlanOptions,
  PlanTarget,
  RepairPlan,
  RestoreResult,
  SalvageRecord,
  SegmentFingerprint,
  SkippedPartition,
  WalScanContext,
} from "./schema.js";
export type {
  ConsumerRef,
  EvidenceCopyStep,
  MoveAsideOp,
  MoveAsideStep,
  PlanStep,
  ReplaceOp,
  ReplaceStep,
  SalvageRange,
  TruncateOp,
  TruncateStep,
} from "./steps/index.js";
export type { PlanRepairOptions } from "./plan.js";
export { indexPathOf } from "./preserve-dir.js";
export { SalvageRefusedError, isSalvageTarget, planSalvage, refusedSalvagePlan } from "./plan-salvage.js";
export type { PlanSalvageOptions, SalvageRefusal } from "./plan-salvage.js";
export { HealRefusedError, isHealTarget, planHeal, refusedHealPlan } from "./heal/plan.js";
export type { HealRefusal, PlanHealOptions } from "./heal/plan.js";
export { CUT_PROOF_BYTES, OFFSET_EVIDENCE_MAX_BYTES, RESTORE_SEARCH_DEPTH } from "./limits.js";
export { applyRepair } from "./runner.js";
export type { AppliedTarget, ApplyOptions, ApplyResult } from "./runner.js";
export type { AppliedStep } from "./schema.js";
export { planScanOptions, refuseLoneSegment } from "./preflight.js";
export type { PartitionScanner } from "./preflight.js";
export { findForgettable, findRestorable, restore } from "./restore.js";
export { clearLostOffsets, forget, planForget } from "./forget.js";
export type { ClearedLoss, ForgetFile, ForgetOptions, ForgetRun, ForgetTarget, KeptFile, LossClearing } from "./forget.js";
export type { RestoreOptions } from "./restore.js";
export { JOURNAL_NAME, readJournal, readJournalEntries } from "./journal.js";
export type { JournalEntry, JournalOp, JournalRecord } from "./journal.js";
export { InjectedFault, createFaultyFs, nodeRepairFs } from "./fs-layer.js";
export type { FaultOptions, FaultyRepairFs, OpenMode, RepairFile, RepairFs, RepairStat } from "./fs-layer.js";
export {
  ForgetRefusedError,
  JournalCorruptError,
  JournalVersionError,
  TargetRefusedError,
  PlanError,
  PreserveError,
  RepairError,
  RestoreConflictError,
  StalePlanError,
} from "./errors.js";
export type { RepairErrorContext } from "./errors.js";
export { LOCK_NAME, LockHeldError, WriterOpenError, acquireLock, findWriters } from "./lock.js";
export type { HeldLock, LockInfo, OpenWriter, WriterCheck, WriterWatch } from "./lock.js";
