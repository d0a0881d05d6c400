/** `segscan repair <node root>`: the WAL torn-tail cut (docs/node.md N7) beside the partitions' plan. */
import type { Engine } from "../../engine/types.js";
import type { ScanReport } from "../../report/types.js";
import { nodeFindings } from "../scan.js";
import { worstSeverity } from "../types.js";
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

/** Exit bits the node still earns once its WAL tail is cut: every other node finding (docs/node.md N0). */
export function nodeExitBitsAfterCut(report: ScanReport): number {
  if (report.node === undefined) return 0;
  const wal = new Set(report.node.metadata.wal?.findings ?? []);
  const worst = worstSeverity(
    nodeFindings(report.node)
      .filter((finding) => !wal.has(finding))
      .map((finding) => finding.severity),
  );
  return worst === "failed" ? 8 : worst === "refused" || worst === "repairable" ? 4 : 0;
}
