/** Repair (docs/repair.md §6.2): plan, apply with a journal, and restore. */
export {
  PRESERVE_DIR_SUFFIX,
  diffPartitionPlans,
  formatPlan,
  indexPathOf,
  isEmptyPlan,
  planPartition,
  planRepair,
  planToJson,
  preserveDirOf,
  realPreserveDirOf,
} from "./plan.js";
export type {
  IndexRewrite,
  IndexTrim,
  Jsonified,
  LogTruncation,
  PartitionFingerprint,
  PartitionPlan,
  PlannedSweep,
  RepairPlan,
  SegmentFingerprint,
  SkippedPartition,
} from "./plan.js";
export { applyRepair, planScanOptions, refuseLoneSegment } from "./apply.js";
export type {
  AppliedIndexReplacement,
  AppliedPartition,
  AppliedTruncation,
  ApplyOptions,
  ApplyResult,
  PartitionScanner,
} from "./apply.js";
export { RESTORE_SEARCH_DEPTH, findRestorable, restore } from "./restore.js";
export type { RestoreOptions, RestoreResult } from "./restore.js";
export { JOURNAL_NAME, readJournal, readJournalEntries } from "./journal.js";
export type { JournalEntry, JournalIndexImage, JournalOp, JournalRecord, JournalResidue } from "./journal.js";
export { InjectedFault, createFaultyFs, nodeRepairFs } from "./fs-layer.js";
export type { FaultOptions, FaultyRepairFs, OpenMode, RepairFile, RepairFs, RepairStat } from "./fs-layer.js";
export {
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
export type { HeldLock, LockInfo, OpenWriter, WriterCheck } from "./lock.js";
