/** docs/repair.md §6.2: apply and restore, end to end (scan → plan → apply → scan → restore). */
import { appendFileSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeBatch } from "../src/format/encode.js";
import { nodeScanFs } from "../src/io/fs.js";
import type { ScanFs } from "../src/io/fs.js";
import { scanPath } from "../src/node/scan-path.js";
import { JOURNAL_NAME, PreserveError, StalePlanError, applyRepair, planRepair, readJournal, restore } from "../src/repair/index.js";
import { formatPlan } from "../src/report/repair-format.js";
import { hex64 } from "../src/repair/files.js";
import { nodeRepairFs } from "../src/repair/fs-layer.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { CHUNK_BYTES, REPAIRABLE, appliedSteps, buildScenario, engine, repair, scan, snapshot } from "./helpers/repair-scenarios.js";
import type { RepairPlan } from "../src/repair/index.js";

/** A plan without what it observed of the files (mtimes change when a file is restored). */
const withoutObserved = (plan: RepairPlan): unknown =>
  JSON.parse(JSON.stringify(plan, (key, value: unknown) => (key === "observed" ? null : value)));

const bytesOf = (hex: string): Buffer => Buffer.from(hex, "hex");

describe.each(REPAIRABLE)("repair: $name", (scenario) => {
  it("apply leaves a clean partition, cuts each log to exactly P, preserves what it cut; restore puts every byte back", async () => {
    const { dir, proven } = buildScenario(scenario);
    const before = snapshot(dir);
    const report = await scan(dir, scenario);
    expect(report.partitions[0]!.action).toBe("repair");
    const plan = await planRepair(report);
    expect(plan.targets).toHaveLength(1);

    const result = await applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES });
    const { target: applied, cuts, swept: moves, replaced } = appliedSteps(result);
    const after = (await scan(dir, scenario)).partitions[0]!;
    expect(after.verdict).toBe("clean");
    expect(after.action).toBe("serve");
    for (const [name, size] of Object.entries(proven)) expect(statSync(join(dir, name)).size).toBe(size);

    // Every cut byte is preserved: copied byte for byte, or all zero and recorded by length.
    for (const cut of cuts) {
      const original = bytesOf(before[basename(cut.logPath)]!);
      const residue = original.subarray(cut.toSize);
      expect(residue.length).toBe(cut.residue.bytes);
      expect(cut.residue.xxh3).toBe(hex64(engine.xxh3_64(residue)));
      if (cut.residue.file === null) {
        expect(residue.every((b) => b === 0)).toBe(true);
      } else {
        expect(readFileSync(join(applied.preserveDir, cut.residue.file))).toEqual(residue);
        expect(cut.residue.file).toBe(`${basename(cut.logPath)}.${cut.toSize}.residue`);
      }
    }
    // Swept and replaced files are in the preserve dir, byte-identical; nothing else in the partition changed.
    for (const swept of moves) expect(readFileSync(swept.to).toString("hex")).toBe(before[basename(swept.from)]);
    for (const replacement of replaced) {
      const old = before[basename(replacement.file)];
      if (old === undefined) expect(replacement.oldFile).toBeNull();
      else expect(readFileSync(join(applied.preserveDir, replacement.oldFile!)).toString("hex")).toBe(old);
    }
    const now = snapshot(dir);
    for (const name of Object.keys(before)) {
      const touched =
        cuts.some((t) => basename(t.logPath) === name) ||
        replaced.some((r) => basename(r.file) === name) ||
        moves.some((s) => basename(s.from) === name);
      if (!touched) expect(now[name], name).toBe(before[name]);
    }

    // The journal: begin, every intent followed by its done, end.
    const journal = await readJournal(nodeRepairFs, applied.journalPath);
    expect(journal[0]!.kind).toBe("begin");
    expect(journal.at(-1)!.kind).toBe("end");
    const intents = journal.filter((r) => r.kind === "intent");
    expect(intents.length).toBe(cuts.length + replaced.length + moves.length);
    for (const intent of intents) expect(journal.some((r) => r.kind === "done" && r.seq === intent.seq)).toBe(true);

    // Nothing more to do; an empty plan writes nothing.
    const again = await planRepair(await scan(dir, scenario));
    expect(again.targets).toEqual([]);
    await applyRepair(again, { engine });
    expect(snapshot(dir)).toEqual(now);

    const restored = await restore(dir, { engine, chunkBytes: CHUNK_BYTES });
    expect(restored.restored).toBe(true);
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(join(applied.preserveDir, JOURNAL_NAME))).toBe(false);
    expect(existsSync(restored.restoredJournal!)).toBe(true);
    // A second restore is a no-op; the restored partition plans exactly as before.
    expect((await restore(dir, { engine })).restored).toBe(false);
    expect(snapshot(dir)).toEqual(before);
    expect(withoutObserved(await planRepair(await scan(dir, scenario)))).toEqual(withoutObserved(plan));
  });

  it("a dry run (scan, plan, print) changes nothing", async () => {
    const { dir } = buildScenario(scenario);
    const tree = snapshot(dirname(dir));
    const plan = await planRepair(await scan(dir, scenario));
    expect(formatPlan(plan)).toContain(dir);
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
    expect(snapshot(dirname(dir))).toEqual(tree);
  });
});

