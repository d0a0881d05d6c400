/**
 * The files the scrub writes, its state and its metrics (docs/scrub.md §3.1),
 * and the rules that keep those writes off anything else: the scrub is
 * read-only toward everything it did not write itself. A path it would write
 * is resolved through every symlink first; it must lie outside the scrubbed
 * tree (and outside the node root holding it), by path and by the device and
 * inode of its directories (a bind mount), be a regular file or nothing
 * yet below a directory, and, when it exists, be a file of the scrub's own
 * format, recognised by its first bytes. The write itself is a temp file
 * beside the resolved path, fsync, rename, directory fsync, after checking
 * again that the directory still resolves to itself and that what the rename
 * replaces is still the scrub's own regular file.
 */
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { describeCause } from "../io/errors.js";
import { nodeScanFs } from "../io/fs.js";
import { isNodeRoot } from "../node/scan.js";

/**
 * How many leading bytes of an existing file are read to recognise it as the
 * scrub's own: the state's and the metrics' headers fit in far less, and a
 * bounded read never pulls a large foreign file into memory.
 */
export const RECOGNITION_HEAD_BYTES = 4096;

/** Tells the scrub's own file by its first bytes (at most RECOGNITION_HEAD_BYTES, the whole file when shorter). */
export type Recogniser = (head: string) => boolean;

/** An output file the scrub must not write (what it is, and why); nothing was written. */
export class OutputFileError extends Error {
  override readonly name: string = "OutputFileError";
}

/** What kind of file `info` describes, in words. */
export function fileKind(info: Stats): string {
  if (info.isFile()) return "a regular file";
  if (info.isDirectory()) return "a directory";
  if (info.isSymbolicLink()) return "a symlink";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  return "a special file";
}

const errnoOf = (cause: unknown): string | undefined => (cause as NodeJS.ErrnoException).code;

/** A directory's device and inode: the same directory whatever path (a bind mount, another name) reaches it. */
async function directoryIdentity(path: string): Promise<string | null> {
  const info = await stat(path, { bigint: true }).catch(() => null);
  return info?.isDirectory() ? `${info.dev}:${info.ino}` : null;
}

/**
 * The protected tree an existing ancestor of `resolved` is, by device and
 * inode, or undefined: a path reaching the tree through a bind mount has no
 * symlink to resolve, but its directories are the tree's own.
 */
async function treeByIdentity(resolved: string, trees: readonly string[]): Promise<string | undefined> {
  const byIdentity = new Map<string, string>();
  for (const tree of trees) {
    const identity = await directoryIdentity(tree);
    if (identity !== null) byIdentity.set(identity, tree);
  }
  for (let directory = dirname(resolved); ; directory = dirname(directory)) {
    const identity = await directoryIdentity(directory);
    const tree = identity === null ? undefined : byIdentity.get(identity);
    if (tree !== undefined) return tree;
    if (dirname(directory) === directory) return undefined;
  }
}

/** `child` is `parent` or lies below it (both absolute and normalised). */
function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * Symlinks followed at most while resolving one output path, as the kernel's
 * own limit (MAXSYMLINKS, 40): past it the path is a loop, not a file.
 */
const MAX_SYMLINKS_FOLLOWED = 40;

/**
 * `path` with every symlink resolved: the real path when it exists; else the
 * real path of its nearest existing ancestor with the missing names after it.
 * A symlink to something not there yet (a state file not written yet) is
 * followed by its text, so the path checked is the one a write creates.
 */
