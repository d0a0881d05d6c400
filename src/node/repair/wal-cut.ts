/**
 * docs/node.md N7: the one metadata repair — cutting a proven WAL torn tail —
 * through the repair machinery of docs/repair.md §6.2: the residue is preserved
 * (copied and read back, or recorded by length when all zero) into
 * `metadata.segscan/`, the intent is journaled and fsynced before the cut, the
 * cut is fsynced with its directory, and the journal's `truncate-log` record
 * makes `restore(<root>/metadata)` return every byte. Nothing else in
 * `metadata/` is ever changed.
 */
import { acquireLock, refuseWriters } from "../../repair/lock.js";
import * as path from "node:path";
import { createEngine } from "../../engine/index.js";
import type { Engine } from "../../engine/types.js";
import { DEFAULT_WINDOW_BYTES, PROBE_BUDGET_UNITS } from "../../format/constants.js";
import { nodeScanFs } from "../../io/fs.js";
import { PreserveError, StalePlanError } from "../../repair/errors.js";
import { DEFAULT_CHUNK_BYTES, digestRange, newRunId, preserveRange, withFile } from "../../repair/files.js";
import { nodeRepairFs, type RepairFs } from "../../repair/fs-layer.js";
import { JOURNAL_NAME, JournalWriter, type JournalResidue } from "../../repair/journal.js";
import { preserveDirOf } from "../../repair/plan.js";
import type { NodeReport } from "../../domain/node.js";
import { worstSeverity } from "../../domain/node.js";
import { scanWal } from "../wal/scan.js";

export interface WalCutPlan {
  metadataDir: string;
  walPath: string;
  /** `metadata.segscan/`, beside `metadata/`. */
  preserveDir: string;
  fromSize: number;
  /** The proven prefix P. */
  toSize: number;
  /** The snapshot op the scan used (the re-scan must agree). */
  snapshotOp: bigint;
  snapshotOpKnown: boolean;
  superblockCluster: bigint | null;
}

/** The WAL cut a node report asks for: only when the WAL's worst finding is `WalTornTail` (repairable). */
export function planWalCut(node: NodeReport): WalCutPlan | null {
  const wal = node.metadata.wal;
  if (wal === null || wal.residue === null) return null;
  if (worstSeverity(wal.findings.map((f) => f.severity)) !== "repairable") return null;
  if (!wal.findings.some((f) => f.code === "WalTornTail")) return null;
  const metadataDir = path.dirname(wal.path);
  return {
    metadataDir,
    walPath: wal.path,
    preserveDir: preserveDirOf(metadataDir),
    fromSize: wal.size,
    toSize: wal.residue.damagePosition,
    snapshotOp: node.metadata.snapshot?.sequenceNumber ?? 0n,
    snapshotOpKnown: !(node.metadata.snapshot?.present ?? false) || node.metadata.snapshot?.sequenceNumber !== null,
    superblockCluster: node.metadata.superblock?.vsr?.cluster ?? null,
  };
}

export interface WalCutOptions {
  fs?: RepairFs;
  engine?: Engine;
  windowBytes?: number;
  probeBudgetUnits?: number;
  chunkBytes?: number;
  /**
   * Refuse (WriterOpenError, nothing changed) while another process has the
   * WAL open for writing (Linux /proc, as for segment repairs, docs/repair.md).
   * Defaults to on for the real filesystem and off for an injected `fs` (the
   * crash tests apply thousands of times).
   */
  checkWriters?: boolean;
}

export interface WalCutResult {
  walPath: string;
  fromSize: number;
  toSize: number;
  journalPath: string;
  /** Name of the preserved residue in the preserve dir, or null when it was all zero (recorded by length). */
  preserved: string | null;
}

/**
 * Applies the cut. The WAL is re-scanned first and the plan refused
 * (StalePlanError, nothing changed) unless the file still has the planned size
 * and the scan still proves the same torn tail.
 */
