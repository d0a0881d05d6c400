/**
 * The one thin I/O layer the scanner reads through. Everything above it is
 * pure over bytes; tests substitute a fake to inject read failures (SPEC §3.6).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";

export interface DirectoryEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
}

export interface ReadableFile {
  /** Reads up to `target.length` bytes at `position`; resolves to the count read (0 at end of file). */
  read(target: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

export interface FileStat {
  size: number;
  isFile: boolean;
  isDirectory: boolean;
}

export interface ScanFs {
  list(directory: string): Promise<DirectoryEntry[]>;
  stat(path: string): Promise<FileStat>;
  open(path: string): Promise<ReadableFile>;
}

export const nodeScanFs: ScanFs = {
  async list(directory) {
    const entries = await readdir(directory, { withFileTypes: true });
    return Promise.all(entries.map(async (entry) => {
      if (!entry.isSymbolicLink()) return { name: entry.name, isFile: entry.isFile(), isDirectory: entry.isDirectory() };
      // A link is what it points at. A dangling one is listed as a file, so the
      // scan fails to open it (OpenFailure) instead of pretending it is absent.
      const target = await stat(join(directory, entry.name)).catch(() => null);
      return { name: entry.name, isFile: target?.isFile() ?? true, isDirectory: target?.isDirectory() ?? false };
    }));
  },
  async stat(path) {
    const info = await stat(path);
    return { size: info.size, isFile: info.isFile(), isDirectory: info.isDirectory() };
  },
  async open(path) {
    const handle = await open(path, "r");
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
 * yields a macrotask after every refill (SPEC §7), but each read blocks the
 * event loop while it runs: a service's main thread should keep the default.
 */
export const nodeBlockingScanFs: ScanFs = {
  list: nodeScanFs.list,
  stat: nodeScanFs.stat,
  async open(path) {
    const fd = openSync(path, "r");
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
