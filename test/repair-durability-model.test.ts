/**
 * The durability model itself (helpers/repair-durability.ts): a
 * crash persists any prefix of each file's unsynced data ops and of each
 * directory's unsynced entry ops, the two halves of a rename independently;
 * synced state always survives; "all" is the process crash; `wx` and the
 * lock protocol; the operator's stale-lock rule (helpers/crash-explorer.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RepairFile } from "../src/repair/index.js";
import { clearStaleLocks } from "./helpers/crash-explorer.js";
import { trackedTempDir } from "./helpers/fixtures.js";
import { type PendingTarget, createDurabilityModelFs, readTree } from "./helpers/repair-durability.js";

const bytes = (text: string): Buffer => Buffer.from(text);

/** A fresh root holding `files` (relative path → text), every parent directory made. */
function tree(files: Record<string, string> = {}, dirs: string[] = []): string {
  const root = trackedTempDir("segscan-model-");
  for (const dir of dirs) mkdirSync(join(root, dir), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

/** The tree as relative path → text (directories as "<dir>"). */
function view(state: Map<string, Buffer | null>): Record<string, string> {
  return Object.fromEntries([...state].map(([name, data]) => [name, data === null ? "<dir>" : data.toString()]));
}

/** A choice giving each target (by kind and path) an explicit prefix; 0 for the rest. */
function prefixes(chosen: Record<string, number>): (target: PendingTarget) => number {
  return (target) => chosen[`${target.kind} ${target.path}`] ?? 0;
}

async function write(file: RepairFile, text: string, position: number | null): Promise<void> {
  await file.write(bytes(text), 0, text.length, position);
}

describe("file data: any prefix of the unsynced writes and truncates", () => {
  it("a file written and not synced comes back with a prefix of its writes, in issue order", async () => {
    const root = tree({ "f.log": "" });
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "f.log"), "a");
    for (const chunk of ["one,", "two,", "three"]) await write(file, chunk, null);
    await file.close();
    expect(fs.pending()).toEqual([{ kind: "file", path: "f.log", ops: ["write 4@0", "write 4@4", "write 5@8"] }]);
    const seen = new Set<string>();
    for (let p = 0; p <= 3; p++) {
      const state = fs.crashState(prefixes({ "file f.log": p }));
      expect(view(state.tree)["f.log"]).toBe(["", "one,", "one,two,", "one,two,three"][p]);
      expect(state.persisted).toEqual([`file f.log: ${p}/3`]);
    }
    for (let seed = 0; seed < 40; seed++) seen.add(view(fs.crashState({ seed }).tree)["f.log"]!);
    // Seeded mixes reach every whole prefix (and torn ones between), never anything else.
    for (const whole of ["", "one,", "one,two,", "one,two,three"]) expect(seen).toContain(whole);
    for (const text of seen) expect("one,two,three".startsWith(text), text).toBe(true);
    expect(view(fs.crashState("none").tree)["f.log"]).toBe("");
    expect(view(fs.crashState("all").tree)["f.log"]).toBe("one,two,three");
  });

  it("a persisted prefix may end inside a write: part of its bytes reached the disk", async () => {
    const root = tree({ "f.log": "" });
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "f.log"), "a");
    for (const chunk of ["0123456789", "abcdefghij"]) await write(file, chunk, null);
    await file.close();
    const state = fs.crashState(prefixes({ "file f.log": 1.35 }));
    expect(view(state.tree)["f.log"]).toBe("0123456789abc");
    expect(state.persisted).toEqual(["file f.log: 1+3B/2"]);
    const seen = new Set<string>();
    for (let seed = 0; seed < 200; seed++) seen.add(view(fs.crashState({ seed }).tree)["f.log"]!);
    // Only prefixes of the byte stream, torn ones among them.
    for (const text of seen) expect("0123456789abcdefghij".startsWith(text), text).toBe(true);
    expect([...seen].some((text) => text.length % 10 !== 0)).toBe(true);
  });

  it("truncates and positioned writes persist as a prefix of one sequence; a sync makes everything before it durable", async () => {
    const root = tree({ "f.log": "abcdefgh" });
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "f.log"), "r+");
    await file.truncate(3);
    await write(file, "XY", 1);
    await file.sync();
    await file.truncate(2);
    await write(file, "Z", 5);
    await file.close();
    const at = (p: number): string => view(fs.crashState(prefixes({ "file f.log": p })).tree)["f.log"]!;
    expect(at(0)).toBe("aXY");
    expect(at(1)).toBe("aX");
    expect(at(2)).toBe("aX\0\0\0Z");
  });

  it("opening with w truncates as a data op: unsynced, the old bytes come back", async () => {
    const root = tree({ "f.log": "old" });
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "f.log"), "w");
    await write(file, "new!", 0);
    await file.close();
    expect(fs.pending()[0]!.ops).toEqual(["truncate 0", "write 4@0"]);
    expect(view(fs.crashState("none").tree)["f.log"]).toBe("old");
    expect(view(fs.crashState(prefixes({ "file f.log": 1 })).tree)["f.log"]).toBe("");
    expect(view(fs.crashState("all").tree)["f.log"]).toBe("new!");
  });
});

