/**
 * The scrub's metrics file (docs/scrub.md §5): Prometheus text exposition
 * format for node_exporter's textfile collector, written atomically (temp file
 * + rename in the same directory) so the collector never reads half a file.
 */
import { FINDING_CODES, type PassSummary } from "./findings.js";
import { writeFileAtomic } from "./state.js";

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

export function formatMetrics({ root, summary, rateLimitBytesPerSecond }: MetricsInput): string {
  const labels = `root="${labelValue(root)}"`;
  const lines: string[] = [];
  const metric = (name: string, type: "counter" | "gauge", help: string, samples: [string, number][]): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [extra, value] of samples)
      lines.push(`${name}{${labels}${extra}} ${Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "NaN"}`);
  };
  metric(
    "segscan_scrub_bytes_verified_total",
    "counter",
    "Bytes of segment data proven by scrub passes (all runs the state file remembers).",
    [["", summary.totals.bytesVerified]],
  );
  metric("segscan_scrub_segments_verified_total", "counter", "Segments verified by scrub passes (all runs the state file remembers).", [
    ["", summary.totals.segmentsVerified],
  ]);
  metric("segscan_scrub_passes_completed_total", "counter", "Scrub passes that visited every segment.", [
    ["", summary.totals.passesCompleted],
  ]);
  metric("segscan_scrub_last_pass_bytes_read", "gauge", "Bytes read from disk by the last pass (log and index).", [
    ["", summary.bytesRead],
  ]);
  metric("segscan_scrub_last_pass_segments_verified", "gauge", "Segments verified by the last pass.", [["", summary.segmentsVerified]]);
  metric("segscan_scrub_last_pass_segments_skipped", "gauge", "Segments the last pass skipped as unchanged.", [
    ["", summary.segmentsSkipped],
  ]);
  metric(
    "segscan_scrub_findings",
    "gauge",
    "Findings of the last pass, by code (see docs/scrub.md §4).",
    FINDING_CODES.map((code) => [`,code="${code}"`, summary.findingsByCode[code]]),
  );
  metric("segscan_scrub_last_pass_timestamp_seconds", "gauge", "Unix time the last pass ended.", [
    ["", Date.parse(summary.finishedAt) / 1000],
  ]);
  metric("segscan_scrub_last_full_pass_timestamp_seconds", "gauge", "Unix time the last complete pass ended (0: never).", [
    ["", summary.lastFullPassAt === null ? 0 : Date.parse(summary.lastFullPassAt) / 1000],
  ]);
  metric("segscan_scrub_last_pass_duration_seconds", "gauge", "Wall time of the last pass.", [["", summary.elapsedMs / 1000]]);
  metric("segscan_scrub_rate_bytes_per_second", "gauge", "Read rate the last pass achieved.", [["", summary.bytesPerSecond]]);
  metric("segscan_scrub_rate_limit_bytes_per_second", "gauge", "The configured read rate limit.", [["", rateLimitBytesPerSecond]]);
  return lines.join("\n") + "\n";
}

export async function writeMetrics(path: string, input: MetricsInput): Promise<void> {
  await writeFileAtomic(path, formatMetrics(input));
}
