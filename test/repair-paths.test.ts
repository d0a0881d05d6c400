/**
 * docs/repair.md §6.2: where repair keeps what it preserves, whatever path the
 * operator passes (issue 17.3: a symlinked partition path).
 */
import { existsSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planRepair, restore } from "../src/repair/index.js";
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
    const plan = planRepair(await scan(link));
    expect(plan.partitions[0]!.preserveDir).toBe(`${dir}.segscan`);
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
