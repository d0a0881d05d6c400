/**
 * `scrub(root, options)` (docs/scrub.md): one read-only verification pass over
 * every segment under `root`, safe beside a running iggy-server, yielding events
 * as it goes. Sealed segments (all but a partition's last) are verified in full;
 * the active one up to the size it had when the scrub reached it. On a node
 * root the pass ends with the node check (src/scrub/node.ts): the metadata WAL,
 * snapshot, superblocks, offsets and `purge.gen`. The pass is incremental
 * against a state file, rate-limited, and writes nothing except that state file.
 */
import { stat as statFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createEngine } from "../engine/index.js";
import { xxh3_64 } from "../hash/xxh3.js";
import type { Engine, EngineWindow } from "../engine/types.js";
import { assert } from "../assert.js";
import { formatCount } from "../domain/numbers.js";
import { hex64 } from "../format/bytes.js";
import { DEFAULT_WINDOW_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES } from "../format/constants.js";
import { ScanFailure, abortError, describeCause } from "../io/errors.js";
import { type DirectoryEntry, type ScanFs, nodeScanFs } from "../io/fs.js";
import { listSegments, notRegular } from "../recovery/partition.js";
import { discoverTargets } from "../recovery/targets.js";
import { isNodeRoot } from "../node/scan.js";
import {
  COUNTED_NODE_SEVERITIES,
  type FindingCode,
  type PassSummary,
  type ScrubEvent,
  type ScrubFinding,
  type SegmentVerifiedEvent,
  emptyNodeCheckSummary,
  passOutcome,
  zeroFindingCounts,
} from "./findings.js";
import { NODE_SETTLE_MS, PartitionProofs, checkNode } from "./node.js";
import { DEFAULT_REVERIFY_AFTER_MS, DEFAULT_SCRUB_RATE_BYTES_PER_SECOND, TokenBucket } from "./rate.js";
import { PrefixHasher, ScrubReads } from "./reads.js";
import { verifySegmentForScrub } from "./segment.js";
import { OutputFileError, checkOutputPath, protectedTrees } from "./output-file.js";
import {
  type ScrubState,
  type SegmentState,
  StateFileError,
  defaultStatePath,
  emptyState,
  isScrubStateHead,
  loadState,
  saveState,
} from "./state.js";

export { DEFAULT_REVERIFY_AFTER_MS } from "./rate.js";

/**
 * Re-verification is spread: a segment is due between (1 − REVERIFY_SPREAD) and
 * all of `reverifyAfterMs` after it was verified, at a point fixed by its path.
 * A tree verified in one pass is then re-read over the following days, not all
 * in one pass a week later, and no byte waits longer than `reverifyAfterMs`.
 */
export const REVERIFY_SPREAD = 0.5;

/** A fixed fraction in [0, 1) per path (top 53 bits of its XXH3-64). */
function pathFraction(path: string): number {
  return Number(xxh3_64(new TextEncoder().encode(path)) >> 11n) / 2 ** 53;
}

/**
 * A sealed segment modified less than this long ago may still receive the
 * flush of its last batch (the broker rolls to a new segment, then finishes
 * writing the old one): a batch cut short at its end is growth until then, and
 * the segment is not remembered as verified until it has settled.
 */
export const SEALED_SETTLE_MS = 60_000;

/**
 * The active segment is being appended to while it changes; one left alone
 * longer than this (the same minute as SEALED_SETTLE_MS and NODE_SETTLE_MS)
 * has no append in progress, so a batch cut short at its end is a torn tail,
 * as `scan` reports it after a crash, no longer growth (docs/scrub.md §1).
 */
export const ACTIVE_SETTLE_MS = 60_000;

/** A long pass saves its progress at most this often, so a kill loses at most this much work. */
export const STATE_SAVE_INTERVAL_MS = 10_000;

export interface ScrubProgress {
  path: string;
  segmentsDone: number;
  segmentsTotal: number;
  bytesRead: number;
}

