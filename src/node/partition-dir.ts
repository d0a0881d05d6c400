/**
 * The partition plane beyond segments (docs/node.md N4, N5): the head H Iggy
 * computes at boot, every consumer and group offset file compared with it, and
 * `purge.gen` against the snapshot. Read-only: nothing here writes.
 */
import { join } from "node:path";
import type { Engine } from "../engine/types.js";
import { hex64 } from "../format/bytes.js";
import {
  LEGACY_OFFSET_RECORD_BYTES,
  OFFSETS_DIR,
  OFFSET_KINDS,
  OFFSET_RECORD_BYTES,
  PURGE_GENERATION_BYTES,
  PURGE_GENERATION_FILE,
  readOffsetRecord,
  readPurgeGeneration,
} from "../format/partition-files.js";
import { describeCause } from "../io/errors.js";
import type { FileStat, ScanFs } from "../io/fs.js";
import { formatCount } from "../domain/numbers.js";
import type { PartitionReport, SegmentReport } from "../domain/scan.js";
import { childPath } from "../io/paths.js";
import { errnoCode, isNotFound } from "./files.js";
import type { NodeFinding, OffsetReport, PartitionHead, PurgeGenerationReport, SnapshotPartition } from "../domain/node.js";

const U32_MAX = 0xffff_ffff;
/** Refusals Iggy's boot answers by fencing the segments into `<p>.fenced.<n>/` (docs/node.md N8). */
export const QUARANTINE_REFUSALS = new Set(["Hole", "Overlap", "EmptyNonTailSegment"]);

/**
 * What the node section needs of a partition's report (docs/node.md N3, N4, N8):
 * its path, verdict, action, refusal and sweep list, and each segment's bounds
 * and sizes (the head H, the forecast). A
 * PartitionReport is one; a streamed scan keeps only this, not the whole report.
 */
export type PartitionProof = Pick<PartitionReport, "path" | "verdict" | "action" | "sweep"> & {
  refusal: Pick<NonNullable<PartitionReport["refusal"]>, "code"> | null;
  segments: readonly Pick<SegmentReport, "startOffset" | "endOffset" | "walkedSize" | "messagesSize" | "outcome">[];
};

/**
 * H after the segment repair the same plan would make (docs/node.md N4): a
 * torn tail is already excluded from a segment's `endOffset`, so the proven
 * end is the largest `endOffset`; with no segment holding messages, an empty
 * segment named `start > 0` gives `start - 1`; then raised to
 * `offset_frontier - 1`. A chain refusal makes Iggy fence the segments and
 * rebuild the partition empty (at the frontier).
 */
export function partitionHead(report: PartitionProof | undefined, offsetFrontier: bigint): PartitionHead {
  const known = report !== undefined && report.verdict !== "failed";
  const quarantined = report?.refusal !== null && report?.refusal !== undefined && QUARANTINE_REFUSALS.has(report.refusal.code);
  let lastProvenOffset: bigint | null = null;
  if (report !== undefined && known && !quarantined) {
    for (const segment of report.segments) {
      if (segment.endOffset !== null && segment.walkedSize > 0 && (lastProvenOffset === null || segment.endOffset > lastProvenOffset))
        lastProvenOffset = segment.endOffset;
    }
    if (lastProvenOffset === null) {
      for (const segment of report.segments) {
        if (segment.startOffset > 0n && (lastProvenOffset === null || segment.startOffset - 1n > lastProvenOffset))
          lastProvenOffset = segment.startOffset - 1n;
      }
    }
  }
  let head = lastProvenOffset;
  if (offsetFrontier > 0n && (head === null || offsetFrontier - 1n > head)) head = offsetFrontier - 1n;
  return { lastProvenOffset, offsetFrontier, head, known, quarantined };
}

