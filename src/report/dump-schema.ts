/**
 * The `segscan dump --json` documents (docs/interfaces.md §9.2), defined once:
 * one closed object per kind of file dump reads, told apart by `kind`: a
 * segment `.log` (its batches, and with `--messages` their frames), a
 * `.index` (its entries), the metadata WAL (its entries, docs/node.md N1) and
 * the metadata snapshot (its trailer, header fields and counts, docs/node.md
 * N2). `docs/dump.schema.json` is generated from this (`npm run schema`; a
 * test fails when it is out of date). u64 values are decimal strings,
 * checksums and ids hex strings (`0x` and every digit), byte positions and
 * counts numbers.
 */
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Count, EngineKindSchema, Text, U64, closed, literals } from "../domain/schema-vocabulary.js";
import { VERIFY_STATUS_NAMES } from "../format/records.js";
import { USER_HEADER_KINDS } from "../format/user-headers.js";
import { NodeFindingSchema } from "./node-schema.js";

const hex = (digits: number, what: string) => Type.String({ pattern: `^0x[0-9a-f]{${digits}}$`, description: what });
const Hex32 = hex(8, "a u32 as 0x and 8 hex digits");
const Hex64 = hex(16, "a u64 as 0x and 16 hex digits");
const Hex128 = hex(32, "a u128 as 0x and 32 hex digits");
const Engine = EngineKindSchema;
/** Where a listing stopped before the file's end, or null when it reached it. */
const Stopped = Type.Union([closed({ position: Count, reason: Text }), Type.Null()]);

const UserHeaderSchema = closed({ keyKind: literals(USER_HEADER_KINDS), key: Text, valueKind: literals(USER_HEADER_KINDS), value: Text });

const FrameSchema = closed({
  position: Count,
  offset: U64,
  timestamp: U64,
  originTimestamp: U64,
  id: Hex128,
  frameBytes: Count,
  payloadLength: Count,
  userHeadersLength: Count,
  userHeaders: Type.Array(UserHeaderSchema),
  userHeadersProblem: Type.Optional(Text),
  checksum: literals(["ok", "mismatch", "reserved-nonzero", "overrun"]),
});

const BatchSchema = closed({
  position: Count,
  baseOffset: U64,
  lastOffset: Type.Union([U64, Type.Null()]),
  messageCount: Count,
  baseTimestamp: U64,
  originTimestamp: U64,
  batchLength: Count,
  partitionId: U64,
  checksum: Hex64,
  /** docs/format.md §2.1: what verifying the batch concluded. */
  verify: literals(Object.values(VERIFY_STATUS_NAMES)),
  /** With `--messages`: every frame of a batch whose blob lies inside the file. */
  messages: Type.Optional(Type.Array(FrameSchema)),
  /** Why frames stop before the blob's end (a frame that overruns it). */
  messagesStopped: Type.Optional(Text),
});

export const SegmentDumpSchema = closed(
  {
    kind: Type.Literal("segment"),
    file: Text,
    size: Count,
    engine: Engine,
    batches: Type.Array(BatchSchema),
    verified: Count,
    stopped: Stopped,
  },
  "segscan dump <segment .log> --json",
);

export const IndexDumpSchema = closed(
  {
    kind: Type.Literal("index"),
    file: Text,
    size: Count,
    entries: Type.Array(closed({ offset: U64, timestamp: U64, position: U64 })),
    /** Bytes after the last whole 24-byte entry: a partial entry (a torn index write). */
    trailingBytes: Count,
  },
  "segscan dump <segment .index> --json",
);

const WalEntrySchema = closed({
  position: Count,
  op: U64,
  size: Count,
  operation: Count,
  /** Iggy's name of the operation (docs/node.md N1). */
  operationName: Text,
  checksum: Hex128,
  checksumBody: Hex128,
  parent: Hex128,
  cluster: Hex128,
  commit: U64,
  view: Count,
  release: Count,
  replica: Count,
  timestamp: U64,
  group: Hex64,
  userId: Count,
  /** ok, unsealed (a checksum is 0: nothing proves the bytes), the seal check that failed, or short-entry (it claims more bytes than remain). */
  verify: literals(["ok", "unsealed", "identity-checksum", "parent-chain", "body-checksum", "short-entry"]),
  /** Why it does not verify; null when it does. */
  problem: Type.Union([Text, Type.Null()]),
});

