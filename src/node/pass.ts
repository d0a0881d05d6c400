/**
 * The node section's pass over partition dirs (docs/node.md N3–N6, N8): each
 * `streams/<s>/topics/<t>/partitions/<p>/` gets its entry — superblock (N3),
 * offsets (N4), `purge.gen` (N5), fenced siblings (N6) — from its segments'
 * proof, then the cross-check against the snapshot (N6), the boot forecast
 * (N8) and the verdict (N9).
 *
 * The pass walks nothing itself: discovery's walk (src/recovery/targets.ts)
 * hands it the node's layout (`layout`) ahead of the partitions' proofs
 * (`add`), both in discovery's order, so a streamed scan need not keep them
 * (docs/benchmarks.md); a partitions dir is finished (its partition dirs that
 * no scan target covered) as soon as the proofs have moved past it.
 * Read-only: nothing here writes.
 */
import { basename, dirname, join, sep } from "node:path";
import { assert } from "../assert.js";
import type { Engine } from "../engine/types.js";
import { abortError, describeCause } from "../io/errors.js";
import { type ScanFs, withListing } from "../io/fs.js";
import type { ScanOptions } from "../recovery/options.js";
import type { PartitionReport } from "../domain/scan.js";
import { type NodeLayoutFact, OWN_DIRECTORY_PATTERN, discoverNodeLayout } from "../recovery/targets.js";
import { type PartitionProof, parseU32Name, partitionHead, scanOffsets, scanPurgeGeneration } from "./partition-dir.js";
import { isNotFound } from "./files.js";
import { scanSuperblock } from "./superblock.js";
import { childPath } from "../io/paths.js";
import {
  type BootForecastEntry,
  type NodeFinding,
  type NodePartitionReport,
  type NodeReport,
  type Severity,
  nodeFindings,
  partitionDirFindings,
  worstSeverity,
} from "../domain/node.js";

export const STREAMS_DIR = "streams";
/** Findings `finishNode` adds to the metadata findings (recomputed on every call). */
const CROSS_CHECK_CODES = new Set(["OrphanPartitionDir", "MissingPartitionDir", "CrossCheckInconclusive", "StreamsDirUnreadable"]);
/** docs/node.md N6: WAL operations after the snapshot that create, delete or purge streams, topics, partitions or groups. */
const METADATA_SHAPE_OPERATIONS = new Set([128, 130, 131, 64, 134, 135, 65, 137, 68, 139, 140]);
/** CreateStream: it can only add a stream the snapshot does not hold. */
const CREATE_STREAM_OPERATION = 128;
const FENCED_DIR = /^(.+)\.fenced\.(\d+)$/;
/** A name shaped like a fenced dir whatever its suffix: those FENCED_DIR refuses are neither fenced dirs nor partitions. */
const FENCED_LIKE_DIR = /^(.+)\.fenced\.(.*)$/;

/** Where the pass's partition-dir entries go: kept in `report.partitions` (in dir order), or handed to the caller per partition. */
export type NodeEntries = "keep" | "per-partition";

export interface NodePassOptions {
  scanFs: ScanFs;
  engine: Engine;
  /**
   * "keep": every entry in `report.partitions`, in dir order. "per-partition":
   * `add` returns a scanned partition's entry and only the dirs no scan
   * target covered go to `report.partitions` (`scan --ndjson` prints each
   * entry on its partition's line, so none is kept).
   */
  entries: NodeEntries;
  /** Scans a `.fenced.<n>` dir's segments read-only (`--include-fenced`, docs/node.md N6). */
  scanFenced?: ((dir: string) => Promise<PartitionReport | null>) | undefined;
}

/** A `streams/<s>/topics/<t>/partitions` dir as discovery listed it, and the entries made so far (by name; null once handed out). */
interface PartitionsDir {
  path: string;
  stream: string;
  topic: string;
  /** Its partition dirs, by name, sorted. */
  names: string[];
  nameSet: ReadonlySet<string>;
  fenced: string[];
  /** `<p>.fenced.<suffix>` dirs whose suffix is not a decimal number (docs/node.md N6). */
  fencedLike: string[];
  made: Map<string, NodePartitionReport | null>;
}