describe("repair a second time after restore", () => {
  it("re-applies, reusing the identical preserved residue, and restores again", async () => {
    const scenario = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
    const { dir } = buildScenario(scenario);
    const before = snapshot(dir);
    await repair(dir, scenario);
    const repaired = snapshot(dir);
    await restore(dir, { engine });
    const second = await repair(dir, scenario);
    expect(snapshot(dir)).toEqual(repaired);
    expect(appliedSteps(second).cuts[0]!.residue.file).toBe("00000000000000000000.log.1903.residue");
    await restore(dir, { engine });
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(`${dir}.segscan/journal.2.restored.jsonl`)).toBe(true);
  });

  it("a differing preserved file under the same name is kept and the copy takes the next name", async () => {
    const scenario = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
    const { dir } = buildScenario(scenario);
    const { mkdirSync } = await import("node:fs");
    mkdirSync(`${dir}.segscan`);
    writeFileSync(`${dir}.segscan/00000000000000000000.log.1903.residue`, "unrelated");
    const result = await repair(dir, scenario);
    expect(appliedSteps(result).cuts[0]!.residue.file).toBe("00000000000000000000.log.1903.residue.1");
    expect(readFileSync(`${dir}.segscan/00000000000000000000.log.1903.residue`, "utf8")).toBe("unrelated");
  });
});

/** Damage that hides durable data: a flipped byte inside batch 1, with an intact batch 2 behind it. */
function writeInteriorDamage(dir: string): void {
  const chain = buildChain({ counts: [3, 2, 4], seed: 31 });
  const log = chain.log.slice();
  const b1 = chain.batches[1]!;
  log[b1.position + 300] = log[b1.position + 300]! ^ 0xff;
  writeSegment(dir, 0n, log, indexAt(chain, [0]));
}

function writeGarbageTail(dir: string, seed = 32): void {
  const chain = buildChain({ counts: [3, 2], seed });
  writeSegment(dir, 0n, concat([chain.log, randomBytes(4000, seed)]), indexAt(chain, [0]));
}

