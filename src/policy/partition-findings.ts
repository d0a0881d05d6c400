/**
 * docs/repair.md §6.6: the words and next step of a partition finding — the
 * offsets a salvage recorded as lost, or a salvage record that cannot be read.
 * Pure functions of the finding's fields; the scan (src/recovery/salvage-record.ts)
 * fills them in, and the text, JSON and HTML reports print the same words.
 * Commands are printed with the partition's real path, shell-quoted
 * (src/domain/command.ts), so they can be pasted as they are.
 */
import { shellQuote } from "../domain/command.js";
import type { PartitionFinding } from "../domain/scan.js";
import { offsetsText } from "./next-step.js";

/** The argv that clears a partition's recorded salvage losses, as a dry run (`--apply` carries it out). */
export function forgetLostOffsetsCommand(partitionPath: string): string[] {
  return ["segscan", "forget", partitionPath, "--lost-offsets"];
}

type LossFields = Omit<Extract<PartitionFinding, { code: "SalvageLostOffsets" }>, "message" | "nextStep" | "nextCommand">;

/** 1536 → "1,536". */
const grouped = (value: number): string => value.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** "offsets 637..647 (≤11 msgs)", or what is known of a range with no offset (the scope line's words, src/report/format.ts). */
export function lostOffsetsWords(loss: Pick<LossFields, "firstOffset" | "lastOffset" | "messages" | "bytes">): string {
  if (loss.firstOffset === null && loss.lastOffset === null) return `${grouped(loss.bytes)} bytes whose offsets are unknown`;
  const count = loss.messages === null ? "" : ` (≤${grouped(loss.messages)} msg${loss.messages === 1 ? "" : "s"})`;
  return `offsets ${offsetsText(loss)}${count}`;
}

/** The finding's message: what was recorded as lost, by which salvage, in which journal. */
export function salvageLossMessage(loss: LossFields): string {
  const when = loss.salvagedAt === null ? "a salvage" : `the salvage of ${loss.salvagedAt}`;
  const what = loss.kind === "torn" ? "a torn tail claiming " : "";
  const unfinished = loss.completed
    ? ""
    : "; that salvage step never finished, so the log may still hold these bytes (the verdict above says what it proves)";
  return (
    `${what}${lostOffsetsWords(loss)} of segment ${loss.segment} were dropped by ${when} and are recorded as lost ` +
    `(${loss.path} line ${loss.line})${unfinished}`
  );
}

/** docs/repair.md §6.6: what the operator does about a recorded loss, with the clearing command for this partition. */
export function salvageLossNextStep(
  loss: Pick<LossFields, "firstOffset" | "lastOffset" | "messages" | "bytes">,
  partitionPath: string,
): string {
  const command = shellQuote(forgetLostOffsetsCommand(partitionPath));
  return (
    `no file here proves ${lostOffsetsWords(loss)}: re-supply them from a backup or a replica if one holds them (consumers skip them), ` +
    `then clear this record: ${command} (a dry run; add --apply)`
  );
}

/** The message of a salvage record that cannot be read. */
export function unreadableRecordMessage(path: string, reason: string): string {
  return `cannot read ${path}: ${reason}; whether a salvage recorded offsets of this partition as lost is unknown`;
}

export function unreadableRecordNextStep(path: string): string {
  return `fix or inspect ${path} (repair, salvage and restore refuse it too) and scan again; nothing was judged of the record or changed`;
}
