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
import { type ScanFs, nodeBlockingScanFs, nodeScanFs, withListing } from "../io/fs.js";
import { type ScanOptions, resolveScanOptions } from "../recovery/options.js";
import type { PartitionReport } from "../report/types.js";
import { exists } from "./files.js";
import { type PartitionProof, parseU32Name, partitionHead, scanOffsets, scanPurgeGeneration } from "./partition-dir.js";
import { scanSnapshot } from "./snapshot.js";
import { pairingFindings, scanSuperblock } from "./superblock.js";
import {
  type BootForecastEntry,
  type NodeFinding,
  type NodePartitionReport,
  type NodeReport,
  type Severity,
  worstSeverity,
} from "./types.js";
import { scanWal } from "./wal/scan.js";

export const METADATA_DIR = "metadata";
export const STREAMS_DIR = "streams";
/** docs/node.md N0: listed, never judged (not durable state). */
export const NOT_DURABLE_DIRS = ["state", "runtime", "logs"] as const;
/** Directories segscan itself or Iggy's quarantine creates beside a partition: not partitions. */
const NOT_PARTITION_DIR = /\.(segscan|fenced\.\d+)$/;
/** Findings `finishNode` adds to the metadata findings (recomputed on every call). */
const CROSS_CHECK_CODES = new Set(["OrphanPartitionDir", "MissingPartitionDir", "CrossCheckInconclusive"]);

/** A node root is a directory holding `metadata/` or `streams/` (docs/node.md N0). */
export async function isNodeRoot(path: string, scanFs: ScanFs = nodeScanFs): Promise<boolean> {
  try {
    if (!(await scanFs.stat(path)).isDirectory) return false;
    const entries = await scanFs.list(path);
    return entries.some((entry) => entry.isDirectory && (entry.name === METADATA_DIR || entry.name === STREAMS_DIR));
  } catch {
    return false;
  }
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
  const signal = resolved.signal;
  const checkAbort = (): void => {
    if (signal?.aborted) throw abortError(signal);
  };
  checkAbort();
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
  const metaFindings = report.metadata.findings;
  if (report.metadata.present) {
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
    const walPath = join(metadataDir, "journal.wal");
    await scanWalItem(walPath, report, {
      engine,
      scanFs,
      windowBytes: resolved.used.windowBytes,
      probeBudgetUnits: resolved.used.probeBudgetUnits,
      snapshotOp: snapshot.sequenceNumber ?? 0n,
      snapshotOpKnown: !snapshot.present || snapshot.sequenceNumber !== null,
      superblockCluster: superblock.vsr?.cluster ?? null,
      signal,
      onProgress: resolved.onProgress,
    });
    for (const [name, code, what] of [
      ["journal.wal.tmp", "WalTmpPresent", "a WAL rewrite (drain or truncate_from) that died before its rename"],
      ["snapshot.bin.tmp", "SnapshotTmpPresent", "a snapshot write that died before its rename"],
    ] as const) {
      const path = join(metadataDir, name);
      if (await exists(scanFs, path))
        metaFindings.push({
          severity: "info",
          code,
          path,
          message: `${path} is left over from ${what}: inert, never read by the server; left alone`,
        });
    }
  } else if (rootEntries.some((entry) => entry.isDirectory && entry.name === STREAMS_DIR)) {
    metaFindings.push({
      severity: "warn",
      code: "MetadataMissing",
      path: metadataDir,
      message: `${root} holds streams/ but no metadata/: the server would start with empty metadata and serve none of these partitions`,
    });
  }
  return report;
}

export type { PartitionProof } from "./partition-dir.js";

/**
 * Where the node section's partition-dir entries go. By default they are kept
 * in `report.partitions`; a streaming writer (`scan --ndjson`) takes each as
 * it is made instead, so a node of 100,000 partitions does not hold them all
 * (issue 13). The forecast and the verdict are the same either way.
 */
export type NodePartitionEmitter = (entry: NodePartitionReport) => Promise<void>;

/**
 * Partition dirs' superblocks (docs/node.md N3), the forecast and the verdict,
 * given the partitions' proofs (every scanned partition's, `readonly
 * PartitionProof[]` or a map by path).
 */
