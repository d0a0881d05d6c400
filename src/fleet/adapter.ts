/**
 * The one place the cluster view reads a replica's partition from a scan
 * report (docs/fleet.md "What is read from a report"). Everything the merge
 * needs is derived here into a `ReplicaView`; nothing else in src/fleet looks
 * at segment fields.
 *
 * Two sources, the first taking precedence where present:
 * 1. The scope of loss (docs/recovery.md §3.7, docs/interfaces.md §9.3): each
 *    segment's ordered `scope` ranges — `proven`, `unreadable` (a null
 *    `lastOffset`: end unknown), `intact`, `torn` (what a cut removes, as its
 *    first header claims) — and the partition's `nextStep`.
 * 2. What a segment whose scope is empty still says (a failed partition has
 *    none): start and end offsets, outcome, walked and file sizes, refusal
 *    codes and their fields, `lastBatch`, `batchChecksumsXxh3` and forward `gaps`.
 */
import type { JsonPartition, JsonRefusal, JsonSegment } from "../report/json.js";
import type { JsonNode } from "../report/node-schema.js";
import { normalize, type Range, subtract } from "./ranges.js";

/** A node section's entry for one partition dir (docs/node.md N9). */
export type JsonNodePartition = JsonNode["partitions"][number];

/** One `scan --ndjson` partition line: the partition, and on a node root its node entry. */
export type PartitionLine = JsonPartition & { node?: JsonNodePartition };

/** Offsets a replica claims once held but cannot prove now, and why. */
export interface Unreadable {
  range: Range;
  /** The end is not known (the report says where the loss starts, not where it ends): `to` is a lower bound. */
  openEnded: boolean;
  /** The refusal code (or `Hole`, `EmptyNonTailSegment`) that says these offsets were there. */
  code: string;
}

/** What a planned cut removes from one segment (docs/repair.md §6.2). */
export interface Cut {
  /** Start offset of the segment cut. */
  segment: bigint;
  /** The first offset the cut removes: one past the proven end of the segment. */
  fromOffset: bigint;
  bytes: number;
  /** The offsets the torn bytes claim (the scope's `torn` range), or null when its header does not decode. */
  claimed: Range | null;
}

export interface ReplicaRefusal {
  code: string;
  /** Start offset of the segment it concerns (null: a partition-level refusal). */
  segment: bigint | null;
  message: string;
}

export interface ReplicaView {
  /** The report's partition path on this node. */
  path: string;
  verdict: JsonPartition["verdict"];
  action: JsonPartition["action"];
  /**
   * The scan could not judge the partition (`error` set), or its salvage record could not be read (a `failed`
   * finding: whether offsets were recorded as lost is unknown): nothing is known of its offsets.
   */
  failed: boolean;
  error: string | null;
  /** Offsets whose batches verify and that the planned repair keeps, normalized, without the forward gaps. */
  proven: Range[];
  /**
   * Offsets a segment's forward gaps skip (docs/recovery.md §3.4), normalized:
   * minted (a later batch's base offset proves it) but not held here, such as
   * the offsets a salvage dropped (docs/repair.md §6.5).
   */
  gaps: Range[];
  /** Offsets that verify past a damage (scope-of-loss `intact`), normalized: held, though the replica is refused. */
  intact: Range[];
  unreadable: Unreadable[];
  cuts: Cut[];
  refusals: ReplicaRefusal[];
  /** The lowest segment start offset (null: no segment). */
  firstOffset: bigint | null;
  /** Every segment's last verified batch with messages (divergence check). */
  lastBatches: { segment: bigint; baseOffset: bigint; checksum: bigint }[];
  /** Each segment's .log path by its start offset (the commands that look at a segment name it). */
  logPaths: Map<bigint, string>;
  /** Deep-mode digests of clean segments whose walk covered the whole file. */
  segmentDigests: { segment: bigint; endOffset: bigint; bytes: number; digest: bigint }[];
  /** Stored consumer and group offsets in this partition dir (node root reports only). */
  offsets: { kind: "consumer" | "group"; id: number; offset: bigint }[];
  /** The partition's `nextStep` (docs/repair.md §6.4). */
  nextSteps: string[];
}

const WALK_REFUSALS = new Set(["InteriorDamage", "UnverifiedResidue", "OffsetDiscontinuity"]);

/**
 * The claim a forward gap makes (docs/fleet.md "What is read from a report"):
 * its offsets were minted, since a later batch starts past them, and this
 * replica does not hold them; held by no peer, they are lost on every replica.
 */
export const FORWARD_GAP = "ForwardGap";

/** The claim a salvage's record makes (docs/repair.md §6.6): the replica dropped these offsets and recorded them as lost. */
export const SALVAGE_LOST = "SalvageLostOffsets";

/** A scope range's offsets, when it names any (both ends may be null: see docs/interfaces.md §9.3). */
function offsetsOf(range: JsonSegment["scope"][number]): { from: bigint; to: bigint | null } | null {
  return range.firstOffset === null
    ? null
    : { from: BigInt(range.firstOffset), to: range.lastOffset === null ? null : BigInt(range.lastOffset) };
}

