/**
 * The scrub's node check (docs/scrub.md §1.1): on a node root, each pass ends
 * by checking the metadata WAL, the snapshot, the superblocks, every partition
 * dir's superblock, offset files and `purge.gen`, and the partition layout, with
 * the node checks `scan` runs (docs/node.md N1–N6), fed the segments' proof
 * this pass made. Beside a running server these files are being written, so
 * a node finding is reported only when it is stable evidence:
 *
 * - **two looks**: a check that finds anything runs again at once; only what
 *   both looks find (same code, same path) is reported (a write caught
 *   halfway, a checkpoint between two files, is gone on the second look);
 * - **settled**: findings about places the server writes as it runs (the WAL's
 *   live tail, a checkpoint's `.tmp`, offsets compared with a head the server
 *   may not have flushed yet) count only when those files were left alone for
 *   the settle time.
 *
 * What is not reported yet is deferred (a `node-deferred` event), judged again
 * by the next pass. Read-only: nothing here writes.
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Engine } from "../engine/types.js";
import type { ScanFs } from "../io/fs.js";
import type { NodeFinding, NodeReport } from "../domain/node.js";
import { type PartitionProof, METADATA_DIR, finishNode, scanNodeMetadata } from "../node/scan.js";
import type { DeferReason, NodeDeferredEvent, NodeItem, NodeSeverity, ScrubFinding } from "./findings.js";

/**
 * A node file the server modified less than this long ago may be mid-write:
 * a WAL entry being appended, a checkpoint writing its `.tmp`, a partition
 * whose acknowledged messages are not all flushed to its segment yet. Findings
 * that depend on such a file (WAL_TAIL_CODES, SCRATCH_CODES, HEAD_CODES) wait
 * until it has settled; the same minute as a just-rolled segment's
 * (SEALED_SETTLE_MS).
 */
export const NODE_SETTLE_MS = 60_000;

/** The WAL's end: a torn or unprovable residue is what an append in progress looks like. */
const WAL_TAIL_CODES: ReadonlySet<string> = new Set(["WalTornTail", "WalUnverifiedResidue"]);
/** A `.tmp` leftover is what a checkpoint or WAL rewrite in progress looks like. */
const SCRATCH_CODES: ReadonlySet<string> = new Set(["WalTmpPresent", "SnapshotTmpPresent", "SuperblockTmpPresent"]);
/**
 * Offsets and the offset frontier compared with the head the segments prove:
 * a running server acknowledges (and serves, and lets consumers commit)
 * messages before it writes them to the segment, so a consumer ahead of the
 * written head is normal while the partition is written to.
 */
const HEAD_CODES: ReadonlySet<string> = new Set(["OffsetAheadOfHead", "OffsetOnEmptyPartition", "OffsetFrontierAhead"]);

export interface NodeCheckContext {
  root: string;
  /** The scrub's read path: every byte is rate-limited and counted. */
  scanFs: ScanFs;
  engine: Engine;
  windowBytes: number;
  signal: AbortSignal | undefined;
  /** Each partition's proof from this pass (what its segments prove, as of when the scrub read them). */
  proofs: readonly PartitionProof[];
  /** Each partition dir's last (active) `.log`. */
  activeLogs: ReadonlyMap<string, string>;
  settleMs: number;
  now: () => Date;
}

export interface NodeCheckResult {
  findings: ScrubFinding[];
  deferred: NodeDeferredEvent[];
  looks: number;
}

interface Candidate {
  item: NodeItem;
  finding: NodeFinding;
  /** The partition dir it belongs to (null: the metadata plane). */
  partition: string | null;
}

/** The node item a finding among `metadata.findings` is about (they belong to no one item's bytes). */
function metadataItem(finding: NodeFinding): NodeItem {
  const name = basename(finding.path);
  if (finding.code.startsWith("Wal") || name.startsWith("journal.wal")) return "wal";
  if (finding.code.startsWith("Snapshot") || name.startsWith("snapshot.bin")) return "snapshot";
  if (finding.code.startsWith("Superblock") || finding.code.startsWith("Checkpoint") || name.startsWith("superblock.")) return "superblock";
  return "layout";
}

