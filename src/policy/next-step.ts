/**
 * What the operator does next (docs/repair.md §6.4): one line per partition
 * and per node finding, the same words in the text report, the JSON
 * (`nextStep`) and the HTML page. Pure functions of the report: a partition's
 * line is chosen from its verdict, its action, its refusal, the replica count
 * and its scope of loss (docs/recovery.md §3.7); a node finding's from its code,
 * severity and fields. Commands name their argument as a placeholder
 * (`<partition>`, `<node root>`): the path is printed beside the line.
 */
import { assert } from "../assert.js";
import type { NodeFinding } from "../domain/node.js";
import type { PartitionReport, PartitionScopeRange, SegmentReport } from "../domain/scan.js";
import { decideSalvage } from "./salvage.js";

/** The offsets of a range as an operator reads them: `670..674`, `670`, `670..unknown` (no survivor bounds them), or `no offset`. */
export function offsetsText(range: Pick<PartitionScopeRange, "firstOffset" | "lastOffset">): string {
  const { firstOffset, lastOffset } = range;
  if (firstOffset === null) return lastOffset === null ? "no offset" : `..${lastOffset}`;
  if (lastOffset === null) return `${firstOffset}..unknown`;
  return firstOffset === lastOffset ? `${firstOffset}` : `${firstOffset}..${lastOffset}`;
}

/** "a", "a and b", "a, b and c". */
function joinWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

const holdsOffsets = (range: PartitionScopeRange): boolean => range.firstOffset !== null || range.lastOffset !== null;

/** "segscan proves 0..669 here" from the partition's proven range. */
function provenWords(scope: readonly PartitionScopeRange[]): string {
  const proven = scope[0];
  return proven !== undefined && proven.kind === "proven" && holdsOffsets(proven)
    ? `segscan proves ${offsetsText(proven)} here`
    : "segscan proves no offset here";
}

/** 1536 → "1,536 bytes". */
function bytesWords(bytes: number): string {
  return `${bytes.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",")} byte${bytes === 1 ? "" : "s"}`;
}

/** The partition fields the next step is chosen from. */
export type NextStepInput = Pick<PartitionReport, "verdict" | "action" | "refusal" | "error" | "scope"> & {
  /** docs/repair.md §6.6: a clean partition's next step is its first finding's (a salvage's recorded loss). */
  findings?: readonly Pick<PartitionReport["findings"][number], "nextStep">[];
  segments: readonly Pick<SegmentReport, "startOffset" | "outcome" | "refusal" | "scope" | "endOffset" | "walkedSize">[];
};

/**
 * docs/repair.md §6.4: the partition's next step. `replicaCount` is the scan's
 * `--replicas` (the action already follows from it; the words name a replica
 * only where one exists).
 */
export function partitionNextStep(partition: NextStepInput, replicaCount: number): string {
  assert(Number.isInteger(replicaCount) && replicaCount >= 1, `a replica count is a positive integer, got ${replicaCount}`);
  switch (partition.verdict) {
    case "clean":
      return partition.findings?.[0]?.nextStep ?? "nothing to do: every byte is proven";
    case "failed":
      return `retry: fix what stopped the scan (${partition.error?.code ?? "a read error"}) and scan again; nothing was concluded or changed`;
    case "repairable":
      return repairStep(partition, replicaCount);
    case "refused":
      return refusedStep(partition, replicaCount);
  }
}

/**
 * A repair removes nothing durable when every tail it cuts is zero-filled or a
 * short batch (docs/recovery.md §3.7); a complete last batch whose checksum fails
 * may be a rotted acknowledged batch, so the words say so and point at where
 * those offsets may still be.
 */
