/**
 * EngineWindow.walkResident: the recovery walk's common case in one
 * engine call (docs/recovery.md §3.4, docs/engines.md §8). Both engines must return
 * identical results, equal to a plain oracle built here from the per-batch
 * primitives (headerStatus, readBatchHeader, verifyInWindow) — the loop
 * src/recovery/walk.ts ran for every batch before the kernel existed. And
 * walkBatches with the kernel must return what its per-batch path alone returns.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Engine, EngineWindow, ResidentWalkRequest, ResidentWalkResult } from "../src/engine/types.js";
import { writeU32, writeU64 } from "../src/format/bytes.js";
import {
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  MAX_BATCH_BYTES,
  REBUILT_INDEX_STRIDE_BYTES,
  U64_MAX,
} from "../src/format/constants.js";
import { type IndexEntry, VerifyStatus, readBatchHeader } from "../src/format/records.js";
import { generateDataDir } from "../src/gen/index.js";
import { FileWindow } from "../src/engine/file-window.js";
import { IndexEntryMatcher, type WalkOptions, type WalkResult, walkBatches } from "../src/recovery/walk.js";
import { allEngines } from "./helpers/engines.js";
import { type BuiltChain, buildChain, randomBytes, trackedTempDir } from "./helpers/fixtures.js";

const engines = await allEngines();

/** The per-batch definition: what walk.ts's loop did for each batch, one primitive call at a time. */
function oracleWalk(window: EngineWindow, request: ResidentWalkRequest): ResidentWalkResult {
  const bytes = window.view();
  let index = request.fromIndex;
  let expectedOffset = request.expectedOffset;
  let batches = 0;
  let messages = 0;
  let firstWithMessages: ResidentWalkResult["firstWithMessages"] = null;
  let lastWithMessages: ResidentWalkResult["lastWithMessages"] = null;
  for (;;) {
    if (index >= request.stopIndex || index + BATCH_HEADER_BYTES > request.heldEndIndex) break;
    if (window.headerStatus(index) !== VerifyStatus.Ok) break;
    const header = readBatchHeader(bytes, index);
    const end = index + header.batchLength;
    if (end > request.fileEndIndex || end > request.heldEndIndex) break;
    if (window.verifyInWindow(index) !== VerifyStatus.Ok) break;
    if (header.baseOffset !== expectedOffset) break;
    if (header.messageCount > 0) {
      const next = header.baseOffset + BigInt(header.messageCount);
      if (next > U64_MAX) break;
      const batch = { index, baseOffset: header.baseOffset, baseTimestamp: header.baseTimestamp, messageCount: header.messageCount };
      firstWithMessages ??= batch;
      lastWithMessages = batch;
      expectedOffset = next;
    }
    batches++;
    messages += header.messageCount;
    index = end;
  }
  return { stopIndex: index, batches, messages, expectedOffset, firstWithMessages, lastWithMessages };
}

type Corruption =
  | { kind: "none" }
  | { kind: "flip"; at: number; bit: number }
  | { kind: "length"; batch: number; value: bigint }
  | { kind: "count"; batch: number; value: number };

interface ChainCase {
  counts: number[];
  payloadBytes: number;
  seed: number;
  startOffset: bigint;
  /** Gaps (delta > 0) and discontinuities (delta < 0) at chosen batches. */
  shifts: { batch: number; delta: bigint }[];
  corruption: Corruption;
  maxBatchBytes: number;
}