export async function applyWalCut(plan: WalCutPlan, options: WalCutOptions = {}): Promise<WalCutResult> {
  // One writer at a time, as for segment repairs (docs/repair.md): the lock file lives in `metadata.segscan/`.
  const lock = await acquireLock(plan.preserveDir, `cut the torn tail of ${plan.walPath}`, process.argv.join(" "));
  try {
    if (options.checkWriters ?? options.fs === undefined) {
      const walName = path.basename(plan.walPath);
      await refuseWriters(path.dirname(plan.walPath), `cut the torn tail of ${plan.walPath}`, (file) => path.basename(file) === walName);
    }
    return await applyWalCutLocked(plan, options);
  } finally {
    await lock.release();
  }
}

async function applyWalCutLocked(plan: WalCutPlan, options: WalCutOptions): Promise<WalCutResult> {
  const fs = options.fs ?? nodeRepairFs;
  const engine = options.engine ?? (await createEngine());
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const { walPath, fromSize, toSize, preserveDir, metadataDir } = plan;
  const stat = await fs.stat(walPath);
  const rescan =
    stat === null
      ? null
      : await scanWal(walPath, stat.size, {
          engine,
          scanFs: nodeScanFs,
          windowBytes: options.windowBytes ?? DEFAULT_WINDOW_BYTES,
          probeBudgetUnits: options.probeBudgetUnits ?? PROBE_BUDGET_UNITS,
          snapshotOp: plan.snapshotOp,
          snapshotOpKnown: plan.snapshotOpKnown,
          superblockCluster: plan.superblockCluster,
        });
  const stillTorn =
    rescan !== null &&
    stat!.size === fromSize &&
    rescan.report.residue?.damagePosition === toSize &&
    rescan.report.findings.some((f) => f.code === "WalTornTail") &&
    worstSeverity(rescan.report.findings.map((f) => f.severity)) === "repairable";
  if (!stillTorn) {
    throw new StalePlanError(
      `${walPath} changed since the scan: the plan cut it from ${fromSize} to ${toSize} bytes, and the re-scan does not prove that torn tail any more; nothing was changed`,
      { path: walPath, position: toSize },
      `size ${stat?.size ?? "absent"}`,
    );
  }
  const run = newRunId();
  await fs.mkdir(preserveDir);
  await fs.syncDir(path.dirname(preserveDir));
  const journal = await JournalWriter.open(fs, preserveDir, run);
  const walName = path.basename(walPath);
  const bytes = fromSize - toSize;
  let preserved: string | null = null;
  try {
    await journal.append({ kind: "begin", time: new Date().toISOString(), partition: metadataDir, plan: { walCuts: 1 } });
    const digest = await digestRange(fs, engine, walPath, toSize, bytes, chunkBytes);
    let residue: JournalResidue;
    if (digest.allZero) {
      residue = { bytes, allZero: true, xxh3: digest.xxh3, file: null };
    } else {
      const copy = await preserveRange(fs, engine, walPath, toSize, bytes, preserveDir, `${walName}.${toSize}.residue`, chunkBytes);
      if (copy.xxh3 !== digest.xxh3) {
        throw new PreserveError(`the residue of ${walPath} [${toSize}, ${fromSize}) changed while it was preserved; nothing was cut`, {
          path: walPath,
          position: toSize,
        });
      }
      await journal.append({ kind: "preserved", source: walName, from: toSize, bytes, xxh3: copy.xxh3, file: copy.file });
      residue = { bytes, allZero: false, xxh3: copy.xxh3, file: copy.file };
      preserved = copy.file;
    }
    // The journal's truncate-log record: restore(<root>/metadata) undoes it like a segment cut.
    const seq = await journal.append({
      kind: "intent",
      op: { type: "truncate-log", segment: "0", log: walName, fromSize, toSize, residue },
    });
    await withFile(fs, walPath, "r+", async (file) => {
      await file.truncate(toSize);
      await file.sync();
    });
    await fs.syncDir(metadataDir);
    await journal.append({ kind: "done" }, seq);
    await journal.append({ kind: "end", time: new Date().toISOString() });
  } finally {
    await journal.close();
  }
  return { walPath, fromSize, toSize, journalPath: path.join(preserveDir, JOURNAL_NAME), preserved };
}
