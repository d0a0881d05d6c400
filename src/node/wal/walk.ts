/**
 * Entry verification, the walk and the residue probe of the metadata WAL
 * (docs/node.md N1). Reads go through one FileWindow (one engine window of
 * memory); a `size` that claims more than the file holds is rejected by
 * comparison before anything is read, so a bit-flipped size allocates nothing.
 */
import type { Engine, WalCandidateScanRequest } from "../../engine/types.js";
import { FileWindow } from "../../engine/file-window.js";
import { ScanFailure, describeCause } from "../../io/errors.js";
import type { ReadableFile, ScanFs } from "../../io/fs.js";
import { formatCount } from "../../domain/numbers.js";
import { hex64, isAllZero, readU32 } from "../../format/bytes.js";
import {
  type ProbeBudget,
  type ProbeOutcome,
  type ProbeRecord,
  ZeroTracker,
  probeCandidates,
  residueIsAllZero,
} from "../../recovery/probe.js";
import { WAL_HEADER_BYTES, WAL_SIZE_AT, WalHeaderStatus, identityInput, readWalHeader, type WalHeader } from "../../format/wal.js";

/** A verified entry, as the op-order checks and the report need it. */
export interface WalEntry {
  position: number;
  size: number;
  op: bigint;
  /** The prepare's operation discriminant (docs/node.md N1; N6 reads the metadata-changing ones). */
  operation: number;
  checksum: bigint;
  checksumBody: bigint;
  parent: bigint;
  cluster: bigint;
  group: bigint;
  /** Iggy's walk only: the gate's reserved/upper-byte checks failed (boot fails at replay). */
  gateStatus: WalHeaderStatus;
}

/**
 * Why an entry does not verify. `structural`: the header or its extent
 * (Iggy: `truncate_or_fail` at once); `seal`: a checksum or the chain (Iggy:
 * interior corruption when bytes follow the entry, else `truncate_or_fail`).
 */
export type EntryFailure =
  | { kind: "short"; reason: string }
  | {
      kind: "structural";
      reason: string;
      /** The header gate's verdict when the gate failed; absent when the header passed it and the entry runs past the file's end. */
      gateStatus?: WalHeaderStatus;
      /** The header passed the gate but claims more bytes than remain: a short entry (docs/node.md N1.1). */
      runsPastEnd?: { op: bigint; claimedBytes: number; remainingBytes: number };
    }
  | {
      kind: "seal";
      reason: string;
      entryEnd: number;
      /** Which check failed: the header's identity checksum, the parent chain, or the body checksum (docs/node.md N1.1 words). */
      check: "identity" | "chain" | "body";
      /** The op the header claims (the gate passed, so the field is in place; unproven when the identity check failed). */
      op: bigint;
    };

export type EntryCheck = { verified: true; entry: WalEntry } | { verified: false; failure: EntryFailure };

/** "segscan": the full gate of docs/node.md N1; "iggy": Iggy's scan (no reserved/upper-byte checks). */
export type WalRule = "segscan" | "iggy";

export class WalReader {
  private readonly scratch = new Uint8Array(WAL_HEADER_BYTES);
  constructor(
    readonly window: FileWindow,
    readonly engine: Engine,
  ) {}

  get fileSize(): number {
    return this.window.fileSize;
  }

