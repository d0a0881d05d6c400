/** `segscan repair <node root>`: the WAL torn-tail cut (docs/node.md N7) beside the partitions' plan. */
import { relative } from "node:path";
import type { Engine } from "../../engine/types.js";
import { scanPath } from "../scan-path.js";
import type { RepairPlan } from "../../repair/plan.js";
import type { ScanReport } from "../../domain/scan.js";
import { nodeFindings } from "../scan.js";
import { type NodeReport, type Severity, worstSeverity } from "../../domain/node.js";
import { type AppliedOffsetStep, type OffsetRepairPlan, applyOffsetRepairs } from "./offsets.js";
import { applyWalCut, planWalCut, type WalCutPlan, type WalCutResult } from "./wal-cut.js";

export function nodeRepairPlan(report: ScanReport): WalCutPlan | null {
  return report.node === undefined ? null : planWalCut(report.node);
}

export function formatWalCutPlan(plan: WalCutPlan): string {
  return `metadata: cut ${plan.walPath} from ${plan.fromSize} to ${plan.toSize} bytes (a proven torn tail; the ${plan.fromSize - plan.toSize}-byte residue is preserved in ${plan.preserveDir} first)\n`;
}

export async function applyNodeRepair(plan: WalCutPlan, engine: Engine): Promise<{ result: WalCutResult; text: string }> {
  const result = await applyWalCut(plan, { engine });
  const kept = result.preserved === null ? "zero bytes recorded by length" : `residue preserved as ${result.preserved}`;
  return {
    result,
    text: `cut ${result.walPath}: ${result.fromSize} → ${result.toSize} bytes (${kept}; journal ${result.journalPath}; undo: segscan restore ${plan.metadataDir})\n`,
  };
}

/** The worst node finding left once its WAL tail is cut: every other node finding (docs/node.md N0). */
export function nodeSeverityAfterCut(report: ScanReport): Severity {
  if (report.node === undefined) return "info";
  const wal = new Set(report.node.metadata.wal?.findings ?? []);
  return worstSeverity(
    nodeFindings(report.node)
      .filter((finding) => !wal.has(finding))
      .map((finding) => finding.severity),
  );
}

/** Applies the offset steps (docs/node.md N7) and says what was done and how to undo it. */
export async function applyNodeOffsets(
  plan: OffsetRepairPlan,
  engine: Engine,
): Promise<{ text: string; changed: boolean; steps: AppliedOffsetStep[] }> {
  const applied = await applyOffsetRepairs(plan, { engine });
  const lines = applied.map((step) => {
    switch (step.kind) {
      case "evidence-copy":
        return `copied ${step.path} into the preserve dir as ${step.preserved} (evidence; the file is left in place)`;
      case "move-aside":
        return `moved ${step.path} aside as ${step.preserved} (journal ${step.journalPath})`;
      default:
        return `rewrote ${step.path} (old record kept as ${step.preserved}; journal ${step.journalPath})`;
    }
  });
  const dirs = [...new Set(plan.steps.filter((s) => s.kind !== "evidence-copy").map((s) => s.partitionDir))];
  if (dirs.length > 0) lines.push(`undo: ${dirs.map((dir) => `segscan restore ${dir}`).join("; ")}`);
  return { text: `${lines.join("\n")}\n`, changed: applied.some((step) => step.kind !== "evidence-copy"), steps: applied };
}

/** Exit bits of the node as it is now (a fresh scan of the root): docs/node.md N0. */
export async function nodeSeverityNow(root: string, engine: Engine): Promise<Severity> {
  const report = await scanPath(root, { engine });
  return report.node === undefined ? "info" : worstSeverity(nodeFindings(report.node).map((finding) => finding.severity));
}

/**
 * docs/node.md N8: which boot-forecast effects the repair plan removes and
 * which remain (printed with every `repair`, dry run or not).
 */
export function formatForecastAfterRepair(
  node: NodeReport,
  plan: RepairPlan,
  walCut: WalCutPlan | null,
  offsets: OffsetRepairPlan | null,
): string {
  if (node.bootForecast.length === 0) return "";
  const rewritten = new Set((offsets?.steps ?? []).filter((s) => s.kind === "clamp-to-head" || s.kind === "move-aside").map((s) => s.path));
  const swept = new Set(plan.partitions.filter((p) => p.sweeps.length > 0).map((p) => p.path));
  const removes = (effect: NodeReport["bootForecast"][number]): boolean =>
    // A cut is planned only when the torn tail is the WAL's one problem, so it also removes Iggy's refusal of those bytes.
    ((effect.effect === "truncate-wal-tail" || effect.effect === "refuse-boot") && walCut !== null && effect.path === walCut.walPath) ||
    (effect.effect === "clamp-offset" && rewritten.has(effect.path)) ||
    (effect.effect === "sweep-scratch" && swept.has(effect.path));
  const line = (effect: NodeReport["bootForecast"][number]): string =>
    `    ${effect.destructive ? "DESTRUCTIVE " : ""}${effect.effect} ${relative(node.path, effect.path)}: ${effect.detail}`;
  const removed = node.bootForecast.filter(removes);
  const remaining = node.bootForecast.filter((effect) => !removes(effect));
  const lines = ["If iggy-server starts after this repair:"];
  lines.push(removed.length === 0 ? "  this plan removes no boot effect" : "  this plan removes:", ...removed.map(line));
  lines.push(remaining.length === 0 ? "  nothing remains" : "  still to happen:", ...remaining.map(line));
  return `${lines.join("\n")}\n`;
}
