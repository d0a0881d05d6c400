/**
 * `segscan salvage` (docs/repair.md §6.5): the last copy of a
 * refused partition keeps every batch that verifies and extends the chain,
 * drops only the bytes nothing proves, records their offsets as lost, and
 * leaves a partition that scans clean with the lost offsets reported as
 * forward gaps; restore returns every byte. On the fixture shapes of the plan
 * and on the generated fault scenarios (interior damage in a non-tail segment,
 * two damaged ranges in one segment), tail and deep mode, both engines; every
 * refusal; the CLI and its JSON. (Crashes: salvage-crash.test.ts.)
 */
import { shellQuote } from "../src/domain/command.js";
import { cpSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PartitionReport, VerifyMode } from "../src/domain/scan.js";
import type { Engine } from "../src/engine/types.js";
import { INDEX_ENTRY_BYTES } from "../src/format/constants.js";
import { readIndexEntry } from "../src/format/records.js";
import { type GeneratedDataDir, SCENARIOS, generateDataDir } from "../src/gen/index.js";
import { decideSalvage } from "../src/policy/salvage.js";
import { scanPartition } from "../src/node/scan-path.js";
import { type RepairPlan, SalvageRefusedError, applyRepair, nodeRepairFs, planSalvage, readJournal, restore } from "../src/repair/index.js";
import { formatPlan } from "../src/report/repair-format.js";
import { validateRepairJson } from "../src/report/repair-json.js";
import { type ScenarioPair, generateScenarioPairs } from "./helpers/scenario-pairs.js";
import { runCli } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { buildChain, concat, indexAt, tempPartition, trackedTempDir, writeSegment } from "./helpers/fixtures.js";
import { CHUNK_BYTES, buildScenario, engine, scan, snapshot } from "./helpers/repair-scenarios.js";
import { SALVAGEABLE, flipped, salvagePlan, stepShape } from "./helpers/salvage-scenarios.js";

/** Applies a salvage plan as the CLI does (the /proc writer walk is tested on its own). */
function apply(plan: RepairPlan, with_: Engine = engine) {
  return applyRepair(plan, { engine: with_, chunkBytes: CHUNK_BYTES, checkWriters: false });
}

/** The lost ranges of a plan as `first..last` strings. */
const lostOffsets = (plan: RepairPlan): string[] =>
  (plan.targets[0]?.salvage?.lost ?? []).map((range) => `${range.firstOffset}..${range.lastOffset}`);

/** The forward gaps a scan reports, as the offsets they skip: `expected..found-1`. */
const gapOffsets = (partition: PartitionReport): string[] =>
  partition.segments.flatMap((segment) => segment.gaps.map((gap) => `${gap.expectedOffset}..${gap.foundOffset - 1n}`));

/** The bytes a salvaged log must hold: the old log's kept ranges, in order. */
function keptBytes(old: Uint8Array, plan: RepairPlan, segment: string): Uint8Array {
  const log = plan.targets[0]!.steps.find((s) => s.kind === "replace" && s.role === "segment-log" && s.segment === segment)!;
  if (log.kind !== "replace" || log.content.type !== "log-ranges") throw new Error("no log step");
  return concat(log.content.ranges.map((range) => old.subarray(range.from, range.to)));
}

/** Every whole entry of an index file. */
function indexEntries(path: string) {
  const bytes = readFileSync(path);
  return Array.from({ length: Math.floor(bytes.length / INDEX_ENTRY_BYTES) }, (_, i) => readIndexEntry(bytes, i * INDEX_ENTRY_BYTES));
}

