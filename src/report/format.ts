/**
 * The human scan report, problems first (docs/interfaces.md §9.2): the
 * verdict, each node's findings, then each partition that is not clean, each
 * finding as one short line with its next step; clean partitions are a count
 * (`all` lists them), and the summary comes last. `verbose` gives each problem
 * its full block: the whole explanation and one line per segment (offset
 * range, byte size, arm, outcome, residue). Colour comes from picocolors and
 * only when the caller enables it (the CLI does so on a TTY without NO_COLOR).
 */
import pc from "picocolors";
import { type Severity, SEVERITY_ORDER, nodeFindings } from "../domain/node.js";
import {
  type IgnoredEntry,
  type PartitionFinding,
  type PartitionReport,
  type PartitionScopeRange,
  type Refusal,
  type ScanReport,
  type SegmentReport,
  type SegmentScopeRange,
  scanNodes,
  scanVerdict,
} from "../domain/scan.js";
import { nextStepShort, offsetsText } from "../policy/next-step.js";
import { TORN_EVIDENCE_BRIEF, TORN_EVIDENCE_WORDS } from "../policy/torn-evidence.js";
import { formatNode, paint } from "./node-format.js";

export type Colors = ReturnType<typeof pc.createColors>;

export interface FormatOptions {
  color?: boolean;
  /** Paths are shown relative to this directory when they lie under it. */
  relativeTo?: string;
  /** `--verbose`: every problem in full (its whole explanation, its segments); otherwise one short line per finding. */
  verbose?: boolean;
  /** `--all`: clean partitions listed too (one line each, or in full with `verbose`); otherwise counted. */
  all?: boolean;
  /** The width a short line is cut to (BRIEF_COLUMNS when not given); a command is never cut. */
  columns?: number;
}

function briefColumnsOf(options: FormatOptions): number {
  return briefColumns(options.columns);
}

/** Made once each: a report formats every partition, and each set is ~40 closures (docs/benchmarks.md). */
const COLORS = { on: pc.createColors(true), off: pc.createColors(false) };

export function colors(enabled: boolean): Colors {
  return enabled ? COLORS.on : COLORS.off;
}

import { BRIEF_COLUMNS, briefColumns, clipLine, formatBytes, formatCount } from "./units.js";

export { BRIEF_COLUMNS, clipLine, formatBytes, formatCount };

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function displayPath(path: string, relativeTo: string | undefined): string {
  if (relativeTo === undefined) return path;
  const base = relativeTo.endsWith("/") ? relativeTo : `${relativeTo}/`;
  return path.startsWith(base) ? path.slice(base.length) : path;
}

function baseName(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? path : path.slice(at + 1);
}

/** How a verdict and a segment outcome are shown: refusals and failures loudest. */
const VERDICT_TEXT: Record<PartitionReport["verdict"], (c: Colors) => string> = {
  clean: (c) => c.green("clean"),
  repairable: (c) => c.yellow("repairable"),
  refused: (c) => c.bold(c.red("REFUSED")),
  failed: (c) => c.bold(c.magenta("FAILED")),
};
const OUTCOME_TEXT: Record<SegmentReport["outcome"], (c: Colors) => string> = {
  clean: (c) => c.green("clean"),
  "torn-tail": (c) => c.yellow("torn-tail"),
  empty: (c) => c.yellow("empty"),
  refused: (c) => c.red("refused"),
};
const verdictText = (verdict: PartitionReport["verdict"], c: Colors): string => VERDICT_TEXT[verdict](c);
const outcomeText = (outcome: SegmentReport["outcome"], c: Colors): string => OUTCOME_TEXT[outcome](c);

function offsetRange(segment: SegmentReport): string {
  if (segment.endOffset === null) return `${segment.startOffset}.. (no messages)`;
  return `${segment.startOffset}..${segment.endOffset}`;
}

/**
 * Whether the segment's residue is the damaged end of a segment that is not
 * the last, which the next segment shows the server wrote past
 * (docs/recovery.md §4 step 3): its scope says `unreadable` from the damage on.
 */
