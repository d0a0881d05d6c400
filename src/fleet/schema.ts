/**
 * The `segscan fleet --json` report (docs/fleet.md), defined once: the JSON
 * types are derived from it, `validateFleetReport` checks against it, and
 * `docs/fleet.schema.json` is generated from it (`npm run schema`; a test
 * fails when the committed file is out of date). u64 values (offsets, ops,
 * counts of offsets) are decimal strings; every object is closed.
 */
import { type Static, Type } from "@sinclair/typebox";
import {
  ActionSchema,
  Count,
  EngineKindSchema,
  Text,
  U64,
  VerdictSchema,
  closed,
  literals,
  nullable,
} from "../domain/schema-vocabulary.js";
import { schemaProblems } from "../report/json-validate.js";

/** An inclusive offset range and the number of offsets in it. */
export const OffsetRangeSchema = closed({ from: U64, to: U64, count: U64 });

/** A partition's verdict across its replicas (docs/fleet.md "Per partition"), best first. */
export const FLEET_VERDICTS = ["clean", "lagging", "degraded", "unknown", "failed", "lost", "diverged"] as const;
/** The cluster's one verdict (docs/fleet.md "Verdict"), best first: the partitions' worst, the metadata plane's, and reports that cannot be merged. */
export const CLUSTER_VERDICTS = ["clean", "lagging", "degraded", "unknown", "failed", "conflict", "lost", "diverged"] as const;
export const REPLICA_ROLES = ["in-sync", "lagging", "damaged", "diverged", "failed", "missing", "unknown"] as const;
export const LOST_KINDS = ["durable", "unacknowledged", "unclaimed"] as const;
export const IDENTITY_CONFLICTS = ["ClusterMismatch", "ReplicaCountMismatch", "DuplicateReplicaId", "ReplicaIdOutOfRange"] as const;

/**
 * What to do next (docs/fleet.md "Next steps"): a sentence, and when a segscan
 * (or other) command does it, that command as an argv array and shell-quoted,
 * with the real paths from the reports, to run on `node`.
 */
export const FleetStepSchema = closed({
  /** What the step is about: a partition verdict or replica role, or a cluster finding's code. */
  about: Text,
  /** The node to run it on (null: any, or no command). */
  node: nullable(Text),
  text: Text,
  /** The command, shell-quoted: pasted into bash it runs `argv` exactly (null: no command does it). */
  command: nullable(Text),
  argv: nullable(Type.Array(Text)),
});

