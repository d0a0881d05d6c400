/**
 * What a torn tail's bytes prove, in the words every report uses: one table
 * for a segment's last batch (docs/recovery.md §3.7) and the metadata WAL's
 * last entry (docs/node.md N1.1), so the two can never say it differently.
 *
 * Only a zero-filled or short tail says the append never completed, and even
 * that is a conclusion from the crash model, not from the bytes alone: a
 * completed fsync leaves its bytes whole on disk, and an append is
 * acknowledged only after its fsync. Every sentence that draws it says
 * "under the crash model", so an operator can weigh it against a disk that
 * broke the model (a lying write cache, a bit flip in a length field).
 */
import type { TornEvidence } from "../domain/scan.js";

/** docs/node.md N1.1: what the bytes after the WAL's last verified entry prove. */
export type WalTornEvidence = "zero-filled" | "short-entry" | "complete-entry" | "unverifiable";

/** The four shapes a torn tail takes, whatever the record: a segment's batch or a WAL entry. */
type TornShape = "zero-filled" | "short" | "complete" | "unverifiable";

/** The record a torn tail is the remains of. */
type TornRecord = "batch" | "entry";

const SHAPE_OF: Record<TornEvidence | WalTornEvidence, TornShape> = {
  "zero-filled": "zero-filled",
  "short-batch": "short",
  "short-entry": "short",
  "complete-batch": "complete",
  "complete-entry": "complete",
  unverifiable: "unverifiable",
};

/**
 * The never-acknowledged claim, qualified by the crash model it rests on
 * (docs/recovery.md §3.7): `leavesNo` names what a completed fsync never leaves.
 */
const underTheCrashModel = (leavesNo: string): string =>
  `under the crash model (a completed fsync leaves no ${leavesNo}), never fsynced, so never acknowledged`;

interface ShapeWords {
  /** Whether the bytes, under the crash model, prove the append never completed. */
  neverAcknowledged: boolean;
  /** What the bytes are, in a few words. */
  bytes: (record: TornRecord) => string;
  /** What that proves about the record's acknowledgement. */
  claim: (record: TornRecord) => string;
}

const cannotTell = (record: TornRecord): string => `segscan cannot tell a torn write from corruption of an acknowledged ${record}`;

/** The one table (docs/recovery.md §3.7, docs/node.md N1.1). */
const TORN_WORDS: Record<TornShape, ShapeWords> = {
  "zero-filled": {
    neverAcknowledged: true,
    bytes: () => "all zero, never written",
    claim: () => underTheCrashModel("zeros"),
  },
  short: {
    neverAcknowledged: true,
    bytes: (record) => `a short last ${record}, the append never completed`,
    claim: (record) => underTheCrashModel(`short ${record}`),
  },
  complete: {
    neverAcknowledged: false,
    bytes: (record) => `a complete last ${record} whose checksum fails`,
    claim: cannotTell,
  },
  unverifiable: {
    neverAcknowledged: false,
    bytes: (record) => `bytes that do not decode as ${record === "batch" ? "a batch" : "an entry"}`,
    claim: cannotTell,
  },
};

/** Whether the evidence, under the crash model, proves the torn record was never acknowledged (zero-filled or short). */
export function provesNeverAcknowledged(evidence: TornEvidence | WalTornEvidence): boolean {
  return TORN_WORDS[SHAPE_OF[evidence]].neverAcknowledged;
}

/** A WAL entry's claim alone (what the evidence proves about acknowledgement), for a message that says what the bytes are in its own detail. */
export function walTornClaim(evidence: WalTornEvidence): string {
  return TORN_WORDS[SHAPE_OF[evidence]].claim("entry");
}

function segmentWords(evidence: TornEvidence): string {
  const words = TORN_WORDS[SHAPE_OF[evidence]];
  const preserved = words.neverAcknowledged ? "" : " (the cut bytes are preserved)";
  return `${words.bytes("batch")}: ${words.claim("batch")}${preserved}`;
}

/** A segment's torn range, in one sentence per evidence (docs/recovery.md §3.7): the text and HTML reports print these. */
export const TORN_EVIDENCE_WORDS: Record<TornEvidence, string> = {
  "zero-filled": segmentWords("zero-filled"),
  "short-batch": segmentWords("short-batch"),
  "complete-batch": segmentWords("complete-batch"),
  unverifiable: segmentWords("unverifiable"),
};

/** What the bytes after the WAL's last readable entry are, without a claim (what `segscan dump` says; docs/node.md N1.1). */
export const WAL_TAIL_BYTES_WORDS: Record<Exclude<WalTornEvidence, "complete-entry">, string> = {
  "zero-filled": TORN_WORDS["zero-filled"].bytes("entry"),
  "short-entry": TORN_WORDS.short.bytes("entry"),
  unverifiable: TORN_WORDS.unverifiable.bytes("entry"),
};

/**
 * What a segment's damaged last bytes are, without a claim: the words a
 * `Hole` or `EmptyNonTailSegment` uses for the damaged end of a segment that
 * is not the last (docs/recovery.md §4 step 3), where the next segment shows
 * the server wrote past them and no torn-tail conclusion is drawn.
 */
export const TORN_BATCH_BYTES_WORDS: Record<TornEvidence, string> = {
  "zero-filled": TORN_WORDS["zero-filled"].bytes("batch"),
  "short-batch": TORN_WORDS.short.bytes("batch"),
  "complete-batch": TORN_WORDS.complete.bytes("batch"),
  unverifiable: TORN_WORDS.unverifiable.bytes("batch"),
};