/** A ScanFs whose reads of files under `failing` throw EIO. */
function failingReads(failing: string): ScanFs {
  return {
    ...nodeScanFs,
    async open(path) {
      const file = await nodeScanFs.open(path);
      if (!path.startsWith(failing)) return file;
      return {
        read: () => Promise.reject(Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" })),
        close: () => file.close(),
      };
    },
  };
}

describe("partitions whose action is not repair are never written", () => {
  it("review blocker 4: a tombstone holds: refused (tombstone) and failed (retry) partitions are byte-for-byte untouched; the repairable one is repaired", async () => {
    const dataDir = tempDataDir();
    const repairable = tempPartition(1, dataDir);
    const refused = tempPartition(2, dataDir);
    const failed = tempPartition(3, dataDir);
    writeGarbageTail(repairable);
    writeInteriorDamage(refused);
    writeGarbageTail(failed, 33);
    const untouched = { refused: snapshot(refused), failed: snapshot(failed) };

    const report = await scanPath(dataDir, { engine }, failingReads(failed));
    expect(report.partitions.map((p) => p.action)).toEqual(["repair", "tombstone", "retry"]);
    const plan = await planRepair(report);
    expect(plan.targets.map((p) => p.path)).toEqual([repairable]);
    expect(plan.skipped.map((p) => p.action)).toEqual(["tombstone", "retry"]);
    expect(formatPlan(plan)).toContain(`${refused}: refused, action tombstone`);

    await applyRepair(plan, { engine });
    expect((await scan(repairable)).partitions[0]!.verdict).toBe("clean");
    expect(snapshot(refused)).toEqual(untouched.refused);
    expect(snapshot(failed)).toEqual(untouched.failed);
    for (const dir of [refused, failed]) {
      expect(existsSync(`${dir}.segscan`)).toBe(false);
    }
  });

  it("rebuild-from-peers and a budget tombstone: nothing is fenced, moved or cut", async () => {
    const dataDir = tempDataDir();
    const peers = tempPartition(1, dataDir);
    writeInteriorDamage(peers);
    const budget = tempPartition(2, dataDir);
    writeGarbageTail(budget);
    const tree = snapshot(dataDir);

    const replicated = await scanPath(peers, { engine, replicaCount: 3 });
    expect(replicated.partitions[0]!.action).toBe("rebuild-from-peers");
    const starved = await scanPath(budget, { engine, probeBudgetUnits: 10, replicaCount: 3 });
    expect(starved.partitions[0]!.refusal?.code).toBe("UnverifiedResidue");
    expect(starved.partitions[0]!.action).toBe("tombstone");
    for (const report of [replicated, starved]) {
      const plan = await planRepair(report);
      expect(plan.targets).toEqual([]);
      await applyRepair(plan, { engine });
    }
    expect(snapshot(dataDir)).toEqual(tree);
  });

  it("a partition that became refused after planning is refused as stale, untouched", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 2], seed: 34 });
    writeSegment(dir, 0n, concat([chain.log, randomBytes(2000, 1)]), indexAt(chain, [0]));
    const plan = await planRepair(await scan(dir));
    expect(plan.targets).toHaveLength(1);
    // An append completes behind the damage: the residue now hides a durable batch.
    appendFileSync(
      join(dir, "00000000000000000000.log"),
      encodeBatch({
        baseOffset: chain.nextOffset,
        baseTimestamp: 1n,
        messages: [{ payload: new Uint8Array([1, 2, 3]) }],
      }),
    );
    const tree = snapshot(dirname(dir));
    const error = await applyRepair(plan, { engine }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StalePlanError);
    expect((error as StalePlanError).path).toBe(dir);
    expect((error as Error).message).toMatch(/refused with action tombstone \(InteriorDamage\)/);
    expect(snapshot(dirname(dir))).toEqual(tree);
  });
});