function endsBeforeNext(segment: SegmentReport, next: SegmentReport | undefined): boolean {
  const last = segment.scope[segment.scope.length - 1];
  return next !== undefined && last?.kind === "unreadable" && last.startPosition === segment.residue?.damagePosition;
}

/** The residue clause of a segment line, or "". `next` is the segment after it in the partition. */
function residueText(segment: SegmentReport, next: SegmentReport | undefined, c: Colors): string {
  const residue = segment.residue;
  if (residue === null) return "";
  const what = residue.allZero ? "all zero" : "not all zero";
  const sealed = residue.probe === "no-survivor" && endsBeforeNext(segment, next);
  let probe: string;
  switch (residue.probe) {
    case "no-survivor":
      // None in this file, but the next segment starts above the offsets these bytes held: no torn tail of the log.
      probe = sealed ? c.red(`no survivor in this file; segment ${next!.startOffset} follows`) : "no survivor";
      break;
    case "survivor":
      probe = c.red(`survivor at ${formatCount(residue.survivorPosition ?? 0)}`);
      break;
    case "budget-exhausted":
      probe = c.red("probe budget exhausted");
      break;
  }
  const verb = segment.outcome === "torn-tail" && !sealed ? "cut at" : "damage at";
  return (
    `${verb} ${formatCount(residue.damagePosition)}: residue ${formatBytes(residue.bytes)} ${what}, ${probe}` +
    c.dim(` (${formatCount(residue.spentUnits)} units)`)
  );
}

/** docs/recovery.md §3.7: a torn range's words, from the one table the WAL's finding uses too. */
export { TORN_EVIDENCE_WORDS };

/** A range's message count as the line prints it: exact for verified batches, an upper bound for unreadable offsets, a claim for a torn tail. */
function messagesText(range: PartitionScopeRange): string | null {
  if (range.messages === null) return null;
  const msgs = `${formatCount(range.messages)} msg${range.messages === 1 ? "" : "s"}`;
  if (range.kind === "unreadable" || range.kind === "missing") return `≤${msgs}`;
  return msgs;
}

/** One range: `unreadable 129..133 (≤5 msgs, 10.5 KiB)`; a torn one says what its header claims and what its bytes prove. */
export function scopeRangeText(range: PartitionScopeRange | SegmentScopeRange): string {
  const details = [messagesText(range), range.kind === "missing" ? "no bytes" : formatBytes(range.bytes)].filter((part) => part !== null);
  if (range.kind === "torn") {
    const claim =
      range.firstOffset === null && range.messages === null
        ? "its header does not decode, so its offsets are unknown"
        : range.firstOffset === null
          ? "its header claims no message"
          : `its header claims ${offsetsText(range)} (${messagesText(range)})`;
    const evidence = range.tornEvidence !== null ? `; ${TORN_EVIDENCE_WORDS[range.tornEvidence]}` : "";
    return `torn tail (${formatBytes(range.bytes)}): ${claim}${evidence}`;
  }
  return `${range.kind} ${offsetsText(range)} (${details.join(", ")})`;
}

/** docs/recovery.md §3.7 in one line: every range of a scope, in order. */
export function scopeLine(scope: readonly (PartitionScopeRange | SegmentScopeRange)[]): string {
  return scope.map(scopeRangeText).join(" · ");
}

function indexNotes(segment: SegmentReport): string[] {
  const notes: string[] = [];
  const index = segment.index;
  if (index.rebuilt) notes.push(`index to rebuild: ${index.rebuiltEntries} entr${index.rebuiltEntries === 1 ? "y" : "ies"}`);
  // A refused segment counts only the proven prefix's entries (docs/recovery.md §3.2): those past the damage are its doing.
  if (index.mismatches > 0)
    notes.push(
      `${index.mismatches} index entr${index.mismatches === 1 ? "y does" : "ies do"} not sit on a verified batch` +
        (segment.outcome === "refused" ? " inside the proven prefix" : ""),
    );
  if (index.trailingBytes > 0 && !index.rebuilt) notes.push(`index: trim ${index.trailingBytes} trailing bytes (torn entry)`);
  return notes;
}

function sameRefusal(a: Refusal, b: Refusal | null): boolean {
  return b !== null && a.code === b.code && a.message === b.message;
}

