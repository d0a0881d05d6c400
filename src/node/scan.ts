/**
 * `scanNode` (docs/node.md N0, N9): the metadata plane of a node root —
 * `metadata/journal.wal` (N1), `metadata/snapshot.bin` (N2), the metadata
 * superblock and each partition's superblock (N3) — with one verdict and the
 * boot forecast (N8). Read-only: nothing here writes.
 */
import { join, resolve } from "node:path";
import { resolveEngineOption } from "../recovery/options.js";
import type { Engine } from "../engine/types.js";
import { ScanFailure, abortError, describeCause } from "../io/errors.js";
import { type ScanFs, nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import { type ResolvedScanOptions, type ScanOptions, resolveScanOptions } from "../recovery/options.js";
import { errnoCode, isNotFound, leftoverFindings } from "./files.js";
import { scanSnapshot } from "./snapshot.js";
import { pairingFindings, scanSuperblock } from "./superblock.js";
import type { NodeReport } from "../domain/node.js";
import { committedOpsForecast, committedOpsLoss, committedOpsLostFinding, scanWal } from "./wal/scan.js";

export const METADATA_DIR = "metadata";
/** docs/node.md N0: listed, never judged (not durable state). */
export const NOT_DURABLE_DIRS = ["state", "runtime", "logs"] as const;

/**
 * A node root is a directory holding `metadata/` or `streams/` (docs/node.md
 * N0). An absent path is none; a stat or listing that fails otherwise (EACCES,
 * EIO) rejects with a ScanFailure naming the path and the cause: a failed
 * read is no evidence that the path is not a node root.
 */
export async function isNodeRoot(path: string, scanFs: ScanFs = nodeScanFs): Promise<boolean> {
  const why = `so whether it is an Iggy node root (holding ${METADATA_DIR}/ or ${STREAMS_DIR}/) is unknown; nothing was changed`;
  let info;
  try {
    info = await scanFs.stat(path);
  } catch (cause) {
    if (isNotFound(cause)) return false;
    throw new ScanFailure("OpenFailure", path, `cannot stat ${path}: ${describeCause(cause)}, ${why}`, { cause });
  }
  if (!info.isDirectory) return false;
  let entries;
  try {
    entries = await scanFs.list(path);
  } catch (cause) {
    if (isNotFound(cause)) return false;
    throw new ScanFailure("ListFailure", path, `cannot list the directory ${path}: ${describeCause(cause)}, ${why}`, { cause });
  }
  return entries.some((entry) => entry.isDirectory && (entry.name === METADATA_DIR || entry.name === STREAMS_DIR));
}

export async function scanNode(root: string, options: ScanOptions = {}, scanFs?: ScanFs): Promise<NodeReport> {
  const fs = scanFs ?? (options.io === "blocking" ? nodeBlockingScanFs : nodeScanFs);
  const engine = await resolveEngineOption(options.engine);
  const withEngine = { ...options, engine };
  const report = await scanNodeMetadata(resolve(root), withEngine, fs, engine);
  return finishNode(report, withEngine, fs, engine, []);
}

/** The metadata plane (docs/node.md N1–N3), scanned before the partitions (N0). */
export async function scanNodeMetadata(root: string, options: ScanOptions, scanFs: ScanFs, engine: Engine): Promise<NodeReport> {
  const resolved = resolveScanOptions(options);
  if (resolved.signal?.aborted) throw abortError(resolved.signal);
  const metadataDir = join(root, METADATA_DIR);
  const rootEntries = await scanFs.list(root);
  const report: NodeReport = {
    path: root,
    verdict: "clean",
    metadata: {
      present: rootEntries.some((entry) => entry.isDirectory && entry.name === METADATA_DIR),
      wal: null,
      snapshot: null,
      superblock: null,
      findings: [],
    },
    partitions: [],
    notDurable: NOT_DURABLE_DIRS.filter((name) => rootEntries.some((entry) => entry.name === name)).map((name) => join(root, name)),
    crossCheck: { orphanDirs: [], missingDirs: [], inconclusiveStreams: [] },
    bootForecast: [],
  };
  if (report.metadata.present) await scanMetadataDir(metadataDir, report, resolved, scanFs, engine);
  else if (rootEntries.some((entry) => entry.isDirectory && entry.name === STREAMS_DIR)) {
    report.metadata.findings.push({
      severity: "warn",
      code: "MetadataMissing",
      path: metadataDir,
      message: `${root} holds streams/ but no metadata/: the server would start with empty metadata and serve none of these partitions`,
    });
  }
  return report;
}

/** `metadata/`: the snapshot (N2), the superblock paired with it (N3), the WAL (N1) and the leftovers of writes that died. */
async function scanMetadataDir(
  metadataDir: string,
  report: NodeReport,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
  engine: Engine,
): Promise<void> {
  const signal = resolved.signal;
  const checkAbort = (): void => {
    if (signal?.aborted) throw abortError(signal);
  };
  const snapshot = await scanSnapshot(join(metadataDir, "snapshot.bin"), scanFs, engine);
  report.metadata.snapshot = snapshot;
  checkAbort();
  const superblock = await scanSuperblock(metadataDir, scanFs, engine, "metadata");
  superblock.findings.push(
    ...pairingFindings(superblock, {
      present: snapshot.present,
      sequenceNumber: snapshot.sequenceNumber,
      checksum: snapshot.checksum,
      path: snapshot.path,
      corrupt: snapshot.findings.some((finding) => finding.severity === "refused" || finding.severity === "failed"),
    }),
  );
  report.metadata.superblock = superblock;
  checkAbort();
  await scanWalItem(join(metadataDir, "journal.wal"), report, {
    engine,
    scanFs,
    windowBytes: resolved.used.windowBytes,
    probeBudgetUnits: resolved.used.probeBudgetUnits,
    snapshotOp: snapshot.sequenceNumber ?? 0n,
    snapshotOpKnown: !snapshot.present || snapshot.sequenceNumber !== null,
    superblockCluster: superblock.vsr?.cluster ?? null,
    committed: superblock.vsr === null ? null : { commitMax: superblock.vsr.commitMax, replicaCount: superblock.vsr.replicaCount },
    signal,
    onProgress: resolved.onProgress,
  });
  for (const [name, code, what] of [
    ["journal.wal.tmp", "WalTmpPresent", "a WAL rewrite (drain or truncate_from) that died before its rename"],
    ["snapshot.bin.tmp", "SnapshotTmpPresent", "a snapshot write that died before its rename"],
  ] as const) {
    const path = join(metadataDir, name);
    const message = `${path} is left over from ${what}: inert, never read by the server; left alone`;
    report.metadata.findings.push(...(await leftoverFindings(scanFs, path, { code, message }, what)));
  }
}

export type { PartitionProof } from "./partition-dir.js";

import { STREAMS_DIR, finishNode } from "./pass.js";
export { finishNode, NodePartitionPass, STREAMS_DIR, type NodeEntries, type NodePassOptions } from "./pass.js";
export { nodeFindings } from "../domain/node.js";

async function scanWalItem(
  walPath: string,
  report: NodeReport,
  options: Parameters<typeof scanWal>[2] & {
    onProgress: ((event: { path: string; bytesDone: number; bytesTotal: number }) => void) | undefined;
  },
): Promise<void> {
  const failed = (message: string): void => {
    report.metadata.findings.push({ severity: "failed", code: "WalReadFailure", path: walPath, message });
  };
  let size: number;
  try {
    const info = await options.scanFs.stat(walPath);
    if (!info.isFile) return failed(`${walPath} is not a regular file; it was not read`);
    size = info.size;
  } catch (cause) {
    if (errnoCode(cause) !== "ENOENT") return failed(`cannot stat ${walPath} (${describeCause(cause)}); nothing was changed`);
    report.metadata.findings.push({
      severity: "info",
      code: "WalAbsent",
      path: walPath,
      message: `${walPath} does not exist: the server creates an empty WAL at boot (nothing to replay)`,
    });
    // docs/node.md N1.1: an absent WAL proves no op after the snapshot's.
    const loss = committedOpsLoss(null, options);
    if (loss !== null) {
      report.metadata.findings.push(committedOpsLostFinding(walPath, loss, "journal.wal does not exist", false));
      report.bootForecast.push(committedOpsForecast(walPath, loss));
    }
    return;
  }
  let bytesDone = 0;
  const onProgress = options.onProgress;
  try {
    const scan = await scanWal(walPath, size, {
      ...options,
      onRead: onProgress
        ? (bytes) => {
            bytesDone += bytes;
            onProgress({ path: walPath, bytesDone, bytesTotal: size });
          }
        : undefined,
    });
    report.metadata.wal = scan.report;
    report.bootForecast.push(...scan.forecast);
  } catch (error) {
    if (!(error instanceof ScanFailure)) throw error;
    failed(error.message);
  }
}
