/**
 * The cluster view of one partition (docs/fleet.md): the replicas' views side
 * by side, the offsets held somewhere, the offsets held nowhere, which replica
 * to rebuild each damaged one from, lagging replicas, divergent batches, and
 * stored consumer offsets past every replica's head. Pure: the views come from
 * ./adapter.ts, the result is the `fleet --json` shape (./schema.ts).
 */
import { assert } from "../assert.js";
import { hex64 } from "../format/bytes.js";
import { formatCount } from "../report/units.js";
import type { JsonNode } from "../report/node-schema.js";
import type { JsonScanReport } from "../report/json.js";
import { FORWARD_GAP, type PartitionIdentity, type PartitionLine, type ReplicaView, replicaView } from "./adapter.js";
import { type Range, intersect, normalize, rangeSize, subtract, totalSize, union } from "./ranges.js";
import type {
  ClusterVerdict,
  FleetMetadata,
  FleetPartition,
  FleetReplica,
  FleetSummary,
  FleetVerdict,
  LostRange,
  OffsetAhead,
  OffsetRangeJson,
} from "./schema.js";
import { partitionSteps } from "./steps.js";

const U64_MAX = (1n << 64n) - 1n;
const VERDICT_RANK: Record<string, number> = { clean: 0, repairable: 1, refused: 2, failed: 3 };

const rangeJson = (range: Range): OffsetRangeJson => ({
  from: range.from.toString(),
  to: range.to.toString(),
  count: rangeSize(range).toString(),
});

/** What a replica holds: proven, and intact past a damage. */
const heldBy = (view: ReplicaView): Range[] => union(view.proven, view.intact);

/**
 * The peer whose held offsets cover the most of `target`; ties go to the
 * better verdict (clean, repairable, refused), then to the earlier node.
 * Null when no peer holds any of it.
 */
function bestPeer(
  target: readonly Range[],
  self: number,
  views: readonly (ReplicaView | null)[],
  holdings: readonly Range[][],
  names: readonly string[],
): string | null {
  let best: { index: number; covered: bigint; rank: number } | null = null;
  for (const [index, view] of views.entries()) {
    if (index === self || view === null || view.failed) continue;
    const covered = totalSize(intersect(holdings[index]!, target));
    if (covered === 0n) continue;
    const rank = VERDICT_RANK[view.verdict] ?? 9;
    if (best === null || covered > best.covered || (covered === best.covered && rank < best.rank)) best = { index, covered, rank };
  }
  return best === null ? null : names[best.index]!;
}

/** What the merge of one partition needs to know of the nodes besides their lines. */
export interface MergeContext {
  /** The nodes' labels, in node order. */
  names: readonly string[];
  /**
   * Per node: its report is of a node root, so it lists every partition under
   * it; a partition it has no line for is `missing` there. Otherwise the report
   * may not cover the partition at all: `unknown`, never "no such partition".
   */
  covers: readonly boolean[];
  /** Per node: its report's node root (for the commands naming a partition it has no line for), or null. */
  roots: readonly (string | null)[];
  /** The cluster's replica count: the nodes merged, or more when their superblocks say so. */
  replicas: number;
}

/** A context for `names` whose reports all cover their roots (the library's `--json` reports of node roots, and tests). */
export function contextOf(names: readonly string[]): MergeContext {
  return { names, covers: names.map(() => true), roots: names.map(() => null), replicas: names.length };
}

/** A claim on offsets no replica holds: whose, and as what (a refusal code, a gap, a torn tail). */
interface Claim {
  range: Range;
  node: string;
  as: string;
  openEnded: boolean;
}

/**
 * The claims on each lost piece (both sorted and the pieces disjoint): each
 * claim finds its first piece by binary search and walks the pieces it
 * overlaps, so the work is n·log n plus the pairs found. The claims are visited
 * in node order, so each piece's list is too.
 */
function claimsByPiece(pieces: readonly Range[], claims: readonly Claim[]): Claim[][] {
  const out: Claim[][] = pieces.map(() => []);
  for (const claim of claims) {
    let low = 0;
    let high = pieces.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (pieces[middle]!.to < claim.range.from) low = middle + 1;
      else high = middle;
    }
    for (let i = low; i < pieces.length && pieces[i]!.from <= claim.range.to; i++) out[i]!.push(claim);
  }
  return out;
}

