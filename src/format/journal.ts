/**
 * The repair journal's line layout (docs/repair.md §6.2 step 4, §6.6): one JSON
 * object per line, written and fsynced one line at a time by repair, salvage,
 * restore and forget (src/repair/journal.ts), and read by the scan (through
 * src/io/journal.ts) for what a salvage recorded as lost (§6.6). One layout,
 * one parser, so the writer and every reader agree on what a line means.
 *
 * This layer owns the envelope (`v`, `run`, `seq`, the record kinds) and what
 * the scan reads (an intent's `lost` ranges); an intent's `op` belongs to its
 * step kind (src/repair/steps/), whose schema repair checks it against. Every
 * line carries `v`: a line of another version is refused by name, never read
 * as this one's.
 */

/** The active journal of a target, in its preserve dir `<realpath(dir)>.segscan`. */
export const JOURNAL_NAME = "journal.jsonl";
/** docs/repair.md §6.2: version 2 names each op by its step kind; a journal of version 1 is refused, naming its version. */
export const JOURNAL_VERSION = 2;
/** Suffix of the preserve directory beside a partition (or metadata) directory (docs/repair.md §6.2 rule 5). */
export const PRESERVE_DIR_SUFFIX = ".segscan";
/** A journal whose every step a restore undid: renamed `journal.<n>.restored.jsonl` (docs/repair.md §6.2). */
export const RESTORED_JOURNAL_PATTERN = /^journal\.(\d+)\.restored\.jsonl$/;

/** Whether `name` is a journal file of a preserve dir: the active one or a restored one. */
export function isJournalName(name: string): boolean {
  return name === JOURNAL_NAME || RESTORED_JOURNAL_PATTERN.test(name);
}

/** What the bytes of a dropped torn range prove (docs/recovery.md §3.7), as the scan report words it. */
export type JournalTornEvidence = "zero-filled" | "short-batch" | "complete-batch" | "unverifiable";

/**
 * docs/repair.md §6.5, §6.6: one byte range of a salvaged segment's old
 * `.log`, as the scan's scope of loss (docs/recovery.md §3.7) had it. An
 * intent's `lost` ranges are what its step gives up: the scan reports them
 * until a restore undoes the step or the operator clears them. (The repair
 * plan's `SalvageRange` schema, src/repair/steps/step.ts, writes this shape.)
 */
export interface JournalLostRange {
  /** The segment's start offset (decimal). */
  segment: string;
  /** Kept: `proven` or `intact`; lost: `unreadable` or `torn`. */
  kind: "proven" | "intact" | "unreadable" | "torn";
  /** Byte positions in the old `.log`: `[startPosition, endPosition)`. */
  startPosition: number;
  endPosition: number;
  bytes: number;
  /** The offsets the range holds or hides (decimal); null where it holds none or they are unknown. */
  firstOffset: string | null;
  lastOffset: string | null;
  messages: number | null;
  tornEvidence: JournalTornEvidence | null;
}

/**
 * docs/heal.md: one range of offsets a heal filled from a peer, as its run's
 * `begin` record names it (a scan closes the salvage losses it covers).
 */
export interface JournalHealRange {
  /** The segment's start offset (decimal). */
  segment: string;
  kind: string;
  /** The offsets filled (decimal). */
  firstOffset: string;
  lastOffset: string;
}

/**
 * An intent's op as this layer reads it: its step kind (docs/repair.md §6.2).
 * What else it holds is the step kind's (src/repair/steps/), and repair checks
 * it against that kind's schema before acting on it.
 */
export interface JournalOpHead {
  kind: string;
}

interface RecordBase {
  v: typeof JOURNAL_VERSION;
  run: string;
  seq: number;
}

/** An intent named by its run and sequence number. */
export interface IntentRef {
  run: string;
  seq: number;
}

