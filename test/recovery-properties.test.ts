/**
 * Property tests for segment recovery (docs/recovery.md §3–5, especially §3.5): random chains,
 * random damage, random residues, random budgets, on every engine and window size,
 * held both to the invariants the spec states and to the naive reference model in
 * `helpers/damage.ts`.
 */
import { rmSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { encodeBatch } from "../src/format/encode.js";
import type { IndexEntry } from "../src/format/records.js";
import type { ScanOptions } from "../src/recovery/options.js";
import { scanPartition } from "../src/node/scan-path.js";
import type { PartitionReport, SegmentReport, VerifyMode } from "../src/domain/scan.js";
import {
  type DamageSpec,
  type DamagedLog,
  type RefPartitionSegment,
  refScopeAfterProven,
  refSealedTails,
  refSegment,
  refTornEvidence,
  resolveDamage,
} from "./helpers/damage.js";
import { allEngines } from "./helpers/engines.js";
import { loadBothWays } from "./helpers/resident.js";
import { type BuiltChain, buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { formatCount } from "../src/domain/numbers.js";

const WINDOWS = [4096, 64 * 1024, 1 << 20] as const;

/**
 * Fixed seeds and modest run counts keep CI deterministic and quick. For a longer hunt:
 * SEGSCAN_PROP_SEED=<n> (different seeds) and SEGSCAN_PROP_RUNS=<factor> (more runs).
 */
function runParameters(seed: number, numRuns: number): { seed: number; numRuns: number } {
  const extraSeed = Number(process.env.SEGSCAN_PROP_SEED ?? 0);
  const factor = Number(process.env.SEGSCAN_PROP_RUNS ?? 1);
  return { seed: seed + extraSeed, numRuns: Math.max(1, Math.round(numRuns * factor)) };
}

const U64_MAX = (1n << 64n) - 1n;

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

// Every run writes into its own temp data dir; they are all removed at the end.
const dataDirs: string[] = [];
function freshPartition(): string {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  return tempPartition(1, dataDir);
}
function cleanUp(): void {
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
afterAll(cleanUp);

// ---------------------------------------------------------------------------
// Arbitraries

interface ChainPlan {
  counts: number[];
  payloadBytes: number;
  seed: number;
  /** null: no .index file at all; else which batches (besides batch 0) get an entry. */
  indexFlags: boolean[] | null;
}

const countArb = (allowEmpty: boolean): fc.Arbitrary<number> =>
  allowEmpty
    ? fc.oneof({ arbitrary: fc.integer({ min: 1, max: 20 }), weight: 9 }, { arbitrary: fc.constant(0), weight: 1 })
    : fc.integer({ min: 1, max: 20 });

function chainPlanArb(options: {
  allowEmpty: boolean;
  maxPayload?: number;
  minBatches?: number;
  maxBatches?: number;
}): fc.Arbitrary<ChainPlan> {
  return fc.record({
    counts: fc.array(countArb(options.allowEmpty), { minLength: options.minBatches ?? 3, maxLength: options.maxBatches ?? 12 }),
    payloadBytes: fc.integer({ min: 0, max: options.maxPayload ?? 2000 }),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
    indexFlags: fc.option(fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), { nil: null, freq: 2 }),
  });
}

/** Segment start offsets, including u64 values past 2^53 and close to u64::MAX. */
const startOffsetArb = fc.constantFrom(0n, 1000n, 2n ** 53n - 3n, 2n ** 63n + 11n, U64_MAX - 600n);

const damageArb: fc.Arbitrary<DamageSpec> = fc.record({
  kind: fc.constantFrom("flip", "zero", "hole", "garbage", "stale"),
  anchored: fc.boolean(),
  a: fc.nat(),
  b: fc.nat(),
  length: fc.integer({ min: 1, max: 3000 }),
  bits: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
  seed: fc.nat(),
});

function build(plan: ChainPlan, startOffset: bigint): BuiltChain {
  return buildChain({ counts: plan.counts, payloadBytes: plan.payloadBytes, seed: plan.seed, startOffset });
}

/** Index entries for the plan: none, or batch 0 plus the flagged batches, with strictly ascending offsets. */
function planIndex(plan: ChainPlan, chain: BuiltChain, batchCount = plan.counts.length): IndexEntry[] {
  if (plan.indexFlags === null) return [];
  const chosen: number[] = [0];
  for (let i = 1; i < batchCount; i++) {
    if (
      plan.indexFlags[(i - 1) % plan.indexFlags.length] &&
      chain.batches[i]!.baseOffset > chain.batches[chosen[chosen.length - 1]!]!.baseOffset
    ) {
      chosen.push(i);
    }
  }
  return indexAt(chain, chosen);
}

function isAllZero(bytes: Uint8Array): boolean {
  return bytes.every((byte) => byte === 0);
}

async function scanWith(dir: string, engine: Engine, options: ScanOptions): Promise<PartitionReport> {
  return (await scanPartition(dir, { ...options, engine })).partitions[0]!;
}

/** The partition scanned by every engine at every window size, labelled, for the differential checks. */
async function scanEveryWay(
  dir: string,
  verify: VerifyMode,
  probeBudgetUnits: number | undefined,
): Promise<{ label: string; partition: PartitionReport }[]> {
  const reports: { label: string; partition: PartitionReport }[] = [];
  for (const engine of engines) {
    for (const windowBytes of WINDOWS) {
      const options: ScanOptions = probeBudgetUnits === undefined ? { windowBytes, verify } : { windowBytes, verify, probeBudgetUnits };
      reports.push({ label: `${engine.kind} w=${windowBytes}`, partition: await scanWith(dir, engine, options) });
      // The load without a promise, where it answers, is the promise path's report exactly, bytes read included.
      await loadBothWays(dir, engine, options);
    }
  }
  return reports;
}

const strip = (partition: PartitionReport): PartitionReport => ({ ...partition, bytesScanned: 0 });

// ---------------------------------------------------------------------------
// The reference model check, shared by the properties

interface WrittenSegment {
  startOffset: bigint;
  log: Uint8Array;
  index: IndexEntry[];
}

/**
 * Holds a tail-mode report to the reference model (helpers/damage.ts): outcome, proven
 * prefix, residue (probe verdict, survivor, units), refusal fields, and the shared budget.
 */
function expectMatchesReference(partition: PartitionReport, written: readonly WrittenSegment[], limit: number, context: string): void {
  expect(partition.error, context).toBeNull();
  expect(partition.segments.length, context).toBe(written.length);
  // The reference model per segment, in load order (one shared budget), then across segments (docs/recovery.md §4 step 3).
  let spent = 0;
  const refs: (RefPartitionSegment & { spentBefore: number; residueAllZero: boolean })[] = written.map((segmentFiles) => {
    const ref = refSegment(segmentFiles.log, segmentFiles.startOffset, segmentFiles.index, spent, limit);
    const spentBefore = spent;
    if (ref.probe) spent = ref.probe.spentTotal;
    // A probe out of budget reads no further than its last candidate's header (docs/recovery.md §3.5, the allZero rule):
    // all-zero is claimed only when that header ends the file.
    const residueAllZero =
      ref.probe !== null &&
      isAllZero(segmentFiles.log.subarray(ref.damagePosition!)) &&
      !(ref.probe.verdict === "budget-exhausted" && ref.probe.stoppedAt! + 256 < segmentFiles.log.length);
    const provenFirst =
      ref.walkedSize > 0 && (segmentFiles.index.length > 0 || ref.walk?.chainEnd != null) ? segmentFiles.startOffset : null;
    return {
      startOffset: segmentFiles.startOffset,
      ref,
      provenFirst,
      rest: refScopeAfterProven(segmentFiles.log, ref, segmentFiles.startOffset, limit, residueAllZero),
      spentBefore,
      residueAllZero,
    };
  });
  refSealedTails(refs);
  written.forEach((segmentFiles, i) => {
    const segment = partition.segments[i]!;
    const where = `${context} / segment ${i}`;
    const { ref, rest, spentBefore, residueAllZero } = refs[i]!;
    expect(segment.outcome, where).toBe(ref.outcome);
    expect(segment.walkedSize, where).toBe(ref.walkedSize);
    expect(segment.refusal?.code ?? null, where).toBe(ref.refusal);
    if (ref.refusal !== "SizeDivergence" && ref.walk) expect(segment.gaps, where).toEqual(ref.walk.gaps);
    if (ref.probe) {
      const damagePosition = ref.damagePosition!;
      expect(segment.residue, where).toEqual({
        damagePosition,
        bytes: segmentFiles.log.length - damagePosition,
        allZero: residueAllZero,
        probe: ref.probe.verdict,
        survivorPosition: ref.probe.survivorPosition,
        spentUnits: ref.probe.spentTotal - spentBefore,
        tornEvidence: refTornEvidence(segmentFiles.log, damagePosition, residueAllZero),
      });
    } else {
      expect(segment.residue, where).toBeNull();
    }
    // docs/recovery.md §3.7: the proven range, then what the reference's own walk and probes say lies after it.
    expect(segment.scope[0], where).toMatchObject({ kind: "proven", startPosition: 0, endPosition: segment.walkedSize });
    expect(
      segment.scope.slice(1).map(({ bytes: _bytes, ...range }) => range),
      `${where}: scope`,
    ).toEqual(rest);
    expectScopeTiles(segment, i + 1 < written.length, where);
    if (ref.refusal === "InteriorDamage") {
      expect(segment.refusal, where).toMatchObject({ damagePosition: ref.damagePosition, survivorPosition: ref.probe!.survivorPosition });
    } else if (ref.refusal === "UnverifiedResidue") {
      expect(segment.refusal, where).toMatchObject({
        damagePosition: ref.damagePosition,
        residueBytes: segmentFiles.log.length - ref.damagePosition!,
        limitUnits: limit,
        spentUnits: ref.probe!.spentTotal,
        stoppedAt: ref.probe!.stoppedAt,
      });
    } else if (ref.refusal === "OffsetDiscontinuity") {
      expect(segment.refusal, where).toMatchObject(ref.walk!.discontinuity!);
    }
    if (segment.arm === "index-less" && segment.outcome !== "refused") {
      expect(segment.endOffset, where).toBe(ref.walk!.chainEnd);
    }
  });
  expect(partition.budget, context).toEqual({ limitUnits: limit, spentUnits: spent });
  const firstRefused = partition.segments.find((segment) => segment.refusal !== null);
  if (firstRefused) {
    expect(partition.refusal, context).toEqual(firstRefused.refusal);
    expect(partition.verdict, context).toBe("refused");
  } else {
    expectContiguity(partition, refs, context);
  }
}

/**
 * docs/recovery.md §4 step 3 when no segment is refused: the first failing
 * pair's refusal, by the spec's rule over the segments as recovered; a Hole or
 * an empty segment whose first segment ends in damaged bytes names them.
 */
function expectContiguity(partition: PartitionReport, refs: readonly RefPartitionSegment[], context: string): void {
  for (let i = 1; i < partition.segments.length; i++) {
    const [previous, next] = [partition.segments[i - 1]!, partition.segments[i]!];
    const code =
      previous.walkedSize === 0
        ? "EmptyNonTailSegment"
        : next.startOffset > previous.endOffset! + 1n
          ? "Hole"
          : next.startOffset <= previous.endOffset!
            ? "Overlap"
            : null;
    if (code === null) continue;
    expect(partition.refusal?.code, context).toBe(code);
    const end = refs[i - 1]!.rest.at(-1);
    const damaged = end !== undefined && end.endPosition > end.startPosition && (end.kind === "unreadable" || end.tornEvidence !== null);
    if (code !== "Overlap" && damaged) {
      expect(partition.refusal!.message, context).toContain(
        `their bytes are present in the ${formatCount(end.endPosition - end.startPosition)} byte${end.endPosition - end.startPosition === 1 ? "" : "s"} from byte ${formatCount(end.startPosition)} of `,
      );
    } else {
      expect(partition.refusal!.message, context).not.toContain("their bytes are present");
    }
    return;
  }
  expect(partition.refusal, context).toBeNull();
}

/**
 * docs/recovery.md §3.7 invariants of any segment's scope: the ranges tile the
 * `.log` in byte order, the first is the proven prefix, and what follows it
 * matches the outcome (nothing for a clean segment, one torn range for a
 * torn tail or an empty segment, unreadable-first for a refusal).
 */
function expectScopeTiles(segment: SegmentReport, notLast: boolean, where: string): void {
  const scope = segment.scope;
  expect(scope.length, where).toBeGreaterThanOrEqual(1);
  expect(scope[0]!.kind, where).toBe("proven");
  let position = 0;
  for (const range of scope) {
    expect(range.startPosition, where).toBe(position);
    expect(range.bytes, where).toBe(range.endPosition - range.startPosition);
    position = range.endPosition;
  }
  expect(position, where).toBe(segment.messagesSize);
  expect(scope[0]!.endPosition, where).toBe(segment.walkedSize);
  const after = scope.slice(1).map((range) => range.kind);
  if (segment.outcome === "clean") expect(after, where).toEqual([]);
  // The damaged end of a segment that is not the last may say `unreadable` instead (docs/recovery.md §4 step 3).
  if (segment.outcome === "torn-tail" || segment.outcome === "empty") {
    expect(after, where).toEqual([notLast && after[0] === "unreadable" ? "unreadable" : "torn"]);
  }
  if (segment.outcome === "refused") expect(after[0], where).toBe("unreadable");
}

// ---------------------------------------------------------------------------

describe("recovery properties", () => {
  it("1. nothing durable is ever cut: damage before an intact chain-extending batch is never a torn tail", async () => {
    await fc.assert(
      fc.asyncProperty(
        chainPlanArb({ allowEmpty: true }),
        startOffsetArb,
        damageArb,
        fc.boolean(),
        fc.constantFrom(...WINDOWS),
        async (plan, startOffset, damageSpec, afterLastEntry, windowBytes) => {
          const chain = build(plan, startOffset);
          // Half the time keep the damage where tail mode looks: past the batch the last
          // index entry points at (entries on the last two batches are dropped to leave room).
          const index = planIndex(plan, chain, afterLastEntry ? chain.batches.length - 2 : chain.batches.length);
          const lastIndexed =
            index.length > 0 ? chain.batches.find((batch) => BigInt(batch.position) === index[index.length - 1]!.position)! : null;
          const notBefore = afterLastEntry && lastIndexed ? lastIndexed.position + lastIndexed.length : 0;
          const damaged: DamagedLog = resolveDamage(chain, damageSpec, notBefore);
          const dir = freshPartition();
          writeSegment(dir, startOffset, damaged.log, plan.indexFlags === null ? undefined : index);
          const context = `${damaged.description}; index at ${index.map((entry) => entry.position).join(",") || "none"}`;

          // "Extends the chain": carries messages and lies above every offset a batch before
          // (or inside) the damage holds; the walk cannot have proven a higher chain end.
          const intactIndexes = new Set(damaged.intactAfter.map((batch) => batch.index));
          let highestBefore = startOffset - 1n;
          chain.batches.forEach((batch, i) => {
            if (!intactIndexes.has(i) && batch.messageCount > 0) {
              const last = batch.baseOffset + BigInt(batch.messageCount) - 1n;
              if (last > highestBefore) highestBefore = last;
            }
          });
          const survivors = damaged.intactAfter.filter((batch) => batch.messageCount > 0 && batch.baseOffset > highestBefore);

          for (const [engine, verify] of engines.flatMap(
            (engine) =>
              [
                [engine, "tail"],
                [engine, "full"],
              ] as const,
          )) {
            const partition = await scanWith(dir, engine, { windowBytes, verify });
            const segment = partition.segments[0]!;
            const where = `${engine.kind} ${verify} w=${windowBytes}: ${context} → ${segment.outcome} ${segment.refusal?.code ?? ""} P=${segment.walkedSize}`;
            expect(partition.error, where).toBeNull();
            expect(segment.walkedSize, where).toBeLessThanOrEqual(damaged.log.length);
            if (segment.outcome !== "refused") {
              for (const survivor of survivors) expect(segment.walkedSize, where).toBeGreaterThanOrEqual(survivor.end);
              if (segment.outcome === "clean") expect(segment.walkedSize, where).toBe(damaged.log.length);
              expect(partition.verdict, where).not.toBe("refused");
            } else {
              // Refused, nothing cut. With the default budget a residue this small is always decided.
              expect(["InteriorDamage", "OffsetDiscontinuity", "SizeDivergence"], where).toContain(segment.refusal!.code);
              expect(partition.verdict, where).toBe("refused");
              expect(partition.action, where).toBe("tombstone");
            }
            if (!damaged.changed) expect(segment.outcome, where).toBe("clean");
            if (verify === "tail")
              expectMatchesReference(partition, [{ startOffset, log: damaged.log, index }], partition.budget.limitUnits, where);
          }
          cleanUp();
        },
      ),
      runParameters(0x5e65ca1, 150),
    );
  });

  type ResidueKind =
    | "none"
    | "random"
    | "zeros"
    | "truncated-next"
    | "truncated-next+zeros"
    | "garbage+stale"
    | "garbage+empty-next"
    | "garbage+overlapping-next"
    | "garbage+corrupt-next";
  const residueArb = fc.record({
    kind: fc.constantFrom<ResidueKind>(
      "none",
      "random",
      "zeros",
      "truncated-next",
      "truncated-next+zeros",
      "garbage+stale",
      "garbage+empty-next",
      "garbage+overlapping-next",
      "garbage+corrupt-next",
    ),
    length: fc.integer({ min: 1, max: 40_000 }),
    cut: fc.nat(),
    seed: fc.nat(),
  });

  it("2. tail-only damage is cut exactly at the end of the chain", async () => {
    await fc.assert(
      fc.asyncProperty(
        // null: the chain ends exactly at u64::MAX, so nothing can extend it.
        chainPlanArb({ allowEmpty: false, minBatches: 1 }),
        fc.option(startOffsetArb, { nil: null, freq: 5 }),
        residueArb,
        fc.constantFrom(...WINDOWS),
        async (plan, chosenStart, residueSpec, windowBytes) => {
          const n = plan.counts.length;
          const messages = plan.counts.reduce((sum, count) => sum + count, 0);
          const startOffset = chosenStart ?? U64_MAX + 1n - BigInt(messages);
          const chainEnd = startOffset + BigInt(messages) - 1n;
          // The "next" batch: the real next one, or (at u64::MAX, and for the overlapping kind) one
          // whose base offset equals the chain end, which does not extend the chain (docs/recovery.md §3.5: `>`).
          const overlapping = chosenStart === null || residueSpec.kind === "garbage+overlapping-next";
          const nextBase = overlapping ? chainEnd : chainEnd + 1n;
          const full = buildChain({
            counts: [...plan.counts, 1 + (residueSpec.seed % 20)],
            payloadBytes: plan.payloadBytes,
            seed: plan.seed,
            startOffset,
            baseOffsets: [...plan.counts.map(() => undefined), nextBase],
          });
          const next = full.batches[n]!;
          const chainBytes = full.log.subarray(0, next.position);
          const nextBytes = full.log.subarray(next.position);
          const nextOffset = nextBase;
          const small = 1 + (residueSpec.length % 3000);
          let residue: Uint8Array;
          switch (residueSpec.kind) {
            case "none":
              residue = new Uint8Array(0);
              break;
            case "random":
              residue = randomBytes(residueSpec.length, residueSpec.seed);
              break;
            case "zeros":
              residue = new Uint8Array(residueSpec.length);
              break;
            case "truncated-next":
              residue = nextBytes.slice(0, 1 + (residueSpec.cut % (nextBytes.length - 1)));
              break;
            case "truncated-next+zeros":
              residue = concat([nextBytes.subarray(0, 1 + (residueSpec.cut % (nextBytes.length - 1))), new Uint8Array(residueSpec.length)]);
              break;
            case "garbage+stale": {
              // A complete, verifying copy of an older batch: below the chain end, so never a survivor.
              const older = full.batches[residueSpec.cut % n]!;
              residue = concat([
                randomBytes(small, residueSpec.seed),
                full.log.subarray(older.position, older.position + older.length),
                new Uint8Array(residueSpec.cut % 700),
              ]);
              break;
            }
            case "garbage+empty-next": {
              // A complete, verifying, chain-extending batch with no messages: not a survivor (message_count > 0).
              const empty = encodeBatch({ partitionId: 1n, baseOffset: nextOffset, baseTimestamp: next.baseTimestamp, messages: [] });
              residue = concat([randomBytes(small, residueSpec.seed), empty, new Uint8Array(residueSpec.cut % 700)]);
              break;
            }
            case "garbage+overlapping-next":
              residue = concat([randomBytes(small, residueSpec.seed), nextBytes, new Uint8Array(residueSpec.cut % 700)]);
              break;
            case "garbage+corrupt-next": {
              // The real next batch, complete but with one payload byte flipped: passes the cheap checks, fails verification.
              const corrupt = nextBytes.slice();
              corrupt[256 + 48 + (residueSpec.cut % (corrupt.length - 256 - 48))]! ^= 0x40;
              residue = concat([randomBytes(small, residueSpec.seed), corrupt]);
              break;
            }
          }
          const index = planIndex(plan, full, n);
          const log = concat([chainBytes, residue]);
          const dir = freshPartition();
          writeSegment(dir, startOffset, log, plan.indexFlags === null ? undefined : index);
          const where = `${residueSpec.kind} residue of ${residue.length} bytes after ${chainBytes.length}; start ${startOffset}; index ${index.length}`;
          const indexLess = plan.indexFlags === null;
          for (const engine of engines) {
            const partition = await scanWith(dir, engine, { windowBytes });
            const segment = partition.segments[0]!;
            const at = `${engine.kind} w=${windowBytes}: ${where}`;
            expect(segment.walkedSize, at).toBe(chainBytes.length);
            expect(segment.endOffset, at).toBe(chainEnd);
            expect(segment.refusal, at).toBeNull();
            expect(segment.gaps, at).toEqual([]);
            if (residue.length === 0) {
              expect(segment.outcome, at).toBe("clean");
              expect(segment.residue, at).toBeNull();
              expect(partition.verdict, at).toBe(indexLess ? "repairable" : "clean"); // index-less: the index is rebuilt
            } else {
              expect(segment.outcome, at).toBe("torn-tail");
              expect(segment.residue, at).toMatchObject({
                damagePosition: chainBytes.length,
                bytes: residue.length,
                allZero: isAllZero(residue),
                probe: "no-survivor",
                survivorPosition: null,
              });
              expect(partition.verdict, at).toBe("repairable");
              expect(partition.action, at).toBe("repair");
            }
            expect(segment.index.rebuilt, at).toBe(indexLess);
            expectMatchesReference(partition, [{ startOffset, log, index }], partition.budget.limitUnits, at);
          }
          cleanUp();
        },
      ),
      runParameters(0x7a11, 120),
    );
  });

  const tailJunkArb = fc.oneof(
    fc.constant<{ kind: "none" }>({ kind: "none" }),
    fc.record({ kind: fc.constant<"zeros">("zeros"), length: fc.integer({ min: 1, max: 60_000 }) }),
    fc.record({ kind: fc.constant<"random">("random"), length: fc.integer({ min: 1, max: 20_000 }), seed: fc.nat() }),
  );
  const segmentPlanArb = fc.record({
    chain: chainPlanArb({ allowEmpty: false, maxPayload: 1200, minBatches: 2, maxBatches: 8 }),
    damage: fc.option(damageArb, { nil: null }),
    afterLastEntry: fc.boolean(),
    // The last batch itself: a flipped byte or a cut inside it (in a segment that is not the last, damage inside the log).
    lastBatch: fc.oneof(
      { arbitrary: fc.constant<{ kind: "intact" }>({ kind: "intact" }), weight: 3 },
      fc.record({ kind: fc.constantFrom<"flip" | "cut">("flip", "cut"), at: fc.nat() }),
    ),
    tail: tailJunkArb,
  });
  const budgetArb = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant<"random">("random"), units: fc.integer({ min: 0, max: 50_000 }) }), weight: 2 },
    { arbitrary: fc.record({ kind: fc.constant<"edge">("edge"), pick: fc.nat() }), weight: 2 },
    { arbitrary: fc.constant<{ kind: "default" }>({ kind: "default" }), weight: 1 },
  );

  it("3. reports are identical across window sizes and engines, even where a small budget runs out", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(segmentPlanArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom<bigint | "ends-at-u64-max">(0n, 2n ** 53n - 3n, "ends-at-u64-max"),
        budgetArb,
        fc.constantFrom<VerifyMode>("tail", "tail", "tail", "full"),
        async (segmentPlans, firstStart, budget, verify) => {
          const dir = freshPartition();
          const written: WrittenSegment[] = [];
          const descriptions: string[] = [];
          // "ends-at-u64-max": the last segment's chain ends exactly at u64::MAX (nothing can extend it).
          const messages = segmentPlans.reduce((sum, plan) => sum + plan.chain.counts.reduce((a, b) => a + b, 0), 0);
          let startOffset = firstStart === "ends-at-u64-max" ? U64_MAX + 1n - BigInt(messages) : firstStart;
          for (const plan of segmentPlans) {
            const chain = build(plan.chain, startOffset);
            const index = planIndex(plan.chain, chain);
            let log = chain.log;
            let description = "intact";
            const lastIndexed =
              index.length > 0 ? chain.batches.find((batch) => BigInt(batch.position) === index[index.length - 1]!.position)! : null;
            const notBefore = plan.afterLastEntry && lastIndexed ? lastIndexed.position + lastIndexed.length : 0;
            if (plan.damage) ({ log, description } = resolveDamage(chain, plan.damage, notBefore));
            if (plan.lastBatch.kind !== "intact") {
              const last = chain.batches[chain.batches.length - 1]!;
              const end = log.length - (chain.log.length - last.position - last.length);
              const start = end - last.length;
              const at = start + (plan.lastBatch.at % last.length);
              if (plan.lastBatch.kind === "flip") {
                log = log.slice();
                log[at]! ^= 0x20;
              } else {
                log = log.slice(0, at);
              }
              description += `, last batch ${plan.lastBatch.kind} at ${at}`;
            }
            if (plan.tail.kind === "zeros") log = concat([log, new Uint8Array(plan.tail.length)]);
            if (plan.tail.kind === "random") log = concat([log, randomBytes(plan.tail.length, plan.tail.seed)]);
            writeSegment(dir, startOffset, log, plan.chain.indexFlags === null ? undefined : index);
            written.push({ startOffset, log, index });
            descriptions.push(`[${startOffset}: ${description}, tail ${plan.tail.kind}, index ${index.length}]`);
            startOffset = chain.nextOffset;
          }
          // Edge budgets: just before, at and just after the running totals at each probe's start and end.
          let probeBudgetUnits: number | undefined;
          if (budget.kind === "random") probeBudgetUnits = budget.units;
          if (budget.kind === "edge") {
            // A limit one below a probe's final total makes its last candidate the one whose
            // unit crosses the limit (for a survivor: the next probe then starts over the limit).
            const edges: number[] = [0];
            let spent = 0;
            for (const segment of written) {
              const ref = refSegment(segment.log, segment.startOffset, segment.index, spent, Number.MAX_SAFE_INTEGER);
              if (!ref.probe) continue;
              edges.push(spent, spent + 1, ref.probe.spentTotal - 1, ref.probe.spentTotal - 1, ref.probe.spentTotal);
              spent = ref.probe.spentTotal;
            }
            probeBudgetUnits = Math.max(0, edges[budget.pick % edges.length]!);
          }
          const where = `${verify}: ${descriptions.join(" ")} budget ${probeBudgetUnits ?? "default"}`;
          const reports = await scanEveryWay(dir, verify, probeBudgetUnits);
          const [first, ...others] = reports;
          for (const other of others) {
            expect(strip(other.partition), `${other.label} vs ${first!.label}: ${where}`).toEqual(strip(first!.partition));
          }
          if (verify === "tail")
            for (const report of reports) {
              expectMatchesReference(report.partition, written, report.partition.budget.limitUnits, `${report.label}: ${where}`);
            }
          cleanUp();
        },
      ),
      runParameters(0x3b1d9e, 150),
    );
  });

  it("4. deep mode agrees with tail mode on an undamaged chain with a valid index", async () => {
    const comparedFields = ["startOffset", "endOffset", "startTimestamp", "endTimestamp", "outcome", "walkedSize", "refusal"] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // Empty batches too: an index entry may point at one (docs/recovery.md §3.2 step 4 covers it).
            chain: chainPlanArb({ allowEmpty: true, minBatches: 1 }),
            // A valid index: at least one entry, on batch starts, strictly ascending, batch 0 optional.
            entries: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
            skipFirst: fc.boolean(),
          }),
          { minLength: 1, maxLength: 2 },
        ),
        startOffsetArb,
        fc.constantFrom(...WINDOWS),
        async (segmentPlans, firstStart, windowBytes) => {
          const dir = freshPartition();
          let startOffset = firstStart > U64_MAX - 1000n ? U64_MAX - 1000n : firstStart;
          const layout: string[] = [];
          for (const plan of segmentPlans) {
            // Every segment holds at least one message, so the next one starts higher.
            const counts = plan.chain.counts.every((count) => count === 0) ? [...plan.chain.counts.slice(0, -1), 1] : plan.chain.counts;
            const chain = build({ ...plan.chain, counts }, startOffset);
            const chosen: number[] = [];
            chain.batches.forEach((batch, i) => {
              const wanted = i === 0 ? !plan.skipFirst : plan.entries[(i - 1) % 12];
              const previous = chosen.length > 0 ? chain.batches[chosen[chosen.length - 1]!]!.baseOffset : -1n;
              if (wanted && batch.baseOffset > previous) chosen.push(i); // offsets strictly ascend
            });
            if (chosen.length === 0) chosen.push(chain.batches.length - 1);
            writeSegment(dir, startOffset, chain.log, indexAt(chain, chosen));
            layout.push(`[${startOffset}: counts ${counts.join(",")} index on ${chosen.join(",")}]`);
            startOffset = chain.nextOffset;
          }
          for (const engine of engines) {
            const tail = await scanWith(dir, engine, { windowBytes });
            const deep = await scanWith(dir, engine, { windowBytes, verify: "full" });
            const where = `${engine.kind} w=${windowBytes}: ${layout.join(" ")}`;
            deep.segments.forEach((segment: SegmentReport, i) => {
              const tailSegment = tail.segments[i]!;
              for (const field of comparedFields)
                expect(tailSegment[field], `${where}: segment ${i} ${field}, tail vs deep`).toEqual(segment[field]);
              expect(segment.index, `${where} segment ${i}`).toMatchObject({ mismatches: 0, rebuilt: false });
              expect(segment.outcome, where).toBe("clean");
            });
            expect(deep.verdict, where).toBe("clean");
            expect(tail.verdict, `${where}: ${tail.refusal?.message ?? ""}`).toBe("clean");
          }
          cleanUp();
        },
      ),
      runParameters(0xdee9, 80),
    );
  });
});

