import { assert } from "../../assert.js";
import { U64_MAX } from "../../format/constants.js";
import { formatCount } from "../../domain/numbers.js";
import type { BootForecastEntry, IggyWalDecision, NodeFinding, WalReport, WalResidue } from "../../domain/node.js";
import { WAL_IGGY_TRAILING_CAP_BYTES, WAL_METADATA_GROUP, WalHeaderStatus } from "../../format/wal.js";
import { type WalTornEvidence, provesNeverAcknowledged, walTornClaim } from "../../policy/torn-evidence.js";
import {
  type EntryFailure,
  type WalEntry,
  type WalWalk,
  type WalReader,
  findStructuralEntry,
  hashEntry,
  probeWal,
  walResidueIsAllZero,
  walkWal,
  type WalOpenOptions,
  withWalReader,
} from "./walk.js";

/** The metadata superblock's account of committed ops (docs/node.md N1.1). */
export interface CommittedOps {
  /** `commit_max` C: a lower bound of the committed ops; each was fsynced in the WAL before it committed. */
  commitMax: bigint;
  /** `replica_count`: 1 is a solo node, where no peer can re-supply a lost op. */
  replicaCount: number;
}

/** docs/node.md N1.1: a node of at most this many replicas has no peer to re-supply a committed op. */
const SOLO_REPLICA_COUNT = 1;

export interface WalScanOptions extends WalOpenOptions {
  /** The WAL probe's own budget (docs/node.md N1). */
  probeBudgetUnits: number;
  /** The snapshot's `sequence_number` S (0 without a snapshot). */
  snapshotOp: bigint;
  /**
   * False when a snapshot exists but its op is unknown (it does not decode or
   * could not be read): the snapshot-hole check is then skipped, since S is not
   * known, and the other checks run over every op.
   */
  snapshotOpKnown?: boolean;
  /** The metadata superblock's cluster id, when one decodes. */
  superblockCluster: bigint | null;
  /**
   * The superblock's `commit_max` and `replica_count` (docs/node.md N1.1).
   * Null or absent when no superblock decodes (an empty one has C = 0): the
   * committed-ops check is then not made.
   */
  committed?: CommittedOps | null;
}

export interface WalScan {
  report: WalReport;
  forecast: BootForecastEntry[];
}

function finding(
  severity: NodeFinding["severity"],
  code: string,
  path: string,
  message: string,
  fields: Record<string, NodeFinding[string]> = {},
): NodeFinding {
  return { severity, code, path, message, ...fields };
}

/** Scans the WAL at `path` of `size` bytes (the caller stat'ed it). Read errors throw ScanFailure. */
export async function scanWal(path: string, size: number, options: WalScanOptions): Promise<WalScan> {
  return withWalReader(path, size, options, (reader) => scanWalWindow(reader, path, options));
}