export async function finishNode(
  report: NodeReport,
  options: ScanOptions,
  scanFs: ScanFs,
  engine: Engine,
  partitionReports: readonly PartitionProof[] | ReadonlyMap<string, PartitionProof>,
  /** Scans a `.fenced.<n>` dir's segments read-only (`--include-fenced`, docs/node.md N6). */
  scanFenced?: (dir: string) => Promise<PartitionReport | null>,
  emit?: NodePartitionEmitter,
): Promise<NodeReport> {
  if (options.signal?.aborted) throw abortError(options.signal);
  const proofs = isProofList(partitionReports)
    ? new Map(partitionReports.map((partition) => [partition.path, partition]))
    : partitionReports;
  report.crossCheck = { orphanDirs: [], missingDirs: [], inconclusiveStreams: [] };
  report.metadata.findings = report.metadata.findings.filter((f) => !CROSS_CHECK_CODES.has(f.code));
  report.partitions = [];
  const partitionEffects: BootForecastEntry[] = [];
  const partitionSeverities = new Set<Severity>();
  await scanPartitionDirs(report, scanFs, engine, proofs, async (entry) => {
    if (scanFenced !== undefined) await scanFencedDirs(entry, scanFenced);
    partitionEffects.push(...partitionForecast(entry, proofs.get(entry.path)));
    for (const finding of partitionDirFindings(entry)) partitionSeverities.add(finding.severity);
    if (emit === undefined) report.partitions.push(entry);
    else await emit(entry);
  });
  report.bootForecast = forecast(report, partitionEffects);
  for (const partition of proofs.values()) partitionSeverities.add(partition.verdict as Severity);
  report.verdict = worstSeverity([...nodeFindings(report).map((finding) => finding.severity), ...partitionSeverities]);
  return report;
}

function isProofList(proofs: readonly PartitionProof[] | ReadonlyMap<string, PartitionProof>): proofs is readonly PartitionProof[] {
  return Array.isArray(proofs);
}

/** `--include-fenced` (docs/node.md N6): each fenced dir of the entry scanned read-only, its result added to its finding. */
async function scanFencedDirs(entry: NodePartitionReport, scanFenced: (dir: string) => Promise<PartitionReport | null>): Promise<void> {
  for (const finding of entry.findings.filter((f) => f.code === "FencedDir")) {
    const fenced = await scanFenced(finding.path);
    if (fenced === null) continue;
    const ends = fenced.segments.map((s) => s.endOffset).filter((end): end is bigint => end !== null);
    const last = ends.reduce<bigint | null>((max, end) => (max === null || end > max ? end : max), null);
    finding.scannedVerdict = fenced.verdict;
    finding.scannedSegments = fenced.segments.length;
    finding.scannedLastOffset = last;
    finding.message += `; scanned read-only (--include-fenced): ${fenced.verdict}, ${fenced.segments.length} segment${fenced.segments.length === 1 ? "" : "s"}${last === null ? "" : `, offsets up to ${last}`}${fenced.refusal ? ` (${fenced.refusal.code})` : ""}`;
  }
}

async function scanWalItem(
  walPath: string,
  report: NodeReport,
  options: Parameters<typeof scanWal>[2] & {
    onProgress: ((event: { path: string; bytesDone: number; bytesTotal: number }) => void) | undefined;
  },
): Promise<void> {
  let size: number;
  try {
    const info = await options.scanFs.stat(walPath);
    if (!info.isFile) {
      report.metadata.findings.push({
        severity: "failed",
        code: "WalReadFailure",
        path: walPath,
        message: `${walPath} is not a regular file; it was not read`,
      });
      return;
    }
    size = info.size;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      report.metadata.findings.push({
        severity: "info",
        code: "WalAbsent",
        path: walPath,
        message: `${walPath} does not exist: the server creates an empty WAL at boot (nothing to replay)`,
      });
    } else {
      report.metadata.findings.push({
        severity: "failed",
        code: "WalReadFailure",
        path: walPath,
        message: `cannot stat ${walPath} (${describeCause(cause)}); nothing was changed`,
      });
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
    report.metadata.findings.push({ severity: "failed", code: "WalReadFailure", path: walPath, message: error.message });
  }
}

/** docs/node.md N6: WAL operations after the snapshot that create, delete or purge streams, topics, partitions or groups. */
const METADATA_SHAPE_OPERATIONS = new Set([128, 130, 131, 64, 134, 135, 65, 137, 68, 139, 140]);
/** CreateStream: it can only add a stream the snapshot does not hold. */
const CREATE_STREAM_OPERATION = 128;
const FENCED_DIR = /^(.+)\.fenced\.(\d+)$/;

/**
 * `streams/<s>/topics/<t>/partitions/<p>/`: each partition dir's superblock
 * (docs/node.md N3), offsets (N4), `purge.gen` (N5), fenced siblings, and the
 * cross-check against the snapshot (N6).
 */