/** What a replica's segments say, gathered segment by segment. */
interface SegmentFacts {
  proven: Range[];
  intact: Range[];
  unreadable: Unreadable[];
  cuts: Cut[];
  refusals: ReplicaRefusal[];
  lastBatches: ReplicaView["lastBatches"];
  gaps: Range[];
  logPaths: Map<bigint, string>;
  segmentDigests: ReplicaView["segmentDigests"];
}

/** The partition's view of one replica. */
export function replicaView(line: PartitionLine): ReplicaView {
  const segments = line.segments;
  const facts: SegmentFacts = {
    proven: [],
    intact: [],
    unreadable: [],
    cuts: [],
    refusals: [],
    lastBatches: [],
    gaps: [],
    logPaths: new Map(),
    segmentDigests: [],
  };
  for (const [i, segment] of segments.entries()) addSegment(facts, segment, segments[i + 1]);
  addPartitionRefusal(facts, line.refusal);
  const { proven, intact, unreadable, cuts, refusals } = facts;
  const offsets: ReplicaView["offsets"] = [];
  for (const entry of line.node?.offsets ?? []) {
    if (entry.offset !== null) offsets.push({ kind: entry.kind, id: entry.id, offset: BigInt(entry.offset) });
  }
  // docs/repair.md §6.6: offsets a salvage recorded as lost are a claim of loss, whatever the bytes now show.
  for (const finding of line.findings) {
    if (finding.code !== "SalvageLostOffsets" || finding.firstOffset === null) continue;
    const from = BigInt(finding.firstOffset);
    const to = finding.lastOffset === null ? from : BigInt(finding.lastOffset);
    unreadable.push({ range: { from, to }, openEnded: finding.lastOffset === null, code: SALVAGE_LOST });
  }
  // docs/repair.md §6.6: a salvage record that cannot be read (a `failed` finding) leaves unknown whether this replica
  // dropped offsets; its bytes alone would pass for whole, so the replica is not judged (failed), never held clean.
  const unreadableRecord = line.findings.find((finding) => finding.severity === "failed");
  const failed = line.error !== null || line.verdict === "failed" || unreadableRecord !== undefined;
  // What a replica proves never includes what a gap skips (the scope's proven range spans the gap).
  const skipped = normalize(facts.gaps);
  for (const range of skipped) unreadable.push({ range, openEnded: false, code: FORWARD_GAP });
  return {
    path: line.path,
    verdict: line.verdict,
    action: line.action,
    failed,
    error:
      line.error !== null
        ? `${line.error.code}: ${line.error.message}`
        : unreadableRecord !== undefined
          ? `${unreadableRecord.code}: ${unreadableRecord.message}`
          : null,
    proven: failed ? [] : subtract(normalize(proven), skipped),
    intact: failed ? [] : subtract(normalize(intact), skipped),
    gaps: failed ? [] : skipped,
    unreadable: failed ? [] : unreadable.filter((u) => u.range.to >= u.range.from),
    cuts: failed ? [] : cuts,
    refusals,
    firstOffset: segments[0] === undefined ? null : BigInt(segments[0].startOffset),
    lastBatches: facts.lastBatches,
    logPaths: facts.logPaths,
    segmentDigests: facts.segmentDigests,
    offsets,
    nextSteps: [line.nextStep],
  };
}

/** One segment's facts; `next` (the following segment) bounds the offsets it can hold. */
function addSegment(facts: SegmentFacts, segment: JsonSegment, next: JsonSegment | undefined): void {
  const start = BigInt(segment.startOffset);
  const end = segment.endOffset === null ? null : BigInt(segment.endOffset);
  /** The last offset this segment can hold: one before the next segment's start, when there is one. */
  const bound = next === undefined ? null : BigInt(next.startOffset) - 1n;
  facts.logPaths.set(start, segment.logPath);
  if (segment.lastBatch !== null) {
    facts.lastBatches.push({
      segment: start,
      baseOffset: BigInt(segment.lastBatch.baseOffset),
      checksum: BigInt(segment.lastBatch.checksum),
    });
  }
  // A forward gap: the offsets from the expected one up to the one found are not in this segment.
  for (const gap of segment.gaps) facts.gaps.push({ from: BigInt(gap.expectedOffset), to: BigInt(gap.foundOffset) - 1n });
  if (segment.batchChecksumsXxh3 !== null && segment.outcome === "clean" && end !== null && segment.walkedSize === segment.messagesSize) {
    facts.segmentDigests.push({ segment: start, endOffset: end, bytes: segment.messagesSize, digest: BigInt(segment.batchChecksumsXxh3) });
  }
  if (segment.refusal !== null) facts.refusals.push(refusalOf(segment.refusal, start));
  // Scope-of-loss ranges take precedence over what the offsets and outcome imply.
  const claimed = segment.scope.length > 0 ? addScopeRanges(facts, segment, bound) : addOutcomeRanges(facts, segment, start, end, bound);
  if (segment.outcome === "torn-tail") {
    facts.cuts.push({
      segment: start,
      fromOffset: end === null ? start : end + 1n,
      bytes: segment.messagesSize - segment.walkedSize,
      claimed,
    });
  }
}