describe("salvage: the shapes of the plan", () => {
  describe.each(SALVAGEABLE)("$name", (scenario) => {
    it("plans its steps, keeps every verified batch, scans clean with the lost offsets as gaps (tail and deep), restore returns every byte", async () => {
      const { dir } = buildScenario(scenario);
      const before = snapshot(dir);
      const report = await scan(dir, scenario);
      expect(report.partitions[0]!.verdict).toBe("refused");
      expect(report.partitions[0]!.nextStep.startsWith(`salvage: ${shellQuote(["segscan", "salvage", dir, "--apply"])} keeps `)).toBe(true);
      expect(report.partitions[0]!.nextCommand).toEqual(["segscan", "salvage", dir, "--apply"]);
      const plan = await salvagePlan(dir, scenario);
      const target = plan.targets[0]!;
      expect(target.steps.map(stepShape)).toEqual(scenario.steps);
      expect(lostOffsets(plan)).toEqual(scenario.lost);
      // The plan says what it keeps, in offset order, and the text says it too.
      expect(target.salvage!.kept.every((range) => range.kind === "proven" || range.kind === "intact")).toBe(true);
      const text = formatPlan(plan);
      for (const lost of scenario.lost) expect(text).toContain(`    ${lost} (unreadable`);

      const logs = Object.fromEntries(
        readdirSync(dir)
          .filter((n) => n.endsWith(".log"))
          .map((n) => [n, readFileSync(join(dir, n))]),
      );
      const result = await apply(plan);
      expect(result.changed).toBe(true);
      for (const step of target.steps) {
        if (step.kind !== "replace" || step.role !== "segment-log") continue;
        expect(new Uint8Array(readFileSync(step.file))).toEqual(keptBytes(logs[basename(step.file)]!, plan, step.segment!));
      }
      for (const verify of ["tail", "full"] as const) {
        const after = (await scan(dir, { ...scenario, scanOptions: { verify } })).partitions[0]!;
        expect(after.verdict, verify).toBe("clean");
        expect(after.segments.every((segment) => segment.index.mismatches === 0 && !segment.index.rebuilt)).toBe(true);
        // Deep mode walks every byte from 0: every lost range is a forward gap, and nothing else is.
        if (verify === "full") expect(gapOffsets(after)).toEqual(scenario.lost);
      }
      // Every index entry of a salvaged segment sits on a batch start (what Iggy's boot walk starts from).
      for (const name of Object.keys(logs)) {
        const indexPath = join(dir, name.replace(/\.log$/, ".index"));
        const positions = indexEntries(indexPath).map((entry) => entry.position);
        expect(positions.length, name).toBeGreaterThan(0);
      }
      const restored = await restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false });
      expect(restored.restored).toBe(true);
      expect(snapshot(dir)).toEqual(before);
    });
  });

  it("deep mode, an index entry inside the proven prefix that disagrees with the walk: the index is rebuilt over the prefix first", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [2, 3, 2, 2, 2], seed: 37 });
    const entries = indexAt(chain, [0, 1, 3]);
    entries[1] = { ...entries[1]!, offset: entries[1]!.offset + 1n };
    writeSegment(dir, 0n, flipped(chain, [2]), entries);
    const before = snapshot(dir);
    const report = await scanPartition(dir, { engine, verify: "full" });
    expect(report.partitions[0]!.segments[0]!.index.mismatches).toBe(1);
    const plan = await planSalvage(report, { engine });
    expect(plan.targets[0]!.steps.map(stepShape)).toEqual(["replace/index/index-entries", "replace/segment-log/log-ranges"]);
    const index = plan.targets[0]!.steps[0]!;
    expect(index.kind === "replace" && index.content.type === "index-entries" && index.content.entries).toEqual([
      { offset: "0", position: 0, timestamp: chain.batches[0]!.baseTimestamp.toString() },
    ]);
    await apply(plan);
    const after = (await scanPartition(dir, { engine, verify: "full" })).partitions[0]!;
    expect(after.verdict).toBe("clean");
    expect(after.segments[0]!.index.mismatches).toBe(0);
    await restore(dir, { engine, checkWriters: false });
    expect(snapshot(dir)).toEqual(before);
  });

  it("an index rebuilt over the new log is exactly what segscan rebuilds for that log index-less (a stride per MiB), on both engines", async () => {
    for (const scanEngine of engines) {
      const dir = tempPartition();
      // About 4 MiB: several strides, so the bulk walk between them is exercised.
      const chain = buildChain({ counts: Array.from({ length: 40 }, (_, i) => 3 + (i % 4)), payloadBytes: 24_000, seed: 38 });
      writeSegment(dir, 0n, flipped(chain, [0, 17]), indexAt(chain, [0, 10, 20, 30]));
      const plan = await planSalvage(await scanPartition(dir, { engine: scanEngine, verify: "full" }), { engine: scanEngine });
      expect(plan.targets[0]!.steps.map(stepShape)).toEqual([
        "move-aside/index/salvage",
        "replace/segment-log/log-ranges",
        "replace/index/index-entries",
      ]);
      await apply(plan, scanEngine);
      const written = indexEntries(join(dir, "00000000000000000000.index"));
      expect(written.length).toBeGreaterThan(2);
      rmSync(join(dir, "00000000000000000000.index"));
      const indexLess = (await scanPartition(dir, { engine: scanEngine })).partitions[0]!.segments[0]!;
      expect(indexLess.arm).toBe("index-less");
      expect(indexLess.rebuiltIndex).toEqual(
        written.map((e) => ({ offset: e.offset, timestamp: e.timestamp, position: Number(e.position) })),
      );
    }
  });

  it("the journal records what was kept and the offsets lost, in the begin record and in the log step's intent", async () => {
    const scenario = SALVAGEABLE[1]!;
    const { dir } = buildScenario(scenario);
    const plan = await salvagePlan(dir, scenario);
    const result = await apply(plan);
    const records = await readJournal(nodeRepairFs, result.targets[0]!.journalPath);
    const begin = records.find((r) => r.kind === "begin");
    expect(begin?.kind === "begin" && begin.salvage?.lost.map((r) => `${r.firstOffset}..${r.lastOffset}`)).toEqual(scenario.lost);
    const intent = records.find((r) => r.kind === "intent" && r.op.kind === "replace" && r.op.role === "segment-log");
    expect(intent?.kind === "intent" && intent.lost.length).toBe(2);
  });
});