  /** Verifies the entry at `position`; `prev` is the previous entry in file order (chain rule). */
  async examine(position: number, prev: WalEntry | null, rule: WalRule): Promise<EntryCheck> {
    const window = this.window;
    if (window.fileSize - position < WAL_HEADER_BYTES) {
      return fail({ kind: "short", reason: `${formatCount(window.fileSize - position)} bytes left, fewer than a 256-byte header` });
    }
    const index = await window.ensure(position, WAL_HEADER_BYTES);
    const kernels = window.engineWindow;
    const status = kernels.walHeaderStatus(index) as WalHeaderStatus;
    const tolerated = rule === "iggy" && (status === WalHeaderStatus.ReservedNonZero || status === WalHeaderStatus.UpperBytesNonZero);
    if (status !== WalHeaderStatus.Ok && !tolerated) {
      return fail({ kind: "structural", reason: `header gate: ${WalHeaderStatus[status]}`, gateStatus: status });
    }
    const header = readWalHeader(kernels.view(), index);
    const remainingBytes = window.fileSize - position;
    if (header.size > remainingBytes) {
      return fail({
        kind: "structural",
        reason: `entry claims ${formatCount(header.size)} bytes but only ${formatCount(remainingBytes)} remain`,
        runsPastEnd: { op: header.op, claimedBytes: header.size, remainingBytes },
      });
    }
    const entryEnd = position + header.size;
    const seal = (check: "identity" | "chain" | "body", reason: string): EntryCheck =>
      fail({ kind: "seal", reason, entryEnd, check, op: header.op });
    if (header.checksum !== 0n) {
      const identity = this.engine.xxh3_64(identityInput(kernels.view(), index, this.scratch));
      if (identity !== header.checksum) {
        return seal("identity", `identity checksum mismatch (stored 0x${hex64(header.checksum)}, computed 0x${hex64(identity)})`);
      }
    }
    if (prev !== null && prev.op + 1n === header.op && prev.checksum !== 0n && header.parent !== prev.checksum) {
      return seal(
        "chain",
        `parent chain break: parent 0x${hex64(header.parent)} is not op ${prev.op}'s checksum 0x${hex64(prev.checksum)}`,
      );
    }
    if (header.checksumBody !== 0n) {
      const body = await this.hashBody(position, header.size);
      if (body !== header.checksumBody) {
        return seal("body", `body checksum mismatch (stored 0x${hex64(header.checksumBody)}, computed 0x${hex64(body)})`);
      }
    }
    return { verified: true, entry: toEntry(position, header, status) };
  }

  /** XXH3-64 of `[position + 256, position + size)`: in place when it fits the window, else streamed window by window. */
  private async hashBody(position: number, size: number): Promise<bigint> {
    const window = this.window;
    const bodyStart = position + WAL_HEADER_BYTES;
    const bodyBytes = size - WAL_HEADER_BYTES;
    if (size <= window.capacityBytes) {
      const index = await window.ensure(position, size);
      return this.engine.xxh3_64(window.engineWindow.view().subarray(index + WAL_HEADER_BYTES, index + size));
    }
    const hasher = this.engine.createHasher();
    await window.forEachChunk(bodyStart, bodyBytes, (chunk) => hasher.update(chunk));
    return hasher.digest();
  }
}

/** How a WAL file is opened for reading: one engine window of `windowBytes`. */
export interface WalOpenOptions {
  engine: Engine;
  scanFs: ScanFs;
  windowBytes: number;
  signal?: AbortSignal | undefined;
  onRead?: ((bytes: number) => void) | undefined;
}

/**
 * Opens the WAL at `path` (of `size` bytes, or as the file says) through one
 * engine window and runs `body` with its reader; an open failure throws
 * ScanFailure. The window and file are closed however `body` ends.
 */
export async function withWalReader<T>(
  path: string,
  size: number | null,
  options: WalOpenOptions,
  body: (reader: WalReader) => Promise<T>,
): Promise<T> {
  let file: ReadableFile;
  try {
    file = await options.scanFs.open(path);
  } catch (cause) {
    throw new ScanFailure("OpenFailure", path, `cannot open ${path} (${describeCause(cause)}); nothing was changed`, { cause });
  }
  const engineWindow = options.engine.openWindow(options.windowBytes);
  try {
    const bytes = size ?? file.size ?? (await options.scanFs.stat(path)).size;
    const window = new FileWindow(file, path, bytes, engineWindow, { signal: options.signal, onRead: options.onRead });
    return await body(new WalReader(window, options.engine));
  } finally {
    engineWindow.close();
    await file.close();
  }
}

/** XXH3-64 of the whole entry's bytes (to tell identical duplicates from different ones). */
export async function hashEntry(reader: WalReader, position: number, size: number): Promise<bigint> {
  const hasher = reader.engine.createHasher();
  await reader.window.forEachChunk(position, size, (chunk) => hasher.update(chunk));
  return hasher.digest();
}

/**
 * Whether `[from, from + lengthBytes)` is all zero: space the file grew into
 * and never wrote (docs/node.md N1.1). Stops at the first non-zero chunk.
 */
export async function rangeIsZero(reader: WalReader, from: number, lengthBytes: number): Promise<boolean> {
  const window = reader.window;
  for (let doneBytes = 0; doneBytes < lengthBytes; ) {
    const chunkBytes = Math.min(window.capacityBytes, lengthBytes - doneBytes);
    const index = await window.ensure(from + doneBytes, chunkBytes);
    if (!isAllZero(window.engineWindow.view().subarray(index, index + chunkBytes))) return false;
    doneBytes += chunkBytes;
  }
  return true;
}

