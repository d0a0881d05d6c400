/**
 * docs/interfaces.md §9.4, docs/repair.md §6.2: the repair plan, the apply
 * result and restore's result as JSON Schema (TypeBox), defined once: their
 * TypeScript types derive from these (`Static`), `repair --json` and
 * `restore --json` are validated against them, and `docs/repair.schema.json`
 * and `docs/restore.schema.json` are generated from them (`npm run schema`).
 * A plan's steps and an applied step's journal op are the step kinds' own
 * schemas (./steps/). A plan is plain JSON: every u64 a decimal string.
 */
import { type Static, Type } from "@sinclair/typebox";
import {
  ActionSchema,
  Count,
  EngineKindSchema,
  Text,
  U64,
  U128,
  VerdictSchema,
  closed,
  literals,
  nullable,
  scanOptionsFields,
} from "../domain/schema-vocabulary.js";
import { PLAN_VERSION } from "./plan-types.js";
import { JournalOpSchema, PlanStepSchema, SalvageRangeSchema } from "./steps/index.js";
import type { HealPieceSchema } from "./steps/replace.js";

/** The segment state a partition's re-scan must reproduce before anything is changed (docs/repair.md §6.2 step 0). */
const FingerprintSchema = closed({
  segments: Type.Array(closed({ segment: U64, logPath: Text, messagesSize: Count, indexSize: Count, walkedSize: Count, outcome: Text })),
  sweep: Type.Array(Text),
});

/** What the metadata target's re-scan needs to reproduce the WAL verdict (docs/node.md N1). */
const WalContextSchema = closed({
  snapshotOp: U64,
  snapshotOpKnown: Type.Boolean(),
  superblockCluster: nullable(U128),
  commitMax: nullable(U64),
  replicaCount: nullable(Count),
});

/** docs/repair.md §6.5: what a salvage keeps and what it records as lost, over every salvaged segment, in offset order. */
const SalvageRecordSchema = closed({ kept: Type.Array(SalvageRangeSchema), lost: Type.Array(SalvageRangeSchema) });

/** docs/heal.md: one range of offsets a heal fills from the peer. */
const HealRangeSchema = closed({
  segment: U64,
  kind: literals(["unreadable", "torn", "salvage-gap", "held"] as const),
  firstOffset: U64,
  lastOffset: U64,
  localFrom: Count,
  localTo: Count,
  peerFrom: Count,
  peerTo: Count,
  batches: Count,
});

/** docs/heal.md: what a heal copies from which peer (the peer dir as a real absolute path; it is only read). */
const HealRecordSchema = closed({ peer: Text, ranges: Type.Array(HealRangeSchema) });

export const PlanTargetSchema = closed({
  /** `partition`: a partition dir (segments, scratch, offsets); `metadata`: the node's `metadata/` dir. */
  kind: literals(["partition", "metadata"] as const),
  /** As the report names it: a partition dir, a lone `.log`, or the metadata dir. */
  path: Text,
  /** True when the report describes one `.log` scanned alone. */
  singleSegment: Type.Boolean(),
  /** The directory whose files the steps change. */
  dir: Text,
  /** `<realpath(dir)>.segscan`: preserved bytes, moved files, the journal and the lock. */
  preserveDir: Text,
  /** Partition targets with segment steps: what the re-scan must reproduce (null otherwise). */
  fingerprint: nullable(FingerprintSchema),
  /** Metadata targets: the WAL scan's context (null otherwise). */
  wal: nullable(WalContextSchema),
  steps: Type.Array(PlanStepSchema),
  /** Present only on a salvage target (docs/repair.md §6.5). */
  salvage: Type.Optional(SalvageRecordSchema),
  /** Present only on a heal target (docs/heal.md). */
  heal: Type.Optional(HealRecordSchema),
});

/** One boot-forecast effect, as the report's JSON has it (docs/node.md N8). */
const ForecastEffectSchema = closed({ effect: Text, path: Text, destructive: Type.Boolean(), detail: Text });