// ---------------------------------------------------------------------------
// Generated fault scenarios

let engines: Engine[] = [];
let root: string;
let samples = new Map<string, ScenarioPair>();
const GENERATED = ["payload-bitflip", "two-damaged-ranges", "length-bitflip", "buried-bitflip", "sealed-last-batch-bitflip"];

beforeAll(async () => {
  engines = await allEngines();
  root = await mkdtemp(join(tmpdir(), "segscan-salvage-"));
  samples = await generateScenarioPairs(root, GENERATED);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** A copy of a scenario's faulted partition, to change. */
function copyOf(name: string): string {
  const source = samples.get(name)!.faulty.partitions[0]!.path;
  const dir = join(trackedTempDir("segscan-salvage-copy-"), "streams", "1", "topics", "1", "partitions", "1");
  cpSync(source, dir, { recursive: true });
  return dir;
}

describe("salvage on generated fault scenarios: what survives is exactly the unfaulted twin's undamaged batches", () => {
  const cases = [
    ["payload-bitflip", "tail"],
    ["payload-bitflip", "full"],
    ["two-damaged-ranges", "tail"],
    ["two-damaged-ranges", "full"],
    ["length-bitflip", "tail"],
    ["buried-bitflip", "full"],
  ] as const;
  it.each(cases)("%s (%s mode)", async (name, verify: VerifyMode) => {
    const dir = copyOf(name);
    const before = snapshot(dir);
    const base = samples.get(name)!.base.partitions[0]!;
    const report = await scanPartition(dir, { engine: engines[1]!, verify });
    const partition = report.partitions[0]!;
    expect(partition.refusal?.code).toBe("InteriorDamage");
    const plan = await planSalvage(report, { engine: engines[1]! });
    // The damaged segment, and which of its batches the fault changed (against the unfaulted twin).
    const damagedIndex = partition.segments.findIndex((segment) => segment.outcome === "refused");
    const twin = base.segments[damagedIndex]!;
    const faultyLog = readFileSync(partition.segments[damagedIndex]!.logPath);
    const twinLog = readFileSync(twin.logPath);
    const damaged = twin.batches.filter(
      (batch) =>
        !faultyLog
          .subarray(batch.position, batch.position + batch.length)
          .equals(twinLog.subarray(batch.position, batch.position + batch.length)),
    );
    expect(damaged.length).toBeGreaterThan(0);
    expect(lostOffsets(plan)).toEqual(damaged.map((batch) => `${batch.baseOffset}..${batch.baseOffset + BigInt(batch.messageCount) - 1n}`));
    // Only the log of the damaged segment changes (buried-bitflip in deep mode also trims its index).
    const changed = plan.targets[0]!.steps.map((step) => basename(step.file));
    expect(changed).toContain(basename(twin.logPath));

    const result = await apply(plan, engines[1]!);
    expect(result.changed).toBe(true);
    const salvaged = readFileSync(twin.logPath.replace(base.path, dir));
    const undamaged = twin.batches.filter((batch) => !damaged.includes(batch));
    expect(salvaged.equals(Buffer.concat(undamaged.map((batch) => twinLog.subarray(batch.position, batch.position + batch.length))))).toBe(
      true,
    );
    for (const scanEngine of engines) {
      for (const mode of ["tail", "full"] as const) {
        const after = (await scanPartition(dir, { engine: scanEngine, verify: mode })).partitions[0]!;
        const where = `${scanEngine.kind} ${mode}`;
        expect(after.verdict, where).toBe("clean");
        // docs/repair.md §6.6: the bytes are clean, and the offsets the salvage dropped stay said, one finding per range.
        expect(
          after.findings.map((f) => (f.code === "SalvageLostOffsets" ? `${f.firstOffset}..${f.lastOffset}` : f.code)),
          where,
        ).toEqual(lostOffsets(plan));
        expect(after.nextStep, where).toBe(after.findings[0]!.nextStep);
        if (mode === "full") {
          expect(gapOffsets(after), where).toEqual(lostOffsets(plan));
          // The messages the partition still holds: every offset but the lost ones.
          const lostCount = (plan.targets[0]!.salvage?.lost ?? []).reduce((sum, range) => sum + (range.messages ?? 0), 0);
          const held = after.segments.reduce((sum, segment) => sum + (segment.messageCount ?? 0), 0);
          expect(held, where).toBe(base.segments.reduce((sum, segment) => sum + segment.messages, 0) - lostCount);
        }
      }
    }
    expect((await restore(dir, { engine, checkWriters: false })).restored).toBe(true);
    expect(snapshot(dir)).toEqual(before);
    // Restored: the bytes are back, so nothing is recorded as lost any more (the partition is refused again).
    expect((await scanPartition(dir, { engine: engines[1]!, verify })).partitions[0]!.findings).toEqual([]);
  });

  it("the next step names salvage exactly where planSalvage makes a plan, for every generated scenario, tail and deep", async () => {
    const all = await mkdtemp(join(tmpdir(), "segscan-salvage-all-"));
    try {
      for (const scenario of SCENARIOS) {
        let generated: GeneratedDataDir;
        try {
          generated = await generateDataDir(join(all, scenario.name), { size: "tiny", seed: 11, scenario: scenario.name });
        } catch {
          continue; // a scenario the tiny profile cannot host
        }
        for (const verify of ["tail", "full"] as const) {
          const report = await scanPartition(generated.partitions[0]!.path, { engine, verify });
          const partition = report.partitions[0]!;
          const planned = await planSalvage(report, { engine }).then(
            () => true,
            (error: unknown) => {
              if (!(error instanceof SalvageRefusedError)) throw error;
              return false;
            },
          );
          expect(partition.nextStep.startsWith("salvage:"), `${scenario.name} ${verify}: ${partition.nextStep}`).toBe(planned);
          expect(decideSalvage(partition, 1).salvageable).toBe(planned);
        }
      }
    } finally {
      await rm(all, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------
// Refusals

async function refusal(dir: string, options: Parameters<typeof scanPartition>[1] = {}): Promise<SalvageRefusedError> {
  const report = await scanPartition(dir, { engine, ...options });
  const before = snapshot(dir);
  try {
    await planSalvage(report, { engine });
  } catch (error) {
    expect(error).toBeInstanceOf(SalvageRefusedError);
    expect((error as Error).message).toMatch(/nothing was changed$/);
    expect(snapshot(dir)).toEqual(before);
    return error as SalvageRefusedError;
  }
  throw new Error("expected salvage to refuse");
}

describe("salvage refuses, changing nothing", () => {
  it("with replicas: rebuild from a replica instead", async () => {
    const error = await refusal(copyOf("payload-bitflip"), { replicaCount: 3 });
    expect(error.code).toBe("Replicas");
    expect(error.message).toContain("rebuild it from a replica");
  });

  it("when the probe ran out of budget: nothing after the damage is proven either way", async () => {
    const error = await refusal(copyOf("payload-bitflip"), { probeBudgetUnits: 1000 });
    expect(error.code).toBe("UnverifiedResidue");
    expect(error.message).toContain("--probe-budget");
  });

  it("when the survivor walk did not map the segment to its end", async () => {
    // Enough budget for the probe to find the first survivor, not for the walk to cover what follows it.
    const error = await refusal(copyOf("two-damaged-ranges"), { probeBudgetUnits: 25_000 });
    expect(error.code).toBe("ScopeNotMapped");
  });

  it("when a segment that is not the last ends in damage: the next segment's chain bounds it, and dropping it would leave a hole", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 3, 2, 2, 2], seed: 41 });
    const b = buildChain({ counts: [2, 2], seed: 42, startOffset: a.nextOffset });
    // Batch 1 has survivors after it; the last batch has none in its file, but the next segment's chain follows it:
    // the segment ends in an unreadable range the next segment bounds (docs/recovery.md §4 step 3), not a torn tail.
    writeSegment(dir, 0n, flipped(a, [1, 4]), indexAt(a, [0]));
    writeSegment(dir, a.nextOffset, b.log, indexAt(b, [0]));
    const report = await scanPartition(dir, { engine });
    const last = a.batches[4]!;
    expect(report.partitions[0]!.segments[0]!.scope.at(-1)).toMatchObject({
      kind: "unreadable",
      firstOffset: last.baseOffset,
      lastOffset: a.nextOffset - 1n,
      tornEvidence: null,
    });
    const error = await refusal(dir);
    expect(error.code).toBe("ChainBrokenAfterSalvage");
    expect(error.message).toContain(
      `the ${last.length} damaged bytes at [${last.position}, ${a.log.length}) it drops at its end leave offsets ${last.baseOffset}..${a.nextOffset - 1n} in no segment`,
    );
    expect(error.message).toContain("Iggy's boot refuses a hole between segments (ensure_contiguous_chain)");
    expect(report.partitions[0]!.nextStep).toMatch(/^restore this partition from a backup/);
  });

  it("damage in the last batch of a segment that is not the last (a Hole): the damaged bytes are named, and dropping them would leave a hole", async () => {
    const dir = copyOf("sealed-last-batch-bitflip");
    const layout = samples.get("sealed-last-batch-bitflip")!.base.partitions[0]!.segments;
    const [middle, next] = [layout[1]!, layout[2]!];
    const last = middle.batches.at(-1)!;
    expect((await scanPartition(dir, { engine })).partitions[0]!.refusal?.code).toBe("Hole");
    const error = await refusal(dir);
    expect(error.code).toBe("ChainBrokenAfterSalvage");
    expect(error.message).toBe(
      `refusing to salvage ${dir}: after salvage, segment ${middle.startOffset} would end at offset ${last.baseOffset - 1n} ` +
        `(the ${middle.size - last.position} damaged bytes at [${last.position}, ${middle.size}) it drops at its end leave offsets ` +
        `${last.baseOffset}..${next.startOffset - 1n} in no segment) and the next segment starts at offset ${next.startOffset}: ` +
        "Iggy's boot refuses a hole between segments (ensure_contiguous_chain); nothing was changed",
    );
    expect(error.message).not.toContain("none to drop");
  });

  it("a Hole after a damaged end, with the next segment refused for its own damage: the first segment's damaged bytes are named", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 3], seed: 53 });
    const b = buildChain({ counts: [2, 2, 2], seed: 54, startOffset: a.nextOffset });
    writeSegment(dir, 0n, flipped(a, [1]), indexAt(a, [0]));
    writeSegment(dir, a.nextOffset, flipped(b, [0])); // index-less: its survivor is its second batch
    const partition = (await scanPartition(dir, { engine })).partitions[0]!;
    expect(partition.segments.map((segment) => segment.outcome)).toEqual(["torn-tail", "refused"]);
    expect(partition.refusal?.code).toBe("InteriorDamage");
    const last = a.batches[1]!;
    const error = await refusal(dir);
    expect(error.code).toBe("ChainBrokenAfterSalvage");
    expect(error.message).toContain(
      `segment 0 would end at offset 1 (the ${last.length} damaged bytes at [${last.position}, ${a.log.length}) it drops at its end leave offsets 2..4 in no segment)`,
    );
  });

  it("junk after the last batch of a segment that is not the last hides no offset: a torn tail, so repair cuts it, not salvage", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 3], seed: 51 });
    const b = buildChain({ counts: [2, 2], seed: 52, startOffset: a.nextOffset });
    writeSegment(dir, 0n, concat([a.log, new Uint8Array(900)]), indexAt(a, [0]));
    writeSegment(dir, a.nextOffset, b.log, indexAt(b, [0]));
    expect((await scanPartition(dir, { engine })).partitions[0]!.verdict).toBe("repairable");
    expect((await refusal(dir)).code).toBe("NotRefused");
  });

  it("junk after the last batch of a refused segment that is not the last: salvage drops it with the damage, and the partition scans clean", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 3, 2], seed: 51 });
    const b = buildChain({ counts: [2, 2], seed: 52, startOffset: a.nextOffset });
    writeSegment(dir, 0n, concat([flipped(a, [1]), new Uint8Array(900)]), indexAt(a, [0]));
    writeSegment(dir, a.nextOffset, b.log, indexAt(b, [0]));
    const plan = await planSalvage(await scanPartition(dir, { engine }), { engine });
    expect(plan.targets[0]!.salvage!.lost).toEqual([
      expect.objectContaining({ kind: "unreadable", firstOffset: "2", lastOffset: "4" }),
      expect.objectContaining({ kind: "torn", firstOffset: null, lastOffset: null, bytes: 900, tornEvidence: "zero-filled" }),
    ]);
    await apply(plan);
    const after = (await scanPartition(dir, { engine })).partitions[0]!;
    expect(after.verdict).toBe("clean");
  });

  it("the same damage in the tail segment: the torn tail after the survivors is dropped and recorded as lost", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 3, 2, 2, 2], seed: 41 });
    writeSegment(dir, 0n, flipped(a, [1, 4]), indexAt(a, [0]));
    const plan = await planSalvage(await scanPartition(dir, { engine }), { engine });
    const lost = plan.targets[0]!.salvage!.lost;
    expect(lost.map((range) => range.kind)).toEqual(["unreadable", "torn"]);
    expect(lost[1]!.tornEvidence).toBe("complete-batch");
    await apply(plan);
    expect((await scanPartition(dir, { engine })).partitions[0]!.verdict).toBe("clean");
  });

  it("on a chain refusal between segments (a hole): there is no damaged byte to drop", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 2], seed: 43 });
    const b = buildChain({ counts: [2, 2], seed: 44, startOffset: a.nextOffset + 5n });
    writeSegment(dir, 0n, a.log, indexAt(a, [0]));
    writeSegment(dir, a.nextOffset + 5n, b.log, indexAt(b, [0]));
    expect((await refusal(dir)).code).toBe("ChainRefusal");
  });

  it("on a refusal before anything after the damage was proven (an index past the log)", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 2], seed: 45 });
    writeSegment(dir, 0n, a.log, [...indexAt(a, [0]), { offset: 9n, timestamp: 1n, position: BigInt(a.log.length + 100) }]);
    expect((await refusal(dir)).code).toBe("NothingProvenAfterDamage");
  });

  it("on a partition that is not refused: repair is the way", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [2, 2], seed: 46 });
    writeSegment(dir, 0n, concat([a.log, new Uint8Array(500)]), indexAt(a, [0]));
    const error = await refusal(dir);
    expect(error.code).toBe("NotRefused");
    expect(error.message).toContain("segscan repair");
  });
});