const chainCaseArb: fc.Arbitrary<ChainCase> = fc.record({
  counts: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 12 }),
  payloadBytes: fc.constantFrom(0, 40, 300),
  seed: fc.nat(),
  startOffset: fc.constantFrom(0n, 1000n, (1n << 53n) - 3n, U64_MAX - 5n, U64_MAX - 1n, U64_MAX),
  shifts: fc.array(fc.record({ batch: fc.nat(), delta: fc.constantFrom(-3n, -1n, 1n, 7n) }), { maxLength: 2 }),
  corruption: fc.oneof(
    { arbitrary: fc.constant<Corruption>({ kind: "none" }), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), weight: 3 },
    {
      arbitrary: fc.record({
        kind: fc.constant("length" as const),
        batch: fc.nat(),
        // Below the header, one byte short or long, oversized, past 2^53, past 2^63.
        value: fc.constantFrom(0n, 255n, 1n << 40n, 1n << 53n, 1n << 63n, U64_MAX, 100_000_000n),
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({ kind: fc.constant("count" as const), batch: fc.nat(), value: fc.constantFrom(0, 1, 5, 0xffffffff) }),
      weight: 1,
    },
  ),
  maxBatchBytes: fc.oneof(fc.constant(MAX_BATCH_BYTES), fc.integer({ min: BATCH_HEADER_BYTES, max: 2000 })),
});

/** Builds the chain with its gaps and discontinuities, then the corruption. */
function buildCase(c: ChainCase): BuiltChain {
  const baseOffsets: bigint[] = [];
  let offset = c.startOffset;
  c.counts.forEach((count, i) => {
    let base = offset;
    for (const shift of c.shifts) if (shift.batch % c.counts.length === i) base += shift.delta;
    base = base < 0n ? 0n : base > U64_MAX ? BigInt.asUintN(64, base) : base;
    baseOffsets.push(base);
    if (count > 0) offset = base + BigInt(count);
  });
  const chain = buildChain({ counts: c.counts, payloadBytes: c.payloadBytes, seed: c.seed, startOffset: c.startOffset, baseOffsets });
  const { corruption } = c;
  if (corruption.kind === "flip") {
    const at = corruption.at % chain.log.length;
    chain.log[at]! ^= 1 << corruption.bit;
  } else if (corruption.kind === "length") {
    writeU64(chain.log, chain.batches[corruption.batch % chain.batches.length]!.position + BATCH_LENGTH_AT, corruption.value);
  } else if (corruption.kind === "count") {
    writeU32(chain.log, chain.batches[corruption.batch % chain.batches.length]!.position + BATCH_MESSAGE_COUNT_AT, corruption.value);
  }
  return chain;
}

interface WindowCase {
  slackBytes: number;
  /** Picks a batch start (even) or any index (odd). */
  from: number;
  held: "all" | "log" | number;
  fileEnd: "log" | "held" | number;
  stop: "none" | "batch" | number;
  expectedDelta: bigint;
  garbageSeed: number;
}

const windowCaseArb: fc.Arbitrary<WindowCase> = fc.record({
  slackBytes: fc.oneof(fc.constant(0), fc.nat({ max: 600 })),
  from: fc.nat(),
  held: fc.oneof(fc.constant<"all">("all"), fc.constant<"log">("log"), fc.nat({ max: 1000 })),
  fileEnd: fc.oneof(fc.constant<"log">("log"), fc.constant<"held">("held"), fc.nat({ max: 1000 })),
  stop: fc.oneof(fc.constant<"none">("none"), fc.constant<"batch">("batch"), fc.nat({ max: 1000 })),
  expectedDelta: fc.constantFrom(0n, 0n, 0n, 1n, -1n),
  garbageSeed: fc.nat(),
});