export const RepairPlanSchema = closed(
  {
    version: Type.Literal(PLAN_VERSION),
    segscan: Text,
    engine: EngineKindSchema,
    /** The options of the scan the plan came from (`applyRepair` re-scans with the same), and docs/node.md N4's opt-in. */
    options: closed({ ...scanOptionsFields, clampOffsets: Type.Boolean() }),
    /** The node root when the scan was of one (docs/node.md N0), else null. */
    nodeRoot: nullable(Text),
    targets: Type.Array(PlanTargetSchema),
    /** Partitions the plan leaves byte for byte untouched, and why. */
    skipped: Type.Array(closed({ path: Text, verdict: VerdictSchema, action: ActionSchema })),
    /** Node findings the plan does not act on, and why (docs/node.md N7). */
    leftAlone: Type.Array(
      closed({ path: Text, code: Text, why: literals(["opt-in", "held-back", "symlink", "not-repairable"] as const), message: Text }),
    ),
    /** Node roots: which boot-forecast effects the plan removes and which remain (docs/node.md N8). */
    forecast: nullable(closed({ removes: Type.Array(ForecastEffectSchema), remains: Type.Array(ForecastEffectSchema) })),
  },
  "segscan repair plan (docs/repair.md §6.2)",
);

/** What one step did: its kind, role and file, a line saying what changed, its preserved copy, and the journal intent it ran under. */
const AppliedStepSchema = closed({
  kind: Type.Index(PlanStepSchema, ["kind"]),
  role: Type.Index(PlanStepSchema, ["role"]),
  file: Text,
  summary: Text,
  preserved: nullable(Text),
  op: nullable(JournalOpSchema),
});

const AppliedTargetSchema = closed({
  kind: literals(["partition", "metadata"] as const),
  path: Text,
  dir: Text,
  preserveDir: Text,
  journalPath: Text,
  run: Text,
  steps: Type.Array(AppliedStepSchema),
});

/** Whether other writers of the touched files were looked for (false: not on this platform, or turned off) and how many processes could not be looked at. */
const WriterCheckSchema = closed({ checked: Type.Boolean(), unreadableProcesses: Count });

export const ApplyResultSchema = closed(
  {
    targets: Type.Array(AppliedTargetSchema),
    /** Whether any file outside a preserve dir was changed (an evidence copy changes nothing). */
    changed: Type.Boolean(),
    writerCheck: WriterCheckSchema,
  },
  "what segscan repair --apply did (docs/repair.md §6.2)",
);

export const RestoreResultSchema = closed(
  {
    /** The directory restored: a partition dir, or a node's `metadata/` dir. */
    partitionDir: Text,
    /** What to scan to see the result: the partition dir, or the node root for `metadata/`. */
    scanPath: Text,
    /** False when there was nothing to restore (no journal, or every run in it closed by forget). */
    restored: Type.Boolean(),
    /** Where the journal was moved once every step was undone. */
    restoredJournal: nullable(Text),
    /** One line per step undone (steps that had not happened are not listed). */
    undone: Type.Array(Text),
    writerCheck: WriterCheckSchema,
    /** Runs `segscan forget` closed (docs/repair.md §6.7): their steps are not undone. */
    closedRuns: Type.Array(Text),
  },
  "what segscan restore did to one directory (docs/repair.md §6.2)",
);

/** `segscan restore --json`: one shape whatever the path names, a result per directory restored (none: nothing to restore). */
export const RestoreJsonSchema = closed(
  { partitions: Type.Array(RestoreResultSchema) },
  "segscan restore --json: what restore did to each directory (docs/repair.md §6.2)",
);

export type RepairPlan = Static<typeof RepairPlanSchema>;
export type ObservedFile = RepairPlan["targets"][number]["steps"][number]["observed"];
export type PlanTarget = Static<typeof PlanTargetSchema>;
export type PlanOptions = RepairPlan["options"];
export type SkippedPartition = RepairPlan["skipped"][number];
export type LeftAlone = RepairPlan["leftAlone"][number];
export type ForecastEffect = Static<typeof ForecastEffectSchema>;
export type SalvageRecord = Static<typeof SalvageRecordSchema>;
export type HealRecord = Static<typeof HealRecordSchema>;
export type HealRange = HealRecord["ranges"][number];
export type HealPiece = Static<typeof HealPieceSchema>;
export type PartitionFingerprint = Static<typeof FingerprintSchema>;
export type SegmentFingerprint = PartitionFingerprint["segments"][number];
export type WalScanContext = Static<typeof WalContextSchema>;
export type ApplyResult = Static<typeof ApplyResultSchema>;
export type AppliedTarget = Static<typeof AppliedTargetSchema>;
export type AppliedStep = Static<typeof AppliedStepSchema>;
export type RestoreResult = Static<typeof RestoreResultSchema>;
