/**
 * The JSON schema of the node section (docs/node.md N9), in TypeBox. u64 values
 * are decimal strings; every object is closed except a finding, whose
 * code-specific fields are open (strings, numbers, booleans or null).
 */
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Count, SeveritySchema, Text, U64, U128 } from "../domain/schema-vocabulary.js";

/**
 * docs/repair.md §6.4: the command a next step names, as an argv array with
 * the real path (`["segscan", "repair", "/var/lib/iggy", "--apply"]`; the line
 * prints it shell-quoted), or null when the step names none.
 */
export const NextCommandSchema = Type.Union([Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Null()], {
  description: "the command the next step names, as an argv array (null: it names none)",
});

export const NodeFindingSchema = Type.Object(
  {
    severity: SeveritySchema,
    code: Type.String({ minLength: 1 }),
    path: Text,
    message: Type.String({ minLength: 1 }),
    /** docs/repair.md §6.4: what the operator does next, one line (the text and HTML reports print the same). */
    nextStep: Type.String({ minLength: 1 }),
    /** The command `nextStep` names, as an argv array, or null; absent only in reports of earlier builds. */
    nextCommand: Type.Optional(NextCommandSchema),
  },
  { additionalProperties: Type.Union([Text, Type.Number(), Type.Boolean(), Type.Null()]) },
);

const Findings = Type.Array(NodeFindingSchema);

export const SuperblockJsonSchema = Type.Object(
  {
    directory: Text,
    state: Type.Union(["present", "empty", "unreadable", "undecodable", "failed"].map((s) => Type.Literal(s))),
    slotA: Text,
    slotB: Text,
    sequence: Type.Union([U64, Type.Null()]),
    cluster: Type.Union([U128, Type.Null()]),
    replicaId: Type.Union([Count, Type.Null()]),
    replicaCount: Type.Union([Count, Type.Null()]),
    view: Type.Union([Count, Type.Null()]),
    logView: Type.Union([Count, Type.Null()]),
    commitMax: Type.Union([U64, Type.Null()]),
    checkpointOp: Type.Union([U64, Type.Null()]),
    checkpointChecksum: Type.Union([Type.String({ pattern: "^[0-9]+$" }), Type.Null()]),
    offsetFrontier: Type.Union([U64, Type.Null()]),
    findings: Findings,
  },
  { additionalProperties: false },
);