/** Window bytes (the log at index 0, seeded garbage after it) and the request. */
function buildRequest(chain: BuiltChain, w: WindowCase): { capacityBytes: number; request: ResidentWalkRequest } {
  const capacityBytes = Math.max(BATCH_HEADER_BYTES, chain.log.length + w.slackBytes);
  const perMille = (n: number, bound: number) => Math.floor((n / 1000) * bound);
  const onBatch = w.from % 2 === 0 && chain.batches.length > 0;
  const fromBatch = chain.batches[(w.from >> 1) % chain.batches.length]!;
  const fromIndex = onBatch ? fromBatch.position : (w.from >> 1) % (capacityBytes + 1);
  const heldEndIndex =
    w.held === "all"
      ? capacityBytes
      : w.held === "log"
        ? Math.max(fromIndex, chain.log.length)
        : fromIndex + perMille(w.held, capacityBytes - fromIndex);
  const fileEndIndex =
    w.fileEnd === "log" ? chain.log.length : w.fileEnd === "held" ? heldEndIndex : perMille(w.fileEnd, capacityBytes + 500);
  const stopIndex =
    w.stop === "none"
      ? Number.MAX_SAFE_INTEGER
      : w.stop === "batch"
        ? chain.batches[w.from % chain.batches.length]!.position
        : perMille(w.stop, capacityBytes + 100);
  let expectedOffset = (onBatch ? fromBatch.baseOffset : chain.batches[0]!.baseOffset) + w.expectedDelta;
  if (expectedOffset < 0n) expectedOffset = 0n;
  if (expectedOffset > U64_MAX) expectedOffset = U64_MAX;
  return { capacityBytes, request: { fromIndex, heldEndIndex, fileEndIndex, stopIndex, expectedOffset } };
}

function fillWindow(window: EngineWindow, log: Uint8Array, garbageSeed: number): void {
  const view = window.view();
  view.set(randomBytes(view.length, garbageSeed));
  view.set(log.subarray(0, Math.min(log.length, view.length)), 0);
}

/** Runs `walkResident` and the oracle on one engine; the result must not depend on bytes at or past heldEndIndex. */
function walkOn(engine: Engine, chain: BuiltChain, c: ChainCase, w: WindowCase): ResidentWalkResult {
  const { capacityBytes, request } = buildRequest(chain, w);
  const window = engine.openWindow(capacityBytes, { maxBatchBytes: c.maxBatchBytes });
  try {
    fillWindow(window, chain.log, w.garbageSeed);
    const walked = window.walkResident(request);
    expect(walked, `${engine.kind} against the oracle`).toEqual(oracleWalk(window, request));
    // Other bytes past what is held: the same result.
    const view = window.view();
    view.set(randomBytes(capacityBytes - request.heldEndIndex, w.garbageSeed + 1), request.heldEndIndex);
    expect(window.walkResident(request), `${engine.kind} with other bytes past heldEndIndex`).toEqual(walked);
    return walked;
  } finally {
    window.close();
  }
}

