/**
 * What to do next, per partition and for the cluster (docs/fleet.md "Next
 * steps"): a sentence, and where a command does it, the command as an argv
 * array and shell-quoted (src/domain/command.ts), with the real paths from the
 * reports and the node to run it on. Pure: everything comes from the merged
 * partition, the metadata plane and the nodes' reports.
 */
import { shellQuote } from "../domain/command.js";
import { TORN_TAILS_CLAIM_BRIEF } from "../policy/torn-evidence.js";
import { formatCount } from "../report/units.js";
import { FORWARD_GAP } from "./adapter.js";
import { type Range, subtract, totalSize } from "./ranges.js";
import type { FleetMetadata, FleetPartition, FleetReplica, FleetStep } from "./schema.js";

/** What the steps need of the nodes besides the partition (a subset of merge.ts's MergeContext). */
export interface StepContext {
  names: readonly string[];
  roots: readonly (string | null)[];
  replicas: number;
}

export function step(about: string, node: string | null, text: string, argv: readonly string[] | null = null): FleetStep {
  return { about, node, text, command: argv === null ? null : shellQuote(argv), argv: argv === null ? null : [...argv] };
}

const big = (range: { from: string; to: string }): Range => ({ from: BigInt(range.from), to: BigInt(range.to) });
const rangeText = (range: Range): string =>
  range.from === range.to ? formatCount(range.from) : `${formatCount(range.from)}..${formatCount(range.to)}`;
const rangesText = (ranges: readonly Range[]): string => ranges.map(rangeText).join(", ");
const list = (names: readonly string[]): string =>
  names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
const VERDICT_RANK: Record<string, number> = { clean: 0, repairable: 1, refused: 2 };

/** A partition dir under a node root: the root as the report gives it, then the key. */
export function partitionUnder(root: string, key: string): string {
  return root.endsWith("/") ? `${root}${key}` : `${root}/${key}`;
}

/** The scan that judges a replica: the partition on its node, with the cluster's replica count. */
const scanArgv = (path: string, replicas: number): string[] => ["segscan", "scan", path, "--replicas", String(replicas)];
/** A node root's scan as a report `fleet` merges. */
export const nodeScanArgv = (root: string, replicas: number): string[] => [...scanArgv(root, replicas), "--ndjson"];

/** Where a replica's partition is on its node: its report's path, or (not covered) its root and the key. */
function pathOf(partition: Pick<FleetPartition, "key">, replica: FleetReplica, context: StepContext): string | null {
  if (replica.path !== null) return replica.path;
  const root = context.roots[context.names.indexOf(replica.node)];
  return root === null || root === undefined ? null : partitionUnder(root, partition.key);
}

const heldOf = (replica: FleetReplica): bigint =>
  [...replica.proven, ...replica.intact].reduce((sum, range) => sum + BigInt(range.count), 0n);

/**
 * A partition's next steps, problems first: the replicas that could not be
 * judged, then what the verdict asks (a lost range: salvage the replica that
 * holds the most and rebuild the others from it, or restore from a backup; a
 * divergence: the odd replica out and how to look at it; a damaged replica:
 * the peer to rebuild it from, or a repair in place).
 */
export function partitionSteps(
  partition: Omit<FleetPartition, "nextSteps">,
  context: StepContext,
  logPathOf: (node: string, segment: string) => string | null = () => null,
): FleetStep[] {
  const lost = partition.lost.filter((range) => range.kind === "durable").map(big);
  const steps = unjudgedSteps(partition, context, lost);
  if (partition.verdict === "lost") steps.push(...lostSteps(partition, lost));
  else if (partition.verdict === "diverged") steps.push(...divergedSteps(partition, logPathOf));
  else {
    for (const replica of partition.replicas) {
      const found = rebuildStep(partition, replica, context);
      if (found !== null) steps.push(found);
    }
  }
  return steps;
}

