/** What a scrub can find (docs/scrub.md §4), and the event stream it yields. */

export const FINDING_CODES = [
  /** A complete batch inside the verified range whose batch checksum does not match (bit rot). */
  "BatchChecksumFailure",
  /** A frame (message) checksum inside a batch does not match. */
  "FrameChecksumFailure",
  /** A batch header that does not decode (length out of range, reserved bytes not zero). */
  "BatchHeaderInvalid",
  /** Frames that do not tile the batch (count, overrun, reserved bytes). */
  "FrameLayoutInvalid",
  /** A sealed segment that ends inside a batch. */
  "TruncatedBatch",
  /** A verified batch below the offset the chain had reached. */
  "OffsetDiscontinuity",
  /** An index entry that does not sit on a verified batch start with the same base offset. */
  "IndexEntryMismatch",
  /** A sealed segment's index whose size is not a whole number of entries. */
  "IndexTrailingBytes",
  /** A sealed segment (immutable) whose size, mtime, inode or bytes changed since it was verified. */
  "SealedSegmentChanged",
  /** A segment that became shorter while the scrub read it. */
  "SegmentShrank",
  /** A file or directory that could not be opened, listed or read. */
  "UnreadableFile",
] as const;

export type FindingCode = (typeof FINDING_CODES)[number];

export interface ScrubFinding {
  code: FindingCode;
  /** The file the finding is about (a `.log`, its `.index`, or a directory). */
  path: string;
  /** Byte position in `path` (a batch start, an index entry's byte), or null when the whole file is meant. */
  position: number | null;
  /** The segment (`.log`) it belongs to, when it belongs to one. */
  segmentPath: string | null;
  message: string;
}

export interface SegmentVerifiedEvent {
  type: "segment-verified";
  path: string;
  sealed: boolean;
  /** Where this verification started: 0, or where an earlier pass stopped on a still-active segment. */
  fromPosition: number;
  /** Bytes proven from byte 0 after this verification. */
  verifiedBytes: number;
  /** The size the segment had when the scrub reached it (the bytes considered). */
  frozenSize: number;
  batches: number;
  messages: number;
  /** XXH3-64 of a clean sealed segment's bytes (16 hex digits), else null. */
  xxh3: string | null;
  /** Bytes of a batch still being appended at the end of an active segment (normal; not verified). */
  inFlightBytes: number;
  findings: number;
}

export interface SegmentSkippedEvent {
  type: "segment-skipped";
  path: string;
  reason: "unchanged" | "deleted";
  message: string;
}

export interface FindingEvent {
  type: "finding";
  finding: ScrubFinding;
}

export interface StateIgnoredEvent {
  type: "state-ignored";
  path: string;
  message: string;
}

export interface PassSummary {
  startedAt: string;
  finishedAt: string;
  elapsedMs: number;
  /** False when the pass was stopped (signal) before visiting every segment. */
  complete: boolean;
  segmentsVerified: number;
  segmentsSkipped: number;
  segmentsDeleted: number;
  /** Bytes proven by this pass's walks. */
  bytesVerified: number;
  /** Bytes read from disk (log and index), the figure the rate limit applies to. */
  bytesRead: number;
  /** Bytes read per second of the pass. */
  bytesPerSecond: number;
  findingsByCode: Record<FindingCode, number>;
  findings: number;
  statePath: string | null;
  /** When the last pass that visited every segment finished (this one, when complete). */
  lastFullPassAt: string | null;
  /** Cumulative over every pass the state file remembers. */
  totals: { bytesVerified: number; segmentsVerified: number; passesCompleted: number };
}

export interface PassCompleteEvent {
  type: "pass-complete";
  summary: PassSummary;
}

export type ScrubEvent = SegmentVerifiedEvent | SegmentSkippedEvent | FindingEvent | StateIgnoredEvent | PassCompleteEvent;

export function zeroFindingCounts(): Record<FindingCode, number> {
  return Object.fromEntries(FINDING_CODES.map((code) => [code, 0])) as Record<FindingCode, number>;
}
