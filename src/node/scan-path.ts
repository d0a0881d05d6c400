/**
 * The scans of the library and the CLI (docs/interfaces.md §9.1), node-aware:
 * `scanPartition`, `scanPath` and `scanIter`, and the CLI's scans of what it
 * discovered itself. Each asks ./placement.ts where it runs (this thread or
 * the scan thread, and its loads here or on the worker pool: ./threads.ts),
 * then scans the partitions in path order (src/recovery/scan.ts loads them),
 * and every node root (a dir holding `metadata/` or `streams/`, docs/node.md
 * N0) also gets its node section: its metadata scanned before its partitions,
 * then each partition handed to the node pass (src/node/pass.ts) with the
 * names its load listed in its dir. Read-only: nothing here writes.
 */
import { resolve, sep } from "node:path";
import type { NodePartitionReport, NodeReport } from "../domain/node.js";
import type { Engine } from "../engine/types.js";
import type { IgnoredEntry, PartitionReport, ScanOptionsUsed, ScanReport } from "../domain/scan.js";
import { ScanFailure } from "../io/errors.js";
import type { ScanFs } from "../io/fs.js";
import { type ResolvedScanOptions, type ScanOptions, resolveEngineOption, resolveScanOptions } from "../recovery/options.js";
import {
  type ScannedPartition,
  SummaryCounter,
  type TargetSource,
  assembleReport,
  chain,
  checkRoot,
  defaultScanFs,
  isTargetList,
  loadInOrder,
  partitionTarget,
  scanPathList,
} from "../recovery/scan.js";
import {
  type DiscoverySink,
  type NodeLayoutFact,
  type ScanTarget,
  discover,
  discoverStream,
  logBytesByTarget,
} from "../recovery/targets.js";
import { SEGSCAN_VERSION } from "../version.js";
import { loadThreads, placeScan } from "./placement.js";
import { type NodeEntries, NodePartitionPass, isNodeRoot, scanNodeMetadata } from "./scan.js";
import { loadOnWorkers, reportOnScanThread, streamOnScanThread } from "./threads.js";

/** What a scan of discovered targets scans: a collected Discovery, or a stream whose `skipped` fills as it is walked. */
export interface DiscoveredTargets {
  targets: TargetSource;
  skipped: readonly IgnoredEntry[];
  /** docs/node.md N0: the node roots discovery listed, by real path; a stream's fills as it is walked (see `DiscoverySink`). */
  nodeRoots?: readonly string[];
  /** What discovery saw of each node root's layout, in path order: a queue the node passes empty as the scan goes (see `DiscoverySink`). */
  nodeLayout: NodeLayoutFact[];
}

/** A streamed scan (`scanIter`, `scan --ndjson`): what its header says, then the partitions one by one. */
export interface PartitionStream {
  segscan: string;
  engine: Engine["kind"];
  options: ScanOptionsUsed;
  skipped: readonly IgnoredEntry[];
  /** Partition reports in path order, each as soon as it and every earlier one is done; returns the summary. */
  partitions: AsyncGenerator<PartitionReport, ScanReport["summary"], undefined>;
}

/** A streamed scan (`scanIter`, `scan --ndjson`) of paths: the partitions, and a node root's section. */
export interface ScanStream extends PartitionStream {
  /**
   * The node section of the scan's one node root (docs/node.md N0, N9): its
   * metadata is scanned before its partitions, and the section is set here
   * once `partitions` is done (it needs every partition's verdict).
   */
  node?: NodeReport;
  /** The node sections when the scan met several node roots (given, or found below a given path), in the order met. */
  nodes?: NodeReport[];
  /**
   * With `nodeEntries: "per-partition"`: the partition's entry of its node's
   * section (docs/node.md N9) and that node's root, made when the partition
   * was yielded and answered until the next one is; the section's
   * `partitions` then lists only the partition dirs no scan target covered.
   */
  nodeEntryOf?: (partition: PartitionReport) => { root: string; entry: NodePartitionReport } | undefined;
}

/**
 * One partition directory (docs/interfaces.md §9.1). `scanFs` replaces the
 * filesystem (tests inject faults through it); by default `options.io` picks
 * one. A directory that holds no `.log` at all is refused (TypeError): it is
 * no partition, and a data dir belongs to `scanPath`.
 */
