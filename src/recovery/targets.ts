/**
 * What to scan: partitions discovered under a path (docs/interfaces.md §9.2), or one `.log`.
 *
 * Discovery never follows a symbolic link to a directory (a link such as
 * `again -> .` would otherwise multiply the partitions, or loop forever), visits
 * each directory once by device and inode, checks the AbortSignal before every
 * listing, and turns a directory it cannot list into a failed target instead of
 * failing the whole scan.
 */
import { join, resolve, sep } from "node:path";
import { LOG_SUFFIX } from "../format/constants.js";
import { PRESERVE_DIR_SUFFIX } from "../format/journal.js";
import { abortError, describeCause } from "../io/errors.js";
import type { DirectoryEntry, ScanFs } from "../io/fs.js";
import { childPath } from "../io/paths.js";
import type { IgnoredEntry, ScanError } from "../domain/scan.js";

/**
 * Directories beside a partition that are never scanned as partitions:
 * segscan's own `<p>.segscan`, and every `<p>.fenced.<suffix>`. Those with a
 * decimal suffix are Iggy's quarantine copies (docs/node.md N6); any other
 * suffix (`1.fenced.abc`, `1.fenced.`) only looks like one, is no partition
 * either (the server never reads it), and the node pass reports it.
 */
export const OWN_DIRECTORY_PATTERN = /\.(segscan|fenced\..*)$/;

/**
 * A directory holding one of these is an Iggy node root (`system.path`,
 * docs/node.md N0); below a node root only `streams/` holds partitions
 * (`logs/` holds the server's own `*.log` files, which are no segments).
 */
const NODE_ROOT_MARKERS = ["metadata", "streams"] as const;
const NODE_STREAMS_DIRECTORY = "streams";

/**
 * Deepest directory level below a given path that discovery lists. Iggy's
 * layout puts partitions 5 levels below the node root
 * (`streams/<s>/topics/<t>/partitions/<p>`); this bounds discovery on a
 * filesystem that cannot tell directories apart (no device/inode) and has a
 * loop that is not a symbolic link (a bind mount).
 */
export const MAX_DISCOVERY_DEPTH = 64;

/**
 * Partition listings discovery hands on to the scan (ScanTarget.entries), at
 * most. A listing costs ~250 bytes per partition while it waits for its
 * load, so on a node of 100,000 partitions keeping them all would grow the
 * scan's memory with the node (docs/benchmarks.md: ≤ 16 MiB from 1,000 to 50,000
 * partitions); the partitions past this many are listed again by their load.
 */
const DISCOVERY_LISTINGS_KEPT = 4096;

export interface ScanTarget {
  /** A partition directory, or one `.log` file scanned as a partition of one segment. */
  path: string;
  singleLog: boolean;
  /** Discovery could not list this directory (or stat this path): it is reported as a `failed` partition. */
  failure?: ScanError;
  /**
   * The partition directory's listing as discovery read it, so the partition
   * load does not list it again. The scan takes it (and clears it) when it
   * loads the partition, so a scan of 100,000 partitions does not keep every
   * listing, and a target scanned again is listed afresh.
   */
  entries?: readonly DirectoryEntry[] | undefined;
  /**
   * What the listing of the directory's parent showed beside it: false when
   * no `<name>.segscan` is there, so the load skips the look for a salvage
   * record (docs/repair.md §6.6); undefined when discovery did not list the
   * parent (a path given as it is).
   */
  preserveDirListed?: boolean;
}

/** One path given to discovery, and what it held. */
export interface DiscoveredRoot {
  /** The path as given, made absolute. */
  path: string;
  kind: "directory" | "log" | "unreadable";
  /** A directory holding `metadata/` or `streams/` (an Iggy node root). */
  nodeRoot: boolean;
  /** Targets found under this path (partitions, the `.log`, or failed listings), before de-duplication. */
  targets: number;
}

