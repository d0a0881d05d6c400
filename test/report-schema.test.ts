/**
 * The `scan --json` report schema is defined once (src/report/schema.ts): the
 * JSON types derive from it, validateJsonReport checks against it, and
 * docs/report.schema.json is generated from it (`npm run schema`).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { JsonScanReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { reportJsonSchemaText } from "../src/report/schema.js";

const committed = fileURLToPath(new URL("../docs/report.schema.json", import.meta.url));

const good: JsonScanReport = {
  segscan: "1.0.0",
  engine: "ts",
  verdict: "failed",
  options: { verify: "tail", replicaCount: 1, probeBudgetUnits: 10, windowBytes: 4096 },
  partitions: [
    {
      path: "p",
      verdict: "refused",
      action: "tombstone",
      refusal: { code: "Hole", message: "m", previousStart: "0", previousEnd: "9", nextStart: "20" },
      error: null,
      budget: { limitUnits: 10, spentUnits: 0 },
      sweep: [],
      ignored: [{ path: "p/x.log", kind: "bad-segment-name", message: "not a segment" }],
      segments: [
        {
          startOffset: "0",
          endOffset: "9",
          startTimestamp: "1",
          endTimestamp: "2",
          messageCount: 10,
          logPath: "p/0.log",
          messagesSize: 5000,
          indexSize: 24,
          arm: "indexed",
          outcome: "clean",
          walkedSize: 5000,
          residue: null,
          gaps: [],
          index: { entries: 1, trailingBytes: 0, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
          refusal: null,
          warnings: [{ code: "OversizedBatch", position: 0, batchLength: 5000, message: "a batch over the cap, verified" }],
          lastBatch: { baseOffset: "9", checksum: "18446744073709551615" },
          batchChecksumsXxh3: null,
          scope: [
            {
              kind: "proven",
              firstOffset: "0",
              lastOffset: "9",
              messages: 10,
              bytes: 5000,
              tornEvidence: null,
              startPosition: 0,
              endPosition: 5000,
            },
          ],
        },
      ],
      scope: [
        { kind: "proven", firstOffset: "0", lastOffset: "9", messages: 10, bytes: 5000, tornEvidence: null },
        { kind: "missing", firstOffset: "10", lastOffset: "19", messages: 10, bytes: 0, tornEvidence: null },
      ],
      nextStep: "restore this partition from a backup: segscan proves 0..9 here, 10..19 cannot be proven; keep these files as evidence",
      findings: [],
    },
    {
      path: "q",
      verdict: "failed",
      action: "retry",
      refusal: null,
      error: { code: "NoSegments", path: "q", message: "no segment" },
      budget: { limitUnits: 10, spentUnits: 0 },
      sweep: [],
      ignored: [],
      segments: [],
      scope: [],
      nextStep: "retry: fix what stopped the scan (NoSegments) and scan again; nothing was concluded or changed",
      findings: [],
    },
  ],
  summary: {
    partitions: 2,
    clean: 0,
    repairable: 0,
    refused: 1,
    failed: 1,
    findings: { warn: 0, failed: 0 },
    bytesScanned: 0,
    elapsedMs: 1.5,
  },
};

// biome-ignore lint/suspicious/noExplicitAny: each case edits an arbitrary path of a copy, on purpose into wrong types
type Editable = Record<string, any>;

function mutate(edit: (value: Editable) => void): string[] {
  const copy = structuredClone(good) as Editable;
  edit(copy);
  return validateJsonReport(copy);
}

describe("the report schema", () => {
  it("docs/report.schema.json is what `npm run schema` generates from src/report/schema.ts", () => {
    expect(readFileSync(committed, "utf8")).toBe(reportJsonSchemaText());
  });

  it("is closed JSON Schema with the agreed fields: segment warnings, partition ignored, NoSegments/NotRegularFile", () => {
    const schema = JSON.parse(reportJsonSchemaText());
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.additionalProperties).toBe(false);
    const partition = schema.properties.partitions.items;
    expect(partition.required).toContain("ignored");
    expect(partition.properties.segments.items.required).toContain("warnings");
    const codes = partition.properties.error.anyOf[0].properties.code.anyOf.map((member: { const: string }) => member.const);
    expect(codes).toEqual(expect.arrayContaining(["NoSegments", "NotRegularFile", "ReadFailure"]));
  });

  it("accepts a well-formed report with every new field", () => {
    expect(validateJsonReport(good)).toEqual([]);
  });

  it("names each defect once: types, enums, u64 text and range, refusal fields by code, extra and missing keys, counts", () => {
    expect(mutate((v) => (v.partitions[0].refusal.nextStart = 20))).toEqual(["$.partitions[0].refusal.nextStart: Expected string, got 20"]);
    expect(mutate((v) => (v.partitions[0].refusal.previousEnd = "18446744073709551616"))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].refusal.previousEnd = "18446744073709551615"))).toEqual([]);
    expect(mutate((v) => (v.partitions[0].segments[0].startOffset = "007"))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].refusal.code = "Nope"))).toEqual([
      expect.stringMatching(/^\$\.partitions\[0\]\.refusal: expected a refusal with a known code/),
    ]);
    expect(mutate((v) => (v.partitions[0].refusal = { code: "Overlap", message: "m", previousStart: "0", previousEnd: "9" }))).toEqual([
      "$.partitions[0].refusal.nextStart: missing",
    ]);
    expect(mutate((v) => (v.partitions[0].refusal.message = " "))).toHaveLength(1);
    expect(mutate((v) => (v.ignored = []))).toEqual(["$.ignored: not part of the report contract"]);
    expect(mutate((v) => (v.partitions[0].bytesScanned = 1))).toEqual(["$.partitions[0].bytesScanned: not part of the report contract"]);
    expect(mutate((v) => delete v.partitions[0].segments[0].warnings)).toEqual(["$.partitions[0].segments[0].warnings: missing"]);
    expect(mutate((v) => (v.partitions[0].segments[0].warnings[0].code = "Big"))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].ignored[0].kind = "weird"))).toEqual([
      '$.partitions[0].ignored[0].kind: expected one of bad-segment-name|not-regular-file|directory-symlink, got "weird"',
    ]);
    expect(mutate((v) => (v.partitions[1].error.code = "Bogus"))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].segments[0].endOffset = 9))).toHaveLength(1);
    expect(mutate((v) => (v.options.verify = "deep"))).toEqual(['$.options.verify: expected one of tail|full, got "deep"']);
    expect(mutate((v) => (v.options.maxBatchBytes = 1024))).toEqual([]);
    expect(mutate((v) => (v.summary.bytesScanned = -1))).toHaveLength(1);
    expect(mutate((v) => (v.summary.refused = 0))).toEqual(["$.summary.refused: 0 but 1 partitions are refused"]);
    expect(mutate((v) => (v.summary.partitions = 3))).toEqual(["$.summary.partitions: 3 but 2 partitions"]);
  });

  it("checks the scope of loss and the next step (docs/interfaces.md §9.3)", () => {
    expect(mutate((v) => delete v.partitions[0].scope)).toEqual(["$.partitions[0].scope: missing"]);
    expect(mutate((v) => delete v.partitions[0].nextStep)).toEqual(["$.partitions[0].nextStep: missing"]);
    expect(mutate((v) => (v.partitions[0].nextStep = " "))).toHaveLength(1);
    expect(mutate((v) => delete v.partitions[0].segments[0].scope)).toEqual(["$.partitions[0].segments[0].scope: missing"]);
    expect(mutate((v) => (v.partitions[0].scope[1].kind = "lost"))).toEqual([
      '$.partitions[0].scope[1].kind: expected one of proven|unreadable|intact|torn|missing, got "lost"',
    ]);
    expect(mutate((v) => (v.partitions[0].scope[0].firstOffset = 0))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].scope[0].startPosition = 0))).toEqual([
      "$.partitions[0].scope[0].startPosition: not part of the report contract",
    ]);
    expect(mutate((v) => delete v.partitions[0].segments[0].scope[0].endPosition)).toEqual([
      "$.partitions[0].segments[0].scope[0].endPosition: missing",
    ]);
    expect(mutate((v) => (v.partitions[0].segments[0].scope[0].tornEvidence = "maybe"))).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0].segments[0].scope[0].tornEvidence = "complete-batch"))).toEqual([]);
    expect(mutate((v) => (v.partitions[0].scope[1].lastOffset = null))).toEqual([]);
  });
});

describe("validateJsonReport on a minimal report", () => {
  it("rejects wrong types, unknown keys and bad counts", () => {
    const minimal = {
      segscan: "1.0.0",
      engine: "ts",
      verdict: "refused",
      options: { verify: "tail", replicaCount: 1, probeBudgetUnits: 10, windowBytes: 4096 },
      partitions: [
        {
          path: "p",
          verdict: "refused",
          action: "tombstone",
          refusal: { code: "Hole", message: "m", previousStart: "0", previousEnd: "9", nextStart: "20" },
          error: null,
          budget: { limitUnits: 10, spentUnits: 0 },
          sweep: [],
          segments: [],
          ignored: [{ path: "p/0x88.log", kind: "bad-segment-name", message: "m" }],
          scope: [{ kind: "proven", firstOffset: null, lastOffset: null, messages: 0, bytes: 0, tornEvidence: null }],
          nextStep: "restore this partition from a backup",
          findings: [],
        },
      ],
      summary: {
        partitions: 1,
        clean: 0,
        repairable: 0,
        refused: 1,
        failed: 0,
        findings: { warn: 0, failed: 0 },
        bytesScanned: 0,
        elapsedMs: 1,
      },
    };
    expect(validateJsonReport(minimal)).toEqual([]);
    const mutate = (edit: (value: typeof minimal) => void): string[] => {
      const copy = structuredClone(minimal);
      edit(copy);
      return validateJsonReport(copy);
    };
    expect(mutate((v) => ((v.partitions[0]!.refusal as Record<string, unknown>).nextStart = 20))).toHaveLength(1);
    expect(mutate((v) => ((v as Record<string, unknown>).ignored = []))).toHaveLength(1);
    expect(mutate((v) => delete (v.partitions[0] as Record<string, unknown>).ignored)).toHaveLength(1);
    expect(mutate((v) => (v.partitions[0]!.ignored[0]!.kind = "odd"))).toHaveLength(1);
    expect(mutate((v) => ((v.partitions[0] as Record<string, unknown>).bytesScanned = 1))).toHaveLength(1);
    expect(mutate((v) => (v.summary.refused = 0))).toHaveLength(1);
    expect(mutate((v) => ((v.options as Record<string, unknown>).verify = "deep"))).toHaveLength(1);
    expect(mutate((v) => ((v.partitions[0]!.refusal as Record<string, unknown>).code = "Nope"))).toHaveLength(1);
  });
});
