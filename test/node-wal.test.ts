/**
 * docs/node.md N1: the metadata WAL — entry verification, walk, residue probe,
 * op-order checks, and Iggy's own decision beside segscan's — on both engines
 * and two window sizes.
 */
import { describe, expect, it } from "vitest";
import { createXXHash3 } from "hash-wasm";
import { writeU32, writeU64 } from "../src/format/bytes.js";
import { xxh3_64 } from "../src/hash/xxh3.js";
import {
  WAL_CHECKSUM_BODY_AT,
  WAL_COMMAND_AT,
  WAL_GROUP_AT,
  WAL_HEADER_BYTES,
  WAL_METADATA_GROUP,
  WAL_OPERATION_AT,
  WAL_OP_AT,
  WAL_RESERVED_AT,
  WAL_SIZE_AT,
  WAL_VIEW_AT,
  XXH3_EMPTY,
  identityInput,
} from "../src/format/wal.js";
import { buildWal, concat, encodePrepare, writeU128 } from "../src/gen/node/wal.js";
import { allEngines } from "./helpers/engines.js";
import { prng } from "./helpers/fixtures.js";
import { codes, scanWalBytes } from "./helpers/node-wal.js";

const engines = await allEngines();
const oracle = await createXXHash3(0, 0);
function oracleXxh3(bytes: Uint8Array): bigint {
  oracle.init();
  oracle.update(bytes);
  return BigInt("0x" + oracle.digest("hex"));
}