export async function scanPartition(directory: string, options: ScanOptions = {}, scanFs?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  if (typeof directory !== "string") throw new TypeError(`scanPartition: directory must be a path string, got ${String(directory)}`);
  const place = placeScan(options, resolved, scanFs);
  if (place.where === "scan-thread")
    return reportOnScanThread({ kind: "partition", directory }, place.options, resolved.signal, resolved.onProgress);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  return scanDiscovered([], { targets: [await partitionTarget(directory, fs)], skipped: [], nodeLayout: [] }, options, fs);
}

/**
 * A data dir, any dir under it, a partition dir, or one `.log` (several paths
 * allowed). Every node root among them or below them (a dir holding metadata/
 * or streams/, docs/node.md N0) also gets its node section, its metadata
 * scanned before its partitions: `node` for one, `nodes` for several.
 */
export async function scanPath(paths: string | readonly string[], options: ScanOptions = {}, scanFs?: ScanFs): Promise<ScanReport> {
  const resolved = resolveScanOptions(options);
  const list = scanPathList(paths, "scanPath");
  const place = placeScan(options, resolved, scanFs);
  if (place.where === "scan-thread") {
    return reportOnScanThread({ kind: "paths", paths: [...list], stream: false }, place.options, resolved.signal, resolved.onProgress);
  }
  const fs = scanFs ?? defaultScanFs(resolved.io);
  const ordered = await orderScanPaths(list, fs);
  return scanDiscovered(ordered, await discover(ordered, fs, resolved.signal), options, fs);
}

/**
 * A scan's paths that lie inside another of its paths go after it (a stable
 * reorder): the outer path's walk then reaches each partition first, so every
 * node root's partitions come to its node pass together and in path order
 * (docs/node.md N0); a path its walk does not reach is still scanned by its own.
 */
export async function orderScanPaths(paths: readonly string[], scanFs: ScanFs): Promise<string[]> {
  if (paths.length < 2) return [...paths];
  const real = await Promise.all(
    paths.map(async (path) => {
      const resolved = resolve(path);
      return scanFs.realpath ? await scanFs.realpath(resolved).catch(() => resolved) : resolved;
    }),
  );
  const inside = (inner: string, outer: string): boolean => inner !== outer && inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);
  return paths
    .map((path, index) => ({ path, index, depth: real.filter((outer) => inside(real[index] ?? path, outer)).length }))
    .sort((a, b) => a.depth - b.depth || a.index - b.index)
    .map((entry) => entry.path);
}

/**
 * A scan whose paths cannot each get their node section: node roots nested
 * inside one another (a caller error, like a path that is no `.log`; the CLI
 * makes it a usage error, exit 16). Never a reason to scan without the node checks.
 */
export class ScanPathsError extends TypeError {
  override readonly name = "ScanPathsError";
}

/**
 * The node roots of a scan (docs/node.md N0): every given path that is one,
 * and every one the walk finds below a given path. Each gets its metadata
 * scanned before its partitions, its partitions routed to its node pass, and
 * its own node section; a given path whose check fails gets no section (the
 * scan reports it failed: a failed read is no evidence either way).
 */
class NodeRoots {
  private readonly nodes: { root: string; prefix: string; pass: NodePartitionPass }[] = [];
  /** Given paths that could not be told: failed targets of their own, never node roots. */
  private readonly unknown = new Set<string>();
  /** The partition handed out last, and its node entry (per-partition entries go out on its line). */
  private last: { partition: PartitionReport; root: string; entry: NodePartitionReport } | null = null;

  constructor(
    private readonly fs: ScanFs,
    private readonly engine: Engine,
    private readonly options: ScanOptions & { engine: Engine },
    private readonly entries: NodeEntries,
    /** Discovery's layout facts not handed to a node pass yet (src/recovery/targets.ts `NodeLayoutFact`). */
    private readonly layout: NodeLayoutFact[],
  ) {}