export interface ScrubOptions {
  /** Bytes per second read from disk (token bucket). Default 64 MiB/s; `Infinity` for no limit. */
  rate?: number;
  /**
   * State file path; `null` keeps no state (every pass is a full pass). Default: defaultStatePath(root).
   * Refused (StateFileError, before anything is read) inside the scrubbed tree or its node root, when it is
   * no regular file, or when it exists and is not a state the scrub wrote (docs/scrub.md §3.1).
   */
  state?: string | null;
  /**
   * Stops the pass within one window; the state is saved and a last
   * `pass-complete` (complete: false) is yielded. (Leaving the loop early
   * instead ends the pass without saving it.)
   */
  signal?: AbortSignal;
  onFinding?: (finding: ScrubFinding) => void;
  onProgress?: (progress: ScrubProgress) => void;
  /**
   * Every segment is re-verified at least this often (spread over the second
   * half of the period, REVERIFY_SPREAD). Default 7 days (DEFAULT_REVERIFY_AFTER_MS); 0 re-verifies everything.
   */
  reverifyAfterMs?: number;
  engine?: Engine;
  windowBytes?: number;
  /**
   * Replaces the filesystem the scrub lists and reads through (tests count and
   * fault reads here). Size, mtime and inode for the state come from node:fs.
   */
  scanFs?: ScanFs;
  /** Default SEALED_SETTLE_MS; tests pass 0 to treat every sealed segment as settled. */
  sealedSettleMs?: number;
  /** Default ACTIVE_SETTLE_MS: an active segment left alone this long is judged as `scan` judges it (a torn tail is a finding). */
  activeSettleMs?: number;
  /**
   * Default NODE_SETTLE_MS: node findings about files the server may be
   * writing (the WAL's tail, a `.tmp`, offsets against the head) wait until
   * those files were left alone this long (docs/scrub.md §1.1); tests pass 0.
   */
  nodeSettleMs?: number;
  /** The clock for verifiedAt, re-verify ages and the settle time. */
  now?: () => Date;
}

interface Identity {
  size: number;
  mtimeNs: string;
  inode: string;
}

async function identityOf(path: string): Promise<Identity | null> {
  try {
    const info = await statFile(path, { bigint: true });
    return { size: Number(info.size), mtimeNs: info.mtimeNs.toString(), inode: info.ino.toString() };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw cause;
  }
}

interface SegmentEntry {
  logPath: string;
  indexPath: string;
  startOffset: bigint;
  sealed: boolean;
  /** The `.log` lists as a regular file; any other is reported, never opened. */
  regular: boolean;
}

/**
 * A partition's segments in offset order, as the scan lists them (one lister,
 * src/recovery/partition.ts: a `.log` not named like a segment is not ours,
 * docs/recovery.md §4); the last is the active one.
 */
function segmentsOf(directory: string, entries: readonly DirectoryEntry[]): SegmentEntry[] {
  const listed = listSegments(directory, entries).segments;
  return listed.map(({ logPath, indexPath, startOffset, regular }, i) => ({
    logPath,
    indexPath,
    startOffset,
    sealed: i < listed.length - 1,
    regular,
  }));
}

type VerifyPlan = { kind: "verify"; fromPosition: number; expectedOffset: bigint; changed: string | null };
type Plan = { kind: "skip" } | VerifyPlan;

/** What to do with a segment given what the state remembers (docs/scrub.md §3). */
function planSegment(segment: SegmentEntry, now: Identity, prior: SegmentState | undefined, reverifyDue: boolean): Plan {
  const full = (changed: string | null = null): Plan => ({ kind: "verify", fromPosition: 0, expectedOffset: segment.startOffset, changed });
  if (prior === undefined) return full();
  const sameFile = prior.inode === now.inode;
  const unchanged = sameFile && prior.size === now.size && prior.mtimeNs === now.mtimeNs;
  if (prior.sealed && segment.sealed) {
    if (unchanged) return reverifyDue ? full() : { kind: "skip" };
    const what = !sameFile
      ? `was replaced (inode ${prior.inode} → ${now.inode})`
      : prior.size !== now.size
        ? `changed size (${formatCount(prior.size)} → ${formatCount(now.size)} bytes)`
        : `was modified (mtime changed)`;
    return full(
      `the sealed segment ${segment.logPath} ${what} since it was verified at ${prior.verifiedAt}; sealed segments are immutable`,
    );
  }
  if (!prior.sealed && !segment.sealed && sameFile && !reverifyDue) {
    if (unchanged && prior.verifiedBytes === now.size) return { kind: "skip" };
    // Still active and only grown: verify the new bytes, resuming the chain where it stood.
    if (now.size >= prior.verifiedBytes)
      return { kind: "verify", fromPosition: prior.verifiedBytes, expectedOffset: BigInt(prior.nextOffset), changed: null };
  }
  return full();
}

