/**
 * The human form of a repair plan (what a dry run prints) and of an applied
 * plan (docs/repair.md §6.2, docs/node.md N7, N8). Paths are printed relative
 * to their target dir, the target once per block.
 */
import * as path from "node:path";
import { INDEX_ENTRY_BYTES } from "../format/constants.js";
import { JOURNAL_NAME } from "../repair/journal.js";
import type { ForecastEffect, PlanStep, PlanTarget, RepairPlan } from "../repair/plan-types.js";
import type { ApplyResult } from "../repair/runner.js";
import { escapeControl as printable } from "./terminal-safe.js";

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function who(step: PlanStep): string {
  if (step.kind === "truncate" || step.consumer === null) return "";
  return `${step.consumer.kind} ${step.consumer.id}`;
}

/** One line per step, relative to the target dir. */
export function stepLine(target: PlanTarget, step: PlanStep): string {
  const name = printable(path.relative(target.dir, step.file) || path.basename(step.file));
  switch (step.kind) {
    case "truncate": {
      const residueName = `${path.basename(step.file)}.${step.toSize}.residue`;
      const kept = step.residue.allZero
        ? `${plural(step.residue.bytes, "zero byte")}, recorded by length`
        : `${plural(step.residue.bytes, "byte")}, copied to ${printable(residueName)} first`;
      const why =
        step.reason === "empty"
          ? "empty segment: no whole batch"
          : step.reason === "wal-torn-tail"
            ? "WAL tail: no verified entry follows it"
            : "torn tail";
      return `truncate ${name}: ${step.fromSize} -> ${step.toSize} bytes (${why}; cut ${kept})`;
    }
    case "replace": {
      if (step.content.type === "offset-record") {
        const to = step.content.offset;
        return step.reason === "offset-ahead-of-head"
          ? `rewrite ${name} (${who(step)}) from ${step.consumer?.storedOffset} to the head ${to}: CHANGES WHAT THIS CONSUMER READS NEXT (it resumes at ${BigInt(to) + 1n}, re-reading the re-minted offsets); the old file is preserved first`
          : `rewrite ${name} (${who(step)}) as a whole 16-byte record with the same offset ${to} (its checksum was torn); the old file is preserved first`;
      }
      if (step.content.type === "keep-prefix") {
        const why = step.reason === "empty-segment" ? "the segment holds no whole batch" : "partial trailing entry";
        return `trim ${name}: ${step.fromSize} -> ${step.content.bytes} bytes (${why}; the old index is kept)`;
      }
      const entries = step.content.entries.length;
      const why = step.reason === "index-less" ? "rebuilt from the walk" : "index disagreed with the walk";
      const old = step.fromSize > 0 ? `; the old ${step.fromSize}-byte index is kept` : "";
      return `rewrite ${name}: ${plural(entries, "entry")}, ${entries * INDEX_ENTRY_BYTES} bytes (${why}${old})`;
    }
    case "move-aside":
      return step.role === "offset"
        ? `move ${name} (${who(step)}, offset ${step.consumer?.storedOffset} on an empty partition) into the preserve dir: CHANGES WHAT THIS CONSUMER READS NEXT (it starts at the first new message instead of skipping it)`
        : `sweep ${name} (${step.reason}): move into the preserve dir`;
    case "evidence-copy": {
      const part = step.copyBytes < step.size ? `its first ${step.copyBytes} of ${step.size} bytes` : "it";
      return `copy ${name} (${who(step)}, checksum fails) into the preserve dir as evidence (${part}); the file stays (the server unlinks it at boot)`;
    }
  }
}

function forecastLines(effects: readonly ForecastEffect[], root: string | null): string[] {
  return effects.map(
    (effect) =>
      `    ${effect.destructive ? "DESTRUCTIVE " : ""}${effect.effect} ${printable(root === null ? effect.path : path.relative(root, effect.path))}: ${printable(effect.detail)}`,
  );
}

/** What a dry run prints: every target with its steps, what is left alone, and the forecast after the plan. */
export function formatPlan(plan: RepairPlan): string {
  const lines: string[] = [];
  const partitions = plan.targets.filter((t) => t.kind === "partition").length;
  const metadata = plan.targets.some((t) => t.kind === "metadata");
  if (plan.targets.length === 0) {
    lines.push("Repair plan: nothing to repair.");
  } else {
    const what = [partitions > 0 ? plural(partitions, "partition") : null, metadata ? "the metadata WAL" : null].filter((w) => w !== null);
    const steps = plan.targets.reduce((n, t) => n + t.steps.length, 0);
    lines.push(`Repair plan: ${plural(steps, "step")} on ${what.join(" and ")}.`);
  }
  for (const target of plan.targets) {
    lines.push(
      "",
      `${target.kind} ${printable(target.path)}`,
      `  preserve into ${printable(target.preserveDir)}${path.sep} (journal: ${JOURNAL_NAME})`,
      ...target.steps.map((step) => `  ${stepLine(target, step)}`),
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
    lines.push(`repaired ${printable(target.path)} (run ${target.run}; journal ${printable(target.journalPath)})`);
    for (const step of target.steps) lines.push(`  ${printable(step.summary)}`);
  }
  const undo = result.targets
    .filter((t) => t.steps.some((s) => s.kind !== "evidence-copy"))
    .map((t) => `segscan restore ${printable(t.dir)}`);
  if (undo.length > 0) lines.push(`undo: ${undo.join("; ")}`);
  return `${lines.join("\n")}\n`;
}