  /** Given paths: each that is a node root is registered now (its metadata scanned); those that cannot be told come back as failed targets. */
  async checkGiven(paths: readonly string[]): Promise<ScanTarget[]> {
    const failed: ScanTarget[] = [];
    for (const path of paths) {
      const root = resolve(path);
      try {
        if (await isNodeRoot(root, this.fs)) await this.add(this.fs.realpath ? await this.fs.realpath(root) : root);
      } catch (error) {
        if (!(error instanceof ScanFailure)) throw error;
        this.unknown.add(root);
        failed.push({ path: root, singleLog: false, failure: error.toScanError() });
      }
    }
    return failed;
  }

  /** A node root discovery listed: registered unless it is one already, or a given path that could not be told. */
  async add(root: string): Promise<void> {
    if (this.unknown.has(root) || this.nodes.some((node) => node.root === root)) return;
    const nested = this.nodes.find((node) => root.startsWith(node.prefix) || node.root.startsWith(root + sep));
    if (nested !== undefined) {
      throw new ScanPathsError(
        `${root} and ${nested.root} are node roots (each holds metadata/ or streams/) nested one inside the other: ` +
          "their partitions cannot each be checked against their own node; scan each node root on its own",
      );
    }
    const report = await scanNodeMetadata(root, this.options, this.fs, this.engine);
    const pass = new NodePartitionPass(report, {
      scanFs: this.fs,
      engine: this.engine,
      entries: this.entries,
      scanFenced: fencedScanner(this.options, this.fs),
    });
    this.nodes.push({ root, prefix: root.endsWith(sep) ? root : root + sep, pass });
  }

  /** The node root a partition lies under (the deepest), or undefined. */
  private nodeOf(path: string): (typeof this.nodes)[number] | undefined {
    let found: (typeof this.nodes)[number] | undefined;
    for (const node of this.nodes)
      if (path.startsWith(node.prefix) && (found === undefined || node.root.length > found.root.length)) found = node;
    return found;
  }

  /**
   * The layout facts discovery met so far, each to its node's pass (none for a
   * root that is not registered): discovery walks ahead of the proofs, and every
   * root it lists is registered before the next target (`registeringFoundRoots`).
   */
  private takeLayout(): void {
    for (const fact of this.layout.splice(0)) this.nodes.find((node) => node.root === fact.root)?.pass.layout(fact);
  }

  /** One scanned partition to its node's pass, in path order. */
  async addPartition({ report: partition, directoryNames }: ScannedPartition): Promise<void> {
    this.takeLayout();
    const node = this.nodeOf(partition.path);
    this.last = null;
    if (node === undefined) return;
    const entry = await node.pass.add(partition, directoryNames);
    if (entry !== null) this.last = { partition, root: node.root, entry };
  }

  /** The node entry of the partition last handed out (per-partition entries), with its node root. */
  entryOf(partition: PartitionReport): { root: string; entry: NodePartitionReport } | undefined {
    return this.last?.partition === partition ? { root: this.last.root, entry: this.last.entry } : undefined;
  }

  /** Every pass finished; the node sections in the order their roots were met. */
  async finish(): Promise<NodeReport[]> {
    this.takeLayout();
    const reports: NodeReport[] = [];
    for (const node of this.nodes) reports.push(await node.pass.finish());
    return reports;
  }
}

/** docs/node.md N6: fenced dirs are scanned (read-only, never repaired) only on request. */
function fencedScanner(
  options: ScanOptions & { engine: Engine },
  fs: ScanFs,
): ((dir: string) => Promise<PartitionReport | null>) | undefined {
  if (!options.includeFenced) return undefined;
  return async (dir: string) => {
    const resolved = resolveScanOptions({ ...options, onProgress: undefined, concurrency: 1 });
    for await (const { report } of loadInOrder([{ path: dir, singleLog: false }], options.engine, resolved, fs)) return report;
    return null;
  };
}

/** The node sections on a report or stream: `node` for one node root, `nodes` for several (docs/node.md N0). */
function attachNodes(target: { node?: NodeReport; nodes?: NodeReport[] }, nodes: readonly NodeReport[]): void {
  if (nodes.length > 1) target.nodes = [...nodes];
  else if (nodes[0] !== undefined) target.node = nodes[0];
}