/** A partitions dir from the names of the directories discovery listed in it. */
function partitionsDir(path: string, below: readonly string[], dirs: readonly string[]): PartitionsDir {
  const [stream, topic] = [below[1], below[3]];
  assert(stream !== undefined && topic !== undefined, `${path} lies at streams/<s>/topics/<t>/partitions`);
  const named = (pattern: RegExp): string[] => dirs.filter((name) => pattern.test(name)).sort();
  const names = dirs.filter((name) => !OWN_DIRECTORY_PATTERN.test(name)).sort();
  const fencedLike = named(FENCED_LIKE_DIR).filter((name) => !FENCED_DIR.test(name));
  return { path, stream, topic, names, nameSet: new Set(names), fenced: named(FENCED_DIR), fencedLike, made: new Map() };
}

export class NodePartitionPass {
  /** The partitions dirs discovery listed that no proof has reached yet, in discovery's (path) order. */
  private readonly pending: PartitionsDir[] = [];
  /** The partitions dir the proofs are in. */
  private open: PartitionsDir | null = null;
  private readonly contents: NonNullable<NodeReport["metadata"]["snapshot"]>["contents"] | null;
  /** Partition dirs seen, for the snapshot's missing dirs (N6): kept only when a snapshot decoded. */
  private readonly seen: Set<string> | null;
  private readonly orphans: { path: string; stream: string }[] = [];
  /** Dirs of the streams/ tree that exist but could not be listed, or are links not followed: what lies under them is unknown, never missing. */
  private readonly unlisted: string[] = [];
  private readonly partitionEffects: BootForecastEntry[] = [];
  private readonly severities = new Set<Severity>();

  constructor(
    private readonly report: NodeReport,
    private readonly options: NodePassOptions,
  ) {
    report.crossCheck = { orphanDirs: [], missingDirs: [], inconclusiveStreams: [] };
    report.metadata.findings = report.metadata.findings.filter((f) => !CROSS_CHECK_CODES.has(f.code));
    report.partitions = [];
    this.contents = report.metadata.snapshot?.contents ?? null;
    this.seen = this.contents === null ? null : new Set();
  }

  /**
   * One fact of the node's layout as discovery walked it
   * (src/recovery/targets.ts `NodeLayoutFact`), in path order and before the
   * proofs under it: discovery's walk is the node pass's only walk of streams/.
   */
  layout(fact: NodeLayoutFact): void {
    const path = join(this.report.path, ...fact.below);
    if (fact.kind === "partitions") this.pending.push(partitionsDir(path, fact.below, fact.dirs));
    else if (fact.kind === "link") this.unlisted.push(path);
    // Absent: nothing under it. Any other failure is no evidence of absence (docs/recovery.md §3.6).
    else if (!isNotFound(fact.cause)) {
      this.unlisted.push(path);
      this.report.metadata.findings.push({
        severity: "failed",
        code: "StreamsDirUnreadable",
        path,
        message: `cannot list ${path} (${describeCause(fact.cause)}): the partition dirs under it are unknown, so none of them is judged missing or orphaned; nothing was changed`,
      });
    }
  }

  /**
   * One scanned partition's proof, in path order. Its entry when it is a
   * partition dir of the node's layout and the pass hands entries out per
   * partition; otherwise null (kept, or not a partition dir of the layout).
   */
  async add(proof: PartitionProof, directoryNames?: ReadonlySet<string>): Promise<NodePartitionReport | null> {
    this.severities.add(proof.verdict as Severity);
    const open = await this.enter(dirname(proof.path));
    const name = basename(proof.path);
    if (open === null || !open.nameSet.has(name) || open.made.has(name)) return null;
    const entry = await this.makeEntry(open, name, proof, directoryNames);
    open.made.set(name, this.options.entries === "keep" ? entry : null);
    return this.options.entries === "keep" ? null : entry;
  }

  /** Every partition dir left, then the cross-check, the forecast and the verdict. */
  async finish(): Promise<NodeReport> {
    if (this.open !== null) await this.close(this.open);
    this.open = null;
    for (const dir of this.pending.splice(0)) await this.close(dir);
    crossCheck(this.report, this.contents, this.seen, this.orphans, this.unlisted);
    this.report.bootForecast = forecast(this.report, this.partitionEffects);
    this.report.verdict = worstSeverity([...nodeFindings(this.report).map((finding) => finding.severity), ...this.severities]);
    return this.report;
  }