describe("walkResident: both engines equal the per-batch oracle", () => {
  it("runs on both engines", () => {
    expect(engines.map((engine) => engine.kind).sort()).toEqual(["ts", "wasm"]);
  });

  it("on chains with bit flips, bad lengths and counts, gaps, discontinuities, zero-count batches, any stop, held end and file end (fast-check)", () => {
    fc.assert(
      fc.property(chainCaseArb, windowCaseArb, (c, w) => {
        const chain = buildCase(c);
        const results = engines.map((engine) => walkOn(engine, chain, c, w));
        for (const other of results.slice(1)) expect(other).toEqual(results[0]);
      }),
      { numRuns: 300 },
    );
  });

  it("walks a clean chain whole, zero-count batches included, and stops exactly where each condition fails", () => {
    const chain = buildChain({ counts: [2, 0, 3, 0, 0, 1], startOffset: 10n, seed: 5 });
    const positions = chain.batches.map((batch) => batch.position);
    const length = chain.log.length;
    const run = (engine: Engine, request: Partial<ResidentWalkRequest>, edit?: (view: Uint8Array) => void, maxBatchBytes?: number) => {
      const window = engine.openWindow(length + 300, maxBatchBytes === undefined ? {} : { maxBatchBytes });
      try {
        fillWindow(window, chain.log, 9);
        edit?.(window.view());
        const full: ResidentWalkRequest = {
          fromIndex: 0,
          heldEndIndex: length,
          fileEndIndex: length,
          stopIndex: length,
          expectedOffset: 10n,
          ...request,
        };
        const walked = window.walkResident(full);
        expect(walked).toEqual(oracleWalk(window, full));
        return walked;
      } finally {
        window.close();
      }
    };
    for (const engine of engines) {
      const whole = run(engine, {});
      expect(whole).toEqual({
        stopIndex: length,
        batches: 6,
        messages: 6,
        expectedOffset: 16n,
        firstWithMessages: { index: 0, baseOffset: 10n, baseTimestamp: chain.batches[0]!.baseTimestamp, messageCount: 2 },
        lastWithMessages: { index: positions[5], baseOffset: 15n, baseTimestamp: chain.batches[5]!.baseTimestamp, messageCount: 1 },
      });
      // The caller's stop: a batch starting at or past stopIndex is not walked.
      expect(run(engine, { stopIndex: positions[2]! })).toMatchObject({ stopIndex: positions[2], batches: 2, expectedOffset: 12n });
      expect(run(engine, { stopIndex: positions[2]! + 1 })).toMatchObject({ stopIndex: positions[3], batches: 3, expectedOffset: 15n });
      // Zero-count batches leave the expected offset: from batch 3 (empty) it is 15.
      expect(run(engine, { fromIndex: positions[3]!, expectedOffset: 15n })).toMatchObject({
        batches: 3,
        messages: 1,
        expectedOffset: 16n,
      });
      // A gap and a discontinuity are the caller's.
      expect(run(engine, { expectedOffset: 9n })).toMatchObject({ stopIndex: 0, batches: 0, expectedOffset: 9n, firstWithMessages: null });
      expect(run(engine, { expectedOffset: 11n })).toMatchObject({ stopIndex: 0, batches: 0 });
      // A held end or file end that cuts batch 5: it is left to the caller.
      expect(run(engine, { heldEndIndex: positions[5]! + 300 })).toMatchObject({ stopIndex: positions[5], batches: 5 });
      expect(run(engine, { fileEndIndex: length - 1 })).toMatchObject({ stopIndex: positions[5], batches: 5 });
      // Fewer than 256 bytes held at a batch start: not even its header is read.
      expect(run(engine, { heldEndIndex: positions[1]! + 255 })).toMatchObject({ stopIndex: positions[1], batches: 1 });
      // A batch over the length cap (oversized, docs/format.md §2.2) is the caller's.
      const capped = run(engine, {}, undefined, chain.batches[0]!.length + 1);
      const firstOver = chain.batches.findIndex((batch) => batch.length > chain.batches[0]!.length + 1);
      expect(capped.stopIndex).toBe(firstOver < 0 ? length : positions[firstOver]);
      // A failing batch (a payload bit flipped in batch 2) stops the walk before it.
      expect(run(engine, {}, (view) => (view[positions[2]! + 300]! ^= 4))).toMatchObject({ stopIndex: positions[2], batches: 2 });
    }
  });

  it("stops before a batch whose base_offset + message_count would pass u64::MAX", () => {
    const chain = buildChain({ counts: [1, 0, 2, 1], startOffset: U64_MAX - 2n, seed: 2 });
    for (const engine of engines) {
      const window = engine.openWindow(chain.log.length);
      try {
        window.view().set(chain.log);
        const request = {
          fromIndex: 0,
          heldEndIndex: chain.log.length,
          fileEndIndex: chain.log.length,
          stopIndex: chain.log.length,
          expectedOffset: U64_MAX - 2n,
        };
        const walked = window.walkResident(request);
        // Batch 2 holds offsets u64::MAX - 1 and u64::MAX: the next offset would be 2^64.
        expect(walked).toMatchObject({ stopIndex: chain.batches[2]!.position, batches: 2, messages: 1, expectedOffset: U64_MAX - 1n });
        expect(walked).toEqual(oracleWalk(window, request));
      } finally {
        window.close();
      }
    }
  });

  it("on the generator's segments (src/gen), from every index entry, both engines equal the oracle", async () => {
    const generated = await generateDataDir(trackedTempDir("walk-resident"), { size: "tiny", seed: 11 });
    let walkedBatches = 0;
    for (const partition of generated.partitions) {
      for (const segment of partition.segments) {
        const log = new Uint8Array(readFileSync(segment.logPath));
        for (const entry of segment.indexEntries) {
          const fromIndex = Number(entry.position);
          const request = {
            fromIndex,
            heldEndIndex: log.length,
            fileEndIndex: log.length,
            stopIndex: log.length,
            expectedOffset: entry.offset,
          };
          const results = engines.map((engine) => {
            const window = engine.openWindow(log.length);
            try {
              window.view().set(log);
              const walked = window.walkResident(request);
              expect(walked).toEqual(oracleWalk(window, request));
              return walked;
            } finally {
              window.close();
            }
          });
          for (const other of results.slice(1)) expect(other).toEqual(results[0]);
          // A clean segment walks from any entry to its end.
          expect(results[0]!.stopIndex).toBe(log.length);
          walkedBatches += results[0]!.batches;
        }
      }
    }
    expect(walkedBatches).toBeGreaterThan(100);
  });
});