/** The replicas that could not be judged: a failed scan, or (where something is lost) a report that does not cover the partition. */
function unjudgedSteps(partition: Omit<FleetPartition, "nextSteps">, context: StepContext, lost: readonly Range[]): FleetStep[] {
  const steps: FleetStep[] = [];
  for (const replica of partition.replicas) {
    const path = pathOf(partition, replica, context);
    const argv = path === null ? null : scanArgv(path, context.replicas);
    if (replica.role === "failed") {
      steps.push(
        step(
          "failed",
          replica.node,
          `${replica.node}'s scan of this partition failed (${replica.error ?? "no error recorded"}): fix what stopped it, then scan it again on ${replica.node}`,
          argv,
        ),
      );
    } else if (replica.role === "unknown" && lost.length > 0) {
      // Only where it matters here; the cluster's steps say once per node that its report is partial.
      steps.push(
        step(
          "unknown",
          replica.node,
          `first scan ${replica.node}'s replica: its report does not cover this partition, and it may hold ${rangesText(lost)}`,
          argv,
        ),
      );
    }
  }
  return steps;
}

/** Where nothing is lost: a missing or damaged replica rebuilt from the peer that holds what it lacks, or repaired in place. */
function rebuildStep(partition: Omit<FleetPartition, "nextSteps">, replica: FleetReplica, context: StepContext): FleetStep | null {
  const path = pathOf(partition, replica, context);
  if (replica.role === "missing") {
    return step(
      "missing",
      replica.node,
      replica.rebuildFrom === null
        ? `${replica.node} has no such partition and no peer holds an offset of it`
        : `${replica.node} has no such partition: rebuild it there from ${replica.rebuildFrom}`,
    );
  }
  if (replica.role !== "damaged") return null;
  const onlyCuts = replica.refusals.length === 0 && replica.cuts.length > 0 && replica.unreadable.length === 0;
  if (replica.rebuildFrom !== null) {
    // docs/heal.md: heal copies only the batches it lacks, once the source proves them; the paths as the reports give them.
    const source = partition.replicas.find((r) => r.node === replica.rebuildFrom);
    const from = source === undefined ? null : pathOf(partition, source, context);
    return path === null || from === null
      ? step("damaged", replica.node, `rebuild ${replica.node}'s replica from ${replica.rebuildFrom}, which holds what it lacks`)
      : step(
          "damaged",
          replica.node,
          `rebuild ${replica.node}'s replica from ${replica.rebuildFrom}, which holds what it lacks: heal copies only those batches, ` +
            `once ${replica.rebuildFrom}'s copy proves them (mount or copy ${replica.rebuildFrom}'s partition dir on ${replica.node}; without --apply it prints the plan, or says why it cannot)`,
          ["segscan", "heal", path, "--from", from],
        );
  }
  if (!onlyCuts || path === null) return null;
  return step(
    "damaged",
    replica.node,
    `repair ${replica.node}'s replica in place (no peer holds more of its torn tail; ${TORN_TAILS_CLAIM_BRIEF}: its scan names the evidence); without --apply it prints the plan`,
    ["segscan", "repair", path, "--apply"],
  );
}

