/**
 * A partition load (docs/recovery.md §4): list once, recover every segment with one shared
 * probe budget, check contiguity, and classify. Read failures stop the
 * partition as `failed` (docs/recovery.md §3.6); refusals never stop the other segments.
 */
import { basename, dirname, join } from "node:path";
import { INDEX_SUFFIX, LOG_SUFFIX, SEGMENT_NAME_DIGITS, STAGING_SUFFIX, U64_MAX } from "../format/constants.js";
import type { Engine, EngineWindow } from "../engine/types.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import {
  type BlockingFile,
  type DirectoryEntry,
  NotRegularFileError,
  type ReadableFile,
  type ScanFs,
  blockingOpenOf,
  retryableOpenOf,
  withOpenFiles,
} from "../io/fs.js";
import { partitionNext } from "../policy/next-step.js";
import { decideAction } from "../policy/policy.js";
import {
  type IgnoredEntry,
  type PartitionReport,
  type PartitionVerdict,
  type Refusal,
  type ScanError,
  type SegmentReport,
  type SweepCandidate,
  damagedEnd,
} from "../domain/scan.js";
import type { ResolvedScanOptions } from "./options.js";
import type { ProbeBudget } from "./probe.js";
import { type DamagedEnd, refuse } from "./refusals.js";
import { partitionScope } from "./scope.js";
import { settleSealedTails } from "./sealed-tail.js";
import { type SegmentContext, type SegmentFiles, recoverSegment, recoverSegmentPreloaded, recoverSegmentResident } from "./segment.js";
import { childPath } from "../io/paths.js";
import { directoryLinkEntry } from "./targets.js";
import { partitionFindings } from "./salvage-record.js";

const SEGMENT_STEM_PATTERN = new RegExp(`^[0-9]{${SEGMENT_NAME_DIGITS}}$`);

/** The start offset a segment file's stem names, or null unless it is exactly Iggy's 20-digit form of a u64. */
export function parseSegmentStem(stem: string): bigint | null {
  if (!SEGMENT_STEM_PATTERN.test(stem)) return null;
  const value = BigInt(stem);
  return value <= U64_MAX ? value : null;
}

interface Listing {
  names?: ReadonlySet<string>;
  segments: SegmentFiles[];
  sweep: SweepCandidate[];
  ignored: IgnoredEntry[];
}

function badNameEntry(path: string): IgnoredEntry {
  return {
    path,
    kind: "bad-segment-name",
    message: `${basename(path)} is not named like a segment (its start offset as exactly ${SEGMENT_NAME_DIGITS} decimal digits, e.g. 00000000000000000000.log), so it was not read; never touched`,
  };
}

/** Size of a listed segment file; anything but a regular file fails the partition before any open. */
async function statRegular(scanFs: ScanFs, path: string): Promise<number> {
  let info;
  try {
    info = await scanFs.stat(path);
  } catch (cause) {
    throw new ScanFailure("OpenFailure", path, `cannot stat ${path} after listing it: ${describeCause(cause)}; nothing was changed`, {
      cause,
    });
  }
  if (!info.isFile) throw notRegular(path);
  return info.size;
}

/**
 * A partition of at most this many segments has its files opened while it is
 * listed: the `fstat` that checks each is a regular file also gives its size,
 * which saves a `stat` per file (docs/benchmarks.md: two of the dozen calls a small
 * partition costs, each a threadpool round trip with async io). The files stay
 * open until their segment is recovered, so a load holds at most twice this
 * many descriptors; a larger partition stats its files and opens each in turn.
 */
const PREOPEN_MAX_SEGMENTS = 4;

/** Opens a listed segment file for its recovery; anything but a regular file fails the partition before any read. */
async function openListed(scanFs: ScanFs, path: string): Promise<ReadableFile> {
  try {
    return await scanFs.open(path);
  } catch (cause) {
    // A file that is no regular file (NotRegularFileError) becomes NotRegularFile in loadPartition.
    throw new ScanFailure("OpenFailure", path, `cannot open ${path}: ${describeCause(cause)}; nothing was changed`, {
      cause,
    });
  }
}