describe("directory entries: any prefix of the unsynced entry ops", () => {
  it("a file created but never linked durably vanishes; one linked durably but never synced comes back empty", async () => {
    const root = tree();
    const fs = createDurabilityModelFs(root);
    const synced = await fs.open(join(root, "data-synced"), "w");
    await write(synced, "durable data", 0);
    await synced.sync();
    await synced.close();
    expect(view(fs.crashState("none").tree)).toEqual({});
    const linked = await fs.open(join(root, "linked"), "w");
    await write(linked, "lost data", 0);
    await linked.close();
    await fs.syncDir(root);
    expect(view(fs.crashState("none").tree)).toEqual({ "data-synced": "durable data", linked: "" });
    expect(view(fs.crashState("all").tree)).toEqual({ "data-synced": "durable data", linked: "lost data" });
  });

  it("a rename between directories persists only per the chosen prefix of each directory", async () => {
    const root = tree({ "a/f": "bytes" }, ["a", "b"]);
    const fs = createDurabilityModelFs(root);
    await fs.rename(join(root, "a/f"), join(root, "b/g"));
    expect(fs.pending()).toEqual([
      { kind: "dir", path: "a", ops: ["unlink f (rename-out)"] },
      { kind: "dir", path: "b", ops: ["link g (rename-in)"] },
    ]);
    const files = (a: number, b: number): string[] =>
      Object.keys(view(fs.crashState(prefixes({ "dir a": a, "dir b": b })).tree)).filter((name) => name.includes("/"));
    expect(files(0, 0)).toEqual(["a/f"]);
    expect(files(0, 1)).toEqual(["a/f", "b/g"]); // under both names
    expect(files(1, 0)).toEqual([]); // under neither: the source half persisted alone
    expect(files(1, 1)).toEqual(["b/g"]);
    // Synced target then source: every prefix keeps it somewhere.
    await fs.syncDir(join(root, "b"));
    for (const a of [0, 1]) expect(files(a, 0)).toContain("b/g");
  });

  it('with renames "link-first" the source half never persists without the target half: never under neither name', async () => {
    const root = tree({ "a/f": "bytes", "a/h": "more" }, ["a", "b"]);
    const fs = createDurabilityModelFs(root, { renames: "link-first" });
    await fs.rename(join(root, "a/f"), join(root, "b/g"));
    await fs.unlink(join(root, "a/h"));
    const files = (a: number, b: number): string[] =>
      Object.keys(view(fs.crashState(prefixes({ "dir a": a, "dir b": b })).tree)).filter((name) => name.includes("/"));
    expect(files(0, 0)).toEqual(["a/f", "a/h"]);
    expect(files(0, 1)).toEqual(["a/f", "a/h", "b/g"]);
    // The unlink of f is held back, and with it every later op of a (the unlink of h): a prefix stays a prefix.
    expect(files(1, 0)).toEqual(["a/f", "a/h"]);
    expect(files(2, 0)).toEqual(["a/f", "a/h"]);
    expect(files(2, 1)).toEqual(["b/g"]);
    for (let seed = 0; seed < 30; seed++) {
      const names = Object.keys(view(fs.crashState({ seed }).tree));
      expect(names.includes("a/f") || names.includes("b/g"), `seed ${seed}`).toBe(true);
    }
  });

  it("a rename within one directory is one entry op: the old name or the new, never both or neither", async () => {
    const root = tree({ "i.staging": "new", i: "old" });
    const fs = createDurabilityModelFs(root);
    await fs.rename(join(root, "i.staging"), join(root, "i"));
    expect(fs.pending()).toEqual([{ kind: "dir", path: "", ops: ["rename i.staging -> i"] }]);
    expect(view(fs.crashState("none").tree)).toEqual({ "i.staging": "new", i: "old" });
    expect(view(fs.crashState("all").tree)).toEqual({ i: "new" });
  });

  it("a directory made and never linked durably vanishes with everything in it, synced or not", async () => {
    const root = tree();
    const fs = createDurabilityModelFs(root);
    await fs.mkdir(join(root, "p.segscan"));
    const file = await fs.open(join(root, "p.segscan/journal.jsonl"), "a");
    await write(file, "{}\n", null);
    await file.sync();
    await file.close();
    await fs.syncDir(join(root, "p.segscan"));
    expect(view(fs.crashState("none").tree)).toEqual({});
    await fs.syncDir(root);
    expect(view(fs.crashState("none").tree)).toEqual({ "p.segscan": "<dir>", "p.segscan/journal.jsonl": "{}\n" });
  });

  it("an unlink persists with its directory's prefix", async () => {
    const root = tree({ "x.tmp": "partial" });
    const fs = createDurabilityModelFs(root);
    await fs.unlink(join(root, "x.tmp"));
    await fs.unlink(join(root, "never-there"));
    expect(view(fs.crashState("none").tree)).toEqual({ "x.tmp": "partial" });
    expect(view(fs.crashState("all").tree)).toEqual({});
  });
});

