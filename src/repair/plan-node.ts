/**
 * docs/node.md N7: the node-level steps of a repair plan, from a node report.
 *
 * - The metadata WAL's proven torn tail is cut (a `metadata` target), only
 *   when the WAL's worst finding is `repairable` and one of them is
 *   `WalTornTail`: any refused WAL finding (interior damage, a gap, committed
 *   ops the WAL no longer proves on a solo node, docs/node.md N1.1) keeps the
 *   whole WAL as evidence.
 * - Offset files (docs/node.md N4), in the partition's target:
 *   `OffsetCorrupt` → an evidence copy (always: nothing in the partition
 *   changes); with `clampOffsets` only (it changes what a consumer reads next):
 *   `OffsetAheadOfHead` → rewrite to H, `OffsetChecksumTorn` → rewrite the
 *   record with the same offset, `OffsetOnEmptyPartition` → move the file aside.
 *   One change per file. A partition whose head is not settled (a chain refusal
 *   the server would fence, an unreadable superblock) gets no rewrite.
 * - A step never targets a symbolic link: scan reads through a link as the
 *   server does, but a rename or staging + rename would replace the link, not
 *   its target. Such findings are left alone, with the reason.
 */
import * as path from "node:path";
import { OFFSET_RECORD_BYTES } from "../format/partition-files.js";
import type { BootForecastEntry, NodeReport, OffsetReport } from "../domain/node.js";
import { worstSeverity } from "../domain/node.js";
import type { RepairFs } from "./fs-layer.js";
import type { ForecastEffect, LeftAlone, PlanTarget, RepairPlan } from "./schema.js";
import type { ConsumerRef, PlanStep } from "./steps/index.js";
import { OFFSET_EVIDENCE_MAX_BYTES } from "./limits.js";

const STEP_FOR: Record<string, "evidence-copy" | "clamp" | "complete" | "move-aside"> = {
  OffsetCorrupt: "evidence-copy",
  OffsetAheadOfHead: "clamp",
  OffsetChecksumTorn: "complete",
  OffsetOnEmptyPartition: "move-aside",
};

/** The offset finding that decides a file's one change: evidence first, then the rewrites. */
const CHANGE_ORDER = ["OffsetCorrupt", "OffsetOnEmptyPartition", "OffsetAheadOfHead", "OffsetChecksumTorn"];

export interface NodePlanOptions {
  clampOffsets: boolean;
  fs: RepairFs;
  preserveDirOf: (dir: string) => string;
}

/**
 * Adds the node's steps to `targets` (offset steps join their partition's
 * target, created when the partition has no segment steps; the metadata
 * target comes first) and says what is left alone and what the plan does to
 * the boot forecast.
 */
export async function planNodeTargets(
  node: NodeReport,
  targets: PlanTarget[],
  options: NodePlanOptions,
): Promise<{ leftAlone: LeftAlone[]; forecast: RepairPlan["forecast"] }> {
  const leftAlone: LeftAlone[] = [];
  const metadata = await planWal(node, options, leftAlone);
  if (metadata !== null) targets.unshift(metadata);
  await planOffsets(node, targets, options, leftAlone);
  return { leftAlone, forecast: forecastAfter(node.bootForecast, targets) };
}

async function isSymlink(fs: RepairFs, file: string): Promise<boolean> {
  return (await fs.stat(file))?.isSymbolicLink === true;
}

async function planWal(node: NodeReport, options: NodePlanOptions, leftAlone: LeftAlone[]): Promise<PlanTarget | null> {
  const wal = node.metadata.wal;
  if (wal === null || wal.residue === null) return null;
  const torn = wal.findings.find((f) => f.code === "WalTornTail");
  if (torn === undefined) return null;
  if (worstSeverity(wal.findings.map((f) => f.severity)) !== "repairable") {
    leftAlone.push({
      path: wal.path,
      code: "WalTornTail",
      why: "not-repairable",
      message: "the WAL has a refused finding beside its torn tail: the whole WAL is kept as evidence and nothing is cut",
    });
    return null;
  }
  if (await isSymlink(options.fs, wal.path)) {
    leftAlone.push({
      path: wal.path,
      code: "WalTornTail",
      why: "symlink",
      message: `${wal.path} is a symbolic link: repair never cuts through a link (cut the file it points to by hand, or point segscan at the real node root)`,
    });
    return null;
  }
  const metadataDir = path.dirname(wal.path);
  const vsr = node.metadata.superblock?.vsr ?? null;
  const snapshot = node.metadata.snapshot;
  return {
    kind: "metadata",
    path: metadataDir,
    singleSegment: false,
    dir: metadataDir,
    preserveDir: options.preserveDirOf(metadataDir),
    fingerprint: null,
    wal: {
      snapshotOp: (snapshot?.sequenceNumber ?? 0n).toString(),
      snapshotOpKnown: !(snapshot?.present ?? false) || snapshot?.sequenceNumber !== null,
      superblockCluster: vsr === null ? null : vsr.cluster.toString(),
      commitMax: vsr === null ? null : vsr.commitMax.toString(),
      replicaCount: vsr?.replicaCount ?? null,
    },
    steps: [
      {
        kind: "truncate",
        role: "wal",
        file: wal.path,
        segment: null,
        reason: "wal-torn-tail",
        fromSize: wal.size,
        toSize: wal.residue.damagePosition,
        residue: { bytes: wal.size - wal.residue.damagePosition, allZero: false },
        observed: null,
      },
    ],
  };
}