/** Merges one partition's replica lines (null: that node's report has no line for it), in node order. */
export function mergePartition(
  identity: PartitionIdentity,
  nodes: MergeContext | readonly string[],
  lines: readonly (PartitionLine | null)[],
): FleetPartition {
  const context: MergeContext = isContext(nodes) ? nodes : contextOf(nodes);
  const names = context.names;
  assert(lines.length === names.length, `one line (or null) per node: ${lines.length} lines for ${names.length} nodes`);
  const views = lines.map((line) => (line === null ? null : replicaView(line)));
  const holdings = views.map((view) => (view === null || view.failed ? [] : heldBy(view)));
  const live = views.filter((view): view is ReplicaView => view !== null && !view.failed);
  const held = union(...holdings);
  // A forward gap alone is no claim of loss: the server's own boot mints gaps in byte-clean files (docs/recovery.md
  // §3.4), and every replica carries the same one. Bytes that do not verify, a salvage's record of what it dropped,
  // or a peer that holds the offsets make it one.
  const durable = normalize(live.flatMap((view) => view.unreadable.filter((u) => u.code !== FORWARD_GAP).map((u) => u.range)));
  const cutClaims = normalize(live.flatMap((view) => view.cuts.flatMap((cut) => (cut.claimed === null ? [] : [cut.claimed]))));
  const claims = union(held, durable, cutClaims);
  const span = claims.length === 0 ? null : { from: claims[0]!.from, to: claims.at(-1)!.to };
  const head = held.length === 0 ? null : held.at(-1)!.to;

  // The span without what some replica holds, split by who claims it.
  const notHeld = span === null ? [] : subtract([span], held);
  const pieces: { range: Range; kind: LostRange["kind"] }[] = [
    ...intersect(notHeld, durable).map((range) => ({ range, kind: "durable" as const })),
    ...intersect(subtract(notHeld, durable), cutClaims).map((range) => ({ range, kind: "unacknowledged" as const })),
    ...subtract(subtract(notHeld, durable), cutClaims).map((range) => ({ range, kind: "unclaimed" as const })),
  ].sort((a, b) => (a.range.from < b.range.from ? -1 : 1));
  const lost = lostRanges(pieces, everyClaim(views, names));

  const divergence = findDivergence(views, names);
  const oddOut = new Set(divergence.flatMap((entry) => entry.odd));
  const replicas: FleetReplica[] = views.map((view, index) =>
    replicaJson(view, index, context, views, holdings, held, head, lines[index] ?? null, oddOut.has(names[index]!)),
  );
  const offsetsAhead = findOffsetsAhead(views, names, head);

  const judged = replicas.filter((replica) => replica.role !== "failed" && replica.role !== "unknown").length;
  const verdict = partitionVerdict(divergence.length > 0, lost, replicas);
  const partition: FleetPartition = {
    key: identity.key,
    streamId: identity.streamId,
    topicId: identity.topicId,
    partitionId: identity.partitionId,
    verdict,
    span: span === null ? null : { from: span.from.toString(), to: span.to.toString() },
    head: head === null ? null : head.toString(),
    held: held.map(rangeJson),
    lost,
    replicas,
    divergence,
    offsetsAhead,
    judged: { replicas: judged, of: Math.max(context.replicas, names.length) },
    nextSteps: [],
  };
  partition.nextSteps = partitionSteps(partition, context, (node, segment) => {
    const view = views[names.indexOf(node)];
    return view?.logPaths.get(BigInt(segment)) ?? null;
  });
  return partition;
}

/** The pieces of the span no replica holds, each with the replicas that claim it. */
function lostRanges(pieces: readonly { range: Range; kind: LostRange["kind"] }[], claims: readonly Claim[]): LostRange[] {
  const claimed = claimsByPiece(
    pieces.map((piece) => piece.range),
    claims,
  );
  return pieces.map(({ range, kind }, i) => {
    const mine = claimed[i] ?? [];
    return {
      ...rangeJson(range),
      kind,
      openEnded: mine.some((claim) => claim.openEnded && claim.range.to >= range.to),
      claimedBy: mine.map((claim) => ({ node: claim.node, as: claim.as })),
    };
  });
}

