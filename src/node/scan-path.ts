/**
 * The library's scans of paths (docs/interfaces.md §9.1), node-aware: recovery
 * scans the partitions (src/recovery/scan.ts), and one node root (a dir holding
 * `metadata/` or `streams/`, docs/node.md N0) also gets the node section: its
 * metadata scanned before the partitions, then each partition handed to the
 * node pass (src/node/pass.ts) with the names its load listed in its dir.
 * Read-only: nothing here writes.
 */
import { resolve, sep } from "node:path";
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
 * A data dir, any dir under it, a partition dir, or one `.log` (several paths
 * allowed). Every node root among them or below them (a dir holding metadata/
 * or streams/, docs/node.md N0) also gets its node section, its metadata
 * scanned before its partitions: `node` for one, `nodes` for several.
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
  const ordered = await orderScanPaths(list, scanFs);
  const discovery = await discover(ordered, scanFs, resolved.signal);
  return scanDiscovered(ordered, discovery, options, scanFs, onPartition);
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
  const depth = real.map((path) => real.filter((other) => inside(path, other)).length);
  return paths
    .map((path, index) => ({ path, index }))
    .sort((a, b) => depth[a.index]! - depth[b.index]! || a.index - b.index)
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
  private readonly nodes: { root: string; prefix: string; report: NodeReport; pass: NodePartitionPass | null }[] = [];
  /** Given paths that could not be told: failed targets of their own, never node roots. */
  private readonly unknown = new Set<string>();
  /** The partition handed out last, and its node entry (per-partition entries go out on its line). */
  private last: { partition: PartitionReport; root: string; entry: NodePartitionReport } | null = null;

  constructor(
    private readonly fs: ScanFs,
    private readonly engine: Engine,
    private readonly options: ScanOptions & { engine: Engine },
    private readonly entries: NodeEntries | "whole",
  ) {}

  get count(): number {
    return this.nodes.length;
  }

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
    const pass =
      this.entries === "whole"
        ? null
        : new NodePartitionPass(report, {
            scanFs: this.fs,
            engine: this.engine,
            signal: this.options.signal,
            entries: this.entries,
            scanFenced: fencedScanner(this.options, this.fs),
          });
    this.nodes.push({ root, prefix: root.endsWith(sep) ? root : root + sep, report, pass });
  }

  /** The node root a partition lies under (the deepest), or undefined. */
  private nodeOf(path: string): (typeof this.nodes)[number] | undefined {
    let found: (typeof this.nodes)[number] | undefined;
    for (const node of this.nodes)
      if (path.startsWith(node.prefix) && (found === undefined || node.root.length > found.root.length)) found = node;
    return found;
  }

  /** Streamed: one scanned partition to its node's pass, in path order. */
  async addPartition(partition: PartitionReport, directoryNames: ReadonlySet<string> | undefined): Promise<void> {
    const node = this.nodeOf(partition.path);
    this.last = null;
    if (node?.pass == null) return;
    const entry = await node.pass.add(partition, directoryNames);
    if (entry !== null) this.last = { partition, root: node.root, entry };
  }

  /** The node entry of the partition last handed out (per-partition entries), with its node root. */
  entryOf(partition: PartitionReport): { root: string; entry: NodePartitionReport } | undefined {
    return this.last?.partition === partition ? { root: this.last.root, entry: this.last.entry } : undefined;
  }

  /** Streamed: every pass finished; the node sections in the order their roots were met. */
  async finishStreamed(): Promise<NodeReport[]> {
    const reports: NodeReport[] = [];
    for (const node of this.nodes) reports.push(await node.pass!.finish());
    return reports;
  }

  /** Whole: each node finished over its own partitions (docs/node.md N0). */
  async finishWhole(
    partitions: readonly PartitionReport[],
    namesOf: (proof: PartitionProof) => ReadonlySet<string> | undefined,
  ): Promise<NodeReport[]> {
    const reports: NodeReport[] = [];
    for (const node of this.nodes) {
      const own = partitions.filter((partition) => this.nodeOf(partition.path) === node);
      reports.push(await finishNode(node.report, this.options, this.fs, this.engine, own, fencedScanner(this.options, this.fs), namesOf));
    }
    return reports;
  }
}

/** docs/node.md N6: fenced dirs are scanned (read-only, never repaired) only on request. */
function fencedScanner(
  options: ScanOptions & { engine: Engine },
  fs: ScanFs,
): ((dir: string) => Promise<PartitionReport | null>) | undefined {
  if (!options.includeFenced) return undefined;
  return async (dir: string) =>
    (
      await scanTargets(
        { targets: [{ path: dir, singleLog: false }], skipped: [] },
        { ...options, onProgress: undefined, concurrency: 1 },
        fs,
      )
    ).partitions[0] ?? null;
}

