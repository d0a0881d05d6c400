/**
 * docs/recovery.md §3.5: the damage-probe candidate loop. `scanCandidatesPlain` is the
 * definition (one candidate at a time, 1 unit each); `scanCandidatesSkipping`
 * and both engines' window `scanCandidates` must give the identical status,
 * stopping index and spentUnits on every window and every limit: skip-ahead
 * changes speed, never a verdict or a unit count.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  BATCH_BASE_OFFSET_AT,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH_AT,
  BATCH_MESSAGE_COUNT_AT,
  MAX_BATCH_BYTES,
} from "../src/format/constants.js";
import { readU32, readU64, readU64Clamped, writeU32, writeU64 } from "../src/format/bytes.js";
import { encodeBatch } from "../src/format/encode.js";
import { VerifyStatus, headerDecodeStatus } from "../src/format/records.js";
import { scanCandidatesPlain, scanCandidatesSkipping } from "../src/engine/ts/candidates.js";
import type { CandidateScanRequest, CandidateScanResult } from "../src/engine/types.js";
import { U64_MAX, prng, seededBytes } from "./helpers/engine-fixtures.js";
import { allEngines } from "./helpers/engines.js";

/** Both engines' windows are held to the plain loop (an overspent budget included). */
const engines = await allEngines();

type Content = "random" | "zero" | "sparse" | "crafted" | "crafted-on-sparse" | "reserved-stripes";

interface Case {
  bytes: Uint8Array;
  request: Omit<CandidateScanRequest, "limitUnits">;
  maxBatchBytes: number;
}

interface CaseParams {
  content: Content;
  windowBytes: number;
  seed: number;
  /** Per-mille of the window where fromIndex falls (within its first 40%), and of the rest the range spans. */
  from: number;
  span: number;
  fileEndExtra: number;
  minBase: "null" | "zero" | "small" | "huge" | "max";
  spentUnits: number;
  smallCap: boolean;
}

const caseParamsArb: fc.Arbitrary<CaseParams> = fc.record({
  content: fc.constantFrom<Content>(
    "random",
    "zero",
    "sparse",
    "reserved-stripes",
    "crafted",
    "crafted",
    "crafted",
    "crafted-on-sparse",
    "crafted-on-sparse",
  ),
  // fast-check biases integers toward their bounds: mostly windows with room for many candidates.
  windowBytes: fc.oneof(
    { arbitrary: fc.integer({ min: 256, max: 400 }), weight: 1 },
    { arbitrary: fc.integer({ min: 600, max: 6000 }), weight: 4 },
  ),
  seed: fc.nat(),
  from: fc.integer({ min: 0, max: 1000 }),
  span: fc.oneof(fc.constant(1000), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 20 })),
  fileEndExtra: fc.oneof(fc.constant(0), fc.nat({ max: 600 }), fc.nat({ max: 2 ** 40 })),
  minBase: fc.constantFrom("null", "zero", "small", "small", "huge", "max"),
  spentUnits: fc.oneof(fc.constant(0), fc.nat({ max: 1000 }), fc.nat({ max: 2 ** 45 })),
  smallCap: fc.boolean(),
});

