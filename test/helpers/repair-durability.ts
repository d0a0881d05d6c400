/**
 * A crash model in which fsync matters, in the style of
 * ALICE / CrashMonkey: a `RepairFs` over the real files (so scans read them as
 * usual) that also records, per inode, what is DURABLE and which operations
 * since then are not.
 *
 * - A file's data is durable as of its last `sync()`. The data operations
 *   issued since (writes, truncates, the truncate of an `open(…, "w")`), in
 *   issue order, are its pending ops.
 * - Opening with "w", "a" or "wx" creates a missing file ("wx", exclusive
 *   create, fails with EEXIST on an existing path, as the lock file needs).
 * - A directory's entries are durable as of its last `syncDir()`. The entry
 *   operations since (a file created by `open`, `mkdir`, `unlink`, and each
 *   half of a rename) are its pending ops. A rename between two directories
 *   is two independent entry ops: the link in the target directory and the
 *   unlink in the source directory, each persisting with ITS directory, so a
 *   crash can leave the file under both names or under neither. A rename
 *   within one directory is one entry op (one directory block). The option
 *   `renames: "link-first"` forbids "neither": the unlink half persists only
 *   with (or after) the link half, the least a journaling filesystem gives
 *   (ext4 and XFS commit both halves in one transaction).
 *
 * A crash persists, for every file and every directory independently, ANY
 * PREFIX of its pending ops: the `PersistenceChoice` picks the prefix
 * lengths (none, all, a seeded random mix, or explicit per target). Data lives
 * in inodes: a file's bytes after the crash are its durable bytes plus its
 * persisted prefix, under whatever names its directories' persisted entries
 * give it. So a file created but never linked durably vanishes; a file whose
 * entry persisted but whose data did not comes back with its durable data
 * (empty for a new file); a file that ends up under two names (a half-
 * persisted rename) is written out as two independent copies.
 *
 * `crash(choice)` replaces everything under the root with that state; the
 * default choice, "none", is the old model (only what was synced survives);
 * "all" is a process crash (every write reached the page cache). The model
 * keeps its pre-crash state, so `crash` may be called again with another
 * choice (each call makes the tree that state), but every mutating call after
 * a crash throws: the process is dead. Real fsyncs are not issued (the model,
 * not the kernel, decides what survives), which also keeps the crash loops
 * fast. Files written around the model (not through this `RepairFs`) are not
 * in its state and vanish at a crash.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { nodeRepairFs } from "../../src/repair/index.js";
import type { RepairFile, RepairFs } from "../../src/repair/index.js";

type DataOp = { kind: "write"; at: number; bytes: Buffer } | { kind: "truncate"; size: number };
type EntryOp =
  | { kind: "link"; name: string; id: number; why: "create" | "mkdir" | "rename-in" | "hard-link" }
  /** A rename-out names its rename-in (`into`: the target directory and the op) for the "link-first" rule. */
  | { kind: "unlink"; name: string; why: "unlink" | "rename-out"; into?: { dir: DirInode; op: EntryOp } }
  | { kind: "rename"; from: string; to: string; id: number };

interface FileInode {
  kind: "file";
  id: number;
  /** The last path it was reached by (labels only). */
  path: string;
  durable: Buffer;
  /** The current bytes: `durable` with every pending op applied (what the real file holds). */
  content: Buffer;
  pending: DataOp[];
}
interface DirInode {
  kind: "dir";
  id: number;
  path: string;
  durable: Map<string, number>;
  entries: Map<string, number>;
  pending: EntryOp[];
}
type Inode = FileInode | DirInode;

/** A file or directory with operations not yet durable, as a `PersistenceChoice` function sees it. */
export interface PendingTarget {
  kind: "file" | "dir";
  /** Relative to the model's root (the file's last known name). */
  path: string;
  /** Its pending ops in issue order, described ("write 120@0", "truncate 0", "link journal.jsonl (create)", …). */
  ops: readonly string[];
}

/**
 * Which prefix of each target's pending ops persists: "none" (only synced
 * state: the old model), "all" (a process crash), a seeded random prefix per
 * target, or a function returning the prefix length (clamped to [0, ops]).
 *
 * A file's prefix may also end inside a write (a write of several blocks can
 * reach the disk in part): a fractional length `p + f` for a file keeps its
 * first p ops and the first `floor(f × length)` bytes of op p + 1 when that
 * op is a write. A seeded mix tears the next write so with probability 1/2.
 */
