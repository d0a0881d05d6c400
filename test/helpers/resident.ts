/**
 * The two ways a partition is loaded through the blocking layer (docs/benchmarks.md
 * "Breakdown"): `loadPartitionResident` (no promise; it answers only the
 * common partition) and the promise path, side by side on the same directory,
 * so a test can hold them to the same report, the same bytes read and the
 * same progress events.
 */
import { expect } from "vitest";
import type { Engine } from "../../src/engine/types.js";
import { nodeBlockingScanFs } from "../../src/io/fs.js";
import type { PartitionReport } from "../../src/domain/scan.js";
import { type ProgressEvent, type ScanOptions, resolveScanOptions } from "../../src/recovery/options.js";
import { loadListedPartitionAsync, loadPartitionResident } from "../../src/recovery/partition.js";

export interface BothLoads {
  /** The resident load's report, or null when it declined (the promise path then answers alone). */
  resident: PartitionReport | null;
  promise: PartitionReport;
}

/**
 * Loads the partition at `dir` both ways, as discovery hands it on (its
 * listing, no salvage record beside it), and asserts that when the resident
 * load answers it equals the promise path exactly: report, bytes read,
 * directory names and progress events.
 */
export async function loadBothWays(dir: string, engine: Engine, options: ScanOptions = {}): Promise<BothLoads> {
  const loads = [];
  for (const resident of [true, false]) {
    const events: ProgressEvent[] = [];
    const resolved = resolveScanOptions({ ...options, engine, io: "blocking", onProgress: (event) => events.push(event) });
    const context = { engine, scanFs: nodeBlockingScanFs, options: resolved };
    const entries = await nodeBlockingScanFs.list(dir);
    const loaded = resident
      ? loadPartitionResident(dir, context, entries, false)
      : await loadListedPartitionAsync(dir, context, false, entries, false);
    loads.push({ loaded, events });
  }
  const [resident, promise] = loads;
  if (resident!.loaded !== null) {
    expect(resident!.loaded.report).toEqual(promise!.loaded!.report);
    expect(resident!.loaded.directoryNames).toEqual(promise!.loaded!.directoryNames);
    expect(resident!.events).toEqual(promise!.events);
  } else {
    expect(resident!.events).toEqual([]);
  }
  return { resident: resident!.loaded?.report ?? null, promise: promise!.loaded!.report };
}
