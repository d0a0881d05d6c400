/**
 * The cluster view of one partition (docs/fleet.md): the replicas' views side
 * by side, the offsets held somewhere, the offsets held nowhere, which replica
 * to rebuild each damaged one from, lagging replicas, divergent batches, and
 * stored consumer offsets past every replica's head. Pure: the views come from
 * ./adapter.ts, the result is the `fleet --json` shape (./schema.ts).
 */
import type { JsonNode } from "../report/node-schema.js";
import type { JsonScanReport } from "../report/json.js";
import { type PartitionIdentity, type PartitionLine, type ReplicaView, replicaView } from "./adapter.js";
import { type Range, intersect, normalize, rangeSize, subtract, totalSize, union } from "./ranges.js";
import type { FleetMetadata, FleetPartition, FleetReplica, FleetSummary, FleetVerdict, LostRange, OffsetRangeJson } from "./schema.js";

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
function bestPeer(target: readonly Range[], self: number, views: readonly (ReplicaView | null)[], names: readonly string[]): string | null {
  let best: { index: number; covered: bigint; rank: number } | null = null;
  for (const [index, view] of views.entries()) {
    if (index === self || view === null || view.failed) continue;
    const covered = totalSize(intersect(heldBy(view), target));
    if (covered === 0n) continue;
    const rank = VERDICT_RANK[view.verdict] ?? 9;
    if (best === null || covered > best.covered || (covered === best.covered && rank < best.rank)) best = { index, covered, rank };
  }
  return best === null ? null : names[best.index]!;
}

/** Merges one partition's replica lines (null: that node's report has no line for it), in node order. */
export function mergePartition(
  identity: PartitionIdentity,
  names: readonly string[],
  lines: readonly (PartitionLine | null)[],
): FleetPartition {
  const views = lines.map((line) => (line === null ? null : replicaView(line)));
  const live = views.filter((view): view is ReplicaView => view !== null && !view.failed);
  const held = union(...live.map(heldBy));
  const durable = normalize(live.flatMap((view) => view.unreadable.map((u) => u.range)));
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
  const lost: LostRange[] = pieces.map(({ range, kind }) => {
    const claimedBy: LostRange["claimedBy"] = [];
    let openEnded = false;
    for (const [index, view] of views.entries()) {
      if (view === null || view.failed) continue;
      for (const u of view.unreadable) {
        if (intersect([u.range], [range]).length === 0) continue;
        claimedBy.push({ node: names[index]!, as: u.code });
        if (u.openEnded && u.range.to >= range.to) openEnded = true;
      }
      for (const cut of view.cuts) {
        if (cut.claimed !== null && intersect([cut.claimed], [range]).length > 0) claimedBy.push({ node: names[index]!, as: "torn-tail" });
      }
    }
    return { ...rangeJson(range), kind, openEnded, claimedBy };
  });

  const replicas: FleetReplica[] = views.map((view, index) => replicaJson(view, index, names, views, held, head, lines[index] ?? null));

  // Divergence: two replicas with a batch at one base offset must agree on its checksum.
  const divergence: FleetPartition["divergence"] = [];
  const byBase = new Map<bigint, { node: string; segment: bigint; checksum: bigint }[]>();
  const byDigest = new Map<string, { node: string; segment: bigint; checksum: bigint }[]>();
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
  const sortedEntries = <K>(map: Map<K, { node: string; segment: bigint; checksum: bigint }[]>) =>
    [...map.entries()].filter(([, list]) => new Set(list.map((entry) => entry.checksum)).size > 1);
  for (const [base, list] of sortedEntries(byBase).sort(([a], [b]) => (a < b ? -1 : 1))) {
    divergence.push({
      kind: "last-batch",
      offset: base.toString(),
      replicas: list.map((entry) => ({ node: entry.node, segment: entry.segment.toString(), checksum: entry.checksum.toString() })),
      message: `the batch at offset ${base} differs between replicas (${byChecksum(list)}): a split brain`,
    });
  }
  for (const [, list] of sortedEntries(byDigest)) {
    divergence.push({
      kind: "segment-digest",
      offset: list[0]!.segment.toString(),
      replicas: list.map((entry) => ({ node: entry.node, segment: entry.segment.toString(), checksum: entry.checksum.toString() })),
      message: `segment ${list[0]!.segment} holds the same offsets and byte count on every replica but other batches (--deep digests ${byChecksum(list)}): a split brain`,
    });
  }

  // Consumer and group offsets past the highest head any replica proves.
  const offsetsAhead: FleetPartition["offsetsAhead"] = [];
  for (const [index, view] of views.entries()) {
    if (view === null || view.failed) continue;
    for (const stored of view.offsets) {
      if (head !== null && stored.offset <= head) continue;
      const reminted = head === null ? stored.offset + 1n : stored.offset - head;
      offsetsAhead.push({
        node: names[index]!,
        kind: stored.kind,
        id: stored.id,
        offset: stored.offset.toString(),
        clusterHead: head === null ? null : head.toString(),
        reminted: reminted.toString(),
        message:
          `${stored.kind} ${stored.id} on ${names[index]!} stored offset ${stored.offset}, ` +
          (head === null ? "but no replica holds a message" : `past the highest offset any replica holds (${head})`) +
          `: ${reminted} offset(s) will be minted again cluster-wide and the consumer skips them`,
      });
    }
  }

  const verdict: FleetVerdict =
    divergence.length > 0
      ? "diverged"
      : lost.some((range) => range.kind === "durable")
        ? "lost"
        : views.some((view) => view?.failed)
          ? "failed"
          : replicas.some((replica) => replica.role === "damaged" || replica.role === "missing")
            ? "degraded"
            : replicas.some((replica) => replica.role === "lagging")
              ? "lagging"
              : "clean";
  return {
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
  };
}