/** A range lost on every replica judged: salvage the replica that holds the most, rebuild the others from it, or restore a backup. */
function lostSteps(partition: Omit<FleetPartition, "nextSteps">, lost: readonly Range[]): FleetStep[] {
  const steps: FleetStep[] = [];
  const lostText = rangesText(lost);
  const judged = partition.replicas.filter((replica) => replica.present && replica.role !== "failed");
  const unjudged = partition.replicas.filter((replica) => replica.role === "failed" || replica.role === "unknown");
  // A replica not judged may hold what is lost: act on the others only once it is judged and holds none of it.
  const condition =
    unjudged.length === 0
      ? ""
      : `if ${list(unjudged.map((replica) => replica.node))} hold${unjudged.length === 1 ? "s" : ""} none of ${lostText} either: `;
  const keeper = keeperOf(judged);
  if (keeper !== null && heldOf(keeper) > 0n) {
    const held = partition.held.map(big);
    const lacks = subtract(
      held,
      [...keeper.proven, ...keeper.intact].map(big).sort((a, b) => (a.from < b.from ? -1 : 1)),
    );
    const also =
      lacks.length === 0
        ? ""
        : ` and also ${rangesText(lacks)} (${formatCount(totalSize(lacks))} offsets other replicas hold: no replica holds everything the cluster holds)`;
    steps.push(keeperStep(keeper, condition, lostText, also));
    const others = partition.replicas.filter((replica) => replica !== keeper && replica.role !== "failed" && replica.role !== "unknown");
    if (others.length > 0) {
      const traces = others.filter((replica) => replica.unreadable.length > 0).map((replica) => replica.node);
      steps.push(
        step(
          "lost",
          null,
          `then rebuild ${list(others.map((replica) => replica.node))} from ${keeper.node}` +
            (traces.length === 0
              ? ""
              : `; first copy ${list(traces)}'s partition dir${traces.length === 1 ? "" : "s"} out of the data dir: ${traces.length === 1 ? "its" : "their"} unreadable bytes are the last trace of ${lostText}`),
        ),
      );
    }
  }
  steps.push(step("lost", null, `or restore this partition from a backup that holds ${lostText}`));
  return steps;
}

/** The judged replica that holds the most offsets (the better verdict between equals), or null when none is judged. */
function keeperOf(judged: readonly FleetReplica[]): FleetReplica | null {
  let keeper: FleetReplica | null = null;
  for (const replica of judged) {
    if (
      keeper === null ||
      heldOf(replica) > heldOf(keeper) ||
      (heldOf(replica) === heldOf(keeper) && (VERDICT_RANK[replica.verdict ?? ""] ?? 9) < (VERDICT_RANK[keeper.verdict ?? ""] ?? 9))
    )
      keeper = replica;
  }
  return keeper;
}

/** What to do with the replica kept: salvage it (refused), repair it (repairable), or keep it as it is. */
function keeperStep(keeper: FleetReplica, condition: string, lostText: string, also: string): FleetStep {
  const most = `which holds the most (${formatCount(heldOf(keeper))} offsets)`;
  const lacks = also === "" ? "" : `; it lacks${also.slice(" and also".length)}`;
  const path = keeper.path;
  if (keeper.verdict === "refused" && path !== null) {
    return step(
      "lost",
      keeper.node,
      `${condition}stop iggy-server on ${keeper.node}, then salvage its replica, ${most}: salvage keeps every batch that verifies and records ${lostText}${also} as lost; without --apply it prints the plan, or says why it cannot`,
      ["segscan", "salvage", path, "--apply"],
    );
  }
  if (keeper.verdict === "repairable" && path !== null) {
    return step(
      "lost",
      keeper.node,
      `${condition}stop iggy-server on ${keeper.node}, then repair its replica, ${most}: it cuts only a provably torn tail${lacks}`,
      ["segscan", "repair", path, "--apply"],
    );
  }
  const gaps = keeper.unreadable.filter((u) => u.code === FORWARD_GAP).map(big);
  const skipped =
    gaps.length === 0 ? "" : `; its forward gaps skip ${rangesText(gaps)} (a salvage dropped them, or its offset counter moved past them)`;
  return step(
    "lost",
    keeper.node,
    `${condition}keep ${keeper.node}'s replica, ${most} and scans ${keeper.verdict ?? "clean"}${skipped}${lacks}`,
  );
}

