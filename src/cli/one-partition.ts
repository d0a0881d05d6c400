/**
 * The commands that plan one partition: `segscan salvage <partition>` (docs/repair.md
 * §6.5), the last copy of a refused partition, and `segscan heal <partition> --from
 * <peer>` (docs/heal.md), filled from a peer replica. Each scans the partition, plans,
 * prints the plan (a dry run, by default) or, with `--apply`, carries it out through the
 * same journaled runner as `repair` and scans the partition again. What differs between
 * them is in `SALVAGE` and `HEAL`.
 */
import type { Command } from "commander";
import { shellQuote } from "../domain/command.js";
import type { ScanReport } from "../domain/scan.js";
import type { Engine } from "../engine/types.js";
import {
  type ApplyResult,
  HealRefusedError,
  type RepairPlan,
  SalvageRefusedError,
  applyRepair,
  planHeal,
  planSalvage,
  refusedHealPlan,
  refusedSalvagePlan,
} from "../repair/index.js";
import { type Colors, colors, formatPartition, formatSummary } from "../report/format.js";
import { formatApplied, formatPlan } from "../report/repair-format.js";
import { escapeControl, terminalSafe } from "../report/terminal-safe.js";
import { repairJson, rescanRepaired, warnUncheckedWriters } from "./commands.js";
import { colorEnabled, out, resolveEngine, warn, withCancellation } from "./context.js";
import { EXIT, UsageError, scanExitCode } from "./exit.js";
import { type HealFlags, type SalvageFlags, engineWasExplicit } from "./scan-flags.js";
import { runScan } from "./scan-run.js";

/** What one of the two commands does its own way. */
interface OnePartitionCommand<F extends SalvageFlags> {
  name: "salvage" | "heal";
  /** The flags both scans (before and after) run with. */
  scanFlags(flags: F): F;
  /** The usage error for a scan that is not of one partition dir, or null. */
  notOnePartition(report: ScanReport): string | null;
  /** The plan, or the refused plan (`--json`) and its refusal. */
  plan(report: ScanReport, flags: F, engine: Engine, signal: AbortSignal): Promise<RepairPlan | { refused: RepairPlan; error: Error }>;
  /** What a dry run with nothing to do prints, when the command says it apart from the plan. */
  nothingToDo: string | null;
  dryRunExit(report: ScanReport): number;
  applyArgv(path: string, flags: F): string[];
  /** The re-scan's line and the hint of what `forget` frees, after an apply. */
  afterApply(path: string, plan: RepairPlan, after: ScanReport, result: ApplyResult, c: Colors): { line: string; hint: string };
}

const SALVAGE: OnePartitionCommand<SalvageFlags> = {
  name: "salvage",
  scanFlags: (flags) => flags,
  notOnePartition(report) {
    if (report.partitions.length === 1 && !report.partitions[0]?.singleSegment) return null;
    const what = report.partitions.length === 1 ? "a .log file given alone" : `a path holding ${report.partitions.length} partitions`;
    return `salvage takes one partition directory, not ${what}: name the refused partition's directory`;
  },
  async plan(report, _flags, engine, signal) {
    try {
      return await planSalvage(report, { engine, signal });
    } catch (error) {
      if (!(error instanceof SalvageRefusedError)) throw error;
      return { refused: refusedSalvagePlan(report, error), error };
    }
  },
  nothingToDo: null,
  dryRunExit: (report) => scanExitCode(report),
  applyArgv: (path) => ["segscan", "salvage", path, "--apply"],
  afterApply(path, plan, after, result, c) {
    // docs/repair.md §6.6, §6.7: said once, with this partition's real path.
    const forget = escapeControl(shellQuote(["segscan", "forget", path]));
    const hint =
      `the old log stays preserved until you delete it: once the partition is served and you will not restore it, \`${forget}\` lists what it frees (add --apply); ` +
      `the lost offsets stay reported until \`${escapeControl(shellQuote(["segscan", "forget", path, "--lost-offsets"]))}\` (add --apply)`;
    return { line: salvagedLine(plan, after, result, c), hint };
  },
};

/** What the re-scan says of the salvaged partition, and the offsets the salvage recorded as lost. */
function salvagedLine(plan: RepairPlan, after: ScanReport, result: ApplyResult, c: Colors): string {
  const partition = after.partitions[0];
  const lost = plan.targets.flatMap((target) => target.salvage?.lost ?? []);
  const offsets = lost
    .filter((range) => range.firstOffset !== null)
    .map((range) =>
      range.lastOffset === null || range.lastOffset === range.firstOffset ? range.firstOffset : `${range.firstOffset}..${range.lastOffset}`,
    );
  const journal = escapeControl(result.targets[0]?.journalPath ?? "");
  const recorded =
    offsets.length === 0 ? "the dropped bytes held no offset" : `offsets ${offsets.join(", ")} are recorded as lost in ${journal}`;
  if (partition?.verdict === "clean") return c.green(`re-scan: the salvaged partition is clean now; ${recorded}`);
  const next = escapeControl(partition?.nextStep ?? "not scanned");
  return c.red(`re-scan: the salvaged partition is ${partition?.verdict ?? "missing"} (next step: ${next}); ${recorded}`);
}

