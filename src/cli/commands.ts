/** The command actions. Each returns its exit status (see ./exit.ts). */
import { mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { EngineKind } from "../engine/types.js";
import {
  CLUSTER_FAULTS,
  clusterFaultListText,
  clusterNextCommands,
  generateCluster,
  type ClusterOptions,
  DEMO_SCENARIOS,
  generateDataDir,
  listScenarios,
  SCENARIOS,
  type GenerateOptions,
  type GeneratedDataDir,
  type SizeProfileName,
} from "../gen/index.js";
import { assert } from "../assert.js";
import { describeCause } from "../io/errors.js";
import {
  TargetRefusedError,
  applyRepair,
  findRestorable,
  isEmptyPlan,
  planRepair,
  planScanOptions,
  refuseLoneSegment,
  restore,
  type ApplyResult,
  type RepairPlan,
  type RestoreResult,
} from "../repair/index.js";
import { colors, formatBytes, formatCount, formatReport, formatSummary, refusalLine } from "../report/format.js";
import { stringifyJson, toJsonReport } from "../report/json.js";
import { escapeControl, escapeControlKeepingLines, terminalSafe } from "../report/terminal-safe.js";
import { formatApplied, formatPlan } from "../report/repair-format.js";
import type { ScanReport } from "../domain/scan.js";
import { worstSeverity } from "../domain/node.js";
import { shellQuote } from "../domain/command.js";
import { colorEnabled, out, resolveEngine, warn, withCancellation } from "./context.js";
import { dumpIndex, dumpKindOf, dumpLog, dumpSnapshotFile, dumpWalFile, notASegmentText } from "./dump.js";
import { EXIT, OperationalError, UsageError, scanExitCode, severityExitBits } from "./exit.js";
import { engineWasExplicit, type ScanFlags } from "./scan-flags.js";
import { runScan } from "./scan-run.js";
import { genNode, nodeFaultListText, nodeFaultNames } from "../gen/node/cli.js";

const useColor = (): boolean => colorEnabled(process.stdout);

// ---------------------------------------------------------------------------
// repair

export interface RepairFlags extends ScanFlags {
  apply?: boolean;
  /** docs/node.md N4: rewrite offsets ahead of the head (opt-in: it changes what a consumer reads next). */
  clampOffsets?: boolean;
}

/**
 * The one "left alone" section: each node finding the plan does not act on
 * (docs/node.md N7), each refused or failed partition once with its reason and
 * next step, then clean ones by count. `formatPlan` is given the plan without
 * its own lists (see `planText`), so nothing is listed twice.
 */
function leftAlone(report: ScanReport, plan: Pick<RepairPlan, "leftAlone"> | null): string {
  const c = colors(useColor());
  const lines: string[] = [];
  for (const item of terminalSafe(plan?.leftAlone ?? [])) lines.push(`  ${item.code} at ${item.path}: ${item.message}`);
  for (const partition of terminalSafe(report.partitions)) {
    if (partition.refusal !== null && partition.verdict === "refused") {
      lines.push(`  ${partition.path}: ${c.red("refused")}, action ${partition.action}`);
      lines.push(`    ${refusalLine(partition.refusal, c)}`);
      lines.push(`    next step: ${partition.nextStep}`);
    } else if (partition.error !== null) {
      lines.push(`  ${partition.path}: ${c.magenta("failed")}, action ${partition.action}`);
      lines.push(`    ${partition.error.code}: ${partition.error.message}`);
      lines.push(`    next step: ${partition.nextStep}`);
    }
  }
  const cleanCount = report.partitions.filter((partition) => partition.verdict === "clean").length;
  if (cleanCount > 0 && lines.length > 0)
    lines.push(`  ${formatCount(cleanCount)} clean partition${cleanCount === 1 ? "" : "s"}: action serve`);
  return lines.length === 0 ? "" : `\nleft alone:\n${lines.join("\n")}\n`;
}

/** The plan and its one "left alone" section (the plan's own lists go into it: see `leftAlone`). */
function planText(plan: RepairPlan, report: ScanReport): string {
  return `${formatPlan({ ...plan, leftAlone: [], skipped: [] })}${leftAlone(report, plan)}`;
}

/**
 * docs/repair.md §6.2: one repair plans one node root (its WAL cut, its offsets).
 * A scan that met several is refused before anything is planned, naming the
 * command for each root: never a plan that leaves a node's checks out.
 */
function refuseSeveralNodeRoots(report: ScanReport): void {
  if (report.nodes === undefined) return;
  const commands = report.nodes.map((node) => shellQuote(["segscan", "repair", node.path]));
  throw new UsageError(
    `the paths hold ${report.nodes.length} node roots (${report.nodes.map((node) => node.path).join(", ")}): ` +
      `repair plans one node root at a time, so repair each on its own: ${commands.join("; ")}`,
  );
}

/**
 * The re-scan after `--apply`. A cancel there must not say "nothing was
 * changed": every repair step completed, so the message names the repaired
 * targets and their journals, and points at `scan` for the state.
 */
export async function rescanRepaired(
  result: ApplyResult,
  paths: readonly string[],
  rescan: () => Promise<ScanReport>,
): Promise<ScanReport> {
  try {
    return await rescan();
  } catch (error) {
    if ((error as Error | null)?.name !== "AbortError") throw error;
    const repaired = result.targets.map((target) => `${target.path} (journal ${target.journalPath})`).join(", ");
    const cancelled = new Error(
      `cancelled during the re-scan after the repair: every repair step completed and is in the journal; repaired: ${repaired}; ` +
        `the re-scan did not finish, so \`${shellQuote(["segscan", "scan", ...paths])}\` shows the state ` +
        `(${repaired.length > 0 ? `\`${shellQuote(["segscan", "restore", result.targets[0]!.path])}\` undoes the first repair` : "segscan restore undoes a repair"})`,
      { cause: error },
    );
    cancelled.name = "AbortError";
    throw cancelled;
  }
}

/** The one `repair --json` shape, dry run and apply alike, for salvage and heal too (docs/interfaces.md §9.4). */
export function repairJson(report: ScanReport, plan: RepairPlan, applied: ApplyResult | null, after: ScanReport | null): string {
  return `${stringifyJson({ report: toJsonReport(report), plan, applied, after: after === null ? null : toJsonReport(after) })}\n`;
}

/** Said after an apply where no other writer of the changed files could be looked for. */
export function warnUncheckedWriters(result: ApplyResult): void {
  if (result.writerCheck.checked) return;
  warn(
    "other writers of the files to change were not looked for on this platform (only Linux /proc is checked): make sure iggy-server was stopped",
  );
}

/** What the re-scan says of the targets the run repaired: one line. */
function afterLine(plan: RepairPlan, after: ScanReport): string {
  const c = colors(useColor());
  const repaired = new Set(plan.targets.filter((t) => t.kind === "partition").map((t) => t.path));
  const partitions = after.partitions.filter((partition) => repaired.has(partition.path));
  const cleanNow = partitions.filter((partition) => partition.verdict === "clean").length;
  const metadata = plan.targets.some((t) => t.kind === "metadata");
  const walLeft =
    metadata && (after.node?.metadata.wal?.findings ?? []).some((f) => f.severity === "repairable" || f.severity === "refused");
  const walText = metadata ? (walLeft ? "; the metadata WAL still has findings" : "; the metadata WAL is cut to its proven prefix") : "";
  return cleanNow === partitions.length && !walLeft
    ? c.green(`re-scan: all ${partitions.length} repaired partition(s) are clean now${walText}`)
    : c.red(`re-scan: ${partitions.length - cleanNow} of ${partitions.length} repaired partition(s) are still not clean${walText}`);
}

/**
 * `repair <paths>`: scan, plan the whole node (docs/repair.md §6.2, docs/node.md
 * N7), print the plan; with `--apply`, carry it out (preflight, then change),
 * scan the same paths again, and exit with what is left.
 */
export async function repairCommand(paths: string[], flags: RepairFlags, command: Command): Promise<number> {
  const explicit = engineWasExplicit(command);
  return withCancellation(async (signal) => {
    const report = await runScan(paths, flags, explicit, signal);
    refuseSeveralNodeRoots(report);
    const plan = await planRepair(report, { clampOffsets: flags.clampOffsets === true });
    // One engine for the whole command (a wasm fallback warns once).
    let enginePromise: ReturnType<typeof resolveEngine> | undefined;
    const commandEngine = (): ReturnType<typeof resolveEngine> => (enginePromise ??= resolveEngine(flags.engine, explicit));
    const color = useColor();
    const c = colors(color);
    // A .log given alone: refused (dry run too) when its partition is refused as a whole or it is not the tail.
    for (const target of plan.targets.filter((t) => t.singleSegment)) {
      try {
        await refuseLoneSegment(target, planScanOptions(plan, await commandEngine(), signal));
      } catch (error) {
        if (!(error instanceof TargetRefusedError)) throw error;
        warn(error.message);
        return EXIT.PROBLEMS;
      }
    }
    if (!flags.apply || isEmptyPlan(plan)) {
      if (flags.json) {
        await out(repairJson(report, plan, null, null));
      } else {
        let text = `${planText(plan, report)}\n${formatSummary(report, { color })}\n`;
        if (!isEmptyPlan(plan)) text += `${c.dim("dry run: nothing was changed; add --apply to carry out the plan")}\n`;
        await out(text);
      }
      return scanExitCode(report);
    }

    if (!flags.json) await out(`${planText(plan, report)}\napplying…\n`);
    let result: ApplyResult;
    try {
      // A failure or cancel is reported by applyRepair itself: what was repaired, what was not, how to undo (docs/repair.md §6.2).
      result = await applyRepair(plan, {
        signal,
        engine: await commandEngine(),
        command: shellQuote(["segscan", "repair", ...paths, "--apply"]),
      });
    } catch (error) {
      if (error instanceof TargetRefusedError) {
        warn(error.message);
        return EXIT.PROBLEMS;
      }
      throw error;
    }
    warnUncheckedWriters(result);
    // Prove the result: scan the same paths again with the same options; the exit status is what is left.
    const after = await rescanRepaired(result, paths, () => runScan(paths, { ...flags, progress: false }, explicit, signal));
    const code = (result.changed ? EXIT.REPAIRED : EXIT.CLEAN) | scanExitCode(after);
    if (flags.json) {
      await out(repairJson(report, plan, result, after));
    } else {
      const preserved = result.targets.some((target) => target.steps.some((step) => step.preserved !== null));
      await out(
        `${formatApplied(result)}${leftAlone(after, null)}\n${afterLine(plan, after)}\n${preserved ? forgetHint(paths, "repair") : ""}`,
      );
    }
    return code;
  });
}

// ---------------------------------------------------------------------------
// restore

function restoredText(unsafe: RestoreResult): string {
  const result = terminalSafe(unsafe);
  if (!result.restored && result.closedRuns.length > 0) {
    // docs/repair.md §6.7: runs `segscan forget` closed are not undone.
    return `nothing to restore in ${result.partitionDir}: every run in its journal was closed by segscan forget (restore no longer undoes them)\n`;
  }
  const lines = [`restored ${result.partitionDir}:`, ...result.undone.map((line) => `  ${line}`)];
  if (result.undone.length === 0) lines.push("  (no step had taken effect)");
  if (result.closedRuns.length > 0) lines.push(`  (${result.closedRuns.length} older run(s) closed by segscan forget were not undone)`);
  lines.push(`journal moved to ${result.restoredJournal ?? ""}`, `scan it again: ${shellQuote(["segscan", "scan", unsafe.scanPath])}`);
  return lines.join("\n") + "\n";
}

/** docs/repair.md §6.7: said once after a restore or a repair, when the preserved copies may go. */
function forgetHint(paths: readonly string[], after: "restore" | "repair"): string {
  const c = colors(useColor());
  const command = escapeControl(shellQuote(["segscan", "forget", ...paths]));
  return after === "restore"
    ? c.dim(`the preserved copies are no longer needed by a restore: \`${command}\` lists what it frees (add --apply)`) + "\n"
    : c.dim(
        `the preserved copies stay until you delete them: once the repaired partitions are served and you will not restore them, \`${command}\` lists what it frees (add --apply)`,
      ) + "\n";
}

