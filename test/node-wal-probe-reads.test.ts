/**
 * The metadata WAL's residue probe reads no further than its budget (docs/node.md N1,
 * docs/recovery.md §3.5): its zero check is the segment probe's, so a sparse zero tail
 * refused for an exhausted budget is read only as far as the candidate search went
 * (plus one window) and is not claimed all zero; a tail the budget covers still is.
 */
import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodeScanFs, type ScanFs } from "../src/io/fs.js";
import { scanWal } from "../src/node/wal/scan.js";
import { buildWal } from "../src/gen/node/wal.js";
import { allEngines } from "./helpers/engines.js";
import { prng } from "./helpers/fixtures.js";
import { codes, tempDir } from "./helpers/node-wal.js";

const engines = await allEngines();
const MiB = 1024 * 1024;

/** A ScanFs that counts the bytes read. */
function countingFs(): { fs: ScanFs; bytesRead: () => number } {
  let bytesRead = 0;
  const fs: ScanFs = {
    ...nodeScanFs,
    async open(path) {
      const file = await nodeScanFs.open(path);
      return {
        async read(target, position) {
          const count = await file.read(target, position);
          bytesRead += count;
          return count;
        },
        close: () => file.close(),
      };
    },
  };
  return { fs, bytesRead: () => bytesRead };
}

/** A WAL of a few entries followed by `tailBytes` of sparse zeros. */
function walWithZeroTail(tailBytes: number): { path: string; walked: number; size: number } {
  const built = buildWal({ firstOp: 1n, count: 4, random: prng(7) });
  const path = join(tempDir(), "journal.wal");
  writeFileSync(path, built.bytes);
  truncateSync(path, built.bytes.length + tailBytes);
  return { path, walked: built.bytes.length, size: built.bytes.length + tailBytes };
}

describe("the WAL residue's zero check is bounded by the probe budget", () => {
  it("a 256 MiB sparse zero tail with a 2 Mi-unit budget: refused after reading ≤ budget + one window, not claimed all zero", async () => {
    const { path, walked, size } = walWithZeroTail(256 * MiB);
    const budgetUnits = 2 * MiB;
    const windowBytes = MiB;
    for (const engine of engines) {
      const counter = countingFs();
      const scan = await scanWal(path, size, {
        engine,
        scanFs: counter.fs,
        windowBytes,
        probeBudgetUnits: budgetUnits,
        snapshotOp: 0n,
        superblockCluster: null,
      });
      expect(codes(scan)).toEqual(["WalUnverifiedResidue"]);
      expect(scan.report.residue).toMatchObject({ damagePosition: walked, probe: "budget-exhausted", allZero: false });
      expect(counter.bytesRead()).toBeLessThanOrEqual(walked + budgetUnits + windowBytes);
    }
  });

  it("a zero tail the budget covers is read to its end and called zero-filled", async () => {
    const { path, walked, size } = walWithZeroTail(3 * MiB + 77);
    for (const engine of engines) {
      const scan = await scanWal(path, size, {
        engine,
        scanFs: nodeScanFs,
        windowBytes: MiB,
        probeBudgetUnits: 8 * MiB,
        snapshotOp: 0n,
        superblockCluster: null,
      });
      expect(scan.report.residue).toMatchObject({ damagePosition: walked, probe: "no-survivor", allZero: true });
      expect(scan.report.findings[0]).toMatchObject({ code: "WalTornTail", tornEvidence: "zero-filled" });
    }
  });
});