/** Every live replica's claim on offsets it does not hold: its unreadable ranges and the torn ranges its cuts claim. */
function everyClaim(views: readonly (ReplicaView | null)[], names: readonly string[]): Claim[] {
  const claims: Claim[] = [];
  for (const [index, view] of views.entries()) {
    const node = names[index];
    if (view === null || view.failed || node === undefined) continue;
    for (const u of view.unreadable) claims.push({ range: u.range, node, as: u.code, openEnded: u.openEnded });
    for (const cut of view.cuts) {
      if (cut.claimed !== null) claims.push({ range: cut.claimed, node, as: "torn-tail", openEnded: false });
    }
  }
  return claims;
}

/** The partition's verdict, worst first: diverged, lost, failed, unknown, degraded, lagging, clean (docs/fleet.md). */
function partitionVerdict(diverged: boolean, lost: readonly LostRange[], replicas: readonly FleetReplica[]): FleetVerdict {
  if (diverged) return "diverged";
  if (lost.some((range) => range.kind === "durable")) return "lost";
  const roles = new Set(replicas.map((replica) => replica.role));
  if (roles.has("failed")) return "failed";
  if (roles.has("unknown")) return "unknown";
  if (roles.has("damaged") || roles.has("missing")) return "degraded";
  return roles.has("lagging") ? "lagging" : "clean";
}

function isContext(nodes: MergeContext | readonly string[]): nodes is MergeContext {
  return !Array.isArray(nodes);
}

type DivergenceEntry = { node: string; segment: bigint; checksum: bigint };

/**
 * Divergence: two replicas with a batch at one base offset (or, deep, a clean
 * segment of one start, end and size) must agree on its checksum. The majority
 * by checksum, when more than half of the replicas that have the batch agree,
 * names the odd replicas out.
 */
function findDivergence(views: readonly (ReplicaView | null)[], names: readonly string[]): FleetPartition["divergence"] {
  const divergence: FleetPartition["divergence"] = [];
  const byBase = new Map<bigint, DivergenceEntry[]>();
  const byDigest = new Map<string, DivergenceEntry[]>();
  for (const [index, view] of views.entries()) {
    if (view === null || view.failed) continue;
    for (const batch of view.lastBatches) {
      const list = byBase.get(batch.baseOffset) ?? [];
      list.push({ node: names[index]!, segment: batch.segment, checksum: batch.checksum });
      byBase.set(batch.baseOffset, list);
    }
    for (const digest of view.segmentDigests) {
      const key = `${digest.segment}:${digest.endOffset}:${digest.bytes}`;
      const list = byDigest.get(key) ?? [];
      list.push({ node: names[index]!, segment: digest.segment, checksum: digest.digest });
      byDigest.set(key, list);
    }
  }
  const disagreeing = <K>(map: Map<K, DivergenceEntry[]>) =>
    [...map.entries()].filter(([, list]) => new Set(list.map((entry) => entry.checksum)).size > 1);
  const entry = (kind: "last-batch" | "segment-digest", offset: bigint, list: readonly DivergenceEntry[], what: string) => {
    const groups = checksumGroups(list);
    const top = groups[0]!;
    const majority = top.nodes.length * 2 > list.length ? top : null;
    const odd = majority === null ? list.map((e) => e.node) : list.filter((e) => e.checksum !== majority.checksum).map((e) => e.node);
    const who =
      majority === null
        ? `no majority: ${groups.map((g) => `${g.nodes.join(", ")} ${hexChecksum(g.checksum)}`).join("; ")}`
        : `${odd.join(", ")} ${odd.length === 1 ? "is the odd one out" : "are the odd ones out"} (${groups
            .filter((g) => g !== majority)
            .map((g) => `${g.nodes.join(", ")} ${hexChecksum(g.checksum)}`)
            .join("; ")} against ${majority.nodes.join(", ")} ${hexChecksum(majority.checksum)})`;
    divergence.push({
      kind,
      offset: offset.toString(),
      replicas: list.map((e) => ({ node: e.node, segment: e.segment.toString(), checksum: e.checksum.toString() })),
      majority: majority === null ? null : { checksum: majority.checksum.toString(), nodes: majority.nodes },
      odd,
      message: `${what} differs between replicas: ${who}; a split brain`,
    });
  };
  for (const [base, list] of disagreeing(byBase).sort(([a], [b]) => (a < b ? -1 : 1))) {
    entry("last-batch", base, list, `the batch at offset ${formatCount(base)}`);
  }
  for (const [, list] of disagreeing(byDigest)) {
    entry(
      "segment-digest",
      list[0]!.segment,
      list,
      `segment ${formatCount(list[0]!.segment)} (the same offsets and byte count on each replica, other batches by its --deep digest)`,
    );
  }
  return divergence;
}

