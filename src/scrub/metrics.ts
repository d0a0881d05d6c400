/**
 * The scrub's metrics file (docs/scrub.md §5): Prometheus text exposition
 * format for node_exporter's textfile collector (every family with HELP and
 * TYPE, gauges and counters, one file replaced whole), written atomically
 * (temp file + rename in the same directory) so the collector never reads half
 * a file. Its first line (METRICS_HEADER) marks it as the scrub's: an existing
 * file at the path that is not is never replaced (docs/scrub.md §3.1).
 */
import { SEGSCAN_VERSION } from "../version.js";
import { FINDING_CODES, NODE_ITEMS, NODE_SEVERITIES, type PassSummary } from "./findings.js";
import { writeOwnFileAtomic } from "./output-file.js";

/** The metrics file's first line: a plain comment, which the exposition format (and node_exporter) skips. */
export const METRICS_HEADER = "# segscan scrub metrics (docs/scrub.md §5): rewritten whole after each complete pass";

/** One line of the exposition as segscan writes it: a comment (HELP and TYPE included), a sample of a segscan family, or blank. */
const OWN_LINE = /^(?:#.*|segscan_[a-z0-9_]+(?:\{.*\})? \S+|)$/;

/**
 * Whether a file beginning with `head` is a metrics file the scrub wrote:
 * today's header first, or (earlier releases, no header) the first family's
 * HELP; and every whole line of `head` one segscan writes.
 */
export function isScrubMetricsHead(head: string): boolean {
  if (!head.startsWith(`${METRICS_HEADER}\n`) && !head.startsWith("# HELP segscan_")) return false;
  const lines = head.split("\n");
  // The last piece may be a line cut by the read's bound (or "" after the final newline): only whole lines are judged.
  return lines.slice(0, -1).every((line) => OWN_LINE.test(line));
}

/**
 * At most this many `segscan_scrub_partition_findings{partition}` series: one
 * per partition with a segment finding, the first in path order. Past it the
 * other failing partitions get no series of their own (a disk that fails
 * everywhere must not turn into thousands of series); they still count in
 * `segscan_scrub_failing_partitions` and in `segscan_scrub_findings{code}`, and
 * `segscan_scrub_partitions_unlisted` says how many were left out.
 */
export const MAX_PARTITION_SERIES = 20;

/**
 * At most this many `segscan_scrub_node_finding{item,code,severity,path}`
 * series: one per counted (repairable, refused, failed) node finding, in
 * report order. Past it the rest still count in
 * `segscan_scrub_node_findings{item,severity}`, and
 * `segscan_scrub_node_findings_unlisted` says how many were left out.
 */
export const MAX_NODE_PATH_SERIES = 20;

/** Label values escape backslash, double quote and newline (exposition format). */
function labelValue(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export interface MetricsInput {
  root: string;
  summary: PassSummary;
  /** The configured rate limit, bytes/s (Infinity when unlimited). */
  rateLimitBytesPerSecond: number;
}

/** Unix seconds of an ISO time, 0 for never (the textfile convention for a job that has not succeeded yet). */
const unixSeconds = (iso: string | null): number => (iso === null ? 0 : Date.parse(iso) / 1000);

type Sample = [labels: string, value: number];

/** The exposition being written: every family with HELP and TYPE, every sample labelled with the root. */
class Exposition {
  readonly lines: string[] = [METRICS_HEADER];
  constructor(private readonly rootLabel: string) {}

  metric(name: string, type: "counter" | "gauge", help: string, samples: readonly Sample[]): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [extra, value] of samples)
      this.lines.push(`${name}{${this.rootLabel}${extra}} ${Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "NaN"}`);
  }
}

export function formatMetrics({ root, summary, rateLimitBytesPerSecond }: MetricsInput): string {
  const out = new Exposition(`root="${labelValue(root)}"`);
  out.metric("segscan_build_info", "gauge", "The segscan release that wrote these metrics (always 1; the version is the label).", [
    [`,version="${labelValue(SEGSCAN_VERSION)}"`, 1],
  ]);
  passMetrics(out, summary);
  partitionMetrics(out, summary);
  nodeMetrics(out, summary);
  timeMetrics(out, summary, rateLimitBytesPerSecond);
  return out.lines.join("\n") + "\n";
}

/** What the passes verified and read. */
function passMetrics(out: Exposition, summary: PassSummary): void {
  out.metric(
    "segscan_scrub_bytes_verified_total",
    "counter",
    "Bytes of segment data proven by scrub passes (all runs the state file remembers).",
    [["", summary.totals.bytesVerified]],
  );
  out.metric("segscan_scrub_segments_verified_total", "counter", "Segments verified by scrub passes (all runs the state file remembers).", [
    ["", summary.totals.segmentsVerified],
  ]);
  out.metric("segscan_scrub_passes_completed_total", "counter", "Scrub passes that visited every segment.", [
    ["", summary.totals.passesCompleted],
  ]);
  out.metric("segscan_scrub_last_pass_bytes_read", "gauge", "Bytes read from disk by the last pass (log and index).", [
    ["", summary.bytesRead],
  ]);
  out.metric("segscan_scrub_last_pass_segments_verified", "gauge", "Segments verified by the last pass.", [["", summary.segmentsVerified]]);
  out.metric("segscan_scrub_last_pass_segments_skipped", "gauge", "Segments the last pass skipped as unchanged.", [
    ["", summary.segmentsSkipped],
  ]);
}