/** A random op on the model over a tree of a few files in two directories. */
type Op =
  | { op: "write"; file: number; at: number; text: string }
  | { op: "append"; file: number; text: string }
  | { op: "truncate"; file: number; size: number }
  | { op: "create"; file: number }
  | { op: "rename"; file: number; to: number }
  | { op: "unlink"; file: number }
  | { op: "sync"; file: number }
  | { op: "syncDir"; dir: number };

const NAMES = ["a/f0", "a/f1", "b/f2", "b/f3", "a/f4"];
const DIRS = ["a", "b"];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("write" as const), file: fc.nat(4), at: fc.nat(12), text: fc.string({ minLength: 1, maxLength: 6 }) }),
  fc.record({ op: fc.constant("append" as const), file: fc.nat(4), text: fc.string({ minLength: 1, maxLength: 6 }) }),
  fc.record({ op: fc.constant("truncate" as const), file: fc.nat(4), size: fc.nat(16) }),
  fc.record({ op: fc.constant("create" as const), file: fc.nat(4) }),
  fc.record({ op: fc.constant("rename" as const), file: fc.nat(4), to: fc.nat(4) }),
  fc.record({ op: fc.constant("unlink" as const), file: fc.nat(4) }),
  fc.record({ op: fc.constant("sync" as const), file: fc.nat(4) }),
  fc.record({ op: fc.constant("syncDir" as const), dir: fc.nat(1) }),
);

/** Runs `ops` on the model (ops on a missing file are skipped); returns the relative names each op touched. */
async function run(fs: ReturnType<typeof createDurabilityModelFs>, root: string, ops: Op[]): Promise<Set<string>> {
  const touched = new Set<string>();
  const exists = async (name: string): Promise<boolean> => (await fs.stat(join(root, name))) !== null;
  for (const op of ops) {
    if (op.op === "syncDir") {
      await fs.syncDir(join(root, DIRS[op.dir]!));
      continue;
    }
    const name = NAMES[op.file]!;
    const full = join(root, name);
    if (op.op === "create") {
      const file = await fs.open(full, "w");
      await file.close();
    } else if (!(await exists(name))) {
      continue;
    } else if (op.op === "rename") {
      if (op.to === op.file) continue;
      await fs.rename(full, join(root, NAMES[op.to]!));
      touched.add(NAMES[op.to]!.split("/")[0]!);
    } else if (op.op === "unlink") {
      await fs.unlink(full);
    } else {
      const file = await fs.open(full, op.op === "append" ? "a" : "r+");
      if (op.op === "write") await write(file, op.text, op.at);
      else if (op.op === "append") await write(file, op.text, null);
      else if (op.op === "truncate") await file.truncate(op.size);
      else await file.sync();
      await file.close();
    }
    touched.add(name);
    touched.add(name.split("/")[0]!);
  }
  return touched;
}

