/**
 * `segscan forget <path...>` (docs/repair.md §6.7): when the preserved copies
 * may go. A dry run by default (what it would close, delete and keep, and
 * why); `--apply` closes the runs in the journal, then deletes. With
 * `--lost-offsets` it clears the salvage-loss record instead (docs/repair.md
 * §6.6): the scan stops reporting those offsets. Loaded when the command runs.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { shellQuote } from "../domain/command.js";
import { describeCause } from "../io/errors.js";
import {
  type ForgetTarget,
  type LossClearing,
  RepairError,
  clearLostOffsets,
  findForgettable,
  forget,
  planForget,
} from "../repair/index.js";
import { colors, formatBytes, formatCount } from "../report/format.js";
import { stringifyJson } from "../report/json.js";
import { escapeControl, escapeControlKeepingLines } from "../report/terminal-safe.js";
import { lostOffsetsWords } from "../policy/partition-findings.js";
import { colorEnabled, out, warn, withCancellation } from "./context.js";
import { EXIT, OperationalError, UsageError } from "./exit.js";
import { parseDuration } from "./parse.js";

export interface ForgetFlags {
  apply?: boolean;
  json?: boolean;
  /** As given (`30d`); parsed by parseDuration. */
  olderThan?: string;
  lostOffsets?: boolean;
}

const KEPT_WORDS: Record<string, string> = {
  "restore-needs": "a restore still needs it",
  "too-recent": "too recent",
  "not-segscan": "not segscan's",
  "not-regular": "not a regular file",
  "size-differs": "not the size its journal recorded",
};

function targetText(target: ForgetTarget, apply: boolean): string {
  const c = colors(colorEnabled(process.stdout));
  const verb = (would: string, did: string): string => (apply ? did : `would ${would}`);
  const lines = [`${c.bold(escapeControl(target.dir))} ${c.dim(`(preserve dir ${escapeControl(target.preserveDir)})`)}`];
  if (target.closes.length > 0) {
    lines.push(
      `  ${verb("close", "closed")} ${target.closes.length} run${target.closes.length === 1 ? "" : "s"} (restore can no longer undo ${target.closes.length === 1 ? "it" : "them"}): ` +
        target.closes.map((run) => `${escapeControl(run.run)}${run.began === null ? "" : ` of ${escapeControl(run.began)}`}`).join(", "),
    );
  }
  if (target.deletes.length > 0) {
    lines.push(
      `  ${verb("delete", "deleted")} ${target.deletes.length} preserved file${target.deletes.length === 1 ? "" : "s"}, ${formatBytes(target.bytes)}:`,
    );
    for (const file of target.deletes) {
      const whose = file.why === "closed" ? `run ${file.run}` : file.why === "restored" ? `restored run ${file.run}` : "scratch";
      lines.push(`    ${escapeControl(file.name)} ${c.dim(`(${formatCount(file.bytes)} bytes; ${escapeControl(whose)})`)}`);
    }
  }
  for (const kept of target.kept) {
    const paint = kept.why === "restore-needs" ? c.yellow : c.dim;
    lines.push(
      `  ${paint(`kept ${escapeControl(kept.name)}: ${KEPT_WORDS[kept.why] ?? kept.why}`)} ${c.dim(`(${escapeControl(kept.detail)})`)}`,
    );
  }
  if (target.closes.length === 0 && target.deletes.length === 0 && target.kept.length === 0) lines.push("  nothing preserved here");
  lines.push(c.dim("  the journals stay: they are the record of what was done (and of any offsets a salvage recorded as lost)"));
  return lines.join("\n");
}

function lossText(clearing: LossClearing, apply: boolean): string {
  const c = colors(colorEnabled(process.stdout));
  const lines = [`${c.bold(escapeControl(clearing.dir))}`];
  if (clearing.losses.length === 0) {
    lines.push("  no salvage recorded offsets of it as lost (or every such record was restored or cleared)");
    return lines.join("\n");
  }
  for (const loss of clearing.losses) {
    const range = loss.range;
    const words = lostOffsetsWords({
      firstOffset: range.firstOffset === null ? null : BigInt(range.firstOffset),
      lastOffset: range.lastOffset === null ? null : BigInt(range.lastOffset),
      messages: range.messages,
      bytes: range.bytes,
    });
    lines.push(
      `  ${apply ? "cleared" : "would clear"}: ${words} of segment ${range.segment}, recorded lost by the salvage ${escapeControl(loss.time === null ? loss.run : `of ${loss.time}`)}` +
        ` (${escapeControl(loss.journal)} line ${loss.line})`,
    );
  }
  lines.push(
    c.dim(
      apply
        ? "  a scan no longer reports them; the journal keeps the salvage's lines and the clearing"
        : "  the offsets stay lost either way: clearing only stops the scan from reporting them",
    ),
  );
  return lines.join("\n");
}