async function scanPartitionDirs(
  report: NodeReport,
  scanFs: ScanFs,
  engine: Engine,
  byPath: ReadonlyMap<string, PartitionProof>,
  emit: NodePartitionEmitter,
): Promise<void> {
  const root = report.path;
  const listNames = async (directory: string): Promise<{ dirs: string[]; fenced: string[] }> => {
    try {
      const entries = (await scanFs.list(directory)).filter((entry) => entry.isDirectory);
      return {
        dirs: entries
          .filter((entry) => !NOT_PARTITION_DIR.test(entry.name))
          .map((entry) => entry.name)
          .sort(),
        fenced: entries
          .filter((entry) => FENCED_DIR.test(entry.name))
          .map((entry) => entry.name)
          .sort(),
      };
    } catch {
      return { dirs: [], fenced: [] };
    }
  };
  const snapshot = report.metadata.snapshot;
  const contents = snapshot?.contents ?? null;
  const streamsDir = join(root, STREAMS_DIR);
  const seen = new Set<string>();
  const orphans: { path: string; stream: string }[] = [];
  for (const stream of (await listNames(streamsDir)).dirs) {
    for (const topic of (await listNames(join(streamsDir, stream, "topics"))).dirs) {
      const partitionsDir = join(streamsDir, stream, "topics", topic, "partitions");
      const listing = await listNames(partitionsDir);
      for (const partition of listing.dirs) {
        const joined = join(partitionsDir, partition);
        // The proof's own string when there is one: on a node of many partitions a second copy of every path adds up.
        const path = byPath.get(joined)?.path ?? joined;
        seen.add(path);
        const partitionFs = await listedPartitionFs(scanFs, path);
        const superblock = await scanSuperblock(path, partitionFs, engine, "partition");
        const findings: NodeFinding[] = [];
        const frontier = superblock.state === "present" ? (superblock.vsr?.offsetFrontier ?? 0n) : 0n;
        const proven = byPath.get(path);
        const head = partitionHead(proven, frontier);
        if (
          frontier > 0n &&
          proven !== undefined &&
          head.known &&
          (head.lastProvenOffset === null || frontier - 1n > head.lastProvenOffset)
        ) {
          findings.push({
            severity: "info",
            code: "OffsetFrontierAhead",
            path,
            message: `the partition superblock's offset_frontier is ${frontier} but the segments prove offsets only up to ${head.lastProvenOffset ?? "none"}: the server resumes at ${frontier}, and offsets below it are never re-minted`,
            offsetFrontier: frontier,
            lastProvenOffset: head.lastProvenOffset,
          });
        }
        const ids = [stream, topic, partition].map(parseU32Name);
        const topicEntry = contents?.streams.find((s) => s.id === ids[0])?.topics.find((t) => t.id === ids[1]) ?? null;
        const expected = topicEntry?.partitions.find((p) => p.id === ids[2]) ?? null;
        if (contents !== null && expected === null) orphans.push({ path, stream });
        const holdsMessages = proven?.segments.some((s) => s.messagesSize > 0) ?? false;
        const purgeGeneration = await scanPurgeGeneration(partitionFs, path, expected, contents !== null, holdsMessages);
        const offsets = await scanOffsets(
          {
            scanFs: partitionFs,
            engine,
            partitionDir: path,
            head,
            consumerGroupIds: topicEntry?.consumerGroupIds ?? null,
            plannedCut:
              proven?.action === "repair" && proven.segments.some((s) => s.outcome === "torn-tail" && s.walkedSize < s.messagesSize),
          },
          findings,
        );
        const fenced = listing.fenced.filter((name) => FENCED_DIR.exec(name)?.[1] === partition).map((name) => join(partitionsDir, name));
        for (const dir of fenced) {
          findings.push({
            severity: "info",
            code: "FencedDir",
            path: dir,
            message: `${dir} holds segments the server quarantined (fenced) from ${path}: evidence, never read by the server and never merged back; left alone`,
          });
        }
        await emit({
          path,
          superblock: superblock.state === "empty" && superblock.findings.length === 0 ? null : superblock,
          head,
          purgeGeneration,
          offsets,
          fenced,
          findings,
        });
      }
    }
  }
  crossCheck(report, contents, seen, orphans);
}

/**
 * The partition dir's files are probed for a dozen optional names (superblock
 * slots and their leftovers, purge.gen, offsets dirs), most absent on most
 * partitions: one listing answers every absent one without a failing stat. An
 * unlistable dir keeps the plain stats, which report the failure per file.
 */