// ---------------------------------------------------------------------------
// walkBatches: the kernel changes speed, never a result

function memoryWindow(engine: Engine, log: Uint8Array, windowBytes: number, maxBatchBytes: number): FileWindow {
  const file = {
    async read(target: Uint8Array, position: number): Promise<number> {
      const count = Math.max(0, Math.min(target.length, log.length - position));
      target.set(log.subarray(position, position + count));
      return count;
    },
    async close(): Promise<void> {},
  };
  return new FileWindow(file, "memory.log", log.length, engine.openWindow(windowBytes, { maxBatchBytes }));
}

async function* fromArray(entries: readonly IndexEntry[]): AsyncGenerator<IndexEntry> {
  yield* entries;
}

interface WalkRun {
  result: WalkResult;
  mismatches: number;
  mismatched: string[];
}

/**
 * One walk, with or without the bulk kernel: `perBatch` passes an
 * onVerifiedBatch without nextStopPosition, which keeps every batch on the per-batch path.
 */
async function walkOnce(
  engine: Engine,
  log: Uint8Array,
  windowBytes: number,
  maxBatchBytes: number,
  options: Omit<WalkOptions, "onVerifiedBatch" | "nextStopPosition">,
  entries: readonly IndexEntry[] | null,
  perBatch: boolean,
): Promise<WalkRun> {
  const window = memoryWindow(engine, log, windowBytes, maxBatchBytes);
  try {
    const mismatched: string[] = [];
    const matcher =
      entries === null
        ? null
        : new IndexEntryMatcher(fromArray(entries), (entry, batch) => mismatched.push(`${entry.position}@${batch?.position ?? "none"}`));
    const told: Pick<WalkOptions, "onVerifiedBatch" | "nextStopPosition"> = matcher
      ? perBatch
        ? { onVerifiedBatch: (batch) => matcher.onBatch(batch) }
        : { onVerifiedBatch: (batch) => matcher.onBatch(batch), nextStopPosition: () => matcher.nextStopPosition() }
      : perBatch
        ? { onVerifiedBatch: () => {} }
        : {};
    const result = await walkBatches(window, { ...options, ...told });
    const mismatches = matcher ? await matcher.finish() : 0;
    return { result, mismatches, mismatched };
  } finally {
    window.engineWindow.close();
  }
}