function consumerOf(offset: OffsetReport): ConsumerRef {
  return { kind: offset.kind, id: offset.id, storedOffset: offset.offset === null ? null : offset.offset.toString() };
}

async function planOffsets(node: NodeReport, targets: PlanTarget[], options: NodePlanOptions, leftAlone: LeftAlone[]): Promise<void> {
  for (const partition of node.partitions) {
    const unsettled =
      partition.head.quarantined || partition.superblock?.state === "unreadable" || partition.superblock?.state === "undecodable";
    const steps: PlanStep[] = [];
    for (const offset of partition.offsets) {
      const codes = offset.findings.map((f) => f.code);
      const code = CHANGE_ORDER.find((c) => codes.includes(c));
      if (code === undefined) continue;
      const change = STEP_FOR[code]!;
      const left = (why: LeftAlone["why"], message: string): void => {
        leftAlone.push({ path: offset.path, code, why, message });
      };
      if (change !== "evidence-copy" && !options.clampOffsets) {
        left("opt-in", "repair --clamp-offsets rewrites it; it changes what a consumer reads next");
        continue;
      }
      if (change !== "evidence-copy" && unsettled) {
        left("held-back", "its partition is refused or tombstoned: the head is not settled");
        continue;
      }
      if (await isSymlink(options.fs, offset.path)) {
        left("symlink", "it is a symbolic link: repair never copies, rewrites or moves through a link");
        continue;
      }
      steps.push(offsetStep(change, offset));
    }
    if (steps.length === 0) continue;
    let target = targets.find((t) => t.kind === "partition" && !t.singleSegment && path.resolve(t.dir) === path.resolve(partition.path));
    if (target === undefined) {
      target = {
        kind: "partition",
        path: partition.path,
        singleSegment: false,
        dir: partition.path,
        preserveDir: options.preserveDirOf(partition.path),
        fingerprint: null,
        wal: null,
        steps: [],
      };
      targets.push(target);
    }
    target.steps.push(...steps);
  }
}

function offsetStep(change: "evidence-copy" | "clamp" | "complete" | "move-aside", offset: OffsetReport): PlanStep {
  const size = offset.size ?? 0;
  const consumer = consumerOf(offset);
  switch (change) {
    case "evidence-copy":
      return {
        kind: "evidence-copy",
        role: "offset",
        file: offset.path,
        reason: "offset-corrupt",
        size,
        copyBytes: Math.min(size, OFFSET_EVIDENCE_MAX_BYTES),
        consumer,
        observed: null,
      };
    case "move-aside":
      return { kind: "move-aside", role: "offset", file: offset.path, reason: "offset-on-empty-partition", size, consumer, observed: null };
    case "clamp":
    case "complete": {
      const to = change === "clamp" ? offset.head : offset.offset;
      if (to === null) throw new Error(`offset rewrite of ${offset.path} without a target offset`);
      return {
        kind: "replace",
        role: "offset",
        file: offset.path,
        segment: null,
        reason: change === "clamp" ? "offset-ahead-of-head" : "offset-checksum-torn",
        fromSize: size,
        content: { type: "offset-record", offset: to.toString() },
        consumer,
        observed: null,
      };
    }
  }
}

/** docs/node.md N8: the forecast effects the plan's steps remove, and those that remain. */
function forecastAfter(forecast: readonly BootForecastEntry[], targets: readonly PlanTarget[]): RepairPlan["forecast"] {
  if (forecast.length === 0) return { removes: [], remains: [] };
  const steps = targets.flatMap((target) => target.steps.map((step) => ({ target, step })));
  const walCut = steps.find(({ step }) => step.kind === "truncate" && step.role === "wal")?.step.file ?? null;
  const rewritten = new Set(
    steps.filter(({ step }) => step.role === "offset" && step.kind !== "evidence-copy").map(({ step }) => step.file),
  );
  const swept = new Set(
    targets.filter((target) => target.steps.some((step) => step.role === "sweep")).map((target) => path.resolve(target.path)),
  );
  const removes = (effect: BootForecastEntry): boolean =>
    // A cut is planned only when the torn tail is the WAL's one problem, so it also removes Iggy's refusal of those bytes.
    ((effect.effect === "truncate-wal-tail" || effect.effect === "refuse-boot") && walCut !== null && effect.path === walCut) ||
    (effect.effect === "clamp-offset" && rewritten.has(effect.path)) ||
    (effect.effect === "sweep-scratch" && swept.has(path.resolve(effect.path)));
  const plain = (effect: BootForecastEntry): ForecastEffect => ({ ...effect });
  return { removes: forecast.filter(removes).map(plain), remains: forecast.filter((e) => !removes(e)).map(plain) };
}

/** The offset record size, re-exported for the preflight's bounded read. */
export { OFFSET_RECORD_BYTES };
