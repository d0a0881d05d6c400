/**
 * A crash model in which fsync matters (issue 16.14): a `RepairFs` over the
 * real files (so scans read them as usual) that also keeps the DURABLE state,
 * what a power cut would leave:
 * - file data is durable as of the file's last `sync()` (a file never synced
 *   is empty after a crash, a truncate or write not synced is undone);
 * - a directory's entries (creations, renames in and out, removals) are
 *   durable as of that directory's last `syncDir()`. A rename is two entry
 *   changes, one per directory, each durable only once ITS directory is
 *   synced, so a crash between the two syncs can leave the file under both
 *   names (or, with the syncs in the wrong order, under neither).
 * Data lives in inodes, so a renamed file keeps its synced content.
 *
 * `crash()` replaces everything under the root with the durable state: every
 * write not yet fsynced is lost. Real fsyncs are not issued (the model, not the
 * kernel, decides what survives), which also keeps the crash loops fast.
 */
import { promises as fsp, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { nodeRepairFs } from "../../src/repair/index.js";
import type { RepairFs } from "../../src/repair/index.js";

type Inode = { kind: "dir" } | { kind: "file"; durable: Buffer };

export interface DurabilityModelFs extends RepairFs {
  /** Replaces the tree under the root with what a crash right now would leave (only what was synced). */
  crash(): void;
}

/**
 * The model over every file and directory under `root`, all durable at the
 * start (the scenario's files were written and synced before the repair).
 * Every path repair or restore writes must lie under `root`.
 */
export function createDurabilityModelFs(root: string): DurabilityModelFs {
  const inodes = new Map<number, Inode>();
  let nextInode = 1;
  const current = new Map<string, Map<string, number>>();
  const durable = new Map<string, Map<string, number>>();

  const load = (dir: string): void => {
    const entries = new Map<string, number>();
    current.set(dir, entries);
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const id = nextInode++;
      entries.set(name, id);
      if (statSync(full).isDirectory()) {
        inodes.set(id, { kind: "dir" });
        load(full);
      } else {
        inodes.set(id, { kind: "file", durable: readFileSync(full) });
      }
    }
    durable.set(dir, new Map(entries));
  };
  load(root);

  const entriesOf = (dir: string): Map<string, number> => {
    const entries = current.get(dir);
    if (entries === undefined) throw new Error(`durability model: ${dir} is not a directory under ${root}`);
    return entries;
  };
  const inodeAt = (filePath: string): number | undefined => entriesOf(dirname(filePath)).get(basename(filePath));

  const model: DurabilityModelFs = {
    async open(filePath, mode) {
      const file = await nodeRepairFs.open(filePath, mode);
      if (mode === "r") return file;
      let id = inodeAt(filePath);
      if (id === undefined) {
        id = nextInode++;
        inodes.set(id, { kind: "file", durable: Buffer.alloc(0) }); // created, never synced: empty after a crash
        entriesOf(dirname(filePath)).set(basename(filePath), id);
      }
      const inode = inodes.get(id)!;
      // Write-only handles cannot be read back: a side handle reads what a sync makes durable.
      const side = await fsp.open(filePath, "r");
      return {
        ...file,
        async sync() {
          const { size } = await side.stat();
          const bytes = Buffer.alloc(size);
          if (size > 0) await side.read(bytes, 0, size, 0);
          if (inode.kind === "file") inode.durable = bytes;
        },
        async close() {
          await side.close();
          await file.close();
        },
      };
    },
    stat: (filePath) => nodeRepairFs.stat(filePath),
    readdir: (dirPath) => nodeRepairFs.readdir(dirPath),
    async mkdir(dirPath) {
      await nodeRepairFs.mkdir(dirPath);
      if (current.has(dirPath)) return;
      const id = nextInode++;
      inodes.set(id, { kind: "dir" });
      entriesOf(dirname(dirPath)).set(basename(dirPath), id);
      current.set(dirPath, new Map());
      durable.set(dirPath, new Map());
    },
    async rename(from, to) {
      await nodeRepairFs.rename(from, to);
      const id = inodeAt(from)!;
      entriesOf(dirname(from)).delete(basename(from));
      entriesOf(dirname(to)).set(basename(to), id);
    },
    async syncDir(dirPath) {
      durable.set(dirPath, new Map(entriesOf(dirPath)));
    },
    async unlink(filePath) {
      await nodeRepairFs.unlink(filePath);
      entriesOf(dirname(filePath)).delete(basename(filePath));
    },
    async rmdir(dirPath) {
      await nodeRepairFs.rmdir(dirPath);
      entriesOf(dirname(dirPath)).delete(basename(dirPath));
      current.delete(dirPath);
    },
    crash() {
      for (const name of readdirSync(root)) rmSync(join(root, name), { recursive: true, force: true });
      const write = (dir: string): void => {
        for (const [name, id] of durable.get(dir) ?? []) {
          const inode = inodes.get(id)!;
          const full = join(dir, name);
          if (inode.kind === "dir") {
            mkdirSync(full);
            write(full);
          } else {
            writeFileSync(full, inode.durable);
          }
        }
      };
      write(root);
    },
  };
  return model;
}