/** The targets led by the given paths that could not be told, which replace discovery's own failures of them. */
function withFailedRoots(discovery: DiscoveredTargets, failed: readonly ScanTarget[]): DiscoveredTargets {
  if (failed.length === 0) return discovery;
  const paths = new Set(failed.map((target) => target.path));
  const others = (target: ScanTarget): boolean => target.failure === undefined || !paths.has(target.path);
  const source = discovery.targets;
  const targets = Array.isArray(source)
    ? [...failed, ...source.filter(others)]
    : (async function* () {
        yield* failed;
        for await (const target of source) if (others(target)) yield target;
      })();
  return { ...discovery, targets };
}

/** The targets, each node root discovery lists registered (its metadata scanned) before the target that follows it. */
function registeringFoundRoots(discovery: DiscoveredTargets, roots: NodeRoots): DiscoveredTargets {
  const found = discovery.nodeRoots;
  if (found === undefined) return discovery;
  let registered = 0;
  const catchUp = async (): Promise<void> => {
    for (let root = found[registered]; root !== undefined; root = found[registered]) {
      registered++;
      await roots.add(root);
    }
  };
  const source = discovery.targets;
  const targets = (async function* () {
    await catchUp();
    for await (const target of source) {
      await catchUp();
      yield target;
    }
    await catchUp();
  })();
  return { ...discovery, targets };
}

async function startRoots(
  paths: readonly string[],
  options: ScanOptions,
  scanFs: ScanFs,
  entries: NodeEntries,
  layout: NodeLayoutFact[],
): Promise<{ engine: Engine; options: ScanOptions & { engine: Engine }; roots: NodeRoots; failed: ScanTarget[] }> {
  const engine = await resolveEngineOption(options.engine);
  const withEngine = { ...options, engine };
  const roots = new NodeRoots(scanFs, engine, withEngine, entries, layout);
  const failed = await roots.checkGiven(paths);
  return { engine, options: withEngine, roots, failed };
}

/**
 * Every target's report in target order, with what the node pass wants of
 * it: loaded on this thread, or on worker threads when ./placement.ts says
 * so, judged on the first targets (a streamed discovery keeps streaming
 * either way).
 */
async function partitionsInOrder(
  source: TargetSource,
  engine: Engine,
  resolved: ResolvedScanOptions,
  scanFs: ScanFs,
): Promise<AsyncGenerator<ScannedPartition, void, undefined>> {
  const iterator = isTargetList(source) ? chain(source, null) : source[Symbol.asyncIterator]();
  const sampled: ScanTarget[] = [];
  let complete = false;
  const take = async (upTo: number): Promise<ScanTarget[]> => {
    while (!complete && sampled.length < upTo) {
      const next = await iterator.next();
      if (next.done) complete = true;
      else sampled.push(next.value);
    }
    return sampled.slice(0, upTo).filter((target) => target.failure === undefined);
  };
  const threads = await loadThreads(resolved, scanFs, {
    count: async (upTo) => {
      const readable = await take(upTo);
      return { readable: readable.length, complete: complete && sampled.length <= upTo };
    },
    logBytes: async (upTo) => {
      let logBytes = 0;
      for (const bytes of (await logBytesByTarget(await take(upTo), scanFs, resolved.signal)).values()) logBytes += bytes;
      return logBytes;
    },
  });
  // The node pass reads each partition dir's names from its load instead of listing the dir again.
  const directoryNames = true;
  if (threads > 1) return loadOnWorkers(chain(sampled, iterator), { workers: threads, engineKind: engine.kind, resolved, directoryNames });
  const rest: TargetSource = complete ? sampled : sampled.length > 0 ? chain(sampled, iterator) : source;
  return loadInOrder(rest, engine, resolved, scanFs, directoryNames);
}

/**
 * Scans what discovery found under `paths` (`scanPath` discovers first, and so
 * does the CLI, to check its paths), on this thread: every partition's report
 * in path order, and every node root among the paths or found below them its
 * node section (docs/node.md N0), its metadata scanned before its
 * partitions: `node` for one, `nodes` for several.
 */
