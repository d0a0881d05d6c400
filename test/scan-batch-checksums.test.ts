/**
 * The per-segment batch evidence of the scan report (docs/interfaces.md §9.3):
 * `lastBatch` (base offset and header checksum of the last verified batch with
 * messages) and, with `--deep`, `batchChecksumsXxh3` (XXH3-64 over every
 * verified batch's checksum from byte 0). Both engines and both window sizes
 * give the same values, and the values are the ones a reference walk of the
 * bytes gives.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_HEADER_BYTES } from "../src/format/constants.js";
import { readBatchHeader } from "../src/format/records.js";
import type { Engine } from "../src/engine/types.js";
import { generateDataDir } from "../src/gen/index.js";
import { xxh3_64 } from "../src/hash/xxh3.js";
import { scanPath } from "../src/node/scan-path.js";
import type { ScanReport, VerifyMode } from "../src/domain/scan.js";
import { allEngines } from "./helpers/engines.js";
import { tempDataDir } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** Every engine × two windows; asserts the segment evidence agrees, returns one report. */
async function scanAll(dir: string, verify: VerifyMode): Promise<ScanReport> {
  const reports: ScanReport[] = [];
  for (const engine of engines) {
    for (const windowBytes of [4096, 1 << 20]) reports.push(await scanPath(dir, { engine, windowBytes, verify }));
  }
  const evidence = (report: ScanReport) =>
    report.partitions.map((p) => p.segments.map((s) => ({ lastBatch: s.lastBatch, hash: s.batchChecksumsXxh3, outcome: s.outcome })));
  for (const other of reports.slice(1)) expect(evidence(other)).toEqual(evidence(reports[0]!));
  return reports[0]!;
}

/** Reference walk: the verified-in-order headers from byte 0 until `walkedSize`. */
function referenceHeaders(logPath: string, walkedSize: number) {
  const bytes = new Uint8Array(readFileSync(logPath));
  const headers = [];
  for (let at = 0; at + BATCH_HEADER_BYTES <= walkedSize; ) {
    const header = readBatchHeader(bytes, at);
    headers.push(header);
    at += header.batchLength;
  }
  return headers;
}

function referenceDigest(checksums: readonly bigint[]): bigint {
  const bytes = new Uint8Array(checksums.length * 8);
  const view = new DataView(bytes.buffer);
  for (const [i, checksum] of checksums.entries()) view.setBigUint64(i * 8, checksum, true);
  return xxh3_64(bytes);
}

describe("lastBatch and batchChecksumsXxh3", () => {
  it("clean and torn segments: the last batch with messages and, deep, the digest of every batch checksum; engines agree", async () => {
    const dir = tempDataDir();
    await generateDataDir(dir, { size: "tiny", scenarios: ["torn-tail", "payload-bitflip"], seed: 5 });
    for (const verify of ["tail", "full"] as const) {
      const report = await scanAll(dir, verify);
      let compared = 0;
      for (const partition of report.partitions) {
        for (const segment of partition.segments) {
          if (segment.outcome === "refused") continue;
          const headers = referenceHeaders(segment.logPath, segment.walkedSize).filter((h) => h.messageCount > 0);
          const last = headers.at(-1)!;
          expect(segment.lastBatch).toEqual({ baseOffset: last.baseOffset, checksum: last.batchChecksum });
          expect(segment.lastBatch!.baseOffset + BigInt(last.messageCount) - 1n).toBe(segment.endOffset);
          if (verify === "full") {
            const all = referenceHeaders(segment.logPath, segment.walkedSize);
            expect(segment.batchChecksumsXxh3).toBe(referenceDigest(all.map((h) => h.batchChecksum)));
          } else {
            expect(segment.batchChecksumsXxh3).toBeNull();
          }
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(3);
    }
  });

  it("an index refusal walks nothing: lastBatch and the digest are null", async () => {
    const dir = tempDataDir();
    await generateDataDir(dir, { size: "tiny", scenarios: ["non-monotone-index"], seed: 2 });
    const report = await scanAll(dir, "full");
    const refused = report.partitions[0]!.segments.find((s) => s.refusal?.code === "IndexEntriesNotMonotone")!;
    expect(refused.lastBatch).toBeNull();
    expect(refused.batchChecksumsXxh3).toBeNull();
  });

  it("interior damage: lastBatch is the last batch proven before the damage, in both modes", async () => {
    const dir = tempDataDir();
    await generateDataDir(dir, { size: "tiny", scenarios: ["payload-bitflip"], seed: 3 });
    for (const verify of ["tail", "full"] as const) {
      const report = await scanAll(dir, verify);
      const segment = report.partitions[0]!.segments.find((s) => s.refusal?.code === "InteriorDamage")!;
      const damage = segment.residue!.damagePosition;
      const before = referenceHeaders(segment.logPath, damage).filter((h) => h.messageCount > 0);
      expect(segment.lastBatch?.baseOffset).toBe(before.at(-1)!.baseOffset);
      expect(segment.lastBatch?.checksum).toBe(before.at(-1)!.batchChecksum);
    }
  });
});