export interface Discovery {
  /** Every target once (by real path), each root's in path order, roots in the order given. */
  targets: ScanTarget[];
  /** Directory links seen outside any partition directory and not followed. */
  skipped: IgnoredEntry[];
  roots: DiscoveredRoot[];
  /** docs/node.md N0: every node root the walk listed (a given path or a directory below one), by real path, in the order met. */
  nodeRoots: string[];
  /** Each node root's layout as the walk saw it, in path order: a queue the scan's node pass empties (`NodeLayoutFact`). */
  nodeLayout: NodeLayoutFact[];
}

export function directoryLinkEntry(path: string): IgnoredEntry {
  return {
    path,
    kind: "directory-symlink",
    message: `${path} is a symbolic link to a directory; discovery does not follow directory links (they can loop or repeat partitions), so scan its target by its own path`,
  };
}

function listFailure(path: string, cause: unknown, operation: "list" | "stat"): ScanError {
  return {
    code: "ListFailure",
    path,
    message: `cannot ${operation === "list" ? "list the directory" : "read"} ${path}: ${describeCause(cause)}; nothing under it was scanned and nothing was changed`,
  };
}

async function realPathOf(scanFs: ScanFs, path: string): Promise<string> {
  return scanFs.realpath ? scanFs.realpath(path) : path;
}

/**
 * The directories a walk has listed, by "dev:ino" (or path). One entry per
 * directory of the node, so it is the one thing discovery keeps that grows
 * with the partition count: inode numbers are kept as numbers per device
 * (a small integer costs a set slot and no string), other keys as strings.
 */
const DECIMAL = /^\d+$/;

class VisitedDirectories {
  private readonly inodesByDevice = new Map<string, Set<number>>();
  private readonly others = new Set<string>();

  /** Adds `key`; false when it was already there. */
  add(key: string): boolean {
    // "dev:ino" with decimal numbers, parsed without a regex match per directory (docs/benchmarks.md).
    const colon = key.indexOf(":");
    const device = colon > 0 ? key.slice(0, colon) : "";
    const inodeText = colon > 0 ? key.slice(colon + 1) : "";
    const inode = DECIMAL.test(device) && DECIMAL.test(inodeText) ? Number(inodeText) : Number.NaN;
    if (!Number.isSafeInteger(inode)) {
      if (this.others.has(key)) return false;
      this.others.add(key);
      return true;
    }
    let inodes = this.inodesByDevice.get(device);
    if (inodes === undefined) {
      inodes = new Set<number>();
      this.inodesByDevice.set(device, inodes);
    }
    if (inodes.has(inode)) return false;
    inodes.add(inode);
    return true;
  }
}

/** Where a streamed discovery reports what is not a target: links not followed, and each root as it is walked. */
export interface DiscoverySink {
  skipped: IgnoredEntry[];
  roots: DiscoveredRoot[];
  /** When present, every node root the walk lists (given or found below a given path) is added, by real path, before its partitions. */
  nodeRoots?: string[];
  /** When present, what the walk sees of each node root's layout is added, in path order (`NodeLayoutFact`). */
  nodeLayout?: NodeLayoutFact[];
}

/**
 * Discovers the targets under each path. A path that cannot be read becomes a
 * failed target; a file that is not named `.log` is a caller error (TypeError).
 * Collects `discoverStream`: the listings of the first DISCOVERY_LISTINGS_KEPT
 * targets are kept for their loads.
 */
export async function discover(paths: readonly string[], scanFs: ScanFs, signal?: AbortSignal): Promise<Discovery> {
  const discovery: Discovery = { targets: [], skipped: [], roots: [], nodeRoots: [], nodeLayout: [] };
  for await (const target of discoverStream(paths, scanFs, discovery, signal)) {
    if (discovery.targets.length >= DISCOVERY_LISTINGS_KEPT) target.entries = undefined;
    discovery.targets.push(target);
  }
  return discovery;
}

