/**
 * The one thin I/O layer the scanner reads through. Everything above it is
 * pure over bytes; tests substitute a fake to inject read failures (docs/recovery.md §3.6).
 */
import {
  type Dirent,
  close,
  closeSync,
  constants,
  fstat,
  fstatSync,
  open,
  openSync,
  read,
  readSync,
  readdirSync,
  realpathSync,
  stat as statCallback,
  statSync,
} from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";

/**
 * `isFile` and `isDirectory` describe what a symbolic link points at; an
 * entry that is neither (FIFO, socket, device) is never opened by the scan.
 */
export interface DirectoryEntry {
  name: string;
  /** A regular file (through a link, if it is one). */
  isFile: boolean;
  isDirectory: boolean;
  /** The entry itself is a symbolic link. Discovery never descends through a link to a directory. */
  isSymbolicLink?: boolean;
}

export interface ReadableFile {
  /** The file's size when it was opened (from the `fstat` that checked it is a regular file), when the layer knows it. */
  readonly size?: number;
  /** Reads up to `target.length` bytes at `position`; resolves to the count read (0 at end of file). */
  read(target: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * A file opened by a layer with blocking calls (`ScanFs.openBlocking`): its
 * size from the `fstat` that checked it is a regular file, and reads that
 * return their count, so a partition load that needs nothing else runs
 * without a promise (docs/benchmarks.md "Breakdown").
 */
export interface BlockingFile extends ReadableFile {
  readonly size: number;
  /** Reads up to `target.length` bytes at `position`; the count read (0 at end of file). */
  readBlocking(target: Uint8Array, position: number): number;
  closeBlocking(): void;
}

export interface FileStat {
  size: number;
  /** A regular file: only these are ever opened. */
  isFile: boolean;
  isDirectory: boolean;
  /**
   * Device and inode ("dev:ino"), so discovery visits each directory once even
   * when a bind mount makes a loop. Without it, only the depth limit applies.
   */
  fileId?: string;
}

/** The error `open` rejects with for anything that is not a regular file (a FIFO would block the open). */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  readonly code = "ENOTREGULAR";
  constructor(readonly path: string) {
    super(`${path} is not a regular file (a FIFO, socket or device); it was not read`);
  }
}

/**
 * Opens for reading without blocking on a FIFO (O_NONBLOCK has no effect on
 * regular files), then refuses anything that is not a regular file: a path
 * can change kind between the listing and the open.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

export interface ScanFs {
  list(directory: string): Promise<DirectoryEntry[]>;
  stat(path: string): Promise<FileStat>;
  open(path: string): Promise<ReadableFile>;
  /** The canonical path (links resolved), to scan overlapping paths once; identity when absent. */
  realpath?(path: string): Promise<string>;
  /**
   * True only when a listing taken earlier in this scan shows `path` does not
   * exist (see `withListing`), so a caller can skip a stat that would fail:
   * a failing stat costs a syscall and an exception (docs/benchmarks.md: a node's pass
   * over thousands of partitions probes ~8 optional files each). False means
   * "unknown": stat it.
   */
  knownAbsent?(path: string): boolean;
  /**
   * `open`, blocking: the same checks and the same errors, with no promise.
   * Only a layer whose calls block anyway has it (`nodeBlockingScanFs`); a
   * scan through a layer without it takes the promise path for every file.
   */
  openBlocking?(path: string): BlockingFile;
  /**
   * `open`, marked as a call that can be made again with the same effect:
   * only the node's own async layer has it, so a load may attempt a partition
   * and do it again on the promise path (`retryableOpenOf`). A layer that
   * counts its calls (a test's injected fault) has none.
   */
  openRetryable?(path: string): Promise<ReadableFile>;
}

/**
 * `scanFs`, told that `directory` held exactly `names` when it was listed:
 * `knownAbsent` answers for any path under a name the listing did not hold.
 * Every other call goes to `scanFs` unchanged (a listed name is still stat'ed
 * and read, so a file removed since the listing is reported as usual).
 */
export function withListing(scanFs: ScanFs, directory: string, names: ReadonlySet<string>): ScanFs {
  const prefix = directory.endsWith(sep) ? directory : directory + sep;
  return overlay(scanFs, {
    knownAbsent(path) {
      if (scanFs.knownAbsent?.(path)) return true;
      if (!path.startsWith(prefix)) return false;
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf(sep);
      return !names.has(slash < 0 ? rest : rest.slice(0, slash));
    },
  });
}

