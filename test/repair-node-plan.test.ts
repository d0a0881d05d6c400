/**
 * docs/repair.md §6.2, docs/node.md N7: one plan for the whole node, preflight
 * before any change, and the restore defects (items 3–7, 10:
 * - the plan holds every plane's steps and survives a JSON round trip, and the
 *   parsed plan applies;
 * - a writer on one partition's `.log` refuses the whole apply before the WAL
 *   (or anything) is cut, naming the file;
 * - a symlinked `metadata/` journals beside the real dir, and `restore <root>`
 *   finds it and returns every byte;
 * - a journal that does not parse, or an interrupted restore, refuses the WAL
 *   cut and the offset rewrites before they change anything;
 * - restore proves the cut file is the file that was cut (a same-length
 *   replacement is refused, unchanged);
 * - restore refuses while journal.wal or an offset file is open for writing;
 * - a 2 GiB sparse corrupt offset file costs a bounded evidence copy;
 * - a symlinked offset file is left alone by the plan, and the rest applies.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { scanPath } from "../src/node/scan-path.js";
import {
  JournalCorruptError,
  OFFSET_EVIDENCE_MAX_BYTES,
  RepairError,
  RestoreConflictError,
  StalePlanError,
  WriterOpenError,
  applyRepair,
  findRestorable,
  parsePlan,
  planRepair,
  restore,
} from "../src/repair/index.js";
import type { RepairPlan } from "../src/repair/index.js";
import { runCli } from "./helpers/cli.js";
import { holdOpen } from "./helpers/holder.js";
import { randomBytes } from "./helpers/fixtures.js";
import { tempDir } from "./helpers/node-wal.js";

const engine = createTsEngine();
const P1 = "streams/1/topics/1/partitions/1";

/**
 * A node with work on every plane: a segment torn tail in P1 under two
 * committed cursors (offset-ahead-of-torn-tail) and a WAL torn tail (random
 * bytes after the last entry: no survivor can verify).
 */
async function everyPlaneNode(root = tempDir()): Promise<string> {
  const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
  await writeNodeMetadata(root, generated.partitions, { fault: "offset-ahead-of-torn-tail" });
  appendFileSync(join(root, "metadata/journal.wal"), randomBytes(300, 5));
  return root;
}

/** Every file under `root` (preserve dirs included unless `skipPreserve`), by path, as hex. */
function files(root: string, skipPreserve = true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (skipPreserve && name.endsWith(".segscan")) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[path.slice(root.length + 1)] = readFileSync(path).toString("hex");
    }
  };
  walk(root);
  return out;
}

async function planNode(root: string, clampOffsets = true): Promise<RepairPlan> {
  return planRepair(await scanPath(root, { engine, concurrency: 1 }), { clampOffsets });
}

const kinds = (plan: RepairPlan): string[] => plan.targets.map((t) => `${t.kind}:${t.steps.map((s) => s.kind).join(",")}`);

describe("one plan for the whole node", () => {
  it("holds the WAL cut, the segment cut and the offset clamps; a JSON round trip is the same plan and applies; restore returns every byte", async () => {
    const root = await everyPlaneNode();
    const before = files(root);
    const plan = await planNode(root);
    expect(kinds(plan)).toEqual(["metadata:truncate", "partition:truncate,replace,replace"]);
    const text = JSON.stringify(plan);
    const parsed = parsePlan(JSON.parse(text));
    expect(parsed).toEqual(plan);

    const result = await applyRepair(parsed, { engine, checkWriters: false });
    expect(result.changed).toBe(true);
    expect(result.targets.map((t) => t.kind)).toEqual(["metadata", "partition"]);
    const after = await scanPath(root, { engine, concurrency: 1 });
    expect(after.node!.verdict).toBe("clean");
    expect(after.partitions.every((p) => p.verdict === "clean")).toBe(true);

    expect((await findRestorable(root)).sort()).toEqual([join(root, "metadata"), join(root, P1)].sort());
    for (const dir of await findRestorable(root)) await restore(dir, { engine, checkWriters: false });
    expect(files(root)).toEqual(before);
  });

  it("repair --json: one shape, dry run and apply, holding the plan with every plane", async () => {
    const root = await everyPlaneNode();
    const dry = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json"])).stdout);
    expect(Object.keys(dry).sort()).toEqual(["after", "applied", "plan", "report"]);
    expect(dry.applied).toBeNull();
    expect(kinds(dry.plan)).toEqual(["metadata:truncate", "partition:truncate,replace,replace"]);
    const apply = await runCli(["repair", root, "--clamp-offsets", "--json", "--apply"]);
    expect(apply.code).toBe(1);
    const applied = JSON.parse(apply.stdout);
    expect(Object.keys(applied).sort()).toEqual(["after", "applied", "plan", "report"]);
    expect(applied.applied.targets.map((t: { kind: string }) => t.kind)).toEqual(["metadata", "partition"]);
    expect(applied.applied.changed).toBe(true);
    expect(applied.after.node.verdict).toBe("clean");
  });
});

