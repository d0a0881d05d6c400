/** The command actions. Each returns its exit status (see ./exit.ts). */
import { mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { EngineKind } from "../engine/types.js";
import {
  DEMO_SCENARIOS, generateDataDir, listScenarios, SCENARIOS, type GenerateOptions, type GeneratedDataDir, type SizeProfileName,
} from "../gen/index.js";
import { applyRepair, formatPlan, planRepair, planToJson, restore, type ApplyResult, type RepairPlan } from "../repair/index.js";
import { colors, formatBytes, formatCount, formatReport, formatSummary, refusalLine } from "../report/format.js";
import { stringifyJson, toJsonReport } from "../report/json.js";
import type { ScanReport } from "../report/types.js";
import { colorEnabled, out, resolveEngine, warn, withCancellation } from "./context.js";
import { dumpIndex, dumpLog, isIndexPath } from "./dump.js";
import { EXIT, OperationalError, UsageError, scanExitCode } from "./exit.js";
import { engineWasExplicit, runScan, type ScanFlags } from "./scan-flags.js";
import { genNode, nodeFaultListText, nodeFaultNames } from "../node/gen/cli.js";
import { applyNodeRepair, formatWalCutPlan, nodeExitBitsAfterCut, nodeRepairPlan } from "../node/repair/cli.js";

const useColor = (): boolean => colorEnabled(process.stdout);

// ---------------------------------------------------------------------------
// scan

function scanHints(report: ScanReport, paths: readonly string[]): string {
  const c = colors(useColor());
  const lines: string[] = [];
  const quoted = paths.length > 2
    ? "<same paths>"
    : paths.map((path) => (/[\s'"$]/.test(path) ? `'${path.replace(/'/g, "'\\''")}'` : path)).join(" ");
  if (report.summary.repairable > 0) {
    lines.push(`${c.yellow("→")} ${report.summary.repairable} partition(s) can be repaired: ${c.bold(`segscan repair ${quoted}`)} shows the plan, ` +
      `add ${c.bold("--apply")} to carry it out (cut bytes are preserved; ${c.bold("segscan restore <partition>")} undoes it).`);
  }
  if (report.summary.refused > 0) {
    lines.push(`${c.red("→")} refused partitions are left exactly as they are: not served, every byte kept as evidence.`);
  }
  if (report.summary.failed > 0) {
    lines.push(`${c.magenta("→")} failed partitions hit a read error: nothing was concluded or changed; fix the storage and scan again.`);
  }
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

export async function scanCommand(paths: string[], flags: ScanFlags, command: Command): Promise<number> {
  const report = await withCancellation((signal) => runScan(paths, flags, engineWasExplicit(command), signal));
  if (report.partitions.length === 0 && report.node === undefined) warn(`no partitions found under ${paths.join(", ")} (no directory holds a .log file)`);
  if (flags.json) {
    await out(stringifyJson(toJsonReport(report)) + "\n");
  } else {
    await out(formatReport(report, { color: useColor() }) + scanHints(report, paths));
  }
  return scanExitCode(report);
}

// ---------------------------------------------------------------------------
// repair

export interface RepairFlags extends ScanFlags {
  apply?: boolean;
}

function problemsLeft(report: ScanReport): string {
  const c = colors(useColor());
  const lines: string[] = [];
  for (const partition of report.partitions) {
    if (partition.refusal !== null && partition.verdict === "refused") {
      lines.push(`${partition.path}: ${c.red("refused")}, action ${partition.action}`);
      lines.push(`  ${refusalLine(partition.refusal, c)}`);
    } else if (partition.error !== null) {
      lines.push(`${partition.path}: ${c.magenta("failed")}, action ${partition.action}`);
      lines.push(`  ${partition.error.code}: ${partition.error.message}`);
    }
  }
  return lines.length === 0 ? "" : `\nnot repairable here (left untouched):\n${lines.join("\n")}\n`;
}

function appliedText(result: ApplyResult): string {
  const lines: string[] = [];
  for (const partition of result.partitions) {
    lines.push(`repaired ${partition.path} (run ${partition.run}; journal ${partition.journalPath})`);
    for (const t of partition.truncations) {
      const kept = t.residue.file === null
        ? `${formatCount(t.fromSize - t.toSize)} zero bytes recorded by length`
        : `${formatCount(t.fromSize - t.toSize)} bytes preserved in ${t.residue.file}`;
      lines.push(`  cut ${t.logPath}: ${formatCount(t.fromSize)} → ${formatCount(t.toSize)} bytes (${kept})`);
    }
    for (const r of partition.indexReplacements) {
      lines.push(`  wrote ${r.indexPath}: ${formatCount(r.newSize)} bytes` + (r.oldFile ? ` (old index kept as ${r.oldFile})` : ""));
    }
    for (const s of partition.swept) lines.push(`  moved ${s.from} → ${s.to}`);
  }
  return lines.join("\n") + "\n";
}

function jsonApplied(result: ApplyResult): unknown {
  return JSON.parse(stringifyJson(result));
}

export async function repairCommand(paths: string[], flags: RepairFlags, command: Command): Promise<number> {
  const explicit = engineWasExplicit(command);
  return withCancellation(async (signal) => {
    const report = await runScan(paths, flags, explicit, signal);
    const plan: RepairPlan = planRepair(report);
    const walCut = nodeRepairPlan(report);
    const color = useColor();
    const c = colors(color);
    if (walCut !== null && !flags.json) await out(formatWalCutPlan(walCut));
    if (walCut !== null && flags.apply) {
      const applied = await applyNodeRepair(walCut, await resolveEngine(flags.engine, explicit));
      if (!flags.json) await out(applied.text);
      if (plan.partitions.length === 0) return EXIT.REPAIRED | scanExitCode({ ...report, node: undefined }) | nodeExitBitsAfterCut(report);
    }
    if (!flags.apply || plan.partitions.length === 0) {
      if (flags.json) {
        await out(stringifyJson({ report: toJsonReport(report), plan: planToJson(plan), applied: null, after: null }) + "\n");
      } else {
        let text = formatPlan(plan) + problemsLeft(report) + "\n" + formatSummary(report, { color }) + "\n";
        if (plan.partitions.length > 0) text += c.dim("dry run: nothing was changed; add --apply to carry out the plan") + "\n";
        await out(text);
      }
      return scanExitCode(report);
    }

    if (!flags.json) await out(formatPlan(plan) + "\napplying…\n");
    const engine = await resolveEngine(flags.engine, explicit);
    let result: ApplyResult;
    try {
      result = await applyRepair(plan, { signal, engine });
    } catch (error) {
      if ((error as Error).name === "AbortError") {
        const cancelled = new Error("cancelled while applying: every completed step is in the journal; run `segscan repair --apply` " +
          "again to finish, or `segscan restore <partition>` to undo");
        cancelled.name = "AbortError";
        throw cancelled;
      }
      throw error;
    }
    // Prove the result: scan every repaired partition again with the same options.
    const after = await runScan(result.partitions.map((partition) => partition.path), { ...flags, progress: false }, explicit, signal);
    let code: number = result.partitions.length > 0 ? EXIT.REPAIRED : EXIT.CLEAN;
    if (after.partitions.some((partition) => partition.verdict !== "clean")) code |= EXIT.PROBLEMS;
    if (report.partitions.some((partition) => partition.verdict === "refused")) code |= EXIT.PROBLEMS;
    if (report.partitions.some((partition) => partition.verdict === "failed")) code |= EXIT.OPERATIONAL;
    if (after.partitions.some((partition) => partition.verdict === "failed")) code |= EXIT.OPERATIONAL;

    if (flags.json) {
      await out(stringifyJson({
        report: toJsonReport(report), plan: planToJson(plan), applied: jsonApplied(result), after: toJsonReport(after),
      }) + "\n");
    } else {
      const cleanNow = after.partitions.filter((partition) => partition.verdict === "clean").length;
      const verdict = cleanNow === after.partitions.length
        ? c.green(`re-scan: all ${after.partitions.length} repaired partition(s) are clean now`)
        : c.red(`re-scan: ${after.partitions.length - cleanNow} of ${after.partitions.length} repaired partition(s) are still not clean`);
      await out(appliedText(result) + problemsLeft(report) + "\n" + verdict + "\n");
    }
    return code;
  });
}

// ---------------------------------------------------------------------------
// restore

export async function restoreCommand(dir: string, flags: { json?: boolean }): Promise<number> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) throw new UsageError(`${dir} is not a partition directory`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new OperationalError(`cannot restore ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const engine = await resolveEngine("wasm", false);
  const result = await restore(dir, { engine });
  if (flags.json) {
    await out(stringifyJson(result) + "\n");
    return EXIT.CLEAN;
  }
  if (!result.restored) {
    await out(`nothing to restore: ${resolve(dir)} has no repair journal (${resolve(dir)}.segscan/journal.jsonl)\n`);
    return EXIT.CLEAN;
  }
  const lines = [`restored ${result.partitionDir}:`, ...result.undone.map((line) => `  ${line}`)];
  if (result.undone.length === 0) lines.push("  (no step had taken effect)");
  lines.push(`journal moved to ${result.restoredJournal}`, `scan it again: segscan scan ${result.partitionDir}`);
  await out(lines.join("\n") + "\n");
  return EXIT.CLEAN;
}

// ---------------------------------------------------------------------------
// dump

export interface DumpFlags {
  messages?: boolean;
  json?: boolean;
  engine: EngineKind;
  window: number;
}

export async function dumpCommand(file: string, flags: DumpFlags, command: Command): Promise<number> {
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    throw new OperationalError(`cannot dump ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!info.isFile()) throw new UsageError(`${file} is not a file: dump takes one .log (or .index) file`);
  const c = colors(useColor() && !flags.json);
  if (isIndexPath(file)) {
    const result = await dumpIndex(file, { json: flags.json ?? false, write: out, color: c });
    return result.trailingBytes > 0 ? EXIT.PROBLEMS : EXIT.CLEAN;
  }
  const engine = await resolveEngine(flags.engine, command.getOptionValueSource("engine") !== "default");
  const result = await withCancellation((signal) => dumpLog(file, {
    messages: flags.messages ?? false, json: flags.json ?? false, engine, windowBytes: flags.window, color: c, write: out, signal,
  }));
  return result.stopped === null && result.verified === result.batches ? EXIT.CLEAN : EXIT.PROBLEMS;
}

// ---------------------------------------------------------------------------
// gen

export interface GenFlags {
  scenario?: string;
  list?: boolean;
  seed: number;
  size: SizeProfileName;
  segments?: number;
  segmentBytes?: number;
  flushBytes?: number;
  topics?: number;
  partitions?: number;
  force?: boolean;
  json?: boolean;
  /** Also write metadata/ (docs/node.md N1–N3): a whole node root. */
  node?: boolean;
  nodeFault?: string;
}

function listText(): string {
  const width = Math.max(...SCENARIOS.map((scenario) => scenario.name.length));
  const lines = ["Fault scenarios (segscan gen <dir> --scenario NAME); each injects one fault into one partition:", ""];
  for (const scenario of SCENARIOS) {
    const e = scenario.expected;
    const expect = e.refusal ? `${e.verdict} ${e.refusal}` : e.verdict;
    const deep = e.deep ? `; --deep: ${e.deep.refusal ?? e.deep.verdict}` : "";
    lines.push(`  ${scenario.name.padEnd(width)}  ${scenario.description}`);
    lines.push(`  ${"".padEnd(width)}  → ${expect}, scan exits ${e.scanExit}${deep}`);
  }
  return lines.join("\n") + "\n";
}

export function describeGenerated(generated: GeneratedDataDir, color: boolean): string {
  const c = colors(color);
  const p = generated.profile;
  const lines = [
    `wrote ${generated.partitions.length} partition(s) × ${p.segmentsPerPartition} segments, ` +
      `${formatCount(generated.messages)} messages, ${formatBytes(generated.logBytes)} of .log to ${generated.dir} (seed ${generated.seed})`,
  ];
  for (const fault of generated.faults) {
    const e = fault.expected;
    lines.push(`  ${c.bold(fault.scenario)} → ${fault.partition}`);
    lines.push(`    ${fault.detail}`);
    lines.push(c.dim(`    expected: ${e.verdict}${e.refusal ? ` (${e.refusal})` : ""}, action ${e.action}, scan exits ${e.scanExit}` +
      (e.deep ? `; with --deep: ${e.deep.verdict}${e.deep.refusal ? ` (${e.deep.refusal})` : ""}` : "")));
  }
  return lines.join("\n") + "\n";
}

export async function genCommand(dir: string | undefined, flags: GenFlags): Promise<number> {
  if (flags.list) {
    await out(flags.json ? stringifyJson(SCENARIOS.map(({ name, description, expected }) => ({ name, description, expected }))) + "\n" : listText() + nodeFaultListText());
    return EXIT.CLEAN;
  }
  if (dir === undefined) throw new UsageError("gen needs a target directory (or --list)");
  if (flags.scenario !== undefined && !listScenarios().some((s) => s.name === flags.scenario)) {
    throw new UsageError(`unknown scenario "${flags.scenario}"; \`segscan gen --list\` shows them`);
  }
  if (flags.nodeFault !== undefined && !nodeFaultNames().includes(flags.nodeFault)) {
    throw new UsageError(`unknown node fault "${flags.nodeFault}"; \`segscan gen --list\` shows them`);
  }
  const options: GenerateOptions = { seed: flags.seed, size: flags.size, force: flags.force ?? false };
  if (flags.scenario !== undefined) options.scenario = flags.scenario;
  if (flags.segments !== undefined) options.segmentsPerPartition = flags.segments;
  if (flags.segmentBytes !== undefined) options.segmentBytes = flags.segmentBytes;
  if (flags.flushBytes !== undefined) options.flushBytes = flags.flushBytes;
  if (flags.topics !== undefined) options.topicsPerStream = flags.topics;
  if (flags.partitions !== undefined) options.partitionsPerTopic = flags.partitions;
  let generated: GeneratedDataDir;
  try {
    generated = await generateDataDir(dir, options);
  } catch (error) {
    const name = (error as Error).name;
    if (name === "GenerateTargetNotEmpty" || error instanceof RangeError) throw new UsageError((error as Error).message);
    throw error;
  }
  const node = flags.node || flags.nodeFault !== undefined ? await genNode(dir, generated.partitions, flags.seed, flags.nodeFault) : null;
  if (flags.json) {
    await out(stringifyJson({
      ...(node ? { node: { snapshotOp: node.node.snapshotOp, walOps: node.node.walOps, fault: node.node.fault?.name ?? null } } : {}),
      dir: generated.dir, seed: generated.seed, profile: generated.profile, logBytes: generated.logBytes,
      messages: generated.messages,
      partitions: generated.partitions.map((partition) => ({
        path: partition.path,
        segments: partition.segments.map((segment) => ({
          startOffset: segment.startOffset, endOffset: segment.endOffset, logPath: segment.logPath, size: segment.size,
          batches: segment.batches.length, indexEntries: segment.indexEntries.length,
        })),
      })),
      faults: generated.faults,
    }) + "\n");
  } else {
    await out(describeGenerated(generated, useColor()) + (node?.text ?? "") + `scan it: segscan scan ${dir}\n`);
  }
  return EXIT.CLEAN;
}

// ---------------------------------------------------------------------------
// demo

export async function demoCommand(flags: { engine: EngineKind; progress: boolean }, command: Command): Promise<number> {
  const color = useColor();
  const c = colors(color);
  const dir = await mkdtemp(join(tmpdir(), "segscan-demo-"));
  const data = join(dir, "data");
  const generated = await generateDataDir(data, { scenarios: DEMO_SCENARIOS, topicsPerStream: 3, partitionsPerTopic: 2 });
  // A node-level finding too (docs/node.md N1): a torn WAL tail Iggy's own boot would refuse to cut.
  const node = await genNode(data, generated.partitions, 1, "wal-torn-tail-stale-copy");
  await out(`${c.bold("segscan demo")}: a sample Iggy data dir with ${generated.faults.length} injected faults\n` +
    describeGenerated(generated, color) + node.text + "\n");
  const scanFlags: ScanFlags = {
    engine: flags.engine, replicas: 1, probeBudget: (await import("../format/constants.js")).PROBE_BUDGET_UNITS,
    window: (await import("../format/constants.js")).DEFAULT_WINDOW_BYTES, concurrency: 1, progress: flags.progress,
  };
  const report = await withCancellation((signal) => runScan([data], scanFlags, engineWasExplicit(command), signal));
  await out(`${c.bold(`$ segscan scan ${data}`)}\n\n${formatReport(report, { color, relativeTo: data })}\n`);
  const plan = planRepair(report);
  await out(`${c.bold(`$ segscan repair ${data}`)}\n\n${formatPlan(plan)}\n`);
  const first = generated.faults[0]?.partition ?? data;
  const tailLog = generated.partitions[0]?.segments.at(-1)?.logPath ?? "";
  await out([
    c.bold("Try it yourself:"),
    `  segscan repair ${data} --apply`,
    c.dim("      carry out the plan; exits 5 = 1 (repaired, clean now) | 4 (a refusal is left as it is)"),
    `  segscan scan ${data}`,
    c.dim("      the repaired partitions scan clean; the refused one is still refused"),
    `  segscan restore ${first}`,
    c.dim("      put every cut byte back from the journal"),
    `  segscan dump ${tailLog} --messages`,
    c.dim("      list batches and messages, kafka-dump-log style"),
    `  rm -r ${dir}`,
    c.dim("      when done"),
  ].join("\n") + "\n");
  return EXIT.CLEAN;
}

// ---------------------------------------------------------------------------
// bench

export async function benchCommand(flags: { json?: boolean; quick?: boolean; scaling?: boolean }): Promise<number> {
  // Compiled at dist/bench/run.js, beside dist/src/cli/main.js. A variable
  // specifier keeps tsc from resolving a module another package part provides.
  const specifier = "../../bench/run.js";
  let mod: { runBench?: (options: { json: boolean; quick?: boolean; scaling?: boolean }) => Promise<unknown> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (error) {
    throw new OperationalError(`the benchmark suite is not built (${(error as Error).message}); run \`npm run build\` first`);
  }
  if (typeof mod.runBench !== "function") throw new OperationalError("bench/run.js does not export runBench");
  await mod.runBench({ json: flags.json ?? false, ...(flags.quick ? { quick: true } : {}), ...(flags.scaling ? { scaling: true } : {}) });
  return EXIT.CLEAN;
}
