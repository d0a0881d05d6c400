/**
 * The human form of a repair plan (what a dry run prints) and of an applied
 * plan (docs/repair.md §6.2, docs/node.md N7, N8). Paths are printed relative
 * to their target dir, the target once per block.
 */
import * as path from "node:path";
import { shellQuote } from "../domain/command.js";
import { offsetsText } from "../policy/next-step.js";
import { JOURNAL_NAME } from "../repair/journal.js";
import type { ApplyResult, ForecastEffect, PlanTarget, RepairPlan } from "../repair/schema.js";
import { type PlanStep, type SalvageRange, stepKindOf } from "../repair/steps/index.js";
import { escapeControl as printable } from "./terminal-safe.js";
import { formatBytes, formatCount } from "./units.js";
import { formatPlural as plural } from "../domain/numbers.js";

/** One line per step, relative to the target dir: its kind's description (src/repair/steps/). */
export function stepLine(target: PlanTarget, step: PlanStep): string {
  const name = printable(path.relative(target.dir, step.file) || path.basename(step.file));
  return stepKindOf(step).describe(step, { name, printable });
}

function forecastLines(effects: readonly ForecastEffect[], root: string | null): string[] {
  return effects.map(
    (effect) =>
      `    ${effect.destructive ? "DESTRUCTIVE " : ""}${effect.effect} ${printable(root === null ? effect.path : path.relative(root, effect.path))}: ${printable(effect.detail)}`,
  );
}

/** `318..636` from a salvage range's decimal offsets (`no offset` when it holds none). */
function rangeOffsets(range: SalvageRange): string {
  return offsetsText({
    firstOffset: range.firstOffset === null ? null : BigInt(range.firstOffset),
    lastOffset: range.lastOffset === null ? null : BigInt(range.lastOffset),
  });
}

/** Where a salvage range's bytes lie: `[497,278, 516,093) of 00000000000000000318.log`. */
function rangeWhere(range: SalvageRange, target: PlanTarget): string {
  const log = target.steps.find((step) => step.kind === "replace" && step.role === "segment-log" && step.segment === range.segment);
  const name = log === undefined ? `segment ${range.segment}` : printable(path.basename(log.file));
  return `[${formatCount(range.startPosition)}, ${formatCount(range.endPosition)}) of ${name}`;
}

/** docs/repair.md §6.5: what a salvage target keeps and what it records as lost, one line per range. */
export function salvageLines(target: PlanTarget): string[] {
  if (target.salvage === undefined) return [];
  const kept = target.salvage.kept.map((range) => {
    const messages = range.messages === null ? "" : `, ${plural(range.messages, "message")}`;
    return `    ${rangeOffsets(range)} (${range.kind}${messages}; ${formatBytes(range.bytes)} at ${rangeWhere(range, target)})`;
  });
  const lost = target.salvage.lost.map((range) => {
    const at = `${formatCount(range.bytes)} byte${range.bytes === 1 ? "" : "s"} at ${rangeWhere(range, target)}`;
    if (range.kind === "torn") {
      const claims = range.messages === null ? "a header that does not decode" : `its header claims ${plural(range.messages, "message")}`;
      return `    ${rangeOffsets(range)} (a torn tail no verified batch follows, ${range.tornEvidence ?? "no evidence"}: ${claims}; ${at})`;
    }
    const hides = range.messages === null ? "" : `at most ${plural(range.messages, "message")}; `;
    return `    ${rangeOffsets(range)} (unreadable: ${hides}${at})`;
  });
  return ["  keeps (every batch that verifies and extends the chain):", ...kept, "  records as lost (the bytes nothing proves):", ...lost];
}