/** A divergence: the odd replica out (majority by checksum) and how to look at it, or no majority to decide. */
function divergedSteps(
  partition: Omit<FleetPartition, "nextSteps">,
  logPathOf: (node: string, segment: string) => string | null,
): FleetStep[] {
  const steps: FleetStep[] = [];
  const dumpArgv = (node: string, segment: string): string[] | null => {
    const log = logPathOf(node, segment);
    return log === null ? null : ["segscan", "dump", log, "--messages"];
  };
  for (const divergence of partition.divergence) {
    const at = `${divergence.kind === "last-batch" ? "the batch at offset" : "segment"} ${formatCount(BigInt(divergence.offset))}`;
    const segmentOf = (node: string) => divergence.replicas.find((replica) => replica.node === node)!.segment;
    if (divergence.majority !== null) {
      const source = divergence.majority.nodes[0]!;
      for (const odd of divergence.odd) {
        steps.push(
          step(
            "diverged",
            odd,
            `${odd} is the odd one out at ${at} (${list(divergence.majority.nodes)} agree): stop producing to this partition, look at what ${odd} holds there (its consumers may have read it), then rebuild ${odd}'s replica from ${source}`,
            dumpArgv(odd, segmentOf(odd)),
          ),
        );
      }
    } else {
      for (const node of divergence.odd) {
        steps.push(
          step(
            "diverged",
            node,
            `no majority decides ${at} (${list(divergence.odd)} disagree): look at what ${node} holds there`,
            dumpArgv(node, segmentOf(node)),
          ),
        );
      }
      steps.push(
        step(
          "diverged",
          null,
          `then decide which replica is right and rebuild the others from it; stop producing to this partition until then`,
        ),
      );
    }
  }
  return steps;
}

/** What the cluster-wide steps need of each node's report. */
export interface NodeFacts {
  name: string;
  root: string | null;
  /** The report's `--replicas`. */
  replicas: number;
  /** Partitions other reports have that this one does not cover (role unknown). */
  unknown: number;
  /** Its partition lines that name no partition. */
  unidentified: number;
}

/**
 * The cluster's next steps and warnings: the metadata plane's findings (lost
 * committed ops, conflicting identities, with how to tell which node is
 * wrong), reports that do not cover what the others hold, lines not merged,
 * and reports scanned for another replica count than the nodes merged.
 */
export function clusterSteps(
  metadata: FleetMetadata,
  nodes: readonly NodeFacts[],
  replicas: number,
  hexId: (decimal: string | null) => string,
): { steps: FleetStep[]; warnings: string[] } {
  const rescan = (name: string): string[] | null => {
    const root = nodes.find((node) => node.name === name)?.root ?? null;
    return root === null ? null : nodeScanArgv(root, replicas);
  };
  const steps: FleetStep[] = [];
  if (metadata.opsLost !== null) steps.push(opsLostStep(metadata, metadata.opsLost, rescan));
  for (const conflict of metadata.identityConflicts) steps.push(...identitySteps(metadata, conflict, replicas, hexId, rescan));
  const warnings: string[] = [];
  for (const node of nodes) {
    if (node.unknown > 0) {
      steps.push(
        step(
          "unknown",
          node.name,
          `${node.name}'s report is not of its node root and lacks ${formatCount(node.unknown)} partition${node.unknown === 1 ? "" : "s"} other reports have: what ${node.name} holds there is unknown; scan its node root and merge again`,
          node.root === null ? null : nodeScanArgv(node.root, replicas),
        ),
      );
    }
    if (node.unidentified > 0) {
      steps.push(
        step(
          "unidentified",
          node.name,
          `${formatCount(node.unidentified)} partition line${node.unidentified === 1 ? "" : "s"} of ${node.name}'s report name${node.unidentified === 1 ? "s" : ""} no streams/<s>/topics/<t>/partitions/<p>: not merged and not judged; scan the partitions where they lie under a node root's streams/`,
        ),
      );
    }
    if (node.replicas !== replicas) {
      warnings.push(
        `${node.name}'s report was scanned with --replicas ${node.replicas}, but the cluster has ${replicas} replicas: its own next steps assume ${node.replicas === 1 ? "a solo copy" : `${node.replicas} replicas`}`,
      );
      steps.push(
        step(
          "replicas",
          node.name,
          `scan ${node.name} again with --replicas ${replicas}`,
          node.root === null ? null : nodeScanArgv(node.root, replicas),
        ),
      );
    }
  }
  if (metadata.replicaCount !== null && metadata.replicaCount > nodes.length) {
    warnings.push(
      `the superblocks record ${metadata.replicaCount} replicas but ${nodes.length} report${nodes.length === 1 ? " is" : "s are"} merged: what the other ${metadata.replicaCount - nodes.length} hold is unknown, so nothing here is "lost on every replica", only on every replica judged`,
    );
  }
  return { steps, warnings };
}