/** Reads up to `limit` leading bytes of a file and its size. Errors come back as a message, never as evidence. */
async function readLeading(
  scanFs: ScanFs,
  path: string,
  limit: number,
  /** The file's stat when the caller already took it (then it is not taken again). */
  stated?: FileStat,
): Promise<{ kind: "read"; size: number; bytes: Uint8Array } | { kind: "failed"; message: string } | { kind: "not-file" }> {
  try {
    const info = stated ?? (await scanFs.stat(path));
    if (!info.isFile) return { kind: "not-file" };
    const want = Math.min(info.size, limit);
    const bytes = new Uint8Array(want);
    const file = await scanFs.open(path);
    try {
      for (let filled = 0; filled < want; ) {
        const count = await file.read(bytes.subarray(filled), filled);
        if (count === 0)
          return { kind: "failed", message: `${path} ended at byte ${filled} but was ${info.size} bytes when the scan started` };
        filled += count;
      }
    } finally {
      await file.close();
    }
    return { kind: "read", size: info.size, bytes };
  } catch (cause) {
    return { kind: "failed", message: `cannot read ${path} (${describeCause(cause)})` };
  }
}

/** Rust's `str::parse::<u32>()`: optional `+`, decimal digits, at most u32::MAX. */
export function parseU32Name(name: string): number | null {
  if (!/^\+?[0-9]+$/.test(name)) return null;
  const value = Number(name.replace(/^\+/, ""));
  return Number.isSafeInteger(value) && value <= U32_MAX ? value : null;
}

/** The offsets a stored cursor above H covers: head+1..stored (or 0..stored on an empty partition). */
function reminted(head: bigint | null, stored: bigint): string {
  const first = head === null ? 0n : head + 1n;
  return first === stored ? `${first}` : `${first}..${stored}`;
}

export interface OffsetScanContext {
  scanFs: ScanFs;
  engine: Engine;
  partitionDir: string;
  head: PartitionHead;
  /** The topic's consumer-group ids from the snapshot (null: no snapshot entry). */
  consumerGroupIds: readonly number[] | null;
  /** Whether the planned segment repair cuts a torn tail (the message says so). */
  plannedCut: boolean;
}

/**
 * docs/node.md N4: every `offsets/{consumers,groups}/<u32>`. Directory-level
 * findings (unlistable dir, subdirectories, bad names) go to `dirFindings`.
 */
export async function scanOffsets(context: OffsetScanContext, dirFindings: NodeFinding[]): Promise<OffsetReport[]> {
  const { scanFs, partitionDir } = context;
  const out: OffsetReport[] = [];
  const offsetsDir = childPath(partitionDir, OFFSETS_DIR);
  if (scanFs.knownAbsent?.(offsetsDir)) return out; // most partition dirs hold none
  for (const { kind, dir } of OFFSET_KINDS) {
    const directory = childPath(offsetsDir, dir);
    if (scanFs.knownAbsent?.(directory)) continue;
    let entries: Awaited<ReturnType<ScanFs["list"]>>;
    try {
      const info = await scanFs.stat(directory);
      if (!info.isDirectory) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
      entries = await scanFs.list(directory);
    } catch (cause) {
      if (errnoCode(cause) === "ENOENT") continue;
      dirFindings.push({
        severity: "failed",
        code: "OffsetsDirUnreadable",
        path: directory,
        message: `cannot list ${directory} (${describeCause(cause)}): its offsets are unknown, and the server's boot fails on an offsets directory it cannot read; nothing was changed`,
      });
      continue;
    }
    const pathsById = new Map<number, [string, ...string[]]>();
    for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(directory, entry.name);
      if (entry.isDirectory) {
        dirFindings.push({
          severity: "warn",
          code: "OffsetSubdirectory",
          path,
          message: `${path} is a directory inside the ${kind} offsets: the server skips it; left alone`,
        });
        continue;
      }
      const id = parseU32Name(entry.name);
      if (id === null) {
        dirFindings.push({
          severity: "warn",
          code: "OffsetNameInvalid",
          path,
          message: `${path} is not named by a u32 ${kind} id: the server skips it with a warning; left alone`,
        });
        continue;
      }
      const named = pathsById.get(id);
      if (named === undefined) pathsById.set(id, [path]);
      else named.push(path);
      out.push(await scanOffsetFile(context, kind, id, path));
    }
    for (const [id, paths] of pathsById) if (paths.length > 1) dirFindings.push(duplicateNameFinding(kind, id, paths));
  }
  return out.sort((a, b) => (a.kind === b.kind ? a.id - b.id : a.kind === "consumer" ? -1 : 1));
}

