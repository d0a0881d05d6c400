/**
 * Every filesystem call repair and restore make goes through `RepairFs`, so a
 * test can put a fault-injecting layer underneath and "crash" the process at
 * any chosen mutating step (docs/repair.md §6.2: a crash at any point, followed by scan
 * and repair again, converges with nothing lost).
 *
 * The interface is deliberately small. Its `unlink` and `rmdir` remove only
 * segscan's own files (a partial `.tmp` copy, e.g. on a full disk; its lock
 * file; an empty preserve dir made only for the lock) and the old name of a
 * file moved between directories once its new name is durable. Repair never deletes a
 * file it did not create; it only moves files aside (rename) or cuts proven
 * torn tails after preserving them. The lock goes through this layer too, so
 * the crash models see it.
 */
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { describeCause } from "../io/errors.js";
import { RepairError } from "./errors.js";

export interface RepairStat {
  size: number;
  isFile: boolean;
  isDirectory: boolean;
  /** True for a symbolic link (stat is lstat: a link is seen as the link, never followed). */
  isSymbolicLink?: boolean;
  /** The filesystem's device id, when the layer knows it (used to refuse a cross-filesystem move up front). */
  dev?: number;
  /** Last modification time in ms, when the layer knows it (the plan records it; the preflight compares). */
  mtimeMs?: number;
}

/**
 * How a file is opened: read only, read-write in place, create-or-truncate,
 * append (create if missing), or exclusive create (`wx`: EEXIST when the file
 * exists; the lock file, docs/repair.md §6.2 rule 2).
 */
export type OpenMode = "r" | "r+" | "w" | "a" | "wx";

export interface RepairFile {
  /** Positioned read; returns the bytes read (0 at end of file). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /** Positioned write (`position` null appends in mode "a"); returns the bytes written. */
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<number>;
  truncate(size: number): Promise<void>;
  sync(): Promise<void>;
  stat(): Promise<RepairStat>;
  close(): Promise<void>;
}

export interface RepairFs {
  open(filePath: string, mode: OpenMode): Promise<RepairFile>;
  /** lstat; null when the path does not exist. */
  stat(filePath: string): Promise<RepairStat | null>;
  readdir(dirPath: string): Promise<string[]>;
  /** Creates one directory (its parent must exist); an existing directory is fine. */
  mkdir(dirPath: string): Promise<void>;
  /** Atomic rename within one filesystem; replaces an existing `to` file. */
  rename(from: string, to: string): Promise<void>;
  /**
   * A second name (hard link) `to` for the file `from`, in the same
   * filesystem; fails with EEXIST when `to` exists. Moves between two
   * directories go link → fsync the new dir → unlink → fsync the old dir
   * (`moveBetweenDirs`), so no crash can leave the file under neither name.
   */
  link(from: string, to: string): Promise<void>;
  /** fsync a directory, making renames and creations in it durable. */
  syncDir(dirPath: string): Promise<void>;
  /** Removes a name: segscan's own files, or a moved file's old name once the new one is durable; a missing file is fine. */
  unlink(filePath: string): Promise<void>;
  /** Removes an EMPTY directory segscan created itself (a preserve dir made only for a lock); fails when not empty. */
  rmdir(dirPath: string): Promise<void>;
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "ENOENT";
}