describe.runIf(process.platform === "linux")("preflight, then change", () => {
  it("a writer holding one partition's .log refuses the whole apply before the WAL or anything is changed, naming the file", async () => {
    const root = await everyPlaneNode();
    const before = files(root);
    const log = join(root, P1, readdirSync(join(root, P1)).find((n) => n.endsWith(".log"))!);
    const writer = await holdOpen(log, "a");
    try {
      const run = await runCli(["repair", root, "--apply"]);
      expect(run.code).toBe(8);
      expect(run.stderr).toContain("WriterOpenError");
      expect(run.stderr).toContain(`pid ${writer.pid} has ${log} open O_WRONLY`);
      expect(run.stderr).toContain("nothing was changed");
      expect(files(root)).toEqual(before);
      expect(existsSync(join(root, "metadata.segscan"))).toBe(false);
    } finally {
      writer.stop();
    }
  });

  it("restore refuses while journal.wal or an offset file is open for writing, changing nothing", async () => {
    const root = await everyPlaneNode();
    await applyRepair(await planNode(root), { engine, checkWriters: false });
    const repaired = files(root);
    const wal = join(root, "metadata/journal.wal");
    const offset = join(root, P1, "offsets/consumers/7");
    for (const [file, dir] of [
      [wal, join(root, "metadata")],
      [offset, join(root, P1)],
    ] as const) {
      const writer = await holdOpen(file, "r+");
      try {
        const error = await restore(dir, { engine }).catch((e: unknown) => e);
        expect(error, file).toBeInstanceOf(WriterOpenError);
        expect((error as Error).message).toContain(`pid ${writer.pid} has ${file} open O_RDWR`);
        expect(files(root)).toEqual(repaired);
      } finally {
        writer.stop();
      }
    }
  });

  it("an offset rewrite refuses while the offset file is open read-write", async () => {
    const root = await everyPlaneNode();
    const before = files(root);
    const offset = join(root, P1, "offsets/groups/1");
    const writer = await holdOpen(offset, "r+");
    try {
      const error = await applyRepair(await planNode(root), { engine }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WriterOpenError);
      expect(files(root)).toEqual(before);
    } finally {
      writer.stop();
    }
  });
});

describe("a journal the run cannot trust refuses every repair kind before any change", () => {
  for (const [what, damage] of [
    ["a line that does not parse", (journal: string) => writeFileSync(journal, 'not json\n{"v":1}\n')],
    [
      "an interrupted restore",
      (journal: string) =>
        writeFileSync(
          journal,
          `${[
            {
              v: 2,
              run: "r",
              seq: 1,
              kind: "intent",
              op: { kind: "move-aside", role: "sweep", reason: "staging", file: "x", to: "x", size: 1 },
              lost: [],
            },
            { v: 2, run: "s", seq: 1, kind: "undone", of: { run: "r", seq: 1 } },
          ]
            .map((r) => JSON.stringify(r))
            .join("\n")}\n`,
        ),
    ],
  ] as const) {
    it(`${what} in metadata.segscan/ or the partition's: nothing is cut or rewritten`, async () => {
      for (const dir of ["metadata", P1]) {
        const root = await everyPlaneNode();
        const before = files(root);
        const plan = await planNode(root);
        mkdirSync(join(root, `${dir}.segscan`), { recursive: true });
        damage(join(root, `${dir}.segscan`, "journal.jsonl"));
        const error = await applyRepair(plan, { engine, checkWriters: false }).catch((e: unknown) => e);
        expect(error, dir).toBeInstanceOf(RepairError);
        if (what === "a line that does not parse") expect(error, dir).toBeInstanceOf(JournalCorruptError);
        else expect((error as Error).message).toContain("a restore of it was interrupted");
        expect((error as Error).message).toContain("nothing was changed");
        expect(files(root), dir).toEqual(before);
      }
    });
  }
});