/** The preserve dirs below each path (once each, in the order found); a path that is not a directory is a usage error. */
async function forgettableTargets(paths: readonly string[]): Promise<string[]> {
  const targets: string[] = [];
  for (const given of paths) {
    let info;
    try {
      info = await stat(given);
    } catch (error) {
      throw new OperationalError(`cannot forget in ${given}: stat failed (${describeCause(error)}); nothing was changed`);
    }
    if (!info.isDirectory()) {
      throw new UsageError(`${given} is not a directory: forget takes a partition dir, a metadata dir, its .segscan dir, or a data dir`);
    }
    for (const dir of await findForgettable(given)) if (!targets.includes(dir)) targets.push(dir);
  }
  return targets;
}

/**
 * `forget <path...>`: each path is a partition dir, a node's `metadata/`,
 * their `.segscan` dir, or a directory above them (every preserve dir below
 * it, as restore finds journals). Exit: 0 (dry run, or nothing to do), 1
 * (applied), 4 OR-ed when copies are kept because a restore still needs them,
 * 8 when a target could not be handled (the others still are).
 */
export async function forgetCommand(paths: string[], flags: ForgetFlags): Promise<number> {
  const targets = await forgettableTargets(paths);
  if (targets.length === 0) {
    if (flags.json) await out(`${stringifyJson({ targets: [] })}\n`);
    else
      await out(
        escapeControlKeepingLines(`nothing preserved: no <dir>.segscan beside ${paths.map((p) => resolve(p)).join(", ")} nor below\n`),
      );
    return EXIT.CLEAN;
  }
  const apply = flags.apply === true;
  let olderThanMs: number | undefined;
  try {
    olderThanMs = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan);
  } catch (error) {
    throw new UsageError(`--older-than ${flags.olderThan}: ${(error as Error).message}`);
  }
  const command = shellQuote([
    "segscan",
    "forget",
    ...paths,
    ...(flags.lostOffsets ? ["--lost-offsets"] : []),
    ...(flags.olderThan === undefined ? [] : ["--older-than", flags.olderThan]),
    "--apply",
  ]);
  let code: number = EXIT.CLEAN;
  const done: (ForgetTarget | LossClearing)[] = [];
  const options = { command, ...(olderThanMs === undefined ? {} : { olderThanMs }) };
  await withCancellation(async (signal) => {
    for (const dir of targets) {
      signal.throwIfAborted();
      try {
        if (flags.lostOffsets) {
          const clearing = await clearLostOffsets(dir, { ...options, apply });
          if (apply && clearing.losses.length > 0) code |= EXIT.REPAIRED;
          done.push(clearing);
        } else {
          const target = apply ? await forget(dir, options) : await planForget(dir, options);
          if (apply && (target.deletes.length > 0 || target.closes.length > 0)) code |= EXIT.REPAIRED;
          if (target.kept.some((kept) => kept.why === "restore-needs")) code |= EXIT.PROBLEMS;
          done.push(target);
        }
      } catch (error) {
        if (!(error instanceof RepairError) || targets.length === 1) throw error;
        warn(`${dir}: ${error.name}: ${error.message}`);
        code |= EXIT.OPERATIONAL;
      }
    }
  });
  if (flags.json) {
    await out(`${stringifyJson({ targets: done })}\n`);
    return code;
  }
  const blocks = done.map((item) => ("losses" in item ? lossText(item, apply) : targetText(item, apply)));
  const anything = done.some((item) => ("losses" in item ? item.losses.length > 0 : item.deletes.length > 0 || item.closes.length > 0));
  if (!apply && anything)
    blocks.push(colors(colorEnabled(process.stdout)).dim(`dry run: nothing was changed; to carry it out: ${escapeControl(command)}`));
  await out(`${blocks.join("\n\n")}\n`);
  return code;
}