/** The node item of a finding among a partition dir's own findings. */
function partitionDirItem(finding: NodeFinding): NodeItem {
  if (finding.code === "OffsetFrontierAhead" || basename(finding.path).startsWith("superblock.")) return "partition-superblock";
  if (finding.code.startsWith("Offset")) return "offsets";
  return "layout";
}

/** Every node finding of the report with its item, in the report's order (docs/node.md N9, `nodeFindings`). */
function candidatesOf(report: NodeReport): Candidate[] {
  const out: Candidate[] = [];
  const add = (item: NodeItem, findings: readonly NodeFinding[], partition: string | null = null): void => {
    for (const finding of findings) if (finding.severity !== "clean") out.push({ item, finding, partition });
  };
  for (const finding of report.metadata.findings) add(metadataItem(finding), [finding]);
  add("snapshot", report.metadata.snapshot?.findings ?? []);
  add("superblock", report.metadata.superblock?.findings ?? []);
  add("wal", report.metadata.wal?.findings ?? []);
  for (const partition of report.partitions) {
    add("partition-superblock", partition.superblock?.findings ?? [], partition.path);
    add("purge-gen", partition.purgeGeneration?.findings ?? [], partition.path);
    for (const offset of partition.offsets) add("offsets", offset.findings, partition.path);
    for (const finding of partition.findings) add(partitionDirItem(finding), [finding], partition.path);
  }
  return out;
}

const keyOf = (candidate: Candidate): string => `${candidate.finding.code}\u0000${candidate.finding.path}`;

/** One look: the metadata plane, then every partition dir against this pass's proofs (as `scan` does, docs/node.md N0). */
async function look(context: NodeCheckContext): Promise<NodeReport> {
  const options = { engine: context.engine, windowBytes: context.windowBytes, signal: context.signal };
  const report = await scanNodeMetadata(context.root, options, context.scanFs, context.engine);
  return finishNode(report, options, context.scanFs, context.engine, context.proofs);
}

/** The files whose settling a finding waits for, or none (docs/scrub.md §1.1). */
function settleFiles(candidate: Candidate, context: NodeCheckContext): string[] {
  const { code, path } = candidate.finding;
  if (WAL_TAIL_CODES.has(code)) return [join(context.root, METADATA_DIR, "journal.wal")];
  if (SCRATCH_CODES.has(code)) return [path];
  if (HEAD_CODES.has(code) && candidate.partition !== null) {
    const files = [join(candidate.partition, "superblock.a"), join(candidate.partition, "superblock.b")];
    const active = context.activeLogs.get(candidate.partition);
    if (active !== undefined) files.push(active);
    if (path !== candidate.partition) files.push(path);
    return files;
  }
  return [];
}

/** The newest modification among `paths` (ms; absent files count as unmodified), or null when none exists. */
async function newestModification(paths: readonly string[]): Promise<number | null> {
  let newest: number | null = null;
  for (const path of paths) {
    try {
      const info = await stat(path);
      if (newest === null || info.mtimeMs > newest) newest = info.mtimeMs;
    } catch {
      // Absent (or unstatable): it proves nothing about a write in progress.
    }
  }
  return newest;
}

function toScrubFinding(candidate: Candidate): ScrubFinding {
  const { severity, code, path, message, ...details } = candidate.finding;
  const position = typeof details.damagePosition === "number" ? details.damagePosition : null;
  return { code, path, position, segmentPath: null, message, item: candidate.item, severity: severity as NodeSeverity, details };
}

function deferral(candidate: Candidate, reason: DeferReason, why: string): NodeDeferredEvent {
  const { code, path, severity } = candidate.finding;
  return {
    type: "node-deferred",
    item: candidate.item,
    code,
    severity: severity as NodeSeverity,
    path,
    reason,
    message: `${code} ${path}: ${why}`,
  };
}