/** A listed file's size: from opening it when `opened` is given (the handle is kept there), else from a stat. */
async function listedSize(scanFs: ScanFs, path: string, opened: Map<string, ReadableFile> | null): Promise<number> {
  if (opened === null) return statRegular(scanFs, path);
  const file = await openListed(scanFs, path);
  if (file.size === undefined) {
    await file.close();
    return statRegular(scanFs, path);
  }
  opened.set(path, file);
  return file.size;
}

/** docs/interfaces.md §9.2: one `.log` scanned alone, its `.index` beside it, its start offset from its name. */
async function listSingleLog(scanFs: ScanFs, logPath: string): Promise<Listing> {
  const stem = basename(logPath).slice(0, -LOG_SUFFIX.length);
  const startOffset = parseSegmentStem(stem);
  if (startOffset === null) return { segments: [], sweep: [], ignored: [badNameEntry(logPath)] };
  const indexPath = join(dirname(logPath), stem + INDEX_SUFFIX);
  const logSize = await statRegular(scanFs, logPath);
  let indexSize = 0;
  let indexInfo;
  try {
    indexInfo = await scanFs.stat(indexPath);
  } catch (cause) {
    // Only absence means "no index"; any other failure is not evidence (docs/recovery.md §3.6).
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new ScanFailure("OpenFailure", indexPath, `cannot stat ${indexPath}: ${describeCause(cause)}; nothing was changed`, { cause });
    }
  }
  if (indexInfo !== undefined) {
    if (!indexInfo.isFile) throw notRegular(indexPath);
    indexSize = indexInfo.size;
  }
  return { segments: [{ startOffset, logPath, indexPath, logSize, indexSize }], sweep: [], ignored: [] };
}

/** A `.log` named like a segment, as a directory listing shows it, and the `.index` that pairs with it. */
export interface ListedSegment {
  startOffset: bigint;
  logPath: string;
  indexPath: string;
  /** The `.log` lists as a regular file; anything else (a FIFO, socket or device) is never opened and fails its partition (NotRegularFile). */
  regular: boolean;
  /** The listing holds the `.index`'s name (whatever its kind: a directory so named is no "missing index"). */
  indexListed: boolean;
}

/** What a partition directory's listing holds (docs/recovery.md §4 step 1), before any file is opened. */
export interface PartitionListing {
  names: ReadonlySet<string>;
  /** In offset order. */
  segments: ListedSegment[];
  sweep: SweepCandidate[];
  /** In path order. */
  ignored: IgnoredEntry[];
}

/**
 * The one segment lister, for scan and scrub (docs/recovery.md §4 step 1): a
 * partition directory's entries sorted into segments by `.log` stem, sweep
 * candidates, and the entries that are not ours. Pure: nothing is stat'ed or
 * opened here.
 */
export function listSegments(directory: string, entries: readonly DirectoryEntry[]): PartitionListing {
  // One pass, no intermediate arrays: a scan lists thousands of partitions of a few entries each (docs/benchmarks.md "Breakdown").
  const names = new Set<string>();
  const listing: PartitionListing = { names, segments: [], sweep: [], ignored: [] };
  // Every non-directory name counts for pairing, so a `.log` that is not a
  // regular file never turns its live `.index` into a sweepable orphan.
  const files = new Map<string, DirectoryEntry>();
  for (const entry of entries) {
    names.add(entry.name);
    if (!entry.isDirectory) files.set(entry.name, entry);
    else if (entry.isSymbolicLink) listing.ignored.push(directoryLinkEntry(join(directory, entry.name)));
  }
  for (const name of Array.from(files.keys()).sort()) {
    const path = childPath(directory, name);
    const regular = files.get(name)!.isFile;
    if (name.endsWith(STAGING_SUFFIX) || (name.endsWith(INDEX_SUFFIX) && !files.has(name.slice(0, -INDEX_SUFFIX.length) + LOG_SUFFIX))) {
      if (!regular) {
        // Repair would move it aside; a FIFO or device is no scratch file of Iggy's.
        listing.ignored.push({
          path,
          kind: "not-regular-file",
          message: `${name} is not a regular file (a FIFO, socket or device), so it is neither read nor swept; never touched`,
        });
      } else {
        listing.sweep.push({ path, kind: name.endsWith(STAGING_SUFFIX) ? "staging" : "orphan-index" });
      }
    } else if (name.endsWith(LOG_SUFFIX)) {
      const stem = name.slice(0, -LOG_SUFFIX.length);
      const startOffset = parseSegmentStem(stem);
      if (startOffset === null) {
        listing.ignored.push(badNameEntry(path));
        continue;
      }
      const indexPath = childPath(directory, stem + INDEX_SUFFIX);
      listing.segments.push({ startOffset, logPath: path, indexPath, regular, indexListed: names.has(stem + INDEX_SUFFIX) });
    }
  }
  if (listing.segments.length > 1)
    listing.segments.sort((a, b) => (a.startOffset < b.startOffset ? -1 : a.startOffset > b.startOffset ? 1 : 0));
  if (listing.ignored.length > 1) listing.ignored.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return listing;
}