/** The pass's options, checked and defaulted once (docs/scrub.md §2). */
interface ScrubSettings {
  rootPath: string;
  windowBytes: number;
  reverifyAfterMs: number;
  sealedSettleMs: number;
  activeSettleMs: number;
  nodeSettleMs: number;
  bucket: TokenBucket | null;
  clock: () => Date;
  signal: AbortSignal | undefined;
  scanFs: ScanFs;
}

function settingsOf(root: string, options: ScrubOptions): ScrubSettings {
  const windowBytes = options.windowBytes ?? DEFAULT_WINDOW_BYTES;
  if (!Number.isSafeInteger(windowBytes) || windowBytes < MIN_WINDOW_BYTES || windowBytes > MAX_WINDOW_BYTES) {
    throw new RangeError(`windowBytes must be an integer in [${MIN_WINDOW_BYTES}, ${MAX_WINDOW_BYTES}], got ${windowBytes}`);
  }
  const reverifyAfterMs = options.reverifyAfterMs ?? DEFAULT_REVERIFY_AFTER_MS;
  const sealedSettleMs = options.sealedSettleMs ?? SEALED_SETTLE_MS;
  const activeSettleMs = options.activeSettleMs ?? ACTIVE_SETTLE_MS;
  if (!(sealedSettleMs >= 0) || !(activeSettleMs >= 0))
    throw new RangeError(`settle times must be ≥ 0, got ${sealedSettleMs} and ${activeSettleMs}`);
  const nodeSettleMs = options.nodeSettleMs ?? NODE_SETTLE_MS;
  if (!(nodeSettleMs >= 0)) throw new RangeError(`nodeSettleMs must be ≥ 0, got ${nodeSettleMs}`);
  if (!(reverifyAfterMs >= 0)) throw new RangeError(`reverifyAfterMs must be ≥ 0, got ${reverifyAfterMs}`);
  const rate = options.rate ?? DEFAULT_SCRUB_RATE_BYTES_PER_SECOND;
  return {
    rootPath: resolve(root),
    windowBytes,
    reverifyAfterMs,
    sealedSettleMs,
    activeSettleMs,
    nodeSettleMs,
    bucket: rate === Infinity ? null : new TokenBucket(rate),
    clock: options.now ?? (() => new Date()),
    signal: options.signal,
    scanFs: options.scanFs ?? nodeScanFs,
  };
}

/**
 * The state file's path, checked before any open (a FIFO as the state file
 * would block its read for good) and before anything is written: the state
 * never lands in the scrubbed tree, nor replaces a file the scrub did not
 * write (docs/scrub.md §3.1). `null`: no state kept.
 */
async function checkedStatePath(rootPath: string, state: string | null | undefined): Promise<string | null> {
  const givenStatePath = state === undefined ? defaultStatePath(rootPath) : state;
  if (givenStatePath === null) return null;
  try {
    return await checkOutputPath(
      { path: givenStatePath, what: "scrub state file", recognise: isScrubStateHead },
      await protectedTrees(rootPath),
    );
  } catch (error) {
    if (error instanceof OutputFileError) throw new StateFileError(`${error.message}; nothing was scrubbed`, { cause: error });
    throw error;
  }
}

function emptyPassSummary(startedAt: Date, statePath: string | null): PassSummary {
  return {
    startedAt: startedAt.toISOString(),
    finishedAt: "",
    elapsedMs: 0,
    complete: false,
    segmentsVerified: 0,
    segmentsSkipped: 0,
    segmentsDeleted: 0,
    bytesVerified: 0,
    bytesRead: 0,
    bytesPerSecond: 0,
    findingsByCode: zeroFindingCounts(),
    findings: 0,
    statePath,
    lastFullPassAt: null,
    lastSuccessAt: null,
    totals: { bytesVerified: 0, segmentsVerified: 0, passesCompleted: 0 },
    failingPartitions: [],
    node: null,
  };
}

type SegmentVerification = Awaited<ReturnType<typeof verifySegmentForScrub>>;

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** One pass's running tallies and the steps that feed them; `scrub()` drives it. */
class ScrubPass {
  readonly summary: PassSummary;
  readonly reads: ScrubReads;
  /** Segment findings per partition dir (the metrics' `partition` label). */
  private readonly failingPartitions = new Map<string, number>();
  private readonly proofs = new PartitionProofs();
  /** Every segment visited: the state forgets the others at the end of a complete pass. */
  private readonly seen = new Set<string>();
  private readonly startedMs = performance.now();
  private lastSavedMs = performance.now();