function fail(failure: EntryFailure): EntryCheck {
  return { verified: false, failure };
}

/** The entry a header describes (dump passes gate status 0: the chain rule reads only the seal fields). */
export function toEntry(position: number, header: WalHeader, gateStatus: WalHeaderStatus): WalEntry {
  return {
    position,
    size: header.size,
    op: header.op,
    operation: header.operation,
    checksum: header.checksum,
    checksumBody: header.checksumBody,
    parent: header.parent,
    cluster: header.cluster,
    group: header.group,
    gateStatus,
  };
}

export interface WalWalk {
  entries: WalEntry[];
  /** First position that did not verify, or the file size. */
  stopPosition: number;
  failure: EntryFailure | null;
}

/** docs/node.md N1 walk: from `fromPosition`, entry by entry, to the first that does not verify. */
export async function walkWal(
  reader: WalReader,
  rule: WalRule,
  fromPosition = 0,
  prev: WalEntry | null = null,
  entries: WalEntry[] = [],
): Promise<WalWalk> {
  let position = fromPosition;
  let previous = prev;
  while (position < reader.fileSize) {
    const check = await reader.examine(position, previous, rule);
    if (!check.verified) return { entries, stopPosition: position, failure: check.failure };
    entries.push(check.entry);
    previous = check.entry;
    position += check.entry.size;
  }
  return { entries, stopPosition: position, failure: null };
}

/** The WAL entry as the probe loop (src/recovery/probe.ts) looks for it: the WAL kernel under `rule`, `survives` the full check. */
function walRecord(
  rule: WalCandidateScanRequest["rule"],
  minOp: bigint | null,
  survives: (position: number) => Promise<boolean>,
  zeros?: ZeroTracker,
): ProbeRecord {
  return {
    headerBytes: WAL_HEADER_BYTES,
    ...(zeros === undefined ? {} : { observe: (window: FileWindow) => zeros.observe(window) }),
    scan: (window, span) => window.engineWindow.scanWalCandidates({ rule, ...span, minOp }),
    // The candidate passed the gate, so its claimed size is in [256, 64 MiB].
    claimedBytes: (window, index) => readU32(window.engineWindow.view(), index + WAL_SIZE_AT),
    survives: (_window, position) => survives(position),
  };
}

/**
 * docs/node.md N1 residue probe: a candidate c > damagePosition survives when
 * the entry at c verifies fully (checksums included) and its op ≥ `minOp`
 * (above every op the walk proved). Candidates cost 1 unit each; a candidate
 * that passes the cheap checks but fails verification costs its claimed size,
 * as in the segment probe (one loop, src/recovery/probe.ts).
 */
export async function probeWal(
  reader: WalReader,
  damagePosition: number,
  minOp: bigint | null,
  budget: ProbeBudget,
): Promise<ProbeOutcome & { zeros: ZeroTracker }> {
  // What the probe's windows show about the residue being all zero (the segment probe's ZeroTracker).
  const zeros = new ZeroTracker(damagePosition);
  const outcome = await probeCandidates(
    reader.window,
    damagePosition,
    budget,
    walRecord("verified", minOp, async (position) => (await reader.examine(position, null, "segscan")).verified, zeros),
  );
  return { ...outcome, zeros };
}

/**
 * Whether the residue the probe looked at is all zero (docs/node.md N1.1 zero-filled):
 * the segment probe's budget-bounded answer (src/recovery/probe.ts residueIsAllZero),
 * so a probe that ran out of budget reads nothing further.
 */
export function walResidueIsAllZero(reader: WalReader, probe: ProbeOutcome & { zeros: ZeroTracker }): Promise<boolean> {
  return residueIsAllZero(reader.window, probe, WAL_HEADER_BYTES);
}

/**
 * Iggy's `find_complete_entry(from, L)`: the first offset in (from, L-256] that
 * is structurally complete (no checksum). Unbudgeted: the caller runs it only
 * on at most 64 MiB of trailing bytes.
 */
export async function findStructuralEntry(reader: WalReader, from: number): Promise<number | null> {
  const unbudgeted: ProbeBudget = { limitUnits: Number.MAX_SAFE_INTEGER, spentUnits: 0 };
  const found = await probeCandidates(
    reader.window,
    from,
    unbudgeted,
    walRecord("structural", 0n, async () => true),
  );
  return found.survivorPosition;
}
