/**
 * docs/node.md N3: the superblock record, checked against the worked example
 * (a 102-byte file, trailing XXH3-64 0xb193fad553c6b71c) with hash-wasm as the
 * outside oracle; the VsrState decode (66 and legacy 58 bytes); the two-slot rule.
 */
import { describe, expect, it } from "vitest";
import { createXXHash3 } from "hash-wasm";
import { decodeSuperblockRecord, decodeVsrState, encodeSuperblockRecord, encodeVsrState } from "../src/format/superblock.js";
import { allEngines } from "./helpers/engines.js";

const engines = await allEngines();
const EXAMPLE_HEX = (
  "4b4c4253 0100 0000 0100000000000000 0000000000000000 42000000 " +
  "01000000000000000000000000000000 00 01 00000000 00000000 0500000000000000 " +
  "0500000000000000 bc0a0000000000000000000000000000 0000000000000000 " +
  "1cb7c653d5fa93b1"
).replaceAll(" ", "");
const EXAMPLE = Uint8Array.from(EXAMPLE_HEX.match(/../g)!.map((byte) => parseInt(byte, 16)));

describe("superblock record (docs/node.md N3)", () => {
  it("the worked example: 102 bytes, checksum verified by hash-wasm and both engines", async () => {
    expect(EXAMPLE.length).toBe(102);
    const oracle = await createXXHash3(0, 0);
    oracle.init();
    oracle.update(EXAMPLE.subarray(0, 94));
    expect(BigInt("0x" + oracle.digest("hex"))).toBe(0xb193fad553c6b71cn);
    for (const engine of engines) {
      const slot = decodeSuperblockRecord(EXAMPLE, engine);
      expect(slot).toMatchObject({ kind: "valid", sequence: 1n });
      if (slot.kind !== "valid") throw new Error("unreachable");
      const decoded = decodeVsrState(slot.payload);
      expect(decoded).toEqual({
        state: {
          cluster: 1n,
          replicaId: 0,
          replicaCount: 1,
          view: 0,
          logView: 0,
          commitMax: 5n,
          checkpointOp: 5n,
          checkpointChecksum: 0xabcn,
          offsetFrontier: 0n,
          payloadBytes: 66,
        },
      });
      // Our encoder writes the same bytes.
      const state = {
        cluster: 1n,
        replicaId: 0,
        replicaCount: 1,
        view: 0,
        logView: 0,
        commitMax: 5n,
        checkpointOp: 5n,
        checkpointChecksum: 0xabcn,
        offsetFrontier: 0n,
      };
      expect([...encodeSuperblockRecord(1n, encodeVsrState(state), engine)]).toEqual([...EXAMPLE]);
    }
  });

  it("every single-byte flip of the example is corrupt, never valid", () => {
    for (const engine of engines) {
      for (let at = 0; at < EXAMPLE.length; at++) {
        const bytes = EXAMPLE.slice();
        bytes[at] = bytes[at]! ^ 0x01;
        expect(decodeSuperblockRecord(bytes, engine).kind).toBe("corrupt");
      }
    }
  });

  it("version other than 1 is reported with its version; wrong length is corrupt", () => {
    const engine = engines[0]!;
    const bytes = EXAMPLE.slice();
    bytes[4] = 2;
    expect(decodeSuperblockRecord(bytes, engine)).toMatchObject({ kind: "corrupt", version: 2 });
    expect(decodeSuperblockRecord(EXAMPLE.subarray(0, 101), engine).kind).toBe("corrupt");
    expect(decodeSuperblockRecord(new Uint8Array(0), engine).kind).toBe("absent");
  });

  it("VsrState: legacy 58 bytes reads the frontier as 0; other lengths and log_view > view do not decode", () => {
    const state = {
      cluster: 3n,
      replicaId: 0,
      replicaCount: 1,
      view: 4,
      logView: 2,
      commitMax: 9n,
      checkpointOp: 8n,
      checkpointChecksum: 7n,
      offsetFrontier: 77n,
    };
    expect(decodeVsrState(encodeVsrState(state, true))).toEqual({ state: { ...state, offsetFrontier: 0n, payloadBytes: 58 } });
    expect(decodeVsrState(encodeVsrState(state))).toEqual({ state: { ...state, payloadBytes: 66 } });
    expect(decodeVsrState(new Uint8Array(60))).toHaveProperty("error");
    expect(decodeVsrState(encodeVsrState({ ...state, view: 1, logView: 2 }))).toHaveProperty("error");
  });
});

describe("two-slot rule and pairing (docs/node.md N3)", () => {
  const state = (checkpointOp: bigint) => ({
    cluster: 1n,
    replicaId: 0,
    replicaCount: 1,
    view: 0,
    logView: 0,
    commitMax: 9n,
    checkpointOp,
    checkpointChecksum: 5n,
    offsetFrontier: 0n,
  });

  it("both valid: the higher sequence wins, a tie goes to A; one valid and one absent: that one; a corrupt slot: unreadable, never the other", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { scanSuperblock } = await import("../src/node/superblock.js");
    const { nodeScanFs } = await import("../src/io/fs.js");
    const engine = engines[0]!;
    const dir = mkdtempSync(join(tmpdir(), "segscan-sb-"));
    const write = (slot: "a" | "b", sequence: bigint, op: bigint) =>
      writeFileSync(join(dir, `superblock.${slot}`), encodeSuperblockRecord(sequence, encodeVsrState(state(op)), engine));
    write("a", 3n, 30n);
    write("b", 4n, 40n);
    expect((await scanSuperblock(dir, nodeScanFs, engine, "metadata")).vsr?.checkpointOp).toBe(40n);
    write("b", 3n, 41n);
    expect((await scanSuperblock(dir, nodeScanFs, engine, "metadata")).vsr?.checkpointOp).toBe(30n);
    rmSync(join(dir, "superblock.a"));
    expect((await scanSuperblock(dir, nodeScanFs, engine, "metadata")).vsr?.checkpointOp).toBe(41n);
    writeFileSync(join(dir, "superblock.a"), new Uint8Array(40).fill(1));
    const unreadable = await scanSuperblock(dir, nodeScanFs, engine, "metadata");
    expect(unreadable.state).toBe("unreadable");
    expect(unreadable.vsr).toBeNull();
    expect(unreadable.findings.map((f) => f.code)).toEqual(["SuperblockUnreadable"]);
  });

  it("an unsealed snapshot paired at the same op must hash (whole file) to checkpoint_checksum", async () => {
    const { pairingFindings } = await import("../src/node/superblock.js");
    const superblock = {
      directory: "/m",
      state: "present" as const,
      slotA: "",
      slotB: "",
      sequence: 1n,
      vsr: { ...state(40n), payloadBytes: 66 },
      findings: [],
    };
    const snapshot = { present: true, sequenceNumber: 40n, path: "/m/snapshot.bin", corrupt: false };
    expect(pairingFindings(superblock, { ...snapshot, checksum: 5n })).toEqual([]);
    expect(pairingFindings(superblock, { ...snapshot, checksum: 6n }).map((f) => f.code)).toEqual(["CheckpointMismatch"]);
    // The superblock lags a newer snapshot: accepted.
    expect(pairingFindings(superblock, { ...snapshot, sequenceNumber: 50n, checksum: 6n })).toEqual([]);
    expect(pairingFindings(superblock, { ...snapshot, sequenceNumber: 30n, checksum: 6n }).map((f) => f.code)).toEqual([
      "CheckpointAheadOfSnapshot",
    ]);
  });
});
