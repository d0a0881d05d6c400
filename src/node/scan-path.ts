/**
 * The library's scans of paths (docs/interfaces.md §9.1), node-aware: recovery
 * scans the partitions (src/recovery/scan.ts), and one node root (a dir holding
 * `metadata/` or `streams/`, docs/node.md N0) also gets the node section: its
 * metadata scanned before the partitions, then each partition handed to the
 * node pass (src/node/pass.ts) with the names its load listed in its dir.
 * Read-only: nothing here writes.
 */
import { resolve } from "node:path";
import type { NodePartitionReport, NodeReport } from "../domain/node.js";
import type { Engine } from "../engine/types.js";
import type { PartitionReport, ScanReport } from "../domain/scan.js";
import { ScanFailure } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import { type ScanOptions, resolveEngineOption, resolveScanOptions } from "../recovery/options.js";
import {
  type DiscoveredTargets,
  type PartitionStream,
  checkRoot,
  defaultScanFs,
  scanPathList,
  scanTargets,
  streamTargets,
} from "../recovery/scan.js";
import { type Discovery, type DiscoverySink, type ScanTarget, discover, discoverStream } from "../recovery/targets.js";
import type { PartitionProof } from "./partition-dir.js";
import { type NodeEntries, NodePartitionPass, finishNode, isNodeRoot, scanNodeMetadata } from "./scan.js";
import { scanIterOnThread, scanPathOnThread, threadOptions } from "./scan-thread.js";

/** A streamed scan (`scanIter`, `scan --ndjson`) of paths: the partitions, and a node root's section. */
export interface ScanStream extends PartitionStream {
  /**
   * A single node root's section (docs/node.md N0, N9): its metadata is
   * scanned before the stream is handed out, and the section is set here
   * once `partitions` is done (it needs every partition's verdict).
   */
  node?: NodeReport;
  /**
   * With `nodeEntries: "per-partition"` on a node root: the partition's entry
   * of the node section (docs/node.md N9), made when the partition was
   * yielded and answered until the next one is; `node.partitions` then lists
   * only the partition dirs no scan target covered.
   */
  nodeEntryOf?: (partition: PartitionReport) => NodePartitionReport | undefined;
}

/**
 * A data dir, any dir under it, a partition dir, or one `.log` (several paths
 * allowed). One node root (a dir holding metadata/ or streams/, docs/node.md
 * N0) also gets the node section, its metadata scanned before the partitions.
 */
export async function scanPath(paths: string | readonly string[], options: ScanOptions = {}, scanFsOverride?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const list = scanPathList(paths, "scanPath");
  // Async io (the default) scans on the scan thread with blocking reads (issue 23: ./scan-thread.ts).
  const onThread = threadOptions(options, resolved.io, scanFsOverride);
  if (onThread !== null) return scanPathOnThread(list, onThread, resolved.signal, resolved.onProgress);
  return scanPathHere(list, options, scanFsOverride);
}

/** `scanPath` on this thread; `onPartition` sees each partition as it is reported (the scan thread sends them on as it goes). */
export async function scanPathHere(
  list: readonly string[],
  options: ScanOptions,
  scanFsOverride?: ScanFs,
  onPartition?: (partition: PartitionReport) => void,
): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const scanFs = scanFsOverride ?? defaultScanFs(resolved.io);
  const discovery = await discover(list, scanFs, resolved.signal);
  return scanDiscovered(list, discovery, options, scanFs, onPartition);
}

/**
 * What the paths are: one node root (only a single path can be one), or
 * none, or one path that could not be told (its stat or listing failed), whose
 * failure the scan reports as a failed target of its own: never as "not a
 * node root" (docs/recovery.md §3.6).
 */
type NodeRootCheck = { kind: "node"; root: string } | { kind: "none" } | { kind: "failed"; target: ScanTarget };

async function nodeRootOf(paths: readonly string[], scanFs: ScanFs): Promise<NodeRootCheck> {
  if (paths.length !== 1) return { kind: "none" };
  const root = resolve(paths[0]!);
  try {
    return (await isNodeRoot(root, scanFs)) ? { kind: "node", root } : { kind: "none" };
  } catch (error) {
    if (!(error instanceof ScanFailure)) throw error;
    return { kind: "failed", target: { path: root, singleLog: false, failure: error.toScanError() } };
  }
}

/** The targets, led by the root that could not be told (in path order it comes first), which replaces discovery's own failure of it. */
function withRootCheck(discovery: DiscoveredTargets, check: NodeRootCheck): DiscoveredTargets {
  if (check.kind !== "failed") return discovery;
  const failed = check.target;
  const others = (target: ScanTarget): boolean => target.failure === undefined || target.path !== failed.path;
  const source = discovery.targets;
  const targets = Array.isArray(source)
    ? [failed, ...source.filter(others)]
    : (async function* () {
        yield failed;
        for await (const target of source) if (others(target)) yield target;
      })();
  return { ...discovery, targets };
}

/**
 * How a scan of `paths` starts: the partitions alone (led by a root that
 * could not be told), or a node root's metadata, scanned before its
 * partitions (docs/node.md N0) with the engine both use.
 */
type ScanStart =
  | { kind: "partitions"; fs: ScanFs; discovery: DiscoveredTargets }
  | { kind: "node"; fs: ScanFs; engine: Engine; options: ScanOptions & { engine: Engine }; node: NodeReport };

async function startScan(
  paths: readonly string[],
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs?: ScanFs,
): Promise<ScanStart> {
  const fs = scanFs ?? defaultScanFs(resolveScanOptions(options).io);
  const check = await nodeRootOf(paths, fs);
  if (check.kind !== "node") return { kind: "partitions", fs, discovery: withRootCheck(discovery, check) };
  const engine = await resolveEngineOption(options.engine);
  const withEngine = { ...options, engine };
  return { kind: "node", fs, engine, options: withEngine, node: await scanNodeMetadata(check.root, withEngine, fs, engine) };
}

