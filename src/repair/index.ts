/** Repair (docs/repair.md §6.2, docs/node.md N7) and salvage (§6.5): one plan for the whole node, one journaled runner, one restore. */
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
  ConsumerRef,
  EvidenceCopyStep,
  ForecastEffect,
  HealPiece,
  HealRange,
  HealRecord,
  LeftAlone,
  MoveAsideStep,
  ObservedFile,
  PartitionFingerprint,
  PlanOptions,
  PlanRepairOptions,
  PlanStep,
  PlanTarget,
  RepairPlan,
  ReplaceStep,
  SalvageRange,
  SalvageRecord,
  SegmentFingerprint,
  SkippedPartition,
  TruncateStep,
  WalScanContext,
} from "./plan.js";
export { indexPathOf } from "./preserve-dir.js";
export { SalvageRefusedError, isSalvageTarget, planSalvage, refusedSalvagePlan } from "./plan-salvage.js";
export type { PlanSalvageOptions, SalvageRefusal } from "./plan-salvage.js";
export { HealRefusedError, isHealTarget, planHeal, refusedHealPlan } from "./heal/plan.js";
export type { HealRefusal, PlanHealOptions } from "./heal/plan.js";
export { CUT_PROOF_BYTES, OFFSET_EVIDENCE_MAX_BYTES, RESTORE_SEARCH_DEPTH } from "./limits.js";
export { applyRepair } from "./runner.js";
export type { AppliedTarget, ApplyOptions, ApplyResult } from "./runner.js";
export type { AppliedStep } from "./steps.js";
export { planScanOptions, refuseLoneSegment } from "./preflight.js";
export type { PartitionScanner } from "./preflight.js";
export { findForgettable, findRestorable, restore } from "./restore.js";
export { clearLostOffsets, forget, planForget } from "./forget.js";
export type { ClearedLoss, ForgetFile, ForgetOptions, ForgetRun, ForgetTarget, KeptFile, LossClearing } from "./forget.js";
export type { RestoreOptions, RestoreResult } from "./restore.js";
export { JOURNAL_NAME, readJournal, readJournalEntries } from "./journal.js";
export type { JournalEntry, JournalIndexImage, JournalOp, JournalPrefixProof, JournalRecord, JournalResidue } from "./journal.js";
export { InjectedFault, createFaultyFs, nodeRepairFs } from "./fs-layer.js";
export type { FaultOptions, FaultyRepairFs, OpenMode, RepairFile, RepairFs, RepairStat } from "./fs-layer.js";
export {
  ForgetRefusedError,
  JournalCorruptError,
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
