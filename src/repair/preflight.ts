/**
 * docs/repair.md §6.2 step 0, "Preflight, then change": before the first byte
 * of any target changes, every target of the plan is checked — no writer has
 * a touched file open, each journal parses and records no unfinished restore,
 * each step's file is still what the plan saw, each target re-scans to the
 * same fingerprint and steps (salvage and heal: planned again to the same
 * target), each offset step's file still holds what the plan read and each
 * kind's own check passes, and each preserve dir is on its partition's
 * filesystem. Any failure throws with nothing changed anywhere.
 */
import * as path from "node:path";
import { shellQuote } from "../domain/command.js";
import { assert } from "../assert.js";
import type { Engine } from "../engine/types.js";
import { DEFAULT_WINDOW_BYTES } from "../format/constants.js";
import { nodeScanFs } from "../io/fs.js";
import { scanNodeMetadata } from "../node/scan.js";
import { partitionHeadNow } from "../node/partition-head.js";
import type { ScanOptions } from "../recovery/options.js";
import { scanPartition, scanPath } from "../node/scan-path.js";
import type { PartitionReport } from "../domain/scan.js";
import { RepairError, StalePlanError, TargetRefusedError } from "./errors.js";
import type { RepairFs } from "./fs-layer.js";
import { JOURNAL_NAME, readJournal } from "./journal.js";
import { type WriterCheck, refuseWriters } from "./lock.js";
import { planNodeTargets } from "./plan-node.js";
import { fingerprintOf, planPartitionTarget } from "./plan-partition.js";
import { SalvageRefusedError, planSalvageTarget } from "./plan-salvage.js";
import { HealRefusedError, planHealTarget } from "./heal/plan.js";
import { firstDifference } from "./plan.js";
import type { PlanTarget, RepairPlan } from "./schema.js";
import { type PlanStep, stepKindOf } from "./steps/index.js";
import { type CheckContext, expectStoredOffset } from "./steps/step.js";

/** Re-scans one partition target (the default calls `scanPartition`, or `scanPath` for a lone `.log`). */
export type PartitionScanner = (target: PlanTarget, options: ScanOptions) => Promise<PartitionReport>;

export const defaultScanner: PartitionScanner = async (target, options) => {
  const report = target.singleSegment ? await scanPath([target.path], options) : await scanPartition(target.path, options);
  const found = report.partitions.find((p) => p.path === target.path);
  if (found === undefined) {
    throw new StalePlanError(`re-scanning ${target.path} did not report that partition`, { path: target.path }, "partition missing");
  }
  return found;
};

export interface PreflightContext {
  fs: RepairFs;
  engine: Engine;
  scan: PartitionScanner;
  scanOptions: ScanOptions;
  checkWriters: boolean;
}

