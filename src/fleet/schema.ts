/**
 * The `segscan fleet --json` report (docs/fleet.md), defined once: the JSON
 * types are derived from it, `validateFleetReport` checks against it, and
 * `docs/fleet.schema.json` is generated from it (`npm run schema`; a test
 * fails when the committed file is out of date). u64 values (offsets, ops,
 * counts of offsets) are decimal strings; every object is closed.
 */
import { type Static, type TObject, type TProperties, Type } from "@sinclair/typebox";
import { schemaProblems } from "../report/json-validate.js";

const U64 = Type.String({ pattern: "^(0|[1-9][0-9]*)$", format: "u64", description: "u64 as a decimal string" });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Text = Type.String();
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const closed = <T extends TProperties>(properties: T, description?: string): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, ...(description === undefined ? {} : { description }) });
const literals = <T extends string>(...values: T[]) => Type.Union(values.map((value) => Type.Literal(value)));

/** An inclusive offset range and the number of offsets in it. */
export const OffsetRangeSchema = closed({ from: U64, to: U64, count: U64 });

export const FLEET_VERDICTS = ["clean", "lagging", "degraded", "lost", "diverged", "failed"] as const;
export const REPLICA_ROLES = ["in-sync", "lagging", "damaged", "failed", "missing"] as const;
export const LOST_KINDS = ["durable", "unacknowledged", "unclaimed"] as const;
export const IDENTITY_CONFLICTS = ["ClusterMismatch", "ReplicaCountMismatch", "DuplicateReplicaId", "ReplicaIdOutOfRange"] as const;

export const FleetReplicaSchema = closed(
  {
    node: Text,
    /** False: this node's report has no line for the partition. */
    present: Type.Boolean(),
    path: nullable(Text),
    verdict: nullable(literals("clean", "repairable", "refused", "failed")),
    action: nullable(literals("serve", "repair", "tombstone", "rebuild-from-peers", "retry")),
    role: literals(...REPLICA_ROLES),
    /** Offsets whose batches verify here and that the planned repair keeps. */
    proven: Type.Array(OffsetRangeSchema),
    /** Offsets that verify past a damage (scope of loss): held, though the replica is refused. */
    intact: Type.Array(OffsetRangeSchema),
    head: nullable(U64),
    cuts: Type.Array(closed({ segment: U64, fromOffset: U64, bytes: Count, claimed: nullable(OffsetRangeSchema) })),
    unreadable: Type.Array(closed({ from: U64, to: U64, count: U64, openEnded: Type.Boolean(), code: Text })),
    refusals: Type.Array(closed({ code: Text, segment: nullable(U64), message: Text })),
    error: nullable(Text),
    /** Offsets another replica holds that this one lacks (from its first segment on). */
    missing: Type.Array(OffsetRangeSchema),
    /** Lagging: offsets between its head and the cluster's head. */
    behind: nullable(U64),
    /** The peer to rebuild or catch up from: the one holding the most of what this replica lacks (null: none holds any). */
    rebuildFrom: nullable(Text),
    nextSteps: Type.Array(Text),
  },
  "one replica of a partition",
);

export const LostRangeSchema = closed({
  from: U64,
  to: U64,
  count: U64,
  /** durable: a replica says the offsets were there (refused, unreadable, a hole); unacknowledged: only torn tails claim them; unclaimed: no replica claims them. */
  kind: literals(...LOST_KINDS),
  /** The end is a lower bound: a refusal says where the loss starts, not where it ends. */
  openEnded: Type.Boolean(),
  claimedBy: Type.Array(closed({ node: Text, as: Text })),
});

export const DivergenceSchema = closed({
  kind: literals("last-batch", "segment-digest"),
  /** The base offset of the batch (last-batch) or the segment's start offset (segment-digest). */
  offset: U64,
  replicas: Type.Array(closed({ node: Text, segment: U64, checksum: U64 })),
  message: Text,
});

export const OffsetAheadSchema = closed({
  node: Text,
  kind: literals("consumer", "group"),
  id: Count,
  offset: U64,
  clusterHead: nullable(U64),
  /** Offsets the cluster will mint again below this stored offset. */
  reminted: U64,
  message: Text,
});

