/**
 * Types shared by the sample generator and its fault scenarios, in a leaf
 * module so that `generate.ts` → `scenarios.ts` is the only import direction.
 */
import type { IndexEntry } from "../format/records.js";
import type { PartitionAction, PartitionVerdict, RefusalCode, SegmentOutcome } from "../domain/scan.js";
import type { Prng } from "./prng.js";

export interface SizeProfile {
  streams: number;
  topicsPerStream: number;
  partitionsPerTopic: number;
  segmentsPerPartition: number;
  /** A segment is closed once it holds at least this many bytes (and its last chunk ≥ 3 batches). */
  segmentBytes: number;
  /** A chunk is flushed (and the next one gets an index entry) once it holds at least this many bytes. */
  flushBytes: number;
  /** Largest number of messages in one batch. */
  maxBatchMessages: number;
}

export interface ScenarioExpectation {
  /** Verdict of the faulted partition in the default (tail) mode. */
  verdict: PartitionVerdict;
  refusal: RefusalCode | null;
  /** docs/repair.md §6.1 action with one replica. */
  action: PartitionAction;
  /** Outcome of the faulted segment, where one segment carries the fault. */
  outcome: SegmentOutcome | null;
  /** Exit status of `segscan scan <data dir>` (the other partitions are clean). */
  scanExit: number;
  /** Where `--deep` concludes differently. */
  deep?: { verdict: PartitionVerdict; refusal: RefusalCode | null; scanExit: number };
}

export interface Scenario {
  name: string;
  description: string;
  expected: ScenarioExpectation;
  /** Throws when the size profile cannot host the fault (e.g. too few segments). */
  checkProfile?(profile: SizeProfile): void;
  /** Injects the fault; returns a one-line account of what was changed. */
  inject(partition: PartitionLayout, rng: Prng): Promise<string>;
}

export interface BatchLayout {
  position: number;
  length: number;
  baseOffset: bigint;
  messageCount: number;
  baseTimestamp: bigint;
  /** Which flushed chunk (index entry) the batch belongs to. */
  chunk: number;
}

export interface SegmentLayout {
  startOffset: bigint;
  endOffset: bigint;
  stem: string;
  logPath: string;
  indexPath: string;
  size: number;
  messages: number;
  batches: BatchLayout[];
  /** Index of each chunk's first batch in `batches`. */
  chunkStarts: number[];
  indexEntries: IndexEntry[];
}

export interface PartitionLayout {
  path: string;
  /** Path relative to the data dir, e.g. `streams/1/topics/1/partitions/1`. */
  relativePath: string;
  streamId: number;
  topicId: number;
  partitionId: number;
  segments: SegmentLayout[];
}

export interface InjectedFault {
  scenario: string;
  partition: string;
  description: string;
  expected: ScenarioExpectation;
  /** What the injection did, for the operator (e.g. "cut 00000000000000004242.log at byte 501,234"). */
  detail: string;
}

export interface GeneratedDataDir {
  dir: string;
  seed: number;
  profile: SizeProfile;
  partitions: PartitionLayout[];
  faults: InjectedFault[];
  /** Sum of the generated `.log` sizes before faults. */
  logBytes: number;
  messages: number;
}
