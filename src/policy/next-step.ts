/**
 * What the operator does next (docs/repair.md §6.4): one line per partition
 * and per node finding, the same words in the text report, the JSON
 * (`nextStep`) and the HTML page. Pure functions of the report: a partition's
 * line is chosen from its verdict, its action, its refusal, the replica count
 * and its scope of loss (docs/recovery.md §3.7); a node finding's from its code,
 * severity and fields. A step that names a command carries it as an argv array
 * with the real path (`command`) and prints it shell-quoted in its line
 * (`shellQuote`, src/domain/command.ts), so the line can be pasted as it is.
 */
import { assert } from "../assert.js";
import { shellQuote } from "../domain/command.js";
import { formatCount } from "../domain/numbers.js";
import type { NodeFinding } from "../domain/node.js";
import type { PartitionReport, PartitionScopeRange, SegmentReport } from "../domain/scan.js";
import { decideSalvage } from "./salvage.js";
import { neverAcknowledgedClaim, provesNeverAcknowledged } from "./torn-evidence.js";

/** docs/repair.md §6.4: what the operator does next. */
export interface NextStep {
  /** One line; the command it names (if any) is in it shell-quoted, pasteable as it is. */
  text: string;
  /** The command the line names as an argv array (`["segscan", "repair", "/var/lib/iggy", "--apply"]`), or null when it names none. */
  command: string[] | null;
}

/** The program name every command starts with. */
const SEGSCAN = "segscan";

/** A step of words alone. */
const says = (text: string): NextStep => ({ text, command: null });

/** A step naming `command`: the words before it, the command shell-quoted, the words after it. */
function runs(before: string, command: string[], after: string): NextStep {
  return { text: `${before}${shellQuote(command)}${after}`, command };
}

/** docs/repair.md §6.4: the one hint that the cluster, not this node, knows whether a peer holds what this copy lacks. */
export const CHECK_WITH_FLEET = "check with `segscan fleet`";

/** The short form of a step: its words up to the end of the command it names; the whole line when it names none. */
export function nextStepShort(step: NextStep): string {
  if (step.command === null) return step.text;
  const quoted = shellQuote(step.command);
  const at = step.text.indexOf(quoted);
  return at < 0 ? step.text : step.text.slice(0, at + quoted.length);
}

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
  return `${formatCount(bytes)} byte${bytes === 1 ? "" : "s"}`;
}

/** The partition fields the next step is chosen from. */
export type NextStepInput = Pick<PartitionReport, "path" | "verdict" | "action" | "refusal" | "error" | "scope"> & {
  /** One `.log` scanned alone: salvage takes its partition dir. */
  singleSegment?: boolean;
  budget?: Pick<PartitionReport["budget"], "limitUnits">;
  /** docs/repair.md §6.6: a clean partition's next step is its first finding's (a salvage's recorded loss). */
  findings?: readonly Pick<PartitionReport["findings"][number], "nextStep" | "nextCommand">[];
  segments: readonly Pick<SegmentReport, "startOffset" | "outcome" | "refusal" | "scope" | "endOffset" | "walkedSize">[];
};

/** The largest `--probe-budget` the CLI takes (src/cli/scan-flags.ts): a suggested budget never exceeds it. */
const MAX_SUGGESTED_BUDGET_UNITS = Number.MAX_SAFE_INTEGER - 2 * 64 * 1024 * 1024;

/** The flags that make a re-scan see what this one saw: `--replicas` decides the actions (docs/repair.md §6.1). */
function replicaFlags(replicaCount: number): string[] {
  return replicaCount > 1 ? ["--replicas", String(replicaCount)] : [];
}

/** `segscan scan <path> --probe-budget <twice the limit>`: a budget refusal's re-scan. */
function largerBudgetScan(partition: NextStepInput, limitUnits: number, replicaCount: number): string[] {
  const doubled = Math.min(Math.max(2 * limitUnits, 1), MAX_SUGGESTED_BUDGET_UNITS);
  return [SEGSCAN, "scan", partition.path, "--probe-budget", String(doubled), ...replicaFlags(replicaCount)];
}

/** The directory `segscan salvage` takes: the partition dir (a lone `.log`'s parent). */
function salvageDir(partition: NextStepInput): string {
  if (partition.singleSegment !== true) return partition.path;
  const at = partition.path.lastIndexOf("/");
  return at <= 0 ? "/" : partition.path.slice(0, at);
}

