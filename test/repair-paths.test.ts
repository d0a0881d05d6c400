/**
 * docs/repair.md §6.2: where repair keeps what it preserves, whatever path the
 * operator passes (a symlinked partition path), and what a
 * single `.log` target may repair (17.2).
 */
import { existsSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scanPartition } from "../src/node/scan-path.js";
import { scanPath } from "../src/node/scan-path.js";
import { TargetRefusedError, applyRepair, planRepair, restore } from "../src/repair/index.js";
import { buildChain, concat, indexAt, randomBytes, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { CHUNK_BYTES, REPAIRABLE, buildScenario, engine, repair, scan, snapshot } from "./helpers/repair-scenarios.js";

const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;

function linked(): { dir: string; link: string; before: Record<string, string> } {
  const { dir } = buildScenario(garbageTail);
  const link = join(mkdtempSync(join(tmpdir(), "segscan-link-")), "plink");
  symlinkSync(dir, link);
  return { dir, link, before: snapshot(dir) };
}

describe("a partition reached through a symlink", () => {
  it("the plan's preserve dir is beside the real directory, not beside the link", async () => {
    const { dir, link } = linked();
    const plan = await planRepair(await scan(link));
    expect(plan.targets[0]!.preserveDir).toBe(`${dir}.segscan`);
  });

  it("repair via the link preserves beside the real dir; restore via the real path puts every byte back", async () => {
    const { dir, link, before } = linked();
    await repair(link);
    expect(existsSync(`${link}.segscan`)).toBe(false);
    expect(existsSync(join(`${dir}.segscan`, "journal.jsonl"))).toBe(true);
    const result = await restore(dir, { engine, chunkBytes: CHUNK_BYTES });
    expect(result.restored).toBe(true);
    expect(snapshot(dir)).toEqual(before);
  });

  it("repair via the real path; restore via the link finds the same journal", async () => {
    const { dir, link, before } = linked();
    await repair(dir);
    const result = await restore(link, { engine, chunkBytes: CHUNK_BYTES });
    expect(result.restored).toBe(true);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("a .log given alone (17.2)", () => {
  const applyAlone = async (log: string) => {
    const plan = await planRepair(await scanPath(log, { engine }));
    expect(plan.targets).toHaveLength(1);
    return applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES });
  };

  it("is refused when its partition is refused as a whole (a Hole): nothing is cut, and the message says why", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [3, 2], seed: 41 });
    const b = buildChain({ counts: [2, 2], seed: 42, startOffset: a.nextOffset + 100n });
    const { logPath } = writeSegment(dir, 0n, concat([a.log, randomBytes(500, 4)]), indexAt(a, [0]));
    writeSegment(dir, b.batches[0]!.baseOffset, b.log, indexAt(b, [0]));
    expect((await scanPartition(dir, { engine })).partitions[0]!.verdict).toBe("refused");
    const before = snapshot(dir);
    const error = await applyAlone(logPath).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetRefusedError);
    expect((error as Error).message).toContain(`refusing to repair ${logPath} alone: its partition ${dir} is refused as a whole (`);
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(`${dir}.segscan`)).toBe(false);
  });

  it("is refused when it is not the partition's tail segment", async () => {
    const scenario = REPAIRABLE.find((s) => s.name.startsWith("three segments"))!;
    const { dir } = buildScenario(scenario);
    const first = join(
      dir,
      readdirSync(dir)
        .filter((n) => n.endsWith(".log"))
        .sort()[0]!,
    );
    const before = snapshot(dir);
    const error = await applyAlone(first).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetRefusedError);
    expect((error as Error).message).toContain(`refusing to repair ${first} alone: it is not the tail segment of its partition ${dir}`);
    expect(snapshot(dir)).toEqual(before);
  });

  it("the tail .log of a repairable partition is still repaired alone", async () => {
    const scenario = REPAIRABLE.find((s) => s.name === "torn mid-batch tail")!;
    const { dir } = buildScenario(scenario);
    const log = join(dir, readdirSync(dir).find((n) => n.endsWith(".log"))!);
    await applyAlone(log);
    expect((await scan(dir)).partitions[0]!.verdict).toBe("clean");
  });
});