/**
 * Two or more files whose names parse as one id (`7`, `007`, `+7`: Iggy parses
 * a name with `str::parse::<u32>()`, see parseU32Name). The server loads each
 * in the order `read_dir` lists them and keeps one cursor per id; that order is
 * the filesystem's, so which file wins is not knowable from the names.
 */
function duplicateNameFinding(kind: "consumer" | "group", id: number, paths: readonly [string, ...string[]]): NodeFinding {
  return {
    severity: "warn",
    code: "OffsetDuplicateName",
    path: paths[0],
    message: `${paths.join(" and ")} ${paths.length === 2 ? "both" : "all"} name ${kind} ${id} (the server parses each name as a u32, so leading zeros or a + name the same id): it loads one cursor per id, and which file it keeps depends on the order the filesystem lists the directory, so the server's choice is undefined; left alone`,
    consumerKind: kind,
    consumerId: id,
    fileCount: paths.length,
  };
}

async function scanOffsetFile(context: OffsetScanContext, kind: "consumer" | "group", id: number, path: string): Promise<OffsetReport> {
  const { head } = context;
  const findings: NodeFinding[] = [];
  const who = `${kind} ${id}`;
  const report: OffsetReport = {
    kind,
    id,
    path,
    size: null,
    offset: null,
    checksummed: false,
    head: head.known ? head.head : null,
    findings,
  };
  const read = await readLeading(context.scanFs, path, OFFSET_RECORD_BYTES);
  if (read.kind !== "read") {
    findings.push({
      severity: "failed",
      code: "OffsetReadFailure",
      path,
      message:
        read.kind === "failed"
          ? `${read.message}: the stored offset of ${who} is unknown (the server treats an unreadable file as no offset); nothing was changed`
          : `${path} is not a regular file: the stored offset of ${who} is unknown; nothing was changed`,
    });
    return report;
  }
  const { size, bytes } = read;
  report.size = size;
  const { offset, storedChecksum } = readOffsetRecord(bytes);
  if (offset === null) {
    findings.push({
      severity: "warn",
      code: "OffsetTorn",
      path,
      message: `${path} holds ${formatCount(size)} bytes, less than an offset: the cursor of ${who} is lost; the server skips the file and the consumer restarts from offset 0 (redelivery); left alone`,
      size,
    });
    return report;
  }
  report.offset = offset;
  const record = recordFindings(context.engine, path, who, bytes, size, offset, storedChecksum);
  findings.push(...record.findings);
  report.checksummed = record.verdict === "checksummed";
  // A corrupt record's offset is no cursor: nothing to compare with the head.
  if (record.verdict !== "corrupt" && head.known) findings.push(...cursorFindings(context, kind, id, path, offset));
  return report;
}

/** docs/node.md N4: the record's checksum (absent on a legacy or torn record) and its size. */
function recordFindings(
  engine: Engine,
  path: string,
  who: string,
  bytes: Uint8Array,
  size: number,
  offset: bigint,
  stored: bigint | null,
): { findings: NodeFinding[]; verdict: "unsealed" | "checksummed" | "corrupt" } {
  if (stored === null) {
    const legacy = size === LEGACY_OFFSET_RECORD_BYTES;
    const text = legacy
      ? "a legacy 8-byte record (no checksum): the server loads it unverified and the next write upgrades it"
      : `a complete offset with a torn checksum (${formatCount(size)} of ${OFFSET_RECORD_BYTES} bytes): the server loads it unverified; repair rewrites the 16-byte record with the same offset`;
    const finding: NodeFinding = {
      severity: legacy ? "info" : "repairable",
      code: legacy ? "OffsetUnsealed" : "OffsetChecksumTorn",
      path,
      message: `${path} (${who}, offset ${offset}) is ${text}`,
      offset,
      size,
    };
    return { findings: [finding], verdict: "unsealed" };
  }
  const findings: NodeFinding[] = [];
  const computed = engine.xxh3_64(bytes.subarray(0, 8));
  if (stored !== computed) {
    findings.push({
      severity: "refused",
      code: "OffsetCorrupt",
      path,
      message: `${path} (${who}) fails its checksum (offset bytes say ${offset}, stored checksum 0x${hex64(stored)}, computed 0x${hex64(computed)}): the server's next boot UNLINKS this file and the consumer restarts from 0; repair copies it into the preserve dir as evidence`,
      offset,
      expectedChecksum: `0x${hex64(computed)}`,
      foundChecksum: `0x${hex64(stored)}`,
    });
  }
  if (size > OFFSET_RECORD_BYTES) findings.push(oversized(path, who, size));
  return { findings, verdict: stored === computed ? "checksummed" : "corrupt" };
}