describe("scope of loss properties (docs/recovery.md §3.7)", () => {
  /** One hit on a batch: a bit flip, a zeroed run, or random bytes inserted after it. */
  const hitArb = fc.record({
    kind: fc.constantFrom("flip", "zero", "insert"),
    batch: fc.nat(),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 600 }),
    seed: fc.nat(),
  });
  const indexArb = fc.constantFrom("none", "first", "every-third");
  const junkArb = fc.oneof(
    fc.constant<{ kind: "none" }>({ kind: "none" }),
    fc.record({ kind: fc.constant<"zeros">("zeros"), length: fc.integer({ min: 1, max: 20_000 }) }),
    fc.record({ kind: fc.constant<"random">("random"), length: fc.integer({ min: 1, max: 5_000 }), seed: fc.nat() }),
  );
  const scopeBudgetArb = fc.oneof(
    { arbitrary: fc.constant<number | undefined>(undefined), weight: 3 },
    { arbitrary: fc.integer({ min: 0, max: 20_000 }), weight: 1 },
  );

  it("5. random damage gives the same scope on every engine and window size, and the reference model's (tail mode)", async () => {
    await fc.assert(
      fc.asyncProperty(
        chainPlanArb({ allowEmpty: true, maxPayload: 800, minBatches: 3, maxBatches: 14 }),
        fc.constantFrom(0n, 1000n, 2n ** 53n - 3n, U64_MAX - 600n),
        fc.array(hitArb, { minLength: 1, maxLength: 4 }),
        indexArb,
        junkArb,
        scopeBudgetArb,
        fc.constantFrom<VerifyMode>("tail", "tail", "full"),
        async (plan, startOffset, hits, indexKind, tail, probeBudgetUnits, verify) => {
          const chain = build(plan, startOffset);
          // Damage any batch but the last (which stays a survivor), several at once.
          const pieces: Uint8Array[] = [];
          const positions: number[] = [];
          let position = 0;
          const described: string[] = [];
          chain.batches.forEach((batch, i) => {
            let bytes: Uint8Array = chain.log.slice(batch.position, batch.position + batch.length);
            let inserted: Uint8Array = new Uint8Array(0);
            for (const hit of hits.filter((h) => h.batch % Math.max(1, chain.batches.length - 1) === i && i < chain.batches.length - 1)) {
              const at = hit.at % bytes.length;
              if (hit.kind === "flip") bytes[at]! ^= 1 << (hit.seed % 8);
              if (hit.kind === "zero")
                bytes = concat([
                  bytes.subarray(0, at),
                  new Uint8Array(Math.min(hit.length, bytes.length - at)),
                  bytes.subarray(at + Math.min(hit.length, bytes.length - at)),
                ]);
              if (hit.kind === "insert") inserted = concat([inserted, randomBytes(hit.length, hit.seed)]);
              described.push(`${hit.kind} batch ${i} at ${at}`);
            }
            positions.push(position);
            pieces.push(bytes, inserted);
            position += bytes.length + inserted.length;
          });
          if (tail.kind === "zeros") pieces.push(new Uint8Array(tail.length));
          if (tail.kind === "random") pieces.push(randomBytes(tail.length, tail.seed));
          const log = concat(pieces);
          const chosen =
            indexKind === "none" ? [] : chain.batches.map((_, i) => i).filter((i) => (indexKind === "first" ? i === 0 : i % 3 === 0));
          const index: IndexEntry[] = [];
          for (const i of chosen) {
            const batch = chain.batches[i]!;
            if (index.length > 0 && batch.baseOffset <= index[index.length - 1]!.offset) continue; // entries strictly ascend
            index.push({ offset: batch.baseOffset, timestamp: batch.baseTimestamp, position: BigInt(positions[i]!) });
          }
          const dir = freshPartition();
          writeSegment(dir, startOffset, log, indexKind === "none" ? undefined : index);
          const where = `${verify} ${described.join(", ")}; index ${indexKind}; tail ${tail.kind}; budget ${probeBudgetUnits ?? "default"}`;
          const reports = await scanEveryWay(dir, verify, probeBudgetUnits);
          const [first, ...others] = reports;
          for (const other of others) {
            expect(other.partition.segments[0]!.scope, `${other.label} vs ${first!.label}: ${where}`).toEqual(
              first!.partition.segments[0]!.scope,
            );
            expect(strip(other.partition), `${other.label} vs ${first!.label}: ${where}`).toEqual(strip(first!.partition));
          }
          const segment = first!.partition.segments[0]!;
          expectScopeTiles(segment, false, where);
          expect(segment.scope.length, where).toBeLessThanOrEqual(32);
          if (verify === "tail") {
            expectMatchesReference(
              first!.partition,
              [{ startOffset, log, index }],
              first!.partition.budget.limitUnits,
              `${first!.label}: ${where}`,
            );
          }
          cleanUp();
        },
      ),
      runParameters(0x5c09e, 100),
    );
  });
});