/** The node check of one pass (docs/scrub.md §1.1): the findings to report and those deferred to the next pass. */
export async function checkNode(context: NodeCheckContext): Promise<NodeCheckResult> {
  const lookStartMs = context.now().getTime();
  let report = await look(context);
  let found = candidatesOf(report);
  const deferred: NodeDeferredEvent[] = [];
  let looks = 1;
  if (found.length > 0) {
    // A second look at once: what a write in progress showed the first is gone from it.
    report = await look(context);
    looks = 2;
    const again = candidatesOf(report);
    const firstKeys = new Set(found.map(keyOf));
    const secondKeys = new Set(again.map(keyOf));
    for (const candidate of found) {
      if (!secondKeys.has(keyOf(candidate)))
        deferred.push(
          deferral(candidate, "unconfirmed", "seen by the first look, gone on a second look right after: a write in progress, not damage"),
        );
    }
    for (const candidate of again) {
      if (!firstKeys.has(keyOf(candidate)))
        deferred.push(
          deferral(candidate, "unconfirmed", "seen by the second look only: a write in progress, or new; the next pass judges it"),
        );
    }
    found = again.filter((candidate) => firstKeys.has(keyOf(candidate)));
  }
  const findings: ScrubFinding[] = [];
  for (const candidate of found) {
    const files = settleFiles(candidate, context);
    if (files.length > 0) {
      const newest = await newestModification(files);
      if (newest !== null && newest > lookStartMs - context.settleMs) {
        const ageS = Math.max(0, Math.round((lookStartMs - newest) / 1000));
        deferred.push(
          deferral(
            candidate,
            "settling",
            `the server modified ${files.length === 1 ? basename(files[0]!) : "a file it rests on"} ${ageS} s ago (settle time ${context.settleMs / 1000} s): it may be writing it right now; judged again by the next pass`,
          ),
        );
        continue;
      }
    }
    findings.push(toScrubFinding(candidate));
  }
  return { findings, deferred, looks };
}

/**
 * The node section's proof of each partition, built as the scrub's segment
 * walk goes (docs/node.md N4 head H): what each segment proves this pass, or
 * what the state remembers of one skipped as unchanged. A partition with any
 * segment finding or unreadable file is `failed` here: its head is unknown,
 * so no offset is compared with it (the segment finding already reports it).
 */
export class PartitionProofs {
  private readonly byDir = new Map<
    string,
    { proof: PartitionProof & { segments: PartitionProof["segments"][number][] }; active: string | null }
  >();

  private entry(dir: string) {
    let entry = this.byDir.get(dir);
    if (entry === undefined) {
      entry = { proof: { path: dir, verdict: "clean", action: "serve", sweep: [], refusal: null, segments: [] }, active: null };
      this.byDir.set(dir, entry);
    }
    return entry;
  }

  /** A segment proven up to `walkedSize` bytes, its chain reaching `nextOffset` (the offset after its last proven message). */
  segment(dir: string, logPath: string, startOffset: bigint, walkedSize: number, nextOffset: bigint, size: number, sealed: boolean): void {
    const entry = this.entry(dir);
    entry.proof.segments.push({
      startOffset,
      endOffset: walkedSize > 0 && nextOffset > startOffset ? nextOffset - 1n : null,
      walkedSize,
      messagesSize: size,
      outcome: "clean",
    });
    if (!sealed) entry.active = logPath;
  }

  /** Something in the partition did not verify or could not be read: its head is unknown this pass. */
  fail(dir: string): void {
    this.entry(dir).proof.verdict = "failed";
  }

  proofs(): PartitionProof[] {
    return [...this.byDir.values()].map((entry) => entry.proof);
  }

  activeLogs(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [dir, entry] of this.byDir) if (entry.active !== null) out.set(dir, entry.active);
    return out;
  }
}
