/**
 * The probe reads no further than its budget (docs/recovery.md §3.5):
 * a huge sparse zero tail refused `UnverifiedResidue` is read only as far as the
 * budget took the candidate search (plus one window), never to the file end.
 */
import { truncateSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { nodeScanFs, type ScanFs } from "../src/io/fs.js";
import { scanPartition } from "../src/node/scan-path.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, indexAt, tempPartition, writeSegment } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A ScanFs that counts the bytes read from `.log` files. */
function countingFs(): { fs: ScanFs; logBytesRead: () => number } {
  let logBytesRead = 0;
  const fs: ScanFs = {
    ...nodeScanFs,
    async open(path) {
      const file = await nodeScanFs.open(path);
      return {
        async read(target, position) {
          const count = await file.read(target, position);
          if (path.endsWith(".log")) logBytesRead += count;
          return count;
        },
        close: () => file.close(),
      };
    },
  };
  return { fs, logBytesRead: () => logBytesRead };
}

describe("probe reads are bounded by the budget, not the file size", () => {
  it("a 20 GiB sparse zero tail with an 8 Mi-unit budget: UnverifiedResidue after reading ≤ budget + one window", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const tailBytes = 20 * GiB;
    truncateSync(logPath, chain.log.length + tailBytes); // sparse: no disk space, 20 GiB of zeros to a reader
    const budgetUnits = 8 * MiB;
    const windowBytes = MiB;
    for (const engine of engines) {
      const counter = countingFs();
      const report = await scanPartition(dir, { engine, windowBytes, probeBudgetUnits: budgetUnits }, counter.fs);
      const segment = report.partitions[0]!.segments[0]!;
      expect(segment.refusal).toMatchObject({
        code: "UnverifiedResidue",
        damagePosition: chain.log.length,
        residueBytes: tailBytes,
        spentUnits: budgetUnits + 1,
        stoppedAt: chain.log.length + budgetUnits + 1,
      });
      // Nothing past the budget's reach was read, so nothing claims the residue is all zero.
      expect(segment.residue).toMatchObject({ probe: "budget-exhausted", allZero: false });
      expect(counter.logBytesRead()).toBeLessThanOrEqual(chain.log.length + budgetUnits + windowBytes);
      expect(report.partitions[0]!.bytesScanned).toBeLessThanOrEqual(chain.log.length + budgetUnits + windowBytes);
    }
  });

  it("a zero tail the budget covers is still read to its end and classified torn-tail, all zero", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3] });
    const { logPath } = writeSegment(dir, 0n, chain.log, indexAt(chain, [0]));
    const tailBytes = 6 * MiB + 123;
    truncateSync(logPath, chain.log.length + tailBytes);
    for (const engine of engines) {
      const counter = countingFs();
      const report = await scanPartition(dir, { engine, windowBytes: MiB, probeBudgetUnits: 8 * MiB }, counter.fs);
      expect(report.partitions[0]!.segments[0]).toMatchObject({
        outcome: "torn-tail",
        residue: { bytes: tailBytes, allZero: true, probe: "no-survivor", spentUnits: tailBytes - 256 },
      });
      // Read once: the probe's own windows answered the all-zero question.
      expect(counter.logBytesRead()).toBeLessThanOrEqual(chain.log.length + tailBytes + 2 * MiB);
    }
  });
});
