/** Builds `metadata/snapshot.bin` (docs/node.md N2) as Iggy writes it: msgpack positional arrays + trailer. */
import { encode } from "@msgpack/msgpack";
import { xxh3_64 } from "../../hash/xxh3.js";
import { SNAPSHOT_FORMAT_VERSION, sealSnapshot as sealWith } from "../../format/snapshot.js";

export interface SnapshotSpec {
  sequenceNumber: bigint;
  createdAt?: bigint;
  version?: number;
  streams: {
    id: number;
    topics: {
      id: number;
      messagesCount: bigint;
      consumerGroupIds: number[];
      partitions: { id: number; createdRevision: bigint; purgeGeneration: bigint; deletedUpToOffset: bigint }[];
    }[];
  }[];
}

/** The msgpack payload: `MetadataSnapshot` as a 7-element array, each nested struct positional. */
export function encodeSnapshotPayload(spec: SnapshotSpec): Uint8Array {
  const createdAt = spec.createdAt ?? 1_700_000_000_000_000n;
  const streams = spec.streams.map((stream) => [
    stream.id,
    [
      stream.id,
      `stream-${stream.id}`,
      createdAt,
      [0n, 0n, 0n],
      stream.topics.map((topic) => [
        topic.id,
        [
          topic.id,
          `topic-${topic.id}`,
          createdAt,
          0n,
          1,
          0n,
          [topic.messagesCount * 100n, topic.messagesCount, 1n],
          topic.partitions.map((p) => [p.id, 0n, createdAt, p.createdRevision, p.deletedUpToOffset, p.purgeGeneration]),
          topic.consumerGroupIds.map((gid) => [gid, [gid, `group-${gid}`, []]]),
          Math.max(0, ...topic.consumerGroupIds) + 1,
          null,
        ],
      ]),
      null,
    ],
  ]);
  const users = [[[1, [1, "iggy", "$argon2id$stub", 1, createdAt, null]]], []];
  const snapshot = [
    spec.version ?? SNAPSHOT_FORMAT_VERSION,
    createdAt,
    spec.sequenceNumber,
    users,
    [streams, BigInt(spec.streams.length)],
    [],
    0,
  ];
  return encode(snapshot, { useBigInt64: true });
}

/** `payload` sealed with its trailer (docs/node.md N2), hashed with the TypeScript XXH3. */
export function sealSnapshot(payload: Uint8Array): Uint8Array {
  return sealWith(payload, xxh3_64);
}