async function scanWalWindow(reader: WalReader, path: string, options: WalScanOptions): Promise<WalScan> {
  const size = reader.fileSize;
  const findings: NodeFinding[] = [];
  const walk = await walkWal(reader, "segscan");
  const entries = walk.entries;
  const budget = { limitUnits: options.probeBudgetUnits, spentUnits: 0 };
  let residue: WalResidue | null = null;
  const maxOp = entries.reduce<bigint | null>((max, entry) => (max === null || entry.op > max ? entry.op : max), null);

  if (walk.failure !== null) {
    const damagePosition = walk.stopPosition;
    const minOp = maxOp === null ? 0n : maxOp < U64_MAX ? maxOp + 1n : null;
    const probe = await probeWal(reader, damagePosition, minOp, budget);
    residue = {
      damagePosition,
      bytes: size - damagePosition,
      reason: walk.failure.reason,
      probe: probe.verdict,
      allZero: await walResidueIsAllZero(reader, probe),
      survivorPosition: probe.survivorPosition,
      stoppedAt: probe.stoppedAt,
      spentUnits: budget.spentUnits,
    };
  }

  const iggy = await iggyDecision(reader, walk, options.snapshotOp);
  const loss = committedOpsLoss(maxOp, options);
  findings.push(
    ...residueAndLossFindings(path, { size, walk, residue, budget, iggy, loss, commitMax: options.committed?.commitMax ?? null }),
  );
  findings.push(...(await opOrderFindings(reader, path, entries, options)));

  const unsealed = {
    headers: entries.filter((entry) => entry.checksum === 0n).length,
    bodies: entries.filter((entry) => entry.checksumBody === 0n).length,
  };
  if (unsealed.headers > 0 || unsealed.bodies > 0) {
    findings.push(
      finding(
        "warn",
        "WalUnsealed",
        path,
        `${formatCount(unsealed.headers)} entr${unsealed.headers === 1 ? "y has" : "ies have"} an unsealed header and ${formatCount(unsealed.bodies)} an unsealed body (checksum 0): the server replays them on trust, nothing proves their bytes`,
        { headers: unsealed.headers, bodies: unsealed.bodies },
      ),
    );
  }

  // Ops are bigint: Math.min does not apply.
  const lowerOp = (min: bigint, entry: WalEntry): bigint => (entry.op < min ? entry.op : min);
  const ops = maxOp === null ? null : { first: entries.reduce(lowerOp, maxOp), last: maxOp };
  const report: WalReport = {
    path,
    size,
    entries: entries.length,
    ops,
    unsealed,
    walkedSize: walk.stopPosition,
    residue,
    budget,
    iggy,
    findings,
    operations: entries.map((entry) => ({ op: entry.op, operation: entry.operation })),
  };
  const tornTailReported = findings.some((finding) => finding.code === "WalTornTail");
  return { report, forecast: forecastOf(path, iggy, residue, tornTailReported, loss) };
}

/**
 * The residue's finding and the committed-ops loss (docs/node.md N1.1). On a
 * solo node a residue without survivor below commit_max is no never-acknowledged
 * tail: the loss finding takes its place and says what the bytes are.
 */
function residueAndLossFindings(
  path: string,
  scan: {
    size: number;
    walk: WalWalk;
    residue: WalResidue | null;
    budget: { limitUnits: number; spentUnits: number };
    iggy: IggyWalDecision;
    loss: CommittedOpsLoss | null;
    commitMax: bigint | null;
  },
): NodeFinding[] {
  const { residue, loss, iggy } = scan;
  const findings: NodeFinding[] = [];
  const tornReplaced = loss !== null && loss.solo && residue?.probe === "no-survivor";
  if (residue !== null && !tornReplaced) {
    if (scan.walk.failure === null)
      throw new Error(`${path}: a residue at byte ${formatCount(residue.damagePosition)} without the walk's failure`);
    findings.push(residueFinding(path, residue, scan.budget, iggy, { failure: scan.walk.failure, loss, commitMax: scan.commitMax }));
  }
  if (loss !== null) {
    const how = residue === null ? walEndText(scan.size, loss) : residueLossText(residue, tornReplaced);
    const residueFields: Record<string, NodeFinding[string]> =
      residue === null ? {} : { damagePosition: residue.damagePosition, residueBytes: residue.bytes };
    findings.push(committedOpsLostFinding(path, loss, how, iggy.scan === "refuse", residueFields));
  }
  return findings;
}

/** A byte position as people read it (docs/interfaces.md §9.2), or "unknown" where the probe recorded none. */
const positionText = (position: number | null): string => (position === null ? "unknown" : formatCount(position));