/**
 * A clean partition's step: nothing, unless its preserve dir records something
 * beside its bytes (docs/repair.md §6.6), whose finding's step comes first.
 */
function cleanStep(partition: NextStepInput): NextStep {
  const finding = partition.findings?.[0];
  if (finding === undefined) return says("nothing to do: every byte is proven");
  return { text: finding.nextStep, command: finding.nextCommand };
}

/**
 * docs/repair.md §6.4: the partition's next step. `replicaCount` is the scan's
 * `--replicas` (the action already follows from it). One node cannot know
 * whether a peer holds what its copy lacks, so with replicas the words say
 * "if a peer holds …" and point at `segscan fleet`, never "a replica holds".
 */
export function partitionNext(partition: NextStepInput, replicaCount: number): NextStep {
  assert(Number.isInteger(replicaCount) && replicaCount >= 1, `a replica count is a positive integer, got ${replicaCount}`);
  switch (partition.verdict) {
    case "clean":
      return cleanStep(partition);
    case "failed":
      return runs(
        `retry: fix what stopped the scan (${partition.error?.code ?? "a read error"}), then scan again: `,
        [SEGSCAN, "scan", partition.path, ...replicaFlags(replicaCount)],
        "; nothing was concluded or changed",
      );
    case "repairable":
      return repairStep(partition, replicaCount);
    case "refused":
      return refusedStep(partition, replicaCount);
  }
}

/** docs/repair.md §6.4: the partition's next step as one line (`partitionNext`'s words). */
export function partitionNextStep(partition: NextStepInput, replicaCount: number): string {
  return partitionNext(partition, replicaCount).text;
}

/**
 * What a repair cuts, and what the crash model concludes of it (docs/recovery.md
 * §3.7): tails that are zero-filled or a short batch were, under the crash
 * model, never acknowledged (the table's words, src/policy/torn-evidence.ts);
 * a complete last batch whose checksum fails may be a rotted acknowledged
 * batch, so the words say so and point at where those offsets may still be. A
 * repair that cuts no torn tail (it rebuilds or trims an index, or moves
 * scratch files aside) says it cuts no batch.
 */
function repairStep(partition: NextStepInput, replicaCount: number): NextStep {
  const repair = [SEGSCAN, "repair", partition.path, "--apply"];
  const torn = partition.segments
    .filter((segment) => segment.outcome === "torn-tail" || segment.outcome === "empty")
    .flatMap((segment) => segment.scope)
    .filter((range) => range.kind === "torn");
  // A torn range without evidence is doubtful too: nothing says its append never completed.
  const doubtful = torn.filter((range) => range.tornEvidence === null || !provesNeverAcknowledged(range.tornEvidence));
  if (doubtful.length === 0) {
    const evidences = torn.flatMap((range) => (range.tornEvidence === null ? [] : [range.tornEvidence]));
    if (evidences.length === 0) {
      return runs("repair: ", repair, " cuts no batch (what it replaces or moves is preserved first; segscan restore undoes it)");
    }
    const bytes = bytesWords(torn.reduce((sum, range) => sum + range.bytes, 0));
    return runs(
      "repair: ",
      repair,
      ` cuts ${bytes} of torn tail: ${neverAcknowledgedClaim(evidences)} (what it cuts or replaces is preserved first; segscan restore undoes it)`,
    );
  }
  const bytes = bytesWords(doubtful.reduce((sum, range) => sum + range.bytes, 0));
  const claimed = doubtful.filter(holdsOffsets).map((range) => offsetsText(range));
  const offsets = claimed.length === 0 ? "the offsets of the cut batch (its header does not say them)" : `offsets ${joinWords(claimed)}`;
  const why = "a last batch segscan cannot tell from a corrupted acknowledged one; preserved, and segscan restore puts it back";
  return replicaCount > 1
    ? runs("repair: ", repair, ` cuts ${bytes} (${why}); if a peer holds ${offsets} (${CHECK_WITH_FLEET}), it re-supplies them`)
    : runs(`check a backup for ${offsets}, then repair: `, repair, ` cuts ${bytes} (${why})`);
}

