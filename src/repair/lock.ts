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
import { promises as fsp, rmSync, rmdirSync } from "node:fs";
import { hostname } from "node:os";
import * as path from "node:path";
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
  const info: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString(), command };
  let file;
  try {
    file = await fs.open(lockPath, "wx");
  } catch (error) {
    if (created) await fs.rmdir(preserveDir).catch(() => {});
    if (!isExists(error)) throw withNothingChanged(error);
    throw await heldError(fs, lockPath, what);
  }
  try {
    const bytes = encoder.encode(`${JSON.stringify(info)}\n`);
    for (let done = 0; done < bytes.length; ) {
      const written = await file.write(bytes, done, bytes.length - done, done);
      if (written <= 0) throw new RepairError(`writing the lock file ${lockPath} made no progress at byte ${done}`, { path: lockPath });
      done += written;
    }
    await file.sync();
    await file.close();
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
  const holder = await readLock(fs, lockPath);
  const who =
    holder === null ? "an unreadable holder" : `pid ${holder.pid} on host ${holder.host} since ${holder.started} (${holder.command})`;
  const check =
    holder === null
      ? "check that no segscan runs on this target"
      : `check that pid ${holder.pid} is not running on ${holder.host} (\`ps -p ${holder.pid}\`)`;
  return new LockHeldError(
    `refusing to ${what}: another segscan run holds its lock ${lockPath}: ${who}; nothing was changed. ` +
      `If that run is gone (killed), the lock is stale: ${check}, then remove ${lockPath} and run again`,
    lockPath,
    holder,
  );
}

/** The size a lock file may have: one line of JSON (a larger file is not ours, and is reported as unreadable). */
const LOCK_MAX_BYTES = 64 * 1024;

async function readLock(fs: RepairFs, lockPath: string): Promise<LockInfo | null> {
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
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Partial<LockInfo>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return null;
    return { pid: parsed.pid, host: parsed.host, started: String(parsed.started), command: String(parsed.command) };
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
  let failure: unknown = null;
  for (const lock of [...locks].reverse()) {
    try {
      await lock.release();
    } catch (error) {
      if (error instanceof RepairError) error.message += `; the lock ${lock.lockPath} may be left behind: remove it by hand`;
      failure ??= error;
    }
  }
  if (failure !== null) throw failure;
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
