/**
 * A partition load (SPEC §4): list once, recover every segment with one shared
 * probe budget, check contiguity, and classify. Read failures stop the
 * partition as `failed` (SPEC §3.6); refusals never stop the other segments.
 */
import { basename, dirname, join } from "node:path";
import { INDEX_SUFFIX, LOG_SUFFIX, STAGING_SUFFIX, U64_MAX } from "../format/constants.js";
import type { Engine } from "../engine/types.js";
import { ScanFailure, describeCause } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import { decideAction } from "../policy/policy.js";
import type { PartitionReport, PartitionVerdict, Refusal, SegmentReport, SweepCandidate } from "../report/types.js";
import type { ResolvedScanOptions } from "./options.js";
import type { ProbeBudget } from "./probe.js";
import { refuse } from "./refusals.js";
import { type SegmentFiles, recoverSegment } from "./segment.js";

/** The stem of a segment file: a decimal u64 (SPEC §1.1). */
export function parseSegmentStem(stem: string): bigint | null {
  if (!/^[0-9]{1,20}$/.test(stem)) return null;
  const value = BigInt(stem);
  return value <= U64_MAX ? value : null;
}

interface Listing {
  segments: SegmentFiles[];
  sweep: SweepCandidate[];
  ignored: string[];
}

async function statSize(scanFs: ScanFs, path: string): Promise<number> {
  try {
    return (await scanFs.stat(path)).size;
  } catch (cause) {
    throw new ScanFailure("OpenFailure", path, `cannot stat ${path} after listing it (${describeCause(cause)}); nothing was changed`, { cause });
  }
}

/** SPEC §9.2: one `.log` scanned alone, its `.index` beside it, its start offset from its name. */
async function listSingleLog(scanFs: ScanFs, logPath: string): Promise<Listing> {
  const stem = basename(logPath).slice(0, -LOG_SUFFIX.length);
  const startOffset = parseSegmentStem(stem);
  if (startOffset === null) throw new TypeError(`${logPath}: a segment's name must be its start offset, a decimal u64`);
  const indexPath = join(dirname(logPath), stem + INDEX_SUFFIX);
  let indexSize = 0;
  try {
    indexSize = (await scanFs.stat(indexPath)).size;
  } catch (cause) {
    // Only absence means "no index"; any other failure is not evidence (SPEC §3.6).
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new ScanFailure("OpenFailure", indexPath, `cannot stat ${indexPath} (${describeCause(cause)}); nothing was changed`, { cause });
    }
  }
  return { segments: [{ startOffset, logPath, indexPath, logSize: await statSize(scanFs, logPath), indexSize }], sweep: [], ignored: [] };
}

/** SPEC §4 step 1: one listing; segments by `.log` stem, sweep candidates, and files that are not ours. */
async function listPartition(scanFs: ScanFs, directory: string): Promise<Listing> {
  let entries;
  try {
    entries = await scanFs.list(directory);
  } catch (cause) {
    throw new ScanFailure("ListFailure", directory, `cannot list ${directory} (${describeCause(cause)}); nothing was changed`, { cause });
  }
  // Every non-directory name counts for pairing, so a `.log` that is not a
  // regular file never turns its live `.index` into a sweepable orphan.
  const files = new Set(entries.filter((entry) => !entry.isDirectory).map((entry) => entry.name));
  const listing: Listing = { segments: [], sweep: [], ignored: [] };
  for (const name of [...files].sort()) {
    const path = join(directory, name);
    if (name.endsWith(STAGING_SUFFIX)) {
      listing.sweep.push({ path, kind: "staging" });
    } else if (name.endsWith(INDEX_SUFFIX)) {
      if (!files.has(name.slice(0, -INDEX_SUFFIX.length) + LOG_SUFFIX)) listing.sweep.push({ path, kind: "orphan-index" });
    } else if (name.endsWith(LOG_SUFFIX)) {
      const stem = name.slice(0, -LOG_SUFFIX.length);
      const startOffset = parseSegmentStem(stem);
      if (startOffset === null) {
        listing.ignored.push(path);
        continue;
      }
      const indexPath = join(directory, stem + INDEX_SUFFIX);
      listing.segments.push({
        startOffset,
        logPath: path,
        indexPath,
        logSize: await statSize(scanFs, path),
        indexSize: files.has(stem + INDEX_SUFFIX) ? await statSize(scanFs, indexPath) : 0,
      });
    }
  }
  listing.segments.sort((a, b) => (a.startOffset < b.startOffset ? -1 : a.startOffset > b.startOffset ? 1 : 0));
  return listing;
}