  constructor(
    private readonly settings: ScrubSettings,
    private readonly options: ScrubOptions,
    private readonly engine: Engine,
    private readonly statePath: string | null,
    private readonly state: ScrubState,
  ) {
    this.summary = emptyPassSummary(settings.clock(), statePath);
    this.reads = new ScrubReads(settings.scanFs, settings.bucket, { bytesRead: 0 }, settings.signal);
  }

  report(finding: ScrubFinding): ScrubEvent {
    this.summary.findings++;
    if (finding.item !== undefined && finding.severity !== undefined) {
      if (this.summary.node === null) this.summary.node = emptyNodeCheckSummary();
      const node = this.summary.node;
      node.findings[finding.item][finding.severity]++;
      if (COUNTED_NODE_SEVERITIES.has(finding.severity))
        node.failing.push({ item: finding.item, code: finding.code, severity: finding.severity, path: finding.path });
    } else {
      this.summary.findingsByCode[finding.code as FindingCode]++;
      // A segment's finding names its segment; a partition that cannot be listed, the partition dir itself.
      const partition = finding.segmentPath !== null ? dirname(finding.segmentPath) : finding.path;
      this.failingPartitions.set(partition, (this.failingPartitions.get(partition) ?? 0) + 1);
      this.proofs.fail(partition);
    }
    this.options.onFinding?.(finding);
    return { type: "finding", finding };
  }

  private unreadable(path: string, segmentPath: string | null, cause: unknown, code: FindingCode = "UnreadableFile"): ScrubEvent {
    return this.report({
      code,
      path,
      position: null,
      segmentPath,
      message: cause instanceof ScanFailure ? cause.message : `${path}: ${describeCause(cause)}; nothing was changed`,
    });
  }

  async save(): Promise<void> {
    if (this.statePath === null) return;
    try {
      await saveState(this.statePath, this.state);
    } catch (cause) {
      throw new Error(`cannot write the scrub state ${this.statePath} (${describeCause(cause)}); the scrubbed data was not changed`, {
        cause,
      });
    }
    this.lastSavedMs = performance.now();
  }

  async saveIfDue(): Promise<void> {
    if (performance.now() - this.lastSavedMs >= STATE_SAVE_INTERVAL_MS) await this.save();
  }

  /**
   * Every target's segments in order, one listing per partition (discovery's,
   * when it kept one); a target discovery failed (unlistable, a link it does
   * not follow), a partition that cannot be listed, and a FIFO, socket
   * or device named like a segment (never opened: a FIFO's open would block),
   * are reported as the scan reports them. Returns the segments to visit.
   */
  async *plannedSegments(targets: Awaited<ReturnType<typeof discoverTargets>>): AsyncGenerator<ScrubEvent, SegmentEntry[]> {
    const planned: SegmentEntry[] = [];
    for (const target of targets) {
      if (target.failure !== undefined) {
        // Discovery's own failures, as `scan` reports them: a dir it cannot list, a link inside a node's streams/ it does not follow (docs/interfaces.md §4).
        yield this.report({
          code: "UnreadableFile",
          path: target.path,
          position: null,
          segmentPath: null,
          message: target.failure.message,
        });
        continue;
      }
      const directory = target.singleLog ? dirname(target.path) : target.path;
      let segments: SegmentEntry[];
      try {
        segments = segmentsOf(directory, (target.singleLog ? undefined : target.entries) ?? (await this.settings.scanFs.list(directory)));
      } catch (cause) {
        const failure = new ScanFailure(
          "ListFailure",
          directory,
          `cannot list ${directory} (${describeCause(cause)}); nothing was changed`,
          {
            cause,
          },
        );
        yield this.unreadable(directory, null, failure);
        continue;
      }
      for (const segment of target.singleLog ? segments.filter((segment) => segment.logPath === target.path) : segments) {
        if (segment.regular) planned.push(segment);
        else yield this.unreadable(segment.logPath, segment.logPath, notRegular(segment.logPath));
      }
    }
    return planned;
  }

  private progress(segment: SegmentEntry, segmentsTotal: number): void {
    this.options.onProgress?.({
      path: segment.logPath,
      segmentsDone: this.summary.segmentsVerified + this.summary.segmentsSkipped,
      segmentsTotal,
      bytesRead: this.reads.meter.bytesRead,
    });
  }