function refusedStep(partition: NextStepInput, replicaCount: number): NextStep {
  const { refusal, scope } = partition;
  const proven = provenWords(scope);
  if (refusal?.code === "UnverifiedResidue") {
    return runs(
      "scan again with a larger probe budget: ",
      largerBudgetScan(partition, refusal.limitUnits, replicaCount),
      `; the probe stopped at byte ${formatCount(refusal.stoppedAt)} of segment ${refusal.segment} before it settled the residue; ${proven}`,
    );
  }
  const intact = scope.filter((range) => range.kind === "intact" && holdsOffsets(range)).map((range) => offsetsText(range));
  if (partition.action === "rebuild-from-peers") {
    const lacks = lostRanges(scope);
    const what = lacks.length === 0 ? "a good copy of this partition" : joinWords(lacks);
    const after = intact.length > 0 ? ` (and ${joinWords(intact)} after the damage)` : "";
    return says(
      `if a peer holds ${what} (${CHECK_WITH_FLEET}), rebuild this partition from it, else restore it from a backup: ${proven}${after}`,
    );
  }
  if (refusal?.code === "Overlap") {
    const overlap = offsetsText({ firstOffset: refusal.nextStart, lastOffset: refusal.previousEnd });
    return says(
      `restore this partition from a backup: two segments hold offsets ${overlap}, and only the right copy may be served; keep both as evidence`,
    );
  }
  const lost = lostRanges(scope);
  // A Hole the scope shows no range for (the next segment holds no offset to bound it): the refusal names the offsets.
  const chainGap =
    refusal?.code === "Hole"
      ? { firstOffset: refusal.previousEnd + 1n, lastOffset: refusal.nextStart - 1n }
      : refusal?.code === "EmptyNonTailSegment"
        ? { firstOffset: refusal.emptyStart, lastOffset: refusal.nextStart - 1n }
        : null;
  const lostWords = lost.length > 0 ? joinWords(lost) : chainGap !== null ? offsetsText(chainGap) : "no offset";
  // docs/repair.md §6.5: salvage is named only where it would act (the same decision `segscan salvage` plans from).
  const salvage = decideSalvage(partition, replicaCount);
  if (salvage.salvageable) {
    const prefix = scope[0];
    assert(prefix !== undefined, "a salvageable partition's scope starts with its proven prefix");
    const kept = [...(holdsOffsets(prefix) ? [offsetsText(prefix)] : []), ...intact];
    const dropped = salvage.segments.flatMap((segment) => segment.lost);
    const droppedOffsets = dropped.filter(holdsOffsets).map((range) => offsetsText(range));
    const recorded =
      droppedOffsets.length > 0
        ? `records ${joinWords(droppedOffsets)} as lost`
        : `drops ${bytesWords(dropped.reduce((sum, range) => sum + range.bytes, 0))} that hold no offset`;
    return runs(
      "salvage: ",
      [SEGSCAN, "salvage", salvageDir(partition), "--apply"],
      ` keeps ${joinWords(kept)} and ${recorded} (what it drops is preserved first; segscan restore undoes it); or restore the partition from a backup`,
    );
  }
  if (salvage.code === "ScopeNotMapped") {
    const limitUnits = partition.budget?.limitUnits ?? 0;
    return runs(
      "scan again with a larger probe budget: ",
      largerBudgetScan(partition, limitUnits, replicaCount),
      `; ${salvage.why.replace(/; scan again.*$/, "")}; ${proven}`,
    );
  }
  const after = intact.length > 0 ? ` (and ${joinWords(intact)} after the damage)` : "";
  return says(`restore this partition from a backup: ${proven}${after}, ${lostWords} cannot be proven; keep these files as evidence`);
}

/** The offsets of the scope's unreadable and missing ranges. */
function lostRanges(scope: readonly PartitionScopeRange[]): string[] {
  return scope.filter((range) => (range.kind === "unreadable" || range.kind === "missing") && holdsOffsets(range)).map(offsetsText);
}

// ---------------------------------------------------------------------------
// Node findings (docs/node.md N9)

const FROM_ELSEWHERE = "restore metadata/ from a replica or a backup";
const REREAD = "fix the read error and scan again; nothing was judged or changed";
const INERT = "nothing to do: the leftover file is inert and never read by the server";
/** docs/node.md N7: offset rewrites wait for a partition whose head is settled. */
const SETTLED = " once its partition is not refused";

/** `segscan repair <root> [--clamp-offsets] --apply`. */
const repairNode = (root: string, clamp = false): string[] => [SEGSCAN, "repair", root, ...(clamp ? ["--clamp-offsets"] : []), "--apply"];