const HEAL: OnePartitionCommand<HealFlags> = {
  name: "heal",
  // docs/heal.md: both replicas are read deep (every batch verified), whatever --deep says.
  scanFlags: (flags) => ({ ...flags, deep: true }),
  notOnePartition(report) {
    if (report.partitions.length === 1 && !report.partitions[0]?.singleSegment && report.node === undefined) return null;
    const what =
      report.partitions.length === 1 && report.node === undefined
        ? "a .log file given alone"
        : `a path holding ${report.partitions.length} partitions${report.node !== undefined ? " and a node's metadata plane" : ""}`;
    return `heal takes one partition directory, not ${what}: name the damaged partition's directory (heal is for partition segments only; the metadata plane is never copied)`;
  },
  async plan(report, flags, engine, signal) {
    try {
      return await planHeal(report, flags.from, {
        engine,
        signal,
        replicaCount: flags.replicas,
        probeBudgetUnits: flags.probeBudget,
        windowBytes: flags.window,
      });
    } catch (error) {
      if (!(error instanceof HealRefusedError)) throw error;
      return { refused: refusedHealPlan(report, error), error };
    }
  },
  nothingToDo: "Heal plan: nothing to heal: this replica lacks nothing the peer holds in its segments.",
  dryRunExit: (report) => EXIT.PROBLEMS | scanExitCode(report),
  applyArgv: (path, flags) => ["segscan", "heal", path, "--from", flags.from, "--apply"],
  afterApply(path, _plan, after, _result, c) {
    const partition = after.partitions[0];
    const line =
      partition?.verdict === "clean" && partition.findings.length === 0
        ? c.green("re-scan: the healed partition is clean now")
        : c.red(
            `re-scan: the healed partition is ${partition?.verdict ?? "missing"} (next step: ${escapeControl(partition?.nextStep ?? "not scanned")})`,
          );
    const forget = escapeControl(shellQuote(["segscan", "forget", path]));
    const hint = `the old files stay preserved until you delete them: once the partition is served and you will not restore it, \`${forget}\` lists what it frees (add --apply)`;
    return { line, hint };
  },
};

/** The partition as the scan sees it: its verdict, refusal, scope and next step. */
function partitionText(report: ScanReport): string {
  const color = colorEnabled(process.stdout);
  return report.partitions.map((partition) => formatPartition(terminalSafe(partition), { color })).join("\n");
}

/** Scan, plan, print; with `--apply`, apply, re-scan, and exit with what is left. A refusal prints why on stderr and exits 4. */
async function onePartitionCommand<F extends SalvageFlags>(
  kind: OnePartitionCommand<F>,
  path: string,
  flags: F,
  command: Command,
): Promise<number> {
  const explicit = engineWasExplicit(command);
  return withCancellation(async (signal) => {
    const scanFlags = kind.scanFlags(flags);
    const report = await runScan([path], scanFlags, explicit, signal);
    const usage = kind.notOnePartition(report);
    if (usage !== null) throw new UsageError(usage);
    const engine = await resolveEngine(flags.engine, explicit);
    const plan = await kind.plan(report, flags, engine, signal);
    if ("refused" in plan) {
      warn(plan.error.message);
      await out(flags.json ? repairJson(report, plan.refused, null, null) : `${partitionText(report)}\n`);
      return EXIT.PROBLEMS | scanExitCode(report);
    }
    const c = colors(colorEnabled(process.stdout));
    if (kind.nothingToDo !== null && plan.targets.length === 0) {
      await out(flags.json ? repairJson(report, plan, null, null) : `${partitionText(report)}\n${kind.nothingToDo}\n`);
      return scanExitCode(report);
    }
    const text = `${partitionText(report)}\n${formatPlan(plan)}`;
    if (!flags.apply) {
      const dryRun = c.dim(`dry run: nothing was changed; add --apply to carry out the ${kind.name}`);
      await out(flags.json ? repairJson(report, plan, null, null) : `${text}\n${dryRun}\n`);
      return kind.dryRunExit(report);
    }
    if (!flags.json) await out(`${text}\napplying…\n`);
    // A failure or cancel is reported by applyRepair itself: what was done, what was not, how to undo (docs/repair.md §6.2).
    const result = await applyRepair(plan, { signal, engine, command: shellQuote(kind.applyArgv(path, flags)) });
    warnUncheckedWriters(result);
    const after = await rescanRepaired(result, [path], () => runScan([path], { ...scanFlags, progress: false }, explicit, signal));
    const code = (result.changed ? EXIT.REPAIRED : EXIT.CLEAN) | scanExitCode(after);
    if (flags.json) await out(repairJson(report, plan, result, after));
    else {
      const { line, hint } = kind.afterApply(path, plan, after, result, c);
      const summary = formatSummary(after, { color: colorEnabled(process.stdout) });
      await out(`${formatApplied(result)}\n${partitionText(after)}\n${line}\n${summary}\n${c.dim(hint)}\n`);
    }
    return code;
  });
}

export const salvageCommand = (path: string, flags: SalvageFlags, command: Command): Promise<number> =>
  onePartitionCommand(SALVAGE, path, flags, command);
export const healCommand = (path: string, flags: HealFlags, command: Command): Promise<number> =>
  onePartitionCommand(HEAL, path, flags, command);