export type PersistenceChoice =
  | "none"
  | "all"
  | { seed: number }
  /** One prefix length per pending target, in `pending()` order (missing: 0). */
  | { prefixes: readonly number[] }
  | ((target: PendingTarget) => number);

export function describeChoice(choice: PersistenceChoice): string {
  if (typeof choice === "string") return choice;
  if (typeof choice === "function") return "explicit";
  if ("prefixes" in choice) return `prefixes [${choice.prefixes.join(",")}]`;
  return `seed ${choice.seed}`;
}

/** What one crash persisted: the tree it leaves (relative path → bytes, null for a directory) and the prefix per target. */
export interface CrashState {
  tree: Map<string, Buffer | null>;
  /** "file <path>: 1/3" per target with pending ops (persisted prefix / pending count; "1+7B/3": and 7 bytes of the next write). */
  persisted: string[];
}

/**
 * How the two halves of a rename between directories persist:
 * "independent" (the default): each with its own directory's prefix, so a
 * crash may leave the file under both names or under NEITHER;
 * "link-first": never neither (the source's unlink persists only if the
 * target's link did).
 */
export type RenameHalves = "independent" | "link-first";

export interface DurabilityModelOptions {
  /** A `readTree(root)` already in hand (spares reading the tree again). */
  initial?: ReadonlyMap<string, Buffer | null>;
  renames?: RenameHalves;
}

export interface DurabilityModelFs extends RepairFs {
  /** Every file and directory with operations not yet durable, in creation order. */
  pending(): PendingTarget[];
  /** The state a crash with `choice` would leave, without writing it. */
  crashState(choice?: PersistenceChoice): CrashState;
  /**
   * Crashes: replaces the tree under the root with the state `choice` leaves
   * (default "none": only what was synced) and returns it. The model is dead
   * afterwards (every mutating call throws), but `crash` may be called again.
   */
  crash(choice?: PersistenceChoice): CrashState;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same persistence mix. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function applyData(bytes: Buffer, op: DataOp): Buffer {
  if (op.kind === "truncate") {
    if (op.size <= bytes.length) return bytes.subarray(0, op.size);
    return Buffer.concat([bytes, Buffer.alloc(op.size - bytes.length)]);
  }
  const end = op.at + op.bytes.length;
  const out = end <= bytes.length ? Buffer.from(bytes) : Buffer.concat([bytes, Buffer.alloc(end - bytes.length)]);
  op.bytes.copy(out, op.at);
  return out;
}

function applyEntry(entries: Map<string, number>, op: EntryOp): void {
  if (op.kind === "link") entries.set(op.name, op.id);
  else if (op.kind === "unlink") entries.delete(op.name);
  else {
    entries.delete(op.from);
    entries.set(op.to, op.id);
  }
}

function describeData(op: DataOp): string {
  return op.kind === "truncate" ? `truncate ${op.size}` : `write ${op.bytes.length}@${op.at}`;
}

function describeEntry(op: EntryOp): string {
  if (op.kind === "link") return `link ${op.name} (${op.why})`;
  if (op.kind === "unlink") return `unlink ${op.name} (${op.why})`;
  return `rename ${op.from} -> ${op.to}`;
}

/** Every file and directory under `root`, relative path → bytes (null: a directory). */
export function readTree(root: string): Map<string, Buffer | null> {
  const tree = new Map<string, Buffer | null>();
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = relative(root, full);
      if (statSync(full).isDirectory()) {
        tree.set(rel, null);
        visit(full);
      } else {
        tree.set(rel, readFileSync(full));
      }
    }
  };
  visit(root);
  return tree;
}

/**
 * Makes everything under `root` exactly `tree` (the root itself stays). Only
 * what differs is written: the crash loops rewrite a data dir hundreds of
 * times, and most of it never changes.
 */