/** "op 52" or "ops 52..55": the committed ops a `WalCommittedOpsLost` finding names (from its fields), or "the committed ops". */
function committedOpsWords(finding: NodeFinding): string {
  const { provenOp, commitMax } = finding;
  if (typeof provenOp !== "bigint" || typeof commitMax !== "bigint") return "the committed ops";
  const first = provenOp + 1n;
  return first === commitMax ? `op ${first}` : `ops ${first}..${commitMax}`;
}

/** A node finding's next step, by code, given the node root it was found under; a code not listed falls back on its severity. */
const NODE_NEXT_STEPS: Record<string, (finding: NodeFinding, root: string) => NextStep> = {
  WalTornTail: (finding, root) =>
    finding.tornEvidence === "zero-filled" || finding.tornEvidence === "short-entry"
      ? runs(
          "repair: ",
          repairNode(root),
          ` cuts the torn tail: ${neverAcknowledgedClaim([finding.tornEvidence], "entry")} (preserved; segscan restore undoes it)`,
        )
      : runs(
          "check a replica or a backup for the last op, then repair: ",
          repairNode(root),
          " cuts a tail segscan cannot tell from a corrupted acknowledged entry (preserved; segscan restore puts it back)",
        ),
  WalCommittedOpsLost: (finding) =>
    finding.severity === "refused"
      ? says("restore metadata/ from a backup that holds the committed ops, or accept their loss: the server's boot runs without them")
      : says(
          `if a peer holds ${committedOpsWords(finding)} (${CHECK_WITH_FLEET}), it re-supplies them when this replica rejoins; ` +
            "if none does, restore metadata/ from a backup that holds them, or accept their loss",
        ),
  WalInteriorDamage: () => says(`keep metadata/ as evidence and ${FROM_ELSEWHERE}: verified ops follow the damage, so nothing may be cut`),
  WalUnverifiedResidue: () => says("scan again with a larger --probe-budget; until the residue is settled, change nothing"),
  WalGap: () => says(`do not start the server on this WAL (its boot deletes every op after the gap): ${FROM_ELSEWHERE}`),
  WalChainBreak: () => says(`do not start the server on this WAL (its boot deletes every op after the break): ${FROM_ELSEWHERE}`),
  WalSnapshotHole: () => says(`${FROM_ELSEWHERE}: the boot would replay over the missing ops`),
  WalDuplicateOp: () => says(`${FROM_ELSEWHERE}: the boot keeps the later of two different copies of one op`),
  WalDuplicateIdentical: () => says("nothing to do: identical copies replay the same"),
  WalUnsealed: () => says("nothing to do now: these entries replay on trust (they carry no checksum to check)"),
  WalGroupMismatch: () => says("check that this WAL belongs to this node: the server does not check"),
  WalClusterMismatch: () => says("check that this WAL belongs to this cluster: the server does not check"),
  WalTmpPresent: () => says(INERT),
  WalAbsent: () => says("nothing to do: the server creates an empty WAL at boot"),
  SnapshotUnsealed: () => says("nothing to do: the server reads it as it is, and the next checkpoint writes a sealed one"),
  SnapshotCorrupt: () => says(`${FROM_ELSEWHERE}: the server cannot load this snapshot`),
  SnapshotTmpPresent: () => says(INERT),
  SnapshotTooLarge: () => says("check the snapshot by other means: it is larger than segscan decodes, so it was not judged"),
  CheckpointAheadOfSnapshot: () => says(`${FROM_ELSEWHERE}: the superblock checkpoints a snapshot this node does not hold`),
  CheckpointMismatch: () => says(`${FROM_ELSEWHERE}: the superblock checkpointed another snapshot than this one`),
  SuperblockUnreadable: () => says(`${FROM_ELSEWHERE}: the server does not fall back from a slot that does not verify`),
  SuperblockUndecodable: () => says(`${FROM_ELSEWHERE}: the server cannot decode this superblock`),
  SuperblockTmpPresent: () => says(INERT),
  PartitionSuperblockUnreadable: () =>
    says("rebuild this partition from a replica that holds it, or restore it from a backup: the boot tombstones it"),
  OffsetFrontierAhead: () => says("nothing to do: the offsets below the frontier are never handed out again"),
  MetadataMissing: () => says("restore metadata/ from a backup before starting the server: without it none of these partitions is served"),
  OffsetAheadOfHead: (_finding, root) =>
    runs(
      "",
      repairNode(root, true),
      ` rewrites it to the head (preserved)${SETTLED}; or leave it and the consumer skips the offsets minted again`,
    ),
  OffsetOnEmptyPartition: (_finding, root) =>
    runs("", repairNode(root, true), ` moves it aside (preserved)${SETTLED}, so the consumer does not skip the first new message`),
  OffsetChecksumTorn: (_finding, root) =>
    runs("", repairNode(root, true), ` writes the whole record again with the same offset (preserved)${SETTLED}`),
  OffsetCorrupt: (_finding, root) =>
    runs("", repairNode(root), " keeps a copy as evidence; tell the consumer's owner: at the next boot it restarts from offset 0"),
  OffsetUnsealed: () => says("nothing to do: a legacy record, read as it is"),
  OffsetTorn: () => says("tell the consumer's owner: at the next boot it restarts from offset 0"),
  OffsetOversized: () => says("nothing to do: the server ignores it; remove it by hand if nothing else owns it"),
  OffsetNameInvalid: () => says("nothing to do: the server ignores it; remove it by hand if nothing else owns it"),
  OffsetSubdirectory: () => says("nothing to do: the server ignores it; remove it by hand if nothing else owns it"),
  OffsetDuplicateName: () => says("keep one of the two names by hand: which one the server reads depends on the directory order"),
  OffsetGroupUnknown: () => says("nothing to do: the server reclaims it at runtime"),
  PurgePending: () => says("nothing to do: the next boot completes the purge the metadata asked for"),
  PurgeGenerationLost: () =>
    says("restore purge.gen from a backup before starting the server, or accept that the boot purges this partition again"),
  PurgeGenerationAhead: () => says("restore purge.gen from a replica or a backup: with this one the server would skip future purges"),
  PurgeRevisionStale: () => says("nothing to do: for information"),
  PurgeGenerationUnchecked: () => says("nothing to do: for information"),
  PurgeGenerationUnmatched: () => says("nothing to do: for information"),
  PurgeGenerationOversized: () => says("check purge.gen: the server reads only its first 16 bytes"),
  FencedDir: () => says("nothing to do: evidence the server quarantined; keep it until the incident is closed"),
  FencedDirNameInvalid: () => says("nothing to do: the server never reads it; remove it by hand once nothing needs it"),
  OrphanPartitionDir: () =>
    says("nothing to do now: the metadata does not list it, so it is never served; keep it until you know where it came from"),
  MissingPartitionDir: (finding) =>
    finding.severity === "refused"
      ? says("restore this partition dir from a replica or a backup before starting the server: the boot recreates it empty")
      : says("nothing to do: the boot recreates it empty, and its topic counts no message"),
  CrossCheckInconclusive: () => says("nothing to do: scan again after the next snapshot to check this stream's dirs"),
};