describe("walkBatches with the resident walk returns what its per-batch path returns", () => {
  it("on damaged chains, any window size, with index entries, the rebuilt index and untilPosition (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        chainCaseArb,
        fc.record({
          windowBytes: fc.constantFrom(BATCH_HEADER_BYTES * 2, 4096, 8192, 1 << 20),
          fromBatch: fc.nat(),
          expectedDelta: fc.constantFrom(0n, 0n, 1n, -1n),
          rebuildIndex: fc.boolean(),
          until: fc.option(fc.nat({ max: 1000 }), { nil: undefined }),
          // Entries on batch starts, off them (position + 1), with a wrong offset, or past the end.
          entries: fc.option(
            fc.array(fc.record({ batch: fc.nat(), kind: fc.constantFrom("on", "on", "off", "wrong", "past") }), { maxLength: 6 }),
            {
              nil: null,
            },
          ),
        }),
        async (c, w) => {
          const chain = buildCase(c);
          const from = chain.batches[w.fromBatch % chain.batches.length]!;
          let expectedOffset = from.baseOffset + w.expectedDelta;
          if (expectedOffset < 0n) expectedOffset = 0n;
          if (expectedOffset > U64_MAX) expectedOffset = U64_MAX;
          const options = {
            fromPosition: from.position,
            expectedOffset,
            rebuildIndex: w.rebuildIndex,
            ...(w.until === undefined ? {} : { untilPosition: Math.floor((w.until / 1000) * chain.log.length) }),
          };
          const entries =
            w.entries === null
              ? null
              : w.entries
                  .map(({ batch, kind }): IndexEntry => {
                    const at = chain.batches[batch % chain.batches.length]!;
                    const position = kind === "past" ? chain.log.length + batch : at.position + (kind === "off" ? 1 : 0);
                    return { offset: at.baseOffset + (kind === "wrong" ? 1n : 0n), timestamp: 0n, position: BigInt(position) };
                  })
                  .sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
          for (const engine of engines) {
            const bulk = await walkOnce(engine, chain.log, w.windowBytes, c.maxBatchBytes, options, entries, false);
            const perBatch = await walkOnce(engine, chain.log, w.windowBytes, c.maxBatchBytes, options, entries, true);
            expect(bulk, engine.kind).toEqual(perBatch);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("rebuilds the same index (docs/recovery.md §3.3 stride) over several MiB, with empty batches across the stride", async () => {
    // ~3.4 MiB of ~60 KiB batches; empty batches where a stride boundary falls, so the
    // entry after the stride lands on the next batch with messages.
    const counts = Array.from({ length: 64 }, (_, i) => (i % 17 === 16 || i % 17 === 0 ? 0 : 2));
    const chain = buildChain({ counts, payloadBytes: 30_000, seed: 4 });
    expect(chain.log.length).toBeGreaterThan(3 * REBUILT_INDEX_STRIDE_BYTES);
    for (const engine of engines) {
      for (const windowBytes of [64 * 1024, 1 << 20]) {
        for (const fromBatch of [0, 1, 16]) {
          const from = chain.batches[fromBatch]!;
          const options = { fromPosition: from.position, expectedOffset: from.baseOffset, rebuildIndex: true };
          const bulk = await walkOnce(engine, chain.log, windowBytes, MAX_BATCH_BYTES, options, null, false);
          const perBatch = await walkOnce(engine, chain.log, windowBytes, MAX_BATCH_BYTES, options, null, true);
          expect(bulk).toEqual(perBatch);
          expect(bulk.result.rebuiltIndex!.length).toBeGreaterThanOrEqual(3);
          expect(bulk.result.stopPosition).toBe(chain.log.length);
        }
      }
    }
  });

  it("an index entry inside a run the kernel could walk is still checked against its batch", async () => {
    const chain = buildChain({ counts: [1, 1, 1, 1, 1, 1], seed: 8 });
    const entries: IndexEntry[] = [
      { offset: 0n, timestamp: 0n, position: 0n },
      { offset: 3n, timestamp: 0n, position: BigInt(chain.batches[3]!.position) },
      // Off by one byte: no batch starts there (a mismatch).
      { offset: 4n, timestamp: 0n, position: BigInt(chain.batches[4]!.position + 1) },
    ];
    for (const engine of engines) {
      const run = await walkOnce(
        engine,
        chain.log,
        1 << 20,
        MAX_BATCH_BYTES,
        { fromPosition: 0, expectedOffset: 0n, rebuildIndex: false },
        entries,
        false,
      );
      expect(run.mismatches).toBe(1);
      expect(run.mismatched).toEqual([`${chain.batches[4]!.position + 1}@${chain.batches[5]!.position}`]);
      expect(run.result.batchesVerified).toBe(6);
    }
  });
});