/** The failure of a listed segment file that is no regular file (docs/recovery.md §3.6). */
export function notRegular(path: string): ScanFailure {
  return new ScanFailure(
    "NotRegularFile",
    path,
    `${path} is not a regular file (a directory, FIFO, socket or device), so it was not opened and the partition cannot be judged; nothing was changed`,
  );
}

/** A partition directory's entries (discovery's listing, when given), or a ListFailure naming it and the cause. */
export async function listPartitionDirectory(
  scanFs: ScanFs,
  directory: string,
  listed?: readonly DirectoryEntry[],
): Promise<readonly DirectoryEntry[]> {
  try {
    return listed ?? (await scanFs.list(directory));
  } catch (cause) {
    throw new ScanFailure(
      "ListFailure",
      directory,
      `cannot list the directory ${directory}: ${describeCause(cause)}; nothing was changed`,
      {
        cause,
      },
    );
  }
}

/** docs/recovery.md §4 step 1: one listing (discovery's, when given), then each segment's files sized; a segment file that is no regular file fails the partition. */
async function listPartition(
  scanFs: ScanFs,
  directory: string,
  listed: readonly DirectoryEntry[] | undefined,
  opened: Map<string, ReadableFile>,
): Promise<Listing> {
  const entries = await listPartitionDirectory(scanFs, directory, listed);
  const { names, segments, sweep, ignored } = listSegments(directory, entries);
  const segmentFiles = entries.filter((entry) => entry.name.endsWith(LOG_SUFFIX) || entry.name.endsWith(INDEX_SUFFIX));
  // Opened while listing only when every segment file lists as a regular file:
  // a FIFO or device among them fails the partition before anything is opened (docs/recovery.md §3.6).
  const preopen = segmentFiles.length <= 2 * PREOPEN_MAX_SEGMENTS && segmentFiles.every((entry) => entry.isFile) ? opened : null;
  const listing: Listing = { names, segments: [], sweep, ignored };
  for (const { startOffset, logPath, indexPath, indexListed } of segments) {
    listing.segments.push({
      startOffset,
      logPath,
      indexPath,
      logSize: await listedSize(scanFs, logPath, preopen),
      // A directory named like the index is no "missing index": it fails the partition like a FIFO would.
      indexSize: indexListed ? await listedSize(scanFs, indexPath, preopen) : 0,
    });
  }
  return listing;
}

/** A directory or `.log` with no segment is not a clean partition (docs/recovery.md §4). */
function noSegments(path: string, ignored: readonly IgnoredEntry[]): ScanFailure {
  const names = ignored.filter((entry) => entry.kind === "bad-segment-name").map((entry) => basename(entry.path));
  const why =
    names.length === 0
      ? "it holds no segment file"
      : `its .log file${names.length === 1 ? "" : "s"} ${names.join(", ")} ${names.length === 1 ? "is" : "are"} not named like a segment ` +
        `(the start offset as exactly ${SEGMENT_NAME_DIGITS} decimal digits), so ${names.length === 1 ? "it was" : "they were"} ignored`;
  return new ScanFailure("NoSegments", path, `${path} holds no segment: ${why}; nothing was read as a segment and nothing was changed`);
}

/**
 * The damaged range a segment ends in, for a contiguity refusal's words
 * (docs/recovery.md §4 step 3): its bytes are there, not missing. What they
 * prove is the range's own evidence, or (once `settleSealedTails` made it
 * `unreadable`) the residue's at the same byte.
 */