/** The replicas grouped by checksum, the largest group first (ties: the group of the earlier node). */
function checksumGroups(list: readonly DivergenceEntry[]): { checksum: bigint; nodes: string[] }[] {
  const groups = new Map<bigint, string[]>();
  for (const e of list) groups.set(e.checksum, [...(groups.get(e.checksum) ?? []), e.node]);
  return [...groups.entries()].map(([checksum, nodes]) => ({ checksum, nodes })).sort((a, b) => b.nodes.length - a.nodes.length);
}

/** A u64 checksum as people read it elsewhere in segscan: `0x` and 16 hex digits. */
export const hexChecksum = (value: bigint): string => `0x${hex64(value)}`;

/**
 * Consumer and group offsets past the highest head any replica proves, one
 * entry per consumer or group: the nodes store the same group's offset each,
 * and it is one offset of the cluster, counted once.
 */
function findOffsetsAhead(views: readonly (ReplicaView | null)[], names: readonly string[], head: bigint | null): OffsetAhead[] {
  const byOwner = new Map<string, { kind: "consumer" | "group"; id: number; nodes: { node: string; offset: bigint }[] }>();
  for (const [index, view] of views.entries()) {
    if (view === null || view.failed) continue;
    for (const stored of view.offsets) {
      if (head !== null && stored.offset <= head) continue;
      const key = `${stored.kind}:${stored.id}`;
      const owner = byOwner.get(key) ?? { kind: stored.kind, id: stored.id, nodes: [] };
      owner.nodes.push({ node: names[index]!, offset: stored.offset });
      byOwner.set(key, owner);
    }
  }
  const owners = [...byOwner.values()].sort((a, b) => (a.kind === b.kind ? a.id - b.id : a.kind < b.kind ? -1 : 1));
  return owners.map(({ kind, id, nodes }) => {
    let offset = 0n;
    for (const entry of nodes) if (entry.offset > offset) offset = entry.offset;
    const reminted = head === null ? offset + 1n : offset - head;
    const same = nodes.every((entry) => entry.offset === offset);
    const where = same
      ? `stored offset ${formatCount(offset)} on ${nodes.map((entry) => entry.node).join(", ")}`
      : `stored ${nodes.map((entry) => `${formatCount(entry.offset)} on ${entry.node}`).join(", ")}`;
    return {
      kind,
      id,
      offset: offset.toString(),
      nodes: nodes.map((entry) => ({ node: entry.node, offset: entry.offset.toString() })),
      clusterHead: head === null ? null : head.toString(),
      reminted: reminted.toString(),
      message:
        `${kind} ${id} ${where}, ` +
        (head === null ? "but no replica holds a message" : `past the highest offset any replica holds (${formatCount(head)})`) +
        `: ${formatCount(reminted)} offset${reminted === 1n ? "" : "s"} will be minted again cluster-wide and the ${kind} skips them`,
    };
  });
}

/** A replica's ranges, cuts and refusals as the fleet report gives them (empty for a replica without a line). */
function replicaLists(view: ReplicaView | null): Pick<FleetReplica, "proven" | "intact" | "cuts" | "unreadable" | "refusals"> {
  return {
    proven: (view?.proven ?? []).map(rangeJson),
    intact: (view?.intact ?? []).map(rangeJson),
    cuts: (view?.cuts ?? []).map((cut) => ({
      segment: cut.segment.toString(),
      fromOffset: cut.fromOffset.toString(),
      bytes: cut.bytes,
      claimed: cut.claimed === null ? null : rangeJson(cut.claimed),
    })),
    unreadable: (view?.unreadable ?? []).map((u) => ({ ...rangeJson(u.range), openEnded: u.openEnded, code: u.code })),
    refusals: (view?.refusals ?? []).map((r) => ({
      code: r.code,
      segment: r.segment === null ? null : r.segment.toString(),
      message: r.message,
    })),
  };
}