/** Committed ops no booting node holds: the node whose WAL still holds them, or a backup. */
function opsLostStep(
  metadata: FleetMetadata,
  opsLost: NonNullable<FleetMetadata["opsLost"]>,
  rescan: (name: string) => string[] | null,
): FleetStep {
  const ops = rangeText(big(opsLost));
  const lastLost = BigInt(opsLost.to);
  for (const node of metadata.nodes) {
    if (!node.present || node.boots !== false || node.walOps === null || BigInt(node.walOps.last) < lastLost) continue;
    return step(
      "OpsLost",
      node.node,
      `${node.node}'s WAL holds ops up to ${formatCount(BigInt(node.walOps.last))} but ${node.node} would not boot: settle what stops it (its own scan says what), and it re-supplies ops ${ops} to the others`,
      rescan(node.node),
    );
  }
  return step(
    "OpsLost",
    null,
    `restore metadata/ on one node from a backup that holds op ${formatCount(lastLost)} and let the others catch up from it, or accept the loss of ops ${ops} (each node's boot runs without them)`,
  );
}

/** Conflicting node identities, and how to tell which node is wrong. */
function identitySteps(
  metadata: FleetMetadata,
  conflict: FleetMetadata["identityConflicts"][number],
  replicas: number,
  hexId: (decimal: string | null) => string,
  rescan: (name: string) => string[] | null,
): FleetStep[] {
  const clusterOf = (name: string): string => hexId(metadata.nodes.find((node) => node.node === name)?.cluster ?? null);
  if (conflict.code === "ClusterMismatch") {
    const majority = metadata.nodes.filter((node) => node.present && node.cluster !== null && !conflict.nodes.includes(node.node));
    if (majority[0] === undefined) {
      return [
        step(
          "ClusterMismatch",
          null,
          `no majority tells which cluster is right: on each node, compare the cluster id its iggy-server is configured with and the one its superblock records (${conflict.nodes.map((name) => `${name} ${clusterOf(name)}`).join(", ")})`,
        ),
      ];
    }
    const recorded = hexId(majority[0].cluster);
    return conflict.nodes.map((name) =>
      step(
        "ClusterMismatch",
        name,
        `${name} is the odd one out (cluster ${clusterOf(name)}; ${list(majority.map((node) => node.node))} record ${recorded}): on ${name}, check that this is the data dir its iggy-server uses and that the report is of it (scan it again); do not start ${name} on it until the ids agree`,
        rescan(name),
      ),
    );
  }
  if (conflict.code === "DuplicateReplicaId") {
    const id = metadata.nodes.find((node) => node.node === conflict.nodes[0])?.replicaId ?? null;
    const count = metadata.replicaCount ?? replicas;
    const claimed = new Set(metadata.nodes.flatMap((node) => (node.replicaId === null ? [] : [node.replicaId])));
    const unclaimed = Array.from({ length: count }, (_, i) => i).filter((i) => !claimed.has(i));
    return [
      step(
        "DuplicateReplicaId",
        null,
        `${list(conflict.nodes)} claim replica id ${id}${unclaimed.length === 0 ? "" : ` and no node claims ${unclaimed.join(", ")}`}: the node whose iggy-server is configured as replica ${id} is right; each other one holds a copy of that replica's data dir: stop it, and rebuild its data dir from the cluster as the replica it is configured as`,
      ),
    ];
  }
  if (conflict.code === "ReplicaCountMismatch") {
    return [
      step(
        "ReplicaCountMismatch",
        null,
        `${list(conflict.nodes)} record another replica count than the others: compare each node's configured cluster size with its superblock; the odd ones hold a data dir of another cluster layout`,
      ),
    ];
  }
  return [
    step(
      "ReplicaIdOutOfRange",
      null,
      `${list(conflict.nodes)} record a replica id at or past the replica count: compare each one's configured replica id with its superblock`,
    ),
  ];
}
