/**
 * docs/repair.md §6.2 "Preflight, then change": the one journaled step
 * runner. `applyRepair` carries out a whole plan, each step through its kind
 * in the table (./steps/index.ts): every lock, then the preflight
 * (preflight.ts); per target the journal's `begin`, every step prepared (old
 * bytes preserved) before any changes, then per change an `intent` fsynced
 * BEFORE it, the change made durable, and `done`; `end` closes the run. Restore
 * decides from the files whether a step happened, so a crash (or an aborted
 * `signal`, between steps) at any point converges (§6.2 "Crash
 * convergence"). A failure after changes began names what was done, what was
 * not, and the `segscan restore` commands that undo it; "nothing was changed"
 * only when that is true.
 */
import * as path from "node:path";
import { shellQuote } from "../domain/command.js";
import { createEngine } from "../engine/index.js";
import type { Engine } from "../engine/types.js";
import { RepairError } from "./errors.js";
import { DEFAULT_CHUNK_BYTES, newRunId } from "./files.js";
import { describedFs, nodeRepairFs } from "./fs-layer.js";
import type { RepairFs } from "./fs-layer.js";
import { JOURNAL_NAME, JournalWriter } from "./journal.js";
import { type HeldLock, acquireLocks, appendLockLeft, releaseLocks } from "./lock.js";
import { type PartitionScanner, defaultScanner, planScanOptions, preflight } from "./preflight.js";
import type { AppliedTarget, ApplyResult, PlanTarget, RepairPlan } from "./schema.js";
import { type JournalOp, type StepContext, stepKindOf } from "./steps/index.js";

export type { AppliedStep, AppliedTarget, ApplyResult } from "./schema.js";

export interface ApplyOptions {
  signal?: AbortSignal;
  /** Filesystem layer (default: node:fs). The lock goes through it too. */
  fs?: RepairFs;
  /** Engine for the re-scans and the XXH3-64 of preserved bytes (default: `createEngine(plan.engine)`). */
  engine?: Engine;
  /** The partition re-scan behind the stale-plan check. */
  scan?: PartitionScanner;
  /** Chunk of every streamed copy and hash (default 1 MiB). */
  chunkBytes?: number;
  /**
   * Refuse while another process has a file the plan touches open for writing
   * (default true; Linux only, see `findWriters`). Tests that apply thousands
   * of times turn the /proc walk off.
   */
  checkWriters?: boolean;
  /** What the lock file records as the holder's command (default: this process's argv). */
  command?: string;
}

/** Where a run stands, for the error message of a step that fails (docs/repair.md §6.2). */
interface Progress {
  done: AppliedTarget[];
  current: { target: PlanTarget; finished: string[]; changed: boolean; inFlight: boolean; journalPath: string } | null;
}

/**
 * Checks the whole plan (preflight), then applies each target in turn. Only
 * the files a step names are ever changed, and only after what it destroys is
 * preserved and journaled.
 */
export async function applyRepair(plan: RepairPlan, options: ApplyOptions = {}): Promise<ApplyResult> {
  const fs = describedFs(options.fs ?? nodeRepairFs);
  const engine = options.engine ?? (await createEngine(plan.engine));
  const command = options.command ?? process.argv.join(" ");
  // One run at a time per target: every lock before anything is re-scanned or written.
  const locks: HeldLock[] = await acquireLocks(
    fs,
    plan.targets.map((t) => t.preserveDir),
    (preserveDir) => `repair ${plan.targets.find((t) => t.preserveDir === preserveDir)?.dir ?? preserveDir}`,
    command,
  );
  let result: ApplyResult;
  try {
    const { writerCheck, offsetValues } = await preflight(plan, {
      fs,
      engine,
      scan: options.scan ?? defaultScanner,
      scanOptions: planScanOptions(plan, engine, options.signal),
      checkWriters: options.checkWriters !== false,
    });
    const progress: Progress = { done: [], current: null };
    const context = { fs, engine, chunkBytes: options.chunkBytes ?? DEFAULT_CHUNK_BYTES, signal: options.signal, offsetValues };
    for (const target of plan.targets) {
      try {
        progress.done.push(await applyTarget(target, context, progress));
      } catch (error) {
        throw withProgress(error, plan, progress);
      }
    }
    result = {
      targets: progress.done,
      changed: progress.done.some((t) => t.steps.some((s) => s.kind !== "evidence-copy")),
      writerCheck: { checked: writerCheck.checked, unreadableProcesses: writerCheck.unreadableProcesses },
    };
  } catch (error) {
    // The run's own error leads; a lock it cannot release is said after it (the next run must know why it refuses).
    await releaseLocks(locks).catch((releaseError: unknown) => appendLockLeft(error, releaseError));
    throw error;
  }
  try {
    await releaseLocks(locks);
  } catch (error) {
    // Every step is done; the lock left behind is said (LockReleaseError), and the exit still shows that files changed.
    if (error instanceof RepairError) error.changed = result.changed;
    throw error;
  }
  return result;
}

/** What every step of the run reads with; `offsetValues` as the preflight proved them (never the plan's). */
type RunContext = Omit<StepContext, "target" | "record">;