export const WalDumpSchema = closed(
  {
    kind: Type.Literal("wal"),
    file: Text,
    size: Count,
    engine: Engine,
    entries: Type.Array(WalEntrySchema),
    verified: Count,
    unsealed: Count,
    /** Where no entry could be read, to the file's end; null when the entries tile the file. */
    stopped: Type.Union([
      closed({
        position: Count,
        bytes: Count,
        reason: Text,
        /** docs/node.md N1.1: what the bytes there are. */
        evidence: literals(["zero-filled", "short-entry", "unverifiable"]),
        /** The op a header that passes the gate claims (a short entry); null otherwise. */
        claimedOp: Type.Union([U64, Type.Null()]),
      }),
      Type.Null(),
    ]),
  },
  "segscan dump metadata/journal.wal --json",
);

export const SnapshotDumpSchema = closed(
  {
    kind: Type.Literal("snapshot"),
    file: Text,
    size: Count,
    engine: Engine,
    /** Bytes read as the msgpack payload; null when the file was not read. */
    payloadBytes: Type.Union([Count, Type.Null()]),
    /** The 20-byte trailer; null when the last 20 bytes do not start with its magic (unsealed). */
    trailer: Type.Union([
      closed({
        position: Count,
        magic: Hex32,
        /** The u128 the trailer stores: the payload's XXH3-64, zero-extended. */
        storedChecksum: Hex128,
        /** XXH3-64 of the payload as read, zero-extended. */
        computedChecksum: Hex128,
        matches: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    /** The MetadataSnapshot's root fields; null when the payload was not decoded. */
    header: Type.Union([
      closed({
        version: Count,
        createdAt: Type.Union([U64, Type.Null()]),
        sequenceNumber: U64,
        writerRelease: Type.Union([U64, Type.Null()]),
        users: Type.Boolean(),
        clientTable: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    /** What the payload holds; null when it was not decoded. */
    counts: Type.Union([
      closed({ streams: Count, topics: Count, partitions: Count, consumerGroups: Count, messages: U64, trailingBytes: Count }),
      Type.Null(),
    ]),
    /** docs/node.md N2: the snapshot's findings, as `scan` reports them. */
    findings: Type.Array(NodeFindingSchema),
  },
  "segscan dump metadata/snapshot.bin --json",
);

export const DumpJsonSchema = Type.Union([SegmentDumpSchema, IndexDumpSchema, WalDumpSchema, SnapshotDumpSchema], {
  description: "segscan dump --json: one document per file, its shape by `kind`",
});

export type JsonWalDump = Static<typeof WalDumpSchema>;
export type JsonWalDumpEntry = Static<typeof WalEntrySchema>;
export type JsonSnapshotDump = Static<typeof SnapshotDumpSchema>;

/** `docs/dump.schema.json`: the dump documents as JSON Schema (draft 2020-12) text. */
export function dumpJsonSchemaText(): string {
  const document = { $schema: "https://json-schema.org/draft/2020-12/schema", title: "segscan dump --json", ...DumpJsonSchema };
  return `${JSON.stringify(document, null, 2)}\n`;
}

const SCHEMA_BY_KIND = { segment: SegmentDumpSchema, index: IndexDumpSchema, wal: WalDumpSchema, snapshot: SnapshotDumpSchema };

/**
 * Every way a parsed `dump --json` document departs from the shape of its
 * `kind`, as `path: message` lines ([] when it fits). Checked against its
 * kind's schema alone, so a message names the field, not the union.
 */
export function validateDumpJson(document: unknown): string[] {
  const kind = typeof document === "object" && document !== null && "kind" in document ? document.kind : undefined;
  const schema =
    typeof kind === "string" && Object.hasOwn(SCHEMA_BY_KIND, kind) ? SCHEMA_BY_KIND[kind as keyof typeof SCHEMA_BY_KIND] : null;
  if (schema === null) return [`/kind: expected one of ${Object.keys(SCHEMA_BY_KIND).join(", ")}`];
  return [...Value.Errors(schema, document)].map((error) => `${error.path || "/"}: ${error.message}`);
}