/**
 * `restore <path>`: a partition dir, a node's metadata dir, their `.segscan`
 * dir, or a data dir or node root, in which case every dir below it that has
 * a repair journal is restored in turn (`findRestorable`). Ctrl-C stops between
 * undo steps (exit 32) and says how far it got.
 */
export async function restoreCommand(dir: string, flags: { json?: boolean }): Promise<number> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new OperationalError(`cannot restore ${dir}: stat failed (${describeCause(error)}); nothing was changed`);
  }
  if (!info.isDirectory())
    throw new UsageError(
      `${dir} is not a directory: restore takes a node root or data dir, a partition dir, a metadata dir, or its .segscan dir`,
    );
  const targets = await findRestorable(dir);
  if (targets.length === 0) {
    if (flags.json) {
      await out(stringifyJson({ partitions: [] }) + "\n");
    } else {
      await out(
        escapeControlKeepingLines(
          `nothing to restore: no repair journal in ${resolve(dir)}.segscan/ (or beside the real path) nor in any *.segscan dir below ${resolve(dir)}\n`,
        ),
      );
    }
    return EXIT.CLEAN;
  }
  const engine = await resolveEngine("wasm", false);
  const command = shellQuote(["segscan", "restore", dir]);
  const results: RestoreResult[] = [];
  let code: number = EXIT.CLEAN;
  await withCancellation(async (signal) => {
    for (const target of targets) {
      try {
        results.push(await restore(target, { engine, signal, command }));
      } catch (error) {
        if ((error as Error).name === "AbortError") {
          const done = results.length > 0 ? `; restored in full before it: ${results.map((r) => r.partitionDir).join(", ")}` : "";
          (error as Error).message += done;
          throw error;
        }
        if (targets.length === 1) throw error;
        warn(`${target}: ${(error as Error).name}: ${(error as Error).message}`);
        code |= EXIT.OPERATIONAL;
      }
    }
  });
  if (results.some((result) => result.restored && !result.writerCheck.checked)) {
    warn(
      "other writers of the files to restore were not looked for on this platform (only Linux /proc is checked): make sure iggy-server was stopped",
    );
  }
  if (flags.json) {
    await out(stringifyJson({ partitions: results }) + "\n");
  } else {
    const hint = results.some((result) => result.restored) ? forgetHint([dir], "restore") : "";
    await out(results.map(restoredText).join("\n") + hint);
  }
  return code;
}

