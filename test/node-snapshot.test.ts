/**
 * docs/node.md N2: the snapshot decodes as Iggy's `rmp_serde::from_slice`
 * does (the first msgpack value, trailing bytes ignored), so a snapshot whose
 * trailer magic is damaged is `warn` `SnapshotUnsealed` with its op reported;
 * and the decode bounds: a structural pass measures the first value before
 * anything is built, so a msgpack length bomb finishes with a finding inside a
 * 256 MiB heap, while a large real snapshot still decodes.
 */
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { encode } from "@msgpack/msgpack";
import { encodeSnapshotPayload, sealSnapshot, type SnapshotSpec } from "../src/gen/node/snapshot.js";
import { measureMsgpackValue } from "../src/node/msgpack-measure.js";
import { nodeFindings, scanNode } from "../src/node/scan.js";
import {
  MAX_SNAPSHOT_DECODED_BYTES,
  MAX_SNAPSHOT_NESTING_DEPTH,
  decodeSnapshotPayload,
  estimatedDecodedBytes,
} from "../src/node/snapshot.js";
import { SNAPSHOT_TRAILER_BYTES } from "../src/format/snapshot.js";
import { xxh3_64 } from "../src/hash/xxh3.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { allEngines } from "./helpers/engines.js";
import { prng } from "./helpers/fixtures.js";
import { tempDir } from "./helpers/node-wal.js";
import { rewriteSuperblock, tinyNode } from "./helpers/metadata-node.js";

const engines = await allEngines();
const _ts = createTsEngine();
const CLI = join(import.meta.dirname, "../dist/src/cli/main.js");

const node = (fault?: string): Promise<string> => tinyNode({ seed: 13, fault });

/** A random msgpack-encodable tree, and the containers and scalars it holds. */
function randomTree(random: () => number, depth: number): { value: unknown; containers: number; scalars: number } {
  const pick = Math.floor(random() * (depth > 4 ? 5 : 7));
  switch (pick) {
    case 0:
      return { value: Math.floor(random() * 2 ** 40) - 2 ** 20, containers: 0, scalars: 1 };
    case 1:
      return { value: "x".repeat(Math.floor(random() * 300)), containers: 0, scalars: 1 };
    case 2:
      return { value: random() < 0.5 ? null : random() < 0.5, containers: 0, scalars: 1 };
    case 3:
      return { value: new Uint8Array(Math.floor(random() * 70)), containers: 0, scalars: 1 };
    case 4:
      return { value: random() * 1e6, containers: 0, scalars: 1 };
    case 5: {
      const children = Array.from({ length: Math.floor(random() * 20) }, () => randomTree(random, depth + 1));
      return {
        value: children.map((child) => child.value),
        containers: 1 + children.reduce((sum, child) => sum + child.containers, 0),
        scalars: children.reduce((sum, child) => sum + child.scalars, 0),
      };
    }
    default: {
      const entries = Array.from({ length: Math.floor(random() * 8) }, (_, i) => [`k${i}`, randomTree(random, depth + 1)] as const);
      return {
        value: Object.fromEntries(entries.map(([key, child]) => [key, child.value])),
        containers: 1 + entries.reduce((sum, [, child]) => sum + child.containers, 0),
        scalars: entries.length + entries.reduce((sum, [, child]) => sum + child.scalars, 0),
      };
    }
  }
}

describe("the structural pass over one msgpack value (docs/node.md N2 decode bounds)", () => {
  it("agrees with @msgpack/msgpack on where the first value ends and what it holds, trailing bytes ignored", () => {
    const random = prng(5);
    for (let i = 0; i < 300; i++) {
      const tree = randomTree(random, 0);
      const encoded = encode(tree.value);
      const trailing = Uint8Array.from({ length: Math.floor(random() * 30) }, () => Math.floor(random() * 256));
      const measured = measureMsgpackValue(new Uint8Array([...encoded, ...trailing]), MAX_SNAPSHOT_NESTING_DEPTH);
      expect(measured).toMatchObject({
        ok: true,
        extent: { endPosition: encoded.length, containers: tree.containers, scalars: tree.scalars },
      });
    }
  });

  it("fails, building nothing, on a truncated value, the unused type byte 0xc1, an impossible length, or nesting past the cap", () => {
    const encoded = encode([1, "two", [3, 4]]);
    for (let cut = 0; cut < encoded.length; cut++) expect(measureMsgpackValue(encoded.subarray(0, cut), 64).ok).toBe(false);
    expect(measureMsgpackValue(new Uint8Array([0x92, 0x01, 0xc1]), 64)).toMatchObject({ ok: false, position: 2 });
    expect(measureMsgpackValue(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 0x00]), 64)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("claims 4294967295 elements but only 1 bytes remain"),
    });
    const deep = new Uint8Array([...new Array(65).fill(0x91), 0x00]);
    expect(measureMsgpackValue(deep, 64)).toMatchObject({ ok: false, reason: expect.stringContaining("deeper than 64 levels") });
    expect(measureMsgpackValue(deep.subarray(1), 64)).toMatchObject({ ok: true, extent: { depth: 64 } });
  });
});