describe("identity checksum (docs/node.md N1)", () => {
  it("matches the worked example 0xA6B83B98EBD8D63A, checked against hash-wasm", () => {
    const header = new Uint8Array(WAL_HEADER_BYTES);
    writeU128(header, WAL_CHECKSUM_BODY_AT, XXH3_EMPTY);
    writeU32(header, WAL_SIZE_AT, 256);
    writeU32(header, WAL_VIEW_AT, 7);
    header[WAL_COMMAND_AT] = 6;
    writeU64(header, WAL_OP_AT, 1n);
    header[WAL_OPERATION_AT] = 128;
    writeU64(header, WAL_GROUP_AT, WAL_METADATA_GROUP);
    const input = identityInput(header, 0);
    expect(oracleXxh3(input)).toBe(0xa6b83b98ebd8d63an);
    expect(xxh3_64(input)).toBe(0xa6b83b98ebd8d63an);
    for (const engine of engines) expect(engine.xxh3_64(input)).toBe(0xa6b83b98ebd8d63an);
    // encodePrepare seals the same header the same way (view is excluded from the seal).
    const { bytes, checksum } = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(0), view: 7, commit: 0n });
    expect(checksum).toBe(0xa6b83b98ebd8d63an);
    expect([...bytes.subarray(0, 16)]).toEqual([0x3a, 0xd6, 0xd8, 0xeb, 0x98, 0x3b, 0xb8, 0xa6, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it("a header-only entry's body seal is XXH3 of the empty input, not 0", () => {
    expect(oracleXxh3(new Uint8Array(0))).toBe(XXH3_EMPTY);
  });
});

const WINDOWS = [4096, 1 << 20];

function wal(count = 12, seed = 1, firstOp = 1n) {
  return buildWal({ firstOp, count, random: prng(seed) });
}

for (const engine of engines) {
  for (const windowBytes of WINDOWS) {
    describe(`WAL scenarios (${engine.kind} engine, ${windowBytes}-byte window)`, () => {
      const scan = (bytes: Uint8Array, options: Parameters<typeof scanWalBytes>[2] = {}) =>
        scanWalBytes(bytes, engine, { windowBytes, ...options });

      it("clean chain: every entry verified, op range, no findings, Iggy boots", async () => {
        const built = wal(20);
        const result = await scan(built.bytes);
        expect(result.report.entries).toBe(20);
        expect(result.report.ops).toEqual({ first: 1n, last: 20n });
        expect(result.report.walkedSize).toBe(built.bytes.length);
        expect(result.report.findings).toEqual([]);
        expect(result.report.iggy.scan).toBe("boot");
        expect(result.forecast).toEqual([]);
      });

      it("empty WAL is clean", async () => {
        const result = await scan(new Uint8Array(0));
        expect(result.report.entries).toBe(0);
        expect(result.report.findings).toEqual([]);
      });

      it("torn last entry: WalTornTail (repairable), Iggy cuts at the same byte", async () => {
        const built = wal(10);
        const last = built.entries.at(-1)!;
        const bytes = built.bytes.subarray(0, last.position + 100);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.residue).toMatchObject({ damagePosition: last.position, probe: "no-survivor" });
        expect(result.report.iggy).toMatchObject({ scan: "truncate-tail", position: last.position });
        expect(result.forecast).toEqual([expect.objectContaining({ effect: "truncate-wal-tail", destructive: false })]);
      });

      it("preallocated zero tail of any length is torn", async () => {
        const built = wal(5);
        const bytes = concat([built.bytes, new Uint8Array(70_000)]);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.residue?.damagePosition).toBe(built.bytes.length);
      });

      it("a bit-flipped size of 0xFFFFFFFF fails the gate and allocates nothing", async () => {
        const built = wal(6);
        const bytes = built.bytes.slice();
        const last = built.entries.at(-1)!;
        writeU32(bytes, last.position + WAL_SIZE_AT, 0xffffffff);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.residue?.reason).toContain("SizeOverCap");
      });

      it("damaged body with verified higher ops after it: WalInteriorDamage; Iggy refuses too", async () => {
        const built = wal(10);
        const bytes = built.bytes.slice();
        const victim = built.entries[4]!;
        bytes[victim.position + WAL_HEADER_BYTES]! ^= 0xff;
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalInteriorDamage"]);
        expect(result.report.findings[0]).toMatchObject({
          severity: "refused",
          damagePosition: victim.position,
          survivorPosition: built.entries[5]!.position,
        });
        expect(result.report.iggy.scan).toBe("refuse");
        expect(result.forecast[0]!.effect).toBe("refuse-boot");
      });

      it("budget spent before the residue is proven: WalUnverifiedResidue", async () => {
        const built = wal(4);
        const bytes = concat([built.bytes.subarray(0, built.entries[3]!.position + 10), new Uint8Array(50_000).fill(6)]);
        const result = await scan(bytes, { probeBudgetUnits: 1000 });
        expect(codes(result)).toEqual(["WalUnverifiedResidue"]);
        expect(result.report.findings[0]).toMatchObject({ limitUnits: 1000 });
      });

      it("torn tail holding a stale copy of an old entry: segscan proves it torn, Iggy would refuse to boot", async () => {
        const built = wal(8);
        const stale = built.bytes.subarray(built.entries[2]!.position, built.entries[2]!.position + built.entries[2]!.size);
        const tornStart = built.entries[7]!.position;
        const bytes = concat([built.bytes.subarray(0, tornStart + 40), stale]);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.iggy.scan).toBe("refuse");
        // 40 header bytes then stale bytes: the header does not verify, so the bytes cannot tell a torn write
        // from corruption of an acknowledged entry, and "nothing lost" is not claimed (docs/node.md N1.1).
        expect(result.report.findings[0]).toMatchObject({ tornEvidence: "unverifiable" });
        expect(result.report.findings[0]!.message).toContain("segscan cannot tell a torn write from corruption of an acknowledged entry");
        expect(result.report.findings[0]!.message).toContain("cutting with segscan lets the server boot, the cut bytes preserved");
        // A whole header claiming more bytes than remain, then the stale copy: a short entry, never fsynced.
        const shortHeader = built.bytes.slice(tornStart, tornStart + WAL_HEADER_BYTES + 10);
        writeU32(shortHeader, WAL_SIZE_AT, 60_000);
        const short = await scan(concat([built.bytes.subarray(0, tornStart), shortHeader, stale]));
        expect(short.report.iggy.scan).toBe("refuse");
        expect(short.report.findings[0]).toMatchObject({ code: "WalTornTail", tornEvidence: "short-entry" });
        expect(short.report.findings[0]!.message).toContain(
          "under the crash model (a completed fsync leaves no short entry), never fsynced, so never acknowledged",
        );
        expect(short.report.findings[0]!.message).toContain("segscan lets the server boot with nothing acknowledged lost");
      });

      it("more than 64 MiB trailing the damage: Iggy refuses, segscan still proves a zero tail torn", async () => {
        if (windowBytes !== 1 << 20) return;
        const built = wal(3);
        const bytes = concat([built.bytes, new Uint8Array(64 * 1024 * 1024 + 10)]);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.iggy.scan).toBe("refuse");
      });

      it("gap: WalGap refused; Iggy would truncate from the next op", async () => {
        const built = wal(10);
        const hole = built.entries[4]!;
        const bytes = concat([built.bytes.subarray(0, hole.position), built.bytes.subarray(hole.position + hole.size)]);
        const result = await scan(bytes);
        expect(codes(result)).toEqual(["WalGap"]);
        expect(result.report.findings[0]).toMatchObject({ missingOp: 5n, nextOp: 6n, opsAfter: 5 });
        expect(result.report.iggy).toMatchObject({ scan: "boot", truncateFromOp: 6n, opsLost: 5 });
        expect(result.forecast[0]).toMatchObject({ effect: "truncate-wal-from-op", destructive: true });
      });

      it("chain break between op-sorted entries that are not adjacent in the file: WalChainBreak", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10) });
        const two = encodePrepare({ op: 2n, parent: one.checksum, operation: 128, body: new Uint8Array(10) });
        const three = encodePrepare({ op: 3n, parent: 12345n, operation: 128, body: new Uint8Array(10) });
        const result = await scan(concat([one.bytes, three.bytes, two.bytes]));
        expect(codes(result)).toEqual(["WalChainBreak"]);
        expect(result.report.iggy.truncateFromOp).toBe(3n);
      });

      it("chain break between file-adjacent consecutive ops is a walk failure (like a checksum)", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10) });
        const two = encodePrepare({ op: 2n, parent: 999n, operation: 128, body: new Uint8Array(10) });
        const result = await scan(concat([one.bytes, two.bytes]));
        expect(codes(result)).toEqual(["WalTornTail"]);
        expect(result.report.residue?.reason).toContain("parent chain break");
      });

      it("lowest op above the snapshot is not S+1: WalSnapshotHole", async () => {
        const result = await scan(wal(5, 3, 8n).bytes, { snapshotOp: 4n });
        expect(codes(result)).toEqual(["WalSnapshotHole"]);
        expect(result.report.findings[0]).toMatchObject({ snapshotOp: 4n, lowestOp: 8n });
        const ok = await scan(wal(5, 3, 5n).bytes, { snapshotOp: 4n });
        expect(codes(ok)).toEqual([]);
      });

      it("the same op twice with different bytes: WalDuplicateOp with both positions; identical bytes: info", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10) });
        const twoA = encodePrepare({ op: 2n, parent: one.checksum, operation: 128, body: new Uint8Array(10).fill(1) });
        const twoB = encodePrepare({ op: 2n, parent: one.checksum, operation: 128, body: new Uint8Array(10).fill(2) });
        const different = await scan(concat([one.bytes, twoA.bytes, twoB.bytes]));
        expect(codes(different)).toEqual(["WalDuplicateOp"]);
        expect(different.report.findings[0]).toMatchObject({
          op: 2n,
          firstPosition: one.bytes.length,
          secondPosition: one.bytes.length + twoA.bytes.length,
        });
        const same = await scan(concat([one.bytes, twoA.bytes, twoA.bytes]));
        expect(same.report.findings.map((f) => [f.code, f.severity])).toEqual([["WalDuplicateIdentical", "info"]]);
      });

      it("unsealed headers and bodies: WalUnsealed warn with counts", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10), sealHeader: false });
        const two = encodePrepare({ op: 2n, parent: 0n, operation: 128, body: new Uint8Array(10), sealBody: false });
        const result = await scan(concat([one.bytes, two.bytes]));
        expect(result.report.findings).toEqual([expect.objectContaining({ code: "WalUnsealed", severity: "warn", headers: 1, bodies: 1 })]);
      });

      it("foreign group and cluster: warn", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10), group: 5n, cluster: 9n });
        const result = await scan(one.bytes, { superblockCluster: 7n });
        expect(codes(result)).toEqual(["WalGroupMismatch", "WalClusterMismatch"]);
        expect(result.report.findings.every((f) => f.severity === "warn")).toBe(true);
      });

      it("non-zero reserved bytes mid-file: segscan refuses (interior damage); Iggy's scan passes but replay fails", async () => {
        const one = encodePrepare({ op: 1n, parent: 0n, operation: 128, body: new Uint8Array(10) });
        const two = encodePrepare({
          op: 2n,
          parent: one.checksum,
          operation: 128,
          body: new Uint8Array(10),
          alterHeader: (h) => {
            h[WAL_RESERVED_AT + 3] = 1;
          },
        });
        const three = encodePrepare({ op: 3n, parent: two.checksum, operation: 128, body: new Uint8Array(10) });
        const result = await scan(concat([one.bytes, two.bytes, three.bytes]));
        expect(codes(result)).toEqual(["WalInteriorDamage"]);
        expect(result.report.iggy.scan).toBe("refuse");
        expect(result.report.iggy.reason).toContain("reserved");
      });

      it("upper bytes of a zero-extended field non-zero: the entry does not verify", async () => {
        const built = wal(3);
        const bytes = built.bytes.slice();
        bytes[built.entries[2]!.position + 16 + 12] = 1;
        const result = await scan(bytes);
        expect(result.report.residue?.reason).toContain("UpperBytesNonZero");
      });
    });
  }
}
