/**
 * The one thin I/O layer the scanner reads through. Everything above it is
 * pure over bytes; tests substitute a fake to inject read failures (SPEC §3.6).
 */
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
