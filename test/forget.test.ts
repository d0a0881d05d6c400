/**
 * docs/repair.md §6.7: `segscan forget` deletes the preserved copies no restore
 * needs any more and closes their journal runs, a dry run first; it keeps
 * every copy a restore still needs (an unfinished run, an interrupted restore,
 * a run after the --older-than cutoff, and every run after one that stays
 * open), refuses a linked preserve dir, leaves links, foreign files and copies
 * of the wrong size alone, and never deletes a journal: the salvage-loss
 * record (§6.6) clears only with `--lost-offsets`. Restore skips closed runs.
 * Crashes at every step of forget (both crash models) converge, and leave no
 * state where a run restore would undo has lost a copy.
 */
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closedRuns } from "../src/format/journal.js";
import {
  ForgetRefusedError,
  LockHeldError,
  acquireLock,
  clearLostOffsets,
  forget,
  nodeRepairFs,
  planForget,
  readJournalEntries,
  restore,
} from "../src/repair/index.js";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import { runCli } from "./helpers/cli.js";
import { tempPartition } from "./helpers/fixtures.js";
import {
  CHUNK_BYTES,
  type PartitionTree,
  REPAIRABLE,
  type Scenario,
  buildScenario,
  engine,
  noSyncFs,
  partitionTree,
  repair,
  repairNoSync,
  restoreNoSync,
  scan,
  snapshot,
} from "./helpers/repair-scenarios.js";
import { SALVAGEABLE, salvagePlan } from "./helpers/salvage-scenarios.js";
import { applyPlan } from "./helpers/repair-scenarios.js";

const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
const sweep = REPAIRABLE.find((s) => s.name === "staging and orphan index sweep")!;

/** The preserve dir's files other than journals and the lock (journal lines carry times and run ids). */
function copies(dir: string): string[] {
  const preserveDir = `${dir}.segscan`;
  if (!existsSync(preserveDir)) return [];
  return readdirSync(preserveDir)
    .filter((name) => !name.startsWith("journal") && name !== "lock")
    .sort();
}

/**
 * The safety property of forget (docs/repair.md §6.7): every copy a run that
 * restore would undo names (its intents and `preserved` lines, in the active
 * journal, runs not closed) is still there.
 */
async function openRunsHaveTheirCopies(dir: string): Promise<void> {
  const journal = join(`${dir}.segscan`, "journal.jsonl");
  const entries = await readJournalEntries(nodeRepairFs, journal);
  const closed = closedRuns(entries);
  for (const { record } of entries) {
    if (closed.has(record.run)) continue;
    const names =
      record.kind === "preserved"
        ? [record.file]
        : record.kind === "intent"
          ? record.op.kind === "truncate"
            ? [record.op.residue.file]
            : record.op.kind === "move-aside"
              ? [record.op.to]
              : [record.op.old?.file ?? null]
          : [];
    for (const name of names)
      if (name !== null) expect(existsSync(join(`${dir}.segscan`, name)), `${name} of open run ${record.run}`).toBe(true);
  }
}

/** The journal of a run killed after its last step: no `done` for it and no `end` (the files are as the step left them). */
function unfinished(dir: string): void {
  const path = join(`${dir}.segscan`, "journal.jsonl");
  const lines = readFileSync(path, "utf8").trim().split("\n");
  const kept = lines.filter((line) => !line.includes('"kind":"end"'));
  const lastDone = kept.map((line) => line.includes('"kind":"done"')).lastIndexOf(true);
  writeFileSync(path, `${kept.filter((_, i) => i !== lastDone).join("\n")}\n`);
}

describe("forget after a repair (docs/repair.md §6.7)", () => {
  it("a dry run lists what it would close and delete and changes nothing; --apply journals the closing, then deletes", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    const before = snapshot(`${dir}.segscan`);
    const planned = await planForget(dir);
    expect(planned.closes).toHaveLength(1);
    expect(planned.deletes.map((file) => file.why)).toEqual(["closed"]);
    expect(planned.deletes[0]!.name).toMatch(/\.residue$/);
    expect(planned.kept).toEqual([]);
    expect(snapshot(`${dir}.segscan`)).toEqual(before);
    const done = await forget(dir);
    expect(done.applied).toBe(true);
    expect(copies(dir)).toEqual([]);
    const journal = readFileSync(join(`${dir}.segscan`, "journal.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(JSON.parse(journal.at(-1)!)).toMatchObject({
      kind: "forgotten",
      runs: [planned.closes[0]!.run],
      files: [planned.deletes[0]!.name],
    });
    // Restore no longer undoes a closed run, and leaves the journal (the record) where it is.
    const restored = await restore(dir, { engine, checkWriters: false });
    expect(restored.restored).toBe(false);
    expect(restored.closedRuns).toEqual([planned.closes[0]!.run]);
    expect(existsSync(join(`${dir}.segscan`, "journal.jsonl"))).toBe(true);
    expect((await scan(dir, garbageTail)).partitions[0]!.verdict).toBe("clean");
    // Forget again: nothing left to do.
    const again = await forget(dir);
    expect(again.closes).toEqual([]);
    expect(again.deletes).toEqual([]);
  });

  it("after a restore, the restored journal's copies go", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    await restore(dir, { engine, checkWriters: false });
    expect(readdirSync(`${dir}.segscan`).some((name) => /^journal\.1\.restored\.jsonl$/.test(name))).toBe(true);
    const planned = await planForget(dir);
    expect(planned.closes).toEqual([]);
    expect(planned.deletes.length).toBeGreaterThan(0);
    expect(planned.deletes.map((file) => file.why)).toEqual(planned.deletes.map(() => "restored"));
    await forget(dir);
    expect(copies(dir)).toEqual([]);
    expect(readdirSync(`${dir}.segscan`)).toContain("journal.1.restored.jsonl");
  });

  it("--older-than keeps the runs begun after the cutoff; runs close oldest first, so a later run stays open too", async () => {
    const { dir } = buildScenario(sweep);
    await repair(dir, sweep);
    const now = new Date(Date.now() + 10 * 86_400_000);
    expect((await planForget(dir, { olderThanMs: 30 * 86_400_000, now })).kept.map((kept) => kept.why)).toEqual(
      copies(dir).map(() => "too-recent"),
    );
    expect((await planForget(dir, { olderThanMs: 5 * 86_400_000, now })).kept).toEqual([]);
  });
});

