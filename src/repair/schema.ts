/**
 * docs/interfaces.md §9.4: the repair plan and the apply result as JSON
 * Schema (TypeBox), the one definition `repair --json` is validated against
 * and `docs/repair.schema.json` is generated from. The TypeScript interfaces
 * in plan-types.ts, runner.ts and steps.ts carry the documentation; a type
 * test (test/repair-schema.test.ts) proves they and these schemas describe the
 * same values, so the two cannot drift.
 */
import { type TObject, type TProperties, Type } from "@sinclair/typebox";

const closed = <T extends TProperties>(properties: T, description?: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });

const U64_PATTERN = "^(0|[1-9][0-9]*)$";
const U64 = Type.String({ pattern: U64_PATTERN, description: "u64 as a decimal string" });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Text = Type.String();
const Hash = Type.String({ pattern: "^[0-9a-f]{16}$", description: "XXH3-64 as 16 lower-case hex digits" });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const Observed = Nullable(closed({ size: Count, mtimeMs: Type.Number({ minimum: 0 }) }));
const Consumer = Nullable(
  closed({ kind: Type.Union([Type.Literal("consumer"), Type.Literal("group")]), id: Count, storedOffset: Nullable(U64) }),
);

/** docs/heal.md: one byte range of a healed log, from the local log or the peer's same-named one. */
const HealPieceSchema = closed({ source: Type.Union([Type.Literal("local"), Type.Literal("peer")]), from: Count, to: Count });

/** docs/heal.md: one range of offsets a heal fills from the peer. */
export const HealRangeSchema = closed({
  segment: U64,
  kind: Type.Union([Type.Literal("unreadable"), Type.Literal("torn"), Type.Literal("salvage-gap"), Type.Literal("held")]),
  firstOffset: U64,
  lastOffset: U64,
  localFrom: Count,
  localTo: Count,
  peerFrom: Count,
  peerTo: Count,
  batches: Count,
});

export const TruncateStepSchema = closed({
  kind: Type.Literal("truncate"),
  role: Type.Union([Type.Literal("segment-log"), Type.Literal("wal")]),
  file: Text,
  segment: Nullable(U64),
  reason: Type.Union([Type.Literal("torn-tail"), Type.Literal("empty"), Type.Literal("wal-torn-tail")]),
  fromSize: Count,
  toSize: Count,
  residue: closed({ bytes: Count, allZero: Type.Boolean() }),
  observed: Observed,
});

export const ReplaceStepSchema = closed({
  kind: Type.Literal("replace"),
  role: Type.Union([Type.Literal("index"), Type.Literal("offset"), Type.Literal("segment-log")]),
  file: Text,
  segment: Nullable(U64),
  reason: Type.Union([
    Type.Literal("index-less"),
    Type.Literal("mismatches"),
    Type.Literal("partial-entry"),
    Type.Literal("empty-segment"),
    Type.Literal("offset-ahead-of-head"),
    Type.Literal("offset-checksum-torn"),
    Type.Literal("salvage"),
    Type.Literal("salvage-prefix"),
    Type.Literal("salvage-rebuilt"),
    Type.Literal("heal"),
  ]),
  fromSize: Count,
  content: Type.Union([
    closed({ type: Type.Literal("index-entries"), entries: Type.Array(closed({ offset: U64, position: Count, timestamp: U64 })) }),
    closed({ type: Type.Literal("keep-prefix"), bytes: Count }),
    closed({ type: Type.Literal("offset-record"), offset: U64 }),
    closed({ type: Type.Literal("log-ranges"), ranges: Type.Array(closed({ from: Count, to: Count })) }),
    closed({ type: Type.Literal("log-splice"), pieces: Type.Array(HealPieceSchema) }),
  ]),
  consumer: Consumer,
  observed: Observed,
});

export const MoveAsideStepSchema = closed({
  kind: Type.Literal("move-aside"),
  role: Type.Union([Type.Literal("sweep"), Type.Literal("offset"), Type.Literal("index")]),
  file: Text,
  reason: Type.Union([
    Type.Literal("staging"),
    Type.Literal("orphan-index"),
    Type.Literal("offset-on-empty-partition"),
    Type.Literal("salvage"),
  ]),
  size: Count,
  consumer: Consumer,
  observed: Observed,
});

export const EvidenceCopyStepSchema = closed({
  kind: Type.Literal("evidence-copy"),
  role: Type.Literal("offset"),
  file: Text,
  reason: Type.Literal("offset-corrupt"),
  size: Count,
  copyBytes: Count,
  consumer: Consumer,
  observed: Observed,
});

export const PlanStepSchema = Type.Union([TruncateStepSchema, ReplaceStepSchema, MoveAsideStepSchema, EvidenceCopyStepSchema]);

const Fingerprint = closed({
  segments: Type.Array(closed({ segment: U64, logPath: Text, messagesSize: Count, indexSize: Count, walkedSize: Count, outcome: Text })),
  sweep: Type.Array(Text),
});

const WalContext = closed({
  snapshotOp: U64,
  snapshotOpKnown: Type.Boolean(),
  superblockCluster: Nullable(U64),
  commitMax: Nullable(U64),
  replicaCount: Nullable(Count),
});

