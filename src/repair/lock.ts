/**
 * docs/repair.md §6.2: one writer at a time. `repair --apply` and `restore`
 * take an exclusive lock per partition, a file created with `wx` (O_CREAT |
 * O_EXCL) in `<partition>.segscan/`, holding the pid, host, start time and
 * command of its holder; a second run refuses while it exists and says how to
 * clear a stale one. The lock is released (its file removed) on every exit
 * path of the run that took it (and at process exit, see `releaseAtExit`);
 * only a process killed outright (SIGKILL, power cut) leaves it behind.
 *
 * They also refuse while a segment file of the partition is open for writing
 * by another process, where the platform lets that be seen (`findWriters`).
 *
 * The lock goes straight to node:fs, not through the `RepairFs` seam: it is
 * the run's own bookkeeping, never partition data, and a simulated crash of
 * the seam must still release it as a real process exit would not — the
 * stale-lock refusal is tested on its own.
 */
import { promises as fsp, rmSync, rmdirSync } from "node:fs";
import { hostname } from "node:os";
import * as path from "node:path";
import { RepairError } from "./errors.js";
import { RepairIoError } from "./fs-layer.js";

export const LOCK_NAME = "lock";

/** What the lock file holds (one JSON object). */
export interface LockInfo {
  pid: number;
  host: string;
  /** ISO 8601 start time of the holder. */
  started: string;
  command: string;
}

/** Another run holds the partition's lock (or left it behind when it was killed). Nothing was changed. */
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

/** Another process has a segment file of the partition open for writing. Nothing was changed. */
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
 * Locks this process holds, removed synchronously if it exits without
 * releasing them (a second Ctrl-C exits at once with `process.exit`). Only a
 * kill that runs no code (SIGKILL, a power cut) leaves a stale lock.
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

/**
 * Creates `<preserveDir>/lock` exclusively (the preserve dir is created if
 * missing: an empty directory beside the partition, nothing inside it).
 * Throws `LockHeldError` naming the holder when the file exists.
 */
export async function acquireLock(preserveDir: string, what: string, command: string): Promise<HeldLock> {
  // A preserve dir made only to hold the lock is removed again on release if it is still empty.
  let created: boolean;
  try {
    created = (await fsp.mkdir(preserveDir, { recursive: true })) !== undefined;
  } catch (error) {
    throw lockIoError("create the directory", preserveDir, error);
  }
  const lockPath = path.join(preserveDir, LOCK_NAME);
  const info: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString(), command };
  let handle;
  try {
    handle = await fsp.open(lockPath, "wx");
  } catch (error) {
    if (created) await fsp.rmdir(preserveDir).catch(() => {});
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw lockIoError("create the lock file", lockPath, error);
    const holder = await readLock(lockPath);
    const who =
      holder === null ? "an unreadable holder" : `pid ${holder.pid} on host ${holder.host} since ${holder.started} (${holder.command})`;
    const check =
      holder === null
        ? "check that no segscan runs on this partition"
        : `check that pid ${holder.pid} is not running on ${holder.host} (\`ps -p ${holder.pid}\`)`;
    throw new LockHeldError(
      `refusing to ${what}: another segscan run holds its lock ${lockPath}: ${who}; nothing was changed. ` +
        `If that run is gone (killed), the lock is stale: ${check}, then remove ${lockPath} and run again`,
      lockPath,
      holder,
    );
  }
  try {
    await handle.writeFile(JSON.stringify(info) + "\n");
  } catch (error) {
    await handle.close();
    await fsp.rm(lockPath, { force: true });
    if (created) await fsp.rmdir(preserveDir).catch(() => {});
    throw lockIoError("write the lock file", lockPath, error);
  }
  await handle.close();
  heldLocks.set(lockPath, { preserveDir, created });
  if (!exitHookInstalled) {
    process.on("exit", releaseAtExit);
    exitHookInstalled = true;
  }
  return {
    lockPath,
    async release() {
      heldLocks.delete(lockPath);
      await fsp.rm(lockPath, { force: true });
      if (created) await fsp.rmdir(preserveDir).catch(() => {}); // not empty: the run wrote there, keep it
    },
  };
}

function lockIoError(operation: string, target: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string") return error as Error;
  const wrapped = new RepairIoError(operation, target, code, error);
  wrapped.message += "; nothing was changed";
  return wrapped;
}

async function readLock(lockPath: string): Promise<LockInfo | null> {
  try {
    const parsed = JSON.parse(await fsp.readFile(lockPath, "utf8")) as Partial<LockInfo>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return null;
    return { pid: parsed.pid, host: parsed.host, started: String(parsed.started), command: String(parsed.command) };
  } catch {
    return null;
  }
}

/** A process that has a segment file open for writing. */
export interface OpenWriter {
  pid: number;
  /** The segment file, as /proc resolves it. */
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

/** Segment files whose writers block a repair. */
const SEGMENT_FILE = /\.(log|index)$/;
/** The access-mode bits of `flags` in /proc/<pid>/fdinfo (octal). */
const O_ACCMODE = 0o3;
const ACCESS: Record<number, OpenWriter["access"] | undefined> = { 1: "O_WRONLY", 2: "O_RDWR" };

/**
 * Which other processes have a `.log` or `.index` file directly inside `dir`
 * open for writing. On Linux this reads every `/proc/<pid>/fd/<n>` symlink
 * (the open file's path), and for one that resolves to a segment file in the
 * real path of `dir`, the `flags:` line of `/proc/<pid>/fdinfo/<n>`: access
 * mode `O_WRONLY` or `O_RDWR` is a writer. This process is skipped. Processes
 * whose fd directory cannot be read (another user's, without root) are
 * counted in `unreadableProcesses`, not inspected. Elsewhere nothing is
 * checked (`checked: false`).
 */
export async function findWriters(
  dir: string,
  procRoot = "/proc",
  watched: (file: string) => boolean = isSegmentFile,
): Promise<WriterCheck> {
  if (process.platform !== "linux") return { checked: false, writers: [], unreadableProcesses: 0 };
  let realDir: string;
  try {
    realDir = await fsp.realpath(dir);
  } catch {
    realDir = path.resolve(dir);
  }
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
      if (path.dirname(target) !== realDir || !watched(target)) continue;
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

function isSegmentFile(file: string): boolean {
  return SEGMENT_FILE.test(file);
}

/**
 * Throws `WriterOpenError` when another process writes a segment file of `dir`
 * (or, given `watched`, any file it accepts, e.g. the metadata WAL); returns what was checked.
 */
export async function refuseWriters(dir: string, what: string, watched?: (file: string) => boolean): Promise<WriterCheck> {
  const check = await findWriters(dir, "/proc", watched);
  if (check.writers.length > 0) {
    const list = check.writers.map((w) => `pid ${w.pid} has ${w.file} open ${w.access}`).join("; ");
    throw new WriterOpenError(
      `refusing to ${what}: another process has ${watched === undefined ? "its segment files" : "it"} open for writing (${list}); nothing was changed. ` +
        "Stop iggy-server (or whatever writes there) before repairing or restoring",
      dir,
      check.writers,
    );
  }
  return check;
}
