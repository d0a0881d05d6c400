/**
 * The node section of `scan --json` (docs/node.md N9): u64 values as decimal
 * strings, positions and counts as numbers; library-only fields (the decoded
 * snapshot tree) left out. The shape is `NodeJsonSchema` (src/report/node-schema.ts).
 */
import type { NodeFinding, NodePartitionReport, NodeReport, SuperblockReport } from "../domain/node.js";
import { nodeFindingNext } from "../policy/next-step.js";
import type { JsonNode, JsonNodeFinding, JsonSuperblock } from "./node-schema.js";

const u64 = (value: bigint): string => value.toString();
const u64OrNull = (value: bigint | null): string | null => (value === null ? null : value.toString());

/** A node finding, with its next step (docs/repair.md §6.4) for the node root `root` it was found under. */
export function findingToJson(finding: NodeFinding, root: string): JsonNodeFinding {
  const next = nodeFindingNext(finding, root);
  const out: Record<string, string | number | boolean | null | string[]> = {
    severity: finding.severity,
    code: finding.code,
    path: finding.path,
    message: finding.message,
    nextStep: next.text,
    nextCommand: next.command,
  };
  for (const [key, value] of Object.entries(finding)) {
    if (key in out) continue;
    out[key] = typeof value === "bigint" ? value.toString() : value;
  }
  return out as JsonNodeFinding;
}

function superblockToJson(superblock: SuperblockReport, root: string): JsonSuperblock {
  const vsr = superblock.vsr;
  return {
    directory: superblock.directory,
    state: superblock.state,
    slotA: superblock.slotA,
    slotB: superblock.slotB,
    sequence: u64OrNull(superblock.sequence),
    cluster: vsr ? u64(vsr.cluster) : null,
    replicaId: vsr ? vsr.replicaId : null,
    replicaCount: vsr ? vsr.replicaCount : null,
    view: vsr ? vsr.view : null,
    logView: vsr ? vsr.logView : null,
    commitMax: vsr ? u64(vsr.commitMax) : null,
    checkpointOp: vsr ? u64(vsr.checkpointOp) : null,
    checkpointChecksum: vsr ? u64(vsr.checkpointChecksum) : null,
    offsetFrontier: vsr ? u64(vsr.offsetFrontier) : null,
    findings: superblock.findings.map((finding) => findingToJson(finding, root)),
  };
}

export function nodeToJson(node: NodeReport): JsonNode {
  const { wal, snapshot, superblock } = node.metadata;
  const root = node.path;
  const findings = (list: readonly NodeFinding[]): JsonNodeFinding[] => list.map((finding) => findingToJson(finding, root));
  return {
    path: node.path,
    verdict: node.verdict,
    metadata: {
      present: node.metadata.present,
      wal:
        wal === null
          ? null
          : {
              path: wal.path,
              size: wal.size,
              entries: wal.entries,
              ops: wal.ops === null ? null : { first: u64(wal.ops.first), last: u64(wal.ops.last) },
              unsealed: { ...wal.unsealed },
              walkedSize: wal.walkedSize,
              residue: wal.residue === null ? null : { ...wal.residue },
              budget: { ...wal.budget },
              iggy: { ...wal.iggy, truncateFromOp: u64OrNull(wal.iggy.truncateFromOp) },
              findings: findings(wal.findings),
            },
      snapshot:
        snapshot === null
          ? null
          : {
              path: snapshot.path,
              present: snapshot.present,
              size: snapshot.size,
              sealed: snapshot.sealed,
              checksum: u64OrNull(snapshot.checksum),
              sequenceNumber: u64OrNull(snapshot.sequenceNumber),
              streams: snapshot.streams,
              topics: snapshot.topics,
              partitions: snapshot.partitions,
              findings: findings(snapshot.findings),
            },
      superblock: superblock === null ? null : superblockToJson(superblock, root),
      findings: findings(node.metadata.findings),
    },
    partitions: node.partitions.map((partition) => nodePartitionToJson(partition, root)),
    notDurable: [...node.notDurable],
    crossCheck: {
      orphanDirs: [...node.crossCheck.orphanDirs],
      missingDirs: [...node.crossCheck.missingDirs],
      inconclusiveStreams: [...node.crossCheck.inconclusiveStreams],
    },
    bootForecast: node.bootForecast.map((entry) => ({ ...entry })),
  };
}

/** One partition dir's entry of the node section (`node.partitions[i]`) of the node root `root`, as `nodeToJson` writes it. */
export function nodePartitionToJson(partition: NodePartitionReport, root: string): JsonNode["partitions"][number] {
  const findings = (list: readonly NodeFinding[]): JsonNodeFinding[] => list.map((finding) => findingToJson(finding, root));
  return {
    path: partition.path,
    superblock: partition.superblock === null ? null : superblockToJson(partition.superblock, root),
    head: {
      lastProvenOffset: u64OrNull(partition.head.lastProvenOffset),
      offsetFrontier: u64(partition.head.offsetFrontier),
      head: u64OrNull(partition.head.head),
      known: partition.head.known,
      quarantined: partition.head.quarantined,
    },
    purgeGeneration:
      partition.purgeGeneration === null
        ? null
        : {
            path: partition.purgeGeneration.path,
            present: partition.purgeGeneration.present,
            size: partition.purgeGeneration.size,
            generation: u64OrNull(partition.purgeGeneration.generation),
            createdRevision: u64OrNull(partition.purgeGeneration.createdRevision),
            expectedGeneration: u64OrNull(partition.purgeGeneration.expectedGeneration),
            expectedRevision: u64OrNull(partition.purgeGeneration.expectedRevision),
            findings: findings(partition.purgeGeneration.findings),
          },
    offsets: partition.offsets.map((offset) => ({
      kind: offset.kind,
      id: offset.id,
      path: offset.path,
      size: offset.size,
      offset: u64OrNull(offset.offset),
      checksummed: offset.checksummed,
      head: u64OrNull(offset.head),
      findings: findings(offset.findings),
    })),
    fenced: [...partition.fenced],
    findings: findings(partition.findings),
  };
}