/** The segment findings, by code and by partition (bounded series). */
function partitionMetrics(out: Exposition, summary: PassSummary): void {
  out.metric(
    "segscan_scrub_findings",
    "gauge",
    "Segment findings of the last pass, by code (see docs/scrub.md §4).",
    FINDING_CODES.map((code) => [`,code="${code}"`, summary.findingsByCode[code]]),
  );
  const failing = summary.failingPartitions;
  out.metric("segscan_scrub_failing_partitions", "gauge", "Partitions with a segment finding in the last pass.", [["", failing.length]]);
  out.metric(
    "segscan_scrub_partition_findings",
    "gauge",
    `Segment findings of the last pass in one partition, one series per failing partition (at most ${MAX_PARTITION_SERIES}, path order).`,
    failing.slice(0, MAX_PARTITION_SERIES).map(({ partition, findings }) => [`,partition="${labelValue(partition)}"`, findings]),
  );
  out.metric("segscan_scrub_partitions_unlisted", "gauge", `Failing partitions past the ${MAX_PARTITION_SERIES} listed by partition.`, [
    ["", Math.max(0, failing.length - MAX_PARTITION_SERIES)],
  ]);
}

/** The node items' findings (docs/scrub.md §4.1), when the pass checked them. */
function nodeMetrics(out: Exposition, summary: PassSummary): void {
  const node = summary.node;
  out.metric(
    "segscan_scrub_node_checked",
    "gauge",
    "1 when the last pass checked the node items (a node root: WAL, snapshot, superblocks, offsets, purge.gen).",
    [["", node === null ? 0 : 1]],
  );
  if (node === null) return;
  out.metric(
    "segscan_scrub_node_findings",
    "gauge",
    "Node findings of the last pass by item and severity (docs/scrub.md §4.1); repairable, refused and failed are the alarms.",
    NODE_ITEMS.flatMap((item) =>
      NODE_SEVERITIES.map((severity): Sample => [`,item="${item}",severity="${severity}"`, node.findings[item][severity]]),
    ),
  );
  // One series per (item, code, severity, path): several findings on one file with one code add up.
  const series = new Map<string, number>();
  for (const { item, code, severity, path } of node.failing) {
    const key = `,item="${item}",code="${labelValue(code)}",severity="${severity}",path="${labelValue(path)}"`;
    if (series.has(key) || series.size < MAX_NODE_PATH_SERIES) series.set(key, (series.get(key) ?? 0) + 1);
  }
  const listed = [...series.values()].reduce((sum, count) => sum + count, 0);
  out.metric(
    "segscan_scrub_node_finding",
    "gauge",
    `Counted node findings of the last pass on one file (at most ${MAX_NODE_PATH_SERIES} series, report order).`,
    [...series],
  );
  out.metric("segscan_scrub_node_findings_unlisted", "gauge", `Counted node findings past the ${MAX_NODE_PATH_SERIES} listed by path.`, [
    ["", node.failing.length - listed],
  ]);
  out.metric(
    "segscan_scrub_node_deferred",
    "gauge",
    "Node findings the last pass deferred to the next (a file the server may be writing), by reason.",
    Object.entries(node.deferred).map(([reason, count]): Sample => [`,reason="${reason}"`, count]),
  );
}

/** When the passes ran and how fast. */
function timeMetrics(out: Exposition, summary: PassSummary, rateLimitBytesPerSecond: number): void {
  out.metric("segscan_scrub_last_pass_timestamp_seconds", "gauge", "Unix time the last pass ended.", [
    ["", Date.parse(summary.finishedAt) / 1000],
  ]);
  out.metric("segscan_scrub_last_full_pass_timestamp_seconds", "gauge", "Unix time the last complete pass ended (0: never).", [
    ["", unixSeconds(summary.lastFullPassAt)],
  ]);
  out.metric(
    "segscan_scrub_last_success_timestamp_seconds",
    "gauge",
    "Unix time the last complete pass ended that read every file it meant to (no UnreadableFile, no failed node item; 0: never). Findings do not make a pass fail.",
    [["", unixSeconds(summary.lastSuccessAt)]],
  );
  out.metric("segscan_scrub_last_pass_duration_seconds", "gauge", "Wall time of the last pass.", [["", summary.elapsedMs / 1000]]);
  out.metric("segscan_scrub_rate_bytes_per_second", "gauge", "Read rate the last pass achieved.", [["", summary.bytesPerSecond]]);
  out.metric("segscan_scrub_rate_limit_bytes_per_second", "gauge", "The configured read rate limit.", [["", rateLimitBytesPerSecond]]);
}

export async function writeMetrics(path: string, input: MetricsInput): Promise<void> {
  await writeOwnFileAtomic(path, formatMetrics(input), "metrics file", isScrubMetricsHead);
}
