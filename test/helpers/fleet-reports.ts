/**
 * Synthetic `scan --json` partition lines and `--ndjson` reports for the
 * fleet tests and the fleet memory check: schema-valid shapes built from a
 * small model (per segment: start, proven end, outcome), no bytes scanned.
 */
import { scanVerdict } from "../../src/domain/scan.js";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { JsonPartition, JsonRefusal, JsonSegment } from "../../src/report/json.js";
import { SEGSCAN_VERSION } from "../../src/version.js";

export interface ModelSegment {
  start: bigint;
  /** Last proven offset (null: none proven). */
  end: bigint | null;
  outcome: "clean" | "torn-tail" | "refused";
  /** For refused segments: a walk refusal (InteriorDamage) proves [start, end]; an index refusal none. */
  refusal?: "InteriorDamage" | "IndexEntriesNotMonotone";
  lastBatch?: { baseOffset: bigint; checksum: bigint } | null;
}

export function segmentJson(dir: string, model: ModelSegment): JsonSegment {
  const size = 4096;
  const start = model.start.toString();
  const refusal: JsonRefusal | null =
    model.outcome !== "refused"
      ? null
      : model.refusal === "IndexEntriesNotMonotone"
        ? { code: "IndexEntriesNotMonotone", message: "index entries go backwards", segment: start, entryIndex: 1 }
        : {
            code: "InteriorDamage",
            message: "damage with survivors after it",
            segment: start,
            damagePosition: 2048,
            survivorPosition: 3072,
          };
  const walked = model.outcome === "clean" ? size : 2048;
  return {
    startOffset: start,
    endOffset: model.end === null ? null : model.end.toString(),
    startTimestamp: model.end === null ? null : "1717200000000000",
    endTimestamp: model.end === null ? null : "1717200000100000",
    messageCount: model.outcome === "clean" && model.end !== null ? Number(model.end - model.start + 1n) : null,
    logPath: `${dir}/${start.padStart(20, "0")}.log`,
    messagesSize: size,
    indexSize: 16,
    arm: "indexed",
    outcome: model.outcome,
    walkedSize: model.outcome === "refused" && model.refusal === "IndexEntriesNotMonotone" ? 0 : walked,
    residue:
      model.outcome === "clean" || (model.outcome === "refused" && model.refusal === "IndexEntriesNotMonotone")
        ? null
        : {
            damagePosition: 2048,
            bytes: size - 2048,
            allZero: false,
            probe: model.outcome === "refused" ? "survivor" : "no-survivor",
            survivorPosition: model.outcome === "refused" ? 3072 : null,
            spentUnits: 10,
            tornEvidence: "unverifiable",
          },
    gaps: [],
    warnings: [],
    index: { entries: 1, trailingBytes: 0, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
    refusal,
    lastBatch:
      model.lastBatch !== undefined
        ? model.lastBatch === null
          ? null
          : { baseOffset: model.lastBatch.baseOffset.toString(), checksum: model.lastBatch.checksum.toString() }
        : model.end === null
          ? null
          : { baseOffset: model.end.toString(), checksum: ((model.end * 2654435761n) % (1n << 64n)).toString() },
    batchChecksumsXxh3: null,
    scope: scopeOf(model, size, walked),
  };
}

type ScopeRange = JsonSegment["scope"][number];

const range = (
  kind: ScopeRange["kind"],
  first: bigint | null,
  last: bigint | null,
  startPosition: number,
  endPosition: number,
  tornEvidence: ScopeRange["tornEvidence"] = null,
): ScopeRange => ({
  kind,
  firstOffset: first === null ? null : first.toString(),
  lastOffset: last === null ? null : last.toString(),
  messages: first !== null && last !== null ? Number(last - first + 1n) : null,
  bytes: endPosition - startPosition,
  tornEvidence,
  startPosition,
  endPosition,
});

/**
 * The scope of loss a scan reports for the model (docs/interfaces.md §9.3): the
 * proven prefix, then a torn tail (its header claims nothing decodable) or, for
 * a refusal, an unreadable range whose end no survivor bounds.
 */
function scopeOf(model: ModelSegment, size: number, walked: number): ScopeRange[] {
  if (model.outcome === "clean") return [range("proven", model.start, model.end, 0, size)];
  if (model.outcome === "torn-tail")
    return [range("proven", model.start, model.end, 0, walked), range("torn", null, null, walked, size, "unverifiable")];
  if (model.refusal === "IndexEntriesNotMonotone")
    return [range("proven", null, null, 0, 0), range("unreadable", model.start, null, 0, size)];
  const from = model.end === null ? model.start : model.end + 1n;
  return [range("proven", model.start, model.end, 0, walked), range("unreadable", from, null, walked, size)];
}

export function partitionJson(dir: string, segments: readonly ModelSegment[]): JsonPartition {
  const refused = segments.some((s) => s.outcome === "refused");
  const torn = segments.some((s) => s.outcome === "torn-tail");
  const firstRefusal = segments.map((s) => segmentJson(dir, s).refusal).find((r) => r !== null) ?? null;
  return {
    path: dir,
    verdict: refused ? "refused" : torn ? "repairable" : "clean",
    action: refused ? "rebuild-from-peers" : torn ? "repair" : "serve",
    refusal: firstRefusal,
    error: null,
    budget: { limitUnits: 100, spentUnits: 0 },
    sweep: [],
    ignored: [],
    segments: segments.map((s) => segmentJson(dir, s)),
    scope: segments.flatMap((s) =>
      segmentJson(dir, s).scope.map(({ startPosition: _start, endPosition: _end, ...partitionRange }) => partitionRange),
    ),
    nextStep: refused ? "rebuild this partition from a replica" : torn ? "segscan repair <partition> --apply" : "nothing to do",
    findings: [],
  };
}

export function summaryOf(partitions: readonly Pick<JsonPartition, "verdict">[]) {
  const count = (verdict: string) => partitions.filter((p) => p.verdict === verdict).length;
  return {
    partitions: partitions.length,
    clean: count("clean"),
    repairable: count("repairable"),
    refused: count("refused"),
    failed: count("failed"),
    findings: { warn: 0, failed: 0 },
    bytesScanned: 0,
    elapsedMs: 1,
  };
}

export const reportHeader = (summary: ReturnType<typeof summaryOf>) => ({
  segscan: SEGSCAN_VERSION,
  engine: "ts" as const,
  // docs/node.md N0: the scan's one verdict (no node section here: the partitions' worst).
  verdict: scanVerdict({ summary }),
  options: { verify: "tail" as const, replicaCount: 3, probeBudgetUnits: 100, windowBytes: 65536 },
  summary,
});

/**
 * Writes an `--ndjson` report of `count` partitions under `root` (streams/1/topics/<t>/partitions/<p>,
 * in path order), each from `model(index)`, line by line (flat memory).
 */
export async function writeSyntheticNdjson(
  path: string,
  root: string,
  count: number,
  model: (index: number) => ModelSegment[],
): Promise<void> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push(`streams/1/topics/${Math.floor(i / 100) + 1}/partitions/${(i % 100) + 1}`);
  keys.sort();
  const stream = createWriteStream(path);
  const verdicts = { clean: 0, repairable: 0, refused: 0, failed: 0 };
  for (const [i, key] of keys.entries()) {
    const line = partitionJson(`${root}/${key}`, model(i));
    verdicts[line.verdict]++;
    if (!stream.write(`${JSON.stringify(line)}\n`)) await once(stream, "drain");
  }
  const summary = { partitions: count, ...verdicts, findings: { warn: 0, failed: 0 }, bytesScanned: 0, elapsedMs: 1 };
  stream.end(`${JSON.stringify(reportHeader(summary))}\n`);
  await once(stream, "finish");
}

/** A partition line whose scan failed (nothing judged): the shape `scan` writes for a read error. */
export function failedPartitionJson(dir: string): JsonPartition {
  return {
    ...partitionJson(dir, []),
    verdict: "failed",
    action: "retry",
    error: { code: "ReadFailure", path: dir, message: "EIO: i/o error, read" },
    nextStep: "fix the read error and scan again",
  };
}

/**
 * Writes an `--ndjson` report of the given partition lines (in the order
 * given) and its summary line; `typed` adds the `type` field every line may
 * carry (`partition`, `summary`).
 */
export function ndjsonReportText(lines: readonly JsonPartition[], options: { typed?: boolean } = {}): string {
  const type = (kind: string) => (options.typed ? { type: kind } : {});
  const body = lines.map((line) => `${JSON.stringify({ ...type("partition"), ...line })}\n`).join("");
  return `${body}${JSON.stringify({ ...type("summary"), ...reportHeader({ ...summaryOf(lines), bytesScanned: 0, elapsedMs: 1 }) })}\n`;
}
