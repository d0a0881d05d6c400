/**
 * The `scan --json` report (docs/interfaces.md §9.3), defined once. The JSON types in
 * `report/json.ts` are derived from these schemas (`Static<>`),
 * `validateJsonReport` checks against them, and `docs/report.schema.json` is
 * generated from them (`npm run schema`; a test fails when it is out of date).
 * Every object is closed (`additionalProperties: false`): a key the contract
 * does not name is an error, not an extension.
 */
import { type Static, type TProperties, Type } from "@sinclair/typebox";
import {
  ActionSchema,
  Count,
  EngineKindSchema,
  SeveritySchema,
  Text,
  TornEvidenceSchema,
  U64,
  VerdictSchema,
  closed,
  scanOptionsFields,
} from "../domain/schema-vocabulary.js";
import { NextCommandSchema, NodeJsonSchema } from "./node-schema.js";
import { SCAN_ERROR_CODES } from "../io/errors.js";

export { SCAN_ERROR_CODES } from "../io/errors.js";
/** A refusal or warning message: at least one non-space character. */
const Message = Type.String({ pattern: "\\S" });

const refusal = <Code extends string, Fields extends TProperties>(code: Code, fields: Fields) =>
  closed({ code: Type.Literal(code), message: Message, ...fields });

/** docs/recovery.md §5: one closed object per refusal code, with its fields; `segment` is the segment's start offset. */
export const REFUSAL_SCHEMAS = {
  InteriorDamage: refusal("InteriorDamage", { segment: U64, damagePosition: Count, survivorPosition: Count }),
  UnverifiedResidue: refusal("UnverifiedResidue", {
    segment: U64,
    damagePosition: Count,
    residueBytes: Count,
    limitUnits: Count,
    spentUnits: Count,
    stoppedAt: Count,
  }),
  OffsetDiscontinuity: refusal("OffsetDiscontinuity", { segment: U64, position: Count, expectedOffset: U64, foundOffset: U64 }),
  IndexEntriesNotMonotone: refusal("IndexEntriesNotMonotone", { segment: U64, entryIndex: Count }),
  IndexEntryBeforeSegmentStart: refusal("IndexEntryBeforeSegmentStart", { segment: U64, firstEntryOffset: U64 }),
  SizeDivergence: refusal("SizeDivergence", { segment: U64, indexedOffset: U64, indexedPosition: Count, messagesSize: Count }),
  EmptyNonTailSegment: refusal("EmptyNonTailSegment", { emptyStart: U64, nextStart: U64 }),
  Hole: refusal("Hole", { previousStart: U64, previousEnd: U64, nextStart: U64 }),
  Overlap: refusal("Overlap", { previousStart: U64, previousEnd: U64, nextStart: U64 }),
};

export const RefusalSchema = Type.Union(
  [
    REFUSAL_SCHEMAS.InteriorDamage,
    REFUSAL_SCHEMAS.UnverifiedResidue,
    REFUSAL_SCHEMAS.OffsetDiscontinuity,
    REFUSAL_SCHEMAS.IndexEntriesNotMonotone,
    REFUSAL_SCHEMAS.IndexEntryBeforeSegmentStart,
    REFUSAL_SCHEMAS.SizeDivergence,
    REFUSAL_SCHEMAS.EmptyNonTailSegment,
    REFUSAL_SCHEMAS.Hole,
    REFUSAL_SCHEMAS.Overlap,
  ],
  { description: "A refusal (docs/recovery.md §5); its fields depend on its code" },
);

export const ResidueSchema = closed({
  damagePosition: Count,
  bytes: Count,
  allZero: Type.Boolean(),
  probe: Type.Union([Type.Literal("no-survivor"), Type.Literal("survivor"), Type.Literal("budget-exhausted")]),
  survivorPosition: Type.Union([Count, Type.Null()]),
  spentUnits: Count,
  tornEvidence: TornEvidenceSchema,
});

/** docs/recovery.md §3.7: the kinds of a scope-of-loss range. */
export const ScopeKindSchema = Type.Union([
  Type.Literal("proven"),
  Type.Literal("unreadable"),
  Type.Literal("intact"),
  Type.Literal("torn"),
  Type.Literal("missing"),
]);

const scopeRangeFields = {
  kind: ScopeKindSchema,
  firstOffset: Type.Union([U64, Type.Null()]),
  lastOffset: Type.Union([U64, Type.Null()]),
  messages: Type.Union([Count, Type.Null()]),
  bytes: Count,
  tornEvidence: Type.Union([TornEvidenceSchema, Type.Null()]),
};

/** One range of a partition's scope of loss (docs/interfaces.md §9.3, docs/recovery.md §3.7). */
export const PartitionScopeRangeSchema = closed(scopeRangeFields, "a range of the partition's scope of loss (offsets, no positions)");

