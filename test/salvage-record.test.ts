/**
 * docs/repair.md §6.6: after `salvage --apply` the partition's bytes scan
 * clean, and every later scan still says which offsets the salvage recorded as
 * lost (a `SalvageLostOffsets` warn finding per range, read from the journal),
 * in the library report, the text, `--json`, `--ndjson` and the HTML page,
 * through every scan path (a partition, a data dir, a link to the partition,
 * the worker pool's targets), until a restore or `forget --lost-offsets
 * --apply`. A journal that cannot be read is a `failed` finding, never
 * silence.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { scanVerdict } from "../src/domain/scan.js";
import { scanPath } from "../src/node/scan-path.js";
import { scanPartition } from "../src/node/scan-path.js";
import { restore } from "../src/repair/index.js";
import { formatReport } from "../src/report/format.js";
import { renderHtmlReport } from "../src/report/html/render.js";
import { toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { runCli } from "./helpers/cli.js";
import { applyPlan, buildScenario, engine, scan } from "./helpers/repair-scenarios.js";
import { SALVAGEABLE, salvagePlan } from "./helpers/salvage-scenarios.js";

const scenario = SALVAGEABLE[0]!;

/** A salvaged partition (scenario 0: one interior range of a non-tail segment dropped) and its plan's lost offsets. */
async function salvaged(): Promise<{ dir: string; lost: string[] }> {
  const { dir } = buildScenario(scenario);
  const plan = await salvagePlan(dir, scenario);
  await applyPlan(plan);
  const lost = (plan.targets[0]!.salvage?.lost ?? []).map((range) => `${range.firstOffset}..${range.lastOffset}`);
  return { dir, lost };
}

const lossesOf = (findings: readonly { code: string; firstOffset?: bigint | null; lastOffset?: bigint | null }[]): string[] =>
  findings.map((f) => (f.code === "SalvageLostOffsets" ? `${f.firstOffset}..${f.lastOffset}` : f.code));

describe("the offsets a salvage recorded as lost stay said (docs/repair.md §6.6)", () => {
  it("the library report: the bytes are clean, the finding carries the range and the journal, the verdict is warn", async () => {
    const { dir, lost } = await salvaged();
    expect(lost).toEqual(scenario.lost);
    const report = await scan(dir, scenario);
    const partition = report.partitions[0]!;
    expect(partition.verdict).toBe("clean");
    expect(lossesOf(partition.findings)).toEqual(lost);
    const finding = partition.findings[0]!;
    expect(finding).toMatchObject({
      severity: "warn",
      code: "SalvageLostOffsets",
      path: join(`${dir}.segscan`, "journal.jsonl"),
      kind: "unreadable",
      completed: true,
      nextCommand: ["segscan", "forget", dir, "--lost-offsets"],
    });
    expect(finding.message).toContain(`were dropped by the salvage of`);
    expect(partition.nextStep).toBe(finding.nextStep);
    expect(partition.nextStep).toContain(`segscan forget ${dir} --lost-offsets`);
    expect(report.summary.findings).toEqual({ warn: lost.length, failed: 0 });
    expect(scanVerdict(report)).toBe("warn");
    // JSON: the schema holds it, the verdict is warn, fleet reads code, range and journal.
    const json = toJsonReport(report);
    expect(validateJsonReport(JSON.parse(JSON.stringify(json)))).toEqual([]);
    expect(json.verdict).toBe("warn");
    expect(json.partitions[0]!.findings[0]).toMatchObject({
      code: "SalvageLostOffsets",
      firstOffset: lost[0]!.split("..")[0],
      lastOffset: lost[0]!.split("..")[1],
      path: finding.path,
    });
    // Text: the verdict line first, the finding among the problems (a clean partition with a finding is one), the summary counts it.
    const text = formatReport(report);
    expect(text.split("\n")[0]).toBe("verdict WARN");
    const at = text.indexOf("warn SalvageLostOffsets");
    expect(at).toBeGreaterThan(-1);
    expect(at).toBeLessThan(text.indexOf("partition findings: 1 warn"));
    expect(text).not.toContain("clean partition (--all");
    expect(text).toContain("partition findings: 1 warn");
    // HTML: the headline names it and the header lists it (readable without the script).
    const html = renderHtmlReport(json);
    expect(html).toContain("Verdict: warn");
    expect(html).toContain("partition findings: 1 warn (SalvageLostOffsets)");
    expect(html).toContain("Recorded beside the partitions");
    expect(html).toContain(`offsets ${lost[0]}`);
  });

  it("every scan path says it: a data dir (discovery), a link to the partition, a streamed scan", async () => {
    const { dir, lost } = await salvaged();
    const data = dirname(dir);
    const viaData = await scanPath(data, { engine, concurrency: 1 });
    expect(lossesOf(viaData.partitions.find((p) => p.path === dir)!.findings)).toEqual(lost);
    // The preserve dir sits beside the real path (docs/repair.md §6.2 rule 5): a scan through a link finds it.
    const link = join(dirname(data), `link-${Date.now()}`);
    symlinkSync(dir, link);
    try {
      expect(lossesOf((await scanPartition(link, { engine })).partitions[0]!.findings)).toEqual(lost);
      expect(lossesOf((await scanPath(link, { engine, concurrency: 1 })).partitions[0]!.findings)).toEqual(lost);
    } finally {
      rmSync(link);
    }
  });

  it("a restore puts the bytes back and the finding goes; a partition that was never salvaged has none", async () => {
    const { dir } = await salvaged();
    await restore(dir, { engine, checkWriters: false });
    const after = (await scan(dir, scenario)).partitions[0]!;
    expect(after.verdict).toBe("refused");
    expect(after.findings).toEqual([]);
    const { dir: plain } = buildScenario(scenario);
    expect((await scan(plain, scenario)).partitions[0]!.findings).toEqual([]);
  });

  it("a torn last journal line is skipped as repair skips it; the finding stays", async () => {
    const { dir, lost } = await salvaged();
    const journal = join(`${dir}.segscan`, "journal.jsonl");
    writeFileSync(journal, `${readFileSync(journal, "utf8")}{"v":1,"run":"torn`);
    expect(lossesOf((await scan(dir, scenario)).partitions[0]!.findings)).toEqual(lost);
  });
});