const WalJsonSchema = Type.Object(
  {
    path: Text,
    size: Count,
    entries: Count,
    ops: Type.Union([Type.Object({ first: U64, last: U64 }, { additionalProperties: false }), Type.Null()]),
    unsealed: Type.Object({ headers: Count, bodies: Count }, { additionalProperties: false }),
    walkedSize: Count,
    residue: Type.Union([
      Type.Object(
        {
          damagePosition: Count,
          bytes: Count,
          reason: Text,
          probe: Type.Union([Type.Literal("no-survivor"), Type.Literal("survivor"), Type.Literal("budget-exhausted")]),
          allZero: Type.Boolean(),
          survivorPosition: Type.Union([Count, Type.Null()]),
          stoppedAt: Type.Union([Count, Type.Null()]),
          spentUnits: Count,
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    budget: Type.Object({ limitUnits: Count, spentUnits: Count }, { additionalProperties: false }),
    iggy: Type.Object(
      {
        scan: Type.Union([Type.Literal("boot"), Type.Literal("truncate-tail"), Type.Literal("refuse")]),
        position: Type.Union([Count, Type.Null()]),
        reason: Text,
        truncateFromOp: Type.Union([U64, Type.Null()]),
        opsLost: Count,
      },
      { additionalProperties: false },
    ),
    findings: Findings,
  },
  { additionalProperties: false },
);

const SnapshotJsonSchema = Type.Object(
  {
    path: Text,
    present: Type.Boolean(),
    size: Count,
    sealed: Type.Boolean(),
    checksum: Type.Union([Type.String({ pattern: "^[0-9]+$" }), Type.Null()]),
    sequenceNumber: Type.Union([U64, Type.Null()]),
    streams: Count,
    topics: Count,
    partitions: Count,
    findings: Findings,
  },
  { additionalProperties: false },
);

export const NodeJsonSchema = Type.Object(
  {
    path: Text,
    verdict: SeveritySchema,
    metadata: Type.Object(
      {
        present: Type.Boolean(),
        wal: Type.Union([WalJsonSchema, Type.Null()]),
        snapshot: Type.Union([SnapshotJsonSchema, Type.Null()]),
        superblock: Type.Union([SuperblockJsonSchema, Type.Null()]),
        findings: Findings,
      },
      { additionalProperties: false },
    ),
    partitions: Type.Array(
      Type.Object(
        {
          path: Text,
          superblock: Type.Union([SuperblockJsonSchema, Type.Null()]),
          /** docs/node.md N4: H after the planned segment repair. */
          head: Type.Object(
            {
              lastProvenOffset: Type.Union([U64, Type.Null()]),
              offsetFrontier: U64,
              head: Type.Union([U64, Type.Null()]),
              known: Type.Boolean(),
              quarantined: Type.Boolean(),
            },
            { additionalProperties: false },
          ),
          /** docs/node.md N5. */
          purgeGeneration: Type.Union([
            Type.Object(
              {
                path: Text,
                present: Type.Boolean(),
                size: Type.Union([Count, Type.Null()]),
                generation: Type.Union([U64, Type.Null()]),
                createdRevision: Type.Union([U64, Type.Null()]),
                expectedGeneration: Type.Union([U64, Type.Null()]),
                expectedRevision: Type.Union([U64, Type.Null()]),
                findings: Findings,
              },
              { additionalProperties: false },
            ),
            Type.Null(),
          ]),
          /** docs/node.md N4. */
          offsets: Type.Array(
            Type.Object(
              {
                kind: Type.Union([Type.Literal("consumer"), Type.Literal("group")]),
                id: Type.Integer({ minimum: 0, maximum: 0xffff_ffff }),
                path: Text,
                size: Type.Union([Count, Type.Null()]),
                offset: Type.Union([U64, Type.Null()]),
                checksummed: Type.Boolean(),
                head: Type.Union([U64, Type.Null()]),
                findings: Findings,
              },
              { additionalProperties: false },
            ),
          ),
          /** docs/node.md N6: `<p>.fenced.<n>/` siblings. */
          fenced: Type.Array(Text),
          findings: Findings,
        },
        { additionalProperties: false },
      ),
    ),
    notDurable: Type.Array(Text),
    crossCheck: Type.Object(
      {
        orphanDirs: Type.Array(Text),
        missingDirs: Type.Array(Text),
        inconclusiveStreams: Type.Array(Count),
      },
      { additionalProperties: false },
    ),
    bootForecast: Type.Array(
      Type.Object(
        {
          effect: Type.Union(
            [
              "refuse-boot",
              "truncate-wal-tail",
              "truncate-wal-from-op",
              "run-without-committed-ops",
              "unlink-offset-file",
              "clamp-offset",
              "re-purge-partition",
              "quarantine-partition",
              "tombstone-partition",
              "recreate-partition-empty",
              "sweep-scratch",
            ].map((s) => Type.Literal(s)),
          ),
          path: Text,
          destructive: Type.Boolean(),
          detail: Text,
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type JsonNode = Static<typeof NodeJsonSchema>;
export type JsonSuperblock = Static<typeof SuperblockJsonSchema>;
export type JsonNodeFinding = Static<typeof NodeFindingSchema>;

/** Problems with a parsed node section; empty when it matches the schema. */
export function validateNodeJson(value: unknown, at = "$.node"): string[] {
  return [...Value.Errors(NodeJsonSchema, value)].map((error) => `${at}${error.path.replaceAll("/", ".")}: ${error.message}`);
}