function replicaJson(
  view: ReplicaView | null,
  index: number,
  context: MergeContext,
  views: readonly (ReplicaView | null)[],
  holdings: readonly Range[][],
  held: readonly Range[],
  head: bigint | null,
  line: PartitionLine | null,
  odd: boolean,
): FleetReplica {
  const names = context.names;
  const node = names[index];
  assert(node !== undefined, `replica ${index} is one of the ${names.length} nodes`);
  const base = {
    node,
    present: view !== null,
    path: line?.path ?? null,
    verdict: view?.verdict ?? null,
    action: view?.action ?? null,
    ...replicaLists(view),
    error: view?.error ?? null,
    nextSteps: view?.nextSteps ?? [],
  };
  if (view === null) {
    if (!context.covers[index]) {
      // Its report is not of a node root: it may not cover this partition at all. Unknown, not missing.
      return { ...base, role: "unknown", head: null, missing: [], behind: null, rebuildFrom: null };
    }
    return {
      ...base,
      role: "missing",
      head: null,
      missing: held.map(rangeJson),
      behind: null,
      rebuildFrom: bestPeer(held, index, views, holdings, names),
    };
  }
  if (view.failed) return { ...base, role: "failed", head: null, missing: [], behind: null, rebuildFrom: null };
  const own = holdings[index]!;
  const ownHead = own.length === 0 ? null : own.at(-1)!.to;
  // Offsets below the replica's first segment were removed by retention, not lost.
  const floor = view.firstOffset ?? 0n;
  const missing = subtract(intersect(held, [{ from: floor, to: U64_MAX }]), own);
  // Offsets others hold below its own head are a hole the cluster does not catch up: it must be rebuilt.
  const hole = ownHead !== null && missing.length > 0 && missing[0]!.from < ownHead;
  const damaged = view.verdict !== "clean" || hole;
  const role: FleetReplica["role"] = odd ? "diverged" : damaged ? "damaged" : missing.length > 0 ? "lagging" : "in-sync";
  // What it must get back: what others hold that it lacks, and what it claims but cannot prove.
  const target = union(
    missing,
    view.unreadable.map((u) => u.range),
    view.cuts.flatMap((cut) => (cut.claimed === null ? [] : [cut.claimed])),
  );
  const lagging = role === "lagging" && head !== null && (ownHead === null || ownHead < head);
  return {
    ...base,
    role,
    head: ownHead === null ? null : ownHead.toString(),
    missing: missing.map(rangeJson),
    behind: lagging ? (ownHead === null ? head + 1n - floor : head - ownHead).toString() : null,
    rebuildFrom: role === "in-sync" || role === "diverged" ? null : bestPeer(target, index, views, holdings, names),
  };
}

// ---------------------------------------------------------------------------
// The metadata plane across nodes.

export type ReportHeader = Omit<JsonScanReport, "partitions">;

const big = (text: string | null | undefined): bigint | null => (text === null || text === undefined ? null : BigInt(text));

type MetadataRow = FleetMetadata["nodes"][number];

/** The metadata plane of every node's report, side by side (docs/fleet.md "Metadata"). */
export function mergeMetadata(nodes: readonly { name: string; node: JsonNode | undefined }[]): FleetMetadata {
  const rows = nodes.map(({ name, node }) => metadataRow(name, node));
  let highest: bigint | null = null;
  for (const row of rows) {
    const commit = big(row.commitMax);
    if (commit !== null && (highest === null || commit > highest)) highest = commit;
  }
  const committedBy = highest === null ? [] : rows.filter((row) => big(row.commitMax) === highest).map((row) => row.node);
  let maxHeld: bigint | null = null;
  for (const row of rows) {
    const heldOp = big(row.heldOp);
    if (heldOp !== null && (maxHeld === null || heldOp > maxHeld)) maxHeld = heldOp;
  }
  const lostFrom = maxHeld === null ? 1n : maxHeld + 1n;
  const opsLost = highest !== null && highest >= lostFrom ? rangeJson({ from: lostFrom, to: highest }) : null;
  const { identityConflicts, replicaCount } = identityConflictsOf(rows.filter((row) => row.cluster !== null));
  return {
    nodes: rows,
    highestCommitted: highest === null ? null : highest.toString(),
    committedBy,
    opsLost,
    identityConflicts,
    replicaCount,
  };
}