/** `scanFs` with some of its calls replaced; every other call goes to `scanFs` (bound, so a class instance works too). */
function overlay(scanFs: ScanFs, replaced: Partial<ScanFs>): ScanFs {
  return {
    list: (path) => scanFs.list(path),
    stat: (path) => scanFs.stat(path),
    open: (path) => scanFs.open(path),
    ...(scanFs.realpath === undefined ? {} : { realpath: (path: string) => scanFs.realpath!(path) }),
    ...(scanFs.knownAbsent === undefined ? {} : { knownAbsent: (path: string) => scanFs.knownAbsent!(path) }),
    // A replaced `open` replaces its blocking twin too: the layer's own would bypass it.
    ...(scanFs.openBlocking === undefined || replaced.open !== undefined
      ? {}
      : { openBlocking: (path: string) => scanFs.openBlocking!(path) }),
    ...(scanFs.openRetryable === undefined || replaced.open !== undefined
      ? {}
      : { openRetryable: (path: string) => scanFs.openRetryable!(path) }),
    ...replaced,
  };
}

/** A listing entry as the scan sees it; `linkTarget` stats what a symbolic link points at (null when it dangles). */
function toEntry(
  entry: Dirent,
  linkTarget: (path: string) => { isFile(): boolean; isDirectory(): boolean } | null,
  directory: string,
): DirectoryEntry {
  if (!entry.isSymbolicLink()) {
    return { name: entry.name, isFile: entry.isFile(), isDirectory: entry.isDirectory(), isSymbolicLink: false };
  }
  // A link is what it points at. A dangling one is listed as a file, so the
  // scan fails to open it (OpenFailure) instead of pretending it is absent.
  const target = linkTarget(join(directory, entry.name));
  return { name: entry.name, isFile: target?.isFile() ?? true, isDirectory: target?.isDirectory() ?? false, isSymbolicLink: true };
}

interface StatFields<T> {
  size: T;
  dev: T;
  ino: T;
  isFile(): boolean;
  isDirectory(): boolean;
}

function toFileStat(info: StatFields<bigint | number>): FileStat {
  return { size: Number(info.size), isFile: info.isFile(), isDirectory: info.isDirectory(), fileId: `${info.dev}:${info.ino}` };
}

/**
 * A number stat is several times cheaper than a bigint one (docs/benchmarks.md: a scan
 * stats every segment file), and exact whenever every field is below 2^53;
 * an inode or device number above that (possible on some filesystems) is
 * rounded, which could merge two directories' identities, so such a file is
 * stat'ed again with bigints.
 */
function exactEnough(info: StatFields<number>): boolean {
  return Number.isSafeInteger(info.ino) && Number.isSafeInteger(info.dev) && Number.isSafeInteger(info.size);
}

export const nodeScanFs: ScanFs = {
  async list(directory) {
    const entries = await readdir(directory, { withFileTypes: true });
    const links = new Map<string, { isFile(): boolean; isDirectory(): boolean } | null>();
    await Promise.all(
      entries
        .filter((entry) => entry.isSymbolicLink())
        .map(async (entry) => {
          const path = join(directory, entry.name);
          links.set(path, await stat(path).catch(() => null));
        }),
    );
    return entries.map((entry) => toEntry(entry, (path) => links.get(path) ?? null, directory));
  },
  async stat(path) {
    const info = await settle<StatFields<number>>((done) => statCallback(path, done));
    return toFileStat(exactEnough(info) ? info : await settle<StatFields<bigint>>((done) => statCallback(path, { bigint: true }, done)));
  },
  realpath: (path) => realpath(path),
  // File calls go through the callback API on a plain descriptor: on Node 20 a
  // FileHandle (fs/promises) costs several times more per open/stat/read/close,
  // which dominates a scan of many small partitions (docs/benchmarks.md). Every caller
  // closes what it opened in a `finally`.
  open: openAsync,
  openRetryable: openAsync,
};

/** `nodeScanFs.open`: open, then refuse anything that is not a regular file (a path can change kind after its listing). */
async function openAsync(path: string): Promise<ReadableFile> {
  const fd = await settle<number>((done) => open(path, OPEN_FLAGS, done));
  let info: { isFile(): boolean; size: number };
  try {
    info = await settle<{ isFile(): boolean; size: number }>((done) => fstat(fd, done));
  } catch (error) {
    await settle<void>((done) => close(fd, done));
    throw error;
  }
  if (!info.isFile()) {
    await settle<void>((done) => close(fd, done));
    throw new NotRegularFileError(path);
  }
  return {
    size: info.size,
    read: (target, position) => settle<number>((done) => read(fd, target, 0, target.length, position, done)),
    close: () => settle<void>((done) => close(fd, done)),
  };
}

