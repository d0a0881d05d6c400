/**
 * The scrub's incremental state (docs/scrub.md §3): what was verified, when,
 * and the XXH3-64 of every sealed segment's bytes, keyed by segment path.
 * Written atomically (temp file + fsync + rename + directory fsync), so a
 * kill -9 at any instant leaves the previous state or the new one, never a torn
 * one. Its first line marks it as the scrub's (`SCRUB_STATE_FORMAT`): an
 * existing file without it is never read as a state nor replaced
 * (docs/scrub.md §3.1). A marked file that does not parse is reported and
 * ignored: the pass is a full pass, never a crash.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { hex64 } from "../format/bytes.js";
import { xxh3_64 } from "../hash/xxh3.js";
import { describeCause } from "../io/errors.js";
import { OutputFileError, fileKind, writeOwnFileAtomic } from "./output-file.js";

/** Bumped on any incompatible change; a state of another version is ignored (full pass). */
export const SCRUB_STATE_VERSION = 1;

/**
 * The state file's first key, written first: what tells the scrub's own state
 * from any other file at the path (docs/scrub.md §3.1), by its first bytes.
 */
export const SCRUB_STATE_FORMAT = "segscan scrub state";

/** How a state file begins: `saveState` writes the format key first, one space of indent (JSON.stringify(…, null, 1)). */
const STATE_HEAD = `{\n "format": ${JSON.stringify(SCRUB_STATE_FORMAT)},\n`;
/** How the states of earlier releases begin (no format key; version 1 was the first and only version). */
const LEGACY_STATE_HEAD = `{\n "version": 1,\n "root": "`;

/** Whether a file beginning with `head` is a state file the scrub wrote (any version, torn or not). */
export function isScrubStateHead(head: string): boolean {
  return head.startsWith(STATE_HEAD) || head.startsWith(LEGACY_STATE_HEAD);
}

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
  /**
   * ISO time the last pass ended that was complete and read every file it
   * meant to (no UnreadableFile, no failed node item): the metrics'
   * `segscan_scrub_last_success_timestamp_seconds`. Null before the first.
   */
  lastSuccessAt: string | null;
  /** Cumulative across runs, for the metrics' counters. */
  totals: ScrubTotals;
}

export function emptyState(root: string): ScrubState {
  return {
    version: SCRUB_STATE_VERSION,
    root,
    segments: {},
    lastFullPassAt: null,
    lastSuccessAt: null,
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

/**
 * The state file cannot be used (inside the scrubbed tree, not a regular file,
 * a parent that is no directory, or a file the scrub did not write); nothing was read or written.
 */
export class StateFileError extends OutputFileError {
  override readonly name = "StateFileError";
}

/**
 * Reads a state file that must be a regular file, never blocking: O_NONBLOCK
 * makes the open of a FIFO (swapped in after the path was checked) return at
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
  const isoOrNull = (value: unknown): string | null => (typeof value === "string" && !Number.isNaN(Date.parse(value)) ? value : null);
  const lastFullPassAt = isoOrNull(candidate.lastFullPassAt);
  const lastSuccessAt = isoOrNull(candidate.lastSuccessAt);
  return {
    state: { version: SCRUB_STATE_VERSION, root, segments: candidate.segments, lastFullPassAt, lastSuccessAt, totals },
    problem: null,
  };
}

/**
 * Writes the state atomically (src/scrub/output-file.ts), its format key
 * first; `path` is the resolved path the check returned (checkOutputPath), and
 * a file swapped in there since that is not the scrub's is left alone.
 */
export async function saveState(path: string, state: ScrubState): Promise<void> {
  const text = JSON.stringify({ format: SCRUB_STATE_FORMAT, ...state }, null, 1) + "\n";
  await writeOwnFileAtomic(path, text, "scrub state file", isScrubStateHead);
}