/** Minimal reproductions of what the properties above found, kept as fixed examples. */
describe("regressions found by the properties", () => {
  it("a probe that starts with the shared budget already overspent stops at its first candidate and charges it (docs/recovery.md §3.5)", async () => {
    // Segment 0: one garbage byte between its two batches. With a limit of 0 the very first
    // candidate is the intact batch: a survivor, found while taking the spend to 1 > 0.
    // Segment 1: a clean batch and a 4 KiB zero tail; its probe starts over the limit.
    const dir = freshPartition();
    const a = buildChain({ counts: [3, 4] });
    const cut = a.batches[1]!.position;
    writeSegment(dir, 0n, concat([a.log.subarray(0, cut), Uint8Array.of(0xab), a.log.subarray(cut)]));
    const b = buildChain({ counts: [2], startOffset: 7n, seed: 5 });
    writeSegment(dir, 7n, concat([b.log, new Uint8Array(4096)]));
    // Segment 0 of a second partition: its budget runs out on a candidate that passes the
    // cheap checks but fails verification, so the spend jumps far past the limit.
    const dir2 = freshPartition();
    const c = buildChain({ counts: [1, 1] });
    const corrupt = c.log.slice(c.batches[1]!.position);
    corrupt[corrupt.length - 1]! ^= 1;
    writeSegment(dir2, 0n, concat([c.log.subarray(0, c.batches[1]!.position), Uint8Array.of(7), corrupt]));
    const d = buildChain({ counts: [1], startOffset: 1n, seed: 5 });
    writeSegment(dir2, 1n, concat([d.log, new Uint8Array(257)]));
    for (const engine of engines) {
      for (const windowBytes of WINDOWS) {
        const first = await scanWith(dir, engine, { windowBytes, probeBudgetUnits: 0 });
        expect(first.segments[0]!.refusal).toMatchObject({ code: "InteriorDamage", damagePosition: cut, survivorPosition: cut + 1 });
        expect(first.segments[1]!.residue).toMatchObject({ probe: "budget-exhausted", spentUnits: 1 });
        expect(first.segments[1]!.refusal).toMatchObject({
          code: "UnverifiedResidue",
          damagePosition: b.log.length,
          stoppedAt: b.log.length + 1,
          spentUnits: 2,
        });
        expect(first.budget).toEqual({ limitUnits: 0, spentUnits: 2 });

        const second = await scanWith(dir2, engine, { windowBytes, probeBudgetUnits: 0 });
        const overspent = 1 + corrupt.length;
        expect(second.segments[0]!.refusal).toMatchObject({
          code: "UnverifiedResidue",
          stoppedAt: c.batches[1]!.position + 1,
          spentUnits: overspent,
        });
        expect(second.segments[1]!.refusal).toMatchObject({
          code: "UnverifiedResidue",
          stoppedAt: d.log.length + 1,
          spentUnits: overspent + 1,
        });
        expect(second.budget.spentUnits).toBe(overspent + 1);
      }
    }
    cleanUp();
  });

  it("tail mode's end bound when the last index entry sits on an empty batch agrees with deep mode (docs/recovery.md §3.2)", async () => {
    // Segment 40 holds offsets 40..42 and then an empty batch (base offset 43); its index has
    // an entry on each. Segment 43 follows. Deep mode proves end 42; tail mode must not claim
    // 43 (an offset the segment does not hold), which makes segment 43 look like an Overlap.
    const dir = freshPartition();
    const a = buildChain({ counts: [3, 0], startOffset: 40n });
    writeSegment(dir, 40n, a.log, indexAt(a, [0, 1]));
    const b = buildChain({ counts: [2], startOffset: 43n, seed: 7 });
    writeSegment(dir, 43n, b.log, indexAt(b, [0]));
    for (const engine of engines) {
      const deep = await scanWith(dir, engine, { verify: "full" });
      expect(deep.verdict).toBe("clean");
      expect(deep.segments[0]).toMatchObject({ endOffset: 42n, endTimestamp: a.batches[0]!.baseTimestamp });
      const tail = await scanWith(dir, engine, {});
      expect(tail.segments[0]!.endOffset).toBe(42n);
      expect(tail.segments[0]!.endTimestamp).toBe(deep.segments[0]!.endTimestamp);
      expect(tail.refusal).toBeNull();
      expect(tail.verdict).toBe("clean");
    }
    cleanUp();
  });
});