describe("a salvage record that cannot be read is never silence (docs/repair.md §6.6)", () => {
  it("a corrupt journal line: a failed finding naming the journal and the line; the verdict is failed", async () => {
    const { dir } = await salvaged();
    const journal = join(`${dir}.segscan`, "journal.jsonl");
    const lines = readFileSync(journal, "utf8").split("\n");
    lines[1] = "not a record";
    writeFileSync(journal, lines.join("\n"));
    const report = await scan(dir, scenario);
    const partition = report.partitions[0]!;
    expect(partition.verdict).toBe("clean");
    expect(partition.findings).toEqual([
      expect.objectContaining({
        severity: "failed",
        code: "SalvageRecordUnreadable",
        path: journal,
        message: expect.stringContaining("line 2"),
      }),
    ]);
    expect(scanVerdict(report)).toBe("failed");
    expect(validateJsonReport(JSON.parse(JSON.stringify(toJsonReport(report))))).toEqual([]);
  });

  it("a journal that is not a file, and a restored journal that is unreadable, make the same finding", async () => {
    const { dir } = await salvaged();
    const preserve = `${dir}.segscan`;
    renameSync(join(preserve, "journal.jsonl"), join(preserve, "journal.1.restored.jsonl"));
    mkdirSync(join(preserve, "journal.jsonl"));
    expect((await scan(dir, scenario)).partitions[0]!.findings.map((f) => f.code)).toEqual(["SalvageRecordUnreadable"]);
    rmSync(join(preserve, "journal.jsonl"), { recursive: true });
    writeFileSync(join(preserve, "journal.1.restored.jsonl"), "}\n");
    expect((await scan(dir, scenario)).partitions[0]!.findings.map((f) => f.code)).toEqual(["SalvageRecordUnreadable"]);
  });
});

describe("the CLI (docs/repair.md §6.6)", () => {
  it("scan: verdict WARN with the finding, exit 0; --json verdict warn; --ndjson counts it; an unreadable record exits 8", async () => {
    const { dir, lost } = await salvaged();
    const text = await runCli(["scan", dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("warn SalvageLostOffsets: offsets");
    expect(text.stdout).toContain("verdict WARN");
    const json = await runCli(["scan", dir, "--json"]);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.verdict).toBe("warn");
    expect(
      parsed.partitions[0].findings.map((f: { firstOffset: string; lastOffset: string }) => `${f.firstOffset}..${f.lastOffset}`),
    ).toEqual(lost);
    const ndjson = await runCli(["scan", dir, "--ndjson"]);
    const last = JSON.parse(ndjson.stdout.trim().split("\n").at(-1)!);
    expect(last.summary.findings).toEqual({ warn: 1, failed: 0 });
    expect(last.verdict).toBe("warn");
    writeFileSync(join(`${dir}.segscan`, "journal.jsonl"), "garbage\n");
    const failed = await runCli(["scan", dir]);
    expect(failed.code).toBe(8);
    expect(failed.stdout).toContain("failed SalvageRecordUnreadable");
  });
});