describe("stale plans", () => {
  it("a log that grew since planning: StalePlanError naming the path, and nothing written anywhere", async () => {
    const dataDir = tempDataDir();
    const first = tempPartition(1, dataDir);
    const second = tempPartition(2, dataDir);
    writeGarbageTail(first);
    writeGarbageTail(second, 35);
    const plan = await planRepair(await scanPath(dataDir, { engine }));
    expect(plan.targets).toHaveLength(2);
    appendFileSync(join(second, "00000000000000000000.log"), new Uint8Array([7]));
    const tree = snapshot(dataDir);
    const error = await applyRepair(plan, { engine }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StalePlanError);
    expect((error as StalePlanError).path).toBe(second);
    expect((error as StalePlanError).detail).toMatch(/messagesSize/);
    expect(existsSync(`${second}.segscan`)).toBe(false);
    expect(snapshot(dataDir)).toEqual(tree);
  });

  it("a new sweep candidate makes the plan stale", async () => {
    const dir = tempPartition();
    writeGarbageTail(dir);
    const plan = await planRepair(await scan(dir));
    writeFileSync(join(dir, "x.staging"), "x");
    await expect(applyRepair(plan, { engine })).rejects.toBeInstanceOf(StalePlanError);
    expect(existsSync(`${dir}.segscan`)).toBe(false);
  });

  it("bytes that change after the re-scan are caught before the cut (all-zero residue no longer zero)", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [2], seed: 36 });
    const { logPath } = writeSegment(dir, 0n, concat([chain.log, new Uint8Array(3000)]), indexAt(chain, [0]));
    const roundTime = new Date("2026-01-01T00:00:00Z");
    utimesSync(logPath, roundTime, roundTime);
    const report = await scan(dir);
    const plan = await planRepair(report);
    const cut = plan.targets[0]!.steps.find((step) => step.kind === "truncate");
    expect(cut?.kind === "truncate" && cut.residue.allZero).toBe(true);
    const log = readFileSync(logPath);
    log[log.length - 10] = 9;
    // Same size, same mtime: the change slips past the plan's observations; the preserve step catches it.
    writeFileSync(logPath, log);
    utimesSync(logPath, roundTime, roundTime);
    writeFileSync(join(dir, "y.staging"), "y");
    const partitionBefore = snapshot(dir);
    // A re-scan that raced the change (it still reports the old bytes and no sweep).
    const error = await applyRepair(plan, { engine, scan: async () => report.partitions[0]! }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreserveError);
    expect((error as PreserveError).position).toBe(chain.log.length);
    expect(snapshot(dir)).toEqual(partitionBefore);
  });

  it("an aborted signal stops before anything is written", async () => {
    const dir = tempPartition();
    writeGarbageTail(dir);
    const plan = await planRepair(await scan(dir));
    const tree = snapshot(dirname(dir));
    await expect(applyRepair(plan, { engine, signal: AbortSignal.abort() })).rejects.toThrow();
    expect(snapshot(dirname(dir))).toEqual(tree);
  });
});

describe("a single .log scanned alone", () => {
  it("is repaired beside its own directory and restored", async () => {
    const dir = tempPartition();
    writeGarbageTail(dir);
    const before = snapshot(dir);
    const logPath = join(dir, "00000000000000000000.log");
    const plan = await planRepair(await scanPath(logPath, { engine }));
    expect(plan.targets[0]!.singleSegment).toBe(true);
    expect(plan.targets[0]!.preserveDir).toBe(`${dir}.segscan`);
    await applyRepair(plan, { engine });
    expect((await scanPath(logPath, { engine })).partitions[0]!.verdict).toBe("clean");
    await restore(dir, { engine });
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("restore conflicts", () => {
  it("a log served and appended to after the repair is not restored over", async () => {
    const scenario = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
    const { dir } = buildScenario(scenario);
    await repair(dir, scenario);
    appendFileSync(join(dir, "00000000000000000000.log"), randomBytes(300, 1));
    const tree = snapshot(dir);
    await expect(restore(dir, { engine })).rejects.toThrow(/changed since the repair|not the preserved residue/);
    expect(snapshot(dir)).toEqual(tree);
  });

  it("a tampered preserved residue is refused by its XXH3", async () => {
    const scenario = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
    const { dir } = buildScenario(scenario);
    const result = await repair(dir, scenario);
    const { target, cuts } = appliedSteps(result);
    const residuePath = join(target.preserveDir, cuts[0]!.residue.file!);
    const bytes = readFileSync(residuePath);
    bytes[5] = bytes[5]! ^ 1;
    writeFileSync(residuePath, bytes);
    const tree = snapshot(dir);
    await expect(restore(dir, { engine })).rejects.toThrow(/XXH3/);
    expect(snapshot(dir)).toEqual(tree);
  });
});