export const FleetPartitionSchema = closed({
  key: Text,
  streamId: Count,
  topicId: Count,
  partitionId: Count,
  verdict: literals(...FLEET_VERDICTS),
  /** From the lowest offset any replica holds or claims to the highest. */
  span: nullable(closed({ from: U64, to: U64 })),
  /** The highest offset any replica proves. */
  head: nullable(U64),
  /** Offsets held by at least one replica: the union of proven (and intact) ranges. */
  held: Type.Array(OffsetRangeSchema),
  /** Offsets of the span no replica holds: the span without `held`. */
  lost: Type.Array(LostRangeSchema),
  replicas: Type.Array(FleetReplicaSchema),
  divergence: Type.Array(DivergenceSchema),
  offsetsAhead: Type.Array(OffsetAheadSchema),
});

export const FleetNodeSchema = closed({
  name: Text,
  file: Text,
  root: nullable(Text),
  format: literals("json", "ndjson"),
  engine: literals("wasm", "ts"),
  verify: literals("tail", "full"),
  partitions: Count,
  /** Partition lines whose path names no `streams/<s>/topics/<t>/partitions/<p>`: not merged. */
  unidentified: Count,
});

export const MetadataNodeSchema = closed({
  node: Text,
  /** False: the report has no node section (not a node root scan). */
  present: Type.Boolean(),
  walOps: nullable(closed({ first: U64, last: U64 })),
  commitMax: nullable(U64),
  view: nullable(Count),
  logView: nullable(Count),
  checkpointOp: nullable(U64),
  snapshotOp: nullable(U64),
  /** Whether the node's boot forecast has no refuse-boot. */
  boots: nullable(Type.Boolean()),
  /** The highest op this node holds after its boot (snapshot and WAL); null: it does not boot. */
  heldOp: nullable(U64),
  cluster: nullable(Text),
  replicaId: nullable(Count),
  replicaCount: nullable(Count),
});

export const FleetMetadataSchema = closed({
  nodes: Type.Array(MetadataNodeSchema),
  highestCommitted: nullable(U64),
  committedBy: Type.Array(Text),
  /** Ops committed somewhere and held by no node that boots. */
  opsLost: nullable(OffsetRangeSchema),
  identityConflicts: Type.Array(closed({ code: literals(...IDENTITY_CONFLICTS), nodes: Type.Array(Text), message: Text })),
});

export const FleetSummarySchema = closed({
  nodes: Count,
  partitions: Count,
  clean: Count,
  lagging: Count,
  degraded: Count,
  lost: Count,
  diverged: Count,
  failed: Count,
  /** Replicas whose partition the scan could not judge (in any partition, whatever its verdict). */
  failedReplicas: Count,
  lostOffsets: U64,
  unacknowledgedOffsets: U64,
  offsetsAhead: Count,
  identityConflicts: Count,
  metadataOpsLost: U64,
});

export const FleetReportSchema = closed(
  {
    segscan: Text,
    nodes: Type.Array(FleetNodeSchema),
    partitions: Type.Array(FleetPartitionSchema),
    metadata: FleetMetadataSchema,
    summary: FleetSummarySchema,
  },
  "segscan fleet --json report (docs/fleet.md)",
);

export type FleetReport = Static<typeof FleetReportSchema>;
export type FleetPartition = Static<typeof FleetPartitionSchema>;
export type FleetReplica = Static<typeof FleetReplicaSchema>;
export type FleetNode = Static<typeof FleetNodeSchema>;
export type FleetMetadata = Static<typeof FleetMetadataSchema>;
export type FleetSummary = Static<typeof FleetSummarySchema>;
export type FleetVerdict = (typeof FLEET_VERDICTS)[number];
export type LostRange = Static<typeof LostRangeSchema>;
export type OffsetRangeJson = Static<typeof OffsetRangeSchema>;

/** Problems with a parsed value as a `fleet --json` report, one line each; empty when it matches. */
export function validateFleetReport(value: unknown): string[] {
  return schemaProblems(FleetReportSchema, value, "$");
}

/** `docs/fleet.schema.json`: the fleet report schema as JSON Schema (draft 2020-12) text. */
export function fleetJsonSchemaText(): string {
  return `${JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", title: "segscan fleet --json report", ...FleetReportSchema }, null, 2)}\n`;
}