/** One range of a segment's scope of loss: a partition range plus its byte positions in the .log. */
export const SegmentScopeRangeSchema = closed(
  {
    ...scopeRangeFields,
    startPosition: Count,
    endPosition: Count,
  },
  "a range of the segment's scope of loss",
);

export const GapSchema = closed({ position: Count, expectedOffset: U64, foundOffset: U64 });

/** A batch accepted with a warning (docs/format.md §2.2: a verified batch over MAX_BATCH_BYTES). */
export const SegmentWarningSchema = closed({
  code: Type.Literal("OversizedBatch"),
  position: Count,
  batchLength: Count,
  message: Message,
});

export const SegmentSchema = closed({
  startOffset: U64,
  endOffset: Type.Union([U64, Type.Null()]),
  startTimestamp: Type.Union([U64, Type.Null()]),
  endTimestamp: Type.Union([U64, Type.Null()]),
  messageCount: Type.Union([Count, Type.Null()]),
  logPath: Text,
  messagesSize: Count,
  indexSize: Count,
  arm: Type.Union([Type.Literal("indexed"), Type.Literal("index-less"), Type.Literal("empty-file")]),
  outcome: Type.Union([Type.Literal("clean"), Type.Literal("torn-tail"), Type.Literal("empty"), Type.Literal("refused")]),
  walkedSize: Count,
  residue: Type.Union([ResidueSchema, Type.Null()]),
  gaps: Type.Array(GapSchema),
  index: closed({ entries: Count, trailingBytes: Count, rebuilt: Type.Boolean(), rebuiltEntries: Count, mismatches: Count }),
  refusal: Type.Union([RefusalSchema, Type.Null()]),
  warnings: Type.Array(SegmentWarningSchema),
  /** The last verified batch holding messages (null: none verified): base offset and header batch checksum. */
  lastBatch: Type.Union([closed({ baseOffset: U64, checksum: U64 }), Type.Null()]),
  /** Deep mode only: XXH3-64 over the checksums of every batch verified from byte 0 (null otherwise). */
  batchChecksumsXxh3: Type.Union([U64, Type.Null()]),
  /** docs/recovery.md §3.7: ranges tiling the .log in byte order, the proven one first. */
  scope: Type.Array(SegmentScopeRangeSchema),
});

export const ScanErrorSchema = closed({
  code: Type.Union(SCAN_ERROR_CODES.map((code) => Type.Literal(code))),
  path: Text,
  message: Text,
});

/** A directory entry the scan saw and left alone. */
export const IgnoredEntrySchema = closed({
  path: Text,
  kind: Type.Union([Type.Literal("bad-segment-name"), Type.Literal("not-regular-file"), Type.Literal("directory-symlink")]),
  message: Text,
});

/**
 * docs/repair.md §6.6: what a partition's preserve dir records beside its
 * bytes. `SalvageLostOffsets` (warn): offsets a salvage dropped and recorded
 * as lost, one finding per range, until a restore or `segscan forget
 * <partition> --lost-offsets --apply`; `SalvageRecordUnreadable` (failed): a
 * journal that cannot be read, so what it records is unknown.
 */
export const PartitionFindingSchema = Type.Union(
  [
    closed({
      severity: Type.Literal("warn"),
      code: Type.Literal("SalvageLostOffsets"),
      /** The journal the loss was read from. */
      path: Text,
      message: Message,
      nextStep: Message,
      /** The journal line of the salvage step's intent, its run, and the run's start time (ISO 8601; null if not journaled). */
      line: Count,
      run: Text,
      salvagedAt: Type.Union([Text, Type.Null()]),
      /** The segment (its start offset) the range was dropped from. */
      segment: U64,
      kind: Type.Union([Type.Literal("unreadable"), Type.Literal("torn")]),
      /** The offsets recorded as lost; null where the journal knows none. */
      firstOffset: Type.Union([U64, Type.Null()]),
      lastOffset: Type.Union([U64, Type.Null()]),
      /** At most this many messages (null: unknown). */
      messages: Type.Union([Count, Type.Null()]),
      bytes: Count,
      /** False when the salvage step never journaled `done` (it may not have taken effect). */
      completed: Type.Boolean(),
      /** The command `nextStep` names, as an argv: the one that clears the record (a dry run; `--apply` carries it out). */
      nextCommand: Type.Array(Text, { minItems: 1 }),
    }),
    closed({
      severity: Type.Literal("failed"),
      code: Type.Literal("SalvageRecordUnreadable"),
      /** The journal or preserve dir that could not be read. */
      path: Text,
      message: Message,
      nextStep: Message,
      nextCommand: Type.Null(),
    }),
  ],
  { description: "A partition finding (docs/repair.md §6.6); its fields depend on its code" },
);