/** One node's row: what its metadata plane holds and whether it boots (a node without a report: absent). */
function metadataRow(name: string, node: JsonNode | undefined): MetadataRow {
  if (node === undefined) {
    return {
      node: name,
      present: false,
      walOps: null,
      commitMax: null,
      view: null,
      logView: null,
      checkpointOp: null,
      snapshotOp: null,
      boots: null,
      heldOp: null,
      cluster: null,
      replicaId: null,
      replicaCount: null,
    };
  }
  const { wal, snapshot, superblock } = node.metadata;
  const boots = !node.bootForecast.some((entry) => entry.effect === "refuse-boot");
  const snapshotOp = big(snapshot?.sequenceNumber) ?? 0n;
  let walLast = big(wal?.ops?.last);
  const truncateFrom = big(wal?.iggy.truncateFromOp);
  if (walLast !== null && truncateFrom !== null && truncateFrom - 1n < walLast) walLast = truncateFrom - 1n;
  const heldOp = !boots ? null : walLast !== null && walLast > snapshotOp ? walLast : snapshotOp;
  return {
    node: name,
    present: true,
    walOps: wal?.ops ? { first: wal.ops.first, last: wal.ops.last } : null,
    commitMax: superblock?.commitMax ?? null,
    view: superblock?.view ?? null,
    logView: superblock?.logView ?? null,
    checkpointOp: superblock?.checkpointOp ?? null,
    snapshotOp: snapshot?.sequenceNumber ?? null,
    boots,
    heldOp: heldOp === null ? null : heldOp.toString(),
    cluster: superblock?.cluster ?? null,
    replicaId: superblock?.replicaId ?? null,
    replicaCount: superblock?.replicaCount ?? null,
  };
}

/** The identities the nodes record that disagree, and the replica count most of them record (null without a majority). */
function identityConflictsOf(known: readonly MetadataRow[]): Pick<FleetMetadata, "identityConflicts" | "replicaCount"> {
  const identityConflicts: FleetMetadata["identityConflicts"] = [];
  const clusters = groupsOf(known, (row) => row.cluster);
  const top = clusters[0];
  if (clusters.length > 1 && top !== undefined) {
    const hasMajority = top.rows.length * 2 > known.length;
    const odd = hasMajority ? known.filter((row) => row.cluster !== top.value) : known;
    const listed = (list: readonly MetadataRow[]) => list.map((row) => `${row.node} (cluster ${hexId(row.cluster)})`).join(", ");
    identityConflicts.push({
      code: "ClusterMismatch",
      nodes: odd.map((row) => row.node),
      message: hasMajority
        ? `${listed(odd)} ${odd.length === 1 ? "belongs" : "belong"} to another cluster than the ${top.rows.length} other node${top.rows.length === 1 ? "" : "s"} (cluster ${hexId(top.value)}): a misplaced data dir, or reports of two clusters`
        : `the nodes name ${clusters.length} clusters and no majority agrees: ${listed(known)}: misplaced data dirs, or reports of several clusters`,
    });
  }
  const counts = groupsOf(known, (row) => row.replicaCount);
  const count = counts[0] !== undefined && counts[0].rows.length * 2 > known.length ? counts[0].value : null;
  if (counts.length > 1) {
    const oddCount = count === null ? known : known.filter((row) => row.replicaCount !== count);
    identityConflicts.push({
      code: "ReplicaCountMismatch",
      nodes: oddCount.map((row) => row.node),
      message:
        count === null
          ? `the nodes' replica_count disagree and no majority agrees: ${known.map((row) => `${row.node} ${row.replicaCount}`).join(", ")}`
          : `${oddCount.map((row) => `${row.node} (replica_count ${row.replicaCount})`).join(", ")} disagree with the others' replica_count ${count}`,
    });
  }
  const byId = new Map<number, string[]>();
  for (const row of known) if (row.replicaId !== null) byId.set(row.replicaId, [...(byId.get(row.replicaId) ?? []), row.node]);
  for (const [id, claimants] of [...byId.entries()].sort((a, b) => a[0] - b[0])) {
    if (claimants.length > 1) {
      identityConflicts.push({
        code: "DuplicateReplicaId",
        nodes: claimants,
        message: `${claimants.join(" and ")} ${claimants.length === 2 ? "both" : "all"} claim replica id ${id}: one of them holds another replica's data dir (or a copy of it)`,
      });
    }
  }
  const outOfRange = known.filter((row) => row.replicaId !== null && row.replicaCount !== null && row.replicaId >= row.replicaCount);
  if (outOfRange.length > 0) {
    identityConflicts.push({
      code: "ReplicaIdOutOfRange",
      nodes: outOfRange.map((row) => row.node),
      message: `${outOfRange.map((row) => `${row.node} (replica id ${row.replicaId} of ${row.replicaCount})`).join(", ")}: a replica id at or past the replica count`,
    });
  }
  return { identityConflicts, replicaCount: count };
}