/** The scan options a plan was made with (every re-scan of apply uses them). */
export function planScanOptions(plan: RepairPlan, engine: Engine, signal?: AbortSignal): ScanOptions {
  return {
    engine,
    verify: plan.options.verify,
    replicaCount: plan.options.replicaCount,
    probeBudgetUnits: plan.options.probeBudgetUnits,
    windowBytes: plan.options.windowBytes,
    ...(plan.options.maxBatchBytes !== undefined ? { maxBatchBytes: plan.options.maxBatchBytes } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/**
 * What the preflight proved of the plan: what the writer check could see, and
 * for each offset rewrite the value the bytes prove it must write (the
 * partition's head for a clamp, the stored offset for a torn record), keyed by
 * file. The steps write these, never a value read from the plan.
 */
export interface PreflightResult {
  writerCheck: WriterCheck;
  offsetValues: Map<string, bigint>;
}

/** Runs every check; returns what it proved. Throws with "nothing was changed" on the first failure. */
export async function preflight(plan: RepairPlan, ctx: PreflightContext): Promise<PreflightResult> {
  let writerCheck: WriterCheck = { checked: false, writers: [], unreadableProcesses: 0 };
  const offsetValues = new Map<string, bigint>();
  try {
    if (ctx.checkWriters) {
      writerCheck = await refuseWriters(
        {
          segmentDirs: plan.targets.filter((t) => t.kind === "partition").map((t) => t.dir),
          files: plan.targets.flatMap((t) => t.steps.map((s) => s.file)),
        },
        "repair",
      );
    }
    for (const target of plan.targets) {
      ctx.scanOptions.signal?.throwIfAborted();
      await checkJournal(target, ctx.fs);
      await checkCrossFilesystem(target, ctx.fs);
    }
    // The re-scans first: what the files say now is the most useful reason; then the plan's own observations.
    for (const target of plan.targets) {
      ctx.scanOptions.signal?.throwIfAborted();
      if (target.kind === "partition") await checkPartition(target, ctx);
      else await checkMetadata(target, ctx);
      // An offset file's step (docs/node.md N4): the file must still hold the offset the plan read.
      for (const step of target.steps)
        if ("consumer" in step && step.consumer !== null) await expectStoredOffset(ctx.fs, step.file, step.consumer);
      const check = checkContext(target, ctx, offsetValues);
      for (const step of target.steps) await stepKindOf(step).check?.(step, check);
      for (const step of target.steps) await checkObserved(target, step, ctx.fs);
    }
  } catch (error) {
    throw nothingChanged(error);
  }
  return { writerCheck, offsetValues };
}

/** What a step kind's `check` reads with: the partition's head as the bytes prove it now (read once), and where proven values go. */
function checkContext(target: PlanTarget, ctx: PreflightContext, offsetValues: Map<string, bigint>): CheckContext {
  let head: Promise<bigint | null> | null = null;
  return {
    fs: ctx.fs,
    headNow: () =>
      (head ??= partitionHeadNow(target.dir, ctx.scanOptions, ctx.engine).then((found) =>
        found.known && !found.quarantined ? found.head : null,
      )),
    prove: (file, value) => offsetValues.set(file, value),
  };
}

function nothingChanged(error: unknown): unknown {
  if (error instanceof RepairError && !error.message.includes("nothing was changed")) error.message += "; nothing was changed";
  return error;
}

async function checkJournal(target: PlanTarget, fs: RepairFs): Promise<void> {
  const journalPath = path.join(target.preserveDir, JOURNAL_NAME);
  // A journal with a hole in it refuses here (JournalCorruptError), before a new run appends to it.
  const records = await readJournal(fs, journalPath);
  if (records.some((r) => r.kind === "undone")) {
    throw new RepairError(
      `refusing to repair ${target.path}: a restore of it was interrupted (journal ${journalPath}); run \`${shellQuote(["segscan", "restore", target.dir])}\` again first`,
      { path: target.path },
    );
  }
}

async function checkObserved(target: PlanTarget, step: PlanStep, fs: RepairFs): Promise<void> {
  const stat = await fs.stat(step.file);
  const stale = (why: string): never => {
    throw new StalePlanError(
      `refusing a stale plan for ${target.path}: ${step.file} ${why} since the plan was made; scan and plan again`,
      { path: step.file },
      why,
    );
  };
  if (step.observed === null) {
    if (stat !== null) stale("appeared");
    return;
  }
  if (stat === null) return stale("is gone");
  if (stat.isSymbolicLink === true) {
    // Not "became": a link the scan read through looks the same at plan time (adversarial pass); say what it is.
    throw new StalePlanError(
      `refusing to change ${target.path}: ${step.file} is a symbolic link, and repair and salvage change only regular files ` +
        `in the partition dir (replace the link by the file it points to, or run segscan where the file lives)`,
      { path: step.file },
      "is a symbolic link",
    );
  }
  if (!stat.isFile) stale("is no longer a regular file");
  if (stat.size !== step.observed.size) stale(`changed size (${step.observed.size} → ${stat.size} bytes)`);
  if (stat.mtimeMs !== undefined && Math.round(stat.mtimeMs) !== step.observed.mtimeMs) stale("was modified (its mtime changed)");
}

/**
 * Refuses a partition whose preserve dir is on another filesystem than the
 * partition dir (the dir is a mount point, say): moves between the two are
 * renames, which cannot cross filesystems (EXDEV). Layers that report no
 * device id are covered by the EXDEV check on the rename itself.
 */
async function checkCrossFilesystem(target: PlanTarget, fs: RepairFs): Promise<void> {
  const home = await fs.stat(target.dir);
  const preserveParent = (await fs.stat(target.preserveDir)) ?? (await fs.stat(path.dirname(target.preserveDir)));
  if (home?.dev === undefined || preserveParent?.dev === undefined || home.dev === preserveParent.dev) return;
  throw new RepairError(
    `refusing to repair ${target.dir}: its preserve dir ${target.preserveDir} is (or would be) on another filesystem (device ${preserveParent.dev}, ` +
      `the directory's is ${home.dev}), and repair moves files between the two by rename, which cannot cross filesystems ` +
      `(is ${target.dir} a mount point? repair needs ${target.preserveDir} on the same filesystem)`,
    { path: target.preserveDir },
  );
}

/** Steps that come from the segments (not the node's offset files): what a re-scan re-plans. */
const segmentSteps = (steps: readonly PlanStep[]): PlanStep[] => steps.filter((s) => s.role !== "offset").map(withoutObserved);
/** A step as a re-plan makes it: what the plan observed (file stats, a sweep's size) is checked on its own. */
const withoutObserved = (step: PlanStep): PlanStep =>
  step.kind === "move-aside" && step.role === "sweep" ? { ...step, size: 0, observed: null } : { ...step, observed: null };

async function checkPartition(target: PlanTarget, ctx: PreflightContext): Promise<void> {
  if (target.singleSegment) await refuseLoneSegment(target, ctx.scanOptions);
  if (target.fingerprint === null) return;
  if (target.salvage !== undefined) return checkSalvage(target, ctx);
  if (target.heal !== undefined) return checkHeal(target, ctx);
  const fresh = await ctx.scan(target, ctx.scanOptions);
  if (fresh.verdict === "refused" || fresh.verdict === "failed") {
    const why =
      fresh.error !== null ? ` (${fresh.error.code}: ${fresh.error.message})` : fresh.refusal !== null ? ` (${fresh.refusal.code})` : "";
    throw new StalePlanError(
      `refusing a stale plan: ${target.path} is now ${fresh.verdict} with action ${fresh.action}${why}; scan and plan again`,
      { path: target.path },
      `action ${fresh.action}`,
    );
  }
  const freshSteps = fresh.action === "repair" ? planPartitionTarget(fresh).steps : [];
  const diff =
    firstDifference(target.fingerprint, fingerprintOf(fresh), ".fingerprint") ??
    firstDifference(segmentSteps(target.steps), segmentSteps(freshSteps), ".steps");
  if (diff !== null) {
    throw new StalePlanError(
      `refusing a stale plan for ${target.path}: the files changed since it was made (${diff}); scan and plan again`,
      { path: target.path },
      diff,
    );
  }
}

/**
 * A salvage target (docs/repair.md §6.5): the partition is scanned again and
 * must still be refused the same way, and salvage planned from that scan must
 * be the same target (fingerprint, steps, what is kept and lost).
 */
async function checkSalvage(target: PlanTarget, ctx: PreflightContext): Promise<void> {
  const fresh = await ctx.scan(target, ctx.scanOptions);
  let replanned: PlanTarget;
  try {
    replanned = await planSalvageTarget(fresh, {
      engine: ctx.engine,
      replicaCount: ctx.scanOptions.replicaCount ?? 1,
      verify: ctx.scanOptions.verify ?? "tail",
      ...windowOf(ctx.scanOptions),
    });
  } catch (error) {
    if (!(error instanceof SalvageRefusedError)) throw error;
    throw new StalePlanError(
      `refusing a stale salvage plan: ${target.path} is now ${fresh.verdict} with action ${fresh.action}, and salvage would refuse it (${error.code}); scan and plan again`,
      { path: target.path },
      `salvage ${error.code}`,
    );
  }
  expectReplanned(target, replanned, "salvage");
}

/**
 * A heal target (docs/heal.md): both replicas are scanned again, and the heal
 * planned from those scans must be the same target (fingerprint, steps, what
 * it fills from the peer), or nothing is changed.
 */
async function checkHeal(target: PlanTarget, ctx: PreflightContext): Promise<void> {
  const heal = target.heal;
  assert(heal !== undefined, "checkHeal runs on heal targets");
  const fresh = await ctx.scan(target, ctx.scanOptions);
  const peer = (await scanPartition(heal.peer, ctx.scanOptions)).partitions[0];
  let replanned: PlanTarget | null;
  try {
    if (peer === undefined) throw new StalePlanError(`the peer ${heal.peer} holds no partition now`, { path: heal.peer }, "peer missing");
    replanned = await planHealTarget(fresh, peer, {
      engine: ctx.engine,
      ...windowOf(ctx.scanOptions),
      fs: ctx.fs,
    });
  } catch (error) {
    if (!(error instanceof HealRefusedError)) throw error;
    throw new StalePlanError(
      `refusing a stale heal plan: ${target.path} or its peer ${heal.peer} changed, and heal would refuse it now (${error.code}: ${error.message}); scan and plan again`,
      { path: target.path },
      `heal ${error.code}`,
    );
  }
  expectReplanned(target, replanned, "heal");
}

/** The scan's window, batch cap and signal, as the salvage and heal planners read them. */
function windowOf(options: ScanOptions): { windowBytes: number; maxBatchBytes?: number; signal?: AbortSignal } {
  return {
    windowBytes: options.windowBytes ?? DEFAULT_WINDOW_BYTES,
    ...(options.maxBatchBytes !== undefined ? { maxBatchBytes: options.maxBatchBytes } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
}

/** A salvage or heal target planned again from fresh scans must be the same target, or the plan is stale. */
function expectReplanned(target: PlanTarget, replanned: PlanTarget | null, command: "salvage" | "heal"): void {
  const diff =
    replanned === null
      ? "there is nothing to heal any more"
      : (firstDifference(target.fingerprint, replanned.fingerprint, ".fingerprint") ??
        firstDifference(target.steps.map(withoutObserved), replanned.steps.map(withoutObserved), ".steps") ??
        firstDifference(target[command], replanned[command], `.${command}`));
  if (diff !== null) {
    throw new StalePlanError(
      `refusing a stale ${command} plan for ${target.path}: the files changed since it was made (${diff}); scan and plan again`,
      { path: target.path },
      diff,
    );
  }
}

async function checkMetadata(target: PlanTarget, ctx: PreflightContext): Promise<void> {
  const root = path.dirname(target.dir);
  const fresh = await scanNodeMetadata(root, ctx.scanOptions, nodeScanFs, ctx.engine);
  const replanned: PlanTarget[] = [];
  await planNodeTargets({ ...fresh, partitions: [], bootForecast: [] }, replanned, {
    clampOffsets: false,
    fs: ctx.fs,
    preserveDirOf: () => target.preserveDir,
  });
  const freshTarget = replanned.find((t) => t.kind === "metadata");
  const diff =
    freshTarget === undefined
      ? "the re-scan does not prove that torn tail any more"
      : firstDifference(target.steps.map(withoutObserved), freshTarget.steps.map(withoutObserved), ".steps");
  if (diff !== null) {
    const step = target.steps[0];
    assert(step !== undefined, "a metadata target that differs holds a step");
    throw new StalePlanError(
      `refusing a stale plan: ${step.file} changed since the scan (${diff}); the plan cut it from ${step.kind === "truncate" ? step.fromSize : "?"} to ${step.kind === "truncate" ? step.toSize : "?"} bytes; scan and plan again`,
      { path: step.file },
      diff,
    );
  }
}

/**
 * A `.log` given alone is scanned alone, so its report cannot see its
 * partition's refusal. Before repairing it, the whole partition (its
 * directory) is scanned: a refused or failed partition is evidence and is cut
 * nowhere, and only the tail segment may ever be cut, so a `.log` that is not
 * the tail is refused as well (docs/repair.md §6.2). Throws
 * `TargetRefusedError`; nothing was written.
 */
export async function refuseLoneSegment(target: PlanTarget, options: ScanOptions): Promise<void> {
  const whole = (await scanPartition(target.dir, options)).partitions[0];
  const log = target.fingerprint?.segments[0]?.logPath ?? target.path;
  if (whole === undefined) {
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: scanning its partition ${target.dir} reported nothing; nothing was changed`,
      {
        path: log,
      },
    );
  }
  if (whole.verdict === "refused" || whole.verdict === "failed") {
    const why =
      whole.refusal !== null
        ? `${whole.refusal.code}: ${whole.refusal.message}`
        : whole.error !== null
          ? `${whole.error.code}: ${whole.error.message}`
          : whole.verdict;
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: its partition ${target.dir} is ${whole.verdict} as a whole (${why}); ` +
        `a refused partition is kept byte for byte as evidence, so none of its segments is cut; nothing was changed ` +
        `(\`${shellQuote(["segscan", "scan", target.dir])}\` shows the refusal)`,
      { path: log },
    );
  }
  const tail = whole.segments.at(-1);
  if (tail !== undefined && path.resolve(tail.logPath) !== path.resolve(log)) {
    throw new TargetRefusedError(
      `refusing to repair ${log} alone: it is not the tail segment of its partition ${target.dir} (the tail is ${path.basename(tail.logPath)}), ` +
        `and only a partition's tail may be cut or re-indexed segment by segment; nothing was changed ` +
        `(repair the partition instead: \`${shellQuote(["segscan", "repair", target.dir])}\`)`,
      { path: log },
    );
  }
}