  private deleted(segment: SegmentEntry): ScrubEvent {
    this.summary.segmentsDeleted++;
    delete this.state.segments[segment.logPath];
    return {
      type: "segment-skipped",
      path: segment.logPath,
      reason: "deleted",
      message: `${segment.logPath} was deleted (retention) before the scrub finished it; skipped`,
    };
  }

  /** One segment: skipped as unchanged, or verified from where the state says (docs/scrub.md §3). */
  async *scrubSegment(segment: SegmentEntry, segmentsTotal: number, engineWindow: EngineWindow): AsyncGenerator<ScrubEvent> {
    this.seen.add(segment.logPath);
    let identity: Identity | null;
    try {
      identity = await identityOf(segment.logPath);
    } catch (cause) {
      yield this.unreadable(segment.logPath, segment.logPath, cause);
      return;
    }
    if (identity === null) {
      yield this.deleted(segment);
      return;
    }
    const prior = this.state.segments[segment.logPath];
    const nowDate = this.settings.clock();
    const dueAfterMs = this.settings.reverifyAfterMs * (1 - REVERIFY_SPREAD * pathFraction(segment.logPath));
    const reverifyDue = prior === undefined || nowDate.getTime() - Date.parse(prior.verifiedAt) >= dueAfterMs;
    const plan = planSegment(segment, identity, prior, reverifyDue);
    if (plan.kind === "skip") {
      assert(prior !== undefined, "a segment is skipped only against a state entry");
      yield this.skipped(segment, identity, prior, segmentsTotal);
      return;
    }
    yield* this.verifySegment(segment, identity, prior, plan, nowDate, segmentsTotal, engineWindow);
  }

  private skipped(segment: SegmentEntry, identity: Identity, prior: SegmentState, segmentsTotal: number): ScrubEvent {
    this.summary.segmentsSkipped++;
    this.proofs.segment(
      dirname(segment.logPath),
      segment.logPath,
      segment.startOffset,
      prior.verifiedBytes,
      BigInt(prior.nextOffset),
      identity.size,
      segment.sealed,
    );
    this.progress(segment, segmentsTotal);
    return {
      type: "segment-skipped",
      path: segment.logPath,
      reason: "unchanged",
      message: `${segment.logPath} is unchanged since ${prior.verifiedAt}`,
    };
  }

  private async *verifySegment(
    segment: SegmentEntry,
    identity: Identity,
    prior: SegmentState | undefined,
    plan: VerifyPlan,
    nowDate: Date,
    segmentsTotal: number,
    engineWindow: EngineWindow,
  ): AsyncGenerator<ScrubEvent> {
    const findings: ScrubFinding[] = [];
    if (plan.changed !== null) {
      findings.push({
        code: "SealedSegmentChanged",
        path: segment.logPath,
        position: null,
        segmentPath: segment.logPath,
        message: plan.changed,
      });
    }
    const indexIdentity = await identityOf(segment.indexPath).catch(() => null);
    const modifiedMs = Number(BigInt(identity.mtimeNs) / 1_000_000n);
    // Modified within the settle time: a writer may still be appending (an active segment, or a just-rolled one's last flush).
    const segmentSettleMs = segment.sealed ? this.settings.sealedSettleMs : this.settings.activeSettleMs;
    const settling = nowDate.getTime() - modifiedMs < segmentSettleMs;
    const hasher = segment.sealed && plan.fromPosition === 0 ? new PrefixHasher(this.engine.createHasher()) : null;
    let verification: SegmentVerification;
    try {
      verification = await verifySegmentForScrub(
        {
          logPath: segment.logPath,
          indexPath: segment.indexPath,
          startOffset: segment.startOffset,
          frozenSize: identity.size,
          indexSize: indexIdentity?.size ?? 0,
          sealed: segment.sealed,
          tailMayGrow: settling,
          settleMs: segmentSettleMs,
          fromPosition: plan.fromPosition,
          expectedOffset: plan.expectedOffset,
        },
        { reads: this.reads, engineWindow, signal: this.settings.signal, onRead: () => this.progress(segment, segmentsTotal) },
        hasher,
      );
    } catch (error) {
      if (isAbort(error)) throw error;
      if ((await identityOf(segment.logPath).catch(() => identity)) === null) {
        yield this.deleted(segment);
        return;
      }
      const code: FindingCode = error instanceof ScanFailure && error.code === "StorageSizeMismatch" ? "SegmentShrank" : "UnreadableFile";
      for (const finding of findings) yield this.report(finding);
      yield this.unreadable(error instanceof ScanFailure ? error.path : segment.logPath, segment.logPath, error, code);
      delete this.state.segments[segment.logPath];
      return;
    }
    findings.push(...verification.findings);
    const digest = hasher?.digestOf(identity.size) ?? null;
    const xxh3 = digest === null ? null : hex64(digest);
    const changedInPlace = changedInPlaceFinding(segment, prior, plan, xxh3);
    if (changedInPlace !== null) findings.unshift(changedInPlace);
    for (const finding of findings) yield this.report(finding);
    if ((await identityOf(segment.logPath).catch(() => identity)) === null) {
      yield this.deleted(segment);
      return;
    }
    this.recordVerified(segment, identity, prior, plan, nowDate, verification, findings.length === 0, settling, xxh3);
    this.progress(segment, segmentsTotal);
    yield verifiedEvent(segment, identity, plan, verification, xxh3, findings.length);
  }