export function writeTree(root: string, tree: ReadonlyMap<string, Buffer | null>): void {
  const current = readTree(root);
  // Deepest first, so a directory is emptied before it goes.
  for (const rel of [...current.keys()].sort().reverse()) {
    const want = tree.get(rel);
    const have = current.get(rel)!;
    if (want === undefined || (want === null) !== (have === null)) rmSync(join(root, rel), { recursive: true, force: true });
  }
  // Parents sort before their children ("a" < "a/b").
  for (const rel of [...tree.keys()].sort()) {
    const bytes = tree.get(rel)!;
    const have = current.get(rel);
    if (bytes === null) {
      if (have !== null) mkdirSync(join(root, rel));
    } else if (have === undefined || have === null || !have.equals(bytes)) {
      // A fresh inode: a crashed move (link, then unlink) may have left this name a hard link of
      // another path in the tree, and writing through it would change that file too.
      if (have !== undefined && have !== null) rmSync(join(root, rel), { force: true });
      writeFileSync(join(root, rel), bytes);
    }
  }
}

/** A digest of a tree: equal trees, equal fingerprints (the harness recovers from each distinct crash state once). */
export function treeFingerprint(tree: ReadonlyMap<string, Buffer | null>): string {
  const hash = createHash("sha256");
  for (const rel of [...tree.keys()].sort()) {
    const bytes = tree.get(rel)!;
    hash.update(`${rel}\0${bytes === null ? "d" : `f${bytes.length}`}\0`);
    if (bytes !== null) hash.update(bytes);
  }
  return hash.digest("hex");
}

/**
 * The model over every file and directory under `root`, all durable at the
 * start (the scenario's files were written and synced before the act). Every
 * path the act writes must lie under `root`.
 */