describe("an unsealed snapshot decodes as Iggy's rmp_serde::from_slice does (docs/node.md N2)", () => {
  it("a sealed snapshot whose magic byte is flipped, its superblock lagging: warn, its op reported, the server boots", async () => {
    const root = await node();
    const path = join(root, "metadata/snapshot.bin");
    const bytes = readFileSync(path);
    bytes[bytes.length - SNAPSHOT_TRAILER_BYTES]! ^= 0x01;
    writeFileSync(path, bytes);
    rewriteSuperblock(root, { checkpointOp: 30n });
    for (const engine of engines) {
      const report = await scanNode(root, { engine });
      expect(report.metadata.snapshot).toMatchObject({ sealed: false, sequenceNumber: 40n, streams: 1, topics: 1, partitions: 2 });
      expect(nodeFindings(report).map((finding) => [finding.code, finding.severity])).toEqual([["SnapshotUnsealed", "warn"]]);
      expect(report.metadata.snapshot!.findings[0]).toMatchObject({ trailingBytes: SNAPSHOT_TRAILER_BYTES });
      expect(report.metadata.snapshot!.checksum).toBe(xxh3_64(bytes));
      expect(report.verdict).toBe("warn");
      expect(report.bootForecast).toEqual([]);
      expect(report.metadata.wal!.iggy.scan).toBe("boot");
    }
  });

  it("the same damaged magic with the superblock paired at the snapshot's op: XXH3 of the whole file is not the checkpoint checksum, CheckpointMismatch", async () => {
    const root = await node();
    const path = join(root, "metadata/snapshot.bin");
    const bytes = readFileSync(path);
    bytes[bytes.length - SNAPSHOT_TRAILER_BYTES + 2]! ^= 0x40;
    writeFileSync(path, bytes);
    const report = await scanNode(root, { engine: engines[0]! });
    expect(report.metadata.snapshot).toMatchObject({ sealed: false, sequenceNumber: 40n });
    expect(nodeFindings(report).map((finding) => [finding.code, finding.severity])).toEqual([
      ["SnapshotUnsealed", "warn"],
      ["CheckpointMismatch", "refused"],
    ]);
    expect(report.bootForecast.map((entry) => entry.effect)).toEqual(["refuse-boot"]);
  });

  it("a pre-trailer snapshot paired by its whole-file checksum has no trailing bytes and pairs", async () => {
    const report = await scanNode(await node("snapshot-unsealed"), { engine: engines[0]! });
    expect(nodeFindings(report).map((finding) => finding.code)).toEqual(["SnapshotUnsealed"]);
    expect(report.metadata.snapshot!.findings[0]).toMatchObject({ trailingBytes: 0 });
  });
});

/** `[3, created_at, 40, users, streams, client_table, writer_release]` with `users` replaced. */
function snapshotWithUsers(users: Uint8Array): Uint8Array {
  const head = encode([3, 1_700_000_000_000_000, 40]).subarray(1);
  const tail = [0xc0, 0x90, 0x00]; // streams: nil, client_table: [], writer_release: 0
  const bytes = new Uint8Array(1 + head.length + users.length + tail.length);
  bytes[0] = 0x97;
  bytes.set(head, 1);
  bytes.set(users, 1 + head.length);
  bytes.set(tail, 1 + head.length + users.length);
  return bytes;
}

/** `0xdd` + count + that many empty maps: each element is one byte, so every per-length cap passes. */
function emptyMapBomb(count: number): Uint8Array {
  const bytes = new Uint8Array(5 + count).fill(0x80);
  bytes[0] = 0xdd;
  new DataView(bytes.buffer).setUint32(1, count);
  return bytes;
}

const BOMB_ELEMENTS = 20_000_000;