  /** Counts a verified segment and remembers it in the state when it is whole and clean (docs/scrub.md §3). */
  private recordVerified(
    segment: SegmentEntry,
    identity: Identity,
    prior: SegmentState | undefined,
    plan: VerifyPlan,
    nowDate: Date,
    verification: SegmentVerification,
    clean: boolean,
    settling: boolean,
    xxh3: string | null,
  ): void {
    this.proofs.segment(
      dirname(segment.logPath),
      segment.logPath,
      segment.startOffset,
      verification.stopPosition,
      verification.nextOffset,
      identity.size,
      segment.sealed,
    );
    const bytesVerified = verification.stopPosition - plan.fromPosition;
    this.summary.segmentsVerified++;
    this.summary.bytesVerified += bytesVerified;
    this.state.totals.segmentsVerified++;
    this.state.totals.bytesVerified += bytesVerified;
    // A settling sealed segment is remembered once whole; an active one resumes where its chain stands.
    if (clean && !(segment.sealed && settling && verification.inFlightBytes > 0)) {
      this.state.segments[segment.logPath] = {
        size: identity.size,
        mtimeNs: identity.mtimeNs,
        inode: identity.inode,
        sealed: segment.sealed,
        verifiedAt: plan.fromPosition > 0 && prior ? prior.verifiedAt : nowDate.toISOString(),
        verifiedBytes: verification.stopPosition,
        nextOffset: verification.nextOffset.toString(),
        xxh3,
      };
    } else {
      // Not remembered as verified: the next pass verifies it again and reports
      // what is still wrong (or, for a settling segment, sees it whole).
      delete this.state.segments[segment.logPath];
    }
  }

  /** docs/scrub.md §1.1: the node items, against what the segments proved this pass. */
  async *checkNodeItems(): AsyncGenerator<ScrubEvent> {
    const { rootPath, windowBytes, signal, nodeSettleMs, clock } = this.settings;
    const node = emptyNodeCheckSummary();
    this.summary.node = node;
    let checked: Awaited<ReturnType<typeof checkNode>>;
    try {
      checked = await checkNode({
        root: rootPath,
        scanFs: this.reads,
        engine: this.engine,
        windowBytes,
        signal,
        proofs: this.proofs.proofs(),
        activeLogs: this.proofs.activeLogs(),
        settleMs: nodeSettleMs,
        now: clock,
      });
    } catch (error) {
      if (isAbort(error)) throw error;
      yield this.report({
        code: "UnreadableFile",
        path: rootPath,
        position: null,
        segmentPath: null,
        message: `the node check of ${rootPath} failed: ${error instanceof ScanFailure ? error.message : describeCause(error)}; nothing was changed`,
        item: "layout",
        severity: "failed",
        details: {},
      });
      return;
    }
    for (const finding of checked.findings) yield this.report(finding);
    for (const deferral of checked.deferred) {
      node.deferred[deferral.reason]++;
      yield deferral;
    }
    yield {
      type: "node-checked",
      path: rootPath,
      findings: checked.findings.length,
      deferred: checked.deferred.length,
      looks: checked.looks,
    };
  }

