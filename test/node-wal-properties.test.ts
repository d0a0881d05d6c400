/**
 * docs/node.md N1 properties under random damage to a WAL: a torn-tail verdict
 * never cuts an intact, verified entry whose op extends the proven ops; every
 * engine and window size gives the identical report; a smaller budget only
 * ever turns a verdict into WalUnverifiedResidue.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { stringifyJson } from "../src/report/json.js";
import { buildWal } from "../src/gen/node/wal.js";
import { allEngines } from "./helpers/engines.js";
import { prng } from "./helpers/fixtures.js";
import { scanWalBytes } from "./helpers/node-wal.js";

const engines = await allEngines();
const WINDOWS = [4096, 4096 + 1000, 1 << 20];

type Damage =
  | { kind: "cut"; at: number }
  | { kind: "flip"; at: number; value: number }
  | { kind: "zero"; at: number; length: number }
  | { kind: "garbage"; length: number; seed: number }
  | { kind: "copy"; from: number; to: number; length: number };

const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({
    kind: fc.constant("cut" as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x) as unknown as fc.Arbitrary<number>,
  }),
  fc.record({
    kind: fc.constant("flip" as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }) as unknown as fc.Arbitrary<number>,
    value: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({
    kind: fc.constant("zero" as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }) as unknown as fc.Arbitrary<number>,
    length: fc.integer({ min: 1, max: 2000 }),
  }),
  fc.record({ kind: fc.constant("garbage" as const), length: fc.integer({ min: 1, max: 3000 }), seed: fc.nat() }),
  fc.record({
    kind: fc.constant("copy" as const),
    from: fc.double({ min: 0, max: 1, noNaN: true }) as unknown as fc.Arbitrary<number>,
    to: fc.double({ min: 0, max: 1, noNaN: true }) as unknown as fc.Arbitrary<number>,
    length: fc.integer({ min: 1, max: 1500 }),
  }),
);

function applyDamage(original: Uint8Array, damages: readonly Damage[]): Uint8Array {
  let bytes = original.slice();
  for (const damage of damages) {
    const pos = (fraction: number): number => Math.min(bytes.length, Math.floor(fraction * bytes.length));
    switch (damage.kind) {
      case "cut":
        bytes = bytes.slice(0, pos(damage.at));
        break;
      case "flip":
        if (bytes.length > 0) bytes[Math.min(bytes.length - 1, pos(damage.at))]! ^= damage.value;
        break;
      case "zero":
        bytes.fill(0, pos(damage.at), pos(damage.at) + damage.length);
        break;
      case "garbage": {
        const random = prng(damage.seed);
        const tail = Uint8Array.from({ length: damage.length }, () => (random() < 0.2 ? 6 : Math.floor(random() * 256)));
        const grown = new Uint8Array(bytes.length + tail.length);
        grown.set(bytes);
        grown.set(tail, bytes.length);
        bytes = grown;
        break;
      }
      case "copy": {
        const from = pos(damage.from);
        const to = pos(damage.to);
        const chunk = bytes.slice(from, Math.min(bytes.length, from + damage.length));
        bytes.set(chunk.subarray(0, Math.max(0, bytes.length - to)), to);
        break;
      }
    }
  }
  return bytes;
}

function equalRange(a: Uint8Array, b: Uint8Array, at: number, length: number): boolean {
  if (at + length > a.length || at + length > b.length) return false;
  for (let i = at; i < at + length; i++) if (a[i] !== b[i]) return false;
  return true;
}

describe("random WAL damage (docs/node.md N1)", () => {
  it("never cuts an intact chain-extending entry; identical across engines, windows; budgets only add WalUnverifiedResidue", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.nat(),
        fc.array(damageArb, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 20_000 }),
        async (count, seed, damages, smallBudget) => {
          const built = buildWal({ firstOp: 1n, count, random: prng(seed) });
          const bytes = applyDamage(built.bytes, damages);
          const reports = new Map<string, string>();
          for (const budget of [undefined, smallBudget]) {
            const texts: string[] = [];
            for (const engine of engines) {
              for (const windowBytes of WINDOWS) {
                const scan = await scanWalBytes(bytes, engine, {
                  windowBytes,
                  ...(budget === undefined ? {} : { probeBudgetUnits: budget }),
                });
                texts.push(stringifyJson({ ...scan.report, path: "", findings: scan.report.findings.map((f) => ({ ...f, path: "" })) }, 0));
                const residue = scan.report.residue;
                const codes = scan.report.findings.map((f) => f.code);
                if (residue !== null && codes.includes("WalTornTail")) {
                  const maxProven = scan.report.ops?.last ?? -1n;
                  for (const entry of built.entries) {
                    const intact = equalRange(bytes, built.bytes, entry.position, entry.size);
                    if (intact && entry.position > residue.damagePosition && entry.op > maxProven) {
                      throw new Error(`torn tail at ${residue.damagePosition} would cut intact op ${entry.op} at ${entry.position}`);
                    }
                  }
                }
              }
            }
            expect(new Set(texts).size).toBe(1);
            reports.set(String(budget), texts[0]!);
          }
          const full = JSON.parse(reports.get("undefined")!) as { findings: { code: string }[] };
          const limited = JSON.parse(reports.get(String(smallBudget))!) as { findings: { code: string }[] };
          const fullCodes = full.findings.map((f) => f.code);
          const limitedCodes = limited.findings.map((f) => f.code);
          if (JSON.stringify(fullCodes) !== JSON.stringify(limitedCodes)) {
            expect(limitedCodes).toContain("WalUnverifiedResidue");
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
