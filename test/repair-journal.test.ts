/**
 * docs/repair.md §6.2: restore trusts the journal only when it is whole. A torn
 * LAST line (a crashed append) is skipped; any other bad line, a `done` with no
 * intent, or a preserved copy that is not what the journal recorded refuses,
 * naming the journal and the line, and changes nothing.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOURNAL_NAME, JournalCorruptError, JournalVersionError, RestoreConflictError, restore } from "../src/repair/index.js";
import { CHUNK_BYTES, REPAIRABLE, buildScenario, engine, repair, snapshot } from "./helpers/repair-scenarios.js";

const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
const threeSegments = REPAIRABLE.find((s) => s.name.startsWith("three segments"))!;

async function repaired(scenario = garbageTail): Promise<{ dir: string; before: Record<string, string>; journal: string }> {
  const { dir } = buildScenario(scenario);
  const before = snapshot(dir);
  await repair(dir, scenario);
  return { dir, before, journal: join(`${dir}.segscan`, JOURNAL_NAME) };
}

const lines = (journal: string): string[] => readFileSync(journal, "utf8").split("\n");
const restoreIt = (dir: string) => restore(dir, { engine, chunkBytes: CHUNK_BYTES });

describe("restore refuses a journal with a hole in it", () => {
  it("a garbage line in place of the truncate intent: exit-8 error naming the journal and line 3; nothing changed, journal kept", async () => {
    const { dir, journal } = await repaired();
    const text = lines(journal);
    expect(JSON.parse(text[2]!).op.kind).toBe("truncate");
    text[2] = "GARBAGE";
    writeFileSync(journal, text.join("\n"));
    const cut = snapshot(dir);
    const error = await restoreIt(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalCorruptError);
    expect((error as JournalCorruptError).line).toBe(3);
    expect((error as Error).message).toContain(`journal ${journal} line 3`);
    expect(snapshot(dir)).toEqual(cut);
    expect(existsSync(journal)).toBe(true);
  });

  it("a `done` whose intent line is missing refuses, naming the done's line", async () => {
    const { dir, journal } = await repaired();
    const text = lines(journal);
    text.splice(2, 1); // drop the intent; its done (now line 3) names no intent
    writeFileSync(journal, text.join("\n"));
    const error = await restoreIt(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalCorruptError);
    expect((error as Error).message).toContain("line 3 marks step");
    expect(existsSync(journal)).toBe(true);
  });

  it("an intent with a field of the wrong type is a bad line, not a crash inside an undo", async () => {
    const { dir, journal } = await repaired();
    const text = lines(journal);
    const intent = JSON.parse(text[2]!);
    intent.op.toSize = "12";
    text[2] = JSON.stringify(intent);
    writeFileSync(journal, text.join("\n"));
    await expect(restoreIt(dir)).rejects.toBeInstanceOf(JournalCorruptError);
  });

  it("a damaged preserved residue refuses before any undo (later index steps are not undone either), naming the line", async () => {
    const { dir, journal } = await repaired(threeSegments);
    const residue = lines(journal)
      .map((l) => (l ? JSON.parse(l) : null))
      .find((r) => r?.op?.kind === "truncate" && r.op.residue.file !== null);
    const residuePath = join(`${dir}.segscan`, residue.op.residue.file);
    const bytes = readFileSync(residuePath);
    bytes[0] = bytes[0]! ^ 0xff;
    writeFileSync(residuePath, bytes);
    const cut = snapshot(dir);
    const error = await restoreIt(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestoreConflictError);
    const line = lines(journal).findIndex((l) => l.includes('"kind":"intent"') && l.includes('"op":{"kind":"truncate"')) + 1;
    expect((error as Error).message).toContain(`${journal} (the step on line ${line})`);
    expect(snapshot(dir)).toEqual(cut);
    expect(existsSync(journal)).toBe(true);
  });

  it("a torn LAST line (a crashed append) is skipped: restore returns every byte", async () => {
    const { dir, before, journal } = await repaired();
    appendFileSync(journal, '{"v":1,"run":"x","seq":9,"kind":"int');
    const result = await restoreIt(dir);
    expect(result.restored).toBe(true);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("a journal of another version is refused by name, never read as this one's (docs/repair.md §6.2)", () => {
  it("a version-1 journal (ops named by their old types): restore refuses naming the version and the line; nothing changed, journal kept", async () => {
    const { dir, journal } = await repaired();
    const old = lines(journal).map((l) => (l ? JSON.stringify({ ...JSON.parse(l), v: 1 }) : l));
    writeFileSync(journal, old.join("\n"));
    const cut = snapshot(dir);
    const error = await restoreIt(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalVersionError);
    expect((error as Error).message).toContain("line 1 is journal version 1; this segscan reads version 2 only");
    expect((error as Error).message).toContain(journal);
    expect(snapshot(dir)).toEqual(cut);
    expect(readFileSync(journal, "utf8")).toBe(old.join("\n"));
  });
});