/** Every node finding code with a next step of its own (the read failures share one: `nodeFindingNextStep`). */
export const NODE_CODES_WITH_NEXT_STEPS: readonly string[] = Object.keys(NODE_NEXT_STEPS);

/** The next step of a finding whose code has no line of its own, by severity. */
function bySeverity(finding: NodeFinding, root: string): NextStep {
  switch (finding.severity) {
    case "clean":
      return says("nothing to do");
    case "info":
      return says("nothing to do: for information");
    case "warn":
      return says("nothing to do now: read the message and decide");
    case "repairable":
      return runs("repair: ", repairNode(root), " (what it changes is preserved first)");
    case "refused":
      return says("keep these files as evidence and restore them from a replica or a backup");
    case "failed":
      return says(REREAD);
  }
}

/** docs/repair.md §6.4: a node finding's next step (docs/node.md N9); `root` is the node root it was found under. */
export function nodeFindingNext(finding: NodeFinding, root: string): NextStep {
  if (finding.code.endsWith("ReadFailure") || finding.code === "StreamsDirUnreadable" || finding.code === "OffsetsDirUnreadable") {
    return says(REREAD);
  }
  return (NODE_NEXT_STEPS[finding.code] ?? bySeverity)(finding, root);
}

/** docs/repair.md §6.4: a node finding's next step as one line (`nodeFindingNext`'s words). */
export function nodeFindingNextStep(finding: NodeFinding, root: string): string {
  return nodeFindingNext(finding, root).text;
}