function repairStep(partition: NextStepInput, replicaCount: number): string {
  const doubtful = partition.segments
    .filter((segment) => segment.outcome === "torn-tail" || segment.outcome === "empty")
    .flatMap((segment) => segment.scope)
    .filter((range) => range.kind === "torn" && (range.tornEvidence === "complete-batch" || range.tornEvidence === "unverifiable"));
  if (doubtful.length === 0) {
    return "repair: segscan repair <partition> --apply removes nothing durable (what it cuts or replaces is preserved first; segscan restore undoes it)";
  }
  const bytes = bytesWords(doubtful.reduce((sum, range) => sum + range.bytes, 0));
  const claimed = doubtful.filter(holdsOffsets).map((range) => offsetsText(range));
  const offsets = claimed.length === 0 ? "the offsets of the cut batch (its header does not say them)" : `offsets ${joinWords(claimed)}`;
  const why = "a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back";
  return replicaCount > 1
    ? `repair: segscan repair <partition> --apply cuts ${bytes} (${why}); a replica holding ${offsets} re-supplies them`
    : `check a backup for ${offsets}, then repair: segscan repair <partition> --apply cuts ${bytes} (${why})`;
}

function refusedStep(partition: NextStepInput, replicaCount: number): string {
  const { refusal, scope } = partition;
  const proven = provenWords(scope);
  if (refusal?.code === "UnverifiedResidue") {
    return `scan again with a larger --probe-budget: the probe stopped at byte ${refusal.stoppedAt} of segment ${refusal.segment} before it settled the residue; ${proven}`;
  }
  const intact = scope.filter((range) => range.kind === "intact" && holdsOffsets(range)).map((range) => offsetsText(range));
  if (partition.action === "rebuild-from-peers") {
    return `rebuild this partition from a replica: ${proven}${intact.length > 0 ? ` (and ${joinWords(intact)} after the damage)` : ""}`;
  }
  if (refusal?.code === "Overlap") {
    const overlap = offsetsText({ firstOffset: refusal.nextStart, lastOffset: refusal.previousEnd });
    return `restore this partition from a backup: two segments hold offsets ${overlap}, and only the right copy may be served; keep both as evidence`;
  }
  const lost = scope.filter((range) => (range.kind === "unreadable" || range.kind === "missing") && holdsOffsets(range));
  // A Hole the scope shows no range for (the next segment holds no offset to bound it): the refusal names the offsets.
  const chainGap =
    refusal?.code === "Hole"
      ? { firstOffset: refusal.previousEnd + 1n, lastOffset: refusal.nextStart - 1n }
      : refusal?.code === "EmptyNonTailSegment"
        ? { firstOffset: refusal.emptyStart, lastOffset: refusal.nextStart - 1n }
        : null;
  const lostWords =
    lost.length > 0 ? joinWords(lost.map((range) => offsetsText(range))) : chainGap !== null ? offsetsText(chainGap) : "no offset";
  // docs/repair.md §6.5: salvage is named only where it would act (the same decision `segscan salvage` plans from).
  const salvage = decideSalvage(partition, replicaCount);
  if (salvage.salvageable) {
    const kept = [...(holdsOffsets(scope[0]!) ? [offsetsText(scope[0]!)] : []), ...intact];
    const dropped = salvage.segments.flatMap((segment) => segment.lost);
    const droppedOffsets = dropped.filter(holdsOffsets).map((range) => offsetsText(range));
    const recorded =
      droppedOffsets.length > 0
        ? `records ${joinWords(droppedOffsets)} as lost`
        : `drops ${bytesWords(dropped.reduce((sum, range) => sum + range.bytes, 0))} that hold no offset`;
    return (
      `salvage: segscan salvage <partition> --apply keeps ${joinWords(kept)} and ${recorded} ` +
      "(what it drops is preserved first; segscan restore undoes it); or restore the partition from a backup"
    );
  }
  if (salvage.code === "ScopeNotMapped")
    return `scan again with a larger --probe-budget: ${salvage.why.replace(/; scan again.*$/, "")}; ${proven}`;
  const after = intact.length > 0 ? ` (and ${joinWords(intact)} after the damage)` : "";
  return `restore this partition from a backup: ${proven}${after}, ${lostWords} cannot be proven; keep these files as evidence`;
}