export type JournalRecord<Op extends JournalOpHead = JournalOpHead> =
  /**
   * `partition` is the target's path (a partition dir, a lone `.log`, or
   * `metadata/`), `target` its kind; `salvage` (a salvage run only,
   * docs/repair.md §6.5) what the run keeps and the offsets it records as lost.
   */
  | (RecordBase & {
      kind: "begin";
      time: string;
      partition: string;
      target: "partition" | "metadata";
      plan: Record<string, number>;
      salvage?: { kept: JournalLostRange[]; lost: JournalLostRange[] };
      /** A heal run only (docs/heal.md): the peer it copied from and the offsets it filled. */
      heal?: { peer: string; ranges: JournalHealRange[] };
    })
  /** Informational: bytes copied into the preserve dir. */
  | (RecordBase & { kind: "preserved"; source: string; from: number; bytes: number; xxh3: string; file: string })
  /** Written and fsynced BEFORE the step; `lost` what the step gives up (empty but for a salvage's log rewrite, docs/repair.md §6.6). */
  | (RecordBase & { kind: "intent"; op: Op; lost: JournalLostRange[] })
  /** Written after the step is durable; `seq` is the intent's. */
  | (RecordBase & { kind: "done" })
  | (RecordBase & { kind: "end"; time: string })
  /** Written by restore once the intent `of` is undone, so a restore re-run after a crash skips it. */
  | (RecordBase & { kind: "undone"; of: IntentRef })
  /**
   * Written by `segscan forget --apply` (docs/repair.md §6.7) BEFORE it deletes
   * anything: the runs it closes (restore no longer undoes their steps) and the
   * preserved files (names in the preserve dir) it then deletes.
   */
  | (RecordBase & { kind: "forgotten"; time: string; runs: string[]; files: string[] })
  /**
   * Written by `segscan forget --lost-offsets --apply` (docs/repair.md §6.6):
   * the operator cleared the salvage losses the intents `of` recorded, so a
   * scan no longer reports them.
   */
  | (RecordBase & { kind: "loss-cleared"; time: string; of: IntentRef[] });

type Body<R> = R extends RecordBase ? Omit<R, keyof RecordBase> : never;
export type JournalRecordBody<Op extends JournalOpHead = JournalOpHead> = Body<JournalRecord<Op>>;

/** A journal record and the 1-based line of the journal it was read from. */
export interface JournalEntry<Op extends JournalOpHead = JournalOpHead> {
  record: JournalRecord<Op>;
  line: number;
}

/**
 * A line of a journal that may not be skipped and cannot be trusted; `line` is
 * 1-based. `version` is set when the line is a record of another journal
 * version: it is not misread as this one's.
 */