  /** Closes the pass: the state forgets what retention removed, and the summary gets its totals. */
  async finish(interrupted: boolean): Promise<PassSummary> {
    const { summary, state } = this;
    const finishedAt = this.settings.clock();
    if (!interrupted) {
      // Forget segments that no longer exist (retention), so the state does not grow forever.
      for (const path of Object.keys(state.segments)) if (!this.seen.has(path)) delete state.segments[path];
      state.lastFullPassAt = finishedAt.toISOString();
      state.totals.passesCompleted++;
      // A success read every file it meant to; findings about the bytes are the scrub doing its job (docs/scrub.md §5).
      if (passOutcome(summary).failures === 0) state.lastSuccessAt = finishedAt.toISOString();
    }
    await this.save();
    summary.finishedAt = finishedAt.toISOString();
    summary.elapsedMs = Math.round(performance.now() - this.startedMs);
    summary.bytesRead = this.reads.meter.bytesRead;
    summary.lastFullPassAt = state.lastFullPassAt;
    summary.lastSuccessAt = state.lastSuccessAt;
    summary.totals = { ...state.totals };
    summary.failingPartitions = [...this.failingPartitions]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([partition, findings]) => ({ partition, findings }));
    summary.bytesPerSecond = summary.elapsedMs > 0 ? Math.round((summary.bytesRead * 1000) / summary.elapsedMs) : 0;
    return summary;
  }
}

/** The event of a verified segment (docs/scrub.md §4). */
function verifiedEvent(
  segment: SegmentEntry,
  identity: Identity,
  plan: VerifyPlan,
  verification: SegmentVerification,
  xxh3: string | null,
  findings: number,
): SegmentVerifiedEvent {
  return {
    type: "segment-verified",
    path: segment.logPath,
    sealed: segment.sealed,
    fromPosition: plan.fromPosition,
    verifiedBytes: verification.stopPosition,
    frozenSize: identity.size,
    batches: verification.batches,
    messages: verification.messages,
    xxh3,
    inFlightBytes: verification.inFlightBytes,
    findings,
  };
}

/** A sealed segment whose bytes hash differently under the same size, mtime and inode changed in place. */
function changedInPlaceFinding(
  segment: SegmentEntry,
  prior: SegmentState | undefined,
  plan: VerifyPlan,
  xxh3: string | null,
): ScrubFinding | null {
  if (!(prior?.sealed && segment.sealed && plan.changed === null && prior.xxh3 !== null && xxh3 !== null && prior.xxh3 !== xxh3))
    return null;
  return {
    code: "SealedSegmentChanged",
    path: segment.logPath,
    position: null,
    segmentPath: segment.logPath,
    message:
      `the sealed segment ${segment.logPath} has the same size, mtime and inode as when it was verified at ${prior.verifiedAt}, ` +
      `but its bytes hash to ${xxh3}, not ${prior.xxh3}: its bytes changed in place`,
  };
}

export async function* scrub(root: string, options: ScrubOptions = {}): AsyncGenerator<ScrubEvent, void, undefined> {
  const settings = settingsOf(root, options);
  const { rootPath, signal } = settings;
  const statePath = await checkedStatePath(rootPath, options.state);
  const engine = options.engine ?? (await createEngine());
  let state: ScrubState;
  if (statePath === null) {
    state = emptyState(rootPath);
  } else {
    const loaded = await loadState(statePath, rootPath);
    state = loaded.state;
    if (loaded.problem !== null) yield { type: "state-ignored", path: statePath, message: loaded.problem };
  }
  const pass = new ScrubPass(settings, options, engine, statePath, state);
  const targets = await discoverTargets(rootPath, settings.scanFs);
  // docs/node.md N0: only a node root (holding metadata/ or streams/) gets the node check; a root that cannot be told
  // is not one here (its listing failure is reported as the partitions' is).
  const nodeRoot = await isNodeRoot(rootPath, settings.scanFs).catch(() => false);
  const engineWindow = engine.openWindow(settings.windowBytes);
  let interrupted = false;
  try {
    const plannedSegments = yield* pass.plannedSegments(targets);
    for (const segment of plannedSegments) {
      if (signal?.aborted) throw abortError(signal);
      yield* pass.scrubSegment(segment, plannedSegments.length, engineWindow);
      await pass.saveIfDue();
    }
    if (nodeRoot) {
      if (signal?.aborted) throw abortError(signal);
      yield* pass.checkNodeItems();
    }
    pass.summary.complete = true;
  } catch (error) {
    if (!isAbort(error)) throw error;
    interrupted = true;
    pass.summary.node = null;
  } finally {
    engineWindow.close();
  }
  yield { type: "pass-complete", summary: await pass.finish(interrupted) };
}