// ---------------------------------------------------------------------------
// dump

export interface DumpFlags {
  messages?: boolean;
  json?: boolean;
  engine: EngineKind;
  window: number;
}

export async function dumpCommand(file: string, flags: DumpFlags, command: Command): Promise<number> {
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    throw new OperationalError(`cannot dump ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!info.isFile())
    throw new UsageError(`${file} is not a file: dump takes one file (a segment .log or .index, journal.wal or snapshot.bin)`);
  const kind = dumpKindOf(file);
  if (kind === null) throw new UsageError(notASegmentText(file));
  const c = colors(useColor() && !flags.json);
  if (kind === "index") {
    const result = await dumpIndex(file, { json: flags.json ?? false, write: out, color: c });
    return result.trailingBytes > 0 ? EXIT.PROBLEMS : EXIT.CLEAN;
  }
  const engine = await resolveEngine(flags.engine, command.getOptionValueSource("engine") !== "default");
  const options = { messages: flags.messages ?? false, json: flags.json ?? false, engine, windowBytes: flags.window, color: c, write: out };
  if (kind === "snapshot") {
    // docs/node.md N0: a finding's severity as exit bits (warn, info alone exit 0).
    const { report } = await dumpSnapshotFile(file, options);
    return severityExitBits(worstSeverity(report.findings.map((finding) => finding.severity)));
  }
  if (kind === "wal") {
    const result = await withCancellation((signal) => dumpWalFile(file, { ...options, signal }));
    return result.stopped === null && result.entries === result.verified + result.unsealed ? EXIT.CLEAN : EXIT.PROBLEMS;
  }
  const result = await withCancellation((signal) => dumpLog(file, { ...options, signal }));
  return result.stopped === null && result.verified === result.batches ? EXIT.CLEAN : EXIT.PROBLEMS;
}

// ---------------------------------------------------------------------------
// gen

export interface GenFlags {
  /** Every `--scenario` given, in order: the i-th is injected into the i-th partition. */
  scenario: string[];
  list?: boolean;
  seed: number;
  size: SizeProfileName;
  segments?: number;
  segmentBytes?: number;
  flushBytes?: number;
  topics?: number;
  partitions?: number;
  force?: boolean;
  json?: boolean;
  /** Also write metadata/ (docs/node.md N1–N3): a whole node root. */
  node?: boolean;
  nodeFault?: string;
  /** docs/fleet.md: write this many node roots of one cluster. */
  cluster?: number;
  clusterFault?: string[];
}

function listText(): string {
  const width = Math.max(...SCENARIOS.map((scenario) => scenario.name.length));
  const lines = ["Fault scenarios (segscan gen <dir> --scenario NAME, repeatable); each injects one fault into one partition:", ""];
  for (const scenario of SCENARIOS) {
    const e = scenario.expected;
    const expect = e.refusal ? `${e.verdict} ${e.refusal}` : e.verdict;
    const deep = e.deep ? `; --deep: ${e.deep.refusal ?? e.deep.verdict}` : "";
    lines.push(`  ${scenario.name.padEnd(width)}  ${scenario.description}`);
    lines.push(`  ${"".padEnd(width)}  → ${expect}, scan exits ${e.scanExit}${deep}`);
  }
  return lines.join("\n") + "\n";
}

export function describeGenerated(generated: GeneratedDataDir, color: boolean): string {
  const c = colors(color);
  const p = generated.profile;
  const lines = [
    `wrote ${generated.partitions.length} partition(s) × ${p.segmentsPerPartition} segments, ` +
      `${formatCount(generated.messages)} messages, ${formatBytes(generated.logBytes)} of .log to ${escapeControl(generated.dir)} (seed ${generated.seed})`,
  ];
  for (const fault of terminalSafe(generated.faults)) {
    const e = fault.expected;
    lines.push(`  ${c.bold(fault.scenario)} → ${fault.partition}`);
    lines.push(`    ${fault.detail}`);
    lines.push(
      c.dim(
        `    expected: ${e.verdict}${e.refusal ? ` (${e.refusal})` : ""}, action ${e.action}, scan exits ${e.scanExit}` +
          (e.deep ? `; with --deep: ${e.deep.verdict}${e.deep.refusal ? ` (${e.deep.refusal})` : ""}` : ""),
      ),
    );
  }
  return lines.join("\n") + "\n";
}

export async function genCommand(dir: string | undefined, flags: GenFlags): Promise<number> {
  if (flags.list) {
    await out(
      flags.json
        ? stringifyJson(SCENARIOS.map(({ name, description, expected }) => ({ name, description, expected }))) + "\n"
        : listText() + nodeFaultListText() + clusterFaultListText(),
    );
    return EXIT.CLEAN;
  }
  if (dir === undefined) throw new UsageError("gen needs a target directory (or --list)");
  if (flags.cluster !== undefined) return genClusterCommand(dir, flags);
  if ((flags.clusterFault ?? []).length > 0) throw new UsageError("--cluster-fault needs --cluster N");
  for (const name of flags.scenario) {
    if (!listScenarios().some((s) => s.name === name))
      throw new UsageError(`unknown scenario "${name}"; \`segscan gen --list\` shows them`);
  }
  const existing = await stat(dir).catch(() => null);
  if (existing !== null && !existing.isDirectory()) {
    throw new UsageError(
      `${dir} already exists and is not a directory; gen writes a new data dir: give a new or empty directory (nothing was written)`,
    );
  }
  if (flags.nodeFault !== undefined && !nodeFaultNames().includes(flags.nodeFault)) {
    throw new UsageError(`unknown node fault "${flags.nodeFault}"; \`segscan gen --list\` shows them`);
  }
  const options: GenerateOptions = { ...shapeOptions(flags), seed: flags.seed, size: flags.size, force: flags.force ?? false };
  if (flags.scenario.length > 0) options.scenarios = flags.scenario;
  const generated = await generatedOrUsage(
    () => generateDataDir(dir, options),
    (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      // A path component is a file: the target cannot be a directory.
      if (code !== "EEXIST" && code !== "ENOTDIR") return null;
      return `cannot create the data dir ${dir}: ${describeCause(error)} (a file is in the way); give a new or empty directory`;
    },
  );
  const node = flags.node || flags.nodeFault !== undefined ? await genNode(dir, generated.partitions, flags.seed, flags.nodeFault) : null;
  if (flags.json) {
    await out(
      stringifyJson({
        ...(node ? { node: { snapshotOp: node.node.snapshotOp, walOps: node.node.walOps, fault: node.node.fault?.name ?? null } } : {}),
        dir: generated.dir,
        seed: generated.seed,
        profile: generated.profile,
        logBytes: generated.logBytes,
        messages: generated.messages,
        partitions: generated.partitions.map((partition) => ({
          path: partition.path,
          segments: partition.segments.map((segment) => ({
            startOffset: segment.startOffset,
            endOffset: segment.endOffset,
            logPath: segment.logPath,
            size: segment.size,
            batches: segment.batches.length,
            indexEntries: segment.indexEntries.length,
          })),
        })),
        faults: generated.faults,
      }) + "\n",
    );
  } else {
    await out(
      describeGenerated(generated, useColor()) +
        escapeControlKeepingLines(`${node?.text ?? ""}scan it: ${shellQuote(["segscan", "scan", dir])}\n`),
    );
  }
  return EXIT.CLEAN;
}

