/**
 * `segscan heal <partition> --from <peer>` (docs/heal.md): scans the partition
 * and the peer's copy of it deep, plans the heal (`planHeal`), prints the plan
 * (a dry run, by default) or, with `--apply`, carries it out through the same
 * journaled runner as `repair` and scans the partition again.
 */
import type { Command } from "commander";
import { shellQuote } from "../domain/command.js";
import type { ScanReport } from "../domain/scan.js";
import { type ApplyResult, HealRefusedError, type RepairPlan, applyRepair, planHeal, refusedHealPlan } from "../repair/index.js";
import { colors, formatPartition, formatSummary } from "../report/format.js";
import { stringifyJson, toJsonReport } from "../report/json.js";
import { formatApplied, formatPlan } from "../report/repair-format.js";
import { escapeControl, terminalSafe } from "../report/terminal-safe.js";
import { rescanRepaired } from "./commands.js";
import { colorEnabled, out, resolveEngine, warn, withCancellation } from "./context.js";
import { EXIT, UsageError, scanExitCode } from "./exit.js";
import { type HealFlags, engineWasExplicit } from "./scan-flags.js";
import { runScan } from "./scan-run.js";

/** The one `repair --json` shape (docs/interfaces.md §9.4), for heal too. */
function healJson(report: ScanReport, plan: RepairPlan, applied: ApplyResult | null, after: ScanReport | null): string {
  return `${stringifyJson({ report: toJsonReport(report), plan, applied, after: after === null ? null : toJsonReport(after) })}\n`;
}

function partitionText(report: ScanReport): string {
  const color = colorEnabled(process.stdout);
  return report.partitions.map((partition) => formatPartition(terminalSafe(partition), { color })).join("\n");
}

/** `heal <partition> --from <peer>`: scan, plan, print; with `--apply`, apply, re-scan, exit with what is left. A refusal exits 4. */
export async function healCommand(path: string, flags: HealFlags, command: Command): Promise<number> {
  const explicit = engineWasExplicit(command);
  return withCancellation(async (signal) => {
    // docs/heal.md: both replicas are read deep (every batch verified), whatever --deep says.
    const deep = { ...flags, deep: true };
    const report = await runScan([path], deep, explicit, signal);
    if (report.partitions.length !== 1 || report.partitions[0]!.singleSegment || report.node !== undefined) {
      const what =
        report.partitions.length === 1 && report.node === undefined
          ? "a .log file given alone"
          : `a path holding ${report.partitions.length} partitions${report.node !== undefined ? " and a node's metadata plane" : ""}`;
      throw new UsageError(
        `heal takes one partition directory, not ${what}: name the damaged partition's directory (heal is for partition segments only; the metadata plane is never copied)`,
      );
    }
    const engine = await resolveEngine(flags.engine, explicit);
    let plan: RepairPlan;
    try {
      plan = await planHeal(report, flags.from, {
        engine,
        signal,
        replicaCount: flags.replicas,
        probeBudgetUnits: flags.probeBudget,
        windowBytes: flags.window,
      });
    } catch (error) {
      if (!(error instanceof HealRefusedError)) throw error;
      warn(error.message);
      await out(flags.json ? healJson(report, refusedHealPlan(report, error), null, null) : `${partitionText(report)}\n`);
      return EXIT.PROBLEMS | scanExitCode(report);
    }
    const c = colors(colorEnabled(process.stdout));
    if (plan.targets.length === 0) {
      if (flags.json) await out(healJson(report, plan, null, null));
      else await out(`${partitionText(report)}\nHeal plan: nothing to heal: this replica lacks nothing the peer holds in its segments.\n`);
      return scanExitCode(report);
    }
    const text = `${partitionText(report)}\n${formatPlan(plan)}`;
    if (!flags.apply) {
      if (flags.json) await out(healJson(report, plan, null, null));
      else await out(`${text}\n${c.dim("dry run: nothing was changed; add --apply to carry out the heal")}\n`);
      return EXIT.PROBLEMS | scanExitCode(report);
    }
    if (!flags.json) await out(`${text}\napplying…\n`);
    const result = await applyRepair(plan, {
      signal,
      engine,
      command: shellQuote(["segscan", "heal", path, "--from", flags.from, "--apply"]),
    });
    if (!result.writerCheck.checked) {
      warn(
        "other writers of the files to change were not looked for on this platform (only Linux /proc is checked): make sure iggy-server was stopped",
      );
    }
    const after = await rescanRepaired(result, [path], () => runScan([path], { ...deep, progress: false }, explicit, signal));
    const code = (result.changed ? EXIT.REPAIRED : EXIT.CLEAN) | scanExitCode(after);
    if (flags.json) await out(healJson(report, plan, result, after));
    else {
      const color = colorEnabled(process.stdout);
      const partition = after.partitions[0];
      const line =
        partition?.verdict === "clean" && partition.findings.length === 0
          ? c.green("re-scan: the healed partition is clean now")
          : c.red(
              `re-scan: the healed partition is ${partition?.verdict ?? "missing"} (next step: ${escapeControl(partition?.nextStep ?? "not scanned")})`,
            );
      const forget = escapeControl(shellQuote(["segscan", "forget", path]));
      const hint = c.dim(
        `the old files stay preserved until you delete them: once the partition is served and you will not restore it, \`${forget}\` lists what it frees (add --apply)`,
      );
      await out(`${formatApplied(result)}\n${partitionText(after)}\n${line}\n${formatSummary(after, { color })}\n${hint}\n`);
    }
    return code;
  });
}