/** Rows grouped by a value, the largest group first (ties: the group of the earlier row). */
function groupsOf<Row, T>(rows: readonly Row[], value: (row: Row) => T): { value: T; rows: Row[] }[] {
  const groups = new Map<T, Row[]>();
  for (const row of rows) groups.set(value(row), [...(groups.get(value(row)) ?? []), row]);
  return [...groups.entries()].map(([v, list]) => ({ value: v, rows: list })).sort((a, b) => b.rows.length - a.rows.length);
}

/** A u128 cluster id (a decimal string in the reports) as people read ids: `0x` and 32 hex digits. */
export function hexId(decimal: string | null): string {
  return decimal === null ? "unknown" : `0x${BigInt(decimal).toString(16).padStart(32, "0")}`;
}

// ---------------------------------------------------------------------------

export function emptySummary(nodes: number): FleetSummary {
  return {
    nodes,
    partitions: 0,
    clean: 0,
    lagging: 0,
    degraded: 0,
    unknown: 0,
    lost: 0,
    diverged: 0,
    failed: 0,
    failedReplicas: 0,
    unknownReplicas: 0,
    unidentified: 0,
    lostOffsets: "0",
    lostOffsetsNotAllJudged: "0",
    unacknowledgedOffsets: "0",
    offsetsAhead: 0,
    identityConflicts: 0,
    metadataOpsLost: "0",
  };
}

/** Counts one merged partition into the summary. */
export function addToSummary(summary: FleetSummary, partition: FleetPartition): void {
  summary.partitions++;
  summary[partition.verdict]++;
  let durable = 0n;
  let unacknowledged = 0n;
  for (const range of partition.lost) {
    if (range.kind === "durable") durable += BigInt(range.count);
    else if (range.kind === "unacknowledged") unacknowledged += BigInt(range.count);
  }
  summary.lostOffsets = (BigInt(summary.lostOffsets) + durable).toString();
  if (partition.judged.replicas < partition.judged.of) {
    summary.lostOffsetsNotAllJudged = (BigInt(summary.lostOffsetsNotAllJudged) + durable).toString();
  }
  summary.unacknowledgedOffsets = (BigInt(summary.unacknowledgedOffsets) + unacknowledged).toString();
  summary.offsetsAhead += partition.offsetsAhead.length;
  summary.failedReplicas += partition.replicas.filter((replica) => replica.role === "failed").length;
  summary.unknownReplicas += partition.replicas.filter((replica) => replica.role === "unknown").length;
}

/** The metadata plane's part of the summary, and the lines no partition could be merged from. */
export function finishSummary(summary: FleetSummary, metadata: FleetMetadata, unidentified: number): void {
  summary.identityConflicts = metadata.identityConflicts.length;
  summary.metadataOpsLost = metadata.opsLost?.count ?? "0";
  summary.unidentified = unidentified;
}

/**
 * The cluster's one verdict (docs/fleet.md "Verdict"): the worst partition
 * verdict, `lost` for committed metadata ops no booting node holds, `conflict`
 * for conflicting identities, `unknown` for partition lines that could not be
 * merged (a partition that cannot be merged is never clean).
 */
export function clusterVerdict(summary: FleetSummary): ClusterVerdict {
  if (summary.diverged > 0) return "diverged";
  if (summary.lost > 0 || summary.metadataOpsLost !== "0") return "lost";
  if (summary.identityConflicts > 0) return "conflict";
  if (summary.failed > 0 || summary.failedReplicas > 0) return "failed";
  if (summary.unknown > 0 || summary.unknownReplicas > 0 || summary.unidentified > 0) return "unknown";
  if (summary.degraded > 0) return "degraded";
  if (summary.lagging > 0) return "lagging";
  return "clean";
}

/**
 * docs/fleet.md exit status: 4 when data is lost on every replica judged (a
 * durable lost range, committed metadata ops no booting node holds), a
 * divergence, or an identity conflict; 8 when something could not be judged: a
 * replica's partition failed, a report does not cover a partition others hold,
 * or a partition line names no partition. 0 otherwise (lagging and degraded
 * replicas lose nothing).
 */
export function fleetExitCode(summary: FleetSummary): number {
  let code = 0;
  if (summary.lost > 0 || summary.diverged > 0 || summary.identityConflicts > 0 || summary.metadataOpsLost !== "0") code |= 4;
  if (summary.failedReplicas > 0 || summary.unknownReplicas > 0 || summary.unidentified > 0) code |= 8;
  return code;
}