export class JournalLayoutError extends Error {
  override name = "JournalLayoutError";
  constructor(
    readonly line: number,
    readonly why: string,
    readonly version?: number,
  ) {
    super(`line ${line} ${why}`);
  }
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isString = (v: unknown): v is string => typeof v === "string";
const isDecimal = (v: unknown): boolean => typeof v === "string" && /^(0|[1-9][0-9]*)$/.test(v);
const isDecimalOrNull = (v: unknown): boolean => v === null || isDecimal(v);
const isIntentRef = (v: unknown): v is IntentRef =>
  v !== null && typeof v === "object" && isString((v as IntentRef).run) && typeof (v as IntentRef).seq === "number";

/** A lost range as the scan reads it back: its segment and offsets must be decimal (or null), its sizes numbers. */
function isLostRange(v: unknown): v is JournalLostRange {
  if (v === null || typeof v !== "object") return false;
  const r = v as Record<string, unknown>;
  return (
    isDecimal(r.segment) &&
    (r.kind === "unreadable" || r.kind === "torn" || r.kind === "proven" || r.kind === "intact") &&
    isNumber(r.startPosition) &&
    isNumber(r.endPosition) &&
    isNumber(r.bytes) &&
    isDecimalOrNull(r.firstOffset) &&
    isDecimalOrNull(r.lastOffset) &&
    (r.messages === null || isNumber(r.messages))
  );
}

function isRecord(value: unknown): value is JournalRecord {
  if (value === null || typeof value !== "object") return false;
  const r = value as Partial<RecordBase> & { kind?: unknown; op?: unknown };
  if (r.v !== JOURNAL_VERSION || typeof r.run !== "string" || typeof r.seq !== "number") return false;
  const fields = value as Record<string, unknown>;
  switch (r.kind) {
    case "intent":
      // The op is its step kind's to check (src/repair/steps/); what the scan reads of an intent is `lost`.
      return (
        r.op !== null &&
        typeof r.op === "object" &&
        isString((r.op as Partial<JournalOpHead>).kind) &&
        Array.isArray(fields.lost) &&
        fields.lost.every(isLostRange)
      );
    case "begin":
      return isString(fields.time) && isString(fields.partition) && (fields.target === "partition" || fields.target === "metadata");
    case "undone":
      return isIntentRef(fields.of);
    case "forgotten":
      return (
        isString(fields.time) &&
        Array.isArray(fields.runs) &&
        fields.runs.every(isString) &&
        Array.isArray(fields.files) &&
        fields.files.every(isString)
      );
    case "loss-cleared":
      return isString(fields.time) && Array.isArray(fields.of) && fields.of.every(isIntentRef);
    case "preserved":
    case "done":
    case "end":
      return true;
    default:
      return false;
  }
}

const intentKey = (run: string, seq: number): string => `${run}#${seq}`;

/**
 * Every record of a journal's text, in file order, each with its line number.
 * The journal must be whole: the only line that may fail to parse is a torn
 * LAST line (bytes after the final newline: an append cut by a crash, whose
 * intent never ran because an intent is fsynced before its step starts), and
 * it is skipped. Any other bad line, or a `done`, `undone` or `loss-cleared`
 * naming no intent written before it, throws `JournalLayoutError` with the
 * line: acting on (or reporting from) a journal with a hole in it could skip
 * an undo, or a recorded loss, and still look whole.
 */
export function parseJournalText(text: string): JournalEntry[] {
  const lines = text.split("\n");
  // The text after the last newline ("" for a whole journal) is a torn append: skipped, never acted on.
  lines.pop();
  const entries: JournalEntry[] = [];
  const intents = new Set<string>();
  for (const [i, lineText] of lines.entries()) {
    const line = i + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(lineText);
    } catch {
      throw new JournalLayoutError(line, `is not a journal record (${JSON.stringify(lineText.slice(0, 60))})`);
    }
    const version = (parsed as { v?: unknown } | null)?.v;
    if (typeof version === "number" && version !== JOURNAL_VERSION) {
      const by = version < JOURNAL_VERSION ? "an earlier" : "a newer";
      throw new JournalLayoutError(
        line,
        `was written by ${by} segscan (journal version ${version}; this segscan reads version ${JOURNAL_VERSION} only): restore or forget its runs with the segscan that wrote it`,
        version,
      );
    }
    if (!isRecord(parsed)) throw new JournalLayoutError(line, `is not a journal record (${JSON.stringify(lineText.slice(0, 60))})`);
    if (parsed.kind === "intent") intents.add(intentKey(parsed.run, parsed.seq));
    if (parsed.kind === "done" && !intents.has(intentKey(parsed.run, parsed.seq))) {
      throw new JournalLayoutError(line, `marks step ${parsed.seq} of run ${parsed.run} done, but no earlier line records its intent`);
    }
    if (parsed.kind === "undone" && !intents.has(intentKey(parsed.of.run, parsed.of.seq))) {
      throw new JournalLayoutError(
        line,
        `marks step ${parsed.of.seq} of run ${parsed.of.run} undone, but no earlier line records its intent`,
      );
    }
    if (parsed.kind === "loss-cleared") {
      const unknown = parsed.of.find((ref) => !intents.has(intentKey(ref.run, ref.seq)));
      if (unknown !== undefined) {
        throw new JournalLayoutError(
          line,
          `clears the loss of step ${unknown.seq} of run ${unknown.run}, but no earlier line records its intent`,
        );
      }
    }
    entries.push({ record: parsed, line });
  }
  return entries;
}

/**
 * One range of offsets a salvage recorded as lost (docs/repair.md §6.6): an
 * intent's lost range that no restore undid and no operator
 * cleared. `completed` says whether the step's `done` line was written (a
 * step that never finished may not have dropped anything: the partition's
 * scan says).
 */
export interface RecordedLoss {
  /** The intent that dropped it. */
  run: string;
  seq: number;
  /** The journal line of that intent (1-based). */
  line: number;
  /** The run's start time (its `begin` record), null when the journal has none. */
  time: string | null;
  range: JournalLostRange;
  completed: boolean;
}

/**
 * The offsets a journal records as dropped by a salvage and still lost: the
 * lost ranges of every intent that was neither undone (by a restore) nor
 * cleared (`loss-cleared`), in journal order.
 */
