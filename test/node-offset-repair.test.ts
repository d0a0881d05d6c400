/**
 * docs/node.md N4, N7: the offset repairs — evidence copy, rewrite to H,
 * complete a torn record, move aside — planned (rewrites only with
 * --clamp-offsets), applied through the journal, converging after a crash at
 * every step, and undone byte for byte by restore. purge.gen, superblocks and
 * the snapshot are never changed. The "done when" of the issue end to end
 * through the CLI.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { applyOffsetRepairs, planOffsetRepairs } from "../src/node/repair/offsets.js";
import { nodeFindings } from "../src/node/scan.js";
import { scanPath } from "../src/node/scan-path.js";
import { InjectedFault, StalePlanError, applyRepair, createFaultyFs, nodeRepairFs, planRepair, restore } from "../src/repair/index.js";
import { runCli } from "./helpers/cli.js";
import { tempDir } from "./helpers/node-wal.js";

const engine = createTsEngine();
const P1 = "streams/1/topics/1/partitions/1";
const P2 = "streams/1/topics/1/partitions/2";

async function node(fault: string): Promise<string> {
  const root = tempDir();
  const generated = await generateDataDir(root, { size: "tiny", seed: 7 });
  await writeNodeMetadata(root, generated.partitions, { fault });
  return root;
}

/** Every file under `root` outside the preserve dirs, by path, as hex. */
function files(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (name.endsWith(".segscan")) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[path.slice(root.length + 1)] = readFileSync(path).toString("hex");
    }
  };
  walk(root);
  return out;
}

async function planFor(root: string, clampOffsets = true) {
  const report = await scanPath(root, { engine, concurrency: 1 });
  return planOffsetRepairs(report.node!, { clampOffsets });
}

async function repairOffsets(root: string, fs = nodeRepairFs): Promise<void> {
  await applyOffsetRepairs(await planFor(root), { fs, engine });
}

const NEVER_CHANGED = (name: string): boolean =>
  name.endsWith("purge.gen") ||
  /superblock\.[ab]$/.test(name) ||
  name.endsWith("snapshot.bin") ||
  name.endsWith(".log") ||
  name.endsWith(".index");

describe("planning", () => {
  it("without --clamp-offsets only the evidence copy is planned; the rewrites are listed as opt-in", async () => {
    const ahead = await planFor(await node("offset-ahead"), false);
    expect(ahead.steps).toEqual([]);
    expect(ahead.optIn).toEqual([expect.objectContaining({ code: "OffsetAheadOfHead" })]);
    const corrupt = await planFor(await node("offset-corrupt"), false);
    expect(corrupt.steps.map((s) => s.kind)).toEqual(["evidence-copy"]);
  });

  it("with --clamp-offsets each finding gets its step", async () => {
    expect((await planFor(await node("offset-ahead"))).steps.map((s) => [s.kind, s.name])).toEqual([
      ["clamp-to-head", "offsets/consumers/7"],
    ]);
    expect((await planFor(await node("offset-checksum-torn"))).steps.map((s) => s.kind)).toEqual(["complete-record"]);
    // The empty partition's consumer and group offsets both move.
    expect((await planFor(await node("offset-empty-partition"))).steps.map((s) => [s.kind, s.name])).toEqual([
      ["move-aside", "offsets/consumers/7"],
      ["move-aside", "offsets/groups/1"],
    ]);
  });
});

describe.each([
  ["offset-ahead", P1, "OffsetAheadOfHead"],
  ["offset-checksum-torn", P1, "OffsetChecksumTorn"],
  ["offset-empty-partition", P2, "OffsetOnEmptyPartition"],
  ["offset-corrupt", P1, "OffsetCorrupt"],
])("%s", (fault, partition, code) => {
  it("apply fixes the finding (or keeps evidence), touches nothing else, and restore returns every byte", async () => {
    const root = await node(fault);
    const before = files(root);
    await repairOffsets(root);
    const after = files(root);
    for (const name of Object.keys(before).filter(NEVER_CHANGED)) expect(after[name], name).toBe(before[name]);
    const codes = nodeFindings((await scanPath(root, { engine, concurrency: 1 })).node!).map((f) => f.code);
    if (code === "OffsetCorrupt") {
      expect(codes).toContain("OffsetCorrupt");
      expect(after).toEqual(before);
      expect(readdirSync(join(root, `${partition}.segscan`))).toContain("offsets-consumers-7.evidence");
    } else {
      expect(codes).not.toContain(code);
      await restore(join(root, partition), { engine });
      expect(files(root)).toEqual(before);
    }
  });

  it("a crash at every step k, then scan + plan + apply again: the uncrashed end state; restore returns every byte", async () => {
    const reference = await node(fault);
    const counter = createFaultyFs(nodeRepairFs);
    await repairOffsets(reference, counter);
    const end = files(reference);
    expect(counter.steps).toBeGreaterThan(3);
    for (let k = 1; k <= counter.steps; k++) {
      for (const tornWriteFraction of counter.log[k - 1]!.startsWith("write") ? [0, 0.5] : [0]) {
        const label = `k=${k} (${counter.log[k - 1]}) torn=${tornWriteFraction}`;
        const root = await node(fault);
        const before = files(root);
        await expect(repairOffsets(root, createFaultyFs(nodeRepairFs, { failAt: k, tornWriteFraction })), label).rejects.toBeInstanceOf(
          InjectedFault,
        );
        await repairOffsets(root);
        expect(files(root), label).toEqual(end);
        if (code === "OffsetCorrupt") {
          expect(readdirSync(join(root, `${partition}.segscan`)), label).toContain("offsets-consumers-7.evidence");
        } else {
          await restore(join(root, partition), { engine });
          expect(files(root), label).toEqual(before);
        }
      }
    }
  });
});