async function listedPartitionFs(scanFs: ScanFs, directory: string): Promise<ScanFs> {
  try {
    return withListing(scanFs, directory, new Set((await scanFs.list(directory)).map((entry) => entry.name)));
  } catch {
    return scanFs;
  }
}

/** docs/node.md N6: partition dirs without metadata, metadata partitions without a dir, and where the WAL makes that inconclusive. */
function crossCheck(
  report: NodeReport,
  contents: NonNullable<NodeReport["metadata"]["snapshot"]>["contents"] | null,
  seen: ReadonlySet<string>,
  orphans: readonly { path: string; stream: string }[],
): void {
  const root = report.path;
  const snapshotOp = report.metadata.snapshot?.sequenceNumber ?? 0n;
  const later = (report.metadata.wal?.operations ?? []).filter(
    (entry) => entry.op > snapshotOp && METADATA_SHAPE_OPERATIONS.has(entry.operation),
  );
  const anyStream = later.some((entry) => entry.operation !== CREATE_STREAM_OPERATION);
  const newStreams = later.length > 0;
  const knownStreams = new Set((contents?.streams ?? []).map((s) => s.id));
  const inconclusive = new Set<number>();
  const isInconclusive = (stream: string): boolean => {
    const id = parseU32Name(stream);
    if (id === null) return false;
    if (anyStream || (newStreams && !knownStreams.has(id))) {
      inconclusive.add(id);
      return true;
    }
    return false;
  };
  for (const orphan of orphans) {
    if (isInconclusive(orphan.stream)) continue;
    report.crossCheck.orphanDirs.push(orphan.path);
    report.metadata.findings.push({
      severity: "warn",
      code: "OrphanPartitionDir",
      path: orphan.path,
      message: `${orphan.path} is not a partition in the metadata (snapshot at op ${snapshotOp}, no later op changes the streams): the server ignores it, and a later create reusing these ids builds on it; never deleted`,
    });
  }
  for (const stream of contents?.streams ?? []) {
    for (const topic of stream.topics) {
      for (const partition of topic.partitions) {
        const path = join(root, STREAMS_DIR, `${stream.id}`, "topics", `${topic.id}`, "partitions", `${partition.id}`);
        if (seen.has(path) || isInconclusive(`${stream.id}`)) continue;
        report.crossCheck.missingDirs.push(path);
        const lost = topic.messagesCount > 0n;
        report.metadata.findings.push({
          severity: lost ? "refused" : "warn",
          code: "MissingPartitionDir",
          path,
          message: `partition ${partition.id} of stream ${stream.id} topic ${topic.id} is in the metadata but ${path} does not exist: the server recreates it EMPTY at boot${lost ? ` although the topic's metadata counts ${topic.messagesCount} messages (data lost unless the directory is restored)` : ""}`,
          messagesCount: topic.messagesCount,
        });
      }
    }
  }
  report.crossCheck.inconclusiveStreams = [...inconclusive].sort((a, b) => a - b);
  for (const stream of report.crossCheck.inconclusiveStreams) {
    report.metadata.findings.push({
      severity: "info",
      code: "CrossCheckInconclusive",
      path: join(root, STREAMS_DIR, `${stream}`),
      message: `WAL ops after the snapshot (op ${snapshotOp}) create, delete or purge streams, topics or partitions, and their bodies are not decoded: which partitions of stream ${stream} exist is not proven, so its orphan and missing directories are not judged`,
    });
  }
}

/** Every finding of the node section (metadata items and partition dirs). */
export function nodeFindings(report: NodeReport): NodeFinding[] {
  return [
    ...report.metadata.findings,
    ...(report.metadata.snapshot?.findings ?? []),
    ...(report.metadata.superblock?.findings ?? []),
    ...(report.metadata.wal?.findings ?? []),
    ...report.partitions.flatMap(partitionDirFindings),
  ];
}

/** Every finding of one partition dir's entry. */
function partitionDirFindings(partition: NodePartitionReport): NodeFinding[] {
  return [
    ...(partition.superblock?.findings ?? []),
    ...(partition.purgeGeneration?.findings ?? []),
    ...partition.offsets.flatMap((offset) => offset.findings),
    ...partition.findings,
  ];
}