/** Builds the window bytes and request for `p` (content from a seeded PRNG: cheap, reproducible). */
function buildCase(p: CaseParams): Case {
  const next = prng(p.seed);
  const int = (n: number): number => Math.floor(next() * n);
  const W = p.windowBytes;
  const lastCandidate = W - BATCH_HEADER_BYTES; // toIndex - 1 + 256 <= W
  const fromIndex = Math.floor((p.from / 1000) * 0.4 * (lastCandidate + 1));
  const toIndex = fromIndex + Math.floor((p.span / 1000) * (lastCandidate + 1 - fromIndex));
  const fileEndIndex = Math.max(toIndex - 1 + BATCH_HEADER_BYTES, BATCH_HEADER_BYTES) + p.fileEndExtra;
  const maxBatchBytes = p.smallCap ? 256 + int(4000) : MAX_BATCH_BYTES;
  const minBaseOffset =
    p.minBase === "null"
      ? null
      : p.minBase === "zero"
        ? 0n
        : p.minBase === "small"
          ? BigInt(int(1000))
          : p.minBase === "huge"
            ? (1n << 63n) + BigInt(int(1000))
            : U64_MAX;

  let bytes: Uint8Array;
  switch (p.content) {
    case "random":
      bytes = seededBytes(W, p.seed);
      break;
    case "zero":
      bytes = new Uint8Array(W);
      break;
    case "sparse":
    case "crafted-on-sparse":
    case "crafted":
      bytes = new Uint8Array(W);
      if (p.content !== "crafted") {
        const k = 1 + int(8);
        for (let i = 0; i < k; i++) bytes[int(W)] = 1 + int(255);
      }
      break;
    case "reserved-stripes": {
      // A nonzero byte every 100..250 bytes: every candidate is ruled out by its reserved region.
      bytes = new Uint8Array(W);
      for (let q = int(50); q < W; q += 100 + int(150)) bytes[q] = 1 + int(255);
      break;
    }
  }

  if (p.content === "crafted" || p.content === "crafted-on-sparse") {
    // Few headers (they rarely overlap, so many decode) or many (overlaps hide each other).
    const headers = 1 + int(next() < 0.5 ? 3 : 12);
    for (let h = 0; h < headers; h++) {
      const c = fromIndex + int(Math.max(1, toIndex - fromIndex + 8));
      if (c + BATCH_HEADER_BYTES > W) continue;
      // Half the headers pass every check (when anything can); the rest miss one or more.
      const good = next() < 0.5;
      const base = minBaseOffset ?? BigInt(int(1000));
      const baseOffset = good
        ? [base, U64_MAX, base + BigInt(int(1000))][int(3)]!
        : [base, base + 1n, base - 1n, base + BigInt(int(1 << 30)), 0n, U64_MAX][int(6)]!;
      const fits = fileEndIndex - c;
      const lengthPick = good ? 2 : int(8);
      const length =
        lengthPick === 0
          ? BigInt(fits) // exactly to the file end
          : lengthPick === 1
            ? BigInt(fits + 1) // one past it
            : lengthPick === 2
              ? BigInt(256 + int(Math.max(1, Math.min(fits, maxBatchBytes) - 255))) // fits
              : lengthPick === 3
                ? BigInt(fits + 1 + int(1 << 20)) // past the file end
                : lengthPick === 4
                  ? BigInt(int(256)) // below the header
                  : lengthPick === 5
                    ? BigInt(maxBatchBytes + int(3)) // at / over the cap
                    : lengthPick === 6
                      ? (1n << 63n) + BigInt(int(1000))
                      : BigInt(256 + int(2000));
      // Only bytes 0..52 are written: the crafted header's reserved region is
      // whatever was there (zero unless sparse noise or an overlapping header).
      writeU64(bytes, c, BigInt(int(1 << 30)));
      writeU64(bytes, c + BATCH_BASE_OFFSET_AT, BigInt.asUintN(64, baseOffset));
      writeU64(bytes, c + 16, BigInt(int(1 << 30)) * 1000n);
      writeU64(bytes, c + 24, 0n);
      writeU64(bytes, c + BATCH_LENGTH_AT, BigInt.asUintN(64, length));
      writeU64(bytes, c + 40, BigInt(int(1 << 30)));
      // Large counts put a nonzero byte at 51, the last header byte before the reserved
      // region: a skip-ahead past the last nonzero reserved byte must land exactly on it.
      const count = [1 + int(100), 0x1000000 + int(1000), 0xffffffff, 0x80000000][int(4)]!;
      writeU32(bytes, c + BATCH_MESSAGE_COUNT_AT, !good && next() < 0.3 ? 0 : count);
      if (!good && next() < 0.15) bytes[c + 52 + int(204)] = 1; // a crafted header that does not decode
    }
  }
  return {
    bytes,
    request: { fromIndex, toIndex, fileEndIndex, minBaseOffset, spentUnits: p.spentUnits },
    maxBatchBytes,
  };
}

/** Plain, skipping and the engine window on one request: all three must be identical. */
function runAll(c: Case, limitUnits: number): CandidateScanResult {
  const request: CandidateScanRequest = { ...c.request, limitUnits };
  const plain = scanCandidatesPlain(c.bytes, request);
  const skipping = scanCandidatesSkipping(c.bytes, request);
  const context = { limitUnits, ...c.request };
  expect({ context, result: skipping }).toEqual({ context, result: plain });
  for (const engine of engines) {
    const window = engine.openWindow(c.bytes.length, { maxBatchBytes: c.maxBatchBytes });
    window.view().set(c.bytes);
    const viaEngine = window.scanCandidates(request);
    window.close();
    expect({ context, engine: engine.kind, result: viaEngine }).toEqual({ context, engine: engine.kind, result: plain });
  }
  return plain;
}

/** Midpoints of the longest zero runs in the candidate range: where a skip-ahead jumps. */
function candidatesInsideSkipRuns(c: Case): number[] {
  const { fromIndex, toIndex } = c.request;
  const picks: number[] = [];
  let runStart = -1;
  for (let i = fromIndex; i <= toIndex; i++) {
    const zero = i < toIndex && c.bytes[i + BATCH_LENGTH_AT] === 0;
    if (zero && runStart < 0) runStart = i;
    if (!zero && runStart >= 0) {
      if (i - runStart > 16) picks.push(runStart + Math.floor((i - runStart) / 2), i - 1);
      runStart = -1;
    }
  }
  return picks.slice(0, 6);
}