function damagedEndOf(segment: SegmentReport): DamagedEnd | null {
  const range = damagedEnd(segment);
  if (range === null) return null;
  const residue = segment.residue;
  const evidence = range.tornEvidence ?? (residue !== null && residue.damagePosition === range.startPosition ? residue.tornEvidence : null);
  return { startPosition: range.startPosition, endPosition: range.endPosition, evidence };
}

/** docs/recovery.md §4 step 3: the first failing adjacent pair, if any. */
export function checkContiguity(segments: readonly SegmentReport[]): Refusal | null {
  for (let i = 1; i < segments.length; i++) {
    const previous = segments[i - 1]!;
    const next = segments[i]!;
    const files = { previous: basename(previous.logPath), next: basename(next.logPath) };
    if (previous.walkedSize === 0) {
      return refuse.emptyNonTailSegment({ emptyStart: previous.startOffset, nextStart: next.startOffset }, files, damagedEndOf(previous));
    }
    // A non-empty recovered segment always has an end bound.
    const previousEnd = previous.endOffset!;
    const fields = { previousStart: previous.startOffset, previousEnd, nextStart: next.startOffset };
    if (next.startOffset > previousEnd + 1n) return refuse.hole(fields, files, damagedEndOf(previous));
    if (next.startOffset <= previousEnd) return refuse.overlap(fields, files);
  }
  return null;
}

function classify(report: PartitionReport): PartitionVerdict {
  if (report.error) return "failed";
  if (report.refusal) return "refused";
  const needsWork =
    report.sweep.length > 0 ||
    report.segments.some(
      (segment) =>
        segment.outcome === "torn-tail" || segment.outcome === "empty" || segment.index.rebuilt || segment.index.trailingBytes > 0,
    );
  return needsWork ? "repairable" : "clean";
}

export interface LoadContext {
  engine: Engine;
  scanFs: ScanFs;
  options: Pick<ResolvedScanOptions, "used" | "signal" | "onProgress">;
  /**
   * A window of `used.windowBytes` (and `used.maxBatchBytes`) to scan in,
   * borrowed: the load does not close it, so a scan of many partitions opens
   * one window per partition in flight instead of one per partition. Without
   * it the load opens (and closes) its own.
   */
  engineWindow?: EngineWindow;
}

/**
 * A partition's report and every name its load found in its directory (when
 * it listed one): the node pass (src/node/pass.ts) answers the dir's absent
 * optional files from them instead of listing the dir again (docs/benchmarks.md).
 */
export interface ListedPartition {
  report: PartitionReport;
  directoryNames: ReadonlySet<string> | undefined;
}

/**
 * Loads a partition directory, or (when `singleLog` is set) one `.log` as a
 * partition of one segment. `entries` is the directory's listing when the
 * caller already read it (discovery does); otherwise the load lists it.
 */
export async function loadPartition(
  path: string,
  context: LoadContext,
  singleLog = false,
  entries?: readonly DirectoryEntry[],
  preserveDirListed?: boolean,
): Promise<PartitionReport> {
  return (await loadListedPartition(path, context, singleLog, entries, preserveDirListed)).report;
}

/**
 * `loadPartition`, with the names the load listed in the directory.
 * `preserveDirListed` is what discovery saw beside the directory (ScanTarget):
 * false spares the look for a salvage record (docs/repair.md §6.6).
 */
export async function loadListedPartition(
  path: string,
  context: LoadContext,
  singleLog = false,
  entries?: readonly DirectoryEntry[],
  preserveDirListed?: boolean,
): Promise<ListedPartition> {
  if (singleLog) return loadListedPartitionAsync(path, context, singleLog, entries, preserveDirListed);
  return (
    loadPartitionResident(path, context, entries, preserveDirListed) ??
    (await loadPartitionPreloaded(path, context, entries, preserveDirListed)) ??
    loadListedPartitionAsync(path, context, singleLog, entries, preserveDirListed)
  );
}