/**
 * Scans what `discover` found under `paths` (the CLI discovers first, to check
 * its paths). One node root also gets its node section, its metadata scanned
 * before the partitions (docs/node.md N0).
 */
export async function scanDiscovered(
  paths: readonly string[],
  discovery: Discovery,
  options: ScanOptions,
  scanFs?: ScanFs,
  /** Sees each partition's report as it is reported, in path order (never changed after). */
  onPartition?: (partition: PartitionReport) => void,
): Promise<ScanReport> {
  const start = await startScan(paths, discovery, options, scanFs);
  if (start.kind === "partitions")
    return scanTargets(start.discovery, options, start.fs, onPartition && ((partition) => onPartition(partition)));
  const { fs, engine, options: withEngine, node } = start;
  // The names each partition's load listed, for the node pass (kept as long as the reports are).
  const directoryNames = new Map<PartitionProof, ReadonlySet<string>>();
  const report = await scanTargets(discovery, withEngine, fs, (partition, names) => {
    if (names !== undefined) directoryNames.set(partition, names);
    onPartition?.(partition);
  });
  // docs/node.md N6: fenced dirs are scanned (read-only, never repaired) only on request.
  const scanFenced = options.includeFenced
    ? async (dir: string) =>
        (
          await scanTargets(
            { targets: [{ path: dir, singleLog: false }], skipped: [] },
            { ...withEngine, onProgress: undefined, concurrency: 1 },
            fs,
          )
        ).partitions[0] ?? null
    : undefined;
  report.node = await finishNode(node, withEngine, fs, engine, report.partitions, scanFenced, (proof) => directoryNames.get(proof));
  return report;
}

/**
 * Streams what `discover` found under `paths`, as `scanDiscovered` scans it:
 * one node root (docs/node.md N0) gets its metadata scanned first and its node
 * section set on the stream once the partitions are done. Each partition goes
 * to the node pass as it is yielded (src/node/pass.ts), so nothing per
 * partition is kept for the section but its entries ("keep"), or not even
 * those ("per-partition").
 */
export async function streamDiscovered(
  paths: readonly string[],
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs?: ScanFs,
  /** docs/node.md N9: "per-partition" hands each partition dir's node entry out beside its report (`nodeEntryOf`) instead of keeping it. */
  nodeEntries: NodeEntries = "keep",
): Promise<ScanStream> {
  const start = await startScan(paths, discovery, options, scanFs);
  if (start.kind === "partitions") return streamTargets(start.discovery, options, start.fs);
  const { fs, engine, options: withEngine, node } = start;
  const pass = new NodePartitionPass(node, { scanFs: fs, engine, signal: withEngine.signal, entries: nodeEntries });
  // The entry of the partition last yielded (per-partition: it goes out on that partition's line). A WeakMap of every
  // partition held each entry until the next full GC: a fifth of the peak RSS growth over 50,000 partitions (issue 23).
  let last: { partition: PartitionReport; entry: NodePartitionReport } | null = null;
  const inner = await streamTargets(discovery, withEngine, fs, async (partition, directoryNames) => {
    const entry = await pass.add(partition, directoryNames);
    last = entry === null ? null : { partition, entry };
  });
  const stream: ScanStream = {
    ...inner,
    partitions: withNode(),
    nodeEntryOf: (partition) => (last?.partition === partition ? last.entry : undefined),
  };
  async function* withNode(): AsyncGenerator<PartitionReport, ScanReport["summary"], undefined> {
    const summary = yield* inner.partitions;
    stream.node = await pass.finish();
    return summary;
  }
  return stream;
}

/** `scanIter`'s return value: the summary, and the node section when the one path is a node root. */
export type ScanIterSummary = ScanReport["summary"] & { node?: NodeReport };

/**
 * The library's streaming scan (docs/interfaces.md §9.1): discovers like
 * `scanPath`, then yields each partition's report in path order as it
 * completes, keeping none of them:
 *
 *     for await (const partition of scanIter(root)) console.log(partition.path, partition.verdict);
 *
 * The generator's return value (seen by calling `next()` by hand) is the
 * summary; when the one path is a node root (docs/node.md N0) its metadata is
 * scanned before the partitions and the return value also carries `node`, the
 * node section `scanPath` would attach. Options are checked before anything is read; a read failure fails
 * only its partition, exactly as in `scanPath`, and the reports are the same.
 */
export async function* scanIter(
  paths: string | readonly string[],
  options: ScanOptions = {},
  scanFsOverride?: ScanFs,
): AsyncGenerator<PartitionReport, ScanIterSummary, undefined> {
  const resolved = resolveScanOptions(options);
  const list = scanPathList(paths, "scanIter");
  const onThread = threadOptions(options, resolved.io, scanFsOverride);
  if (onThread !== null) return yield* scanIterOnThread<ScanIterSummary>(list, onThread, resolved.signal, resolved.onProgress);
  const scanFs = scanFsOverride ?? defaultScanFs(resolved.io);
  // Roots are checked before anything is scanned (a file that is no `.log` is a
  // TypeError); the partitions under them are discovered as the scan goes.
  for (const path of list) await checkRoot(path, scanFs);
  const sink: DiscoverySink = { skipped: [], roots: [] };
  const stream = await streamDiscovered(
    list,
    { targets: discoverStream(list, scanFs, sink, resolved.signal), skipped: sink.skipped },
    options,
    scanFs,
  );
  const summary = yield* stream.partitions;
  return stream.node === undefined ? summary : { ...summary, node: stream.node };
}