describe("restore proves it is the file that was cut", () => {
  it("a journal.wal replaced by a rename with other bytes of the same length is refused and left as it is", async () => {
    const root = await everyPlaneNode();
    await applyRepair(await planNode(root), { engine, checkWriters: false });
    const wal = join(root, "metadata/journal.wal");
    const replacement = randomBytes(statSync(wal).size, 77);
    writeFileSync(`${wal}.new`, replacement);
    renameSync(`${wal}.new`, wal);
    const error = await restore(join(root, "metadata"), { engine, checkWriters: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestoreConflictError);
    expect((error as Error).message).toContain("is not the file that was cut");
    expect(Buffer.compare(readFileSync(wal), replacement)).toBe(0);
  });
});

describe("metadata/ as a symbolic link", () => {
  it("the WAL cut journals beside the real dir; restore <root> finds it and returns every byte; restore of the link works too", async () => {
    const root = await everyPlaneNode();
    const real = join(dirname(root), `${root.split("/").at(-1)}-real-metadata`);
    renameSync(join(root, "metadata"), real);
    symlinkSync(real, join(root, "metadata"));
    const before = files(real);
    const plan = await planNode(root);
    const metadata = plan.targets.find((t) => t.kind === "metadata")!;
    expect(metadata.preserveDir).toBe(`${real}.segscan`);
    await applyRepair(plan, { engine, checkWriters: false });
    expect(files(real)).not.toEqual(before);
    expect(existsSync(join(root, "metadata.segscan"))).toBe(false);

    const run = await runCli(["restore", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`restored ${join(root, "metadata")}:`);
    expect(run.stdout).toContain(`scan it again: segscan scan ${root}`);
    expect(files(real)).toEqual(before);
    const again = await runCli(["scan", root]);
    expect(again.code).toBe(4); // the WAL's torn tail is back, as it was
  });
});

describe("offset files: bounded cost, one rule for links", () => {
  it("a 2 GiB sparse corrupt offset file: the evidence copy keeps its first bytes, in a child with 96 MiB of heap", async () => {
    const root = tempDir();
    const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
    await writeNodeMetadata(root, generated.partitions, { fault: "offset-corrupt" });
    const offset = join(root, P1, "offsets/consumers/7");
    truncateSync(offset, 2 * 1024 ** 3);
    const run = spawnSync(process.execPath, ["--max-old-space-size=96", "dist/src/cli/main.js", "repair", root, "--apply", "--json"], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(4); // the corrupt file is still there (the server unlinks it at boot): evidence only
    const copy = join(root, `${P1}.segscan`, "offsets-consumers-7.evidence");
    expect(statSync(copy).size).toBe(OFFSET_EVIDENCE_MAX_BYTES);
    expect(statSync(offset).size).toBe(2 * 1024 ** 3);
    expect(existsSync(join(root, `${P1}.segscan`, "lock"))).toBe(false);
  });

  it("a symlinked offset file is left alone (a step never acts through a link) and the rest of the plan applies", async () => {
    const root = await everyPlaneNode();
    const offset = join(root, P1, "offsets/consumers/7");
    const elsewhere = join(root, "consumer-7-elsewhere");
    renameSync(offset, elsewhere);
    symlinkSync(elsewhere, offset);
    const plan = await planNode(root);
    expect(plan.leftAlone).toContainEqual(expect.objectContaining({ path: offset, why: "symlink" }));
    expect(plan.targets.flatMap((t) => t.steps).some((s) => s.file === offset)).toBe(false);
    const result = await applyRepair(plan, { engine, checkWriters: false });
    expect(result.changed).toBe(true);
    expect(statSync(elsewhere).size).toBe(16);
    expect(readFileSync(offset)).toEqual(readFileSync(elsewhere));
  });

  it("an offset file replaced since the plan (same size, other offset) is refused as stale; nothing changes", async () => {
    const root = await everyPlaneNode();
    const plan = await planNode(root);
    const offset = join(root, P1, "offsets/groups/1");
    writeFileSync(offset, Buffer.alloc(16, 1));
    const before = files(root);
    await expect(applyRepair(plan, { engine, checkWriters: false })).rejects.toBeInstanceOf(StalePlanError);
    expect(files(root)).toEqual(before);
    rmSync(join(root, "metadata.segscan"), { recursive: true, force: true });
  });
});