describe("forget keeps what a restore still needs (docs/repair.md §6.7)", () => {
  it("a run that never finished keeps its copies (and every later run's), until a later run ends", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    unfinished(dir);
    const planned = await planForget(dir);
    expect(planned.closes).toEqual([]);
    expect(planned.kept.length).toBeGreaterThan(0);
    expect(planned.kept.every((kept) => kept.why === "restore-needs")).toBe(true);
    expect(planned.kept[0]!.detail).toContain("never finished");
    // A later run of the partition (a staging file swept) ends: the killed run is settled by it, and both close.
    writeFileSync(join(dir, "00000000000000000000.index.staging"), "scratch");
    await repair(dir, garbageTail);
    const settled = await planForget(dir);
    expect(settled.kept).toEqual([]);
    expect(settled.closes).toHaveLength(2);
  });

  it("an interrupted restore keeps every copy: the restore must resume", async () => {
    const { dir } = buildScenario(sweep);
    await repair(dir, sweep);
    // A restore that undid one step and was killed: its `undone` line is in the journal.
    const path = join(`${dir}.segscan`, "journal.jsonl");
    const intent = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; run: string; seq: number })
      .filter((record) => record.kind === "intent")
      .at(-1)!;
    writeFileSync(
      path,
      `${readFileSync(path, "utf8")}${JSON.stringify({ v: 2, run: "restore-x", seq: 1, kind: "undone", of: { run: intent.run, seq: intent.seq } })}\n`,
    );
    const planned = await planForget(dir);
    expect(planned.closes).toEqual([]);
    expect(planned.kept.every((kept) => kept.why === "restore-needs" && kept.detail.includes("interrupted restore"))).toBe(true);
  });

  it("a linked preserve dir is refused; a link, a foreign file and a copy of the wrong size inside it are left alone", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    const preserveDir = `${dir}.segscan`;
    const residue = copies(dir)[0]!;
    writeFileSync(join(preserveDir, residue), "not the residue");
    writeFileSync(join(preserveDir, "notes.txt"), "the operator's");
    symlinkSync("/etc/hostname", join(preserveDir, "x.tmp"));
    const planned = await forget(dir);
    expect(planned.deletes).toEqual([]);
    expect(Object.fromEntries(planned.kept.map((kept) => [kept.name, kept.why]))).toEqual({
      [residue]: "size-differs",
      "notes.txt": "not-segscan",
      "x.tmp": "not-regular",
    });
    expect(existsSync(join(preserveDir, "notes.txt"))).toBe(true);
    const other = tempPartition();
    symlinkSync(preserveDir, `${other}.segscan`);
    await expect(planForget(other)).rejects.toBeInstanceOf(ForgetRefusedError);
    await expect(forget(other)).rejects.toThrow(/is a symbolic link.*nothing was changed/);
  });

  it("a held lock refuses --apply with nothing changed", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    const before = snapshot(`${dir}.segscan`);
    const held = await acquireLock(nodeRepairFs, `${dir}.segscan`, "test", "other run");
    try {
      await expect(forget(dir)).rejects.toBeInstanceOf(LockHeldError);
      expect(snapshot(`${dir}.segscan`)).toEqual({ ...before, lock: expect.any(String) });
    } finally {
      await held.release();
    }
  });
});