/** A Node callback call as a promise. */
function settle<T>(call: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolvePromise, rejectPromise) => {
    call((error, value) => (error ? rejectPromise(error) : resolvePromise(value as T)));
  });
}

/**
 * The same filesystem with blocking calls (listing, stats and positioned reads). On this class of VM a
 * page-cache read of 1 MiB costs ~55 µs on the calling thread but ~110 µs
 * through libuv's threadpool, so for a thread that does nothing else (a pool
 * worker, the CLI, the scan thread) blocking reads nearly halve the I/O time. The scan still
 * yields macrotasks (docs/engines.md §7.1), but each read blocks the event loop
 * while it runs: a service's main thread should keep the default (async, which
 * `scanPath` runs on the scan thread, docs/engines.md §7.6).
 */
/** What a link points at, or null when it cannot be stat'ed (dangling, a loop, no permission), as the async listing does. */
function statOrNull(path: string): { isFile(): boolean; isDirectory(): boolean } | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

export const nodeBlockingScanFs: ScanFs = {
  // Listing and stats block too: a small partition costs a handful of metadata
  // calls, and each async one is a thread-pool round trip that leaves this
  // thread idle (docs/benchmarks.md: 57% idle on 2,000 small partitions).
  async list(directory) {
    return readdirSync(directory, { withFileTypes: true }).map((entry) => toEntry(entry, statOrNull, directory));
  },
  async stat(path) {
    const info = statSync(path);
    return toFileStat(exactEnough(info) ? info : statSync(path, { bigint: true }));
  },
  async realpath(path) {
    return realpathSync(path);
  },
  async open(path) {
    return openBlocking(path);
  },
  openBlocking,
};

/** `nodeBlockingScanFs.open` without its promise: open, then refuse anything that is not a regular file (a path can change kind after its listing). */
function openBlocking(path: string): BlockingFile {
  const fd = openSync(path, OPEN_FLAGS);
  let info: { isFile(): boolean; size: number };
  try {
    info = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!info.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(path);
  }
  return new BlockingDescriptor(fd, info.size);
}

/** One descriptor with both faces: the promise one every caller can use, and the blocking one. */
class BlockingDescriptor implements BlockingFile {
  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  readBlocking(target: Uint8Array, position: number): number {
    return readSync(this.fd, target, 0, target.length, position);
  }

  closeBlocking(): void {
    closeSync(this.fd);
  }

  async read(target: Uint8Array, position: number): Promise<number> {
    return this.readBlocking(target, position);
  }

  async close(): Promise<void> {
    this.closeBlocking();
  }
}

/**
 * The blocking open a load may use in place of `scanFs.open`, when it opens
 * what `open` opens: a layer spread from `nodeBlockingScanFs` with an `open`
 * of its own (a test's injected failure, a caller's filter) still carries the
 * node's `openBlocking`, which would bypass it, so it gets none.
 */
export function blockingOpenOf(scanFs: ScanFs): ((path: string) => BlockingFile) | undefined {
  const openBlocking = scanFs.openBlocking;
  if (openBlocking === undefined) return undefined;
  if (openBlocking === nodeBlockingScanFs.openBlocking && scanFs.open !== nodeBlockingScanFs.open) return undefined;
  return (path) => openBlocking.call(scanFs, path);
}

/**
 * `scanFs`, with files already open: the first `open` of one of their paths
 * returns that handle (and forgets it), every other call goes to `scanFs`.
 * The caller closes whatever is still in `opened` when it is done.
 */
export function withOpenFiles(scanFs: ScanFs, opened: Map<string, ReadableFile>): ScanFs {
  return overlay(scanFs, {
    async open(path) {
      const file = opened.get(path);
      if (file === undefined) return scanFs.open(path);
      opened.delete(path);
      return file;
    },
  });
}

/**
 * The open a load may use to attempt a partition it may then do again on the
 * promise path (`ScanFs.openRetryable`): none when a layer spread from
 * `nodeScanFs` has an `open` of its own, which the attempt would bypass.
 */
export function retryableOpenOf(scanFs: ScanFs): ((path: string) => Promise<ReadableFile>) | undefined {
  const openRetryable = scanFs.openRetryable;
  if (openRetryable === undefined) return undefined;
  if (openRetryable === nodeScanFs.openRetryable && scanFs.open !== nodeScanFs.open) return undefined;
  return (path) => openRetryable.call(scanFs, path);
}