/** The interesting limits for a case, given the unlimited outcome. */
function limitsFor(c: Case, unlimited: CandidateScanResult, extra: number): number[] {
  const spent = c.request.spentUnits;
  const end = unlimited.spentUnits;
  const limits = [
    spent, // the first candidate's unit exhausts
    spent + 1,
    spent + 2,
    end, // just enough
    end - 1, // the last candidate's unit exhausts
    end + 1,
    spent + Math.floor((end - spent) * extra),
    spent + Math.floor((end - spent) / 2),
    Number.MAX_SAFE_INTEGER,
    ...candidatesInsideSkipRuns(c).map((candidate) => spent + (candidate - c.request.fromIndex)),
  ];
  return [...new Set(limits.filter((l) => l >= spent))];
}

describe("scanCandidatesSkipping ≡ scanCandidatesPlain ≡ window.scanCandidates", () => {
  it("on random, zero, sparse, crafted and striped windows, at every interesting limit", () => {
    const seen = { passed: 0, exhausted: 0, done: 0 };
    const unlimitedSeen = { passed: 0, exhausted: 0, done: 0 };
    fc.assert(
      fc.property(caseParamsArb, fc.double({ min: 0, max: 1, noNaN: true }), (params, extra) => {
        const c = buildCase(params);
        const unlimited = runAll(c, Number.MAX_SAFE_INTEGER);
        unlimitedSeen[unlimited.status]++;
        for (const limit of limitsFor(c, unlimited, extra)) seen[runAll(c, limit).status]++;
      }),
      { numRuns: 400 },
    );
    // The generators reach every outcome (loose bounds: fast-check's seed changes every run).
    expect(unlimitedSeen.passed).toBeGreaterThan(30);
    expect(unlimitedSeen.done).toBeGreaterThan(30);
    expect(seen.exhausted).toBeGreaterThan(100);
  });

  it("crafted windows with many headers: every passing candidate really passes, and resuming after it agrees", () => {
    fc.assert(
      fc.property(caseParamsArb, (params) => {
        const c = buildCase({ ...params, content: "crafted", minBase: params.minBase === "null" ? "small" : params.minBase });
        // Walk the window the way the probe does: resume after each passing candidate.
        let request = { ...c.request };
        for (let guard = 0; guard < 50; guard++) {
          const result = runAll({ ...c, request }, Number.MAX_SAFE_INTEGER);
          if (result.status !== "passed") {
            expect(result).toEqual({
              status: "done",
              index: request.toIndex,
              spentUnits: request.spentUnits + (request.toIndex - request.fromIndex),
            });
            break;
          }
          const at = result.index;
          // Decodes with no length cap: a length over maxBatchBytes that fits the file is an oversized candidate.
          expect(headerDecodeStatus(c.bytes, at, Number.POSITIVE_INFINITY)).toBe(VerifyStatus.Ok);
          expect(at + readU64Clamped(c.bytes, at + BATCH_LENGTH_AT)).toBeLessThanOrEqual(request.fileEndIndex);
          expect(readU32(c.bytes, at + BATCH_MESSAGE_COUNT_AT)).toBeGreaterThan(0);
          expect(readU64(c.bytes, at + BATCH_BASE_OFFSET_AT) >= request.minBaseOffset!).toBe(true);
          expect(result.spentUnits).toBe(request.spentUnits + (at - request.fromIndex) + 1);
          request = { ...request, fromIndex: at + 1, spentUnits: result.spentUnits };
        }
      }),
      { numRuns: 200 },
    );
  });

  it("minBaseOffset null: nothing passes; every candidate costs 1 unit", () => {
    fc.assert(
      fc.property(caseParamsArb, (params) => {
        const c = buildCase({ ...params, minBase: "null" });
        const result = runAll(c, Number.MAX_SAFE_INTEGER);
        expect(result).toEqual({
          status: "done",
          index: c.request.toIndex,
          spentUnits: c.request.spentUnits + c.request.toIndex - c.request.fromIndex,
        });
      }),
      { numRuns: 100 },
    );
  });

  it("a budget already overspent on entry stops at the first candidate, as the plain loop does", () => {
    // Reachable: one partition load shares one budget across segments, and a
    // segment's probe can end with spentUnits > limitUnits (a passing candidate
    // charges its whole batch_length) before the next segment probes.
    fc.assert(
      fc.property(caseParamsArb, fc.integer({ min: 1, max: 10_000 }), (params, over) => {
        const c = buildCase(params);
        const limit = Math.max(0, c.request.spentUnits - over);
        if (limit >= c.request.spentUnits) return;
        runAll(c, limit);
      }),
      { numRuns: 200 },
    );
  });
});

