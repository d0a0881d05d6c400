/**
 * The one thin I/O layer the scanner reads through. Everything above it is
 * pure over bytes; tests substitute a fake to inject read failures (docs/recovery.md §3.6).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { open, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";

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
  /** Reads up to `target.length` bytes at `position`; resolves to the count read (0 at end of file). */
  read(target: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
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
}

export const nodeScanFs: ScanFs = {
  async list(directory) {
    const entries = await readdir(directory, { withFileTypes: true });
    return Promise.all(
      entries.map(async (entry) => {
        if (!entry.isSymbolicLink()) {
          return { name: entry.name, isFile: entry.isFile(), isDirectory: entry.isDirectory(), isSymbolicLink: false };
        }
        // A link is what it points at. A dangling one is listed as a file, so the
        // scan fails to open it (OpenFailure) instead of pretending it is absent.
        const target = await stat(join(directory, entry.name)).catch(() => null);
        return { name: entry.name, isFile: target?.isFile() ?? true, isDirectory: target?.isDirectory() ?? false, isSymbolicLink: true };
      }),
    );
  },
  async stat(path) {
    const info = await stat(path, { bigint: true });
    return { size: Number(info.size), isFile: info.isFile(), isDirectory: info.isDirectory(), fileId: `${info.dev}:${info.ino}` };
  },
  realpath: (path) => realpath(path),
  async open(path) {
    const handle = await open(path, OPEN_FLAGS);
    if (
      !(
        await handle.stat().catch(async (error: unknown) => {
          await handle.close();
          throw error;
        })
      ).isFile()
    ) {
      await handle.close();
      throw new NotRegularFileError(path);
    }
    return {
      async read(target, position) {
        const { bytesRead } = await handle.read(target, 0, target.length, position);
        return bytesRead;
      },
      close: () => handle.close(),
    };
  },
};

/**
 * The same filesystem with blocking positioned reads. On this class of VM a
 * page-cache read of 1 MiB costs ~55 µs on the calling thread but ~110 µs
 * through libuv's threadpool, so for a thread that does nothing else (a pool
 * worker, the CLI) blocking reads nearly halve the I/O time. The scan still
 * yields a macrotask after every refill (docs/engines.md §7), but each read blocks the
 * event loop while it runs: a service's main thread should keep the default.
 */
export const nodeBlockingScanFs: ScanFs = {
  list: nodeScanFs.list,
  stat: nodeScanFs.stat,
  realpath: nodeScanFs.realpath!,
  async open(path) {
    const fd = openSync(path, OPEN_FLAGS);
    let regular: boolean;
    try {
      regular = fstatSync(fd).isFile();
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    if (!regular) {
      closeSync(fd);
      throw new NotRegularFileError(path);
    }
    return {
      async read(target, position) {
        return readSync(fd, target, 0, target.length, position);
      },
      async close() {
        closeSync(fd);
      },
    };
  },
};
