/**
 * The scrub's incremental state (docs/scrub.md §3): what was verified, when,
 * and the XXH3-64 of every sealed segment's bytes, keyed by segment path.
 * Written atomically (temp file + fsync + rename + directory fsync), so a
 * kill -9 at any instant leaves the previous state or the new one, never a torn
 * one. A state file that does not parse is reported and ignored: the pass is a
 * full pass, never a crash.
 */
import { constants, type Stats } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { hex64 } from "../format/bytes.js";
import { xxh3_64 } from "../hash/xxh3.js";
import { describeCause } from "../io/errors.js";

/** Bumped on any incompatible change; a state of another version is ignored (full pass). */
export const SCRUB_STATE_VERSION = 1;

export interface SegmentState {
  size: number;
  /** Modification time in nanoseconds since the epoch (decimal string, exact). */
  mtimeNs: string;
  /** Decimal string: inode numbers are u64. */
  inode: string;
  /** Whether the segment was sealed (not its partition's last) when verified. */
  sealed: boolean;
  /** ISO time of the verification. */
  verifiedAt: string;
  /** Bytes proven from byte 0 (the whole size for a clean sealed segment). */
  verifiedBytes: number;
  /** Offset the next batch must reach after `verifiedBytes` (decimal u64), to resume an active segment. */
  nextOffset: string;
  /** XXH3-64 (16 hex digits) of a sealed segment's bytes; null for an active one. */
  xxh3: string | null;
}

export interface ScrubTotals {
  bytesVerified: number;
  segmentsVerified: number;
  passesCompleted: number;
}

export interface ScrubState {
  version: number;
  root: string;
  segments: Record<string, SegmentState>;
  /** ISO time the last pass that visited every segment finished; null before the first. */
  lastFullPassAt: string | null;
  /** Cumulative across runs, for the metrics' counters. */
  totals: ScrubTotals;
}

export function emptyState(root: string): ScrubState {
  return {
    version: SCRUB_STATE_VERSION,
    root,
    segments: {},
    lastFullPassAt: null,
    totals: { bytesVerified: 0, segmentsVerified: 0, passesCompleted: 0 },
  };
}

/** `$XDG_STATE_HOME/segscan` or `~/.local/state/segscan` (XDG base directory spec). */
export function defaultStateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/") ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "segscan");
}

/** One state file per scrubbed root, named by the root's hash so two roots never share one. */
export function defaultStatePath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const absolute = resolve(root);
  const digest = hex64(xxh3_64(new TextEncoder().encode(absolute)));
  return join(defaultStateDirectory(env), `scrub-${basename(absolute) || "root"}-${digest}.json`);
}

export type StateLoad =
  | { state: ScrubState; problem: null }
  /** The file exists but was ignored (why in `problem`): the pass is a full pass. */
  | { state: ScrubState; problem: string };

function isSegmentState(value: unknown): value is SegmentState {
  const v = value as Partial<SegmentState> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    Number.isSafeInteger(v.size) &&
    typeof v.mtimeNs === "string" &&
    /^\d+$/.test(v.mtimeNs) &&
    typeof v.inode === "string" &&
    typeof v.sealed === "boolean" &&
    typeof v.verifiedAt === "string" &&
    !Number.isNaN(Date.parse(v.verifiedAt)) &&
    Number.isSafeInteger(v.verifiedBytes) &&
    typeof v.nextOffset === "string" &&
    /^\d{1,20}$/.test(v.nextOffset) &&
    (v.xxh3 === null || (typeof v.xxh3 === "string" && /^[0-9a-f]{16}$/.test(v.xxh3)))
  );
}

/** The state file given cannot be used (not a regular file, or its parent is not a directory); nothing was read or written. */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
}

/** What kind of file `info` describes, in words. */
function fileKind(info: Stats): string {
  if (info.isFile()) return "a regular file";
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  return "a special file";
}

/**
 * Why `path` cannot be a file the scrub rewrites (its state or metrics file),
 * or null when it can: it must be a regular file or absent, and its nearest
 * existing ancestor a directory. Only `stat` is used, never `open`: opening a
 * FIFO blocks until a writer appears (a reading thread that never returns, and
 * a process that cannot exit), and reading a device may never end.
 */
export async function rewritableFileProblem(path: string, what: string): Promise<string | null> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
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
      const code = (cause as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR")
        return `cannot stat ${parent}, a parent of the ${what} ${path} (${describeCause(cause)})`;
      if (parent === dirname(parent)) return null;
    }
  }
}

/**
 * Reads a state file that must be a regular file, never blocking: O_NONBLOCK
 * makes the open of a FIFO (swapped in after `rewritableFileProblem`) return at
 * once, and the `fstat` refuses it before any read.
 */
async function readRegularFile(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`it is ${fileKind(info)}, not a regular file`);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** Reads the state; absent → empty (no problem); unparsable or foreign → empty with the reason. */
export async function loadState(path: string, root: string): Promise<StateLoad> {
  let text: string;
  try {
    text = await readRegularFile(path);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return { state: emptyState(root), problem: null };
    return { state: emptyState(root), problem: `cannot read the state file ${path} (${describeCause(cause)}); running a full pass` };
  }
  const ignored = (why: string): StateLoad => ({
    state: emptyState(root),
    problem: `state file ${path} ${why}; ignored, running a full pass (it is rewritten at the end)`,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return ignored(`is not valid JSON (${(cause as Error).message})`);
  }
  const candidate = parsed as Partial<ScrubState> | null;
  if (typeof candidate !== "object" || candidate === null || candidate.version !== SCRUB_STATE_VERSION) {
    return ignored(`is not a version-${SCRUB_STATE_VERSION} scrub state`);
  }
  if (candidate.root !== root) return ignored(`belongs to another root (${String(candidate.root)})`);
  if (typeof candidate.segments !== "object" || candidate.segments === null) return ignored("has no segment table");
  const totals = candidate.totals;
  if (
    typeof totals !== "object" ||
    totals === null ||
    ![totals.bytesVerified, totals.segmentsVerified, totals.passesCompleted].every(Number.isSafeInteger)
  ) {
    return ignored("has no valid totals");
  }
  for (const [segmentPath, entry] of Object.entries(candidate.segments)) {
    if (!isSegmentState(entry)) return ignored(`has a malformed entry for ${segmentPath}`);
  }
  const lastFullPassAt = typeof candidate.lastFullPassAt === "string" ? candidate.lastFullPassAt : null;
  return { state: { version: SCRUB_STATE_VERSION, root, segments: candidate.segments, lastFullPassAt, totals }, problem: null };
}

/**
 * Writes `text` to `path` atomically: a unique temp file beside it, fsync, rename
 * over `path`, fsync of the directory (so the rename itself is durable). A crash
 * leaves the old file or the new one, plus at worst a stray temp file.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
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

export async function saveState(path: string, state: ScrubState): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(state, null, 1) + "\n");
}