export const FleetReplicaSchema = closed(
  {
    node: Text,
    /** False: this node's report has no line for the partition (role missing or unknown). */
    present: Type.Boolean(),
    path: nullable(Text),
    verdict: nullable(VerdictSchema),
    action: nullable(ActionSchema),
    role: literals(REPLICA_ROLES),
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
  "one replica of a partition; role unknown: its report does not cover the partition (not a node root scan), so what it holds is unknown",
);

export const LostRangeSchema = closed({
  from: U64,
  to: U64,
  count: U64,
  /** durable: a replica says the offsets were there (refused, unreadable, a hole); unacknowledged: only torn tails claim them; unclaimed: no replica claims them. */
  kind: literals(LOST_KINDS),
  /** The end is a lower bound: a refusal says where the loss starts, not where it ends. */
  openEnded: Type.Boolean(),
  claimedBy: Type.Array(closed({ node: Text, as: Text })),
});

export const DivergenceSchema = closed({
  kind: literals(["last-batch", "segment-digest"] as const),
  /** The base offset of the batch (last-batch) or the segment's start offset (segment-digest). */
  offset: U64,
  replicas: Type.Array(closed({ node: Text, segment: U64, checksum: U64 })),
  /** The checksum more than half of these replicas hold, and they (null: no majority). */
  majority: nullable(closed({ checksum: U64, nodes: Type.Array(Text) })),
  /** The odd replicas out: every replica outside the majority (all of them when there is none). */
  odd: Type.Array(Text),
  message: Text,
});

/** A consumer's or group's stored offset past every replica's head: one entry per consumer or group, however many nodes store it. */
export const OffsetAheadSchema = closed({
  kind: literals(["consumer", "group"] as const),
  id: Count,
  /** The highest offset any node stores for it. */
  offset: U64,
  /** Each node that stores an offset past the head, and its offset. */
  nodes: Type.Array(closed({ node: Text, offset: U64 })),
  clusterHead: nullable(U64),
  /** Offsets the cluster will mint again below the highest stored offset. */
  reminted: U64,
  message: Text,
});

export const FleetPartitionSchema = closed({
  key: Text,
  streamId: Count,
  topicId: Count,
  partitionId: Count,
  verdict: literals(FLEET_VERDICTS),
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
  /**
   * The replicas judged (neither failed nor outside their report) of the
   * cluster's replica count: "lost on every replica" holds only when the two agree.
   */
  judged: closed({ replicas: Count, of: Count }),
  nextSteps: Type.Array(FleetStepSchema),
});

export const FleetNodeSchema = closed({
  name: Text,
  file: Text,
  root: nullable(Text),
  format: literals(["json", "ndjson"] as const),
  engine: EngineKindSchema,
  verify: literals(["tail", "full"] as const),
  partitions: Count,
  /** Partition lines whose path names no `streams/<s>/topics/<t>/partitions/<p>`: not merged. */
  unidentified: Count,
  /** The scan's `--replicas`: its own next steps assume it. */
  replicas: Count,
  /** Whether the report is of a node root, so it covers every partition under it (a partition it lacks is missing, not unknown). */
  coversRoot: Type.Boolean(),
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
  identityConflicts: Type.Array(closed({ code: literals(IDENTITY_CONFLICTS), nodes: Type.Array(Text), message: Text })),
  /** The replica count the superblocks agree on (the majority's), or null (no superblock identity). */
  replicaCount: nullable(Count),
});

export const FleetSummarySchema = closed({
  nodes: Count,
  partitions: Count,
  clean: Count,
  lagging: Count,
  degraded: Count,
  unknown: Count,
  lost: Count,
  diverged: Count,
  failed: Count,
  /** Replicas whose partition the scan could not judge (in any partition, whatever its verdict). */
  failedReplicas: Count,
  /** Replicas whose report does not cover a partition another report has (in any partition). */
  unknownReplicas: Count,
  /** Partition lines that name no partition (no `streams/<s>/topics/<t>/partitions/<p>`): not merged, never clean. */
  unidentified: Count,
  /** Offsets no replica holds that a replica claims durable. */
  lostOffsets: U64,
  /** Of lostOffsets, those in partitions where some replica was not judged: lost on every replica that could be judged. */
  lostOffsetsNotAllJudged: U64,
  unacknowledgedOffsets: U64,
  offsetsAhead: Count,
  identityConflicts: Count,
  metadataOpsLost: U64,
});

export const FleetReportSchema = closed(
  {
    segscan: Text,
    /** The cluster's one verdict: the worst of the partitions' verdicts, the metadata plane's (lost ops, conflicting identities) and unmerged lines. */
    verdict: literals(CLUSTER_VERDICTS),
    nodes: Type.Array(FleetNodeSchema),
    partitions: Type.Array(FleetPartitionSchema),
    metadata: FleetMetadataSchema,
    summary: FleetSummarySchema,
    /** Cluster-wide next steps: the metadata plane's findings, reports that do not cover what others hold, lines not merged. */
    nextSteps: Type.Array(FleetStepSchema),
    /** What may make this view incomplete: reports scanned with another --replicas than the nodes merged, fewer reports than replicas. */
    warnings: Type.Array(Text),
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
export type ClusterVerdict = (typeof CLUSTER_VERDICTS)[number];
export type FleetStep = Static<typeof FleetStepSchema>;
export type OffsetAhead = Static<typeof OffsetAheadSchema>;
export type Divergence = Static<typeof DivergenceSchema>;
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