export function refusalLine(refusal: Refusal, c: Colors): string {
  return `${c.bold(c.red(refusal.code))}: ${refusal.message}`;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function padStart(text: string, width: number): string {
  return text.length >= width ? text : " ".repeat(width - text.length) + text;
}

function ignoredReason(kind: IgnoredEntry["kind"]): string {
  switch (kind) {
    case "bad-segment-name":
      return "not a segment name: the start offset as exactly 20 decimal digits";
    case "not-regular-file":
      return "not a regular file";
    case "directory-symlink":
      return "a link to a directory: not followed";
  }
}

export function formatPartition(partition: PartitionReport, options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  const lines: string[] = [];
  lines.push(`${c.bold(displayPath(partition.path, options.relativeTo))}`);
  lines.push(
    `  verdict ${verdictText(partition.verdict, c)}  →  action ${c.bold(partition.action)}` +
      (partition.budget.spentUnits > 0
        ? c.dim(`  (probe spent ${formatCount(partition.budget.spentUnits)} of ${formatCount(partition.budget.limitUnits)} units)`)
        : ""),
  );
  if (partition.error !== null) {
    // Every error message names its path; repeat it only when it does not.
    const named = partition.error.message.includes(partition.error.path);
    lines.push(
      `  ${c.bold(c.magenta(partition.error.code))}: ${partition.error.message}` +
        (named ? "" : c.dim(` (${displayPath(partition.error.path, options.relativeTo)})`)),
    );
  }
  if (partition.refusal !== null) lines.push(`  ${refusalLine(partition.refusal, c)}`);
  // docs/repair.md §6.6: what the preserve dir records (a salvage's lost offsets) comes before the bytes' details.
  for (const finding of partition.findings) lines.push(`  ${findingLine(finding, c)}`);
  lines.push(`  ${c.bold("next step")}: ${partition.nextStep}`);
  // The partition's scope when it spans several segments; a single segment's line below says the same.
  if (partition.segments.length > 1 && partition.scope.length > 1) lines.push(`  scope: ${scopeLine(partition.scope)}`);

  const rows = partition.segments.map((segment) => ({
    segment,
    name: baseName(segment.logPath),
    range:
      offsetRange(segment) +
      (segment.messageCount === null || segment.endOffset === null ? "" : ` (${formatCount(segment.messageCount)} msgs)`),
    size: formatBytes(segment.messagesSize),
  }));
  const rangeWidth = Math.max(0, ...rows.map((row) => row.range.length));
  const sizeWidth = Math.max(0, ...rows.map((row) => row.size.length));
  for (const [i, row] of rows.entries()) {
    const { segment } = row;
    const parts = [
      `  ${c.dim(row.name)}`,
      `offsets ${pad(row.range, rangeWidth)}`,
      padStart(row.size, sizeWidth),
      pad(segment.arm, 10),
      outcomeText(segment.outcome, c),
    ];
    const residue = residueText(segment, partition.segments[i + 1], c);
    lines.push(parts.join("  ") + (residue === "" ? "" : `  ${residue}`));
    for (const gap of segment.gaps) {
      lines.push(
        `      forward gap at byte ${formatCount(gap.position)}: expected offset ${gap.expectedOffset}, found ${gap.foundOffset} (absorbed)`,
      );
    }
    for (const warning of segment.warnings) lines.push(`      ${c.yellow("warning")} ${warning.code}: ${warning.message}`);
    if (segment.scope.length > 1) lines.push(`      scope: ${scopeLine(segment.scope)}`);
    for (const note of indexNotes(segment)) lines.push(`      ${note}`);
    // The partition's refusal is printed above; a copy (a report that crossed a worker thread) is the same refusal.
    if (segment.refusal !== null && !sameRefusal(segment.refusal, partition.refusal)) {
      lines.push(`      ${refusalLine(segment.refusal, c)}`);
    }
  }
  for (const candidate of partition.sweep) {
    lines.push(`  sweep ${baseName(candidate.path)} ${c.dim(`(${candidate.kind}: moved aside by repair)`)}`);
  }
  for (const ignored of partition.ignored) {
    lines.push(`  ${c.dim(`ignored ${baseName(ignored.path)} (${ignoredReason(ignored.kind)}; never touched)`)}`);
  }
  return lines.join("\n");
}

/** docs/repair.md §6.6: one partition finding, one line: severity, code, what it says. */
export function findingLine(finding: PartitionFinding, c: Colors): string {
  return `${paint(finding.severity, finding.severity, c)} ${c.bold(finding.code)}: ${finding.message}`;
}

/** The partition findings of the summary ("partition findings: 1 warn"); empty when there are none. */
function partitionFindingCounts(report: Pick<ScanReport, "summary">, c: Colors): string {
  const { warn, failed } = report.summary.findings;
  const parts = [
    ...(failed > 0 ? [paint("failed", `${formatCount(failed)} failed`, c)] : []),
    ...(warn > 0 ? [paint("warn", `${formatCount(warn)} warn`, c)] : []),
  ];
  return parts.length === 0 ? "" : `partition findings: ${parts.join(", ")}`;
}

/** The nodes' findings by severity, worst first, for the summary ("1 refused, 2 warn"); empty when the scan met no node root. */
function nodeFindingCounts(report: Pick<ScanReport, "node" | "nodes">, c: Colors): string {
  const nodes = scanNodes(report);
  if (nodes.length === 0) return "";
  const counts = new Map<Severity, number>();
  for (const node of nodes) {
    for (const finding of nodeFindings(node)) counts.set(finding.severity, (counts.get(finding.severity) ?? 0) + 1);
  }
  const parts = [...SEVERITY_ORDER]
    .reverse()
    .filter((severity) => severity !== "clean" && (counts.get(severity) ?? 0) > 0)
    .map((severity) => paint(severity, `${formatCount(counts.get(severity)!)} ${severity}`, c));
  if (nodes.length === 1) return parts.length === 0 ? "no node findings" : `node findings: ${parts.join(", ")}`;
  return parts.length === 0 ? `${nodes.length} nodes, no findings` : `${nodes.length} nodes' findings: ${parts.join(", ")}`;
}

/**
 * The scan's one verdict (docs/node.md N0: partitions and, for each node root,
 * the metadata plane and offsets), as the first line of the report and the
 * first word of the summary.
 */
export function formatVerdict(report: Parameters<typeof scanVerdict>[0], options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  const verdict = scanVerdict(report);
  return `${c.bold("verdict")} ${paint(verdict, verdict.toUpperCase(), c)}`;
}

export function formatSummary(report: ScanReport, options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  const s = report.summary;
  const count = (n: number, word: string, paintWith: (text: string) => string): string =>
    n > 0 ? paintWith(`${formatCount(n)} ${word}`) : `${formatCount(n)} ${word}`;
  const parts = [
    `${formatCount(s.partitions)} partition${s.partitions === 1 ? "" : "s"}:`,
    count(s.clean, "clean", c.green),
    count(s.repairable, "repairable", c.yellow),
    count(s.refused, "refused", c.red),
    count(s.failed, "failed", c.magenta),
  ];
  const rate = s.elapsedMs > 0 ? ` (${formatBytes((s.bytesScanned / s.elapsedMs) * 1000)}/s)` : "";
  const node = nodeFindingCounts(report, c);
  const recorded = partitionFindingCounts(report, c);
  return (
    `${formatVerdict(report, options)} · ${parts[0]} ${parts.slice(1).join(", ")}${recorded === "" ? "" : ` · ${recorded}`}` +
    `${node === "" ? "" : ` · ${node}`}` +
    ` · ${formatBytes(s.bytesScanned)} read in ${formatDuration(s.elapsedMs)}${rate}`
  );
}

/** docs/recovery.md §3.5: what a probe budget unit is, said once in the header. */
export const PROBE_UNIT_WORDS = "a unit is one byte the probe examines";

export function formatHeader(report: ScanReport, options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  const o = report.options;
  const bits = [
    `segscan ${report.segscan}`,
    `engine ${report.engine}`,
    `verify ${o.verify === "full" ? "full (deep)" : "tail"}`,
    `replicas ${o.replicaCount}`,
    `probe budget ${formatCount(o.probeBudgetUnits)} units (${PROBE_UNIT_WORDS})`,
    `window ${formatBytes(o.windowBytes)}`,
  ];
  if (o.maxBatchBytes !== undefined) bits.push(`max batch ${formatBytes(o.maxBatchBytes)} (override)`);
  return c.dim(bits.join(" · "));
}

/** The "not followed" block of a report (directory links discovery skipped). */
export function formatSkipped(skipped: readonly IgnoredEntry[], options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  return skipped
    .map((entry) =>
      c.dim(`not followed: ${displayPath(entry.path, options.relativeTo)} (a link to a directory; scan its target by its own path)`),
    )
    .join("\n");
}

/** Shown instead of partitions when a scan found none. */
export const NO_PARTITIONS_TEXT = "no partitions found (no directory holding .log files)";

// ---------------------------------------------------------------------------
// Problems first: one short line per finding

/** One range in a few words: `unreadable 670..674 (≤5 msgs)`, `torn tail of 19.9 KiB claiming 972..995 (a short batch: …)`. */
export function briefRange(range: PartitionScopeRange): string {
  if (range.kind === "torn") {
    const claim = range.firstOffset === null ? "" : ` claiming ${offsetsText(range)}`;
    const evidence = range.tornEvidence === null ? "" : ` (${TORN_EVIDENCE_BRIEF[range.tornEvidence]})`;
    return `torn tail of ${formatBytes(range.bytes)}${claim}${evidence}`;
  }
  const messages = messagesText(range);
  return `${range.kind} ${offsetsText(range)}${messages === null ? "" : ` (${messages})`}`;
}

/** What a repair of this partition does besides cutting its torn tails: index rebuilds and trims, sweeps. */
function repairWork(partition: PartitionReport): string[] {
  const work: string[] = [];
  const rebuilt = partition.segments.filter((segment) => segment.index.rebuilt).length;
  if (rebuilt > 0) work.push(`${rebuilt} index${rebuilt === 1 ? "" : "es"} to rebuild`);
  const trimmed = partition.segments.filter((segment) => !segment.index.rebuilt && segment.index.trailingBytes > 0).length;
  if (trimmed > 0) work.push(`${trimmed} index${trimmed === 1 ? "" : "es"} to trim (a torn entry)`);
  const empty = partition.segments.filter((segment) => segment.outcome === "empty").length;
  if (empty > 0) work.push(`${empty} empty segment${empty === 1 ? "" : "s"} (no whole batch)`);
  if (partition.sweep.length > 0) work.push(`${partition.sweep.length} scratch file${partition.sweep.length === 1 ? "" : "s"} to sweep`);
  return work;
}

/** A problem partition's finding in one line: its refusal or error code and its scope of loss, or what its repair does. */
export function partitionProblem(partition: PartitionReport): string {
  if (partition.error !== null) {
    // The line above names the partition: a message that starts with its path says "the dir" instead.
    const { message, path } = partition.error;
    const brief =
      path === partition.path && message.startsWith(`${path}: `)
        ? message.slice(path.length + 2)
        : path === partition.path && message.startsWith(`${path} `)
          ? `the dir ${message.slice(path.length + 1)}`
          : message.includes(path)
            ? message
            : `${message} (${path})`;
    return `${partition.error.code}: ${brief}`;
  }
  const scope = partition.scope.filter((range) => range.kind !== "proven" || partition.verdict === "refused").map(briefRange);
  if (partition.refusal !== null) return `${partition.refusal.code}: ${scope.join(" · ")}`;
  return [...scope, ...repairWork(partition)].join("; ") || partition.action;
}

/** The next step in its short form: the words up to the end of the command it names (the whole line with `verbose`). */
function nextStepText(step: { nextStep: string; nextCommand?: readonly string[] | null }, verbose: boolean): string {
  if (verbose || step.nextCommand == null) return step.nextStep;
  return nextStepShort({ text: step.nextStep, command: [...step.nextCommand] });
}

/** A problem partition in three lines: path, verdict and action; its finding (cut to the width); its next step (never cut). */
export function formatPartitionBrief(partition: PartitionReport, options: FormatOptions = {}): string {
  const c = colors(options.color ?? false);
  const columns = briefColumnsOf(options) - 2;
  // docs/repair.md §6.6: what the preserve dir records (a salvage's lost offsets) leads, one short line each.
  const recorded = partition.findings.map((finding) => {
    // Clipped as plain text, then painted: a cut never splits a colour's escape sequence.
    const rest = clipLine(`${finding.severity} ${finding.code}: ${finding.message}`, columns).slice(finding.severity.length);
    return `  ${paint(finding.severity, finding.severity, c)}${rest}`;
  });
  const problem = partition.verdict === "clean" ? [] : [clipLine(partitionProblem(partition), columns)];
  return [
    `${c.bold(displayPath(partition.path, options.relativeTo))}  ${verdictText(partition.verdict, c)} → ${c.bold(partition.action)}`,
    ...recorded,
    ...problem.map((line) => `  ${partition.verdict === "repairable" ? line : c.red(line)}`),
    `  ${c.bold("next step")}: ${nextStepText(partition, false)}`,
  ].join("\n");
}

/** A clean partition in one line (`--all`): its offsets, segments and size. */
function formatCleanBrief(partition: PartitionReport, options: FormatOptions): string {
  const c = colors(options.color ?? false);
  const proven = partition.scope[0];
  const offsets = proven === undefined ? "no offset" : `offsets ${offsetsText(proven)}`;
  const bytes = partition.segments.reduce((sum, segment) => sum + segment.messagesSize, 0);
  const segments = `${partition.segments.length} segment${partition.segments.length === 1 ? "" : "s"}`;
  return `${displayPath(partition.path, options.relativeTo)}  ${verdictText(partition.verdict, c)}  ${offsets} (${segments}, ${formatBytes(bytes)})`;
}

/**
 * The text report built as the partitions come (the streamed scan keeps only
 * what it prints: the problems, and the clean partitions only with `all`),
 * laid out problems first once the verdict is known (`finish`).
 */
export class TextReport {
  private readonly problems: string[] = [];
  private readonly clean: string[] = [];
  private cleanCount = 0;

  constructor(private readonly options: FormatOptions = {}) {}

  /** One partition, terminal-safe, in path order. */
  add(partition: PartitionReport): void {
    const { verbose = false, all = false } = this.options;
    if (partition.verdict === "clean" && partition.findings.length === 0) {
      this.cleanCount++;
      if (all) this.clean.push(verbose ? formatPartition(partition, this.options) : formatCleanBrief(partition, this.options));
      return;
    }
    this.problems.push(verbose ? formatPartition(partition, this.options) : formatPartitionBrief(partition, this.options));
  }

  /** The whole text: `report` gives the header, the node sections, the skipped links and the summary (its partitions were added). */
  finish(report: Omit<ScanReport, "partitions">): string {
    const options = this.options;
    const blocks = [`${formatVerdict(report, options)}\n${formatHeader({ ...report, partitions: [] }, options)}`];
    for (const node of scanNodes(report)) blocks.push(formatNode(node, options));
    if (report.summary.partitions === 0) blocks.push(NO_PARTITIONS_TEXT);
    blocks.push(...this.problems);
    if (options.all) blocks.push(...(options.verbose ? this.clean : [this.clean.join("\n")]).filter((block) => block !== ""));
    else if (this.cleanCount > 0) {
      const one = this.cleanCount === 1;
      blocks.push(`${formatCount(this.cleanCount)} clean partition${one ? "" : "s"} (--all lists ${one ? "it" : "them"})`);
    }
    if (report.skipped !== undefined && report.skipped.length > 0) blocks.push(formatSkipped(report.skipped, options));
    blocks.push(formatSummary({ ...report, partitions: [] }, options));
    return `${blocks.join("\n\n")}\n`;
  }
}

/** The whole human report, problems first (see TextReport). */
export function formatReport(report: ScanReport, options: FormatOptions = {}): string {
  const text = new TextReport(options);
  for (const partition of report.partitions) text.add(partition);
  return text.finish(report);
}