describe("fixed scenarios", () => {
  const zeros = (n: number): Uint8Array => new Uint8Array(n);
  const request = (over: Partial<CandidateScanRequest>, bytes: Uint8Array): CandidateScanRequest => ({
    fromIndex: 0,
    toIndex: bytes.length - BATCH_HEADER_BYTES + 1,
    fileEndIndex: bytes.length,
    minBaseOffset: 0n,
    spentUnits: 0,
    limitUnits: Number.MAX_SAFE_INTEGER,
    ...over,
  });
  function all(bytes: Uint8Array, req: CandidateScanRequest, maxBatchBytes = MAX_BATCH_BYTES): CandidateScanResult {
    return runAll({ bytes, request: req, maxBatchBytes }, req.limitUnits);
  }

  it("a 1 MiB zero window: done, one unit per candidate; a limit inside the run stops exactly there", () => {
    const bytes = zeros(1 << 20);
    const candidates = bytes.length - 255;
    expect(all(bytes, request({}, bytes))).toEqual({ status: "done", index: candidates, spentUnits: candidates });
    for (const limit of [0, 1, 2, 1000, 654_321, candidates - 1]) {
      expect(all(bytes, request({ limitUnits: limit, spentUnits: 0 }, bytes))).toEqual({
        status: "exhausted",
        index: limit,
        spentUnits: limit + 1,
      });
    }
    expect(all(bytes, request({ limitUnits: candidates }, bytes)).status).toBe("done");
    expect(all(bytes, request({ spentUnits: 5000, limitUnits: 5000 + 77, fromIndex: 100 }, bytes))).toEqual({
      status: "exhausted",
      index: 177,
      spentUnits: 5078,
    });
  });

  it("a real batch in a zero residue is the passing candidate; a limit one short stops just before it", () => {
    const bytes = zeros(20_000);
    const batch = encodeBatch({ baseOffset: 500n, baseTimestamp: 1n, messages: [{ payload: new Uint8Array(100) }] });
    bytes.set(batch, 12_345);
    expect(all(bytes, request({ minBaseOffset: 500n }, bytes))).toEqual({ status: "passed", index: 12_345, spentUnits: 12_346 });
    expect(all(bytes, request({ minBaseOffset: 500n, limitUnits: 12_345 }, bytes))).toEqual({
      status: "passed",
      index: 12_345,
      spentUnits: 12_346,
    });
    expect(all(bytes, request({ minBaseOffset: 500n, limitUnits: 12_344 }, bytes))).toEqual({
      status: "exhausted",
      index: 12_344,
      spentUnits: 12_345,
    });
    // Does not extend the chain / claims past the file / no messages: ruled out.
    expect(all(bytes, request({ minBaseOffset: 501n }, bytes)).status).toBe("done");
    expect(all(bytes, request({ minBaseOffset: 500n, fileEndIndex: 12_345 + batch.length - 1 }, bytes)).status).toBe("done");
    // A cap below the batch's length does not rule it out: oversized but fitting the file, it is handed to the verifier (docs/format.md §2.2).
    expect(all(bytes, request({ minBaseOffset: 500n }, bytes), batch.length - 1)).toEqual({
      status: "passed",
      index: 12_345,
      spentUnits: 12_346,
    });
    const empty = zeros(20_000);
    empty.set(encodeBatch({ baseOffset: 500n, baseTimestamp: 1n, messages: [] }), 12_345);
    expect(all(empty, request({ minBaseOffset: 0n }, empty)).status).toBe("done");
  });

  it("reserved-region skips: a limit landing inside a skip stops at the exact candidate", () => {
    const bytes = zeros(50_000);
    for (let q = 300; q < bytes.length; q += 200) bytes[q] = 0xff;
    const toIndex = bytes.length - 255;
    for (const limit of [0, 3, 47, 48, 49, 10_000, 33_333, toIndex - 1]) {
      expect(all(bytes, request({ limitUnits: limit }, bytes))).toEqual({ status: "exhausted", index: limit, spentUnits: limit + 1 });
    }
    expect(all(bytes, request({}, bytes))).toEqual({ status: "done", index: toIndex, spentUnits: toIndex });
  });

  it("an empty candidate range is done at once", () => {
    const bytes = zeros(4096);
    expect(all(bytes, request({ fromIndex: 10, toIndex: 10, spentUnits: 7, limitUnits: 7 }, bytes))).toEqual({
      status: "done",
      index: 10,
      spentUnits: 7,
    });
  });
});
