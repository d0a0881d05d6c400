/**
 * The ways a partition is loaded (docs/benchmarks.md "Breakdown"):
 * `loadPartitionResident` (blocking layer, no promise; it answers only the
 * common partition), `loadPartitionPreloaded` (the same through the async
 * layer) and the promise path, side by side on the same directory, so a test
 * can hold them to the same report, the same bytes read and the same
 * progress events.
 */
import { expect } from "vitest";
import type { Engine } from "../../src/engine/types.js";
import { nodeBlockingScanFs, nodeScanFs } from "../../src/io/fs.js";
import type { PartitionReport } from "../../src/domain/scan.js";
import { type ProgressEvent, type ScanOptions, resolveScanOptions } from "../../src/recovery/options.js";
import { loadListedPartitionAsync, loadPartitionPreloaded, loadPartitionResident } from "../../src/recovery/partition.js";

export interface BothLoads {
  /** The resident load's report, or null when it declined (the promise path then answers alone). */
  resident: PartitionReport | null;
  promise: PartitionReport;
}

/**
 * Loads the partition at `dir` three ways, as discovery hands it on (its
 * listing, no salvage record beside it): resident through the blocking layer,
 * preloaded through the async layer, and the promise path; asserts that the
 * two resident loads answer the same partitions, and that when they answer
 * they equal the promise path exactly: report, bytes read, directory names
 * and progress events.
 */
export async function loadBothWays(dir: string, engine: Engine, options: ScanOptions = {}): Promise<BothLoads> {
  const loads = [];
  for (const way of ["resident", "preloaded", "promise"] as const) {
    const events: ProgressEvent[] = [];
    const io = way === "preloaded" ? "async" : "blocking";
    const scanFs = way === "preloaded" ? nodeScanFs : nodeBlockingScanFs;
    const resolved = resolveScanOptions({ ...options, engine, io, onProgress: (event) => events.push(event) });
    const context = { engine, scanFs, options: resolved };
    const entries = await scanFs.list(dir);
    const loaded =
      way === "resident"
        ? loadPartitionResident(dir, context, entries, false)
        : way === "preloaded"
          ? await loadPartitionPreloaded(dir, context, entries, false)
          : await loadListedPartitionAsync(dir, context, false, entries, false);
    loads.push({ loaded, events });
  }
  const [resident, preloaded, promise] = loads;
  expect(preloaded!.loaded === null, "the preloaded load answers what the resident one does").toBe(resident!.loaded === null);
  for (const attempt of [resident!, preloaded!]) {
    if (attempt.loaded !== null) {
      expect(attempt.loaded.report).toEqual(promise!.loaded!.report);
      expect(attempt.loaded.directoryNames).toEqual(promise!.loaded!.directoryNames);
      expect(attempt.events).toEqual(promise!.events);
    } else {
      expect(attempt.events).toEqual([]);
    }
  }
  return { resident: resident!.loaded?.report ?? null, promise: promise!.loaded!.report };
}