export function createDurabilityModelFs(root: string, options: DurabilityModelOptions = {}): DurabilityModelFs {
  const initial = options.initial ?? readTree(root);
  const renames = options.renames ?? "independent";
  const inodes: Inode[] = [];
  const newDir = (path: string): DirInode => {
    const inode: DirInode = { kind: "dir", id: inodes.length, path, durable: new Map(), entries: new Map(), pending: [] };
    inodes.push(inode);
    return inode;
  };
  const newFile = (path: string, durable: Buffer): FileInode => {
    const inode: FileInode = { kind: "file", id: inodes.length, path, durable, content: Buffer.from(durable), pending: [] };
    inodes.push(inode);
    return inode;
  };
  const top = newDir("");
  let crashed = false;

  const dirAt = (rel: string): DirInode => {
    let dir = top;
    if (rel === "") return dir;
    for (const part of rel.split(sep)) {
      const id = dir.entries.get(part);
      const next = id === undefined ? undefined : inodes[id];
      if (next?.kind !== "dir") throw new Error(`durability model: ${join(root, rel)} is not a directory the model knows`);
      dir = next;
    }
    return dir;
  };
  for (const [rel, bytes] of [...initial].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const parent = dirAt(dirname(rel) === "." ? "" : dirname(rel));
    const inode = bytes === null ? newDir(rel) : newFile(rel, Buffer.from(bytes));
    parent.entries.set(basename(rel), inode.id);
    parent.durable.set(basename(rel), inode.id);
  }

  /** The path relative to the root, or a throw for a path outside it. */
  const rel = (filePath: string): string => {
    const r = relative(root, filePath);
    if (r === "" || r.startsWith("..") || r.startsWith(sep)) throw new Error(`durability model: ${filePath} is not under ${root}`);
    return r;
  };
  const parentOf = (filePath: string): DirInode => {
    const parent = dirname(rel(filePath));
    return dirAt(parent === "." ? "" : parent);
  };
  const lookup = (filePath: string): Inode | undefined => {
    const id = parentOf(filePath).entries.get(basename(filePath));
    return id === undefined ? undefined : inodes[id];
  };
  const alive = (operation: string, filePath: string): void => {
    if (crashed) throw new Error(`durability model: ${operation} ${filePath} after the crash (the process is dead)`);
  };
  const entryOp = (dir: DirInode, op: EntryOp): void => {
    dir.pending.push(op);
    applyEntry(dir.entries, op);
  };
  const dataOp = (file: FileInode, op: DataOp): void => {
    file.pending.push(op);
    file.content = applyData(file.content, op);
  };

  const crashState = (choice: PersistenceChoice = "none"): CrashState => {
    const random = typeof choice === "object" && "seed" in choice ? seededRandom(choice.seed) : null;
    const explicit = typeof choice === "object" && "prefixes" in choice ? choice.prefixes : null;
    const prefix = new Map<number, number>();
    let index = 0;
    for (const inode of inodes) {
      const count = inode.pending.length;
      if (count === 0) continue;
      const given = explicit?.[index++] ?? 0;
      const ops = inode.kind === "file" ? inode.pending.map(describeData) : inode.pending.map(describeEntry);
      const target: PendingTarget = { kind: inode.kind, path: inode.path, ops };
      if (choice === "all") prefix.set(inode.id, count);
      else if (random !== null) {
        const whole = Math.floor(random() * (count + 1));
        const tear = inode.kind === "file" && whole < count && random() < 0.5 ? random() : 0;
        prefix.set(inode.id, whole + tear);
      } else if (typeof choice === "function") prefix.set(inode.id, Math.max(0, Math.min(count, choice(target))));
      else if (explicit !== null) prefix.set(inode.id, Math.max(0, Math.min(count, given)));
      else prefix.set(inode.id, 0);
    }
    if (renames === "link-first") {
      // Cut a source directory's prefix before a rename-out whose rename-in did not persist; repeat until
      // nothing changes (a cut can drop a rename-in of the cut directory, prefixes only shrink).
      for (let changed = true; changed; ) {
        changed = false;
        for (const inode of inodes) {
          if (inode.kind !== "dir") continue;
          const upTo = prefix.get(inode.id) ?? 0;
          const cut = inode.pending.slice(0, upTo).findIndex((op) => {
            if (op.kind !== "unlink" || op.into === undefined) return false;
            const at = op.into.dir.pending.indexOf(op.into.op);
            return at >= 0 && at >= (prefix.get(op.into.dir.id) ?? 0); // (not pending any more: durable)
          });
          if (cut >= 0) {
            prefix.set(inode.id, cut);
            changed = true;
          }
        }
      }
    }
    const persisted: string[] = [];
    const files = new Map<number, Buffer>();
    const dirs = new Map<number, Map<string, number>>();
    for (const inode of inodes) {
      const upTo = prefix.get(inode.id) ?? 0;
      const whole = Math.floor(upTo);
      if (inode.kind === "file") {
        let bytes = inode.durable;
        for (const op of inode.pending.slice(0, whole)) bytes = applyData(bytes, op);
        const next = inode.pending[whole];
        let torn = 0;
        if (next?.kind === "write") {
          torn = Math.floor((upTo - whole) * next.bytes.length);
          if (torn > 0) bytes = applyData(bytes, { kind: "write", at: next.at, bytes: next.bytes.subarray(0, torn) });
        }
        files.set(inode.id, bytes);
        if (inode.pending.length > 0) persisted.push(`file ${inode.path}: ${whole}${torn > 0 ? `+${torn}B` : ""}/${inode.pending.length}`);
      } else {
        const entries = new Map(inode.durable);
        for (const op of inode.pending.slice(0, whole)) applyEntry(entries, op);
        dirs.set(inode.id, entries);
        if (inode.pending.length > 0) persisted.push(`dir ${inode.path || "."}: ${whole}/${inode.pending.length}`);
      }
    }
    const tree = new Map<string, Buffer | null>();
    const visit = (id: number, at: string, stack: Set<number>): void => {
      for (const [name, child] of dirs.get(id)!) {
        const path = at === "" ? name : join(at, name);
        if (inodes[child]!.kind === "file") {
          tree.set(path, files.get(child)!);
        } else if (!stack.has(child)) {
          tree.set(path, null);
          visit(child, path, new Set([...stack, child]));
        }
      }
    };
    visit(top.id, "", new Set([top.id]));
    return { tree, persisted };
  };

  const openFile = async (filePath: string, mode: "r+" | "w" | "a" | "wx"): Promise<RepairFile> => {
    alive(`open(${mode})`, filePath);
    const file = await nodeRepairFs.open(filePath, mode);
    let inode = lookup(filePath);
    if (inode?.kind === "dir") throw new Error(`durability model: ${filePath} is a directory`);
    if (inode === undefined) {
      if (mode === "r+") {
        await file.close();
        throw new Error(`durability model: ${filePath} exists, but was created around the model`);
      }
      inode = newFile(rel(filePath), Buffer.alloc(0)); // created, never synced: empty after a crash
      entryOp(parentOf(filePath), { kind: "link", name: basename(filePath), id: inode.id, why: "create" });
    } else {
      inode.path = rel(filePath);
      if (mode === "w" && inode.content.length > 0) dataOp(inode, { kind: "truncate", size: 0 });
    }
    const target = inode;
    let cursor = 0;
    return {
      read: (buffer, offset, length, position) => file.read(buffer, offset, length, position),
      async write(buffer, offset, length, position) {
        alive("write", filePath);
        const at = mode === "a" ? target.content.length : (position ?? cursor);
        const written = await file.write(buffer, offset, length, position);
        dataOp(target, { kind: "write", at, bytes: Buffer.from(buffer.subarray(offset, offset + written)) });
        if (position === null) cursor = at + written;
        return written;
      },
      async truncate(size) {
        alive("truncate", filePath);
        await file.truncate(size);
        dataOp(target, { kind: "truncate", size });
      },
      async sync() {
        alive("sync", filePath);
        // The model's bytes must be the file's: a write around the model would make its crash states wrong.
        const { size } = await file.stat();
        if (size !== target.content.length) {
          throw new Error(
            `durability model: ${filePath} holds ${size} bytes, the model ${target.content.length} (written around the model?)`,
          );
        }
        target.durable = Buffer.from(target.content);
        target.pending = [];
      },
      stat: () => file.stat(),
      close: () => file.close(),
    };
  };

  return {
    async open(filePath, mode) {
      if (mode === "r") return nodeRepairFs.open(filePath, mode);
      return openFile(filePath, mode);
    },
    stat: (filePath) => nodeRepairFs.stat(filePath),
    readdir: (dirPath) => nodeRepairFs.readdir(dirPath),
    async mkdir(dirPath) {
      alive("mkdir", dirPath);
      await nodeRepairFs.mkdir(dirPath);
      if (lookup(dirPath) !== undefined) return;
      // (A directory made around the model, e.g. by today's lock, is taken as new here: its entry is not durable.)
      const inode = newDir(rel(dirPath));
      entryOp(parentOf(dirPath), { kind: "link", name: basename(dirPath), id: inode.id, why: "mkdir" });
    },
    async rename(from, to) {
      alive("rename", from);
      const inode = lookup(from);
      const source = parentOf(from);
      const target = parentOf(to);
      await nodeRepairFs.rename(from, to);
      if (inode === undefined) throw new Error(`durability model: renamed ${from}, which was created around the model`);
      inode.path = rel(to);
      if (source === target) {
        entryOp(source, { kind: "rename", from: basename(from), to: basename(to), id: inode.id });
      } else {
        const into: EntryOp = { kind: "link", name: basename(to), id: inode.id, why: "rename-in" };
        entryOp(target, into);
        entryOp(source, { kind: "unlink", name: basename(from), why: "rename-out", into: { dir: target, op: into } });
      }
    },
    async syncDir(dirPath) {
      alive("syncDir", dirPath);
      const r = relative(root, dirPath);
      const dir = dirAt(r);
      dir.durable = new Map(dir.entries);
      dir.pending = [];
    },
    async unlink(filePath) {
      alive("unlink", filePath);
      const known = lookup(filePath) !== undefined;
      await nodeRepairFs.unlink(filePath);
      if (known) entryOp(parentOf(filePath), { kind: "unlink", name: basename(filePath), why: "unlink" });
    },
    async link(from, to) {
      alive("link", from);
      const inode = lookup(from);
      await nodeRepairFs.link(from, to);
      if (inode === undefined) throw new Error(`durability model: linked ${from}, which was created around the model`);
      // A second name for the same inode: the file's data is shared, the new entry persists with its directory.
      entryOp(parentOf(to), { kind: "link", name: basename(to), id: inode.id, why: "hard-link" });
    },
    async rmdir(dirPath) {
      alive("rmdir", dirPath);
      const known = lookup(dirPath) !== undefined;
      await nodeRepairFs.rmdir(dirPath);
      if (known) entryOp(parentOf(dirPath), { kind: "unlink", name: basename(dirPath), why: "unlink" });
    },
    pending() {
      return inodes
        .filter((inode) => inode.pending.length > 0)
        .map((inode) =>
          inode.kind === "file"
            ? { kind: "file", path: inode.path, ops: inode.pending.map(describeData) }
            : { kind: "dir", path: inode.path, ops: inode.pending.map(describeEntry) },
        );
    },
    crashState,
    crash(choice = "none") {
      crashed = true;
      const state = crashState(choice);
      writeTree(root, state.tree);
      return state;
    },
  };
}
