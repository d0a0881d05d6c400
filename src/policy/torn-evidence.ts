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
import { assert } from "../assert.js";
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
  /** What a completed fsync never leaves, for the shapes that prove the append never completed; null for the others. */
  leavesNo: ((record: TornRecord) => string) | null;
  /** The bytes and the claim in a few words, for a one-line summary (the full sentence is `bytes` and `claim`). */
  brief: (record: TornRecord) => string;
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
    leavesNo: () => "zeros",
    bytes: () => "all zero, never written",
    claim: () => underTheCrashModel("zeros"),
    brief: () => "all zero: under the crash model, never acknowledged",
  },
  short: {
    neverAcknowledged: true,
    leavesNo: (record) => `short ${record}`,
    bytes: (record) => `a short last ${record}, the append never completed`,
    claim: (record) => underTheCrashModel(`short ${record}`),
    brief: (record) => `a short ${record}: under the crash model, never acknowledged`,
  },
  complete: {
    neverAcknowledged: false,
    leavesNo: null,
    bytes: (record) => `a complete last ${record} whose checksum fails`,
    claim: cannotTell,
    brief: (record) => `a complete ${record} whose checksum fails: may have been acknowledged`,
  },
  unverifiable: {
    neverAcknowledged: false,
    leavesNo: null,
    bytes: (record) => `bytes that do not decode as ${record === "batch" ? "a batch" : "an entry"}`,
    claim: cannotTell,
    brief: () => "bytes that do not decode: may have been acknowledged",
  },
};

/** Whether the evidence, under the crash model, proves the torn record was never acknowledged (zero-filled or short). */
export function provesNeverAcknowledged(evidence: TornEvidence | WalTornEvidence): boolean {
  return TORN_WORDS[SHAPE_OF[evidence]].neverAcknowledged;
}

/**
 * The claim for torn tails that each prove (under the crash model) the append
 * never completed, in the table's words with their shapes together: "under the
 * crash model (a completed fsync leaves no zeros or short batch), never
 * fsynced, so never acknowledged" (docs/recovery.md §3.7). Every evidence
 * given must prove it (`provesNeverAcknowledged`).
 */
export function neverAcknowledgedClaim(evidences: readonly (TornEvidence | WalTornEvidence)[], record: TornRecord = "batch"): string {
  const shapes = [...new Set(evidences.map((evidence) => SHAPE_OF[evidence]))];
  assert(shapes.length > 0, "at least one torn tail's evidence");
  const leaves = shapes.map((shape) => {
    const leavesNo = TORN_WORDS[shape].leavesNo;
    assert(leavesNo !== null, `evidence of shape ${shape} does not prove the append never completed`);
    return leavesNo(record);
  });
  return underTheCrashModel(leaves.join(" or "));
}

/**
 * Torn tails whose evidence is not at hand (the cluster view merges the
 * offsets they claim, not their bytes): what the crash model concludes of
 * each shape, said for all of them (docs/recovery.md §3.7).
 */
export const TORN_TAILS_CLAIM_BRIEF = "under the crash model, never acknowledged if zero-filled or short";

/** TORN_TAILS_CLAIM_BRIEF, and what it leaves open. */
export const TORN_TAILS_CLAIM = `${TORN_TAILS_CLAIM_BRIEF}; a complete last batch whose checksum fails may have been (each replica's scan names its evidence)`;

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

/** A segment's torn range in a few words (`a short batch: under the crash model, never acknowledged`), for the one-line report. */
export const TORN_EVIDENCE_BRIEF: Record<TornEvidence, string> = {
  "zero-filled": TORN_WORDS["zero-filled"].brief("batch"),
  "short-batch": TORN_WORDS.short.brief("batch"),
  "complete-batch": TORN_WORDS.complete.brief("batch"),
  unverifiable: TORN_WORDS.unverifiable.brief("batch"),
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