/** docs/node.md N4: a readable cursor against the known head H, and a group the topic's metadata does not hold. */
function cursorFindings(context: OffsetScanContext, kind: "consumer" | "group", id: number, path: string, offset: bigint): NodeFinding[] {
  const { head } = context;
  const who = `${kind} ${id}`;
  const findings: NodeFinding[] = [];
  if (head.head === null) {
    findings.push({
      severity: "repairable",
      code: "OffsetOnEmptyPartition",
      path,
      message: `${who} stored offset ${offset} on a partition that holds no offset at all: the server clamps it to 0 ("consumed through 0"), so the consumer skips the first new message; repair --clamp-offsets moves the file into the preserve dir`,
      consumerKind: kind,
      consumerId: id,
      storedOffset: offset,
    });
  } else if (offset > head.head) {
    const cut = context.plannedCut ? " (after the torn-tail cut this plan makes)" : "";
    findings.push({
      severity: "repairable",
      code: "OffsetAheadOfHead",
      path,
      message: `${who} stored offset ${offset} but the partition head is ${head.head}${cut}: offset${offset - head.head > 1n ? "s" : ""} ${reminted(head.head, offset)} will be re-minted for new messages; the server clamps the cursor in memory only, the file keeps ${offset}, and a later restart can resurrect it so the consumer silently skips the re-minted messages; repair --clamp-offsets rewrites it to ${head.head}`,
      consumerKind: kind,
      consumerId: id,
      storedOffset: offset,
      head: head.head,
      remintedFirst: head.head + 1n,
      remintedLast: offset,
    });
  }
  if (kind === "group" && context.consumerGroupIds !== null && !context.consumerGroupIds.includes(id)) {
    findings.push({
      severity: "info",
      code: "OffsetGroupUnknown",
      path,
      message: `${path}: consumer group ${id} is not in the topic's metadata; the server reclaims its offset files at runtime`,
    });
  }
  return findings;
}

function oversized(path: string, who: string, size: number): NodeFinding {
  return {
    severity: "warn",
    code: "OffsetOversized",
    path,
    message: `${path} (${who}) holds ${formatCount(size)} bytes, more than the ${OFFSET_RECORD_BYTES}-byte record the server writes: foreign or damaged; the server ignores the tail; left alone`,
    size,
  };
}

/**
 * docs/node.md N5: `purge.gen` against the snapshot's `purge_generation` G and
 * `created_revision` R. `holdsMessages`: the partition's segments hold a message.
 */
