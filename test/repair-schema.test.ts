/**
 * docs/interfaces.md §9.4: the `repair --json` shape is defined once
 * (src/repair/schema.ts, src/report/repair-json.ts); the plan and result
 * types derive from the schemas (Static), every CLI output
 * validates, dry run and apply alike, and docs/repair.schema.json is what the
 * schema generates.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { repairJsonSchemaText, restoreJsonSchemaText, validateRepairJson, validateRestoreJson } from "../src/report/repair-json.js";
import { runCli } from "./helpers/cli.js";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { tempDir } from "./helpers/node-wal.js";

describe("repair --json schema", () => {
  it("docs/repair.schema.json is what the schema generates (npm run schema)", () => {
    const committed = readFileSync(fileURLToPath(new URL("../docs/repair.schema.json", import.meta.url)), "utf8");
    expect(committed).toBe(repairJsonSchemaText());
  });

  it("a dry run and an apply of a node with work on every plane both validate; a malformed document names the field", async () => {
    const root = tempDir();
    const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
    await writeNodeMetadata(root, generated.partitions, { fault: "offset-ahead-of-torn-tail" });
    const dry = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json"])).stdout);
    expect(validateRepairJson(dry)).toEqual([]);
    const applied = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json", "--apply"])).stdout);
    expect(validateRepairJson(applied)).toEqual([]);
    expect(applied.applied.targets.length).toBeGreaterThan(0);
    expect(validateRepairJson({ ...dry, plan: { ...dry.plan, version: 1 } })[0]).toMatch(/^\$\.plan\.version/);
    expect(validateRepairJson({ ...dry, applied: applied.applied })).toContain(
      "$.applied and $.after: both null (dry run) or both set (apply)",
    );
  });
});

describe("restore --json schema", () => {
  it("docs/restore.schema.json is what the schema generates (npm run schema)", () => {
    const committed = readFileSync(fileURLToPath(new URL("../docs/restore.schema.json", import.meta.url)), "utf8");
    expect(committed).toBe(restoreJsonSchemaText());
  });

  it("one shape whatever the path names: every directory restored, one directory, or nothing to restore", async () => {
    const root = tempDir();
    const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
    await writeNodeMetadata(root, generated.partitions, { fault: "offset-ahead-of-torn-tail" });
    const apply = async (): Promise<string[]> => {
      const applied = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json", "--apply"])).stdout);
      return applied.applied.targets.map((target: { dir: string }) => target.dir);
    };
    const dirs = await apply();
    expect(dirs.length).toBeGreaterThan(0);

    const one = await runCli(["restore", dirs[0]!, "--json"]);
    expect(one.code, one.stderr).toBe(0);
    const single = JSON.parse(one.stdout);
    expect(validateRestoreJson(single)).toEqual([]);
    expect(single.partitions.map((r: { restored: boolean }) => r.restored)).toEqual([true]);

    const again = await apply();
    const all = JSON.parse((await runCli(["restore", root, "--json"])).stdout);
    expect(validateRestoreJson(all)).toEqual([]);
    expect(all.partitions.length).toBe(again.length);
    expect(all.partitions.every((r: { restored: boolean; undone: string[] }) => r.restored && r.undone.length > 0)).toBe(true);

    const none = JSON.parse((await runCli(["restore", root, "--json"])).stdout);
    expect(none).toEqual({ partitions: [] });
    expect(validateRestoreJson(none)).toEqual([]);
    expect(validateRestoreJson({ partitions: [{ ...single.partitions[0], undone: "x" }] })[0]).toMatch(/^\$\.partitions\[0\]\.undone/);
  });
});
