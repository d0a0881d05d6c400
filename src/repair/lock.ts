/**
 * docs/repair.md §6.2: one writer at a time. `repair --apply` and `restore`
 * take an exclusive lock per target (a partition dir, or `metadata/`): a file
 * created with `wx` (O_CREAT | O_EXCL) in its preserve dir, holding the pid,
 * host, start time and command of its holder; a second run refuses while it
 * exists and says how to clear a stale one. The lock is released (its file
 * removed) on every exit path of the run that took it (and at process exit,
 * see `releaseAtExit`); only a process killed outright (SIGKILL, power cut)
 * leaves it behind.
 *
 * The lock goes through the `RepairFs` seam like every other write, so the
 * crash models see it: the file is written, fsynced, and its directory
 * fsynced, so a lock that was taken survives a power cut (and then refuses
 * the next run until an operator clears it, as after `kill -9`).
 *
 * They also refuse while a file a step touches is open for writing by another
 * process, where the platform lets that be seen (`findWriters`).
 */
import { promises as fsp, readlinkSync, rmSync, rmdirSync } from "node:fs";
import { hostname } from "node:os";
import * as path from "node:path";
import { shellQuote } from "../domain/command.js";
import { RepairError } from "./errors.js";
import { RepairIoError, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";

export const LOCK_NAME = "lock";

/** What the lock file holds (one JSON object). */
export interface LockInfo {
  pid: number;
  host: string;
  /** ISO 8601 start time of the holder. */
  started: string;
  command: string;
  /**
   * The holder's pid namespace (`/proc/self/ns/pid`, Linux), so a lock is
   * judged stale only by a run that sees the same pids (absent: unknown, in
   * older locks and elsewhere; such a lock is never reclaimed by itself).
   */
  pidNamespace?: string;
}

/**
 * Next to the lock while a run reclaims a stale one (docs/repair.md §6.2 rule
 * 2): created exclusively, so two runs never reclaim at once; removed when the
 * reclaim is done.
 */
export const RECLAIM_NAME = "lock.reclaim";

/** This process's pid namespace, or null where it cannot be read (not Linux). */
function ownPidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

/** Whether `pid` names no process this one can see (ESRCH); EPERM means it exists. */
function pidGone(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * docs/repair.md §6.2 rule 2: a lock is stale, and may be reclaimed without
 * an operator, only when its holder ran on this host, in this pid namespace,
 * and its pid is not running: that run was killed (a lock is removed on every
 * other exit). A reused pid looks alive, which only keeps the lock (the safe
 * side); a lock from another host or namespace, or an older lock without a
 * namespace, is never judged here.
 */
function isStale(holder: LockInfo | null): holder is LockInfo {
  if (holder === null || holder.host !== hostname()) return false;
  const own = ownPidNamespace();
  return own !== null && holder.pidNamespace === own && pidGone(holder.pid);
}

/** Another run holds the target's lock (or left it behind when it was killed). Nothing was changed. */
export class LockHeldError extends RepairError {
  override name = "LockHeldError";
  constructor(
    message: string,
    lockPath: string,
    readonly holder: LockInfo | null,
  ) {
    super(message, { path: lockPath });
  }
}

/** Another process has a file the run would change open for writing. Nothing was changed. */
export class WriterOpenError extends RepairError {
  override name = "WriterOpenError";
  constructor(
    message: string,
    dir: string,
    readonly writers: readonly OpenWriter[],
  ) {
    super(message, { path: dir });
  }
}

/**
 * Locks this process holds on the real filesystem, removed synchronously if
 * it exits without releasing them (a second Ctrl-C exits at once with
 * `process.exit`). Only a kill that runs no code (SIGKILL, a power cut)
 * leaves a stale lock.
 */
const heldLocks = new Map<string, { preserveDir: string; created: boolean }>();
let exitHookInstalled = false;

function releaseAtExit(): void {
  for (const [lockPath, { preserveDir, created }] of heldLocks) {
    try {
      rmSync(lockPath, { force: true });
      if (created) rmdirSync(preserveDir);
    } catch {
      // not empty, or already gone: nothing else to do while exiting
    }
  }
  heldLocks.clear();
}

export interface HeldLock {
  lockPath: string;
  release(): Promise<void>;
}

const encoder = new TextEncoder();

type LockFile = Awaited<ReturnType<RepairFs["open"]>>;

/**
 * Creates the lock file exclusively; a lock left by a killed run on this host
 * is reclaimed first (docs/repair.md §6.2 rule 2). Throws `LockHeldError`
 * naming the holder of a live lock.
 */
async function createLockFile(
  fs: RepairFs,
  preserveDir: string,
  lockPath: string,
  what: string,
  info: LockInfo,
  created: boolean,
): Promise<LockFile> {
  try {
    return await fs.open(lockPath, "wx");
  } catch (error) {
    if (!isExists(error)) {
      if (created) await fs.rmdir(preserveDir).catch(() => {});
      throw withNothingChanged(error);
    }
  }
  if (!(await reclaimStale(fs, preserveDir, lockPath, what, info))) throw await heldError(fs, lockPath, what);
  try {
    return await fs.open(lockPath, "wx");
  } catch (again) {
    if (!isExists(again)) throw withNothingChanged(again);
    throw await heldError(fs, lockPath, what);
  }
}

/** Writes the holder's line whole, then syncs and closes the file. */
async function writeLockInfo(file: LockFile, lockPath: string, info: LockInfo): Promise<void> {
  const bytes = encoder.encode(`${JSON.stringify(info)}\n`);
  for (let done = 0; done < bytes.length; ) {
    const written = await file.write(bytes, done, bytes.length - done, done);
    if (written <= 0) throw new RepairError(`writing the lock file ${lockPath} made no progress at byte ${done}`, { path: lockPath });
    done += written;
  }
  await file.sync();
  await file.close();
}

/**
 * Creates `<preserveDir>/lock` exclusively (the preserve dir is created if
 * missing: an empty directory beside the target, nothing inside it), writes
 * and fsyncs it and its directory. Throws `LockHeldError` naming the holder
 * when the file exists.
 */
export async function acquireLock(fs: RepairFs, preserveDir: string, what: string, command: string): Promise<HeldLock> {
  const lockPath = path.join(preserveDir, LOCK_NAME);
  // A preserve dir made only to hold the lock is removed again on release if it is still empty.
  const created = (await fs.stat(preserveDir)) === null;
  try {
    if (created) {
      await fs.mkdir(preserveDir);
      await fs.syncDir(path.dirname(preserveDir));
    }
  } catch (error) {
    throw withNothingChanged(error);
  }
  const namespace = ownPidNamespace();
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
    command,
    ...(namespace === null ? {} : { pidNamespace: namespace }),
  };
  const file = await createLockFile(fs, preserveDir, lockPath, what, info, created);
  try {
    await writeLockInfo(file, lockPath, info);
    await fs.syncDir(preserveDir);
  } catch (error) {
    await file.close().catch(() => {});
    await fs.unlink(lockPath).catch(() => {});
    if (created) await fs.rmdir(preserveDir).catch(() => {});
    throw withNothingChanged(error);
  }
  const real = fs === nodeRepairFs;
  if (real) {
    heldLocks.set(lockPath, { preserveDir, created });
    if (!exitHookInstalled) {
      process.on("exit", releaseAtExit);
      exitHookInstalled = true;
    }
  }
  return {
    lockPath,
    async release() {
      heldLocks.delete(lockPath);
      await fs.unlink(lockPath);
      await fs.syncDir(preserveDir);
      // A preserve dir made only for the lock goes again; one the run wrote into is kept.
      if (created && (await fs.readdir(preserveDir)).length === 0) {
        await fs.rmdir(preserveDir);
        await fs.syncDir(path.dirname(preserveDir));
      }
    },
  };
}

function isExists(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "EEXIST" || (error as RepairIoError | null)?.code === "EEXIST";
}

function withNothingChanged(error: unknown): unknown {
  if (error instanceof RepairIoError && !error.message.includes("nothing was changed")) error.message += "; nothing was changed";
  return error;
}

async function heldError(fs: RepairFs, lockPath: string, what: string): Promise<LockHeldError> {
  const holder = (await readLock(fs, lockPath))?.info ?? null;
  const who =
    holder === null ? "an unreadable holder" : `pid ${holder.pid} on host ${holder.host} since ${holder.started} (${holder.command})`;
  const check =
    holder === null
      ? "check that no segscan runs on this target"
      : `check that pid ${holder.pid} is not running on ${holder.host} (\`ps -p ${holder.pid}\`)`;
  const remove = shellQuote(["rm", "--", lockPath]);
  return new LockHeldError(
    `refusing to ${what}: another segscan run holds its lock ${lockPath}: ${who}; nothing was changed. ` +
      `If that run is gone (killed), the lock is stale: ${check}, then clear it with \`${remove}\` and run again ` +
      "(a lock of a killed run on this host is reclaimed by itself)",
    lockPath,
    holder,
  );
}

/**
 * Reclaims the lock at `lockPath` if it is stale (`isStale`): under the
 * exclusive `lock.reclaim`, the lock is read again and removed only if it is
 * still byte for byte the stale one. No other run removes a lock it does not
 * hold, and a reclaimer holds `lock.reclaim`, so between that read and the
 * removal nobody can have replaced it. Returns whether the lock is gone.
 */
async function reclaimStale(fs: RepairFs, preserveDir: string, lockPath: string, what: string, self: LockInfo): Promise<boolean> {
  const seen = await readLock(fs, lockPath);
  if (seen === null || !isStale(seen.info)) return false;
  const reclaimPath = path.join(preserveDir, RECLAIM_NAME);
  let guard;
  try {
    guard = await fs.open(reclaimPath, "wx");
  } catch (error) {
    if (!isExists(error)) throw withNothingChanged(error);
    throw new LockHeldError(
      `refusing to ${what}: another segscan run is reclaiming the stale lock ${lockPath} (${reclaimPath} exists); nothing was changed. ` +
        `If no segscan runs on this target, that reclaim was killed: clear it with \`${shellQuote(["rm", "--", reclaimPath, lockPath])}\` and run again`,
      lockPath,
      seen.info,
    );
  }
  try {
    const bytes = encoder.encode(`${JSON.stringify(self)}\n`);
    await guard.write(bytes, 0, bytes.length, 0);
    await guard.close();
    const now = await readLock(fs, lockPath);
    if (now === null || now.text !== seen.text) return now === null;
    await fs.unlink(lockPath);
    await fs.syncDir(preserveDir);
    return true;
  } finally {
    await guard.close().catch(() => {});
    await fs.unlink(reclaimPath).catch(() => {});
  }
}

/**
 * docs/repair.md §6.2: a run that fails and cannot remove its own lock says so
 * after its own error, with the exact command that clears it (the next run on
 * this host reclaims it anyway once this process has exited).
 */
export function appendLockLeft(runError: unknown, releaseError: unknown): void {
  if (!(runError instanceof Error)) return;
  runError.message +=
    releaseError instanceof LockReleaseError
      ? `; ${releaseError.left}`
      : `; this run could not remove its own lock either (${releaseError instanceof Error ? releaseError.message : String(releaseError)})`;
}

/** The size a lock file may have: one line of JSON (a larger file is not ours, and is reported as unreadable). */
const LOCK_MAX_BYTES = 64 * 1024;

/** A lock file's holder and its exact text (null: absent, or not a lock segscan wrote). */
async function readLock(fs: RepairFs, lockPath: string): Promise<{ info: LockInfo; text: string } | null> {
  try {
    const stat = await fs.stat(lockPath);
    if (stat === null || !stat.isFile || stat.size > LOCK_MAX_BYTES) return null;
    const bytes = new Uint8Array(stat.size);
    const file = await fs.open(lockPath, "r");
    try {
      for (let done = 0; done < bytes.length; ) {
        const count = await file.read(bytes, done, bytes.length - done, done);
        if (count <= 0) break;
        done += count;
      }
    } finally {
      await file.close();
    }
    const text = new TextDecoder().decode(bytes);
    const parsed = JSON.parse(text) as Partial<LockInfo>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return null;
    const info: LockInfo = { pid: parsed.pid, host: parsed.host, started: String(parsed.started), command: String(parsed.command) };
    if (typeof parsed.pidNamespace === "string") info.pidNamespace = parsed.pidNamespace;
    return { info, text };
  } catch {
    return null;
  }
}

/**
 * Takes every lock a run needs, in sorted order (two runs over overlapping
 * targets then never wait on each other in a cycle), releasing those taken
 * when one refuses.
 */
export async function acquireLocks(
  fs: RepairFs,
  preserveDirs: Iterable<string>,
  what: (preserveDir: string) => string,
  command: string,
): Promise<HeldLock[]> {
  const locks: HeldLock[] = [];
  try {
    for (const preserveDir of [...new Set(preserveDirs)].sort()) locks.push(await acquireLock(fs, preserveDir, what(preserveDir), command));
    return locks;
  } catch (error) {
    await releaseLocks(locks);
    throw error;
  }
}

/**
 * Releases locks newest first. A failure to release one does not keep the
 * others; the first failure is thrown once all were tried (the run's work is
 * done, but a lock left behind refuses the next run, so the operator must know).
 */
export async function releaseLocks(locks: readonly HeldLock[]): Promise<void> {
  const left: { lockPath: string; error: unknown }[] = [];
  for (const lock of [...locks].reverse()) {
    try {
      await lock.release();
    } catch (error) {
      left.push({ lockPath: lock.lockPath, error });
    }
  }
  // Only an I/O error is put into words; anything else (a simulated crash, a bug) goes on as it is.
  const other = left.find((item) => !(item.error instanceof RepairError));
  if (other !== undefined) throw other.error;
  if (left.length > 0) throw new LockReleaseError(left);
}

/**
 * A run's own locks could not be removed (docs/repair.md §6.2): the message
 * names each, says whose they are, and gives the command that clears them;
 * the next run on this host reclaims them once this process has exited.
 */
export class LockReleaseError extends RepairError {
  override name = "LockReleaseError";
  readonly lockPaths: string[];
  /** What is left, in words, for a message that already said what the run did. */
  readonly left: string;
  constructor(left: readonly { lockPath: string; error: unknown }[]) {
    const paths = left.map((item) => item.lockPath);
    const why = left.map((item) => (item.error instanceof Error ? item.error.message : String(item.error))).join("; ");
    const words =
      `this run's own lock${paths.length === 1 ? "" : "s"} ${paths.join(", ")} (pid ${process.pid}) ${paths.length === 1 ? "was" : "were"} left behind: ${why}; ` +
      `the next run on this host reclaims ${paths.length === 1 ? "it" : "them"} once this process has exited, or clear ${paths.length === 1 ? "it" : "them"} with \`${shellQuote(["rm", "--", ...paths])}\``;
    super(`the work is done, but ${words}`, { path: paths[0]! }, { cause: left[0]?.error });
    this.lockPaths = paths;
    this.left = words;
  }
}

/** A process that has a file a run would change open for writing. */
export interface OpenWriter {
  pid: number;
  /** The file, as /proc resolves it. */
  file: string;
  /** `O_WRONLY` or `O_RDWR`. */
  access: "O_WRONLY" | "O_RDWR";
}

export interface WriterCheck {
  /** False where the platform offers no way to look (everything but Linux): nothing was checked. */
  checked: boolean;
  writers: OpenWriter[];
  /** Processes whose open files could not be read (other users' processes, unless run as root). */
  unreadableProcesses: number;
}

/**
 * What a writer check watches: every segment file (`.log`, `.index`) directly
 * inside `segmentDirs`, and each of `files` (the WAL, offset files). Paths are
 * resolved to real paths before matching, as /proc shows real paths.
 */
export interface WriterWatch {
  segmentDirs: readonly string[];
  files: readonly string[];
}

/** Segment files whose writers block a repair. */
const SEGMENT_FILE = /\.(log|index)$/;
/** The access-mode bits of `flags` in /proc/<pid>/fdinfo (octal). */
const O_ACCMODE = 0o3;
const ACCESS: Record<number, OpenWriter["access"] | undefined> = { 1: "O_WRONLY", 2: "O_RDWR" };

async function realOrResolved(target: string): Promise<string> {
  try {
    return await fsp.realpath(target);
  } catch {
    // A file that does not exist (yet) cannot be open: its resolved spelling matches nothing.
    return path.resolve(target);
  }
}

/**
 * Which other processes have a watched file open for writing. On Linux this
 * reads every `/proc/<pid>/fd/<n>` symlink (the open file's real path), and
 * for one that is watched, the `flags:` line of `/proc/<pid>/fdinfo/<n>`:
 * access mode `O_WRONLY` or `O_RDWR` is a writer. This process is skipped.
 * Processes whose fd directory cannot be read (another user's, without root)
 * are counted in `unreadableProcesses`, not inspected. Elsewhere nothing is
 * checked (`checked: false`).
 */
export async function findWriters(watch: WriterWatch, procRoot = "/proc"): Promise<WriterCheck> {
  if (process.platform !== "linux") return { checked: false, writers: [], unreadableProcesses: 0 };
  const dirs = new Set(await Promise.all(watch.segmentDirs.map(realOrResolved)));
  const files = new Set(await Promise.all(watch.files.map(realOrResolved)));
  const watched = (target: string): boolean => files.has(target) || (dirs.has(path.dirname(target)) && SEGMENT_FILE.test(target));
  let pids: string[];
  try {
    pids = (await fsp.readdir(procRoot)).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return { checked: false, writers: [], unreadableProcesses: 0 };
  }
  const writers: OpenWriter[] = [];
  let unreadableProcesses = 0;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await fsp.readdir(path.join(procRoot, pid, "fd"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") unreadableProcesses += 1; // ENOENT: it exited meanwhile
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = await fsp.readlink(path.join(procRoot, pid, "fd", fd));
      } catch {
        continue; // closed meanwhile
      }
      if (!watched(target)) continue;
      let info: string;
      try {
        info = await fsp.readFile(path.join(procRoot, pid, "fdinfo", fd), "utf8");
      } catch {
        continue;
      }
      const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
      const access = flags === undefined ? undefined : ACCESS[Number.parseInt(flags, 8) & O_ACCMODE];
      if (access !== undefined) writers.push({ pid: Number(pid), file: target, access });
    }
  }
  return { checked: true, writers, unreadableProcesses };
}

/** Throws `WriterOpenError` (nothing changed) when another process writes a watched file; returns what was checked. */
export async function refuseWriters(watch: WriterWatch, what: string, procRoot = "/proc"): Promise<WriterCheck> {
  const check = await findWriters(watch, procRoot);
  if (check.writers.length > 0) {
    const list = check.writers.map((w) => `pid ${w.pid} has ${w.file} open ${w.access}`).join("; ");
    throw new WriterOpenError(
      `refusing to ${what}: another process has a file it would change open for writing (${list}); nothing was changed. ` +
        "Stop iggy-server (or whatever writes there) before repairing or restoring",
      watch.segmentDirs[0] ?? watch.files[0] ?? "",
      check.writers,
    );
  }
  return check;
}
