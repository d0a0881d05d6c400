/**
 * docs/node.md N1 kernels: the prepare-header gate and the WAL candidate loop.
 * `scanWalCandidatesPlain` is the definition; the TS skipping loop and both
 * engines' windows must give the identical status, stopping index and
 * spentUnits on random damage, for both rules and every budget.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { writeU32, writeU64 } from "../src/format/bytes.js";
import type { WalCandidateScanRequest } from "../src/engine/types.js";
import { scanWalCandidatesPlain, scanWalCandidatesSkipping } from "../src/engine/ts/wal-candidates.js";
import { WAL_OP_AT, WAL_SIZE_AT, walHeaderStatus } from "../src/format/wal.js";
import { buildWal } from "../src/gen/node/wal.js";
import { allEngines } from "./helpers/engines.js";
import { prng } from "./helpers/fixtures.js";

const engines = await allEngines();

type Content = "wal" | "wal-damaged" | "random" | "zero" | "sixes";

function content(kind: Content, length: number, seed: number): Uint8Array {
  const random = prng(seed);
  const bytes = new Uint8Array(length);
  if (kind === "random") for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  if (kind === "sixes") for (let i = 0; i < length; i++) bytes[i] = random() < 0.3 ? 6 : random() < 0.1 ? Math.floor(random() * 256) : 0;
  if (kind === "wal" || kind === "wal-damaged") {
    const built = buildWal({ firstOp: BigInt(1 + Math.floor(random() * 5)), count: 40, random });
    bytes.set(built.bytes.subarray(0, Math.min(length, built.bytes.length)));
    if (kind === "wal-damaged") {
      for (let flips = 0; flips < 1 + Math.floor(random() * 8); flips++) {
        const at = Math.floor(random() * length);
        bytes[at] = random() < 0.5 ? 0 : Math.floor(random() * 256);
      }
      // Now and then a bit-flipped size or op.
      if (built.entries.length > 3 && random() < 0.5) {
        const victim = built.entries[Math.floor(random() * 3)]!;
        if (victim.position + 256 <= length)
          writeU32(bytes, victim.position + WAL_SIZE_AT, random() < 0.5 ? 0xffffffff : Math.floor(random() * 5000));
      }
      if (built.entries.length > 3 && random() < 0.3) {
        const victim = built.entries[1]!;
        if (victim.position + 256 <= length) writeU64(bytes, victim.position + WAL_OP_AT, BigInt(Math.floor(random() * 100)));
      }
    }
  }
  return bytes;
}

const caseArb = fc.record({
  kind: fc.constantFrom<Content>("wal", "wal-damaged", "wal-damaged", "random", "zero", "sixes"),
  length: fc.integer({ min: 256, max: 9000 }),
  seed: fc.nat(),
  from: fc.integer({ min: 0, max: 1000 }),
  span: fc.integer({ min: 0, max: 1000 }),
  fileEndExtra: fc.oneof(fc.constant(0), fc.nat({ max: 600 }), fc.nat({ max: 2 ** 40 })),
  minOp: fc.constantFrom<"null" | "zero" | "small" | "huge">("null", "zero", "small", "small", "huge"),
  rule: fc.constantFrom<"verified" | "structural">("verified", "verified", "structural"),
  spentUnits: fc.oneof(fc.constant(0), fc.nat({ max: 1000 }), fc.nat({ max: 2 ** 45 })),
  limit: fc.oneof(fc.constant(Number.MAX_SAFE_INTEGER), fc.nat({ max: 3000 }), fc.nat({ max: 2 ** 45 })),
});

describe("WAL candidate loop: skip-ahead and both engines match the plain definition", () => {
  it("identical status, index and spentUnits on random damage", () => {
    const windows = engines.map((engine) => engine.openWindow(16384));
    try {
      fc.assert(
        fc.property(caseArb, (params) => {
          const bytes = content(params.kind, params.length, params.seed);
          const lastCandidate = bytes.length - 256;
          const fromIndex = Math.floor(((lastCandidate * params.from) / 1000) * 0.4);
          const toIndex = fromIndex + Math.floor(((lastCandidate + 1 - fromIndex) * params.span) / 1000);
          const request: WalCandidateScanRequest = {
            rule: params.rule,
            fromIndex,
            toIndex,
            fileEndIndex: bytes.length + params.fileEndExtra,
            minOp: params.minOp === "null" ? null : params.minOp === "zero" ? 0n : params.minOp === "small" ? 3n : 1n << 63n,
            spentUnits: params.spentUnits,
            limitUnits: Math.min(Number.MAX_SAFE_INTEGER, params.spentUnits + params.limit),
          };
          const expected = scanWalCandidatesPlain(bytes, request);
          expect(scanWalCandidatesSkipping(bytes, request)).toEqual(expected);
          for (const window of windows) {
            window.view().fill(0xee);
            window.view().set(bytes);
            expect(window.scanWalCandidates(request)).toEqual(expected);
          }
        }),
        { numRuns: 400 },
      );
    } finally {
      for (const window of windows) window.close();
    }
  });

  it("the header gate gives the same status on both engines", () => {
    const windows = engines.map((engine) => engine.openWindow(16384));
    try {
      fc.assert(
        fc.property(caseArb, (params) => {
          const bytes = content(params.kind, params.length, params.seed);
          for (const window of windows) window.view().set(bytes);
          for (let at = 0; at + 256 <= bytes.length; at += 1 + (params.seed % 97)) {
            const expected = walHeaderStatus(bytes, at);
            for (const window of windows) expect(window.walHeaderStatus(at)).toBe(expected);
          }
        }),
        { numRuns: 200 },
      );
    } finally {
      for (const window of windows) window.close();
    }
  });
});