/** `node-0, node-2: checksum 12; node-1: checksum 34`. */
function byChecksum(list: readonly { node: string; checksum: bigint }[]): string {
  const groups = new Map<bigint, string[]>();
  for (const entry of list) groups.set(entry.checksum, [...(groups.get(entry.checksum) ?? []), entry.node]);
  return [...groups.entries()].map(([checksum, nodes]) => `${nodes.join(", ")}: checksum ${checksum}`).join("; ");
}

function replicaJson(
  view: ReplicaView | null,
  index: number,
  names: readonly string[],
  views: readonly (ReplicaView | null)[],
  held: readonly Range[],
  head: bigint | null,
  line: PartitionLine | null,
): FleetReplica {
  const base = {
    node: names[index]!,
    present: view !== null,
    path: line?.path ?? null,
    verdict: view?.verdict ?? null,
    action: view?.action ?? null,
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
    error: view?.error ?? null,
    nextSteps: view?.nextSteps ?? [],
  };
  if (view === null) {
    return {
      ...base,
      role: "missing",
      head: null,
      missing: held.map(rangeJson),
      behind: null,
      rebuildFrom: bestPeer(held, index, views, names),
    };
  }
  if (view.failed) return { ...base, role: "failed", head: null, missing: [], behind: null, rebuildFrom: null };
  const own = heldBy(view);
  const ownHead = own.length === 0 ? null : own.at(-1)!.to;
  // Offsets below the replica's first segment were removed by retention, not lost.
  const floor = view.firstOffset ?? 0n;
  const missing = subtract(intersect(held, [{ from: floor, to: U64_MAX }]), own);
  const damaged = view.verdict !== "clean";
  const role: FleetReplica["role"] = damaged ? "damaged" : missing.length > 0 ? "lagging" : "in-sync";
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
    rebuildFrom: role === "in-sync" ? null : bestPeer(target, index, views, names),
  };
}

// ---------------------------------------------------------------------------
// The metadata plane across nodes.

export type ReportHeader = Omit<JsonScanReport, "partitions">;

const big = (text: string | null | undefined): bigint | null => (text === null || text === undefined ? null : BigInt(text));

/** The metadata plane of every node's report, side by side (docs/fleet.md "Metadata"). */
export function mergeMetadata(nodes: readonly { name: string; node: JsonNode | undefined }[]): FleetMetadata {
  const rows = nodes.map(({ name, node }) => {
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
  });

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

  const identityConflicts: FleetMetadata["identityConflicts"] = [];
  const known = rows.filter((row) => row.cluster !== null);
  const majority = <T>(values: T[]): T | undefined => {
    const counts = new Map<T, number>();
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  };
  const cluster = majority(known.map((row) => row.cluster));
  const odd = known.filter((row) => row.cluster !== cluster);
  if (odd.length > 0) {
    identityConflicts.push({
      code: "ClusterMismatch",
      nodes: odd.map((row) => row.node),
      message: `${odd.map((row) => `${row.node} (cluster ${row.cluster})`).join(", ")} ${odd.length === 1 ? "belongs" : "belong"} to another cluster than the ${known.length - odd.length} other node(s) (cluster ${cluster}): a misplaced data dir, or reports of two clusters`,
    });
  }
  const count = majority(known.map((row) => row.replicaCount));
  const oddCount = known.filter((row) => row.replicaCount !== count);
  if (oddCount.length > 0) {
    identityConflicts.push({
      code: "ReplicaCountMismatch",
      nodes: oddCount.map((row) => row.node),
      message: `${oddCount.map((row) => `${row.node} (replica_count ${row.replicaCount})`).join(", ")} disagree with the others' replica_count ${count}`,
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
  return { nodes: rows, highestCommitted: highest === null ? null : highest.toString(), committedBy, opsLost, identityConflicts };
}

// ---------------------------------------------------------------------------

export function emptySummary(nodes: number): FleetSummary {
  return {
    nodes,
    partitions: 0,
    clean: 0,
    lagging: 0,
    degraded: 0,
    lost: 0,
    diverged: 0,
    failed: 0,
    failedReplicas: 0,
    lostOffsets: "0",
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
  let durable = BigInt(summary.lostOffsets);
  let unacknowledged = BigInt(summary.unacknowledgedOffsets);
  for (const range of partition.lost) {
    if (range.kind === "durable") durable += BigInt(range.count);
    else if (range.kind === "unacknowledged") unacknowledged += BigInt(range.count);
  }
  summary.lostOffsets = durable.toString();
  summary.unacknowledgedOffsets = unacknowledged.toString();
  summary.offsetsAhead += partition.offsetsAhead.length;
  summary.failedReplicas += partition.replicas.filter((replica) => replica.role === "failed").length;
}

/** The metadata plane's part of the summary. */
export function finishSummary(summary: FleetSummary, metadata: FleetMetadata): void {
  summary.identityConflicts = metadata.identityConflicts.length;
  summary.metadataOpsLost = metadata.opsLost?.count ?? "0";
}

/**
 * docs/fleet.md exit status: 4 when data is lost on every replica (a durable
 * lost range, committed metadata ops no booting node holds), a divergence, or
 * an identity conflict; 8 when a replica's partition failed. 0 otherwise
 * (lagging and degraded replicas lose nothing).
 */
export function fleetExitCode(summary: FleetSummary): number {
  let code = 0;
  if (summary.lost > 0 || summary.diverged > 0 || summary.identityConflicts > 0 || summary.metadataOpsLost !== "0") code |= 4;
  if (summary.failedReplicas > 0) code |= 8;
  return code;
}