/** SPEC §4 step 3: the first failing adjacent pair, if any. */
export function checkContiguity(segments: readonly SegmentReport[]): Refusal | null {
  for (let i = 1; i < segments.length; i++) {
    const previous = segments[i - 1]!;
    const next = segments[i]!;
    if (previous.walkedSize === 0) {
      return refuse.emptyNonTailSegment({ emptyStart: previous.startOffset, nextStart: next.startOffset });
    }
    // A non-empty recovered segment always has an end bound.
    const previousEnd = previous.endOffset!;
    const fields = { previousStart: previous.startOffset, previousEnd, nextStart: next.startOffset };
    if (next.startOffset > previousEnd + 1n) return refuse.hole(fields);
    if (next.startOffset <= previousEnd) return refuse.overlap(fields);
  }
  return null;
}

function classify(report: PartitionReport): PartitionVerdict {
  if (report.error) return "failed";
  if (report.refusal) return "refused";
  const needsWork = report.sweep.length > 0 || report.segments.some((segment) =>
    segment.outcome === "torn-tail" || segment.outcome === "empty" || segment.index.rebuilt || segment.index.trailingBytes > 0);
  return needsWork ? "repairable" : "clean";
}

export interface LoadContext {
  engine: Engine;
  scanFs: ScanFs;
  options: ResolvedScanOptions;
}

/** Loads a partition directory, or (when `singleLog` is set) one `.log` as a partition of one segment. */
export async function loadPartition(path: string, context: LoadContext, singleLog = false): Promise<PartitionReport> {
  const { used } = context.options;
  const budget: ProbeBudget = { limitUnits: used.probeBudgetUnits, spentUnits: 0 };
  const report: PartitionReport = {
    path, verdict: "clean", action: "serve", refusal: null, error: null,
    budget: { limitUnits: budget.limitUnits, spentUnits: 0 },
    sweep: [], segments: [], ignored: [], bytesScanned: 0, singleSegment: singleLog,
  };
  const engineWindow = context.engine.openWindow(used.windowBytes, used.maxBatchBytes === undefined ? {} : { maxBatchBytes: used.maxBatchBytes });
  let bytesTotal = 0;
  const onRead = (bytesRead: number): void => {
    report.bytesScanned += bytesRead;
    context.options.onProgress?.({ path, bytesDone: Math.min(report.bytesScanned, bytesTotal), bytesTotal });
  };
  try {
    const listing = singleLog ? await listSingleLog(context.scanFs, path) : await listPartition(context.scanFs, path);
    report.sweep = listing.sweep;
    report.ignored = listing.ignored;
    bytesTotal = listing.segments.reduce((sum, segment) => sum + segment.logSize, 0);
    for (const files of listing.segments) {
      report.segments.push(await recoverSegment(files, {
        scanFs: context.scanFs, engineWindow, budget, verify: used.verify, signal: context.options.signal, onRead,
      }));
    }
    report.refusal = report.segments.find((segment) => segment.refusal !== null)?.refusal ?? null;
    if (report.refusal === null && !singleLog) report.refusal = checkContiguity(report.segments);
  } catch (error) {
    if (!(error instanceof ScanFailure)) throw error;
    report.error = error.toScanError();
  } finally {
    engineWindow.close();
  }
  report.budget.spentUnits = budget.spentUnits;
  report.verdict = classify(report);
  report.action = decideAction(report.verdict, report.refusal, used.replicaCount).action;
  context.options.onProgress?.({ path, bytesDone: bytesTotal, bytesTotal });
  return report;
}
