/**
 * docs/repair.md §6.2: the repair plan, one value for the whole node.
 *
 * A plan lists every change a repair makes, on every plane: segment log cuts,
 * index rewrites and trims, scratch-file sweeps (docs/repair.md §6.2), the
 * metadata WAL's torn-tail cut and the offset-file evidence copies, rewrites
 * and moves (docs/node.md N7). It is grouped into **targets**: one per
 * directory that gets a journal and a lock (a partition dir, or the node's
 * `metadata/` dir), each with its ordered **steps**.
 *
 * A plan is plain JSON data: every u64 (a segment's start offset, a stored
 * consumer offset) is a decimal string, sizes and positions are numbers, so
 * `JSON.parse(JSON.stringify(plan))` is the same plan and can be applied
 * (`parsePlan` checks its shape first). Planning writes nothing: it reads the
 * scan report and `lstat`s each file a step will touch, recording its size
 * and mtime, which `applyRepair`'s preflight compares before anything changes.
 */
import * as path from "node:path";
import { firstSchemaProblem } from "../domain/schema-vocabulary.js";
import { scanPath } from "../node/scan-path.js";
import { type ScanOptions, resolveEngineOption } from "../recovery/options.js";
import type { Engine } from "../engine/types.js";
import type { ScanReport } from "../domain/scan.js";
import { PlanError } from "./errors.js";
import type { RepairFs } from "./fs-layer.js";
import { nodeRepairFs } from "./fs-layer.js";
import { fingerprintOf, planPartitionTarget } from "./plan-partition.js";
import { planNodeTargets } from "./plan-node.js";
import { realPreserveDirOf } from "./preserve-dir.js";

export { PRESERVE_DIR_SUFFIX, preserveDirOf, realPreserveDirOf } from "./preserve-dir.js";

export { PLAN_VERSION } from "./plan-types.js";
import { PLAN_VERSION } from "./plan-types.js";
import { type LeftAlone, type PlanTarget, type RepairPlan, RepairPlanSchema, type SkippedPartition } from "./schema.js";
import { type PlanStep, planStepProblem } from "./steps/index.js";

export interface PlanRepairOptions extends ScanOptions {
  /** docs/node.md N4: also plan offset rewrites and moves (default false: only evidence copies). */
  clampOffsets?: boolean;
  /** Filesystem layer the plan `lstat`s through (default node:fs). */
  fs?: RepairFs;
}

/**
 * The plan for a scan report, or for paths (scanned first with `options`).
 * Only partitions whose action is `repair` get segment steps; every node
 * finding docs/node.md N7 names gets its step or a `leftAlone` entry.
 */
export async function planRepair(source: ScanReport | string | readonly string[], options: PlanRepairOptions = {}): Promise<RepairPlan> {
  const report =
    typeof source === "string" || Array.isArray(source) ? await scanPath(source as string | string[], options) : (source as ScanReport);
  return planFromReport(report, { clampOffsets: options.clampOffsets === true, fs: options.fs ?? nodeRepairFs });
}

async function planFromReport(report: ScanReport, options: { clampOffsets: boolean; fs: RepairFs }): Promise<RepairPlan> {
  // docs/repair.md §6.2: a plan holds one node root's steps; one per node root, never one that leaves a node out.
  if (report.nodes !== undefined) {
    throw new TypeError(
      `the report holds ${report.nodes.length} node roots (${report.nodes.map((node) => node.path).join(", ")}): plan each node root on its own`,
    );
  }
  const targets: PlanTarget[] = [];
  const skipped: SkippedPartition[] = [];
  for (const partition of report.partitions) {
    if (partition.action === "repair") targets.push(planPartitionTarget(partition));
    else skipped.push({ path: partition.path, verdict: partition.verdict, action: partition.action });
  }
  let leftAlone: LeftAlone[] = [];
  let forecast: RepairPlan["forecast"] = null;
  if (report.node !== undefined) {
    const node = await planNodeTargets(report.node, targets, { ...options, preserveDirOf: realPreserveDirOf });
    leftAlone = node.leftAlone;
    forecast = node.forecast;
    // An offset rewrite depends on the head the segments prove: the re-scan must find the segments unchanged.
    for (const target of targets) {
      if (target.kind !== "partition" || target.fingerprint !== null) continue;
      const partition = report.partitions.find((p) => path.resolve(p.path) === path.resolve(target.dir));
      if (partition !== undefined && partition.verdict !== "failed") target.fingerprint = fingerprintOf(partition);
    }
  }
  const plan: RepairPlan = {
    version: PLAN_VERSION,
    segscan: report.segscan,
    engine: report.engine,
    options: { ...report.options, clampOffsets: options.clampOffsets },
    nodeRoot: report.node?.path ?? null,
    targets: targets.filter((target) => target.steps.length > 0),
    skipped,
    leftAlone,
    forecast,
  };
  await observeFiles(plan, options.fs);
  return plan;
}

/**
 * The plan of one partition-level command (salvage, heal): `targets` on the
 * report's `options` with no offset clamp, each step file observed through `fs`.
 */
