/**
 * `segscan gen <dir> --cluster N` (docs/fleet.md "A sample cluster"): N node
 * roots of one cluster (`<dir>/node-0` … `node-<N-1>`), written from one seed so
 * every replica holds the same bytes, each with its own superblock identity
 * (replica id i of N), then replica-specific faults so `segscan fleet` shows
 * every verdict. Partition faults go one per partition, from the second
 * partition on (the first stays clean everywhere).
 */
import { open, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { shellQuote } from "../domain/command.js";
import { encodeBatch, encodeIndex, type MessageInput } from "../format/encode.js";
import { readBatchHeader } from "../format/records.js";
import { TORN_EVIDENCE_BRIEF } from "../policy/torn-evidence.js";
import { generateDataDir, type GenerateOptions } from "./generate.js";
import { makeMessage } from "./messages.js";
import { type GeneratedNode, SAMPLE_CLUSTER_ID, writeNodeMetadata } from "./node/node.js";
import { Prng } from "./prng.js";
import { getScenario } from "./scenarios.js";
import type { PartitionLayout } from "./types.js";

/** What `segscan fleet` concludes for a cluster fault. */
export interface ClusterExpectation {
  /** The partition's fleet verdict (partition faults), or null (metadata faults). */
  verdict: "clean" | "lagging" | "degraded" | "lost" | "diverged" | null;
  /** The metadata finding (metadata faults). */
  metadata: "ClusterMismatch" | "DuplicateReplicaId" | "OpsLost" | null;
}

interface ClusterContext {
  nodes: number;
  seed: number;
  /** Each node's layout of the partition the fault is given (partition faults). */
  layouts: PartitionLayout[];
}

export interface ClusterFault {
  name: string;
  description: string;
  expected: ClusterExpectation;
  kind: "partition" | "metadata";
  /** Partition faults: changes the partition's files on some nodes; returns what it did. */
  inject?(context: ClusterContext): Promise<string>;
}

async function tornTail(layout: PartitionLayout, seed: number): Promise<void> {
  await getScenario("torn-tail").inject(layout, new Prng(seed, 0x7e_a1));
}

async function interiorDamage(layout: PartitionLayout, seed: number): Promise<void> {
  await getScenario("payload-bitflip").inject(layout, new Prng(seed, 0x1d_4a));
}

/** Drops the tail segment's last `batches` batches at a batch boundary, and the index entries past it: a clean, shorter log. */
async function lagBehind(layout: PartitionLayout, batches: number): Promise<bigint> {
  const segment = layout.segments.at(-1)!;
  const keep = Math.max(1, segment.batches.length - batches);
  const cut = segment.batches[keep]!.position;
  await truncate(segment.logPath, cut);
  await writeFile(segment.indexPath, encodeIndex(segment.indexEntries.filter((entry) => entry.position < BigInt(cut))));
  return segment.batches[keep]!.baseOffset;
}

/** Rewrites the tail segment's last batch with the same base offset, count and timestamps but other payloads: a valid, different batch. */
async function divergeLastBatch(layout: PartitionLayout, seed: number): Promise<bigint> {
  const segment = layout.segments.at(-1)!;
  const last = segment.batches.at(-1)!;
  const bytes = new Uint8Array(await readFile(segment.logPath));
  const header = readBatchHeader(bytes, last.position);
  const rng = new Prng(seed, 0xd1_7e);
  const messages: MessageInput[] = [];
  let delta = 0;
  for (let i = 0; i < header.messageCount; i++) {
    delta += rng.int(0, 250);
    messages.push(makeMessage(rng, header.baseOffset + BigInt(i), i, header.originTimestamp + BigInt(delta), delta));
  }
  const batch = encodeBatch({
    partitionId: header.partitionId,
    baseOffset: header.baseOffset,
    baseTimestamp: header.baseTimestamp,
    originTimestamp: header.originTimestamp,
    messages,
  });
  await truncate(segment.logPath, last.position);
  const handle = await open(segment.logPath, "a");
  try {
    await handle.write(batch);
  } finally {
    await handle.close();
  }
  return header.baseOffset;
}

const node = (i: number): string => `node-${i}`;

export const CLUSTER_FAULTS: readonly ClusterFault[] = [
  {
    name: "torn-on-one",
    kind: "partition",
    description: "node-1's replica has a torn tail (a crash mid-append) that the other replicas hold whole",
    expected: { verdict: "degraded", metadata: null },
    async inject({ layouts, seed }) {
      await tornTail(layouts[1]!, seed);
      return `${node(1)}: torn tail in its tail segment; rebuild ${node(1)} from ${node(0)}`;
    },
  },
  {
    name: "interior-on-one",
    kind: "partition",
    description:
      "node-0's replica has interior damage (a flipped bit, intact batches after it) in a middle segment; the others hold a clean copy",
    expected: { verdict: "degraded", metadata: null },
    async inject({ layouts, seed }) {
      await interiorDamage(layouts[0]!, seed);
      return `${node(0)}: InteriorDamage in a middle segment; rebuild ${node(0)} from ${node(1)}`;
    },
  },
  {
    name: "lost-everywhere",
    kind: "partition",
    description: "the same batch damaged on every replica (interior damage in a middle segment): that range is lost on every replica",
    expected: { verdict: "lost", metadata: null },
    async inject({ layouts, seed }) {
      for (const layout of layouts) await interiorDamage(layout, seed);
      return `every node: InteriorDamage at the same batch of a middle segment; the offsets past it in that segment are lost everywhere`;
    },
  },
  {
    name: "lagging",
    kind: "partition",
    description: "the last node's replica ends 3 batches early, cleanly (it had not caught up): it lags, nothing is lost",
    expected: { verdict: "lagging", metadata: null },
    async inject({ layouts, nodes }) {
      const from = await lagBehind(layouts[nodes - 1]!, 3);
      return `${node(nodes - 1)}: ends cleanly before offset ${from}; it catches up from ${node(0)}`;
    },
  },
  {
    name: "divergent",
    kind: "partition",
    description: "node-1's last batch holds other messages under the same offsets (a split brain): every replica scans clean",
    expected: { verdict: "diverged", metadata: null },
    async inject({ layouts, seed }) {
      const base = await divergeLastBatch(layouts[1]!, seed);
      return `${node(1)}: the batch at offset ${base} rewritten with other payloads (valid checksums)`;
    },
  },
  {
    name: "torn-everywhere",
    kind: "partition",
    description: `the same torn tail on every replica (${TORN_EVIDENCE_BRIEF["short-batch"]}), while the consumer group had stored the last offset`,
    expected: { verdict: "degraded", metadata: null },
    async inject({ layouts, seed }) {
      for (const layout of layouts) await tornTail(layout, seed);
      return "every node: the same torn tail; the group offset (stored at the old end) is past every replica's head";
    },
  },
  {
    name: "identity-mismatch",
    kind: "metadata",
    description: "the last node's metadata superblock names another cluster (a misplaced data dir)",
    expected: { verdict: null, metadata: "ClusterMismatch" },
  },
  {
    name: "duplicate-replica-id",
    kind: "metadata",
    description: "node-1's metadata superblock claims replica id 0, as node-0 does (a copied data dir)",
    expected: { verdict: null, metadata: "DuplicateReplicaId" },
  },
  {
    name: "metadata-ops-lost",
    kind: "metadata",
    description: "every node's WAL lost its last 4 entries (ops 52..55) while commit_max is 55: committed ops no node holds",
    expected: { verdict: null, metadata: "OpsLost" },
  },
];

export function getClusterFault(name: string): ClusterFault {
  const fault = CLUSTER_FAULTS.find((candidate) => candidate.name === name);
  if (fault === undefined) throw new RangeError(`unknown cluster fault "${name}"; \`segscan gen --list\` shows them`);
  return fault;
}

export interface GeneratedCluster {
  dir: string;
  nodes: { name: string; root: string; node: GeneratedNode }[];
  partitions: number;
  faults: { fault: ClusterFault; partition: string | null; detail: string }[];
}

export interface ClusterOptions extends Omit<GenerateOptions, "scenario" | "scenarios"> {
  /** Cluster faults to inject; default: every one. */
  faults?: readonly string[];
}

/** Writes `nodes` node roots of one cluster under `dir` and injects the cluster faults. */
export async function generateCluster(dir: string, nodes: number, options: ClusterOptions = {}): Promise<GeneratedCluster> {
  if (!Number.isSafeInteger(nodes) || nodes < 2 || nodes > 255) throw new RangeError(`--cluster takes 2..255 nodes, got ${nodes}`);
  const faults = (options.faults ?? CLUSTER_FAULTS.map((fault) => fault.name)).map(getClusterFault);
  const partitionFaults = faults.filter((fault) => fault.kind === "partition");
  const seed = options.seed ?? 1;
  const generate: GenerateOptions = { size: "tiny", ...options, seed, force: options.force ?? false };
  delete (generate as ClusterOptions).faults;
  // One partition per partition fault, and a clean one first.
  const needed = partitionFaults.length + 1;
  const partitionsPerTopic = options.partitionsPerTopic ?? 2;
  if (options.topicsPerStream === undefined) generate.topicsPerStream = Math.max(1, Math.ceil(needed / partitionsPerTopic));
  generate.partitionsPerTopic = partitionsPerTopic;
  const names = Array.from({ length: nodes }, (_, i) => node(i));
  const written = [];
  for (const [i, name] of names.entries()) {
    const root = join(dir, name);
    const data = await generateDataDir(root, generate);
    if (data.partitions.length < needed) {
      throw new RangeError(
        `${partitionFaults.length} partition faults need ${needed} partitions; the sample has ${data.partitions.length}`,
      );
    }
    const has = (fault: string) => faults.some((f) => f.name === fault);
    const identity = {
      cluster: has("identity-mismatch") && i === nodes - 1 ? SAMPLE_CLUSTER_ID ^ 0xffn : SAMPLE_CLUSTER_ID,
      replicaId: has("duplicate-replica-id") && i === 1 ? 0 : i,
      replicaCount: nodes,
    };
    const metadata = await writeNodeMetadata(root, data.partitions, {
      seed,
      identity,
      ...(has("metadata-ops-lost") ? { fault: "wal-committed-lost-cluster" } : {}),
    });
    written.push({ name, root, node: metadata, partitions: data.partitions });
  }
  const injected: GeneratedCluster["faults"] = [];
  for (const [i, fault] of partitionFaults.entries()) {
    const layouts = written.map((entry) => entry.partitions[i + 1]!);
    const detail = await fault.inject!({ nodes, seed, layouts });
    injected.push({ fault, partition: layouts[0]!.relativePath, detail });
  }
  for (const fault of faults.filter((f) => f.kind === "metadata")) injected.push({ fault, partition: null, detail: fault.description });
  return {
    dir,
    nodes: written.map(({ name, root, node: metadata }) => ({ name, root, node: metadata })),
    partitions: written[0]!.partitions.length,
    faults: injected,
  };
}

/**
 * What to run after `gen --cluster` (docs/fleet.md "A sample cluster"): each
 * node's scan with `--replicas N` (so its own next steps know its peers, and
 * fleet has nothing to warn about), to a report in the current directory, then
 * the merge. Each line is shell-quoted, so it runs as printed.
 */
export function clusterNextCommands(cluster: Pick<GeneratedCluster, "nodes">): string[] {
  const replicas = String(cluster.nodes.length);
  const scans = cluster.nodes.map(
    (node) => `${shellQuote(["segscan", "scan", node.root, "--replicas", replicas, "--ndjson"])} > ${shellQuote([`${node.name}.ndjson`])}`,
  );
  return [...scans, shellQuote(["segscan", "fleet", ...cluster.nodes.map((node) => `${node.name}=${node.name}.ndjson`)])];
}

/** `gen --list`'s cluster part. */
export function clusterFaultListText(): string {
  const width = Math.max(...CLUSTER_FAULTS.map((fault) => fault.name.length));
  const lines = [
    "",
    "Cluster faults (segscan gen <dir> --cluster N [--cluster-fault NAME ...]; default: all); `segscan fleet` concludes:",
    "",
  ];
  for (const fault of CLUSTER_FAULTS) {
    lines.push(`  ${fault.name.padEnd(width)}  ${fault.description}`);
    lines.push(`  ${"".padEnd(width)}  → ${fault.expected.verdict ?? fault.expected.metadata}`);
  }
  return lines.join("\n") + "\n";
}