/** `loadListedPartition` through the layer's promise calls, whatever the partition holds. */
export async function loadListedPartitionAsync(
  path: string,
  context: LoadContext,
  singleLog = false,
  entries?: readonly DirectoryEntry[],
  preserveDirListed?: boolean,
): Promise<ListedPartition> {
  const { used } = context.options;
  let directoryNames: ReadonlySet<string> | undefined;
  const budget: ProbeBudget = { limitUnits: used.probeBudgetUnits, spentUnits: 0 };
  const report = blankPartitionReport(path, singleLog, budget);
  const engineWindow = context.engineWindow ?? openScanWindow(context.engine, used);
  // Files opened while listing, each handed to the first open of its path (withOpenFiles); the rest closed below.
  const opened = new Map<string, ReadableFile>();
  const scanFs = withOpenFiles(context.scanFs, opened);
  let bytesTotal = 0;
  const onRead = (bytesRead: number): void => {
    report.bytesScanned += bytesRead;
    context.options.onProgress?.({ path, bytesDone: Math.min(report.bytesScanned, bytesTotal), bytesTotal });
  };
  try {
    const listing = singleLog ? await listSingleLog(context.scanFs, path) : await listPartition(context.scanFs, path, entries, opened);
    directoryNames = listing.names;
    report.sweep = listing.sweep;
    report.ignored = listing.ignored;
    if (listing.segments.length === 0) throw noSegments(path, listing.ignored);
    bytesTotal = listing.segments.reduce((sum, segment) => sum + segment.logSize, 0);
    for (const files of listing.segments) {
      report.segments.push(
        await recoverSegment(files, {
          scanFs,
          engineWindow,
          budget,
          verify: used.verify,
          signal: context.options.signal,
          onRead,
        }),
      );
    }
    settleSegments(report, singleLog);
  } catch (error) {
    const cause = error instanceof ScanFailure ? error.cause : error;
    if (cause instanceof NotRegularFileError) {
      // The file changed kind after the listing; the open refused it without blocking.
      report.error = notRegular(cause.path).toScanError();
    } else {
      if (!(error instanceof ScanFailure)) throw error;
      report.error = error.toScanError();
    }
  } finally {
    if (engineWindow !== context.engineWindow) engineWindow.close();
    for (const file of opened.values()) await file.close().catch(() => undefined);
  }
  report.budget.spentUnits = budget.spentUnits;
  // docs/repair.md §6.6: what a salvage recorded as lost stays said after the bytes scan clean. A lone `.log`'s record is its directory's.
  report.findings = await partitionFindings(context.scanFs, singleLog ? dirname(path) : path, path, preserveDirListed);
  judgePartition(report, used);
  context.options.onProgress?.({ path, bytesDone: bytesTotal, bytesTotal });
  return { report, directoryNames };
}

/** A partition's report before anything is read. */
function blankPartitionReport(path: string, singleLog: boolean, budget: ProbeBudget): PartitionReport {
  return {
    path,
    verdict: "clean",
    action: "serve",
    refusal: null,
    error: null,
    budget: { limitUnits: budget.limitUnits, spentUnits: 0 },
    sweep: [],
    segments: [],
    ignored: [],
    bytesScanned: 0,
    singleSegment: singleLog,
    scope: [],
    nextStep: "",
    findings: [],
    nextCommand: null,
  };
}

/** docs/recovery.md §4 steps 2–3 once every segment is recovered: sealed tails, the first refusal, contiguity. */
function settleSegments(report: PartitionReport, singleLog: boolean): void {
  // The damaged end of a segment that is not the last, in words that say its bytes are there (docs/recovery.md §4 step 3).
  if (!singleLog) settleSealedTails(report.segments);
  report.refusal = report.segments.find((segment) => segment.refusal !== null)?.refusal ?? null;
  if (report.refusal === null && !singleLog) report.refusal = checkContiguity(report.segments);
}

/** The verdict, action, scope and next step of a partition whose segments and findings are in. */
function judgePartition(report: PartitionReport, used: ResolvedScanOptions["used"]): void {
  report.verdict = classify(report);
  report.action = decideAction(report.verdict, report.refusal, used.replicaCount).action;
  report.scope = partitionScope(report.segments, report.verdict === "failed");
  const next = partitionNext(report, used.replicaCount);
  report.nextStep = next.text;
  report.nextCommand = next.command;
}

