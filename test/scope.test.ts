/**
 * The scope of loss (docs/recovery.md §3.7) and the next step (docs/repair.md §6.4)
 * on generated fault scenarios: every range exact
 * against the generated layout (which batches the fault changed, found by
 * comparing with an unfaulted twin), on both engines, tail and deep mode; the
 * next step for every verdict and action, the same words in the text report
 * and the JSON.
 */
import { readFile, rm } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { SCENARIOS, type SegmentLayout, generateDataDir } from "../src/gen/index.js";
import type { NodeFinding } from "../src/domain/node.js";
import type { PartitionReport, PartitionScopeRange, PartitionVerdict, Refusal, SegmentScopeRange, VerifyMode } from "../src/domain/scan.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import {
  NODE_CODES_WITH_NEXT_STEPS,
  type NextStepInput,
  nodeFindingNext,
  nodeFindingNextStep,
  offsetsText,
  partitionNext,
  partitionNextStep,
} from "../src/policy/next-step.js";
import { decideAction } from "../src/policy/policy.js";
import { shellQuote } from "../src/domain/command.js";
import { scanPartition } from "../src/node/scan-path.js";
import { MAX_SCOPE_RANGES_PER_SEGMENT } from "../src/recovery/scope.js";
import { scanPath } from "../src/node/scan-path.js";
import { formatPartition, formatReport } from "../src/report/format.js";
import { partitionToJson, toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { allEngines } from "./helpers/engines.js";
import { type ScenarioPair, generateScenarioPairs } from "./helpers/scenario-pairs.js";
import { buildChain, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { formatCount } from "../src/domain/numbers.js";

let engines: Engine[] = [];
let root: string;
let samples = new Map<string, ScenarioPair>();

/** The scenarios this file reads, each generated with and without its fault (same seed, so the same bytes elsewhere). */
const USED = [
  "length-bitflip",
  "payload-bitflip",
  "two-damaged-ranges",
  "crafted-residue",
  "zero-tail",
  "torn-tail",
  "last-batch-bitflip",
  "sealed-last-batch-bitflip",
  "buried-bitflip",
  "hole",
  "empty-non-tail",
  "overlap",
];

beforeAll(async () => {
  engines = await allEngines();
  root = await mkdtemp(join(tmpdir(), "segscan-scope-"));
  samples = await generateScenarioPairs(root, USED);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** The first partition (the faulted one) of a scenario, scanned. */
async function scanFirst(name: string, engine: Engine, verify: VerifyMode = "tail", replicaCount = 1): Promise<PartitionReport> {
  const sample = samples.get(name)!;
  const report = await scanPartition(sample.faulty.partitions[0]!.path, { engine, verify, replicaCount });
  return report.partitions[0]!;
}

/** Indexes of the segment's batches whose bytes the fault changed. */
async function damagedBatches(name: string, segmentIndex: number): Promise<number[]> {
  const { faulty, base } = samples.get(name)!;
  const segment = base.partitions[0]!.segments[segmentIndex]!;
  const [before, after] = await Promise.all([readFile(segment.logPath), readFile(faulty.partitions[0]!.segments[segmentIndex]!.logPath)]);
  return segment.batches.flatMap((batch, i) =>
    before.subarray(batch.position, batch.position + batch.length).equals(after.subarray(batch.position, batch.position + batch.length))
      ? []
      : [i],
  );
}

type Tuple = [kind: string, first: string | null, last: string | null, messages: number | null, start?: number, end?: number];

const tuple = (range: SegmentScopeRange): Tuple => [
  range.kind,
  range.firstOffset?.toString() ?? null,
  range.lastOffset?.toString() ?? null,
  range.messages,
  range.startPosition,
  range.endPosition,
];
const partitionTuple = (range: PartitionScopeRange): Tuple => [
  range.kind,
  range.firstOffset?.toString() ?? null,
  range.lastOffset?.toString() ?? null,
  range.messages,
];

const lastOf = (segment: SegmentLayout, i: number): bigint =>
  segment.batches[i]!.baseOffset + BigInt(segment.batches[i]!.messageCount) - 1n;
const messagesOf = (segment: SegmentLayout, from: number, to: number): number =>
  segment.batches.slice(from, to).reduce((sum, batch) => sum + batch.messageCount, 0);
const endOf = (segment: SegmentLayout, i: number): number => segment.batches[i]!.position + segment.batches[i]!.length;

/**
 * The segment ranges a layout predicts for damaged batches `damaged` (each
 * followed by an intact one): proven up to the first, then unreadable (the
 * damaged batch's offsets) and intact (to the next damage or the end).
 * `provenMessages`: the proven prefix's count, when the walk counted it.
 */
function expectedSegmentScope(segment: SegmentLayout, damaged: readonly number[], provenMessages: boolean): Tuple[] {
  const first = damaged[0]!;
  const ranges: Tuple[] = [
    [
      "proven",
      segment.startOffset.toString(),
      (segment.batches[first]!.baseOffset - 1n).toString(),
      provenMessages ? messagesOf(segment, 0, first) : null,
      0,
      segment.batches[first]!.position,
    ],
  ];
  damaged.forEach((k, i) => {
    const next = damaged[i + 1] ?? segment.batches.length;
    ranges.push([
      "unreadable",
      segment.batches[k]!.baseOffset.toString(),
      lastOf(segment, k).toString(),
      segment.batches[k]!.messageCount,
      segment.batches[k]!.position,
      endOf(segment, k),
    ]);
    ranges.push([
      "intact",
      segment.batches[k + 1]!.baseOffset.toString(),
      lastOf(segment, next - 1).toString(),
      messagesOf(segment, k + 1, next),
      segment.batches[k + 1]!.position,
      next === segment.batches.length ? segment.size : segment.batches[next]!.position,
    ]);
  });
  return ranges;
}

describe("scope of loss: interior damage with survivors", () => {
  it("length-bitflip (tail segment): proven, unreadable and intact ranges exact, on both engines, tail and deep", async () => {
    const layout = samples.get("length-bitflip")!.base.partitions[0]!;
    const tailIndex = layout.segments.length - 1;
    const segment = layout.segments[tailIndex]!;
    const damaged = await damagedBatches("length-bitflip", tailIndex);
    expect(damaged).toHaveLength(1);
    const k = damaged[0]!;
    const partitionEnd = segment.endOffset.toString();
    for (const engine of engines) {
      for (const verify of ["tail", "full"] as const) {
        const partition = await scanFirst("length-bitflip", engine, verify);
        const where = `${engine.kind} ${verify}`;
        const scanned = partition.segments[tailIndex]!;
        expect(scanned.refusal?.code, where).toBe("InteriorDamage");
        expect(scanned.scope.map(tuple), where).toEqual(expectedSegmentScope(segment, damaged, verify === "full"));
        // The partition's proven range runs from its first offset; the intact one to its end.
        const provenLast = (segment.batches[k]!.baseOffset - 1n).toString();
        expect(partition.scope.map(partitionTuple), where).toEqual([
          ["proven", "0", provenLast, verify === "full" ? Number(segment.batches[k]!.baseOffset) : null],
          ["unreadable", segment.batches[k]!.baseOffset.toString(), lastOf(segment, k).toString(), segment.batches[k]!.messageCount],
          ["intact", segment.batches[k + 1]!.baseOffset.toString(), partitionEnd, messagesOf(segment, k + 1, segment.batches.length)],
        ]);
        const unreadable = offsetsText({ firstOffset: segment.batches[k]!.baseOffset, lastOffset: lastOf(segment, k) });
        expect(partition.nextStep, where).toBe(
          `salvage: ${shellQuote(["segscan", "salvage", partition.path, "--apply"])} keeps 0..${provenLast} and ${segment.batches[k + 1]!.baseOffset}..${partitionEnd} ` +
            `and records ${unreadable} as lost (what it drops is preserved first; segscan restore undoes it); or restore the partition from a backup`,
        );
        // The batch_length flip leaves a header over the cap: its bytes do not decode, whatever caused it.
        expect(scanned.residue?.tornEvidence, where).toBe("unverifiable");
      }
    }
  });

  it("with replicas, the refused partition is rebuilt from a replica and the line says what this copy proves", async () => {
    const layout = samples.get("length-bitflip")!.base.partitions[0]!;
    const segment = layout.segments[layout.segments.length - 1]!;
    const k = (await damagedBatches("length-bitflip", layout.segments.length - 1))[0]!;
    const partition = await scanFirst("length-bitflip", engines[0]!, "tail", 3);
    expect(partition.action).toBe("rebuild-from-peers");
    expect(partition.nextStep).toBe(
      `if a peer holds ${offsetsText({ firstOffset: segment.batches[k]!.baseOffset, lastOffset: lastOf(segment, k) })} (check with \`segscan fleet\`), ` +
        `rebuild this partition from it, else restore it from a backup: segscan proves 0..${segment.batches[k]!.baseOffset - 1n} here ` +
        `(and ${segment.batches[k + 1]!.baseOffset}..${segment.endOffset} after the damage)`,
    );
  });

  it("two damaged ranges in one segment: five ranges, each exact with its message count", async () => {
    const layout = samples.get("two-damaged-ranges")!.base.partitions[0]!;
    const tailIndex = layout.segments.length - 1;
    const segment = layout.segments[tailIndex]!;
    const damaged = await damagedBatches("two-damaged-ranges", tailIndex);
    expect(damaged).toHaveLength(2);
    expect(damaged[1]! - damaged[0]!).toBeGreaterThanOrEqual(2);
    for (const engine of engines) {
      for (const verify of ["tail", "full"] as const) {
        const partition = await scanFirst("two-damaged-ranges", engine, verify);
        const scanned = partition.segments[tailIndex]!;
        // The index keeps only its entry at byte 0, so tail mode walks the whole log and counts the proven prefix too.
        const expected = expectedSegmentScope(segment, damaged, true);
        expect(scanned.scope.map(tuple), `${engine.kind} ${verify}`).toEqual(expected);
        expect(scanned.scope.map((range) => range.kind)).toEqual(["proven", "unreadable", "intact", "unreadable", "intact"]);
        const [a, b] = damaged as [number, number];
        const lost = [a, b].map((i) => offsetsText({ firstOffset: segment.batches[i]!.baseOffset, lastOffset: lastOf(segment, i) }));
        expect(partition.nextStep).toContain(`and records ${lost[0]} and ${lost[1]} as lost`);
      }
    }
    const text = formatPartition(await scanFirst("two-damaged-ranges", engines[0]!));
    const [a, b] = damaged as [number, number];
    expect(text).toMatch(
      new RegExp(
        `scope: proven \\S+ \\(${messagesOf(segment, 0, a)} msgs, [^)]*\\) · unreadable ${segment.batches[a]!.baseOffset}\\.\\.${lastOf(segment, a)} \\(≤${segment.batches[a]!.messageCount} msgs?, [^)]*\\) · intact [^·]* · unreadable ${segment.batches[b]!.baseOffset}\\.\\.`,
      ),
    );
  });

  it("a damaged non-tail segment: its intact range runs to its end, and the partition's continues through the next segments", async () => {
    const layout = samples.get("payload-bitflip")!.base.partitions[0]!;
    const segment = layout.segments[1]!;
    const damaged = await damagedBatches("payload-bitflip", 1);
    expect(damaged).toHaveLength(1);
    const k = damaged[0]!;
    const last = layout.segments[layout.segments.length - 1]!;
    for (const engine of engines) {
      for (const verify of ["tail", "full"] as const) {
        const partition = await scanFirst("payload-bitflip", engine, verify);
        const where = `${engine.kind} ${verify}`;
        expect(partition.segments[1]!.scope.map(tuple), where).toEqual(expectedSegmentScope(segment, damaged, verify === "full"));
        // Later segments stay clean (proven only); in the partition they are intact: they come after the damage.
        expect(
          partition.segments[2]!.scope.map((range) => range.kind),
          where,
        ).toEqual(["proven"]);
        const afterMessages =
          messagesOf(segment, k + 1, segment.batches.length) + layout.segments.slice(2).reduce((sum, s) => sum + s.messages, 0);
        expect(partition.scope.map(partitionTuple), where).toEqual([
          [
            "proven",
            "0",
            (segment.batches[k]!.baseOffset - 1n).toString(),
            verify === "full" ? Number(segment.batches[k]!.baseOffset) : null,
          ],
          ["unreadable", segment.batches[k]!.baseOffset.toString(), lastOf(segment, k).toString(), segment.batches[k]!.messageCount],
          ["intact", segment.batches[k + 1]!.baseOffset.toString(), last.endOffset.toString(), verify === "full" ? afterMessages : null],
        ]);
      }
    }
  });
});

describe("scope of loss: damage with no survivor, and torn tails", () => {
  it("an unverified residue: the unreadable range starts at the chain's next offset and its end is unknown", async () => {
    const layout = samples.get("crafted-residue")!.base.partitions[0]!;
    const tail = layout.segments[layout.segments.length - 1]!;
    for (const engine of engines) {
      const partition = await scanFirst("crafted-residue", engine);
      const scanned = partition.segments[layout.segments.length - 1]!;
      expect(scanned.refusal?.code).toBe("UnverifiedResidue");
      expect(scanned.scope.map(tuple)).toEqual([
        ["proven", tail.startOffset.toString(), tail.endOffset.toString(), null, 0, tail.size],
        ["unreadable", (tail.endOffset + 1n).toString(), null, null, tail.size, scanned.messagesSize],
      ]);
      const text = formatPartition(partition);
      expect(text).toContain(`unreadable ${tail.endOffset + 1n}..unknown (64.0 MiB)`);
      expect(partition.nextStep).toMatch(
        /^scan again with a larger probe budget: segscan scan \S+ --probe-budget \d+; the probe stopped at byte [\d,]+ of segment \d+/,
      );
      expect(partition.nextStep).toContain(`segscan proves 0..${tail.endOffset} here`);
    }
  });

  it("a zero tail: the cut's offsets are unknown (no header decodes), its bytes zero-filled: under the crash model, never acknowledged", async () => {
    const layout = samples.get("zero-tail")!.base.partitions[0]!;
    const tail = layout.segments[layout.segments.length - 1]!;
    const partition = await scanFirst("zero-tail", engines[0]!);
    const scanned = partition.segments[layout.segments.length - 1]!;
    expect(scanned.residue?.tornEvidence).toBe("zero-filled");
    expect(scanned.scope[1]).toMatchObject({
      kind: "torn",
      firstOffset: null,
      lastOffset: null,
      messages: null,
      tornEvidence: "zero-filled",
    });
    expect(scanned.scope[1]!.startPosition).toBe(tail.size);
    const text = formatPartition(partition);
    expect(text).toContain(
      "torn tail (4 MiB): its header does not decode, so its offsets are unknown; all zero, never written: under the crash model (a completed fsync leaves no zeros), never fsynced, so never acknowledged",
    );
    expect(partition.nextStep).toBe(
      `repair: ${shellQuote(["segscan", "repair", partition.path, "--apply"])} cuts 4,194,304 bytes of torn tail: under the crash model (a completed fsync leaves no zeros), never fsynced, so never acknowledged (what it cuts or replaces is preserved first; segscan restore undoes it)`,
    );
    expect(partition.nextCommand).toEqual(["segscan", "repair", partition.path, "--apply"]);
  });

  it("a tail cut mid-batch: the header claims the last batch's offsets, and a short batch, under the crash model, was never acknowledged", async () => {
    const layout = samples.get("torn-tail")!.base.partitions[0]!;
    const tail = layout.segments[layout.segments.length - 1]!;
    const lastBatch = tail.batches[tail.batches.length - 1]!;
    for (const engine of engines) {
      const partition = await scanFirst("torn-tail", engine);
      const scanned = partition.segments[layout.segments.length - 1]!;
      expect(scanned.residue?.tornEvidence).toBe("short-batch");
      expect(tuple(scanned.scope[1]!)).toEqual([
        "torn",
        lastBatch.baseOffset.toString(),
        tail.endOffset.toString(),
        lastBatch.messageCount,
        lastBatch.position,
        scanned.messagesSize,
      ]);
      expect(formatPartition(partition)).toContain(
        "a short last batch, the append never completed: under the crash model (a completed fsync leaves no short batch), never fsynced, so never acknowledged",
      );
    }
  });

  it("a bit flip in a complete last batch: cut as before, but not called never acknowledged", async () => {
    const layout = samples.get("last-batch-bitflip")!.base.partitions[0]!;
    const tail = layout.segments[layout.segments.length - 1]!;
    const lastBatch = tail.batches[tail.batches.length - 1]!;
    for (const engine of engines) {
      for (const replicas of [1, 3]) {
        const partition = await scanFirst("last-batch-bitflip", engine, "tail", replicas);
        const scanned = partition.segments[layout.segments.length - 1]!;
        expect(partition.verdict).toBe("repairable");
        expect(scanned.outcome).toBe("torn-tail");
        expect(scanned.walkedSize).toBe(lastBatch.position); // the cut stays where it was: the bytes are preserved by repair
        expect(scanned.residue?.tornEvidence).toBe("complete-batch");
        expect(scanned.scope[1]).toMatchObject({
          kind: "torn",
          firstOffset: lastBatch.baseOffset,
          lastOffset: tail.endOffset,
          messages: lastBatch.messageCount,
          tornEvidence: "complete-batch",
        });
        const text = formatPartition(partition);
        expect(text).toContain("segscan cannot tell a torn write from corruption of an acknowledged batch");
        expect(text).not.toContain("never acknowledged");
        const claimed = `offsets ${lastBatch.baseOffset}..${tail.endOffset}`;
        expect(partition.nextStep).toBe(
          replicas === 1
            ? `check a backup for ${claimed}, then repair: ${shellQuote(["segscan", "repair", partition.path, "--apply"])} cuts ${lastBatch.length.toLocaleString("en-US")} bytes ` +
                "(a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back)"
            : `repair: ${shellQuote(["segscan", "repair", partition.path, "--apply"])} cuts ${lastBatch.length.toLocaleString("en-US")} bytes ` +
                `(a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back); if a peer holds ${claimed} (check with \`segscan fleet\`), it re-supplies them`,
        );
      }
    }
  });
});

describe("the survivor walk's bounds (docs/recovery.md §3.7)", () => {
  it("a segment damaged every other batch lists at most MAX_SCOPE_RANGES_PER_SEGMENT ranges; the rest is one range of unknown end", async () => {
    const chain = buildChain({ counts: Array.from({ length: 40 }, () => 2), payloadBytes: 40 });
    const log = chain.log.slice();
    for (let i = 1; i < 39; i += 2) log[chain.batches[i]!.position + 256 + 60]! ^= 0x01; // a payload bit of every odd batch
    const dir = tempPartition();
    writeSegment(dir, 0n, log);
    for (const engine of engines) {
      const partition = (await scanPartition(dir, { engine })).partitions[0]!;
      const scope = partition.segments[0]!.scope;
      expect(scope).toHaveLength(MAX_SCOPE_RANGES_PER_SEGMENT);
      expect(scope.slice(0, 5).map(tuple)).toEqual([
        ["proven", "0", "1", 2, 0, chain.batches[1]!.position],
        ["unreadable", "2", "3", 2, chain.batches[1]!.position, chain.batches[2]!.position],
        ["intact", "4", "5", 2, chain.batches[2]!.position, chain.batches[3]!.position],
        ["unreadable", "6", "7", 2, chain.batches[3]!.position, chain.batches[4]!.position],
        ["intact", "8", "9", 2, chain.batches[4]!.position, chain.batches[5]!.position],
      ]);
      // Proven, then 15 unreadable/intact pairs, then the rest: unknown, from the chain's next offset.
      const rest = scope[scope.length - 1]!;
      expect(rest).toMatchObject({ kind: "unreadable", firstOffset: 62n, lastOffset: null, messages: null, endPosition: log.length });
      expect(rest.startPosition).toBe(chain.batches[31]!.position);
    }
  });

  it("the walk spends its own budget, never the probe's: a tight budget leaves the verdict as it was and the rest unknown", async () => {
    const chain = buildChain({ counts: [3, 3, 3, 3, 3, 3], payloadBytes: 200 });
    const log = chain.log.slice();
    log[chain.batches[1]!.position + 256 + 60]! ^= 0x01;
    const dir = tempPartition();
    writeSegment(dir, 0n, log);
    const survivor = chain.batches[2]!;
    // Enough units to find the survivor (one per candidate up to it), fewer than the bytes after it.
    const probeBudgetUnits = survivor.position - chain.batches[1]!.position + 10;
    for (const engine of engines) {
      const partition = (await scanPartition(dir, { engine, probeBudgetUnits })).partitions[0]!;
      const segment = partition.segments[0]!;
      expect(segment.refusal?.code).toBe("InteriorDamage");
      expect(partition.budget.spentUnits).toBe(survivor.position - chain.batches[1]!.position);
      const intact = segment.scope[2]!;
      expect(intact).toMatchObject({ kind: "intact", firstOffset: 6n, startPosition: survivor.position });
      // The walk takes batches that start within its budget (the survivor always), then says "unknown".
      expect(intact.endPosition).toBeLessThan(log.length);
      expect(segment.scope[3]).toMatchObject({ kind: "unreadable", lastOffset: null, endPosition: log.length });
    }
  });
});

describe("scan --deep on a refused segment", () => {
  it("index entries past the damage are the damage's doing: no index rebuild and no mismatch reported, only the scope", async () => {
    const layout = samples.get("buried-bitflip")!.base.partitions[0]!;
    const tailIndex = layout.segments.length - 1;
    for (const engine of engines) {
      const partition = await scanFirst("buried-bitflip", engine, "full");
      const scanned = partition.segments[tailIndex]!;
      expect(scanned.refusal?.code).toBe("InteriorDamage");
      expect(scanned.index).toMatchObject({ rebuilt: false, rebuiltEntries: 0, mismatches: 0 });
      expect(scanned.rebuiltIndex).toBeNull();
      expect(scanned.scope.map((range) => range.kind)).toEqual(["proven", "unreadable", "intact"]);
      expect(scanned.scope[2]!.endPosition).toBe(layout.segments[tailIndex]!.size);
      const text = formatPartition(partition);
      expect(text).not.toContain("index to rebuild");
      expect(text).not.toContain("do not sit on a verified batch");
    }
  });
});

describe("scope of loss across segments: missing offsets and overlaps", () => {
  it("damage in the last batch of a middle segment: a Hole whose bytes are there, unreadable, not offsets missing with no bytes", async () => {
    const sample = samples.get("sealed-last-batch-bitflip")!;
    const layout = sample.base.partitions[0]!;
    const [, middle, ...rest] = layout.segments as [SegmentLayout, SegmentLayout, ...SegmentLayout[]];
    const last = middle.batches.at(-1)!;
    const end = rest[rest.length - 1]!.endOffset;
    const [middleLog, nextLog] = [basename(middle.logPath), basename(rest[0]!.logPath)];
    for (const verify of ["tail", "full"] as const) {
      let first: PartitionReport | null = null;
      for (const engine of engines) {
        for (const windowBytes of [4096, 1 << 20]) {
          const where = `${engine.kind} ${verify} w=${windowBytes}`;
          const partition = (await scanPartition(sample.faulty.partitions[0]!.path, { engine, verify, windowBytes })).partitions[0]!;
          // Both engines, any window: the same report.
          if (first === null) first = partition;
          else expect({ ...partition, bytesScanned: 0 }, where).toEqual({ ...first, bytesScanned: 0 });
          expect(partition.segments[1]!, where).toMatchObject({ outcome: "torn-tail", refusal: null });
          expect(partition.refusal, where).toEqual({
            code: "Hole",
            previousStart: middle.startOffset,
            previousEnd: last.baseOffset - 1n,
            nextStart: rest[0]!.startOffset,
            message:
              `segment ${rest[0]!.startOffset} (${nextLog}) starts above ${last.baseOffset - 1n} + 1, the end of segment ${middle.startOffset} (${middleLog}): ` +
              `offsets ${last.baseOffset}..${middle.endOffset} are missing from the chain; their bytes are present in the ${formatCount(middle.size - last.position)} ` +
              `bytes from byte ${formatCount(last.position)} of ${middleLog} (a complete last batch whose checksum fails) but do not verify, so this is damage ` +
              "at the end of a segment that is not the last, not a torn tail of the log, and nothing was cut",
          });
          expect(partition.segments[1]!.scope.map(tuple), where).toEqual([
            [
              "proven",
              middle.startOffset.toString(),
              (last.baseOffset - 1n).toString(),
              verify === "full" ? middle.messages - last.messageCount : null,
              0,
              last.position,
            ],
            ["unreadable", last.baseOffset.toString(), middle.endOffset.toString(), last.messageCount, last.position, middle.size],
          ]);
          expect(partition.scope.map(partitionTuple), where).toEqual([
            ["proven", "0", (last.baseOffset - 1n).toString(), verify === "full" ? Number(last.baseOffset) : null],
            ["unreadable", last.baseOffset.toString(), middle.endOffset.toString(), last.messageCount],
            ["intact", rest[0]!.startOffset.toString(), end.toString(), verify === "full" ? Number(end - rest[0]!.startOffset + 1n) : null],
          ]);
          const text = formatPartition(partition);
          expect(text, where).toContain(`no survivor in this file; segment ${rest[0]!.startOffset} follows`);
          expect(text, where).not.toMatch(/torn tail \(|missing \d|no bytes|cut at/);
          expect(partition.nextStep, where).toBe(
            `restore this partition from a backup: segscan proves 0..${last.baseOffset - 1n} here (and ${rest[0]!.startOffset}..${end} after the damage), ` +
              `${last.baseOffset}..${middle.endOffset} cannot be proven; keep these files as evidence`,
          );
        }
      }
    }
  });

  it("a hole: the missing offsets are a range of their own, and the segments after it are intact", async () => {
    const layout = samples.get("hole")!.base.partitions[0]!;
    const [first, missing, ...rest] = layout.segments as [SegmentLayout, SegmentLayout, ...SegmentLayout[]];
    const last = rest[rest.length - 1]!;
    const partition = await scanFirst("hole", engines[0]!);
    expect(partition.refusal?.code).toBe("Hole");
    expect(partition.scope.map(partitionTuple)).toEqual([
      ["proven", "0", first.endOffset.toString(), null],
      ["missing", missing.startOffset.toString(), missing.endOffset.toString(), missing.messages],
      ["intact", rest[0]!.startOffset.toString(), last.endOffset.toString(), null],
    ]);
    // Salvage drops damaged bytes inside a segment; a hole between segments has none, so the line does not name it.
    expect(partition.nextStep).toBe(
      `restore this partition from a backup: segscan proves 0..${first.endOffset} here (and ${rest[0]!.startOffset}..${last.endOffset} after the damage), ` +
        `${missing.startOffset}..${missing.endOffset} cannot be proven; keep these files as evidence`,
    );
  });

  it("an empty segment in the middle of the chain: its offsets are missing", async () => {
    const layout = samples.get("empty-non-tail")!.base.partitions[0]!;
    const middle = layout.segments[1]!;
    const partition = await scanFirst("empty-non-tail", engines[0]!);
    expect(partition.refusal?.code).toBe("EmptyNonTailSegment");
    expect(partition.scope.map((range) => range.kind)).toEqual(["proven", "missing", "intact"]);
    expect(partitionTuple(partition.scope[1]!)).toEqual([
      "missing",
      middle.startOffset.toString(),
      middle.endOffset.toString(),
      middle.messages,
    ]);
  });

  it("an overlap: the next step asks for the right copy, no salvage", async () => {
    const partition = await scanFirst("overlap", engines[0]!);
    const refusal = partition.refusal as Extract<Refusal, { code: "Overlap" }>;
    expect(refusal.code).toBe("Overlap");
    expect(partition.nextStep).toBe(
      `restore this partition from a backup: two segments hold offsets ${refusal.nextStart === refusal.previousEnd ? refusal.nextStart : `${refusal.nextStart}..${refusal.previousEnd}`}, ` +
        "and only the right copy may be served; keep both as evidence",
    );
  });
});

// ---------------------------------------------------------------------------
// The next step

const range = (
  kind: PartitionScopeRange["kind"],
  first: bigint | null,
  last: bigint | null,
  extra: Partial<SegmentScopeRange> = {},
): SegmentScopeRange => ({
  kind,
  firstOffset: first,
  lastOffset: last,
  messages: first !== null && last !== null ? Number(last - first + 1n) : null,
  bytes: 100,
  startPosition: 0,
  endPosition: 100,
  tornEvidence: null,
  ...extra,
});

const interior: Refusal = { code: "InteriorDamage", message: "m", segment: 374n, damagePosition: 10, survivorPosition: 20 };
const budget: Refusal = {
  code: "UnverifiedResidue",
  message: "m",
  segment: 374n,
  damagePosition: 10,
  residueBytes: 5,
  limitUnits: 1,
  spentUnits: 2,
  stoppedAt: 11,
};
const overlap: Refusal = { code: "Overlap", message: "m", previousStart: 0n, previousEnd: 709n, nextStart: 700n };
const sizeDivergence: Refusal = {
  code: "SizeDivergence",
  message: "m",
  segment: 374n,
  indexedOffset: 700n,
  indexedPosition: 9000,
  messagesSize: 100,
};

interface Case {
  name: string;
  verdict: PartitionVerdict;
  refusal: Refusal | null;
  scope: SegmentScopeRange[];
  outcome?: "torn-tail" | "refused" | "clean";
  expected: Record<number, string>;
}

/** Every verdict, every action, with and without replicas: the line each gets. */
const CASES: Case[] = [
  {
    name: "clean",
    verdict: "clean",
    refusal: null,
    scope: [range("proven", 0n, 709n)],
    expected: { 1: "nothing to do: every byte is proven" },
  },
  {
    name: "repairable, a zero-filled tail",
    verdict: "repairable",
    refusal: null,
    outcome: "torn-tail",
    scope: [range("proven", 0n, 709n), range("torn", null, null, { tornEvidence: "zero-filled" })],
    expected: {
      1: "repair: segscan repair '/data/node 1/p' --apply cuts 100 bytes of torn tail: under the crash model (a completed fsync leaves no zeros), never fsynced, so never acknowledged (what it cuts or replaces is preserved first; segscan restore undoes it)",
    },
  },
  {
    name: "repairable, a complete last batch whose checksum fails",
    verdict: "repairable",
    refusal: null,
    outcome: "torn-tail",
    scope: [range("proven", 0n, 709n), range("torn", 710n, 714n, { tornEvidence: "complete-batch" })],
    expected: {
      1: "check a backup for offsets 710..714, then repair: segscan repair '/data/node 1/p' --apply cuts 100 bytes (a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back)",
      3: "repair: segscan repair '/data/node 1/p' --apply cuts 100 bytes (a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back); if a peer holds offsets 710..714 (check with `segscan fleet`), it re-supplies them",
    },
  },
  {
    name: "refused with intact data after the damage",
    verdict: "refused",
    refusal: interior,
    outcome: "refused",
    scope: [range("proven", 0n, 669n), range("unreadable", 670n, 674n), range("intact", 675n, 709n)],
    expected: {
      1: "salvage: segscan salvage '/data/node 1/p' --apply keeps 0..669 and 675..709 and records 670..674 as lost (what it drops is preserved first; segscan restore undoes it); or restore the partition from a backup",
      3: "if a peer holds 670..674 (check with `segscan fleet`), rebuild this partition from it, else restore it from a backup: segscan proves 0..669 here (and 675..709 after the damage)",
    },
  },
  {
    name: "refused with nothing after the damage proven",
    verdict: "refused",
    refusal: sizeDivergence,
    outcome: "refused",
    scope: [range("proven", 0n, 373n), range("unreadable", 374n, null)],
    expected: {
      1: "restore this partition from a backup: segscan proves 0..373 here, 374..unknown cannot be proven; keep these files as evidence",
      3: "if a peer holds 374..unknown (check with `segscan fleet`), rebuild this partition from it, else restore it from a backup: segscan proves 0..373 here",
    },
  },
  {
    name: "refused on the probe budget",
    verdict: "refused",
    refusal: budget,
    outcome: "refused",
    scope: [range("proven", 0n, 669n), range("unreadable", 670n, null)],
    expected: {
      1: "scan again with a larger probe budget: segscan scan '/data/node 1/p' --probe-budget 2; the probe stopped at byte 11 of segment 374 before it settled the residue; segscan proves 0..669 here",
      3: "scan again with a larger probe budget: segscan scan '/data/node 1/p' --probe-budget 2 --replicas 3; the probe stopped at byte 11 of segment 374 before it settled the residue; segscan proves 0..669 here",
    },
  },
  {
    name: "refused on an overlap",
    verdict: "refused",
    refusal: overlap,
    outcome: "clean",
    scope: [range("proven", 0n, 709n), range("intact", 700n, 800n)],
    expected: {
      1: "restore this partition from a backup: two segments hold offsets 700..709, and only the right copy may be served; keep both as evidence",
      3: "if a peer holds a good copy of this partition (check with `segscan fleet`), rebuild this partition from it, else restore it from a backup: segscan proves 0..709 here (and 700..800 after the damage)",
    },
  },
  {
    name: "refused, nothing proven at all",
    verdict: "refused",
    refusal: sizeDivergence,
    outcome: "refused",
    scope: [range("proven", null, null, { messages: 0 }), range("unreadable", 374n, null)],
    expected: {
      1: "restore this partition from a backup: segscan proves no offset here, 374..unknown cannot be proven; keep these files as evidence",
      3: "if a peer holds 374..unknown (check with `segscan fleet`), rebuild this partition from it, else restore it from a backup: segscan proves no offset here",
    },
  },
  {
    name: "failed",
    verdict: "failed",
    refusal: null,
    scope: [],
    expected: {
      1: "retry: fix what stopped the scan (ReadFailure), then scan again: segscan scan '/data/node 1/p'; nothing was concluded or changed",
      3: "retry: fix what stopped the scan (ReadFailure), then scan again: segscan scan '/data/node 1/p' --replicas 3; nothing was concluded or changed",
    },
  },
];

/** The partition dir of every case: a space in it, so each command shows its quoting. */
const CASE_PATH = "/data/node 1/p";

/** A report of one partition for the formatters, from a case. */
function partitionOf(c: Case, replicas: number): PartitionReport {
  const action = decideAction(c.verdict, c.refusal, replicas).action;
  const input: NextStepInput = {
    path: CASE_PATH,
    verdict: c.verdict,
    action,
    refusal: c.refusal,
    error: c.verdict === "failed" ? { code: "ReadFailure", path: "/p/0.log", message: "EIO reading /p/0.log" } : null,
    scope: c.scope.map(({ startPosition: _s, endPosition: _e, ...partitionRange }) => partitionRange),
    segments:
      c.outcome === undefined
        ? []
        : [
            {
              startOffset: 0n,
              outcome: c.outcome,
              refusal: c.outcome === "refused" ? c.refusal : null,
              scope: c.scope,
              endOffset: c.scope[0]?.lastOffset ?? null,
              walkedSize: c.scope[0]?.bytes ?? 0,
            },
          ],
  };
  const next = partitionNext(input, replicas);
  expect(partitionNextStep(input, replicas)).toBe(next.text);
  return {
    ...input,
    budget: { limitUnits: 1, spentUnits: 0 },
    sweep: [],
    segments: [],
    ignored: [],
    bytesScanned: 0,
    singleSegment: false,
    scope: input.scope,
    nextStep: next.text,
    nextCommand: next.command,
    findings: [],
  } as PartitionReport;
}

describe("the next step for every verdict and action", () => {
  it.each(CASES.flatMap((c) => [1, 3].map((replicas) => [c.name, replicas, c] as const)))(
    "%s, --replicas %i: one line, the same in text and JSON",
    (_name, replicas, c) => {
      const partition = partitionOf(c, replicas);
      const expected = c.expected[replicas] ?? c.expected[1]!;
      expect(partition.nextStep).toBe(expected);
      expect(partition.nextStep).not.toContain("\n");
      expect(formatPartition(partition).split("\n")).toContain(`  next step: ${expected}`);
      expect(partitionToJson(partition).nextStep).toBe(expected);
      // docs/repair.md §6.4: the command the line names is in it as printed, quoted, and beside it as an argv array.
      expect(partitionToJson(partition).nextCommand).toEqual(partition.nextCommand);
      if (partition.nextCommand !== null) {
        expect(partition.nextCommand[0]).toBe("segscan");
        expect(partition.nextCommand).toContain(CASE_PATH);
        expect(expected).toContain(shellQuote(partition.nextCommand));
      }
      expect(expected).not.toMatch(/<partition>|<node root>/);
    },
  );

  it("the table reaches every action", () => {
    const actions = new Set(CASES.flatMap((c) => [1, 3].map((replicas) => decideAction(c.verdict, c.refusal, replicas).action)));
    expect([...actions].sort()).toEqual(["rebuild-from-peers", "repair", "retry", "serve", "tombstone"]);
  });

  it("every scenario's scan carries its next step in the text report and the JSON, valid against the schema", async () => {
    const dir = await mkdtemp(join(tmpdir(), "segscan-scope-all-"));
    try {
      for (const scenario of SCENARIOS) {
        const sample = await generateDataDir(join(dir, scenario.name), { size: "tiny", seed: 4, scenario: scenario.name });
        for (const replicaCount of [1, 3]) {
          const report = await scanPartition(sample.partitions[0]!.path, { engine: engines[0]!, replicaCount });
          const partition = report.partitions[0]!;
          expect(partition.nextStep.length, scenario.name).toBeGreaterThan(10);
          expect(formatReport(report, { verbose: true, all: true }), scenario.name).toContain(`next step: ${partition.nextStep}`);
          const json = toJsonReport(report);
          expect(validateJsonReport(JSON.parse(JSON.stringify(json))), scenario.name).toEqual([]);
          expect(json.partitions[0]!.nextStep).toBe(partition.nextStep);
          // The partition's scope starts with its proven range, unless the load failed.
          expect(partition.scope[0]?.kind, scenario.name).toBe("proven");
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the next step of every node finding", () => {
  it("every code docs/node.md N9 lists has a line of its own (the read failures share one)", async () => {
    const doc = await readFile(new URL("../docs/node.md", import.meta.url), "utf8");
    const list = doc.slice(doc.indexOf("**Finding codes:**"));
    const codes = [...list.slice(0, list.indexOf("\n\n")).matchAll(/`([A-Z][A-Za-z]+)`/g)].map((match) => match[1]!);
    expect(codes.length).toBeGreaterThan(50);
    const shared = codes.filter((code) => !NODE_CODES_WITH_NEXT_STEPS.includes(code));
    expect(shared.sort()).toEqual(
      ["OffsetReadFailure", "OffsetsDirUnreadable", "PurgeGenerationReadFailure", "SnapshotReadFailure", "StreamsDirUnreadable"]
        .concat(["SuperblockReadFailure", "TmpReadFailure", "WalReadFailure"])
        .sort(),
    );
    for (const code of shared) {
      expect(nodeFindingNextStep({ severity: "failed", code, path: "/x", message: "m" }, "/n")).toBe(
        "fix the read error and scan again; nothing was judged or changed",
      );
    }
  });

  it("the words follow the finding's fields: a WAL torn tail that may hold an acknowledged op is not cut blindly", () => {
    const torn = (tornEvidence: string): NodeFinding => ({
      severity: "repairable",
      code: "WalTornTail",
      path: "/w",
      message: "m",
      tornEvidence,
    });
    const root = "/data/node's root";
    expect(nodeFindingNextStep(torn("short-entry"), root)).toBe(
      "repair: segscan repair '/data/node'\\''s root' --apply cuts the torn tail: under the crash model (a completed fsync leaves no short entry), never fsynced, so never acknowledged (preserved; segscan restore undoes it)",
    );
    expect(nodeFindingNext(torn("short-entry"), root).command).toEqual(["segscan", "repair", root, "--apply"]);
    expect(nodeFindingNextStep(torn("complete-entry"), root)).toMatch(/^check a replica or a backup for the last op, then repair/);
    const lost = (severity: "refused" | "warn"): NodeFinding => ({
      severity,
      code: "WalCommittedOpsLost",
      path: "/w",
      message: "m",
      provenOp: 51n,
      commitMax: 55n,
    });
    expect(nodeFindingNextStep(lost("refused"), root)).toMatch(/^restore metadata\/ from a backup/);
    // One node cannot know whether a peer holds what it lacks: it says where to look (docs/node.md N1.1).
    expect(nodeFindingNextStep(lost("warn"), root)).toBe(
      "if a peer holds ops 52..55 (check with `segscan fleet`), it re-supplies them when this replica rejoins; " +
        "if none does, restore metadata/ from a backup that holds them, or accept their loss",
    );
    expect(nodeFindingNext(lost("warn"), root).command).toBeNull();
  });

  it("a node scan prints each finding's next step, and the JSON carries the same", async () => {
    const dir = await mkdtemp(join(tmpdir(), "segscan-scope-node-"));
    try {
      const generated = await generateDataDir(join(dir, "n"), { size: "tiny", seed: 2 });
      await writeNodeMetadata(join(dir, "n"), generated.partitions, { fault: "offset-corrupt" });
      const report = await scanPath(join(dir, "n"), { engine: engines[0]! });
      const json = toJsonReport(report);
      expect(validateJsonReport(JSON.parse(JSON.stringify(json)))).toEqual([]);
      const findings: { code: string; nextStep: string; nextCommand?: string[] | null }[] = [];
      const collect = (value: unknown): void => {
        if (Array.isArray(value)) value.forEach(collect);
        else if (value !== null && typeof value === "object") {
          for (const [key, inner] of Object.entries(value)) {
            if (key === "findings" && Array.isArray(inner)) findings.push(...(inner as { code: string; nextStep: string }[]));
            else collect(inner);
          }
        }
      };
      collect(json.node);
      const corrupt = findings.find((finding) => finding.code === "OffsetCorrupt");
      const root = join(dir, "n");
      expect(corrupt?.nextStep).toBe(
        `${shellQuote(["segscan", "repair", root, "--apply"])} keeps a copy as evidence; tell the consumer's owner: at the next boot it restarts from offset 0`,
      );
      expect(corrupt?.nextCommand).toEqual(["segscan", "repair", root, "--apply"]);
      expect(formatReport(report, { verbose: true })).toContain(`next step: ${corrupt!.nextStep}`);
      // The short form ends where the command does.
      expect(formatReport(report)).toContain(`next step: ${shellQuote(["segscan", "repair", root, "--apply"])}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