export async function scanDiscovered(
  paths: readonly string[],
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs: ScanFs,
  /** Sees each partition's report as it is reported, in path order (never changed after). */
  onPartition?: (partition: PartitionReport) => void,
): Promise<ScanReport> {
  const startedAt = performance.now();
  const stream = await streamDiscovered(paths, discovery, options, scanFs);
  const partitions: PartitionReport[] = [];
  for (let next = await stream.partitions.next(); !next.done; next = await stream.partitions.next()) {
    onPartition?.(next.value);
    partitions.push(next.value);
  }
  const report = assembleReport(stream.engine, stream.options, partitions, performance.now() - startedAt);
  if (stream.skipped.length > 0) report.skipped = [...stream.skipped];
  if (stream.node !== undefined) report.node = stream.node;
  if (stream.nodes !== undefined) report.nodes = stream.nodes;
  return report;
}

/**
 * Streams what discovery finds under `paths`, on this thread: each node root
 * (given, or found as the walk goes) gets its metadata scanned before its
 * partitions and its node section set on the stream once the partitions are
 * done. Each partition goes to its node's pass as it is yielded
 * (src/node/pass.ts), so nothing per partition is kept for the section but
 * its entries ("keep"), or not even those ("per-partition"); the loads keep
 * none either, on this thread or on the pool.
 */
export async function streamDiscovered(
  paths: readonly string[],
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs: ScanFs,
  /** docs/node.md N9: "per-partition" hands each partition dir's node entry out beside its report (`nodeEntryOf`) instead of keeping it. */
  nodeEntries: NodeEntries = "keep",
): Promise<ScanStream> {
  const resolved = resolveScanOptions(options);
  const { engine, roots, failed } = await startRoots(paths, options, scanFs, nodeEntries, discovery.nodeLayout);
  const targets = registeringFoundRoots(withFailedRoots(discovery, failed), roots);
  const scanned = await partitionsInOrder(targets.targets, engine, resolved, scanFs);
  const stream: ScanStream = {
    segscan: SEGSCAN_VERSION,
    engine: engine.kind,
    options: resolved.used,
    skipped: discovery.skipped,
    partitions: withNodes(),
    nodeEntryOf: (partition) => roots.entryOf(partition),
  };
  async function* withNodes(): AsyncGenerator<PartitionReport, ScanReport["summary"], undefined> {
    const counter = new SummaryCounter();
    for await (const partition of scanned) {
      counter.add(partition.report);
      await roots.addPartition(partition);
      yield partition.report;
    }
    attachNodes(stream, await roots.finish());
    return counter.summary;
  }
  return stream;
}

/** `scanIter`'s return value: the summary, and the node section of its one node root (`node`) or of several (`nodes`). */
export type ScanIterSummary = ScanReport["summary"] & { node?: NodeReport; nodes?: NodeReport[] };

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
  scanFs?: ScanFs,
): AsyncGenerator<PartitionReport, ScanIterSummary, undefined> {
  const resolved = resolveScanOptions(options);
  const list = scanPathList(paths, "scanIter");
  const place = placeScan(options, resolved, scanFs);
  if (place.where === "scan-thread")
    return yield* streamOnScanThread<ScanIterSummary>(list, place.options, resolved.signal, resolved.onProgress);
  const fs = scanFs ?? defaultScanFs(resolved.io);
  // Roots are checked before anything is scanned (a file that is no `.log` is a
  // TypeError); the partitions under them are discovered as the scan goes.
  for (const path of list) await checkRoot(path, fs);
  const ordered = await orderScanPaths(list, fs);
  const sink: DiscoverySink & { nodeLayout: NodeLayoutFact[] } = { skipped: [], roots: [], nodeRoots: [], nodeLayout: [] };
  const stream = await streamDiscovered(
    ordered,
    {
      targets: discoverStream(ordered, fs, sink, resolved.signal),
      skipped: sink.skipped,
      nodeRoots: sink.nodeRoots,
      nodeLayout: sink.nodeLayout,
    },
    options,
    fs,
  );
  const summary = yield* stream.partitions;
  if (stream.nodes !== undefined) return { ...summary, nodes: stream.nodes };
  return stream.node === undefined ? summary : { ...summary, node: stream.node };
}