export async function scanPurgeGeneration(
  scanFs: ScanFs,
  partitionDir: string,
  expected: SnapshotPartition | null,
  /** Whether a snapshot decoded (false: nothing to compare with). */
  snapshotDecoded: boolean,
  holdsMessages: boolean,
): Promise<PurgeGenerationReport | null> {
  const path = childPath(partitionDir, PURGE_GENERATION_FILE);
  const findings: NodeFinding[] = [];
  const report: PurgeGenerationReport = {
    path,
    present: false,
    size: null,
    generation: null,
    createdRevision: null,
    expectedGeneration: expected?.purgeGeneration ?? null,
    expectedRevision: expected?.createdRevision ?? null,
    findings,
  };
  const read = await readPurgeFile(scanFs, path);
  if (read === null && expected === null) return null;
  if (read !== null && read.kind !== "read") {
    report.present = true;
    findings.push({
      severity: "failed",
      code: "PurgeGenerationReadFailure",
      path,
      message: `${read.kind === "failed" ? read.message : `${path} is not a regular file`}: the applied purge generation is unknown, and the server's boot fails on a real read error; nothing was changed`,
    });
    return report;
  }
  if (read !== null) {
    report.present = true;
    report.size = read.size;
    const record = readPurgeGeneration(read.bytes);
    if (record !== null) {
      report.generation = record.generation;
      report.createdRevision = record.createdRevision;
    }
    if (read.size > PURGE_GENERATION_BYTES)
      findings.push({
        severity: "warn",
        code: "PurgeGenerationOversized",
        path,
        message: `${path} holds ${formatCount(read.size)} bytes, more than the ${PURGE_GENERATION_BYTES} the server writes: foreign or damaged; the tail is ignored; left alone`,
        size: read.size,
      });
  }
  if (expected === null) {
    if (report.present)
      findings.push({
        severity: "info",
        code: snapshotDecoded ? "PurgeGenerationUnmatched" : "PurgeGenerationUnchecked",
        path,
        message: `${path}: generation ${report.generation ?? "none (short file)"}, created_revision ${report.createdRevision ?? "none"}; ${snapshotDecoded ? "the snapshot does not list this partition" : "no snapshot to compare it with"}`,
        generation: report.generation,
        createdRevision: report.createdRevision,
      });
    return report;
  }
  findings.push(...purgeFindings(report, expected, holdsMessages));
  return report;
}

/** `purge.gen` read (null: absent); a failure comes back as a message, never as evidence. */
async function readPurgeFile(scanFs: ScanFs, path: string): Promise<Awaited<ReturnType<typeof readLeading>> | null> {
  if (scanFs.knownAbsent?.(path)) return null;
  try {
    return await readLeading(scanFs, path, PURGE_GENERATION_BYTES, await scanFs.stat(path));
  } catch (cause) {
    return isNotFound(cause) ? null : { kind: "failed", message: `cannot stat ${path} (${describeCause(cause)})` };
  }
}

/** docs/node.md N5: what `purge.gen` as read makes the server do against the snapshot's generation G and revision R. */
function purgeFindings(report: PurgeGenerationReport, expected: SnapshotPartition, holdsMessages: boolean): NodeFinding[] {
  const { path } = report;
  const findings: NodeFinding[] = [];
  const G = expected.purgeGeneration;
  const R = expected.createdRevision;
  const generation = report.generation;
  // The server reads generation 0 from a file of another incarnation, or a short one.
  const reads = generation !== null && report.createdRevision === R ? generation : 0n;
  const why = !report.present
    ? "absent"
    : report.generation === null
      ? `short (${report.size} bytes)`
      : report.createdRevision !== R
        ? `of another partition incarnation (created_revision ${report.createdRevision}, the snapshot's is ${R})`
        : null;
  if (reads > G) {
    findings.push({
      severity: "refused",
      code: "PurgeGenerationAhead",
      path,
      message: `${path} says purge generation ${reads} was applied, but the snapshot's purge_generation is ${G}: impossible for this incarnation (corruption; purge.gen has no checksum); the server would skip future purges; never rewritten`,
      generation: reads,
      expectedGeneration: G,
    });
  } else if (reads < G) {
    if (why !== null && holdsMessages) {
      findings.push({
        severity: "refused",
        code: "PurgeGenerationLost",
        path,
        message: `${path} is ${why}, so the server reads generation 0 while the snapshot's purge_generation is ${G}: the next boot RE-PURGES the partition, wiping every segment and offset, including messages that may postdate the purge; never rewritten (operator decision)`,
        generation: report.generation,
        expectedGeneration: G,
      });
    } else {
      findings.push({
        severity: "warn",
        code: "PurgePending",
        path,
        message: `${path} records generation ${reads} (${why ?? "this incarnation"}) while the snapshot's purge_generation is ${G}: the next boot purges the partition, wiping every segment and offset`,
        generation: reads,
        expectedGeneration: G,
      });
    }
  } else if (why !== null && report.present && report.createdRevision !== null && report.createdRevision !== R) {
    findings.push({
      severity: "info",
      code: "PurgeRevisionStale",
      path,
      message: `${path} is ${why}; the server reads generation 0, which equals the snapshot's ${G}: nothing to purge`,
    });
  }
  return findings;
}