/**
 * Where a directory lies in a node's layout (docs/node.md N0): the node root it
 * belongs to (by real path, as in `nodeRoots`) and the names from it down.
 */
export interface NodePlace {
  root: string;
  below: readonly string[];
}

/** The names the layout expects at each level below a node root: `streams`, a stream id, `topics`, a topic id, `partitions` (null: any name). */
const NODE_LAYOUT: readonly (string | null)[] = [NODE_STREAMS_DIRECTORY, null, "topics", null, "partitions"];

/**
 * What discovery saw of a node's layout (`streams/<s>/topics/<t>/partitions`,
 * docs/node.md N0), for the node pass (src/node/pass.ts), in path order as
 * discovery walks it: each partitions dir with the names of the directories in
 * it; each dir of the layout that could not be listed; each link in the layout
 * that was not followed (what lies under it is unknown). `below` names the
 * path from the node root down.
 */
export type NodeLayoutFact = NodePlace &
  ({ kind: "partitions"; dirs: readonly string[] } | { kind: "unlisted"; cause: unknown } | { kind: "link" });

/** The place of `name` below `place`, when the layout goes on there (null: outside it, or below a partitions dir). */
function childPlace(place: NodePlace | null, name: string): NodePlace | null {
  if (place === null || place.below.length >= NODE_LAYOUT.length) return null;
  const expected = NODE_LAYOUT[place.below.length];
  return expected === null || expected === name ? { root: place.root, below: [...place.below, name] } : null;
}

/** A directory as discovery listed it: its own target (when it is a partition or unlistable) and the children to descend into. */
interface ListedDirectory {
  target: ScanTarget | null;
  /** Its "dev:ino" (or path): a target is taken once by it. */
  key: string;
  children: string[];
  /** Children that are links to directories inside a node's `streams/`: failed targets, never listed. */
  links: ReadonlySet<string>;
  /** Inside a node root's `streams/` (where the server serves what it finds, links followed). */
  underStreams: boolean;
  /** Children with a `<child>.segscan` entry beside them (docs/repair.md §6.6). */
  preserved: ReadonlySet<string>;
  /** Its own place in a node's layout (a node root's: the root, nothing below), for its children's. */
  place: NodePlace | null;
}

const NONE_PRESERVED: ReadonlySet<string> = new Set();
const NO_LINKS: ReadonlySet<string> = new Set();
/** A name the server opens below a node root: `streams` itself, a stream, topic or partition id (decimal), or the `topics`/`partitions` level. */
const SERVED_NAME = /^(?:\d+|streams|topics|partitions)$/;

/**
 * A link to a directory inside a node's `streams/`: the server follows it and
 * serves what it holds, discovery never follows a link (they can loop or repeat
 * partitions), so its bytes are not judged and the scan must not pass for
 * clean (docs/interfaces.md §4). This is the one rule for such links: `scan`
 * reports the target failed, and `scrub`, walking the same discovery, reports it unread.
 */
function linkNotFollowed(path: string): ScanError {
  return {
    code: "LinkNotFollowed",
    path,
    message:
      `${path} is a symbolic link to a directory inside the node's streams/: the server follows it, segscan does not, ` +
      "so nothing under it was judged and nothing was changed; scan its target by its own path",
  };
}

/** What every root's walk of one `discoverStream` shares. */
interface WalkContext {
  scanFs: ScanFs;
  sink: DiscoverySink;
  signal: AbortSignal | undefined;
  /** False for a target already taken through an earlier path. */
  take: (key: string) => boolean;
  /** Node roots whose layout one walk reported already: a later path through them reports targets only. */
  layoutReported: Set<string>;
}

/**
 * A directory of the walk with its children still to visit, in exact path
 * order: a child's own path (`dir/a`) and its subtree (`dir/a/…`) are two keys,
 * `a` and `a/`, sorted as strings, so `dir/a` comes before a sibling `dir/a-b`
 * (whose subtree, `a-b/`, sorts before `a/`). A child is listed at its first key
 * and its listing held until its second, usually the very next one.
 */