describe("forget and a salvage's record of lost offsets (docs/repair.md §6.6, §6.7)", () => {
  it("forget deletes the preserved old log but never the record; --lost-offsets clears the record, dry run first", async () => {
    const scenario = SALVAGEABLE[0]!;
    const { dir } = buildScenario(scenario);
    await applyPlan(await salvagePlan(dir, scenario));
    await forget(dir);
    expect(copies(dir)).toEqual([]);
    const lost = (await scan(dir, scenario)).partitions[0]!.findings;
    expect(lost.map((f) => f.code)).toEqual(["SalvageLostOffsets"]);
    const dry = await clearLostOffsets(dir);
    expect(dry.applied).toBe(false);
    expect(dry.losses.map((loss) => `${loss.range.firstOffset}..${loss.range.lastOffset}`)).toEqual(scenario.lost);
    expect((await scan(dir, scenario)).partitions[0]!.findings).toHaveLength(1);
    const cleared = await clearLostOffsets(dir, { apply: true });
    expect(cleared.applied).toBe(true);
    expect((await scan(dir, scenario)).partitions[0]!.findings).toEqual([]);
    expect((await clearLostOffsets(dir)).losses).toEqual([]);
    // A later restore finds only closed runs: nothing to undo, the record stays.
    expect((await restore(dir, { engine, checkWriters: false })).restored).toBe(false);
  });

  it("a closed salvage then a restored repair: the restore undoes only the repair, and the loss stays reported", async () => {
    const scenario = SALVAGEABLE.find((s) => s.steps.includes("truncate/segment-log/torn-tail"))!;
    const { dir } = buildScenario(scenario);
    await applyPlan(await salvagePlan(dir, scenario));
    await forget(dir);
    // A later repair of the same partition (a new staging file swept), then its restore.
    writeFileSync(join(dir, "00000000000000000000.index.staging"), "scratch");
    await repair(dir, scenario);
    const restored = await restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false });
    expect(restored.restored).toBe(true);
    expect(restored.closedRuns).toHaveLength(1);
    expect(existsSync(join(dir, "00000000000000000000.index.staging"))).toBe(true);
    expect((await scan(dir, scenario)).partitions[0]!.findings.map((f) => f.code)).toEqual(["SalvageLostOffsets"]);
  });
});

/** A repaired partition; the act is forget --apply on `fs`. */
function crashedForget(scenario: Scenario): CrashExploration<PartitionTree> {
  return {
    async build() {
      const tree = partitionTree(scenario);
      await repairNoSync(tree.dir, scenario);
      return tree;
    },
    observe: (tree) => ({ ...snapshot(tree.dir), copies: copies(tree.dir).join(",") }),
    act: (fs, tree) => forget(tree.dir, { fs }),
    async recover(tree) {
      // Whatever the crash left, restore can still undo every run it would undo.
      await openRunsHaveTheirCopies(tree.dir);
      await forget(tree.dir, { fs: noSyncFs });
    },
    async verify(tree, { label, actEnd }) {
      expect(copies(tree.dir), label).toEqual([]);
      expect((await restoreNoSync(tree.dir)).restored, label).toBe(false);
      expect(snapshot(tree.dir), label).toEqual(Object.fromEntries(Object.entries(actEnd).filter(([key]) => key !== "copies")));
    },
  };
}

describe.each([garbageTail, sweep])("forget and crashes: $name", (scenario) => {
  it("a crash at every step k of forget (process crash; power cut keeping any prefix of the unsynced ops), then forget again: no copy left, nothing a restore needs was lost first", async () => {
    const report = await exploreCrashes(crashedForget(scenario));
    expect(report.steps).toBeGreaterThan(3);
  });
});

describe("the CLI (docs/repair.md §6.7)", () => {
  it("a dry run exits 0 and names the --apply command; --apply exits 1; a repair and a restore say once when the copies may go", async () => {
    const { dir } = buildScenario(garbageTail);
    const repaired = await runCli(["repair", dir, "--apply"]);
    expect(repaired.code).toBe(1);
    expect(repaired.stdout).toContain(`\`segscan forget ${dir}\` lists what it frees (add --apply)`);
    const dry = await runCli(["forget", dir]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would close 1 run");
    expect(dry.stdout).toContain(`to carry it out: segscan forget ${dir} --apply`);
    const kept = copies(dir);
    expect(kept).toHaveLength(1);
    const applied = await runCli(["forget", dir, "--apply"]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain("deleted 1 preserved file");
    expect(copies(dir)).toEqual([]);
    const restoredRun = await runCli(["restore", dir]);
    expect(restoredRun.code).toBe(0);
    expect(restoredRun.stdout).toContain("nothing to restore");
    // A restore says the copies may go.
    const { dir: other } = buildScenario(garbageTail);
    await repair(other, garbageTail);
    const restored = await runCli(["restore", other]);
    expect(restored.stdout).toContain(`the preserved copies are no longer needed by a restore: \`segscan forget ${other}\``);
    expect((await runCli(["forget", other, "--older-than", "soon"])).code).toBe(16);
  });

  it("copies a restore still needs make the exit 4; a path that is not a directory is a usage error", async () => {
    const { dir } = buildScenario(garbageTail);
    await repair(dir, garbageTail);
    unfinished(dir);
    const run = await runCli(["forget", dir, "--apply"]);
    expect(run.code).toBe(4);
    expect(run.stdout).toContain("a restore still needs it");
    expect((await runCli(["forget", join(dir, "00000000000000000000.log")])).code).toBe(16);
  });
});