/** `segscan scan --json` on a node root holding only this snapshot, in a Node with a 256 MiB heap. */
async function scanInSmallHeap(snapshot: Uint8Array): Promise<{ code: number; stdout: string; stderr: string }> {
  const root = tempDir();
  mkdirSync(join(root, "metadata"));
  writeFileSync(join(root, "metadata/snapshot.bin"), snapshot);
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--max-old-space-size=256", CLI, "scan", root, "--json"], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe("msgpack bombs finish with a finding (docs/node.md N2 decode bounds)", () => {
  it("a sealed 20 MB payload of 0xdd + count + that many empty maps, in a 256 MiB heap: SnapshotCorrupt before anything is built", async () => {
    const result = await scanInSmallHeap(sealSnapshot(emptyMapBomb(BOMB_ELEMENTS)));
    expect(result.stderr).not.toContain("heap out of memory");
    expect(result.code).toBe(4);
    const snapshot = JSON.parse(result.stdout).node.metadata.snapshot;
    expect(snapshot).toMatchObject({ sealed: true, sequenceNumber: null });
    expect(snapshot.findings).toEqual([expect.objectContaining({ severity: "refused", code: "SnapshotCorrupt" })]);
    expect(snapshot.findings[0].message).toContain(`an array of ${BOMB_ELEMENTS} values led by a map, not a MetadataSnapshot`);
  }, 60_000);

  it("the same bomb inside a well-formed root (as `users`), in a 256 MiB heap: failed SnapshotTooLarge naming the decode limit, not judged", async () => {
    const result = await scanInSmallHeap(sealSnapshot(snapshotWithUsers(emptyMapBomb(BOMB_ELEMENTS))));
    expect(result.stderr).not.toContain("heap out of memory");
    expect(result.code).toBe(8);
    const snapshot = JSON.parse(result.stdout).node.metadata.snapshot;
    expect(snapshot.findings).toEqual([
      expect.objectContaining({ severity: "failed", code: "SnapshotTooLarge", limitDecodedBytes: MAX_SNAPSHOT_DECODED_BYTES }),
    ]);
    expect(snapshot.findings[0].message).toContain(`${BOMB_ELEMENTS + 3} arrays and maps`);
    expect(snapshot.findings[0].message).toContain("MAX_SNAPSHOT_DECODED_BYTES");
  }, 60_000);

  it("nesting deeper than the cap is SnapshotCorrupt naming the cap", async () => {
    const deep = new Uint8Array([...new Array(MAX_SNAPSHOT_NESTING_DEPTH + 5).fill(0x91), 0x00]);
    await expect(decodeSnapshotPayload(snapshotWithUsers(deep))).rejects.toThrow(`deeper than ${MAX_SNAPSHOT_NESTING_DEPTH} levels`);
  });
});

describe("a large real snapshot still decodes (docs/node.md N2)", () => {
  it("300 streams × 20 topics × 16 partitions with consumer groups: every partition decoded, far inside the decode limit", async () => {
    const spec: SnapshotSpec = {
      sequenceNumber: 123_456n,
      streams: Array.from({ length: 300 }, (_, s) => ({
        id: s + 1,
        topics: Array.from({ length: 20 }, (_, t) => ({
          id: t + 1,
          messagesCount: BigInt(s * 1000 + t),
          consumerGroupIds: [1, 2, 3],
          partitions: Array.from({ length: 16 }, (_, p) => ({
            id: p + 1,
            createdRevision: BigInt(p + 7),
            purgeGeneration: 0n,
            deletedUpToOffset: 2n ** 40n,
          })),
        })),
      })),
    };
    const payload = encodeSnapshotPayload(spec);
    const measured = measureMsgpackValue(payload, MAX_SNAPSHOT_NESTING_DEPTH);
    if (!measured.ok) throw new Error(measured.reason);
    expect(estimatedDecodedBytes(measured.extent)).toBeLessThan(MAX_SNAPSHOT_DECODED_BYTES / 4);
    const contents = await decodeSnapshotPayload(payload);
    expect(contents.sequenceNumber).toBe(123_456n);
    expect(contents.trailingBytes).toBe(0);
    expect(contents.streams).toHaveLength(300);
    expect(contents.streams.flatMap((stream) => stream.topics)).toHaveLength(6000);
    expect(contents.streams.flatMap((stream) => stream.topics.flatMap((topic) => topic.partitions))).toHaveLength(96_000);
    expect(contents.streams[299]!.topics[19]).toMatchObject({ messagesCount: 299_019n, consumerGroupIds: [1, 2, 3] });
    expect(contents.streams[0]!.topics[0]!.partitions[15]).toMatchObject({ id: 16, createdRevision: 22n, deletedUpToOffset: 2n ** 40n });
  });

  it("a sealed payload with bytes after its msgpack value decodes as the server reads it (the first value)", async () => {
    const root = await node();
    const path = join(root, "metadata/snapshot.bin");
    const bytes = readFileSync(path);
    const payload = new Uint8Array([...bytes.subarray(0, bytes.length - SNAPSHOT_TRAILER_BYTES), 0x01, 0x02, 0x03]);
    writeFileSync(path, sealSnapshot(payload));
    rewriteSuperblock(root, { checkpointChecksum: xxh3_64(payload) });
    const report = await scanNode(root, { engine: engines[0]! });
    expect(nodeFindings(report)).toEqual([]);
    expect(report.metadata.snapshot).toMatchObject({ sealed: true, sequenceNumber: 40n });
  });
});