interface Level {
  directory: string;
  keys: string[];
  next: number;
  held: Map<string, ListedDirectory>;
  depth: number;
  listed: ListedDirectory;
}

function level(directory: string, listed: ListedDirectory, depth: number): Level {
  const keys = listed.children.flatMap((name) => [name, `${name}/`]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { directory, keys, next: 0, held: new Map(), depth, listed };
}

/**
 * One given directory's walk: its targets one by one, in exact path order.
 * One loop over a stack of directories, not a generator per level: each target
 * passed up through every level's generator cost a few promises per level
 * (docs/benchmarks.md).
 */
class DirectoryWalk {
  /** Per root, so a root inside an earlier one still counts its partitions. */
  private readonly visited = new VisitedDirectories();
  private readonly stack: Level[] = [];

  constructor(
    private readonly context: WalkContext,
    private readonly root: DiscoveredRoot,
  ) {}

  /** Lists the root; its own target, if it is one. */
  async start(realPath: string): Promise<ScanTarget | null> {
    // A root below a `streams/` (e.g. `scan node/streams/1`) is inside a node's streams tree: the links in it are served too.
    const top = await this.list(realPath, 0, realPath.split(sep).includes(NODE_STREAMS_DIRECTORY), null);
    this.stack.push(level(realPath, top, 0));
    return this.found(top);
  }

  /** The next target (null: a directory that held none; undefined: the walk is done). */
  async next(): Promise<ScanTarget | null | undefined> {
    const current = this.stack.at(-1);
    if (current === undefined) return undefined;
    const key = current.keys[current.next++];
    if (key === undefined) {
      this.stack.pop();
      return null;
    }
    const parent = current.listed;
    if (parent.links.has(key)) {
      // Its own key only (a link is never descended into): a failed target in path order.
      const linkPath = childPath(current.directory, key);
      this.layoutFact(childPlace(parent.place, key), (place) => ({ kind: "link", ...place }));
      this.root.targets++;
      return this.context.take(`link:${linkPath}`) ? { path: linkPath, singleLog: false, failure: linkNotFollowed(linkPath) } : null;
    }
    if (key.endsWith("/")) {
      const name = key.slice(0, -1);
      const listed = current.held.get(name);
      if (listed !== undefined) {
        current.held.delete(name);
        this.stack.push(level(childPath(current.directory, name), listed, current.depth + 1));
      }
      return null;
    }
    const listed = await this.list(
      childPath(current.directory, key),
      current.depth + 1,
      parent.underStreams,
      childPlace(parent.place, key),
    );
    if (listed.children.length > 0) current.held.set(key, listed);
    const target = this.found(listed);
    // The parent's listing says whether a salvage record may sit beside it (docs/repair.md §6.6).
    if (target !== null && target.failure === undefined) target.preserveDirListed = parent.preserved.has(key);
    return target;
  }

  /** The target a listing found, counted and taken (null: none, or already taken through another path). */
  private found(listed: ListedDirectory): ScanTarget | null {
    if (listed.target === null) return null;
    // Counted before de-duplication: a root inside an earlier one still holds its partitions.
    this.root.targets++;
    return this.context.take(listed.key) ? listed.target : null;
  }

  private layoutFact(place: NodePlace | null, fact: (place: NodePlace) => NodeLayoutFact): void {
    if (place !== null) this.context.sink.nodeLayout?.push(fact(place));
  }

  private async list(directory: string, depth: number, underStreams: boolean, place: NodePlace | null): Promise<ListedDirectory> {
    const { scanFs, signal } = this.context;
    if (signal?.aborted) throw abortError(signal);
    const nothing = { target: null, key: directory, children: [], links: NO_LINKS, underStreams, preserved: NONE_PRESERVED, place: null };
    if (depth > MAX_DISCOVERY_DEPTH) return nothing;
    let entries;
    let key = directory;
    try {
      const fileId = (await scanFs.stat(directory)).fileId;
      if (fileId !== undefined) key = fileId;
      if (!this.visited.add(key)) return nothing;
      entries = await scanFs.list(directory);
    } catch (cause) {
      this.layoutFact(place, (at) => ({ kind: "unlisted", ...at, cause }));
      return { ...nothing, target: { path: directory, singleLog: false, failure: listFailure(directory, cause, "list") } };
    }
    return this.classify(directory, depth, entries, key, underStreams, place);
  }

  /** A listed directory's target, children, links and place (docs/interfaces.md §9.2). */
  private classify(
    directory: string,
    depth: number,
    entries: readonly DirectoryEntry[],
    key: string,
    underStreams: boolean,
    place: NodePlace | null,
  ): ListedDirectory {
    const { sink, layoutReported } = this.context;
    const isNodeRoot = entries.some(
      (entry) => entry.isDirectory && !entry.isSymbolicLink && (NODE_ROOT_MARKERS as readonly string[]).includes(entry.name),
    );
    if (depth === 0) this.root.nodeRoot = isNodeRoot;
    let own = place;
    if (isNodeRoot) {
      sink.nodeRoots?.push(directory);
      // A node root one path's walk reported: a later path through it adds targets only, never its layout again.
      own = layoutReported.has(directory) ? null : { root: directory, below: [] };
      layoutReported.add(directory);
    }
    if (own?.below.length === NODE_LAYOUT.length) {
      const dirs = entries.filter((entry) => entry.isDirectory).map((entry) => entry.name);
      this.layoutFact(own, (at) => ({ kind: "partitions", ...at, dirs }));
    }
    // Any non-directory `.log` makes a partition, so a FIFO or an oddly named
    // file is reported by the partition load instead of being passed over.
    const isPartition = entries.some((entry) => !entry.isDirectory && entry.name.endsWith(LOG_SUFFIX));
    const children: string[] = [];
    const links = new Set<string>();
    const preserved = new Set<string>();
    for (const entry of entries) {
      if (entry.name.endsWith(PRESERVE_DIR_SUFFIX)) preserved.add(entry.name.slice(0, -PRESERVE_DIR_SUFFIX.length));
      if (!entry.isDirectory || OWN_DIRECTORY_PATTERN.test(entry.name)) continue;
      if (isNodeRoot && entry.name !== NODE_STREAMS_DIRECTORY) continue;
      if (entry.isSymbolicLink) {
        // Inside a partition the partition's own listing reports it; one named like a stream, topic or partition id
        // inside a node's streams/ (a path the server opens) is a failed target.
        if (isPartition) continue;
        if ((underStreams || isNodeRoot) && SERVED_NAME.test(entry.name)) links.add(entry.name);
        else {
          sink.skipped.push(directoryLinkEntry(join(directory, entry.name)));
          continue;
        }
      }
      children.push(entry.name);
    }
    return {
      target: isPartition ? { path: directory, singleLog: false, entries } : null,
      key,
      children,
      links: links.size === 0 ? NO_LINKS : links,
      underStreams: underStreams || isNodeRoot,
      preserved: preserved.size === 0 ? NONE_PRESERVED : preserved,
      place: own,
    };
  }
}

/**
 * Discovery as a stream (docs/benchmarks.md): each target is yielded as soon as it is
 * found, in the order `discover` returns them (each root's in path order,
 * roots in the order given), so a scan can load the first partition before
 * the last directory is listed and memory does not grow with the node. What
 * is kept while walking is the set of directories visited (by device and
 * inode) and, given several paths, the targets already taken.
 */
export async function* discoverStream(
  paths: readonly string[],
  scanFs: ScanFs,
  sink: DiscoverySink,
  signal?: AbortSignal,
): AsyncGenerator<ScanTarget, void, undefined> {
  /** Real paths (or "dev:ino") of targets already taken, so overlapping paths scan each partition once; one path needs none (`visited` already does it). */
  const taken = paths.length > 1 ? new Set<string>() : null;
  const take = (key: string): boolean => {
    if (taken === null) return true;
    if (taken.has(key)) return false;
    taken.add(key);
    return true;
  };
  const context: WalkContext = { scanFs, sink, signal, take, layoutReported: new Set() };
  for (const given of paths) {
    if (signal?.aborted) throw abortError(signal);
    const path = resolve(given);
    const root: DiscoveredRoot = { path, kind: "directory", nodeRoot: false, targets: 0 };
    sink.roots.push(root);
    let info;
    let realPath;
    try {
      info = await scanFs.stat(path);
      realPath = await realPathOf(scanFs, path);
    } catch (cause) {
      root.kind = "unreadable";
      root.targets = 1;
      if (take(path)) yield { path, singleLog: false, failure: listFailure(path, cause, "stat") };
      continue;
    }
    if (!info.isDirectory) {
      // A `.log` that is no regular file (a FIFO) is still a target: its
      // partition load reports NotRegularFile without opening it.
      if (!path.endsWith(LOG_SUFFIX)) {
        throw new TypeError(`${path} is not a .log file, a partition directory or a data directory`);
      }
      root.kind = "log";
      root.targets = 1;
      if (take(`log:${realPath}`)) yield { path: realPath, singleLog: true };
      continue;
    }
    const walk = new DirectoryWalk(context, root);
    const top = await walk.start(realPath);
    if (top !== null) yield top;
    for (let target = await walk.next(); target !== undefined; target = await walk.next()) if (target !== null) yield target;
  }
}

/**
 * Partitions under `path`: directories holding `.log` files, in path order.
 * A `.log` path is a target of its own.
 */
export async function discoverTargets(path: string, scanFs: ScanFs, signal?: AbortSignal): Promise<ScanTarget[]> {
  return (await discover([path], scanFs, signal)).targets;
}

/**
 * Bytes of `.log` data each target will read, from one listing and one stat per
 * file and no reads: sizes the worker pool decision and the progress bar's total.
 * A file that cannot be listed or stat'ed counts 0 (its partition load reports it).
 */
export async function logBytesByTarget(targets: readonly ScanTarget[], scanFs: ScanFs, signal?: AbortSignal): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  for (const target of targets) {
    if (signal?.aborted) throw abortError(signal);
    if (target.failure !== undefined) {
      totals.set(target.path, 0);
      continue;
    }
    const logs = target.singleLog
      ? [target.path]
      : await (target.entries === undefined ? scanFs.list(target.path) : Promise.resolve(target.entries)).then(
          (entries) =>
            entries.filter((entry) => entry.isFile && entry.name.endsWith(LOG_SUFFIX)).map((entry) => join(target.path, entry.name)),
          () => [] as string[],
        );
    let total = 0;
    for (const log of logs)
      total += await scanFs.stat(log).then(
        (info) => (info.isFile ? info.size : 0),
        () => 0,
      );
    totals.set(target.path, total);
  }
  return totals;
}

/**
 * What a walk of the node root `root` sees of its layout (`NodeLayoutFact`),
 * its targets passed over: the node pass's layout when no scan walked the
 * node (`scanNode`, scrub's node check; docs/node.md N0). None when `root` is no node root.
 */
export async function discoverNodeLayout(root: string, scanFs: ScanFs, signal?: AbortSignal): Promise<NodeLayoutFact[]> {
  const sink: Discovery = { targets: [], skipped: [], roots: [], nodeRoots: [], nodeLayout: [] };
  for await (const target of discoverStream([root], scanFs, sink, signal)) target.entries = undefined;
  const walked = sink.nodeRoots[0];
  return sink.roots[0]?.nodeRoot === true ? sink.nodeLayout.filter((fact) => fact.root === walked) : [];
}
