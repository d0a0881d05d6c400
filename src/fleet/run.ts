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

/** One report's place in the merge: its next partition line (`head`, null at its end), and what it skipped. */
class SourceCursor {
  head: Head | null = null;
  /** Lines that name no streams/<s>/topics/<t>/partitions/<p>: not merged. */
  unidentified = 0;
  /** Partitions other reports have that this report (not of a node root) may not cover. */
  unknown = 0;
  private lastKey: string | null = null;

  constructor(readonly source: ReportSource) {}

  /** The next line that names a partition; a key not after the last one means the report is not in path order. */
  async advance(): Promise<void> {
    for (;;) {
      const next = await this.source.lines.next();
      if (next.done) {
        this.head = null;
        return;
      }
      const identity = partitionIdentity(next.value.path);
      if (identity === null) {
        this.unidentified++;
        continue;
      }
      const previous = this.lastKey;
      if (previous !== null && identity.key <= previous) {
        throw new ReportInputError(
          this.source.file,
          `${this.source.file}: partition ${identity.key} comes after ${previous}: ` +
            (identity.key === previous ? "the report lists it twice" : "the report is not in path order (was it edited?)"),
        );
      }
      this.lastKey = identity.key;
      this.head = { identity, line: next.value };
      return;
    }
  }
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
  const cursors = sources.map((source) => new SourceCursor(source));
  await Promise.all(cursors.map((cursor) => cursor.advance()));
  const summary = emptySummary(sources.length);
  for (;;) {
    let head: Head | null = null;
    for (const cursor of cursors)
      if (cursor.head !== null && (head === null || cursor.head.identity.key < head.identity.key)) head = cursor.head;
    if (head === null) break;
    const key = head.identity.key;
    const group = cursors.filter((cursor) => cursor.head?.identity.key === key);
    const partition = mergePartition(
      head.identity,
      context,
      cursors.map((cursor) => (cursor.head?.identity.key === key ? cursor.head.line : null)),
    );
    for (const [index, replica] of partition.replicas.entries()) {
      const cursor = cursors[index];
      if (replica.role === "unknown" && cursor !== undefined) cursor.unknown++;
    }
    addToSummary(summary, partition);
    await onPartition(partition);
    await Promise.all(group.map((cursor) => cursor.advance()));
  }
  const metadata = mergeMetadata(sources.map((source) => ({ name: source.name, node: source.header.node })));
  finishSummary(
    summary,
    metadata,
    cursors.reduce((sum, cursor) => sum + cursor.unidentified, 0),
  );
  const nodes: FleetNode[] = cursors.map(({ source, unidentified }) => ({
    name: source.name,
    file: source.file,
    root: source.root,
    format: source.format,
    engine: source.header.engine,
    verify: source.header.options.verify,
    partitions: source.header.summary.partitions,
    unidentified,
    replicas: source.header.options.replicaCount,
    coversRoot: source.header.node !== undefined,
  }));
  const { steps, warnings } = clusterSteps(
    metadata,
    nodes.map((node, index) => ({ ...node, unknown: cursors[index]?.unknown ?? 0 })),
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