function toStat(stats: {
  size: number;
  dev: number;
  mtimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): RepairStat {
  return {
    size: stats.size,
    isFile: stats.isFile(),
    isDirectory: stats.isDirectory(),
    isSymbolicLink: stats.isSymbolicLink(),
    dev: stats.dev,
    mtimeMs: stats.mtimeMs,
  };
}

/** The real thing, on `node:fs/promises`. */
export const nodeRepairFs: RepairFs = {
  async open(filePath, mode) {
    const handle = await fsp.open(filePath, mode);
    return {
      async read(buffer, offset, length, position) {
        return (await handle.read(buffer, offset, length, position)).bytesRead;
      },
      async write(buffer, offset, length, position) {
        return (await handle.write(buffer, offset, length, position)).bytesWritten;
      },
      truncate: (size) => handle.truncate(size),
      sync: () => handle.sync(),
      stat: async () => toStat(await handle.stat()),
      close: () => handle.close(),
    };
  },
  async stat(filePath) {
    try {
      return toStat(await fsp.lstat(filePath));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  },
  readdir: (dirPath) => fsp.readdir(dirPath),
  async mkdir(dirPath) {
    try {
      await fsp.mkdir(dirPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const stats = await fsp.lstat(dirPath);
      if (!stats.isDirectory()) throw error;
    }
  },
  rename: (from, to) => fsp.rename(from, to),
  link: (from, to) => fsp.link(from, to),
  async syncDir(dirPath) {
    const handle = await fsp.open(dirPath, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  async unlink(filePath) {
    try {
      await fsp.unlink(filePath);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  },
  rmdir: (dirPath) => fsp.rmdir(dirPath),
};

/** Thrown by the fault-injecting layer in place of the step it was told to fail, and for every call after it. */
export class InjectedFault extends Error {
  override readonly name = "InjectedFault";
  constructor(
    readonly step: number,
    readonly operation: string,
    readonly target: string,
  ) {
    super(`injected fault at mutating step ${step} (${operation} ${target})`);
  }
}

export interface FaultOptions {
  /**
   * The 1-based mutating step that fails (open for writing, write, truncate,
   * sync, mkdir, rename, syncDir, unlink). Omit to only count steps.
   */
  failAt?: number;
  /**
   * When the failing step is a write, write this fraction of its bytes first
   * (a torn write), then throw. Default 0: nothing of it is written.
   */
  tornWriteFraction?: number;
}

export interface FaultyRepairFs extends RepairFs {
  /** Mutating steps attempted so far (including the failing one). */
  readonly steps: number;
  /** Operation log, one "op target" per mutating step, for diagnosing a failing k. */
  readonly log: readonly string[];
  /** True once the injected fault fired: the "process" is dead and every later call throws. */
  readonly crashed: boolean;
}

/** A faulty layer's count of mutating steps, its log, and whether the injected fault fired. */
class FaultCounter {
  steps = 0;
  crashed = false;
  readonly log: string[] = [];
  constructor(
    private readonly failAt: number,
    readonly tornFraction: number,
  ) {}

  /** Throws once the "process" crashed: it does nothing more. */
  readonly alive = (operation: string, target: string): void => {
    if (this.crashed) throw new InjectedFault(this.steps, `${operation} after crash`, target);
  };

  /** Counts a mutating step; returns true when this is the step to fail. */
  readonly step = (operation: string, target: string): boolean => {
    this.alive(operation, target);
    this.steps += 1;
    this.log.push(`${operation} ${target}`);
    if (this.steps === this.failAt) this.crashed = true;
    return this.crashed;
  };

  readonly fail = (operation: string, target: string): never => {
    throw new InjectedFault(this.steps, operation, target);
  };

  /** A mutating call: counted, logged as `logged`, failed (naming `failed`) when it is the step to fail. */
  readonly mutate = (operation: string, logged: string, failed: string = logged): void => {
    if (this.step(operation, logged)) this.fail(operation, failed);
  };
}

/** An open file of a faulty layer: a write that is the step to fail first writes `tornFraction` of its bytes. */
function faultyFile(file: RepairFile, name: string, hooks: FaultCounter): RepairFile {
  const { alive, step, mutate, fail, tornFraction } = hooks;
  return {
    async read(buffer, offset, length, position) {
      alive("read", name);
      return file.read(buffer, offset, length, position);
    },
    async write(buffer, offset, length, position) {
      if (step("write", name)) {
        const torn = Math.floor(length * tornFraction);
        if (torn > 0) await file.write(buffer, offset, torn, position);
        fail("write", name);
      }
      return file.write(buffer, offset, length, position);
    },
    async truncate(size) {
      mutate("truncate", name);
      return file.truncate(size);
    },
    async sync() {
      mutate("sync", name);
      return file.sync();
    },
    async stat() {
      alive("fstat", name);
      return file.stat();
    },
    close: () => file.close(),
  };
}

/**
 * Wraps `inner` and fails mutating step `failAt`. After the fault every call
 * (reads included, except close) throws too: a crashed process does nothing
 * more, so no cleanup path can paper over the crash.
 */
export function createFaultyFs(inner: RepairFs, options: FaultOptions = {}): FaultyRepairFs {
  const hooks = new FaultCounter(options.failAt ?? Number.POSITIVE_INFINITY, options.tornWriteFraction ?? 0);
  const { alive, mutate } = hooks;
  const arrow = (from: string, to: string): string => `${path.basename(from)} -> ${path.basename(to)}`;

  return {
    get steps() {
      return hooks.steps;
    },
    get log() {
      return hooks.log;
    },
    get crashed() {
      return hooks.crashed;
    },
    async open(filePath, mode) {
      if (mode === "r") alive("open", filePath);
      else mutate(`open(${mode})`, filePath);
      return faultyFile(await inner.open(filePath, mode), path.basename(filePath), hooks);
    },
    async stat(filePath) {
      alive("stat", filePath);
      return inner.stat(filePath);
    },
    async readdir(dirPath) {
      alive("readdir", dirPath);
      return inner.readdir(dirPath);
    },
    async mkdir(dirPath) {
      mutate("mkdir", dirPath);
      return inner.mkdir(dirPath);
    },
    async rename(from, to) {
      mutate("rename", arrow(from, to), from);
      return inner.rename(from, to);
    },
    async link(from, to) {
      mutate("link", arrow(from, to), from);
      return inner.link(from, to);
    },
    async syncDir(dirPath) {
      mutate("syncDir", dirPath);
      return inner.syncDir(dirPath);
    },
    async unlink(filePath) {
      mutate("unlink", path.basename(filePath), filePath);
      return inner.unlink(filePath);
    },
    async rmdir(dirPath) {
      mutate("rmdir", dirPath);
      return inner.rmdir(dirPath);
    },
  };
}

/**
 * An I/O call of repair or restore failed. The message names the operation,
 * the path and the cause in words (`describeCause`); apply and restore append
 * whether anything was changed before it reaches the operator.
 */
export class RepairIoError extends RepairError {
  override name = "RepairIoError";
  constructor(
    readonly operation: string,
    filePath: string,
    readonly code: string | undefined,
    cause: unknown,
  ) {
    super(`cannot ${operation} ${filePath}: ${describeCause(cause)}`, { path: filePath }, { cause });
  }
}

const OPEN_WORDS: Record<OpenMode, string> = {
  r: "open for reading",
  "r+": "open for writing",
  w: "create",
  wx: "create (exclusively)",
  a: "open for appending",
};

/**
 * Wraps a layer so every errno failure (EROFS, EPERM, ENOSPC, …) becomes a
 * `RepairIoError` naming the operation and the path: node's own messages name
 * neither for writes and syncs on a handle. Errors without an errno code (an
 * `InjectedFault`, an abort) pass through unchanged.
 */
export function describedFs(inner: RepairFs): RepairFs {
  const wrap = async <T>(operation: string, target: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (typeof code !== "string" || error instanceof RepairError) throw error;
      throw new RepairIoError(operation, target, code, error);
    }
  };
  return {
    async open(filePath, mode) {
      const file = await wrap(OPEN_WORDS[mode], filePath, () => inner.open(filePath, mode));
      return {
        read: (buffer, offset, length, position) =>
          wrap(`read ${length} bytes at byte ${position} of`, filePath, () => file.read(buffer, offset, length, position)),
        write: (buffer, offset, length, position) =>
          wrap(`write ${length} bytes${position === null ? "" : ` at byte ${position}`} to`, filePath, () =>
            file.write(buffer, offset, length, position),
          ),
        truncate: (size) => wrap(`truncate to ${size} bytes`, filePath, () => file.truncate(size)),
        sync: () => wrap("fsync", filePath, () => file.sync()),
        stat: () => wrap("stat", filePath, () => file.stat()),
        close: () => wrap("close", filePath, () => file.close()),
      };
    },
    stat: (filePath) => wrap("stat", filePath, () => inner.stat(filePath)),
    readdir: (dirPath) => wrap("list", dirPath, () => inner.readdir(dirPath)),
    mkdir: (dirPath) => wrap("create the directory", dirPath, () => inner.mkdir(dirPath)),
    rename: (from, to) => wrap(`move ${from} to`, to, () => inner.rename(from, to)),
    link: (from, to) => wrap(`link ${from} as`, to, () => inner.link(from, to)),
    syncDir: (dirPath) => wrap("fsync the directory", dirPath, () => inner.syncDir(dirPath)),
    unlink: (filePath) => wrap("remove", filePath, () => inner.unlink(filePath)),
    rmdir: (dirPath) => wrap("remove the empty directory", dirPath, () => inner.rmdir(dirPath)),
  };
}