describe("refusals", () => {
  it("offsets of a partition refused as a chain (the server would fence it) are not rewritten, even with --clamp-offsets", async () => {
    const root = tempDir();
    const generated = await generateDataDir(root, { size: "tiny", seed: 7, scenario: "hole" });
    await writeNodeMetadata(root, generated.partitions);
    const plan = await planFor(root);
    expect(plan.steps).toEqual([]);
    expect(plan.heldBack.map((item) => item.code)).toEqual(["OffsetOnEmptyPartition", "OffsetOnEmptyPartition"]);
  });

  it("a plan whose offset file changed since the scan is refused and nothing changes", async () => {
    const root = await node("offset-ahead");
    const plan = await planFor(root);
    const path = join(root, P1, "offsets/consumers/7");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path, Buffer.alloc(16, 1));
    const before = files(root);
    await expect(applyOffsetRepairs(plan, { engine })).rejects.toBeInstanceOf(StalePlanError);
    expect(files(root)).toEqual(before);
  });
});

describe("the partition lock", () => {
  it("a run holding the partition's lock makes the offset repair refuse, nothing changed", async () => {
    const { acquireLock, LockHeldError } = await import("../src/repair/index.js");
    const root = await node("offset-ahead");
    const plan = await planFor(root);
    const before = files(root);
    const held = await acquireLock(`${join(root, P1)}.segscan`, "test", "test");
    try {
      await expect(applyOffsetRepairs(plan, { engine })).rejects.toBeInstanceOf(LockHeldError);
    } finally {
      await held.release();
    }
    expect(files(root)).toEqual(before);
    await applyOffsetRepairs(plan, { engine });
    expect(files(root)).not.toEqual(before);
  });
});

describe("a torn tail under a committed consumer offset (library)", () => {
  it("segment repair + clamp: the node scans clean of both findings; restore of the partition returns every byte", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const before = files(root);
    const report = await scanPath(root, { engine, concurrency: 1 });
    const plan = planOffsetRepairs(report.node!, { clampOffsets: true });
    // Consumer 7 and group 1 both committed through 231, above the cut.
    expect(plan.steps).toEqual([
      expect.objectContaining({ kind: "clamp-to-head", name: "offsets/consumers/7", fromOffset: 231n }),
      expect.objectContaining({ kind: "clamp-to-head", name: "offsets/groups/1", fromOffset: 231n }),
    ]);
    expect(plan.steps[0]!.toOffset).toBe(report.node!.partitions.find((p) => p.path === join(root, P1))!.head.head);
    await applyRepair(planRepair(report), { engine, checkWriters: false });
    await applyOffsetRepairs(plan, { engine });
    const after = await scanPath(root, { engine, concurrency: 1 });
    expect(after.node!.verdict).toBe("clean");
    expect(after.partitions.every((p) => p.verdict === "clean")).toBe(true);
    await restore(join(root, P1), { engine });
    expect(files(root)).toEqual(before);
  });
});

describe("done when (CLI)", () => {
  it("scan names the consumer, stored offset, head and re-minted offsets; repair --clamp-offsets --apply fixes it; restore puts every byte back", async () => {
    const root = await node("offset-ahead-of-torn-tail");
    const before = files(root);
    const scan = await runCli(["scan", root]);
    expect(scan.code).toBe(4);
    expect(scan.stdout).toMatch(
      /OffsetAheadOfHead .*consumer 7 stored offset 231 but the partition head is (\d+) \(after the torn-tail cut this plan makes\): offsets \d+\.\.231 will be re-minted/,
    );
    expect(scan.stdout).toContain("If iggy-server starts now:");
    const json = JSON.parse((await runCli(["scan", root, "--json"])).stdout);
    const offset = json.node.partitions.find((p: { path: string }) => p.path.endsWith(P1)).offsets.find((o: { id: number }) => o.id === 7);
    expect(offset).toMatchObject({ kind: "consumer", offset: "231" });
    expect(json.node.bootForecast).toContainEqual(expect.objectContaining({ effect: "clamp-offset" }));

    const dry = await runCli(["repair", root]);
    expect(dry.stdout).toContain("OffsetAheadOfHead");
    expect(dry.stdout).toContain("left alone (repair --clamp-offsets rewrites it");
    expect(files(root)).toEqual(before);
    const planned = await runCli(["repair", root, "--clamp-offsets"]);
    expect(planned.stdout).toContain("CHANGES WHAT THIS CONSUMER READS NEXT");
    expect(planned.stdout).toMatch(/this plan removes:\n\s+clamp-offset streams\/1\/topics\/1\/partitions\/1\/offsets\/consumers\/7/);

    const jsonPlan = JSON.parse((await runCli(["repair", root, "--clamp-offsets", "--json"])).stdout);
    expect(jsonPlan.nodeRepair.offsets.steps.map((s: { kind: string; fromOffset: string }) => [s.kind, s.fromOffset])).toEqual([
      ["clamp-to-head", "231"],
      ["clamp-to-head", "231"],
    ]);
    expect(files(root)).toEqual(before);
    const applied = await runCli(["repair", root, "--clamp-offsets", "--apply"]);
    expect(applied.stderr).toBe("");
    // Repaired, and nothing is left: the offset findings this run fixed no longer count (exit 1, not 5).
    expect(applied.code).toBe(1);
    const rescan = await runCli(["scan", root]);
    expect(rescan.code).toBe(0);
    expect(rescan.stdout).not.toContain("OffsetAheadOfHead");

    const restored = await runCli(["restore", root]);
    expect(restored.code).toBe(0);
    expect(files(root)).toEqual(before);
  });
});