/** The node sections on a report or stream: `node` for one node root, `nodes` for several (docs/node.md N0). */
function attachNodes(target: { node?: NodeReport; nodes?: NodeReport[] }, nodes: readonly NodeReport[]): void {
  if (nodes.length === 1) target.node = nodes[0]!;
  else if (nodes.length > 1) target.nodes = [...nodes];
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
    while (registered < found.length) await roots.add(found[registered++]!);
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
  scanFs: ScanFs | undefined,
  entries: NodeEntries | "whole",
): Promise<{ fs: ScanFs; options: ScanOptions & { engine: Engine }; roots: NodeRoots; failed: ScanTarget[] }> {
  const fs = scanFs ?? defaultScanFs(resolveScanOptions(options).io);
  const engine = await resolveEngineOption(options.engine);
  const withEngine = { ...options, engine };
  const roots = new NodeRoots(fs, engine, withEngine, entries);
  const failed = await roots.checkGiven(paths);
  return { fs, options: withEngine, roots, failed };
}

/**
 * Scans what `discover` found under `paths` (the CLI discovers first, to check
 * its paths). Every node root among the paths or found below them gets its
 * node section (docs/node.md N0), its metadata scanned before its partitions:
 * `node` for one, `nodes` for several.
 */
export async function scanDiscovered(
  paths: readonly string[],
  discovery: Discovery,
  options: ScanOptions,
  scanFs?: ScanFs,
  /** Sees each partition's report as it is reported, in path order (never changed after). */
  onPartition?: (partition: PartitionReport) => void,
): Promise<ScanReport> {
  const { fs, options: withEngine, roots, failed } = await startRoots(paths, options, scanFs, "whole");
  for (const root of discovery.nodeRoots ?? []) await roots.add(root);
  const targets = withFailedRoots(discovery, failed);
  if (roots.count === 0) return scanTargets(targets, options, fs, onPartition && ((partition) => onPartition(partition)));
  // The names each partition's load listed, for the node pass (kept as long as the reports are).
  const directoryNames = new Map<PartitionProof, ReadonlySet<string>>();
  const report = await scanTargets(targets, withEngine, fs, (partition, names) => {
    if (names !== undefined) directoryNames.set(partition, names);
    onPartition?.(partition);
  });
  attachNodes(report, await roots.finishWhole(report.partitions, (proof) => directoryNames.get(proof)));
  return report;
}

/**
 * Streams what `discover` finds under `paths`, as `scanDiscovered` scans it:
 * each node root (given, or found as the walk goes) gets its metadata scanned
 * before its partitions and its node section set on the stream once the
 * partitions are done. Each partition goes to its node's pass as it is
 * yielded (src/node/pass.ts), so nothing per partition is kept for the
 * section but its entries ("keep"), or not even those ("per-partition").
 */
export async function streamDiscovered(
  paths: readonly string[],
  discovery: DiscoveredTargets,
  options: ScanOptions,
  scanFs?: ScanFs,
  /** docs/node.md N9: "per-partition" hands each partition dir's node entry out beside its report (`nodeEntryOf`) instead of keeping it. */
  nodeEntries: NodeEntries = "keep",
): Promise<ScanStream> {
  const { fs, options: withEngine, roots, failed } = await startRoots(paths, options, scanFs, nodeEntries);
  const targets = registeringFoundRoots(withFailedRoots(discovery, failed), roots);
  const inner = await streamTargets(targets, withEngine, fs, (partition, directoryNames) => roots.addPartition(partition, directoryNames));
  const stream: ScanStream = { ...inner, partitions: withNodes(), nodeEntryOf: (partition) => roots.entryOf(partition) };
  async function* withNodes(): AsyncGenerator<PartitionReport, ScanReport["summary"], undefined> {
    const summary = yield* inner.partitions;
    attachNodes(stream, await roots.finishStreamed());
    return summary;
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
  const ordered = await orderScanPaths(list, scanFs);
  const sink: DiscoverySink = { skipped: [], roots: [], nodeRoots: [] };
  const stream = await streamDiscovered(
    ordered,
    { targets: discoverStream(ordered, scanFs, sink, resolved.signal), skipped: sink.skipped, nodeRoots: sink.nodeRoots },
    options,
    scanFs,
  );
  const summary = yield* stream.partitions;
  if (stream.nodes !== undefined) return { ...summary, nodes: stream.nodes };
  return stream.node === undefined ? summary : { ...summary, node: stream.node };
}
