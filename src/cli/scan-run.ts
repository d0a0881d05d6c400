/** The scan the scan flags drive (./scan-flags.ts), for `scan`, `repair` and `scrub`'s target check. */
import { type Discovery, type DiscoverySink, type ScanTarget, discover, discoverStream, logBytesByTarget } from "../recovery/targets.js";
import {
  type DiscoveredTargets,
  ScanPathsError,
  type ScanStream,
  orderScanPaths,
  scanDiscovered,
  streamDiscovered,
} from "../node/scan-path.js";
import type { ScanOptions } from "../recovery/options.js";
import type { NodeEntries } from "../node/scan.js";
import { nodeBlockingScanFs, nodeScanFs } from "../io/fs.js";
import type { ScanReport } from "../domain/scan.js";
import { resolveEngine, warn } from "./context.js";
import { UsageError } from "./exit.js";
import { progressWanted, startProgress } from "./progress.js";
import type { ScanFlags } from "./scan-flags.js";

/** A discovery error for a path the CLI cannot take (a file that is no `.log`) is a usage error (exit 16). */
async function asUsageError<T>(discovering: () => Promise<T>): Promise<T> {
  try {
    return await discovering();
  } catch (error) {
    if (error instanceof ScanPathsError) throw new UsageError(error.message);
    if (error instanceof TypeError) throw new UsageError(`${error.message}; give a data dir, a partition dir or a .log file`);
    throw error;
  }
}

/**
 * The target check `scan` and `scrub` share: a path that is neither a
 * directory nor a `.log` file is a usage error (exit 16). Walks only up to the
 * first target; a path that cannot be read is left to the command (exit 8).
 */
export async function checkTargetKind(path: string, signal?: AbortSignal): Promise<void> {
  await asUsageError(async () => {
    const first = discoverStream([path], nodeBlockingScanFs, { skipped: [], roots: [] }, signal);
    await first.next();
    await first.return();
  });
}

function warnSkipped(skipped: readonly { path: string }[]): void {
  if (skipped.length === 0) return;
  warn(`not followed (links to directories; scan their targets by their own paths): ${skipped.map((entry) => entry.path).join(", ")}`);
}

/** Finds the targets under each path; a path that is not a data dir, partition dir or `.log` is a usage error (exit 16). */
async function discoverForCli(paths: readonly string[], signal: AbortSignal): Promise<Discovery> {
  const discovery = await asUsageError(() => discover(paths, nodeBlockingScanFs, signal));
  warnSkipped(discovery.skipped);
  for (const target of discovery.targets) {
    // Also on stderr, so it shows beside --json; the report lists it as a failed item (exit 8).
    if (target.failure !== undefined) warn(target.failure.message);
  }
  checkRootsHoldPartitions(discovery.roots);
  return discovery;
}

/**
 * The streamed scan's discovery (docs/benchmarks.md: memory flat however many
 * partitions): each path is first walked only up to its first target, to
 * refuse a path holding no partition before anything is printed; then the
 * targets are discovered as the scan goes, failures and links not followed
 * warned about as they are found.
 */
async function discoverStreamForCli(paths: readonly string[], signal: AbortSignal): Promise<DiscoveredTargets & { nodeRoots: string[] }> {
  for (const path of paths) {
    const sink: DiscoverySink = { skipped: [], roots: [] };
    await asUsageError(async () => {
      const first = discoverStream([path], nodeBlockingScanFs, sink, signal);
      await first.next();
      await first.return();
    });
    checkRootsHoldPartitions(sink.roots);
  }
  const sink: DiscoverySink & Pick<Discovery, "nodeRoots" | "nodeLayout"> = { skipped: [], roots: [], nodeRoots: [], nodeLayout: [] };
  async function* warned(): AsyncGenerator<ScanTarget> {
    let skippedWarned = 0;
    for await (const target of discoverStream(paths, nodeBlockingScanFs, sink, signal)) {
      warnSkipped(sink.skipped.slice(skippedWarned));
      skippedWarned = sink.skipped.length;
      if (target.failure !== undefined) warn(target.failure.message);
      yield target;
    }
    warnSkipped(sink.skipped.slice(skippedWarned));
  }
  return { targets: warned(), skipped: sink.skipped, nodeRoots: sink.nodeRoots, nodeLayout: sink.nodeLayout };
}