export async function resolveOutputPath(path: string, what: string): Promise<string> {
  let missing: string[] = [];
  let followed = 0;
  for (let current = resolve(path); ; ) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch (cause) {
      const code = errnoOf(cause);
      if (code !== "ENOENT" && code !== "ENOTDIR")
        throw new OutputFileError(`cannot resolve the ${what} ${path} (${describeCause(cause)})`);
    }
    const link = await lstat(current).catch(() => null);
    if (link?.isSymbolicLink()) {
      if (++followed > MAX_SYMLINKS_FOLLOWED) {
        throw new OutputFileError(`cannot resolve the ${what} ${path}: more than ${MAX_SYMLINKS_FOLLOWED} symlinks (a loop)`);
      }
      // A dangling link: go on from what it names, with the names still missing after it.
      const target = resolve(dirname(current), await readlink(current));
      current = join(target, ...[...missing].reverse());
      missing = [];
      continue;
    }
    // The root always resolves, so the loop ends there at the latest.
    if (dirname(current) === current) return join(current, ...missing.reverse());
    missing.push(basename(current));
    current = dirname(current);
  }
}

/**
 * The trees a scrub of `root` must never write into: the scrubbed directory
 * (a `.log` given alone: its partition directory), and the node root holding
 * it (the nearest ancestor holding `metadata/` or `streams/`, docs/node.md N0),
 * each both as given and with its symlinks resolved.
 */
export async function protectedTrees(root: string): Promise<string[]> {
  const given = resolve(root);
  const real = await realpath(given).catch(() => given);
  const info = await stat(real).catch(() => null);
  const trees = info !== null && !info.isDirectory() ? [dirname(given), dirname(real)] : [given, real];
  // A node root is the widest tree there is (node roots do not nest): only a partition, or a dir below a node root, looks up.
  if (await isNodeRoot(trees[1]!, nodeScanFs).catch(() => false)) return [...new Set(trees)];
  for (let ancestor = dirname(trees[1]!); dirname(ancestor) !== ancestor; ancestor = dirname(ancestor)) {
    if (await isNodeRoot(ancestor, nodeScanFs).catch(() => false)) {
      trees.push(ancestor);
      break;
    }
  }
  return [...new Set(trees)];
}

/**
 * Why `path` cannot be a file the scrub rewrites, or null when it can: it must
 * be a regular file or absent, and its nearest existing ancestor a directory.
 * Only `stat` is used, never `open`: opening a FIFO blocks until a writer
 * appears (a reading thread that never returns, and a process that cannot
 * exit), and reading a device may never end.
 */
export async function rewritableFileProblem(path: string, what: string): Promise<string | null> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (cause) {
    const code = errnoOf(cause);
    if (code !== "ENOENT" && code !== "ENOTDIR") return `cannot stat the ${what} ${path} (${describeCause(cause)})`;
    return ancestorProblem(path, what);
  }
  return info.isFile()
    ? null
    : `the ${what} ${path} is ${fileKind(info)}, not a regular file: give the path of a regular file (or of none yet)`;
}

/** The nearest existing ancestor of a missing `path` must be a directory (it is created below it). */
async function ancestorProblem(path: string, what: string): Promise<string | null> {
  for (let parent = dirname(resolve(path)); ; parent = dirname(parent)) {
    try {
      const info = await stat(parent);
      if (info.isDirectory()) return null;
      return `the ${what} ${path} cannot be created: its parent ${parent} is ${fileKind(info)}, not a directory`;
    } catch (cause) {
      const code = errnoOf(cause);
      if (code !== "ENOENT" && code !== "ENOTDIR")
        return `cannot stat ${parent}, a parent of the ${what} ${path} (${describeCause(cause)})`;
      if (parent === dirname(parent)) return null;
    }
  }
}

/**
 * The first bytes of the regular file at `path`, never blocking and never
 * following a symlink: O_NONBLOCK makes the open of a FIFO swapped in since
 * the last `stat` return at once, O_NOFOLLOW refuses a symlink swapped in, and
 * the `fstat` refuses anything but a regular file before any read.
 */