// ---------------------------------------------------------------------------
// The CLI

describe("segscan salvage (CLI)", () => {
  it("dry run (exit 4), --json (the repair shape, valid), --apply (exit 1, clean, the lost offsets named), restore", async () => {
    const dir = copyOf("two-damaged-ranges");
    const before = snapshot(dir);
    const dry = await runCli(["salvage", dir, "--no-progress"], { NO_COLOR: "1" });
    expect(dry.code, dry.stderr).toBe(4);
    expect(dry.stdout).toContain("Salvage plan: 1 step on 1 partition.");
    expect(dry.stdout).toContain("records as lost (the bytes nothing proves):");
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(snapshot(dir)).toEqual(before);

    const json = await runCli(["salvage", dir, "--json", "--no-progress"]);
    expect(json.code).toBe(4);
    const document = JSON.parse(json.stdout);
    expect(validateRepairJson(document)).toEqual([]);
    expect(document.plan.targets[0].salvage.lost).toHaveLength(2);

    const applied = await runCli(["salvage", dir, "--apply", "--json", "--no-progress"]);
    expect(applied.code, applied.stderr).toBe(1);
    const result = JSON.parse(applied.stdout);
    expect(validateRepairJson(result)).toEqual([]);
    expect(result.after.partitions[0].verdict).toBe("clean");
    expect(result.applied.targets[0].steps[0].op).toMatchObject({ kind: "replace", role: "segment-log" });

    const again = await runCli(["salvage", dir, "--no-progress"], { NO_COLOR: "1" });
    expect(again.code).toBe(4);
    expect(again.stderr).toContain("the partition is clean");

    const restored = await runCli(["restore", dir]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(snapshot(dir)).toEqual(before);

    const text = await runCli(["salvage", dir, "--apply", "--no-progress"], { NO_COLOR: "1" });
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/re-scan: the salvaged partition is clean now; offsets \d+\.\.\d+, \d+\.\.\d+ are recorded as lost in /);
    expect(text.stdout).toContain("forward gap at byte");
  });

  it("refusals: exit 4 with the reason on stderr (JSON still the repair shape); a data dir or a lone .log is a usage error", async () => {
    const dir = copyOf("payload-bitflip");
    const replicas = await runCli(["salvage", dir, "--replicas", "3", "--json", "--no-progress"]);
    expect(replicas.code).toBe(4);
    expect(replicas.stderr).toContain("rebuild it from a replica");
    const document = JSON.parse(replicas.stdout);
    expect(validateRepairJson(document)).toEqual([]);
    expect(document.plan.targets).toEqual([]);
    expect(document.plan.leftAlone[0].code).toBe("SalvageReplicas");

    const data = await runCli(["salvage", samples.get("payload-bitflip")!.faulty.dir, "--no-progress"]);
    expect(data.code).toBe(16);
    expect(data.stderr).toContain("salvage takes one partition directory");
    const log = readdirSync(dir).find((name) => name.endsWith(".log"))!;
    const lone = await runCli(["salvage", join(dir, log), "--no-progress"]);
    expect(lone.code).toBe(16);
  });
});