function checkRootsHoldPartitions(roots: Discovery["roots"]): void {
  for (const root of roots) {
    if (root.kind !== "directory" || root.targets > 0) continue;
    if (root.nodeRoot) {
      warn(
        `${root.path} is an Iggy node root (it has metadata/ or streams/) that holds no partition: no directory under streams/ holds a .log file`,
      );
    } else {
      // A mistyped path must not look like a clean scan.
      throw new UsageError(
        `${root.path} holds no partition: no directory under it holds a .log file, and it is not an Iggy node root ` +
          "(no metadata/ or streams/ in it); give a data dir, a partition dir or a .log file",
      );
    }
  }
}

/**
 * Runs the scan the flags describe; rejects with an AbortError when `signal`
 * fires. A path that cannot be read is reported as a failed item (exit 8)
 * beside the others; see `discoverForCli` for usage errors.
 */
export async function runScan(
  given: readonly string[],
  flags: ScanFlags,
  engineExplicit: boolean,
  signal: AbortSignal,
): Promise<ScanReport> {
  const paths = await orderScanPaths(given, nodeBlockingScanFs);
  const { discovery, options, stop } = await prepareScan(paths, flags, engineExplicit, signal);
  try {
    return await asUsageError(() => scanDiscovered(paths, discovery, options, nodeBlockingScanFs));
  } finally {
    stop();
  }
}

/**
 * The same scan as `runScan`, streamed: `consume` gets the partitions one by
 * one in path order, so the caller prints each and keeps only the summary.
 */
export async function runScanStream<T>(
  given: readonly string[],
  flags: ScanFlags,
  engineExplicit: boolean,
  signal: AbortSignal,
  consume: (stream: ScanStream) => Promise<T>,
  nodeEntries: NodeEntries = "keep",
): Promise<T> {
  const paths = await orderScanPaths(given, nodeBlockingScanFs);
  const discovery = await discoverStreamForCli(paths, signal);
  const { options, stop } = await scanOptionsForCli(flags, engineExplicit, signal, (estimates) =>
    estimateInBackground(paths, estimates, signal),
  );
  try {
    return await asUsageError(async () => consume(await streamDiscovered(paths, discovery, options, nodeBlockingScanFs, nodeEntries)));
  } finally {
    stop();
  }
}

async function prepareScan(
  paths: readonly string[],
  flags: ScanFlags,
  engineExplicit: boolean,
  signal: AbortSignal,
): Promise<{ discovery: Discovery; options: ScanOptions; stop: () => void }> {
  const discovery = await discoverForCli(paths, signal);
  const { options, stop } = await scanOptionsForCli(flags, engineExplicit, signal, (estimates) => {
    // The bar's total and ETA are right from the start (one stat per file, no reads).
    void logBytesByTarget(discovery.targets, nodeScanFs, signal).then(
      (totals) => {
        for (const [path, bytes] of totals) estimates.set(path, bytes);
      },
      () => undefined,
    );
  });
  return { discovery, options, stop };
}

/**
 * The progress bar's estimates for a streamed scan: a second discovery runs
 * beside the scan through the async filesystem, one stat per `.log` and no
 * reads, so the total grows ahead of the scan. Only with the bar (a TTY).
 */
function estimateInBackground(paths: readonly string[], estimates: Map<string, number>, signal: AbortSignal): void {
  void (async () => {
    for await (const target of discoverStream(paths, nodeScanFs, { skipped: [], roots: [] }, signal)) {
      for (const [path, bytes] of await logBytesByTarget([target], nodeScanFs, signal)) estimates.set(path, bytes);
    }
  })().catch(() => undefined);
}

async function scanOptionsForCli(
  flags: ScanFlags,
  engineExplicit: boolean,
  signal: AbortSignal,
  estimate: (estimates: Map<string, number>) => void,
): Promise<{ options: ScanOptions; stop: () => void }> {
  const engine = await resolveEngine(flags.engine, engineExplicit);
  const wanted = progressWanted(process.stderr, flags);
  const estimates = new Map<string, number>();
  if (wanted) estimate(estimates);
  const progress = startProgress(process.stderr, wanted, estimates);
  const options: ScanOptions = {
    engine,
    verify: flags.deep ? "full" : "tail",
    replicaCount: flags.replicas,
    probeBudgetUnits: flags.probeBudget,
    windowBytes: flags.window,
    concurrency: flags.concurrency,
    // A CLI process serves nothing else: blocking reads are about twice as fast
    // from the page cache, and the scan still yields after every window.
    io: "blocking",
    ...(flags.includeFenced ? { includeFenced: true } : {}),
    signal,
    ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
  };
  return { options, stop: () => progress.stop() };
}