/** The layout flags `gen` and `gen --cluster` share, those given. */
function shapeOptions(
  flags: GenFlags,
): Pick<GenerateOptions, "segmentsPerPartition" | "segmentBytes" | "flushBytes" | "topicsPerStream" | "partitionsPerTopic"> {
  return {
    ...(flags.segments !== undefined && { segmentsPerPartition: flags.segments }),
    ...(flags.segmentBytes !== undefined && { segmentBytes: flags.segmentBytes }),
    ...(flags.flushBytes !== undefined && { flushBytes: flags.flushBytes }),
    ...(flags.topics !== undefined && { topicsPerStream: flags.topics }),
    ...(flags.partitions !== undefined && { partitionsPerTopic: flags.partitions }),
  };
}

/** What `generate()` wrote; a target that is not empty, a bad size, or what `usage` words is a usage error. */
async function generatedOrUsage<T>(generate: () => Promise<T>, usage: (error: unknown) => string | null): Promise<T> {
  try {
    return await generate();
  } catch (error) {
    if ((error as Error).name === "GenerateTargetNotEmpty" || error instanceof RangeError) throw new UsageError((error as Error).message);
    const message = usage(error);
    if (message !== null) throw new UsageError(message);
    throw error;
  }
}

/** `gen <dir> --cluster N` (docs/fleet.md): N node roots of one cluster with replica-specific faults. */
async function genClusterCommand(dir: string, flags: GenFlags): Promise<number> {
  if (flags.scenario.length > 0 || flags.node || flags.nodeFault !== undefined) {
    throw new UsageError(
      "--cluster writes whole node roots with its own faults: give --cluster-fault, not --scenario, --node or --node-fault",
    );
  }
  const requested = flags.clusterFault ?? [];
  const faults = requested.includes("none") ? [] : requested.length > 0 ? requested : undefined;
  for (const name of faults ?? []) {
    if (!CLUSTER_FAULTS.some((fault) => fault.name === name))
      throw new UsageError(`unknown cluster fault "${name}"; \`segscan gen --list\` shows them`);
  }
  const options: ClusterOptions = {
    ...shapeOptions(flags),
    seed: flags.seed,
    size: flags.size === "small" && flags.segmentBytes === undefined ? "tiny" : flags.size,
    force: flags.force ?? false,
  };
  if (faults !== undefined) options.faults = faults;
  const nodes = flags.cluster;
  assert(nodes !== undefined, "gen --cluster: the node count is given");
  const cluster = await generatedOrUsage(
    () => generateCluster(dir, nodes, options),
    () => null,
  );
  if (flags.json) {
    await out(
      stringifyJson({
        dir: cluster.dir,
        nodes: cluster.nodes.map((node) => ({ name: node.name, root: node.root })),
        partitions: cluster.partitions,
        faults: cluster.faults.map(({ fault, partition, detail }) => ({ name: fault.name, partition, detail, expected: fault.expected })),
      }) + "\n",
    );
    return EXIT.CLEAN;
  }
  const lines = [`wrote ${cluster.nodes.length} node roots of one cluster (${cluster.partitions} partitions each) under ${dir}:`];
  for (const node of cluster.nodes) lines.push(`  ${node.name}: ${node.root}`);
  for (const { fault, partition, detail } of cluster.faults) {
    lines.push(`  ${fault.name}${partition === null ? "" : ` → ${partition}`}: ${detail}`);
    lines.push(`    expected: ${fault.expected.verdict ?? fault.expected.metadata}`);
  }
  lines.push("then:", ...clusterNextCommands(cluster).map((line) => `  ${line}`));
  await out(escapeControlKeepingLines(lines.join("\n") + "\n"));
  return EXIT.CLEAN;
}