/**
 * What a resident load (`loadPartitionResident`, `loadPartitionPreloaded`)
 * answers: a partition listed by discovery, with no salvage record beside it
 * (discovery saw its parent say so: docs/repair.md §6.6), of at most
 * PREOPEN_MAX_SEGMENTS segments whose files list as regular files. Null:
 * take the promise path.
 */
function residentListing(
  path: string,
  context: LoadContext,
  entries: readonly DirectoryEntry[] | undefined,
  preserveDirListed: boolean | undefined,
): PartitionListing | null {
  if (entries === undefined || preserveDirListed !== false || context.options.signal?.aborted) return null;
  const listing = listSegments(path, entries);
  if (listing.segments.length === 0 || listing.segments.length > PREOPEN_MAX_SEGMENTS) return null;
  for (const entry of entries) {
    if (!entry.isFile && (entry.name.endsWith(LOG_SUFFIX) || entry.name.endsWith(INDEX_SUFFIX))) return null;
  }
  return listing;
}

/**
 * One resident attempt at a partition. Nothing is kept from an attempt that
 * declines, and the progress it would have reported is reported only when it
 * answers, so it gives the promise path's report and progress for every
 * partition it answers (test/resident-load.test.ts).
 */
class ResidentAttempt {
  readonly report: PartitionReport;
  readonly segmentContext: SegmentContext;
  private readonly budget: ProbeBudget;
  private readonly engineWindow: EngineWindow;
  private readonly reads: number[] = [];
  private bytesTotal = 0;

  constructor(
    private readonly path: string,
    private readonly context: LoadContext,
    private readonly listing: PartitionListing,
  ) {
    const { used } = context.options;
    this.budget = { limitUnits: used.probeBudgetUnits, spentUnits: 0 };
    this.report = blankPartitionReport(path, false, this.budget);
    this.report.sweep = listing.sweep;
    this.report.ignored = listing.ignored;
    this.engineWindow = context.engineWindow ?? openScanWindow(context.engine, used);
    this.segmentContext = {
      scanFs: context.scanFs,
      engineWindow: this.engineWindow,
      budget: this.budget,
      verify: used.verify,
      signal: context.options.signal,
      onRead: (bytesRead) => {
        this.report.bytesScanned += bytesRead;
        this.reads.push(bytesRead);
      },
    };
  }

  /** A listed segment's files, sized from their opens. */
  sized({ startOffset, logPath, indexPath }: ListedSegment, logSize: number, indexSize: number): SegmentFiles {
    this.bytesTotal += logSize;
    return { startOffset, logPath, indexPath, logSize, indexSize };
  }

  /** The window back to its owner (the load's own is closed). */
  release(): void {
    if (this.engineWindow !== this.context.engineWindow) this.engineWindow.close();
  }

  /** docs/recovery.md §4 steps 2–3 and the verdict, once every segment answered; then the progress it held back. */
  finish(): ListedPartition {
    const { report, path, bytesTotal } = this;
    settleSegments(report, false);
    report.budget.spentUnits = this.budget.spentUnits;
    judgePartition(report, this.context.options.used);
    const onProgress = this.context.options.onProgress;
    if (onProgress !== undefined) {
      let bytesDone = 0;
      for (const bytesRead of this.reads) {
        bytesDone += bytesRead;
        onProgress({ path, bytesDone: Math.min(bytesDone, bytesTotal), bytesTotal });
      }
      onProgress({ path, bytesDone: bytesTotal, bytesTotal });
    }
    return { report, directoryNames: this.listing.names };
  }
}

/**
 * `loadListedPartition` without a promise (docs/benchmarks.md "Breakdown"),
 * for the partition a node holds by the thousand (`residentListing`), read
 * through a layer with blocking calls, when every segment is one
 * `recoverSegmentResident` answers. Null for anything else, and for any
 * failure (an open, a read, an abort): the caller then runs
 * `loadListedPartition`, which does it all again and reports what fails.
 */