async function readHead(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new OutputFileError(`it is ${fileKind(info)}, not a regular file`);
    const buffer = new Uint8Array(Math.min(RECOGNITION_HEAD_BYTES, info.size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return new TextDecoder("utf-8", { fatal: false }).decode(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Why the existing file at resolved `path` is not the scrub's own (`recognise`), or null when it is, or is absent. */
async function foreignFileProblem(path: string, shown: string, what: string, recognise: Recogniser): Promise<string | null> {
  let head: string;
  try {
    head = await readHead(path);
  } catch (cause) {
    if (errnoOf(cause) === "ENOENT") return null;
    return `cannot read the ${what} ${shown} to check that segscan wrote it (${describeCause(cause)})`;
  }
  if (recognise(head)) return null;
  const looks = head.length === 0 ? "is empty" : "holds something else";
  return (
    `the ${what} ${shown} exists and is not a ${what} segscan wrote (it ${looks}): segscan replaces only its own files; ` +
    `give a path that does not exist yet, or move that file away`
  );
}

export interface OutputCheck {
  /** The path as given (shown in messages). */
  path: string;
  /** "state file", "metrics file". */
  what: string;
  recognise: Recogniser;
  /** Who reads the protected trees, in the refusal (default "the scrub"; `scan --html` says "the scan"). */
  reader?: string;
}

/**
 * Checks one output path against the trees a scrub reads (protectedTrees) and returns it resolved
 * (the path every later read and write uses), or throws OutputFileError
 * saying why it may not be written. Nothing is created or written.
 */
export async function checkOutputPath(check: OutputCheck, trees: readonly string[]): Promise<string> {
  const { path, what, recognise, reader = "the scrub" } = check;
  const resolved = await resolveOutputPath(path, what);
  const shown = resolved === resolve(path) ? path : `${path} (${resolved})`;
  const inside = trees.find((tree) => isWithin(resolve(path), tree) || isWithin(resolved, tree));
  const mounted = inside === undefined ? await treeByIdentity(resolved, trees) : undefined;
  if (inside !== undefined || mounted !== undefined) {
    const how = mounted === undefined ? "" : " (reached by another path, a bind mount: its directory is that tree's own)";
    throw new OutputFileError(
      `the ${what} ${shown} lies inside ${inside ?? mounted}${how}, which ${reader} reads: segscan writes nothing there; give a path outside it`,
    );
  }
  const problem = (await rewritableFileProblem(resolved, what)) ?? (await foreignFileProblem(resolved, shown, what, recognise));
  if (problem !== null) throw new OutputFileError(problem.replace(`the ${what} ${resolved}`, `the ${what} ${shown}`));
  return resolved;
}

/**
 * Writes `text` to `path` (already resolved, checkOutputPath) atomically: a
 * unique temp file beside it (O_EXCL: never an existing file, never through a
 * symlink), fsync, rename over `path`, fsync of the directory (so the rename
 * itself is durable). A crash leaves the old file or the new one, plus at worst
 * a stray temp file. Just before the rename it checks again that the directory
 * resolves to itself (no symlink swapped into the path since the check) and
 * that what the rename replaces is absent or a regular file `recognise` calls
 * the scrub's own: otherwise the temp file is removed and nothing is replaced.
 */
export async function writeOwnFileAtomic(path: string, text: string, what: string, recognise: Recogniser): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const temporaryPath = join(directory, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const handle = await open(temporaryPath, "wx", 0o644);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporaryPath, { force: true });
    throw error;
  }
  await handle.close();
  try {
    const realDirectory = await realpath(directory);
    if (realDirectory !== directory) {
      throw new OutputFileError(
        `the directory ${directory} of the ${what} now resolves to ${realDirectory} (a symlink was put in its path)`,
      );
    }
    const existing = await lstat(path).catch((cause: unknown) => {
      if (errnoOf(cause) === "ENOENT") return null;
      throw cause;
    });
    if (existing !== null) {
      const problem = existing.isFile()
        ? await foreignFileProblem(path, path, what, recognise)
        : `the ${what} ${path} is now ${fileKind(existing)}, not the regular file segscan wrote`;
      if (problem !== null) throw new OutputFileError(`${problem}; it was left as it is`);
    }
    await rename(temporaryPath, path);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
  const directoryHandle = await open(directory, "r");
  try {
    await directoryHandle.sync();
  } finally {
    await directoryHandle.close();
  }
}
