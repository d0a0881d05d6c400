/**
 * docs/node.md N4, N7: the offset-file repairs, through the repair machinery
 * of docs/repair.md §6.2 (preserve dir `<p>.segscan/`, journal, restore):
 *
 * - `OffsetCorrupt`: the file is copied into the preserve dir as evidence and
 *   left in place (the server's next boot unlinks it). Always planned: nothing
 *   in the partition dir changes.
 * - With `clampOffsets` only (it changes what a consumer reads next):
 *   `OffsetAheadOfHead` → rewrite the record to H; `OffsetChecksumTorn` →
 *   rewrite the 16-byte record with the same offset; `OffsetOnEmptyPartition`
 *   → move the file into the preserve dir.
 *
 * A rewrite preserves the old file first (copied, read back, fsynced), journals
 * a `replace-index` intent naming the offset file by its path under the
 * partition dir (restore puts the preserved bytes back by staging + rename),
 * writes `<file>.staging`, fsyncs it, renames it over the file and fsyncs the
 * offsets dir. A move journals a `move-aside` intent, renames, and fsyncs both
 * dirs. Never touched: `purge.gen`, a superblock, the snapshot.
 */
import * as path from "node:path";
import { createEngine } from "../../engine/index.js";
import type { Engine } from "../../engine/types.js";
import { StalePlanError } from "../../repair/errors.js";
import { DEFAULT_CHUNK_BYTES, freeName, hex64, newRunId, preserveRange, withFile, writeExactly } from "../../repair/files.js";
import { type RepairFs, nodeRepairFs } from "../../repair/fs-layer.js";
import { JOURNAL_NAME, JournalWriter } from "../../repair/journal.js";
import { type HeldLock, acquireLock } from "../../repair/lock.js";
import { preserveDirOf } from "../../repair/plan.js";
import type { NodeReport } from "../../domain/node.js";
import { encodeOffsetRecord } from "../partition-dir.js";

export type OffsetRepairKind = "evidence-copy" | "clamp-to-head" | "complete-record" | "move-aside";

export interface OffsetRepairStep {
  kind: OffsetRepairKind;
  partitionDir: string;
  preserveDir: string;
  /** The offset file. */
  path: string;
  /** Its path under the partition dir (`offsets/consumers/7`), as the journal names it. */
  name: string;
  consumerKind: "consumer" | "group";
  consumerId: number;
  /** Size and stored offset the scan saw (the apply refuses a file that changed). */
  fromSize: number;
  fromOffset: bigint | null;
  /** The offset the rewrite stores (clamp: H; complete: the same offset). */
  toOffset: bigint | null;
  /** The finding code it answers. */
  code: string;
}

export interface OffsetRepairPlan {
  steps: OffsetRepairStep[];
  /** Findings a rewrite would fix but `--clamp-offsets` was not given for. */
  optIn: { path: string; code: string }[];
  /** Findings on a partition that is itself refused (fenced chain, unreadable superblock): left for the operator. */
  heldBack: { path: string; code: string }[];
}

const STEP_FOR: Record<string, OffsetRepairKind> = {
  OffsetCorrupt: "evidence-copy",
  OffsetAheadOfHead: "clamp-to-head",
  OffsetChecksumTorn: "complete-record",
  OffsetOnEmptyPartition: "move-aside",
};

/** The offset repairs a node report asks for (docs/node.md N4). */
export function planOffsetRepairs(node: NodeReport, options: { clampOffsets: boolean }): OffsetRepairPlan {
  const plan: OffsetRepairPlan = { steps: [], optIn: [], heldBack: [] };
  for (const partition of node.partitions) {
    for (const offset of partition.offsets) {
      // One change per file: an evidence copy, else a rewrite (a torn checksum and a stale cursor share one rewrite to H).
      const codes = offset.findings.map((f) => f.code).filter((code) => code in STEP_FOR);
      const code = codes.includes("OffsetCorrupt")
        ? "OffsetCorrupt"
        : (["OffsetOnEmptyPartition", "OffsetAheadOfHead", "OffsetChecksumTorn"].find((c) => codes.includes(c)) ?? null);
      if (code === null) continue;
      const kind = STEP_FOR[code]!;
      if (kind !== "evidence-copy" && !options.clampOffsets) {
        plan.optIn.push({ path: offset.path, code });
        continue;
      }
      // A partition whose segments are refused as a chain (the server would fence them) or whose
      // superblock is unreadable is evidence: its head is not settled, so no cursor is rewritten.
      if (
        kind !== "evidence-copy" &&
        (partition.head.quarantined || partition.superblock?.state === "unreadable" || partition.superblock?.state === "undecodable")
      ) {
        plan.heldBack.push({ path: offset.path, code });
        continue;
      }
      plan.steps.push({
        kind,
        partitionDir: partition.path,
        preserveDir: preserveDirOf(partition.path),
        path: offset.path,
        name: path.relative(partition.path, offset.path).split(path.sep).join("/"),
        consumerKind: offset.kind,
        consumerId: offset.id,
        fromSize: offset.size ?? 0,
        fromOffset: offset.offset,
        toOffset: kind === "clamp-to-head" ? offset.head : kind === "complete-record" ? offset.offset : null,
        code,
      });
    }
  }
  return plan;
}