export function recordedLosses(entries: readonly JournalEntry[]): RecordedLoss[] {
  const undone = new Set<string>();
  const cleared = new Set<string>();
  const done = new Set<string>();
  const started = new Map<string, string>();
  for (const { record } of entries) {
    if (record.kind === "undone") undone.add(intentKey(record.of.run, record.of.seq));
    else if (record.kind === "loss-cleared") for (const ref of record.of) cleared.add(intentKey(ref.run, ref.seq));
    else if (record.kind === "done") done.add(intentKey(record.run, record.seq));
    else if (record.kind === "begin" && typeof record.time === "string") started.set(record.run, record.time);
  }
  const losses: RecordedLoss[] = [];
  for (const { record, line } of entries) {
    if (record.kind !== "intent") continue;
    const key = intentKey(record.run, record.seq);
    if (undone.has(key) || cleared.has(key)) continue;
    for (const range of record.lost) {
      losses.push({
        run: record.run,
        seq: record.seq,
        line,
        time: started.get(record.run) ?? null,
        range,
        completed: done.has(key),
      });
    }
  }
  return losses;
}

/** A heal's range as the scan reads it back: its segment and offsets decimal. */
function isHealRange(v: unknown): v is JournalHealRange {
  if (v === null || typeof v !== "object") return false;
  const r = v as Record<string, unknown>;
  return isDecimal(r.segment) && isDecimal(r.firstOffset) && isDecimal(r.lastOffset);
}

/** The offsets a heal run filled, and where in its journal the run began (docs/heal.md). */
export interface RecordedHeal {
  run: string;
  /** The journal line of the run's `begin` (1-based). */
  line: number;
  range: JournalHealRange;
}

/**
 * The ranges filled by every heal run of a journal that took effect and still
 * stands (docs/heal.md): the run reached its `end`, it journaled a step of the
 * range's segment and every such step is `done`, and no step of the run was
 * undone by a restore. A heal that stopped part-way, or was restored, fills
 * nothing here: the salvage's loss stays reported (the safe side), until a
 * heal run that ends.
 */
export function recordedHeals(entries: readonly JournalEntry[]): RecordedHeal[] {
  const ended = new Set<string>();
  const undoneRuns = new Set<string>();
  const done = new Set<string>();
  for (const { record } of entries) {
    if (record.kind === "end") ended.add(record.run);
    else if (record.kind === "undone") undoneRuns.add(record.of.run);
    else if (record.kind === "done") done.add(intentKey(record.run, record.seq));
  }
  const stepsOf = new Map<string, { segment: string; done: boolean }[]>();
  for (const { record } of entries) {
    if (record.kind !== "intent") continue;
    const segment = (record.op as { segment?: unknown }).segment;
    if (typeof segment !== "string") continue;
    const list = stepsOf.get(record.run) ?? [];
    list.push({ segment, done: done.has(intentKey(record.run, record.seq)) });
    stepsOf.set(record.run, list);
  }
  const heals: RecordedHeal[] = [];
  for (const { record, line } of entries) {
    if (record.kind !== "begin" || record.heal === undefined || !Array.isArray(record.heal.ranges)) continue;
    if (!ended.has(record.run) || undoneRuns.has(record.run)) continue;
    const steps = stepsOf.get(record.run) ?? [];
    for (const range of record.heal.ranges) {
      if (!isHealRange(range)) continue;
      const ofSegment = steps.filter((step) => step.segment === range.segment);
      if (ofSegment.length === 0 || !ofSegment.every((step) => step.done)) continue;
      heals.push({ run: record.run, line, range });
    }
  }
  return heals;
}

/** Whether a heal's range covers a salvage's lost range (same segment, every offset of it inside). */
export function healCovers(heal: JournalHealRange, lost: JournalLostRange): boolean {
  if (heal.segment !== lost.segment || lost.firstOffset === null) return false;
  const first = BigInt(lost.firstOffset);
  const last = lost.lastOffset === null ? null : BigInt(lost.lastOffset);
  if (first < BigInt(heal.firstOffset)) return false;
  // A torn loss of unknown end: the heal must start at it (it extended the tail from there).
  if (last === null) return first === BigInt(heal.firstOffset);
  return last <= BigInt(heal.lastOffset);
}

/** The runs a journal's `forgotten` lines closed: restore no longer undoes their steps (docs/repair.md §6.7). */
export function closedRuns(entries: readonly JournalEntry[]): Set<string> {
  return new Set(entries.flatMap(({ record }) => (record.kind === "forgotten" ? record.runs : [])));
}
