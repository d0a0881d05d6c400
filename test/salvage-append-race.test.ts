/**
 * docs/repair.md §6.5 and §6.2 ("nothing is ever lost"): a salvage copies the
 * old log whole into the preserve dir, then writes the kept ranges beside it
 * and renames them over the log. A writer that appends to the log after the
 * copy was made (a server started while the salvage runs, after the preflight's
 * writer check) must not have its bytes dropped by that rename: they are in
 * neither the preserved copy nor the new log. The step checks the log's size
 * before its intent, and its size and whole hash against the preserved copy
 * right before the rename, and refuses instead; the appended bytes (or a file
 * swapped in by a rename) stay in the log. (A change inside the rename itself
 * is not caught: the preflight's writer check is the guard against a live writer.)
 */
import { appendFileSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { StalePlanError, applyRepair, nodeRepairFs, type RepairFs } from "../src/repair/index.js";
import { CHUNK_BYTES, buildScenario, engine } from "./helpers/repair-scenarios.js";
import { SALVAGEABLE, salvagePlan } from "./helpers/salvage-scenarios.js";

const MARK = Buffer.from("APPENDED-BY-A-WRITER-AFTER-THE-PRESERVE-COPY");

/** Every file under `dir` (recursively) whose bytes contain `needle`. */
function holding(dir: string, needle: Buffer): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(needle));
}

describe("salvage: a log appended to while it is salvaged", () => {
  it.each(["after the preserved copy is made", "while the staging file is written"])(
    "refuses to replace a log that grew after its preserved copy was made (%s): the appended bytes are kept",
    async (when) => {
      const scenario = SALVAGEABLE[0]!;
      const { dir } = buildScenario(scenario);
      const plan = await salvagePlan(dir, scenario);
      const step = plan.targets[0]!.steps.find((s) => s.kind === "replace" && s.role === "segment-log")!;
      const log = step.file;
      let appended = false;
      const append = (): void => {
        if (appended) return;
        appended = true;
        appendFileSync(log, MARK);
      };
      const fs: RepairFs = {
        ...nodeRepairFs,
        async open(file, flags) {
          if (when === "while the staging file is written" && file === `${log}.staging`) append();
          return nodeRepairFs.open(file, flags);
        },
        async rename(from, to) {
          if (when === "after the preserved copy is made" && basename(to) === `${basename(log)}.replaced`) append();
          return nodeRepairFs.rename(from, to);
        },
      };
      await expect(applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false, fs })).rejects.toThrow(StalePlanError);
      expect(appended).toBe(true);
      const holders = holding(join(dir, ".."), MARK).map((file) => basename(file));
      expect(holders).toContain(basename(log));
    },
  );

  it("refuses to replace a log swapped for another of the same size while the staging file is written: the swapped-in file stays", async () => {
    const scenario = SALVAGEABLE[0]!;
    const { dir } = buildScenario(scenario);
    const plan = await salvagePlan(dir, scenario);
    const step = plan.targets[0]!.steps.find((s) => s.kind === "replace" && s.role === "segment-log")!;
    const log = step.file;
    const swapped = Buffer.from(readFileSync(log));
    swapped.set(MARK, 0); // other bytes, the same size
    let done = false;
    const fs: RepairFs = {
      ...nodeRepairFs,
      async open(file, flags) {
        if (!done && file === `${log}.staging`) {
          done = true;
          writeFileSync(`${log}.other`, swapped);
          renameSync(`${log}.other`, log);
        }
        return nodeRepairFs.open(file, flags);
      },
    };
    await expect(applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false, fs })).rejects.toThrow(
      /no longer those preserved/,
    );
    expect(done).toBe(true);
    expect(Buffer.compare(readFileSync(log), swapped)).toBe(0);
  });
});