// ---------------------------------------------------------------------------
// demo

export async function demoCommand(flags: { engine: EngineKind; progress: boolean }, command: Command): Promise<number> {
  const color = useColor();
  const c = colors(color);
  const dir = await mkdtemp(join(tmpdir(), "segscan-demo-"));
  const data = join(dir, "data");
  const generated = await generateDataDir(data, { scenarios: DEMO_SCENARIOS, topicsPerStream: 3, partitionsPerTopic: 2 });
  // A node-level finding too (docs/node.md N1): a torn WAL tail Iggy's own boot would refuse to cut.
  const node = await genNode(data, generated.partitions, 1, "wal-torn-tail-stale-copy");
  await out(
    `${c.bold("segscan demo")}: a sample Iggy data dir with ${generated.faults.length} injected faults\n` +
      describeGenerated(generated, color) +
      node.text +
      "\n",
  );
  const scanFlags: ScanFlags = {
    engine: flags.engine,
    replicas: 1,
    probeBudget: (await import("../format/constants.js")).PROBE_BUDGET_UNITS,
    window: (await import("../format/constants.js")).DEFAULT_WINDOW_BYTES,
    concurrency: 1,
    progress: flags.progress,
  };
  const report = await withCancellation((signal) => runScan([data], scanFlags, engineWasExplicit(command), signal));
  // What `segscan scan` prints, its closing hints included (the demo shows partition paths relative to the data dir).
  const { scanHints } = await import("./scan-command.js");
  const scanText = formatReport(terminalSafe(report), { color, relativeTo: data }) + scanHints(report, [data]);
  await out(`${c.bold(`$ ${shellQuote(["segscan", "scan", data])}`)}\n\n${scanText}\n`);
  // What `segscan repair` prints: one plan for the whole node (segments, the WAL cut, offset evidence) and the forecast after it.
  const plan = await planRepair(report);
  await out(`${c.bold(`$ ${shellQuote(["segscan", "repair", data])}`)}\n\n${planText(plan, report)}\n`);
  const first = generated.faults[0]?.partition ?? data;
  const tailLog = generated.partitions[0]?.segments.at(-1)?.logPath ?? "";
  // `npx segscan` works as printed in the segscan project (npx runs the package's own bin) and
  // wherever segscan is installed; a bare `segscan` needs a global install.
  await out(
    [
      c.bold("Try it yourself") + c.dim(" (in the segscan project directory, or wherever segscan is installed):"),
      `  npx ${shellQuote(["segscan", "repair", data, "--apply"])}`,
      c.dim("      carry out the plan; exits 5 = 1 (repaired, clean now) | 4 (a refusal is left as it is)"),
      `  npx ${shellQuote(["segscan", "scan", data])}`,
      c.dim("      the repaired partitions scan clean; the refused one is still refused"),
      `  npx ${shellQuote(["segscan", "restore", first])}`,
      c.dim("      put every cut byte back from the journal"),
      `  npx ${shellQuote(["segscan", "dump", tailLog, "--messages"])}`,
      c.dim("      list batches and messages, kafka-dump-log style"),
      `  ${shellQuote(["rm", "-r", dir])}`,
      c.dim("      when done"),
    ].join("\n") + "\n",
  );
  return EXIT.CLEAN;
}

// ---------------------------------------------------------------------------
// bench

export async function benchCommand(flags: { json?: boolean; quick?: boolean; scaling?: boolean }): Promise<number> {
  // Compiled at dist/bench/run.js, beside dist/src/cli/main.js. A variable
  // specifier keeps tsc from resolving a module another package part provides.
  const specifier = "../../bench/run.js";
  let mod: { runBench?: (options: { json: boolean; quick?: boolean; scaling?: boolean }) => Promise<unknown> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (error) {
    throw new OperationalError(`the benchmark suite is not built (${(error as Error).message}); run \`npm run build\` first`);
  }
  if (typeof mod.runBench !== "function") throw new OperationalError("bench/run.js does not export runBench");
  await mod.runBench({ json: flags.json ?? false, ...(flags.quick ? { quick: true } : {}), ...(flags.scaling ? { scaling: true } : {}) });
  return EXIT.CLEAN;
}