async function applyTarget(target: PlanTarget, ctx: RunContext, progress: Progress): Promise<AppliedTarget> {
  const { fs } = ctx;
  const run = newRunId();
  const journalPath = path.join(target.preserveDir, JOURNAL_NAME);
  const current = { target, finished: [] as string[], changed: false, inFlight: false, journalPath };
  progress.current = current;
  ctx.signal?.throwIfAborted();
  await fs.mkdir(target.preserveDir);
  await fs.syncDir(path.dirname(target.preserveDir));
  const journal = await JournalWriter.open(fs, target.preserveDir, run);
  const applied: AppliedTarget = {
    kind: target.kind,
    path: target.path,
    dir: target.dir,
    preserveDir: target.preserveDir,
    journalPath,
    run,
    steps: [],
  };
  try {
    const counts: Record<string, number> = {};
    for (const step of target.steps) counts[step.kind] = (counts[step.kind] ?? 0) + 1;
    await journal.append({
      kind: "begin",
      time: new Date().toISOString(),
      partition: target.path,
      target: target.kind,
      plan: counts,
      // docs/repair.md §6.5: a salvage records what it keeps and the offsets it gives up before it changes anything.
      ...(target.salvage !== undefined ? { salvage: target.salvage } : {}),
      // docs/heal.md: a heal records what it fills, from which peer; a scan reads it to close the salvage losses it filled.
      ...(target.heal !== undefined ? { heal: target.heal } : {}),
    });
    const stepContext: StepContext = {
      ...ctx,
      target,
      record: async (body) => {
        await journal.append(body);
      },
    };
    const prepared = [];
    for (const step of target.steps) {
      ctx.signal?.throwIfAborted();
      prepared.push({ step, run: await stepKindOf(step).prepare(step, stepContext) });
    }
    for (const { step, run } of prepared) {
      ctx.signal?.throwIfAborted();
      let seq: number | null = null;
      current.inFlight = true;
      const done = await run.execute(
        async (op: JournalOp, lost = []) => {
          seq = await journal.append({ kind: "intent", op, lost: [...lost] });
        },
        () => {
          current.changed = true;
        },
      );
      if (seq !== null) await journal.append({ kind: "done" }, seq);
      current.inFlight = false;
      applied.steps.push({ kind: step.kind, role: step.role, file: step.file, ...done });
      current.finished.push(done.summary);
    }
    await journal.append({ kind: "end", time: new Date().toISOString() });
  } finally {
    await journal.close();
  }
  progress.current = null;
  return applied;
}

/** The targets a failed or cancelled run leaves, in words: repaired, part-way, not started, and how to undo. */
function describeProgress(plan: RepairPlan, progress: Progress): string {
  const parts: string[] = [];
  const current = progress.current;
  const started = new Set([...progress.done.map((t) => t.path), ...(current === null ? [] : [current.target.path])]);
  const notStarted = plan.targets.filter((t) => !started.has(t.path));
  const changedDirs: string[] = progress.done.filter((t) => t.steps.some((s) => s.kind !== "evidence-copy")).map((t) => t.dir);
  if (progress.done.length > 0) parts.push(`repaired in full: ${progress.done.map((t) => t.path).join(", ")}`);
  if (current !== null) {
    const target = current.target;
    if (current.changed) {
      changedDirs.push(target.dir);
      const notDone = target.steps.length - current.finished.length;
      parts.push(
        `${target.path} is part-way repaired: ${current.finished.length === 0 ? "no step finished" : `done: ${current.finished.join("; ")}`}; ` +
          `${notDone} step${notDone === 1 ? "" : "s"} not done${current.inFlight ? " (the first of them was under way and may have partly taken effect; its journaled intent lets restore or a new repair finish either way)" : ""}; the journal ${current.journalPath} records every step begun`,
      );
    } else {
      parts.push(`nothing in ${target.dir} was changed (its preserve dir ${target.preserveDir} holds only copies)`);
    }
  }
  if (notStarted.length > 0) parts.push(`not started: ${notStarted.map((t) => t.path).join(", ")}`);
  // docs/repair.md §6.5: a salvage stopped after its log step may leave an index-less segment, which `repair` finishes.
  const again = plan.targets.some((t) => t.salvage !== undefined)
    ? "`segscan scan` it, then run `segscan salvage --apply` (still refused) or `segscan repair --apply` (repairable)"
    : plan.targets.some((t) => t.heal !== undefined)
      ? "run the same `segscan heal --apply` again"
      : "run `segscan repair --apply` again";
  // A stale lock of this run is reclaimed by the next run on this host (src/repair/lock.ts), so "run again" works as said.
  if (changedDirs.length === 0) parts.push("nothing was changed");
  else
    parts.push(
      `${again} to finish, or undo what was done with ${changedDirs.map((dir) => `\`${shellQuote(["segscan", "restore", dir])}\``).join(", ")}`,
    );
  return parts.join("; ");
}

/** Appends the run's progress to a repair error or a cancel (docs/repair.md §6.2: every error says what was changed). */
function withProgress(error: unknown, plan: RepairPlan, progress: Progress): unknown {
  const state = describeProgress(plan, progress);
  if ((error as Error | null)?.name === "AbortError") {
    const cancelled = new Error(`cancelled while applying: ${state}; \`segscan scan\` shows the state`, { cause: error });
    cancelled.name = "AbortError";
    return cancelled;
  }
  if (error instanceof RepairError) {
    error.message += `; ${state}`;
    error.changed = progress.done.some((t) => t.steps.some((s) => s.kind !== "evidence-copy")) || progress.current?.changed === true;
    return error;
  }
  return error;
}