export function loadPartitionResident(
  path: string,
  context: LoadContext,
  entries: readonly DirectoryEntry[] | undefined,
  preserveDirListed: boolean | undefined,
): ListedPartition | null {
  const openBlocking = blockingOpenOf(context.scanFs);
  const listing = openBlocking === undefined ? null : residentListing(path, context, entries, preserveDirListed);
  if (openBlocking === undefined || listing === null) return null;
  const attempt = new ResidentAttempt(path, context, listing);
  const opened: BlockingFile[] = [];
  try {
    const segments: { files: SegmentFiles; log: BlockingFile; index: BlockingFile | null }[] = [];
    for (const listed of listing.segments) {
      const log = openBlocking(listed.logPath);
      opened.push(log);
      const index = listed.indexListed ? openBlocking(listed.indexPath) : null;
      if (index !== null) opened.push(index);
      segments.push({ files: attempt.sized(listed, log.size, index?.size ?? 0), log, index });
    }
    for (const { files, log, index } of segments) {
      const segment = recoverSegmentResident(files, attempt.segmentContext, log, index);
      if (segment === null) return null;
      attempt.report.segments.push(segment);
    }
  } catch {
    return null;
  } finally {
    attempt.release();
    for (const file of opened) closeQuietly(file);
  }
  return attempt.finish();
}

/**
 * `loadPartitionResident` through a layer's promise calls (async io): each
 * file opened and read once with a promise, every segment walked with none
 * per batch (`recoverSegmentPreloaded`). Only through a layer whose calls can
 * be made twice with the same effect (`retryableOpenOf`), since a declined
 * attempt is done again by the promise path.
 */
export async function loadPartitionPreloaded(
  path: string,
  context: LoadContext,
  entries: readonly DirectoryEntry[] | undefined,
  preserveDirListed: boolean | undefined,
): Promise<ListedPartition | null> {
  const open = retryableOpenOf(context.scanFs);
  const listing = open === undefined ? null : residentListing(path, context, entries, preserveDirListed);
  if (open === undefined || listing === null) return null;
  const attempt = new ResidentAttempt(path, context, listing);
  const opened: ReadableFile[] = [];
  try {
    const segments: { files: SegmentFiles; log: ReadableFile; index: ReadableFile | null }[] = [];
    for (const listed of listing.segments) {
      const log = await open(listed.logPath);
      opened.push(log);
      const index = listed.indexListed ? await open(listed.indexPath) : null;
      if (index !== null) opened.push(index);
      if (log.size === undefined || (index !== null && index.size === undefined)) return null;
      segments.push({ files: attempt.sized(listed, log.size, index?.size ?? 0), log, index });
    }
    for (const { files, log, index } of segments) {
      const segment = await recoverSegmentPreloaded(files, attempt.segmentContext, log, index);
      if (segment === null) return null;
      attempt.report.segments.push(segment);
    }
  } catch {
    return null;
  } finally {
    attempt.release();
    for (const file of opened) await file.close().catch(() => undefined);
  }
  return attempt.finish();
}

/** Closes a file the load is done with; a failing close changes nothing it proved (the promise path ignores it too). */
function closeQuietly(file: BlockingFile): void {
  try {
    file.closeBlocking();
  } catch {
    // nothing was written through it
  }
}

/** The window a partition load scans in, as the options ask. */
export function openScanWindow(engine: Engine, used: ResolvedScanOptions["used"]): EngineWindow {
  return engine.openWindow(used.windowBytes, used.maxBatchBytes === undefined ? {} : { maxBatchBytes: used.maxBatchBytes });
}

/** A target discovery could not list: a `failed` partition with nothing read. */
export function failedTarget(path: string, error: ScanError, context: Pick<LoadContext, "options">): PartitionReport {
  const { used } = context.options;
  const verdict: PartitionVerdict = "failed";
  const report: PartitionReport = {
    path,
    verdict,
    action: decideAction(verdict, null, used.replicaCount).action,
    refusal: null,
    error,
    budget: { limitUnits: used.probeBudgetUnits, spentUnits: 0 },
    sweep: [],
    segments: [],
    ignored: [],
    bytesScanned: 0,
    singleSegment: false,
    scope: [],
    nextStep: "",
    findings: [],
    nextCommand: null,
  };
  const next = partitionNext(report, used.replicaCount);
  report.nextStep = next.text;
  report.nextCommand = next.command;
  return report;
}