/** docs/heal.md: what a heal target fills, from which peer, one line per range. */
export function healLines(target: PlanTarget): string[] {
  if (target.heal === undefined) return [];
  const lines = target.heal.ranges.map((range) => {
    const offsets =
      range.firstOffset === range.lastOffset ? `offset ${range.firstOffset}` : `offsets ${range.firstOffset}..${range.lastOffset}`;
    if (range.kind === "held")
      return `    ${offsets} of segment ${range.segment}: recorded as lost by a salvage, held again (equal to the peer's)`;
    const local =
      range.localFrom === range.localTo
        ? `missing at byte ${formatCount(range.localFrom)}`
        : `${range.kind} at [${formatCount(range.localFrom)}, ${formatCount(range.localTo)})`;
    const what = range.kind === "salvage-gap" ? "a salvage recorded them as lost" : local;
    return `    ${offsets} of segment ${range.segment} (${what}): ${plural(range.batches, "peer batch")} [${formatCount(range.peerFrom)}, ${formatCount(range.peerTo)})`;
  });
  return [`  fills from the peer ${printable(target.heal.peer)} (only read; the metadata plane is never copied):`, ...lines];
}

/** What a dry run prints: every target with its steps, what is left alone, and the forecast after the plan. */
export function formatPlan(plan: RepairPlan): string {
  const lines: string[] = [];
  const partitions = plan.targets.filter((t) => t.kind === "partition").length;
  const metadata = plan.targets.some((t) => t.kind === "metadata");
  const kind = plan.targets.some((t) => t.salvage !== undefined)
    ? "Salvage"
    : plan.targets.some((t) => t.heal !== undefined)
      ? "Heal"
      : "Repair";
  if (plan.targets.length === 0) {
    lines.push(`${kind} plan: nothing to ${kind.toLowerCase()}.`);
  } else {
    const what = [partitions > 0 ? plural(partitions, "partition") : null, metadata ? "the metadata WAL" : null].filter((w) => w !== null);
    const steps = plan.targets.reduce((n, t) => n + t.steps.length, 0);
    lines.push(`${kind} plan: ${plural(steps, "step")} on ${what.join(" and ")}.`);
  }
  for (const target of plan.targets) {
    lines.push(
      "",
      `${target.kind} ${printable(target.path)}`,
      `  preserve into ${printable(target.preserveDir)}${path.sep} (journal: ${JOURNAL_NAME})`,
      ...target.steps.map((step) => `  ${stepLine(target, step)}`),
      ...salvageLines(target),
      ...healLines(target),
    );
  }
  if (plan.leftAlone.length > 0) {
    lines.push("", "left alone:");
    for (const item of plan.leftAlone) lines.push(`  ${item.code} at ${printable(item.path)}: ${printable(item.message)}`);
  }
  const problems = plan.skipped.filter((s) => s.verdict !== "clean");
  const cleanCount = plan.skipped.length - problems.length;
  if (problems.length > 0) {
    lines.push("", "left untouched:");
    for (const s of problems) lines.push(`  ${printable(s.path)}: ${s.verdict}, action ${s.action}`);
    if (cleanCount > 0) lines.push(`  ${plural(cleanCount, "clean partition")}: action serve`);
  }
  if (plan.forecast !== null && plan.forecast.removes.length + plan.forecast.remains.length > 0) {
    lines.push("", "If iggy-server starts after this repair:");
    const { removes, remains } = plan.forecast;
    lines.push(
      removes.length === 0 ? "  this plan removes no boot effect" : "  this plan removes:",
      ...forecastLines(removes, plan.nodeRoot),
    );
    lines.push(remains.length === 0 ? "  nothing remains" : "  still to happen:", ...forecastLines(remains, plan.nodeRoot));
  }
  return `${lines.join("\n")}\n`;
}

/** What `repair --apply` prints once the plan ran: each target with what changed, and how to undo it. */
export function formatApplied(result: ApplyResult): string {
  const lines: string[] = [];
  for (const target of result.targets) {
    const verb = target.steps.some((step) => step.summary.includes("(heal:"))
      ? "healed"
      : target.steps.some((step) => step.kind === "replace" && step.role === "segment-log")
        ? "salvaged"
        : "repaired";
    lines.push(`${verb} ${printable(target.path)} (run ${target.run}; journal ${printable(target.journalPath)})`);
    for (const step of target.steps) lines.push(`  ${printable(step.summary)}`);
  }
  const undo = result.targets
    .filter((t) => t.steps.some((s) => s.kind !== "evidence-copy"))
    .map((t) => shellQuote(["segscan", "restore", t.dir]));
  if (undo.length > 0) lines.push(`undo: ${undo.join("; ")}`);
  return `${lines.join("\n")}\n`;
}