/** docs/node.md N8: what the next boot does with the bytes as they are; destructive effects first. */
function forecast(report: NodeReport, partitionEffects: readonly BootForecastEntry[]): BootForecastEntry[] {
  const entries = report.bootForecast.filter(
    (entry) =>
      entry.effect === "truncate-wal-tail" ||
      entry.effect === "truncate-wal-from-op" ||
      (entry.effect === "refuse-boot" && entry.path === report.metadata.wal?.path),
  );
  const refusing = [...(report.metadata.snapshot?.findings ?? []), ...(report.metadata.superblock?.findings ?? [])].filter(
    (finding) => finding.severity === "refused",
  );
  for (const finding of refusing)
    entries.push({ effect: "refuse-boot", path: finding.path, destructive: false, detail: `${finding.code}: ${finding.message}` });
  for (const finding of report.metadata.findings) {
    if (finding.code === "MissingPartitionDir") {
      const lost = typeof finding.messagesCount === "bigint" && finding.messagesCount > 0n;
      entries.push({
        effect: "recreate-partition-empty",
        path: finding.path,
        destructive: lost,
        detail: `the partition directory is missing: the server recreates it empty${lost ? ` (the topic counts ${finding.messagesCount} messages)` : ""}`,
      });
    }
  }
  entries.push(...partitionEffects);
  return entries.sort((a, b) => Number(b.destructive) - Number(a.destructive));
}

/** docs/node.md N8: what the next boot does to one partition dir, in the forecast's order (`forecast` sorts destructive first). */
function partitionForecast(partition: NodePartitionReport, proven: PartitionProof | undefined): BootForecastEntry[] {
  const entries: BootForecastEntry[] = [];
  if (partition.superblock?.findings.some((finding) => finding.code === "PartitionSuperblockUnreadable")) {
    entries.push({
      effect: "tombstone-partition",
      path: partition.path,
      destructive: false,
      detail: "the partition superblock does not verify: boot serves the node without this partition (its files stay)",
    });
    return entries;
  }
  if (partition.head.quarantined && proven?.refusal) {
    entries.push({
      effect: "quarantine-partition",
      path: partition.path,
      destructive: true,
      detail: `${proven.refusal.code}: the server moves every segment into a sibling <partition>.fenced.<n>/ dir and rebuilds the partition empty; the data goes offline`,
    });
  }
  for (const finding of partition.purgeGeneration?.findings ?? []) {
    if (finding.code === "PurgeGenerationLost" || finding.code === "PurgePending") {
      const holds = proven?.segments.some((s) => s.messagesSize > 0) ?? false;
      entries.push({
        effect: "re-purge-partition",
        path: partition.path,
        destructive: holds || partition.offsets.length > 0,
        detail: `${finding.code}: purge.gen reads generation ${finding.generation ?? 0} < the snapshot's ${finding.expectedGeneration}: the server purges the partition, wiping every segment and offset file`,
      });
    } else if (finding.code === "PurgeGenerationReadFailure") {
      entries.push({
        effect: "refuse-boot",
        path: finding.path,
        destructive: false,
        detail: `${finding.code}: a real read error on purge.gen fails the boot`,
      });
    }
  }
  for (const finding of partition.findings) {
    if (finding.code === "OffsetsDirUnreadable")
      entries.push({
        effect: "refuse-boot",
        path: finding.path,
        destructive: false,
        detail: `${finding.code}: the server fails the boot on an offsets directory it cannot list`,
      });
  }
  for (const offset of partition.offsets) {
    for (const finding of offset.findings) {
      if (finding.code === "OffsetCorrupt") {
        entries.push({
          effect: "unlink-offset-file",
          path: offset.path,
          destructive: true,
          detail: `${offset.kind} ${offset.id}: the checksum fails, so the server deletes the file and the consumer restarts from offset 0`,
        });
      } else if (finding.code === "OffsetAheadOfHead" || finding.code === "OffsetOnEmptyPartition") {
        entries.push({
          effect: "clamp-offset",
          path: offset.path,
          destructive: false,
          detail: `${offset.kind} ${offset.id}: stored ${offset.offset} is clamped in memory to ${offset.head ?? 0}; the file keeps ${offset.offset}${offset.head === null ? " and the consumer skips the first new message" : `, and a later restart can skip the re-minted ${offset.head + 1n}..${offset.offset}`}`,
        });
      }
    }
  }
  if (proven !== undefined && proven.sweep.length > 0) {
    entries.push({
      effect: "sweep-scratch",
      path: partition.path,
      destructive: false,
      detail: `the server unlinks ${proven.sweep.length} scratch file${proven.sweep.length === 1 ? "" : "s"} (${proven.sweep.map((s) => s.kind).join(", ")}): never a durable source`,
    });
  }
  return entries;
}