export async function partitionCommandPlan(
  report: ScanReport,
  options: ScanReport["options"],
  targets: PlanTarget[],
  fs: RepairFs,
): Promise<RepairPlan> {
  const plan = { ...planShell(report, options), targets };
  await observeFiles(plan, fs);
  return plan;
}

/**
 * A plan that does nothing, for a refusal of one partition-level command
 * (salvage, heal): the partition in `leftAlone` with the refusal's code and
 * message, so `--json` still prints the one repair shape (docs/interfaces.md §9.4).
 */
export function refusedPartitionPlan(report: ScanReport, refusal: { path: string; code: string; message: string }): RepairPlan {
  return {
    ...planShell(report, report.options),
    skipped: report.partitions.map((p) => ({ path: p.path, verdict: p.verdict, action: p.action })),
    leftAlone: [{ path: refusal.path, code: refusal.code, why: "not-repairable", message: refusal.message }],
  };
}

function planShell(report: ScanReport, options: ScanReport["options"]): RepairPlan {
  return {
    version: PLAN_VERSION,
    segscan: report.segscan,
    engine: report.engine,
    options: { ...options, clampOffsets: false },
    nodeRoot: null,
    targets: [],
    skipped: [],
    leftAlone: [],
    forecast: null,
  };
}

/** The engine a partition-level command plans with: the caller's instance, or the one the report names. */
export async function planEngine(report: ScanReport, options: ScanOptions): Promise<Engine> {
  return options.engine !== undefined && typeof options.engine !== "string" ? options.engine : await resolveEngineOption(report.engine);
}

/**
 * Records each step file's size and mtime as the plan sees it (lstat: a link
 * is seen as the link); a sweep's size is what it moves.
 */
export async function observeFiles(plan: RepairPlan, fs: RepairFs): Promise<void> {
  for (const target of plan.targets) {
    for (const step of target.steps) {
      const stat = await fs.stat(step.file);
      // Whole milliseconds, rounded: what a copy of the tree (utimes) reproduces within its float error.
      step.observed = stat === null ? null : { size: stat.size, mtimeMs: Math.round(stat.mtimeMs ?? 0) };
      if (step.kind === "move-aside" && step.role === "sweep") step.size = stat?.size ?? 0;
    }
  }
}

export function isEmptyPlan(plan: RepairPlan): boolean {
  return plan.targets.length === 0;
}

/** Every step of a plan with its target, in the order `applyRepair` runs them. */
export function planSteps(plan: RepairPlan): { target: PlanTarget; step: PlanStep }[] {
  return plan.targets.flatMap((target) => target.steps.map((step) => ({ target, step })));
}

/**
 * The first difference between two values of plain JSON data, as a JSON path
 * with both values, or null when they are equal.
 */
export function firstDifference(a: unknown, b: unknown, at = ""): string | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
      if (d !== null) return d;
    }
    return null;
  }
  return Object.is(a, b) ? null : `${at || "."}: planned ${JSON.stringify(a)}, found ${JSON.stringify(b)}`;
}

/**
 * A plan read back from JSON (e.g. `repair --json` saved and applied later):
 * checked against the plan's schema (docs/interfaces.md §9.4), every step
 * against its kind's, every path absolute and every step's file inside its
 * target's directory, throwing `PlanError` naming the first thing wrong. The
 * plan's own checks (a fresh scan, sizes, mtimes) still run at apply time.
 */
export function parsePlan(value: unknown, source = "plan"): RepairPlan {
  const fail = (what: string): never => {
    throw new PlanError(`${source} is not a segscan repair plan: ${what}`, { path: source });
  };
  const plan = value as Partial<RepairPlan> | null;
  if (plan === null || typeof plan !== "object") return fail("not a JSON object");
  if (plan.version !== PLAN_VERSION) fail(`version ${JSON.stringify(plan.version)}, this segscan reads version ${PLAN_VERSION}`);
  // Where a step would write comes first: it is what must never be wrong.
  for (const [i, target] of (Array.isArray(plan.targets) ? plan.targets : []).entries()) {
    for (const field of ["path", "dir", "preserveDir"] as const) {
      if (typeof target?.[field] !== "string" || !path.isAbsolute(target[field])) fail(`targets[${i}].${field} is not an absolute path`);
    }
    for (const [j, step] of (Array.isArray(target.steps) ? target.steps : []).entries()) {
      if (typeof step?.file !== "string" || !isInside(target.dir, step.file))
        fail(`targets[${i}].steps[${j}].file is not a file inside ${target.dir}`);
      const problem = planStepProblem(step, `targets[${i}].steps[${j}]`);
      if (problem !== null) fail(problem);
    }
  }
  const problem = firstSchemaProblem(RepairPlanSchema, plan, "");
  if (problem !== null) fail(problem.replace(/^\./, ""));
  return plan as RepairPlan;
}

/** Whether `file` lies strictly inside `dir` (by path, no `..` escape). */
export function isInside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}