const TornEvidenceSchema = Type.Union([
  Type.Literal("zero-filled"),
  Type.Literal("short-batch"),
  Type.Literal("complete-batch"),
  Type.Literal("unverifiable"),
]);

/** docs/repair.md §6.5: one byte range of a salvaged segment's old log. */
export const SalvageRangeSchema = closed({
  segment: U64,
  kind: Type.Union([Type.Literal("proven"), Type.Literal("intact"), Type.Literal("unreadable"), Type.Literal("torn")]),
  startPosition: Count,
  endPosition: Count,
  bytes: Count,
  firstOffset: Nullable(U64),
  lastOffset: Nullable(U64),
  messages: Nullable(Count),
  tornEvidence: Nullable(TornEvidenceSchema),
});

export const PlanTargetSchema = closed({
  kind: Type.Union([Type.Literal("partition"), Type.Literal("metadata")]),
  path: Text,
  singleSegment: Type.Boolean(),
  dir: Text,
  preserveDir: Text,
  fingerprint: Nullable(Fingerprint),
  wal: Nullable(WalContext),
  steps: Type.Array(PlanStepSchema),
  salvage: Type.Optional(closed({ kept: Type.Array(SalvageRangeSchema), lost: Type.Array(SalvageRangeSchema) })),
  heal: Type.Optional(closed({ peer: Text, ranges: Type.Array(HealRangeSchema) })),
});

const ForecastEffect = closed({ effect: Text, path: Text, destructive: Type.Boolean(), detail: Text });

export const RepairPlanSchema = closed(
  {
    version: Type.Literal(2),
    segscan: Text,
    engine: Type.Union([Type.Literal("wasm"), Type.Literal("ts")]),
    options: closed({
      verify: Type.Union([Type.Literal("tail"), Type.Literal("full")]),
      replicaCount: Count,
      probeBudgetUnits: Count,
      windowBytes: Count,
      maxBatchBytes: Type.Optional(Count),
      clampOffsets: Type.Boolean(),
    }),
    nodeRoot: Nullable(Text),
    targets: Type.Array(PlanTargetSchema),
    skipped: Type.Array(
      closed({
        path: Text,
        verdict: Type.Union([Type.Literal("clean"), Type.Literal("repairable"), Type.Literal("refused"), Type.Literal("failed")]),
        action: Type.Union([
          Type.Literal("serve"),
          Type.Literal("repair"),
          Type.Literal("tombstone"),
          Type.Literal("rebuild-from-peers"),
          Type.Literal("retry"),
        ]),
      }),
    ),
    leftAlone: Type.Array(
      closed({
        path: Text,
        code: Text,
        why: Type.Union([Type.Literal("opt-in"), Type.Literal("held-back"), Type.Literal("symlink"), Type.Literal("not-repairable")]),
        message: Text,
      }),
    ),
    forecast: Nullable(closed({ removes: Type.Array(ForecastEffect), remains: Type.Array(ForecastEffect) })),
  },
  "segscan repair plan (docs/repair.md §6.2)",
);

const Image = closed({ size: Count, xxh3: Hash });
const ImageWithFile = closed({ size: Count, xxh3: Hash, file: Text });

export const JournalOpSchema = Type.Union([
  closed({
    type: Type.Literal("truncate-log"),
    segment: U64,
    log: Text,
    fromSize: Count,
    toSize: Count,
    residue: closed({ bytes: Count, allZero: Type.Boolean(), xxh3: Hash, file: Nullable(Text) }),
    proof: Type.Optional(closed({ from: Count, bytes: Count, xxh3: Hash })),
  }),
  closed({ type: Type.Literal("move-aside"), kind: Text, name: Text, to: Text, size: Count }),
  closed({
    type: Type.Literal("replace-index"),
    segment: U64,
    index: Text,
    staging: Text,
    old: Nullable(ImageWithFile),
    new: Image,
  }),
  closed({ type: Type.Literal("replace-file"), file: Text, staging: Text, old: ImageWithFile, new: Image }),
  closed({
    type: Type.Literal("replace-log"),
    segment: U64,
    log: Text,
    staging: Text,
    old: ImageWithFile,
    new: Image,
    kept: Type.Array(closed({ from: Count, to: Count })),
    lost: Type.Array(SalvageRangeSchema),
  }),
]);

export const ApplyResultSchema = closed(
  {
    targets: Type.Array(
      closed({
        kind: Type.Union([Type.Literal("partition"), Type.Literal("metadata")]),
        path: Text,
        dir: Text,
        preserveDir: Text,
        journalPath: Text,
        run: Text,
        steps: Type.Array(
          closed({
            kind: Type.Union([
              Type.Literal("truncate"),
              Type.Literal("replace"),
              Type.Literal("move-aside"),
              Type.Literal("evidence-copy"),
            ]),
            role: Type.Union([
              Type.Literal("segment-log"),
              Type.Literal("wal"),
              Type.Literal("index"),
              Type.Literal("offset"),
              Type.Literal("sweep"),
            ]),
            file: Text,
            summary: Text,
            preserved: Nullable(Text),
            op: Nullable(JournalOpSchema),
          }),
        ),
      }),
    ),
    changed: Type.Boolean(),
    writerCheck: closed({ checked: Type.Boolean(), unreadableProcesses: Count }),
  },
  "what segscan repair --apply did (docs/repair.md §6.2)",
);