function residueFinding(
  path: string,
  residue: WalResidue,
  budget: { limitUnits: number; spentUnits: number },
  iggy: IggyWalDecision,
  context: { failure: EntryFailure; loss: CommittedOpsLoss | null; commitMax: bigint | null },
): NodeFinding {
  const { damagePosition } = residue;
  if (residue.probe === "survivor") {
    return finding(
      "refused",
      "WalInteriorDamage",
      path,
      `the entry at byte ${formatCount(damagePosition)} does not verify (${residue.reason}) but a verified entry with a higher op starts at byte ${positionText(residue.survivorPosition)}: durable, possibly acknowledged ops follow the damage, so nothing may be cut`,
      { damagePosition, survivorPosition: residue.survivorPosition },
    );
  }
  if (residue.probe === "budget-exhausted") {
    return finding(
      "refused",
      "WalUnverifiedResidue",
      path,
      `the entry at byte ${formatCount(damagePosition)} does not verify (${residue.reason}) and the probe budget (${formatCount(budget.limitUnits)} units) ran out at byte ${positionText(residue.stoppedAt)} before the ${formatCount(residue.bytes)}-byte residue was proven free of later entries`,
      {
        damagePosition,
        residueBytes: residue.bytes,
        limitUnits: budget.limitUnits,
        spentUnits: budget.spentUnits,
        stoppedAt: residue.stoppedAt,
      },
    );
  }
  const evidence = tornEvidence(residue, context.failure, context.commitMax);
  // "Nothing lost" only where the bytes prove (under the crash model) the entry never acknowledged (docs/node.md N1.1).
  const nothingLost = context.loss === null && provesNeverAcknowledged(evidence.kind);
  const iggyNote =
    iggy.scan === "refuse"
      ? ` Iggy's own boot would refuse these bytes (${iggy.reason}); cutting with segscan lets the server boot${nothingLost ? " with nothing acknowledged lost" : ", the cut bytes preserved"}.`
      : iggy.scan === "truncate-tail" && iggy.position === damagePosition
        ? " Iggy's own boot would make the same cut, silently."
        : "";
  const acknowledged =
    context.loss === null
      ? evidence.claim
      : `but ${opRange(context.loss)} committed (commit_max ${context.loss.commitMax}), so these bytes may hold one of them: they are not a never-acknowledged tail; ${peerMayHold(context.loss)}`;
  return finding(
    "repairable",
    "WalTornTail",
    path,
    `the last ${formatCount(residue.bytes)} bytes from byte ${formatCount(damagePosition)} are a torn tail (no verified entry with a higher op follows): ${evidence.found}; ${acknowledged}; repair cuts them after preserving them.${iggyNote}`,
    { damagePosition, residueBytes: residue.bytes, tornEvidence: evidence.kind },
  );
}

/**
 * docs/node.md N1.1: what the residue's bytes prove about the entry that did
 * not verify. Only a short entry or a zero-filled residue says the append
 * never completed (under the crash model: never fsynced, so never
 * acknowledged); any other failure cannot be told from corruption of an
 * acknowledged entry. The claims are the one table's (src/policy/torn-evidence.ts);
 * what was found is said here, with the entry's own numbers.
 */
export function tornEvidence(
  residue: Pick<WalResidue, "allZero" | "bytes">,
  failure: EntryFailure,
  commitMax: bigint | null,
): { kind: WalTornEvidence; found: string; claim: string } {
  const evidence = (kind: WalTornEvidence, found: string, bound = ""): { kind: WalTornEvidence; found: string; claim: string } => ({
    kind,
    found,
    claim: `${walTornClaim(kind)}${bound}`,
  });
  if (residue.allZero) return evidence("zero-filled", `all ${formatCount(residue.bytes)} bytes are zero, never written`);
  if (failure.kind === "short") return evidence("short-entry", `${failure.reason}, the append never completed`);
  if (failure.kind === "structural" && failure.runsPastEnd !== undefined) {
    const { op, claimedBytes, remainingBytes } = failure.runsPastEnd;
    return evidence(
      "short-entry",
      `the entry for op ${op} claims ${formatCount(claimedBytes)} bytes and only ${formatCount(remainingBytes)} remain, the append never completed`,
    );
  }
  if (failure.kind === "seal" && failure.check === "body") {
    const bound =
      commitMax !== null && failure.op > commitMax
        ? ` (op ${failure.op} is above the superblock's commit_max ${commitMax}, but commit_max is only a lower bound)`
        : "";
    return evidence(
      "complete-entry",
      `the entry for op ${failure.op} is complete (its header verifies and its length fits) but its body does not: ${failure.reason}`,
      bound,
    );
  }
  return evidence("unverifiable", `the entry there does not verify (${failure.reason})`);
}

/** docs/node.md N1.1: the committed ops this WAL no longer proves. */
export interface CommittedOpsLoss {
  /** V: the highest op the walk proves, or the snapshot op S when that is higher (ops up to S live in the snapshot). */
  provenOp: bigint;
  /** C: the superblock's commit_max. */
  commitMax: bigint;
  replicaCount: number;
  /** No peer can re-supply the ops (replica_count 1). */
  solo: boolean;
}

