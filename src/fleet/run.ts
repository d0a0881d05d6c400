/**
 * The merge of several nodes' reports (docs/fleet.md): a sort-merge of their
 * partition lines by partition key. Each report lists its partitions in
 * discovery's path order, so the lines of one partition arrive together and
 * only one partition group is held at a time, whatever the reports' size.
 */
import { SEGSCAN_VERSION } from "../version.js";
import type { JsonScanReport } from "../report/json.js";
import { type PartitionIdentity, type PartitionLine, partitionIdentity } from "./adapter.js";
import {
  addToSummary,
  clusterVerdict,
  emptySummary,
  finishSummary,
  hexId,
  type MergeContext,
  mergeMetadata,
  mergePartition,
} from "./merge.js";
import type { ClusterVerdict, FleetMetadata, FleetNode, FleetPartition, FleetReport, FleetStep, FleetSummary } from "./schema.js";
import { clusterSteps } from "./steps.js";
import { ReportInputError, type ReportSource, fromReport } from "./source.js";

export interface FleetResult {
  segscan: string;
  verdict: ClusterVerdict;
  nodes: FleetNode[];
  metadata: FleetMetadata;
  summary: FleetSummary;
  nextSteps: FleetStep[];
  warnings: string[];
}

/** Node labels must tell the nodes apart: two reports of the same root need `name=path`. */
export function checkNames(sources: readonly Pick<ReportSource, "file" | "name">[]): void {
  const seen = new Map<string, string>();
  for (const source of sources) {
    const other = seen.get(source.name);
    if (other !== undefined) {
      throw new ReportInputError(
        source.file,
        `${other} and ${source.file} are both labelled "${source.name}" (the same node root, or the same name): ` +
          "label each report with its node's name as name=path, e.g. `segscan fleet a=a.ndjson b=b.ndjson`",
      );
    }
    seen.set(source.name, source.file);
  }
}

interface Head {
  identity: PartitionIdentity;
  line: PartitionLine;
}

/**
 * Merges the sources' partitions, calling `onPartition` with each merged
 * partition in key order (awaited: output back-pressure bounds memory), and
 * returns the nodes, the metadata plane and the summary.
 */
export async function runFleet(
  sources: readonly ReportSource[],
  onPartition: (partition: FleetPartition) => void | Promise<void>,
): Promise<FleetResult> {
  checkNames(sources);
  const names = sources.map((source) => source.name);
  // The replica count: the nodes merged, or more when a superblock records more (then not every replica is judged).
  const recorded = sources.map((source) => source.header.node?.metadata.superblock?.replicaCount ?? 0);
  const context: MergeContext = {
    names,
    covers: sources.map((source) => source.header.node !== undefined),
    roots: sources.map((source) => source.root),
    replicas: Math.max(names.length, ...recorded),
  };
  const unidentified = sources.map(() => 0);
  const unknown = sources.map(() => 0);
  const lastKey: (string | null)[] = sources.map(() => null);
  const heads: (Head | null)[] = sources.map(() => null);

  const advance = async (index: number): Promise<void> => {
    const source = sources[index]!;
    for (;;) {
      const next = await source.lines.next();
      if (next.done) {
        heads[index] = null;
        return;
      }
      const identity = partitionIdentity(next.value.path);
      if (identity === null) {
        unidentified[index]!++;
        continue;
      }
      const previous = lastKey[index] ?? null;
      if (previous !== null && identity.key <= previous) {
        throw new ReportInputError(
          source.file,
          `${source.file}: partition ${identity.key} comes after ${previous}: ` +
            (identity.key === previous ? "the report lists it twice" : "the report is not in path order (was it edited?)"),
        );
      }
      lastKey[index] = identity.key;
      heads[index] = { identity, line: next.value };
      return;
    }
  };

  await Promise.all(sources.map((_, index) => advance(index)));
  const summary = emptySummary(sources.length);
  for (;;) {
    let key: string | null = null;
    for (const head of heads) if (head !== null && (key === null || head.identity.key < key)) key = head.identity.key;
    if (key === null) break;
    const group = heads.map((head) => (head !== null && head.identity.key === key ? head : null));
    const identity = group.find((head) => head !== null)!.identity;
    const partition = mergePartition(
      identity,
      context,
      group.map((head) => head?.line ?? null),
    );
    for (const [index, replica] of partition.replicas.entries()) if (replica.role === "unknown") unknown[index]!++;
    addToSummary(summary, partition);
    await onPartition(partition);
    await Promise.all(group.map((head, index) => (head === null ? undefined : advance(index))));
  }
  const metadata = mergeMetadata(sources.map((source) => ({ name: source.name, node: source.header.node })));
  finishSummary(
    summary,
    metadata,
    unidentified.reduce((sum, count) => sum + count, 0),
  );
  const nodes: FleetNode[] = sources.map((source, index) => ({
    name: source.name,
    file: source.file,
    root: source.root,
    format: source.format,
    engine: source.header.engine,
    verify: source.header.options.verify,
    partitions: source.header.summary.partitions,
    unidentified: unidentified[index]!,
    replicas: source.header.options.replicaCount,
    coversRoot: context.covers[index]!,
  }));
  const { steps, warnings } = clusterSteps(
    metadata,
    nodes.map((node, index) => ({ ...node, unknown: unknown[index]! })),
    context.replicas,
    hexId,
  );
  return { segscan: SEGSCAN_VERSION, verdict: clusterVerdict(summary), nodes, metadata, summary, nextSteps: steps, warnings };
}

export interface MergeInput {
  /** The node's label; default: the report's node root. */
  name?: string;
  report: JsonScanReport;
}

/**
 * The library form (docs/fleet.md): merges parsed `scan --json` reports, each
 * validated against the scan schema first (a report that is not one, or of
 * another segscan version, throws a `ReportInputError` naming it by its label
 * or its index).
 */
export async function mergeReports(reports: readonly (MergeInput | JsonScanReport)[]): Promise<FleetReport> {
  const sources = reports.map((input, index) => {
    const { name, report } = "report" in input ? input : { name: undefined, report: input };
    return fromReport(report, name, name ?? `report ${index + 1}`);
  });
  const partitions: FleetPartition[] = [];
  const result = await runFleet(sources, (partition) => void partitions.push(partition));
  return {
    segscan: result.segscan,
    verdict: result.verdict,
    nodes: result.nodes,
    partitions,
    metadata: result.metadata,
    summary: result.summary,
    nextSteps: result.nextSteps,
    warnings: result.warnings,
  };
}
