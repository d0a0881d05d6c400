/** Helpers for the metadata WAL tests: write bytes to a temp file and scan them. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "../../src/engine/types.js";
import { nodeScanFs } from "../../src/io/fs.js";
import { PROBE_BUDGET_UNITS } from "../../src/format/constants.js";
import { scanWal, type WalScan } from "../../src/node/wal/scan.js";
import { trackedTempDir } from "./fixtures.js";

/** A temp directory removed after the test file's tests (test/helpers/fixtures.ts). */
export function tempDir(prefix = "segscan-node-"): string {
  return trackedTempDir(prefix);
}

export async function scanWalBytes(
  bytes: Uint8Array,
  engine: Engine,
  options: { windowBytes?: number; probeBudgetUnits?: number; snapshotOp?: bigint; superblockCluster?: bigint | null } = {},
): Promise<WalScan> {
  const path = join(tempDir(), "journal.wal");
  writeFileSync(path, bytes);
  return scanWal(path, bytes.length, {
    engine,
    scanFs: nodeScanFs,
    windowBytes: options.windowBytes ?? 4096,
    probeBudgetUnits: options.probeBudgetUnits ?? PROBE_BUDGET_UNITS,
    snapshotOp: options.snapshotOp ?? 0n,
    superblockCluster: options.superblockCluster ?? null,
  });
}

export function codes(scan: WalScan): string[] {
  return scan.report.findings.map((finding) => finding.code);
}