export const PartitionSchema = closed({
  path: Text,
  verdict: VerdictSchema,
  action: ActionSchema,
  refusal: Type.Union([RefusalSchema, Type.Null()]),
  error: Type.Union([ScanErrorSchema, Type.Null()]),
  budget: closed({ limitUnits: Count, spentUnits: Count }),
  sweep: Type.Array(closed({ path: Text, kind: Type.Union([Type.Literal("staging"), Type.Literal("orphan-index")]) })),
  ignored: Type.Array(IgnoredEntrySchema),
  segments: Type.Array(SegmentSchema),
  /** docs/recovery.md §3.7: the segments' ranges merged in offset order, the proven one first; [] when failed. */
  scope: Type.Array(PartitionScopeRangeSchema),
  /** docs/repair.md §6.4: what the operator does next, one line (a command in it shell-quoted). */
  nextStep: Message,
  /** docs/repair.md §6.6: what the preserve dir records beside the bytes (a salvage's lost offsets); usually empty. */
  findings: Type.Array(PartitionFindingSchema),
  /** docs/repair.md §6.4: the command `nextStep` names as an argv array, or null; absent only in reports of earlier builds. */
  nextCommand: Type.Optional(NextCommandSchema),
});

export const ScanOptionsSchema = closed(scanOptionsFields);

export const SummarySchema = closed({
  partitions: Count,
  clean: Count,
  repairable: Count,
  refused: Count,
  failed: Count,
  /** Partition findings by severity (docs/repair.md §6.6): warn makes the verdict at least warn, failed makes it failed. */
  findings: closed({ warn: Count, failed: Count }),
  bytesScanned: Count,
  elapsedMs: Type.Number({ minimum: 0 }),
});

export const ScanReportSchema = closed(
  {
    segscan: Text,
    engine: EngineKindSchema,
    /** docs/node.md N0: the scan's one verdict, partitions and (on a node root) the node together. */
    verdict: SeveritySchema,
    options: ScanOptionsSchema,
    partitions: Type.Array(PartitionSchema),
    summary: SummarySchema,
    /** docs/node.md N9: present only when the scan met exactly one node root (a given path, or one found below a given path). */
    node: Type.Optional(NodeJsonSchema),
    /** docs/node.md N0: one node section per node root, in the order met, when the scan met several (then `node` is absent). */
    nodes: Type.Optional(Type.Array(NodeJsonSchema, { minItems: 2 })),
  },
  "segscan scan --json report (docs/interfaces.md §9.3)",
);

/** docs/interfaces.md §9.3: what each `scan --ndjson` line is, its `type`. */
export const NDJSON_LINE_TYPES = { partition: "partition", summary: "summary" } as const;

/**
 * A `scan --ndjson` partition line (docs/interfaces.md §9.3): `type`, then the
 * partition exactly as in the `--json` report's `partitions`, and under a node
 * root `node`, its directory's entry of that node's section.
 */
export const NdjsonPartitionLineSchema = closed(
  {
    type: Type.Literal(NDJSON_LINE_TYPES.partition),
    ...PartitionSchema.properties,
    node: Type.Optional(NodeJsonSchema.properties.partitions.items),
  },
  "a scan --ndjson partition line",
);

const { partitions: _partitions, ...reportWithoutPartitions } = ScanReportSchema.properties;

/** The last `scan --ndjson` line: `type`, then the `--json` report without `partitions`. */
export const NdjsonSummaryLineSchema = closed(
  { type: Type.Literal(NDJSON_LINE_TYPES.summary), ...reportWithoutPartitions },
  "the last scan --ndjson line: the report without its partitions",
);

export type JsonScanReport = Static<typeof ScanReportSchema>;
export type JsonScanOptions = Static<typeof ScanOptionsSchema>;
export type JsonPartition = Static<typeof PartitionSchema>;
export type JsonSegment = Static<typeof SegmentSchema>;
export type JsonRefusal = Static<typeof RefusalSchema>;
export type JsonResidue = Static<typeof ResidueSchema>;
export type JsonSegmentScopeRange = Static<typeof SegmentScopeRangeSchema>;
export type JsonPartitionScopeRange = Static<typeof PartitionScopeRangeSchema>;
export type JsonGap = Static<typeof GapSchema>;
export type JsonSegmentWarning = Static<typeof SegmentWarningSchema>;
export type JsonIgnoredEntry = Static<typeof IgnoredEntrySchema>;
export type JsonPartitionFinding = Static<typeof PartitionFindingSchema>;
export type JsonScanError = Static<typeof ScanErrorSchema>;

/**
 * `docs/report.schema.json`: the report schema as JSON Schema (draft 2020-12)
 * text; its `$defs` hold the two kinds of `scan --ndjson` line.
 */
export function reportJsonSchemaText(): string {
  const document = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "segscan scan --json report",
    ...ScanReportSchema,
    $defs: { ndjsonPartitionLine: NdjsonPartitionLineSchema, ndjsonSummaryLine: NdjsonSummaryLineSchema },
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