  /** Makes `parent` the open dir when it is one of the layout's partitions dirs, finishing every dir discovery listed before it; null when it is none. */
  private async enter(parent: string): Promise<PartitionsDir | null> {
    if (this.open?.path === parent) return this.open;
    const at = this.pending.findIndex((dir) => dir.path === parent);
    if (at < 0) return null;
    if (this.open !== null) await this.close(this.open);
    const passed = this.pending.splice(0, at + 1);
    this.open = passed.pop() ?? null;
    for (const dir of passed) await this.close(dir);
    return this.open;
  }

  /** The dir's partition dirs no proof covered get their entries; kept entries go to the report in dir order. */
  private async close(open: PartitionsDir): Promise<void> {
    for (const name of open.names) {
      if (open.made.has(name)) {
        const kept = open.made.get(name);
        if (kept) this.report.partitions.push(kept);
        continue;
      }
      this.report.partitions.push(await this.makeEntry(open, name, undefined));
    }
  }

  private async makeEntry(
    open: PartitionsDir,
    partition: string,
    proven: PartitionProof | undefined,
    /** The names the partition's load listed in its dir, when it did. */
    directoryNames?: ReadonlySet<string>,
  ): Promise<NodePartitionReport> {
    const { scanFs, engine } = this.options;
    const contents = this.contents;
    // The proof's own string when there is one: on a node of many partitions a second copy of every path adds up.
    const path = proven?.path ?? childPath(open.path, partition);
    this.seen?.add(path);
    const partitionFs = directoryNames === undefined ? await listedPartitionFs(scanFs, path) : withListing(scanFs, path, directoryNames);
    const superblock = await scanSuperblock(path, partitionFs, engine, "partition");
    const frontier = superblock.state === "present" ? (superblock.vsr?.offsetFrontier ?? 0n) : 0n;
    const head = partitionHead(proven, frontier);
    const findings = proven === undefined ? [] : frontierFindings(path, frontier, head);
    const ids = [open.stream, open.topic, partition].map(parseU32Name);
    const topicEntry = contents?.streams.find((s) => s.id === ids[0])?.topics.find((t) => t.id === ids[1]) ?? null;
    const expected = topicEntry?.partitions.find((p) => p.id === ids[2]) ?? null;
    if (contents !== null && expected === null) this.orphans.push({ path, stream: open.stream });
    const holdsMessages = proven?.segments.some((s) => s.messagesSize > 0) ?? false;
    const purgeGeneration = await scanPurgeGeneration(partitionFs, path, expected, contents !== null, holdsMessages);
    const offsets = await scanOffsets(
      {
        scanFs: partitionFs,
        engine,
        partitionDir: path,
        head,
        consumerGroupIds: topicEntry?.consumerGroupIds ?? null,
        plannedCut: proven?.action === "repair" && proven.segments.some((s) => s.outcome === "torn-tail" && s.walkedSize < s.messagesSize),
      },
      findings,
    );
    const fenced = open.fenced.filter((name) => FENCED_DIR.exec(name)?.[1] === partition).map((name) => join(open.path, name));
    findings.push(...fencedFindings(open, partition, path, fenced));
    const entry: NodePartitionReport = {
      path,
      superblock: superblock.state === "empty" && superblock.findings.length === 0 ? null : superblock,
      head,
      purgeGeneration,
      offsets,
      fenced,
      findings,
    };
    if (this.options.scanFenced !== undefined) await scanFencedDirs(entry, this.options.scanFenced);
    this.partitionEffects.push(...partitionForecast(entry, proven, holdsMessages));
    for (const finding of partitionDirFindings(entry)) this.severities.add(finding.severity);
    return entry;
  }
}

/** docs/node.md N3: a partition superblock's offset_frontier past the last offset its proven segments hold. */
function frontierFindings(path: string, frontier: bigint, head: NodePartitionReport["head"]): NodeFinding[] {
  if (frontier <= 0n || !head.known || (head.lastProvenOffset !== null && frontier - 1n <= head.lastProvenOffset)) return [];
  return [
    {
      severity: "info",
      code: "OffsetFrontierAhead",
      path,
      message: `the partition superblock's offset_frontier is ${frontier} but the segments prove offsets only up to ${head.lastProvenOffset ?? "none"}: the server resumes at ${frontier}, and offsets below it are never re-minted`,
      offsetFrontier: frontier,
      lastProvenOffset: head.lastProvenOffset,
    },
  ];
}

