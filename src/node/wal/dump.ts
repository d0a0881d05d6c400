/**
 * `segscan dump metadata/journal.wal` (docs/node.md N1): every entry in file
 * order with what its header says and whether it verifies, in the spirit of
 * Kafka's dump tool. Entries are read and verified by the scan's own reader
 * (WalReader.examine: the header gate, the identity checksum, the parent
 * chain to the entry before it in the file, the body checksum), so dump and
 * scan cannot disagree about an entry. An entry whose header passes the gate
 * and fits but whose seal fails is listed with what failed, and the listing
 * goes on after it (its size is in place); a header that does not pass the
 * gate, or claims more bytes than remain, locates nothing after it: the
 * listing stops there and says what the bytes are. Whether those bytes are a
 * torn tail is `segscan scan`'s question (it probes them); dump only lists.
 */
import { WAL_HEADER_BYTES, type WalHeader, readWalHeader } from "../../format/wal.js";
import type { WalTornEvidence } from "../../policy/torn-evidence.js";
import { tornEvidence } from "./scan.js";
import { type EntryFailure, type WalEntry, type WalOpenOptions, type WalReader, rangeIsZero, toEntry, withWalReader } from "./walk.js";

/**
 * What the scan's reader concludes of one entry: `ok` (sealed and verified),
 * `unsealed` (a checksum is 0: replayed on trust, nothing proves the bytes),
 * the seal check that failed, or `short-entry` (its header passes the gate
 * but claims more bytes than the file holds: the listing stops after it).
 */
export type WalEntryVerify = "ok" | "unsealed" | "identity-checksum" | "parent-chain" | "body-checksum" | "short-entry";

export interface WalDumpEntry {
  /** Byte position of the entry in the file. */
  position: number;
  header: WalHeader;
  verify: WalEntryVerify;
  /** Why it does not verify, in the scan's words; null when it does. */
  problem: string | null;
}

/** Where the listing stopped before the file's end: nothing after `position` can be located as an entry. */
export interface WalDumpStop {
  position: number;
  /** The bytes from `position` to the file's end. */
  bytes: number;
  /** Why no entry could be read there (the header gate, or a size past the end). */
  reason: string;
  /** What those bytes are (docs/node.md N1.1): zero-filled, a short entry, or bytes that do not verify as an entry. */
  evidence: Exclude<WalTornEvidence, "complete-entry">;
  /** The op the header there claims, when it passes the gate (a short entry); null otherwise. */
  claimedOp: bigint | null;
}

export interface WalDumpResult {
  size: number;
  /** Entries listed (verified or not). */
  entries: number;
  verified: number;
  unsealed: number;
  stopped: WalDumpStop | null;
}

export interface WalDumpOptions extends WalOpenOptions {
  /** Called with each entry in file order (the caller prints it: a long WAL is never held whole). */
  onEntry: (entry: WalDumpEntry) => Promise<void>;
}

const SEAL_VERIFY: Record<Extract<EntryFailure, { kind: "seal" }>["check"], WalEntryVerify> = {
  identity: "identity-checksum",
  chain: "parent-chain",
  body: "body-checksum",
};

/** Lists the WAL at `path` entry by entry; read errors throw ScanFailure. */
export async function dumpWal(path: string, options: WalDumpOptions): Promise<WalDumpResult> {
  return withWalReader(path, null, options, (reader) => listEntries(reader, options));
}

async function listEntries(reader: WalReader, options: WalDumpOptions): Promise<WalDumpResult> {
  const size = reader.fileSize;
  const result: WalDumpResult = { size, entries: 0, verified: 0, unsealed: 0, stopped: null };
  let previous: WalEntry | null = null;
  let position = 0;
  while (position < size) {
    const check = await reader.examine(position, previous, "segscan");
    const short = !check.verified && check.failure.kind === "structural" && check.failure.runsPastEnd !== undefined;
    if (!check.verified && check.failure.kind !== "seal" && !short) {
      result.stopped = await stopAt(reader, position, check.failure);
      break;
    }
    const header = readWalHeader(reader.window.engineWindow.view(), await reader.window.ensure(position, WAL_HEADER_BYTES));
    let verify: WalEntryVerify;
    let problem: string | null = null;
    if (check.verified) {
      verify = header.checksum === 0n || header.checksumBody === 0n ? "unsealed" : "ok";
      if (verify === "ok") result.verified++;
      else result.unsealed++;
    } else if (check.failure.kind === "seal") {
      verify = SEAL_VERIFY[check.failure.check];
      problem = check.failure.reason;
    } else {
      // A header that passes the gate and claims more than remains: shown as what it is, then nothing after it is located.
      result.entries++;
      await options.onEntry({ position, header, verify: "short-entry", problem: check.failure.reason });
      result.stopped = await stopAt(reader, position, check.failure);
      break;
    }
    result.entries++;
    await options.onEntry({ position, header, verify, problem });
    previous = toEntry(position, header, 0);
    position += header.size;
  }
  return result;
}

/** What the bytes from `position` are, where no entry can be read (docs/node.md N1.1 evidence words). */
async function stopAt(reader: WalReader, position: number, failure: EntryFailure): Promise<WalDumpStop> {
  const bytes = reader.fileSize - position;
  const allZero = await rangeIsZero(reader, position, bytes);
  const { kind } = tornEvidence({ allZero, bytes }, failure, null);
  return {
    position,
    bytes,
    reason: failure.reason,
    // A seal failure is listed, not a stop: only these three remain.
    evidence: kind === "complete-entry" ? "unverifiable" : kind,
    claimedOp: failure.kind === "structural" && failure.runsPastEnd !== undefined ? failure.runsPastEnd.op : null,
  };
}