/**
 * docs/node.md N1.1: V < C means ops V+1..C were committed (each fsynced in
 * the WAL first) and the WAL no longer proves them. Null when V ≥ C, when no
 * superblock gives C, or when the snapshot's op is unknown (it does not
 * decode: SnapshotCorrupt already refuses, and V cannot be bounded below).
 */
export function committedOpsLoss(
  walkMaxOp: bigint | null,
  options: Pick<WalScanOptions, "snapshotOp" | "snapshotOpKnown" | "committed">,
): CommittedOpsLoss | null {
  const committed = options.committed ?? null;
  if (committed === null) return null;
  const provenOp = walkMaxOp !== null && walkMaxOp > options.snapshotOp ? walkMaxOp : options.snapshotOp;
  if (provenOp >= committed.commitMax || options.snapshotOpKnown === false) return null;
  return {
    provenOp,
    commitMax: committed.commitMax,
    replicaCount: committed.replicaCount,
    solo: committed.replicaCount <= SOLO_REPLICA_COUNT,
  };
}

/**
 * docs/node.md N1.1: one node cannot know whether a peer still holds the ops it
 * lacks (the peers may have lost them too), so it says where to look, never
 * that they are held.
 */
function peerMayHold(loss: CommittedOpsLoss): string {
  const count = loss.replicaCount - 1;
  const peers = count === 1 ? "the other replica" : `one of the other ${count} replicas`;
  return `if ${peers} of this ${loss.replicaCount}-replica cluster holds them (check with \`segscan fleet\`), it re-supplies them when this replica rejoins`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function opRange(loss: CommittedOpsLoss): string {
  const first = loss.provenOp + 1n;
  return first === loss.commitMax ? `op ${first} was` : `ops ${first}..${loss.commitMax} were`;
}

/** How a WAL that walked to its end falls short of C. */
function walEndText(size: number, loss: CommittedOpsLoss): string {
  return size === 0 ? "the WAL is empty" : `the WAL ends after op ${loss.provenOp} (cut or short)`;
}

function residueLossText(residue: WalResidue, tornReplaced: boolean): string {
  if (!tornReplaced) {
    return `the entry at byte ${formatCount(residue.damagePosition)} does not verify (${residue.reason}), and the walk proves nothing after it`;
  }
  return `the ${formatCount(residue.bytes)} bytes from byte ${formatCount(residue.damagePosition)} do not verify (${residue.reason}) and may be the damaged remains of a committed op, so they are not a never-acknowledged torn tail and are not cut`;
}

/**
 * docs/node.md N1.1 `WalCommittedOpsLost`: refused on a solo node, warn when
 * a peer may re-supply the ops (whether one does, only the cluster view knows). `how` says how the WAL falls short; `iggyRefuses`:
 * the boot fails on this WAL anyway (otherwise it only warns and runs on).
 */
export function committedOpsLostFinding(
  path: string,
  loss: CommittedOpsLoss,
  how: string,
  iggyRefuses: boolean,
  fields: Record<string, NodeFinding[string]> = {},
): NodeFinding {
  const lost = `${opRange(loss)} committed (the superblock's commit_max is ${loss.commitMax}, and Iggy fsyncs each entry before its op can commit) but this WAL proves ops only up to ${loss.provenOp}: ${how}`;
  const solo = iggyRefuses
    ? "On this single-replica node no peer can re-supply them, and the server refuses to boot on this WAL in any case"
    : "On this single-replica node no peer can re-supply them: they were acknowledged, and the server's boot only warns and runs without them, so the metadata changes they made silently disappear and new ops take their numbers. Restore metadata/ from a backup first, or accept the loss";
  const cluster = `${capitalized(peerMayHold(loss))}; if none does, they are lost. ${iggyRefuses ? "The server refuses to boot on this WAL in any case" : "The server's boot only warns and runs without them meanwhile"}`;
  const message = `${lost}. ${loss.solo ? solo : cluster}`;
  return finding(loss.solo ? "refused" : "warn", "WalCommittedOpsLost", path, message, {
    provenOp: loss.provenOp,
    commitMax: loss.commitMax,
    replicaCount: loss.replicaCount,
    ...fields,
  });
}

/** docs/node.md N8: the boot runs on without ops V+1..C (it only warns, F§2.3.5). */
export function committedOpsForecast(path: string, loss: CommittedOpsLoss): BootForecastEntry {
  const first = loss.provenOp + 1n;
  const ops = first === loss.commitMax ? `op ${first}` : `ops ${first}..${loss.commitMax}`;
  return {
    effect: "run-without-committed-ops",
    path,
    destructive: loss.solo,
    detail: loss.solo
      ? `the server warns that commit_max ${loss.commitMax} is above the last op the WAL holds (${loss.provenOp}) and runs without ${ops}: their acknowledged metadata changes are gone, and new ops take their numbers`
      : `the server warns that commit_max ${loss.commitMax} is above the last op the WAL holds (${loss.provenOp}) and runs without ${ops} until a peer that holds them re-supplies them (check with \`segscan fleet\`)`,
  };
}

/** docs/node.md N1 op-order checks over the verified entries, S = the snapshot's op. */
async function opOrderFindings(
  reader: WalReader,
  path: string,
  entries: readonly WalEntry[],
  options: WalScanOptions,
): Promise<NodeFinding[]> {
  return [
    ...(await duplicateFindings(reader, path, entries, options.snapshotOp)),
    ...replayFindings(path, entries, options),
    ...foreignFindings(path, entries, options.superblockCluster),
  ];
}

/** Ops written twice: identical bytes are harmless; different ones above the snapshot op lose the earlier copy at boot. */
async function duplicateFindings(reader: WalReader, path: string, entries: readonly WalEntry[], S: bigint): Promise<NodeFinding[]> {
  const findings: NodeFinding[] = [];
  // Duplicates: the later copy in file order is the one boot keeps.
  const byOp = new Map<bigint, WalEntry>();
  for (const entry of entries) {
    const earlier = byOp.get(entry.op);
    if (earlier !== undefined) {
      const identical =
        earlier.size === entry.size &&
        (await hashEntry(reader, earlier.position, earlier.size)) === (await hashEntry(reader, entry.position, entry.size));
      const fields = { op: entry.op, firstPosition: earlier.position, secondPosition: entry.position };
      if (identical) {
        findings.push(
          finding(
            "info",
            "WalDuplicateIdentical",
            path,
            `op ${entry.op} is written twice with identical bytes (bytes ${formatCount(earlier.position)} and ${formatCount(entry.position)}): harmless`,
            fields,
          ),
        );
      } else if (entry.op > S) {
        findings.push(
          finding(
            "refused",
            "WalDuplicateOp",
            path,
            `op ${entry.op} is written twice with different bytes (bytes ${formatCount(earlier.position)} and ${formatCount(entry.position)}); boot keeps the later copy and silently drops the other`,
            fields,
          ),
        );
      } else {
        findings.push(
          finding(
            "info",
            "WalDuplicateIdentical",
            path,
            `op ${entry.op} (at or below the snapshot op ${S}) is written twice with different bytes (bytes ${formatCount(earlier.position)} and ${formatCount(entry.position)}); replay never reads it`,
            { ...fields, identical: false },
          ),
        );
      }
    }
    byOp.set(entry.op, entry);
  }
  return findings;
}

/** The replay order's hole above the snapshot op, and its first gap or chain break (boot truncates from there). */
function replayFindings(path: string, entries: readonly WalEntry[], options: WalScanOptions): NodeFinding[] {
  const findings: NodeFinding[] = [];
  const S = options.snapshotOp;
  const replay = replayOrder(entries, S);
  const lowest = replay[0];
  if (options.snapshotOpKnown !== false && lowest !== undefined && lowest.op !== S + 1n) {
    findings.push(
      finding(
        "refused",
        "WalSnapshotHole",
        path,
        `the lowest op after the snapshot (op ${S}) is ${lowest.op}, not ${S + 1n}: ops ${S + 1n}..${lowest.op - 1n} are in neither the snapshot nor the WAL, and boot would replay over the hole`,
        { snapshotOp: S, lowestOp: lowest.op },
      ),
    );
  }
  const stop = firstReplayBreak(replay);
  if (stop !== null) {
    const prev = replay[stop.index - 1];
    const entry = replay[stop.index];
    assert(prev !== undefined && entry !== undefined, "a replay break lies between two replayed entries");
    const lost = replay.length - stop.index;
    if (stop.kind === "gap") {
      findings.push(
        finding(
          "refused",
          "WalGap",
          path,
          `op ${prev.op + 1n} is missing while ${formatCount(lost)} higher op${lost === 1 ? "" : "s"} (${entry.op}..) exist: boot would truncate the WAL from op ${entry.op} and delete every later op, even on a single node`,
          { missingOp: prev.op + 1n, nextOp: entry.op, opsAfter: lost },
        ),
      );
    } else {
      findings.push(
        finding(
          "refused",
          "WalChainBreak",
          path,
          `op ${entry.op} (byte ${formatCount(entry.position)}) does not chain to op ${prev.op} (byte ${formatCount(prev.position)}): boot would truncate the WAL from op ${entry.op} and delete ${formatCount(lost)} op${lost === 1 ? "" : "s"}, even on a single node`,
          { op: entry.op, position: entry.position, previousPosition: prev.position, opsAfter: lost },
        ),
      );
    }
  }
  return findings;
}

/** Entries of another consensus group or cluster than the metadata plane's (Iggy does not check these). */
function foreignFindings(path: string, entries: readonly WalEntry[], cluster: bigint | null): NodeFinding[] {
  const findings: NodeFinding[] = [];
  const foreignGroup = entries.filter((entry) => entry.group !== WAL_METADATA_GROUP);
  const firstGroup = foreignGroup[0];
  if (firstGroup !== undefined) {
    findings.push(
      finding(
        "warn",
        "WalGroupMismatch",
        path,
        `${formatCount(foreignGroup.length)} entr${foreignGroup.length === 1 ? "y carries" : "ies carry"} a consensus group other than the metadata group 1<<63 (first at byte ${formatCount(firstGroup.position)}); Iggy does not check this`,
        { count: foreignGroup.length, firstPosition: firstGroup.position },
      ),
    );
  }
  if (cluster !== null) {
    const foreign = entries.filter((entry) => entry.cluster !== cluster);
    const first = foreign[0];
    if (first !== undefined) {
      findings.push(
        finding(
          "warn",
          "WalClusterMismatch",
          path,
          `${formatCount(foreign.length)} entr${foreign.length === 1 ? "y names" : "ies name"} a cluster other than the superblock's (first at byte ${formatCount(first.position)}); Iggy does not check this`,
          { count: foreign.length, firstPosition: first.position },
        ),
      );
    }
  }
  return findings;
}

/** Iggy's boot scan (`scan` + `truncate_or_fail`) and replay (`recover`) on these bytes. */
async function iggyDecision(reader: WalReader, walk: WalWalk, snapshotOp: bigint): Promise<IggyWalDecision> {
  let iggyWalk = walk;
  const failure = walk.failure;
  if (
    failure?.kind === "structural" &&
    (failure.gateStatus === WalHeaderStatus.ReservedNonZero || failure.gateStatus === WalHeaderStatus.UpperBytesNonZero)
  ) {
    // Iggy's scan does not look at these bytes: it walks on from here.
    iggyWalk = await walkWal(reader, "iggy", walk.stopPosition, walk.entries.at(-1) ?? null, [...walk.entries]);
  }
  const decision: IggyWalDecision = {
    scan: "boot",
    position: null,
    reason: "every entry passes the boot scan",
    truncateFromOp: null,
    opsLost: 0,
  };
  if (iggyWalk.failure !== null) {
    const cut = await truncateOrFail(reader, iggyWalk.stopPosition, iggyWalk.failure);
    Object.assign(decision, cut);
    if (decision.scan === "refuse") return decision;
  }
  const replay = replayOrder(iggyWalk.entries, snapshotOp);
  const stop = firstReplayBreak(replay);
  const replayed = stop === null ? replay.length : stop.index;
  if (stop !== null) {
    const from = replay[stop.index];
    assert(from !== undefined, "a replay break lies inside the replay");
    decision.truncateFromOp = from.op;
    decision.opsLost = replay.length - stop.index;
  }
  const badReserved = replay.slice(0, replayed).find((entry) => entry.gateStatus === WalHeaderStatus.ReservedNonZero);
  if (badReserved !== undefined) {
    return {
      ...decision,
      scan: "refuse",
      position: badReserved.position,
      reason: `op ${badReserved.op} at byte ${formatCount(badReserved.position)} has non-zero reserved bytes: replay fails validation`,
    };
  }
  return decision;
}

/** Iggy's `truncate_or_fail` after a scan failure at `position`. */
async function truncateOrFail(
  reader: WalReader,
  position: number,
  failure: EntryFailure,
): Promise<Pick<IggyWalDecision, "scan" | "position" | "reason">> {
  const size = reader.fileSize;
  if (failure.kind === "seal" && failure.entryEnd < size) {
    return {
      scan: "refuse",
      position,
      reason: `interior WAL corruption at byte ${formatCount(position)} (${failure.reason}) with entries after it`,
    };
  }
  const trailing = size - position;
  if (trailing > WAL_IGGY_TRAILING_CAP_BYTES) {
    return {
      scan: "refuse",
      position,
      reason: `${formatCount(trailing)} bytes trail the damage at byte ${formatCount(position)}, more than one append can tear (64 MiB)`,
    };
  }
  const complete = await findStructuralEntry(reader, position);
  if (complete !== null) {
    return {
      scan: "refuse",
      position,
      reason: `a structurally complete entry starts at byte ${formatCount(complete)}, after the damage at byte ${formatCount(position)}`,
    };
  }
  return {
    scan: "truncate-tail",
    position,
    reason: `cuts ${formatCount(trailing)} bytes at byte ${formatCount(position)} (${failure.reason})`,
  };
}

function forecastOf(
  path: string,
  iggy: IggyWalDecision,
  residue: WalResidue | null,
  tornTailReported: boolean,
  loss: CommittedOpsLoss | null,
): BootForecastEntry[] {
  const forecast: BootForecastEntry[] = [];
  if (iggy.scan === "refuse") {
    forecast.push({ effect: "refuse-boot", path, destructive: false, detail: `the metadata WAL scan refuses: ${iggy.reason}` });
    return forecast;
  }
  if (iggy.truncateFromOp !== null) {
    forecast.push({
      effect: "truncate-wal-from-op",
      path,
      destructive: true,
      detail: `replay stops at op ${iggy.truncateFromOp} (gap or chain break) and rewrites the WAL without it and every later op: ${formatCount(iggy.opsLost)} op${iggy.opsLost === 1 ? "" : "s"} lost`,
    });
  }
  if (iggy.scan === "truncate-tail") {
    // Harmless only where segscan itself calls those bytes a torn tail (not where they may hold a committed op, N1.1).
    const provenTorn = tornTailReported && residue !== null && residue.damagePosition === iggy.position;
    forecast.push({ effect: "truncate-wal-tail", path, destructive: !provenTorn, detail: iggy.reason });
  }
  if (loss !== null) forecast.push(committedOpsForecast(path, loss));
  return forecast;
}

/** docs/node.md N1 replay order: the entries above `snapshotOp` sorted by op, the later copy (in file order) of a duplicate winning. */
function replayOrder(entries: readonly WalEntry[], snapshotOp: bigint): WalEntry[] {
  const byOp = new Map<bigint, WalEntry>();
  for (const entry of entries) byOp.set(entry.op, entry);
  return [...byOp.values()].filter((entry) => entry.op > snapshotOp).sort((a, b) => (a.op < b.op ? -1 : a.op > b.op ? 1 : 0));
}

/**
 * Where replay stops (docs/node.md N1): the index of the first entry that is
 * not the next op (a gap) or does not chain to the one before it (both
 * checksums known, parent differs). Null when replay runs to the end.
 */
function firstReplayBreak(replay: readonly WalEntry[]): { index: number; kind: "gap" | "chain" } | null {
  for (let index = 1; index < replay.length; index++) {
    const prev = replay[index - 1];
    const entry = replay[index];
    assert(prev !== undefined && entry !== undefined, "index - 1 and index lie inside the replay");
    if (entry.op !== prev.op + 1n) return { index, kind: "gap" };
    if (prev.checksum !== 0n && entry.checksum !== 0n && entry.parent !== prev.checksum) return { index, kind: "chain" };
  }
  return null;
}