/** docs/node.md N6: the partition's fenced dirs (quarantine evidence), and the dirs only named like one. */
function fencedFindings(open: PartitionsDir, partition: string, path: string, fenced: readonly string[]): NodeFinding[] {
  const findings: NodeFinding[] = fenced.map((dir) => ({
    severity: "info",
    code: "FencedDir",
    path: dir,
    message: `${dir} holds segments the server quarantined (fenced) from ${path}: evidence, never read by the server and never merged back; left alone`,
  }));
  for (const name of open.fencedLike.filter((name) => FENCED_LIKE_DIR.exec(name)?.[1] === partition)) {
    const dir = join(open.path, name);
    findings.push({
      severity: "warn",
      code: "FencedDirNameInvalid",
      path: dir,
      message: `${dir} is named like a quarantine dir of ${path}, but its suffix is not a decimal number (<partition>.fenced.<n>): it is neither a fenced dir nor a partition, and the server never reads it; not scanned, left alone`,
    });
  }
  return findings;
}

/**
 * Partition dirs' superblocks (docs/node.md N3), the forecast and the verdict,
 * given every scanned partition's proof (sorted into path order here), with
 * every entry kept in `report.partitions`; the layout is what a discovery of
 * the node root sees of it.
 */
export async function finishNode(
  report: NodeReport,
  options: ScanOptions,
  scanFs: ScanFs,
  engine: Engine,
  partitionReports: readonly PartitionProof[],
  /** Scans a `.fenced.<n>` dir's segments read-only (`--include-fenced`, docs/node.md N6). */
  scanFenced?: (dir: string) => Promise<PartitionReport | null>,
): Promise<NodeReport> {
  if (options.signal?.aborted) throw abortError(options.signal);
  const pass = new NodePartitionPass(report, { scanFs, engine, entries: "keep", scanFenced });
  for (const fact of await discoverNodeLayout(report.path, scanFs, options.signal)) pass.layout(fact);
  const inPathOrder = [...partitionReports].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const proof of inPathOrder) await pass.add(proof);
  return pass.finish();
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
  seen: ReadonlySet<string> | null,
  orphans: readonly { path: string; stream: string }[],
  /** Dirs that could not be listed: the partition dirs under them are unknown (StreamsDirUnreadable), never missing. */
  unlisted: readonly string[],
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
        if (seen?.has(path) || unlisted.some((dir) => path.startsWith(dir + sep)) || isInconclusive(`${stream.id}`)) continue;
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

/** docs/node.md N8: what the next boot does with the bytes as they are; destructive effects first. */
function forecast(report: NodeReport, partitionEffects: readonly BootForecastEntry[]): BootForecastEntry[] {
  const entries = report.bootForecast.filter(
    (entry) =>
      entry.effect === "truncate-wal-tail" ||
      entry.effect === "truncate-wal-from-op" ||
      entry.effect === "run-without-committed-ops" ||
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
function partitionForecast(
  partition: NodePartitionReport,
  proven: PartitionProof | undefined,
  holdsMessages: boolean,
): BootForecastEntry[] {
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
  entries.push(...purgeForecast(partition, holdsMessages), ...offsetsForecast(partition));
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

/** docs/node.md N8: what the next boot does on the partition's `purge.gen`. */
function purgeForecast(partition: NodePartitionReport, holdsMessages: boolean): BootForecastEntry[] {
  const entries: BootForecastEntry[] = [];
  for (const finding of partition.purgeGeneration?.findings ?? []) {
    if (finding.code === "PurgeGenerationLost" || finding.code === "PurgePending") {
      entries.push({
        effect: "re-purge-partition",
        path: partition.path,
        destructive: holdsMessages || partition.offsets.length > 0,
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
  return entries;
}

/** docs/node.md N8: what the next boot does on the partition's offsets dirs and files. */
function offsetsForecast(partition: NodePartitionReport): BootForecastEntry[] {
  const entries: BootForecastEntry[] = [];
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
  return entries;
}
