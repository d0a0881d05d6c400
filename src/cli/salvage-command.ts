/**
 * `segscan salvage <partition>` (docs/repair.md §6.5): the last copy of a
 * refused partition. Scans it, plans the salvage (`planSalvage`), prints the
 * plan (a dry run, by default) or, with `--apply`, carries it out through the
 * same journaled runner as `repair` and scans the partition again.
 */
import type { Command } from "commander";
import { shellQuote } from "../domain/command.js";
import type { ScanReport } from "../domain/scan.js";
import { type ApplyResult, type RepairPlan, SalvageRefusedError, applyRepair, planSalvage, refusedSalvagePlan } from "../repair/index.js";
import { colors, formatPartition, formatSummary } from "../report/format.js";
import { stringifyJson, toJsonReport } from "../report/json.js";
import { formatApplied, formatPlan } from "../report/repair-format.js";
import { escapeControl, terminalSafe } from "../report/terminal-safe.js";
import { rescanRepaired } from "./commands.js";
import { colorEnabled, out, resolveEngine, warn, withCancellation } from "./context.js";
import { EXIT, UsageError, scanExitCode } from "./exit.js";
import { type SalvageFlags, engineWasExplicit } from "./scan-flags.js";
import { runScan } from "./scan-run.js";

/** The one `repair --json` shape (docs/interfaces.md §9.4), for salvage too. */
function salvageJson(report: ScanReport, plan: RepairPlan, applied: ApplyResult | null, after: ScanReport | null): string {
  return `${stringifyJson({ report: toJsonReport(report), plan, applied, after: after === null ? null : toJsonReport(after) })}\n`;
}

/** The partition as the scan sees it: its verdict, refusal, scope and next step. */
function partitionText(report: ScanReport): string {
  const color = colorEnabled(process.stdout);
  return report.partitions.map((partition) => formatPartition(terminalSafe(partition), { color })).join("\n");
}

/** What the re-scan says of the salvaged partition, and the offsets the salvage recorded as lost. */
function afterLine(plan: RepairPlan, after: ScanReport, result: ApplyResult): string {
  const c = colors(colorEnabled(process.stdout));
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

/**
 * `salvage <partition>`: scan, plan, print; with `--apply`, apply, re-scan, and
 * exit with what is left. A refusal prints why on stderr and exits 4.
 */
export async function salvageCommand(path: string, flags: SalvageFlags, command: Command): Promise<number> {
  const explicit = engineWasExplicit(command);
  return withCancellation(async (signal) => {
    const report = await runScan([path], flags, explicit, signal);
    if (report.partitions.length !== 1 || report.partitions[0]!.singleSegment) {
      const what = report.partitions.length === 1 ? "a .log file given alone" : `a path holding ${report.partitions.length} partitions`;
      throw new UsageError(`salvage takes one partition directory, not ${what}: name the refused partition's directory`);
    }
    const engine = await resolveEngine(flags.engine, explicit);
    let plan: RepairPlan;
    try {
      plan = await planSalvage(report, { engine, signal });
    } catch (error) {
      if (!(error instanceof SalvageRefusedError)) throw error;
      warn(error.message);
      await out(flags.json ? salvageJson(report, refusedSalvagePlan(report, error), null, null) : `${partitionText(report)}\n`);
      return EXIT.PROBLEMS | scanExitCode(report);
    }
    const text = `${partitionText(report)}\n${formatPlan(plan)}`;
    if (!flags.apply) {
      if (flags.json) await out(salvageJson(report, plan, null, null));
      else {
        const c = colors(colorEnabled(process.stdout));
        await out(`${text}\n${c.dim("dry run: nothing was changed; add --apply to carry out the salvage")}\n`);
      }
      return scanExitCode(report);
    }
    if (!flags.json) await out(`${text}\napplying…\n`);
    // A failure or cancel is reported by applyRepair itself: what was done, what was not, how to undo (docs/repair.md §6.2).
    const result = await applyRepair(plan, { signal, engine, command: shellQuote(["segscan", "salvage", path, "--apply"]) });
    if (!result.writerCheck.checked) {
      warn(
        "other writers of the files to change were not looked for on this platform (only Linux /proc is checked): make sure iggy-server was stopped",
      );
    }
    const after = await rescanRepaired(result, [path], () => runScan([path], { ...flags, progress: false }, explicit, signal));
    const code = (result.changed ? EXIT.REPAIRED : EXIT.CLEAN) | scanExitCode(after);
    if (flags.json) await out(salvageJson(report, plan, result, after));
    else {
      const color = colorEnabled(process.stdout);
      // docs/repair.md §6.6, §6.7: said once, with this partition's real path.
      const c = colors(color);
      const forget = escapeControl(shellQuote(["segscan", "forget", path]));
      const hint = c.dim(
        `the old log stays preserved until you delete it: once the partition is served and you will not restore it, \`${forget}\` lists what it frees (add --apply); ` +
          `the lost offsets stay reported until \`${escapeControl(shellQuote(["segscan", "forget", path, "--lost-offsets"]))}\` (add --apply)`,
      );
      await out(
        `${formatApplied(result)}\n${partitionText(after)}\n${afterLine(plan, after, result)}\n${formatSummary(after, { color })}\n${hint}\n`,
      );
    }
    return code;
  });
}