export function formatOffsetPlan(plan: OffsetRepairPlan): string {
  const lines: string[] = [];
  for (const step of plan.steps) {
    const who = `${step.consumerKind} ${step.consumerId}`;
    switch (step.kind) {
      case "evidence-copy":
        lines.push(
          `offsets: copy ${step.path} (${who}, checksum fails) into ${step.preserveDir} as evidence; the file stays (the server unlinks it at boot)`,
        );
        break;
      case "clamp-to-head":
        lines.push(
          `offsets: rewrite ${step.path} (${who}) from ${step.fromOffset} to the head ${step.toOffset}: CHANGES WHAT THIS CONSUMER READS NEXT (it resumes at ${step.toOffset! + 1n}, re-reading the re-minted offsets); the old file is preserved first`,
        );
        break;
      case "complete-record":
        lines.push(
          `offsets: rewrite ${step.path} (${who}) as a whole 16-byte record with the same offset ${step.fromOffset} (its checksum was torn); the old file is preserved first`,
        );
        break;
      case "move-aside":
        lines.push(
          `offsets: move ${step.path} (${who}, offset ${step.fromOffset} on an empty partition) into ${step.preserveDir}: CHANGES WHAT THIS CONSUMER READS NEXT (it starts at the first new message instead of skipping it)`,
        );
        break;
    }
  }
  for (const item of plan.optIn)
    lines.push(
      `offsets: ${item.code} at ${item.path} left alone (repair --clamp-offsets rewrites it; it changes what a consumer reads next)`,
    );
  for (const item of plan.heldBack)
    lines.push(`offsets: ${item.code} at ${item.path} left alone (its partition is refused or tombstoned: the head is not settled)`);
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

export interface OffsetRepairOptions {
  fs?: RepairFs;
  engine?: Engine;
  chunkBytes?: number;
  /** What the lock file records as the holder's command (default: this process's argv). */
  command?: string;
}

export interface AppliedOffsetStep {
  kind: OffsetRepairKind;
  path: string;
  /** The preserved copy (evidence, old record or the moved file) inside the preserve dir. */
  preserved: string;
  journalPath: string;
}

/** Reads a small file whole through the repair layer (null: absent). */
async function readWhole(fs: RepairFs, filePath: string): Promise<Uint8Array | null> {
  const stat = await fs.stat(filePath);
  if (stat === null) return null;
  const bytes = new Uint8Array(stat.size);
  await withFile(fs, filePath, "r", async (file) => {
    for (let at = 0; at < bytes.length; ) {
      const count = await file.read(bytes, at, bytes.length - at, at);
      if (count === 0) break;
      at += count;
    }
  });
  return bytes;
}

/**
 * Applies the steps, partition by partition, each partition's steps under one
 * journal run in its preserve dir. Every file is re-read first; a file whose
 * size or stored offset differs from the plan is refused (StalePlanError) and
 * nothing of that step is changed.
 */
export async function applyOffsetRepairs(plan: OffsetRepairPlan, options: OffsetRepairOptions = {}): Promise<AppliedOffsetStep[]> {
  const fs = options.fs ?? nodeRepairFs;
  const engine = options.engine ?? (await createEngine());
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  // One run at a time per partition (docs/repair.md §6.2): every lock before anything is read or written.
  const locks: HeldLock[] = [];
  try {
    for (const preserveDir of [...new Set(plan.steps.map((step) => step.preserveDir))].sort()) {
      const partitionDir = plan.steps.find((step) => step.preserveDir === preserveDir)!.partitionDir;
      locks.push(await acquireLock(preserveDir, `repair the offsets of ${partitionDir}`, options.command ?? process.argv.join(" ")));
    }
    return await applyLocked(plan, fs, engine, chunkBytes);
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

async function applyLocked(plan: OffsetRepairPlan, fs: RepairFs, engine: Engine, chunkBytes: number): Promise<AppliedOffsetStep[]> {
  const applied: AppliedOffsetStep[] = [];
  // Stale check of every step before anything is written.
  for (const step of plan.steps) {
    const bytes = await readWhole(fs, step.path);
    const offset = bytes !== null && bytes.length >= 8 ? new DataView(bytes.buffer).getBigUint64(0, true) : null;
    if (bytes === null || bytes.length !== step.fromSize || offset !== step.fromOffset) {
      throw new StalePlanError(
        `refusing a stale plan: ${step.path} ${bytes === null ? "is gone" : `holds ${bytes.length} bytes (offset ${offset ?? "none"})`}, the plan says ${step.fromSize} bytes (offset ${step.fromOffset ?? "none"}); nothing was changed; scan and plan again`,
        { path: step.path },
        `size ${bytes?.length ?? "absent"}`,
      );
    }
  }
  const byPartition = new Map<string, OffsetRepairStep[]>();
  for (const step of plan.steps) byPartition.set(step.partitionDir, [...(byPartition.get(step.partitionDir) ?? []), step]);
  for (const [partitionDir, steps] of byPartition) {
    const preserveDir = preserveDirOf(partitionDir);
    const run = newRunId();
    await fs.mkdir(preserveDir);
    await fs.syncDir(path.dirname(preserveDir));
    const journal = await JournalWriter.open(fs, preserveDir, run);
    const journalPath = path.join(preserveDir, JOURNAL_NAME);
    try {
      await journal.append({
        kind: "begin",
        time: new Date().toISOString(),
        partition: partitionDir,
        plan: { offsetSteps: steps.length },
      });
      for (const step of steps) {
        const base = step.name.replaceAll("/", "-");
        if (step.kind === "move-aside") {
          const to = await freeName(fs, preserveDir, base);
          const seq = await journal.append({
            kind: "intent",
            op: { type: "move-aside", kind: "offset-on-empty-partition", name: step.name, to, size: step.fromSize },
          });
          await fs.rename(step.path, path.join(preserveDir, to));
          await fs.syncDir(preserveDir);
          await fs.syncDir(path.dirname(step.path));
          await journal.append({ kind: "done" }, seq);
          applied.push({ kind: step.kind, path: step.path, preserved: to, journalPath });
          continue;
        }
        const copy = await preserveRange(
          fs,
          engine,
          step.path,
          0,
          step.fromSize,
          preserveDir,
          `${base}.${step.kind === "evidence-copy" ? "evidence" : "replaced"}`,
          chunkBytes,
        );
        await journal.append({ kind: "preserved", source: step.name, from: 0, bytes: copy.bytes, xxh3: copy.xxh3, file: copy.file });
        if (step.kind === "evidence-copy") {
          applied.push({ kind: step.kind, path: step.path, preserved: copy.file, journalPath });
          continue;
        }
        const record = encodeOffsetRecord(step.toOffset!, (bytes) => engine.xxh3_64(bytes));
        const staging = `${step.path}.staging`;
        const seq = await journal.append({
          kind: "intent",
          op: {
            type: "replace-index",
            segment: "0",
            index: step.name,
            staging: `${step.name}.staging`,
            old: { size: copy.bytes, xxh3: copy.xxh3, file: copy.file },
            new: { size: record.length, xxh3: hex64(engine.xxh3_64(record)) },
          },
        });
        await withFile(fs, staging, "w", async (file) => {
          await writeExactly(file, record, record.length, 0);
          await file.sync();
        });
        await fs.rename(staging, step.path);
        await fs.syncDir(path.dirname(step.path));
        await journal.append({ kind: "done" }, seq);
        applied.push({ kind: step.kind, path: step.path, preserved: copy.file, journalPath });
      }
      await journal.append({ kind: "end", time: new Date().toISOString() });
    } finally {
      await journal.close();
    }
  }
  return applied;
}