// ---------------------------------------------------------------------------
// Node findings (docs/node.md N9)

const FROM_ELSEWHERE = "restore metadata/ from a replica or a backup";
const REREAD = "fix the read error and scan again; nothing was judged or changed";
const INERT = "nothing to do: the leftover file is inert and never read by the server";
/** docs/node.md N7: offset rewrites wait for a partition whose head is settled. */
const SETTLED = " once its partition is not refused";

/** A node finding's next step, by code; a code not listed falls back on its severity. */
const NODE_NEXT_STEPS: Record<string, (finding: NodeFinding) => string> = {
  WalTornTail: (finding) =>
    finding.tornEvidence === "zero-filled" || finding.tornEvidence === "short-entry"
      ? "repair: segscan repair <node root> --apply cuts the torn tail, which under the crash model was never acknowledged (preserved; segscan restore undoes it)"
      : "check a replica or a backup for the last op, then repair: segscan repair <node root> --apply cuts a tail segscan cannot tell from a corrupted acknowledged entry (preserved; segscan restore puts it back)",
  WalCommittedOpsLost: (finding) =>
    finding.severity === "refused"
      ? "restore metadata/ from a backup that holds the committed ops, or accept their loss: the server's boot runs without them"
      : "nothing to do here: the peers re-supply the committed ops when this replica rejoins",
  WalInteriorDamage: () => `keep metadata/ as evidence and ${FROM_ELSEWHERE}: verified ops follow the damage, so nothing may be cut`,
  WalUnverifiedResidue: () => "scan again with a larger --probe-budget; until the residue is settled, change nothing",
  WalGap: () => `do not start the server on this WAL (its boot deletes every op after the gap): ${FROM_ELSEWHERE}`,
  WalChainBreak: () => `do not start the server on this WAL (its boot deletes every op after the break): ${FROM_ELSEWHERE}`,
  WalSnapshotHole: () => `${FROM_ELSEWHERE}: the boot would replay over the missing ops`,
  WalDuplicateOp: () => `${FROM_ELSEWHERE}: the boot keeps the later of two different copies of one op`,
  WalDuplicateIdentical: () => "nothing to do: identical copies replay the same",
  WalUnsealed: () => "nothing to do now: these entries replay on trust (they carry no checksum to check)",
  WalGroupMismatch: () => "check that this WAL belongs to this node: the server does not check",
  WalClusterMismatch: () => "check that this WAL belongs to this cluster: the server does not check",
  WalTmpPresent: () => INERT,
  WalAbsent: () => "nothing to do: the server creates an empty WAL at boot",
  SnapshotUnsealed: () => "nothing to do: the server reads it as it is, and the next checkpoint writes a sealed one",
  SnapshotCorrupt: () => `${FROM_ELSEWHERE}: the server cannot load this snapshot`,
  SnapshotTmpPresent: () => INERT,
  SnapshotTooLarge: () => "check the snapshot by other means: it is larger than segscan decodes, so it was not judged",
  CheckpointAheadOfSnapshot: () => `${FROM_ELSEWHERE}: the superblock checkpoints a snapshot this node does not hold`,
  CheckpointMismatch: () => `${FROM_ELSEWHERE}: the superblock checkpointed another snapshot than this one`,
  SuperblockUnreadable: () => `${FROM_ELSEWHERE}: the server does not fall back from a slot that does not verify`,
  SuperblockUndecodable: () => `${FROM_ELSEWHERE}: the server cannot decode this superblock`,
  SuperblockTmpPresent: () => INERT,
  PartitionSuperblockUnreadable: () => "rebuild this partition from a replica or restore it from a backup: the boot tombstones it",
  OffsetFrontierAhead: () => "nothing to do: the offsets below the frontier are never handed out again",
  MetadataMissing: () => "restore metadata/ from a backup before starting the server: without it none of these partitions is served",
  OffsetAheadOfHead: () =>
    `segscan repair <node root> --clamp-offsets --apply rewrites it to the head (preserved)${SETTLED}; or leave it and the consumer skips the offsets minted again`,
  OffsetOnEmptyPartition: () =>
    `segscan repair <node root> --clamp-offsets --apply moves it aside (preserved)${SETTLED}, so the consumer does not skip the first new message`,
  OffsetChecksumTorn: () =>
    `segscan repair <node root> --clamp-offsets --apply writes the whole record again with the same offset (preserved)${SETTLED}`,
  OffsetCorrupt: () =>
    "segscan repair <node root> --apply keeps a copy as evidence; tell the consumer's owner: at the next boot it restarts from offset 0",
  OffsetUnsealed: () => "nothing to do: a legacy record, read as it is",
  OffsetTorn: () => "tell the consumer's owner: at the next boot it restarts from offset 0",
  OffsetOversized: () => "nothing to do: the server ignores it; remove it by hand if nothing else owns it",
  OffsetNameInvalid: () => "nothing to do: the server ignores it; remove it by hand if nothing else owns it",
  OffsetSubdirectory: () => "nothing to do: the server ignores it; remove it by hand if nothing else owns it",
  OffsetDuplicateName: () => "keep one of the two names by hand: which one the server reads depends on the directory order",
  OffsetGroupUnknown: () => "nothing to do: the server reclaims it at runtime",
  PurgePending: () => "nothing to do: the next boot completes the purge the metadata asked for",
  PurgeGenerationLost: () =>
    "restore purge.gen from a backup before starting the server, or accept that the boot purges this partition again",
  PurgeGenerationAhead: () => "restore purge.gen from a replica or a backup: with this one the server would skip future purges",
  PurgeRevisionStale: () => "nothing to do: for information",
  PurgeGenerationUnchecked: () => "nothing to do: for information",
  PurgeGenerationUnmatched: () => "nothing to do: for information",
  PurgeGenerationOversized: () => "check purge.gen: the server reads only its first 16 bytes",
  FencedDir: () => "nothing to do: evidence the server quarantined; keep it until the incident is closed",
  FencedDirNameInvalid: () => "nothing to do: the server never reads it; remove it by hand once nothing needs it",
  OrphanPartitionDir: () =>
    "nothing to do now: the metadata does not list it, so it is never served; keep it until you know where it came from",
  MissingPartitionDir: (finding) =>
    finding.severity === "refused"
      ? "restore this partition dir from a replica or a backup before starting the server: the boot recreates it empty"
      : "nothing to do: the boot recreates it empty, and its topic counts no message",
  CrossCheckInconclusive: () => "nothing to do: scan again after the next snapshot to check this stream's dirs",
};

/** Every node finding code with a next step of its own (the read failures share one: `nodeFindingNextStep`). */
export const NODE_CODES_WITH_NEXT_STEPS: readonly string[] = Object.keys(NODE_NEXT_STEPS);

/** The next step of a finding whose code has no line of its own, by severity. */
function bySeverity(finding: NodeFinding): string {
  switch (finding.severity) {
    case "clean":
      return "nothing to do";
    case "info":
      return "nothing to do: for information";
    case "warn":
      return "nothing to do now: read the message and decide";
    case "repairable":
      return "repair: segscan repair <node root> --apply (what it changes is preserved first)";
    case "refused":
      return "keep these files as evidence and restore them from a replica or a backup";
    case "failed":
      return REREAD;
  }
}

/** docs/repair.md §6.4: a node finding's next step (docs/node.md N9). */
export function nodeFindingNextStep(finding: NodeFinding): string {
  if (finding.code.endsWith("ReadFailure") || finding.code === "StreamsDirUnreadable" || finding.code === "OffsetsDirUnreadable") {
    return REREAD;
  }
  return (NODE_NEXT_STEPS[finding.code] ?? bySeverity)(finding);
}