/** A segment's scope-of-loss ranges; returns the torn range its cut claims, if any. */
function addScopeRanges(facts: SegmentFacts, segment: JsonSegment, bound: bigint | null): Range | null {
  const code = segment.refusal?.code ?? segment.outcome;
  let claimed: Range | null = null;
  for (const range of segment.scope) {
    const offsets = offsetsOf(range);
    if (offsets === null) continue;
    if (range.kind === "proven" && offsets.to !== null) facts.proven.push({ from: offsets.from, to: offsets.to });
    else if (range.kind === "intact" && offsets.to !== null) facts.intact.push({ from: offsets.from, to: offsets.to });
    else if (range.kind === "unreadable") {
      // An unknown end is bounded by the next segment's start; in the last segment it stays open.
      if (offsets.to !== null) facts.unreadable.push({ range: { from: offsets.from, to: offsets.to }, openEnded: false, code });
      else if (bound !== null) facts.unreadable.push({ range: { from: offsets.from, to: bound }, openEnded: false, code });
      else facts.unreadable.push({ range: { from: offsets.from, to: offsets.from }, openEnded: true, code });
    } else if (range.kind === "torn" && offsets.to !== null) claimed = { from: offsets.from, to: offsets.to };
  }
  return claimed;
}

/** A segment without scope ranges: what its outcome and offsets imply. Claims no torn range. */
function addOutcomeRanges(facts: SegmentFacts, segment: JsonSegment, start: bigint, end: bigint | null, bound: bigint | null): null {
  if (segment.outcome === "clean" || segment.outcome === "torn-tail") {
    if (end !== null) facts.proven.push({ from: start, to: end });
  } else if (segment.outcome === "refused") {
    // A walk refusal proves the prefix before the damage; an index refusal proves nothing.
    const walked = segment.refusal !== null && WALK_REFUSALS.has(segment.refusal.code) && end !== null;
    if (walked) facts.proven.push({ from: start, to: end });
    const from = walked ? end + 1n : start;
    const code = segment.refusal?.code ?? "refused";
    if (bound !== null) {
      if (bound >= from) facts.unreadable.push({ range: { from, to: bound }, openEnded: false, code });
    } else {
      // The last segment: where its offsets end is not known; the index claims up to its last entry at least.
      const indexed = segment.refusal?.code === "SizeDivergence" ? BigInt(segment.refusal.indexedOffset) : from;
      facts.unreadable.push({ range: { from, to: indexed > from ? indexed : from }, openEnded: true, code });
    }
  }
  return null;
}

/** Partition-level refusals, and the offsets missing between segments they name. */
function addPartitionRefusal(facts: SegmentFacts, refusal: JsonRefusal | null): void {
  if (refusal === null) return;
  if (!facts.refusals.some((r) => r.code === refusal.code)) facts.refusals.push(refusalOf(refusal, null));
  if (refusal.code === "Hole") {
    const range = { from: BigInt(refusal.previousEnd) + 1n, to: BigInt(refusal.nextStart) - 1n };
    facts.unreadable.push({ range, openEnded: false, code: "Hole" });
  } else if (refusal.code === "EmptyNonTailSegment") {
    const range = { from: BigInt(refusal.emptyStart), to: BigInt(refusal.nextStart) - 1n };
    facts.unreadable.push({ range, openEnded: false, code: "EmptyNonTailSegment" });
  }
}

function refusalOf(refusal: JsonRefusal, segment: bigint | null): ReplicaRefusal {
  return { code: refusal.code, segment: "segment" in refusal ? BigInt(refusal.segment) : segment, message: refusal.message };
}

/**
 * `streams/<s>/topics/<t>/partitions/<p>` at the end of a path (either
 * separator), or null. The root is `[\s\S]*?`, not `.*?`: a path may hold any
 * byte but NUL, line terminators included, and `.` stops at them.
 */
const PARTITION_PATH = /^([\s\S]*?)[\\/]?streams[\\/](\d+)[\\/]topics[\\/](\d+)[\\/]partitions[\\/](\d+)[\\/]?$/;

export interface PartitionIdentity {
  /** `streams/<s>/topics/<t>/partitions/<p>`, the ids as written in the path: the merge key, in discovery's path order. */
  key: string;
  streamId: number;
  topicId: number;
  partitionId: number;
  /** The path before `streams/` (the node root the partition lies under). */
  root: string;
}

/** The partition a report path names, from `streams/<s>/topics/<t>/partitions/<p>` (null: not such a path). */
export function partitionIdentity(path: string): PartitionIdentity | null {
  const match = PARTITION_PATH.exec(path);
  if (match === null) return null;
  const [, root, s, t, p] = match;
  return {
    key: `streams/${s}/topics/${t}/partitions/${p}`,
    streamId: Number(s),
    topicId: Number(t),
    partitionId: Number(p),
    root: root === "" ? "." : root!,
  };
}