describe("properties", () => {
  const start = { "a/f0": "zero", "b/f2": "two-two" };

  it('"all" is the process crash: it leaves exactly what the process left on disk', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), async (ops) => {
        const root = tree(start, DIRS);
        const fs = createDurabilityModelFs(root);
        await run(fs, root, ops);
        const onDisk = view(readTree(root));
        expect(view(fs.crash("all").tree)).toEqual(onDisk);
        expect(view(readTree(root))).toEqual(onDisk);
      }),
      { numRuns: 60 },
    );
  });

  it("synced state always survives: after syncing everything, any later unsynced ops and any persistence choice leave it wherever they did not touch", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 15 }), fc.array(opArb, { maxLength: 15 }), fc.nat(), async (first, later, seed) => {
        const root = tree(start, DIRS);
        const fs = createDurabilityModelFs(root);
        await run(fs, root, first);
        for (const name of NAMES) {
          if ((await fs.stat(join(root, name))) === null) continue;
          const file = await fs.open(join(root, name), "r+");
          await file.sync();
          await file.close();
        }
        for (const dir of [...DIRS, ""]) await fs.syncDir(join(root, dir));
        const synced = view(readTree(root));
        expect(view(fs.crashState({ seed }).tree)).toEqual(synced);
        const touched = await run(
          fs,
          root,
          later.filter((op) => op.op !== "sync" && op.op !== "syncDir"),
        );
        expect(view(fs.crashState("none").tree)).toEqual(synced);
        const crashed = view(fs.crashState({ seed }).tree);
        for (const [name, text] of Object.entries(synced)) {
          if (!touched.has(name) && !touched.has(name.split("/")[0]!)) expect(crashed[name], name).toBe(text);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("after the crash", () => {
  it("every mutating call throws (the process is dead), and crash may be called again with another choice", async () => {
    const root = tree({ f: "x" });
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "f"), "a");
    await write(file, "yz", null);
    await file.close();
    fs.crash("all");
    expect(view(readTree(root))).toEqual({ f: "xyz" });
    fs.crash("none");
    expect(view(readTree(root))).toEqual({ f: "x" });
    await expect(fs.open(join(root, "f"), "a")).rejects.toThrow(/after the crash/);
    await expect(fs.mkdir(join(root, "d"))).rejects.toThrow(/after the crash/);
  });
});

describe("the lock file in the model (exclusive create, docs/repair.md rule 2)", () => {
  /** The lock protocol the runner follows through RepairFs: wx-create, write, sync, sync the directory; unlink on release. */
  async function takeLock(fs: ReturnType<typeof createDurabilityModelFs>, lock: string, pid = process.pid): Promise<void> {
    const file = await fs.open(lock, "wx");
    await write(file, `${JSON.stringify({ pid, host: "here", started: "2024-01-01T00:00:00.000Z", command: "segscan" })}\n`, 0);
    await file.sync();
    await file.close();
  }

  it("wx fails with EEXIST on an existing path, durable or just created", async () => {
    const root = tree({ "p.segscan/lock": "{}" }, ["p.segscan", "q.segscan"]);
    const fs = createDurabilityModelFs(root);
    await expect(fs.open(join(root, "p.segscan/lock"), "wx")).rejects.toMatchObject({ code: "EEXIST" });
    await takeLock(fs, join(root, "q.segscan/lock"));
    await expect(fs.open(join(root, "q.segscan/lock"), "wx")).rejects.toMatchObject({ code: "EEXIST" });
  });

  it("a crash leaves the lock per the persistence rules; the operator's rule clears it", async () => {
    const root = tree({}, ["p.segscan"]);
    const fs = createDurabilityModelFs(root);
    const lock = join(root, "p.segscan/lock");
    await takeLock(fs, lock);
    // Not yet in its directory durably: gone after "none", present after "all".
    expect(view(fs.crashState("none").tree)["p.segscan/lock"]).toBeUndefined();
    await fs.syncDir(join(root, "p.segscan"));
    expect(JSON.parse(view(fs.crashState("none").tree)["p.segscan/lock"]!).pid).toBe(process.pid);
    // Released (unlinked) but the unlink not synced: a power cut brings the lock back.
    await fs.unlink(lock);
    expect(view(fs.crashState("all").tree)["p.segscan/lock"]).toBeUndefined();
    fs.crash("none");
    expect(clearStaleLocks(root)).toEqual(["p.segscan/lock"]);
    expect(view(readTree(root))).toEqual({ "p.segscan": "<dir>" });
  });

  it("a lock whose entry persisted but not its data is empty (an unreadable holder), and is cleared the same way", async () => {
    const root = tree({}, ["p.segscan"]);
    const fs = createDurabilityModelFs(root);
    const file = await fs.open(join(root, "p.segscan/lock"), "wx");
    await write(file, '{"pid":', 0);
    await file.close();
    await fs.syncDir(join(root, "p.segscan"));
    fs.crash(prefixes({ "file p.segscan/lock": 1 }));
    expect(view(readTree(root))["p.segscan/lock"]).toBe('{"pid":');
    expect(clearStaleLocks(root)).toEqual(["p.segscan/lock"]);
    fs.crash("none");
    expect(view(readTree(root))["p.segscan/lock"]).toBe("");
    expect(clearStaleLocks(root)).toEqual(["p.segscan/lock"]);
  });

  it("a lock naming another pid is not cleared (its holder may be running)", () => {
    const root = tree({ "p.segscan/lock": JSON.stringify({ pid: process.pid + 1, host: "h" }) }, ["p.segscan"]);
    expect(() => clearStaleLocks(root)).toThrow(/not the crashed run/);
  });
});
