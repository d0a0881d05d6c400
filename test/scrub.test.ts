/**
 * `scrub` (docs/scrub.md): deep verification beside a writer that keeps
 * appending and rolling, bit rot found with its position on the next pass,
 * retention deleting segments mid-scrub, the state file's atomicity (kill -9)
 * and tolerance of garbage, a stop within one window and the resume after it,
 * the metrics file under a strict Prometheus text-format parser, and the
 * incremental pass reading ≤ 1% of an unchanged tree. Both engines.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  readdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  watch,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { encodeBatch, encodeIndex, encodeIndexEntry, segmentStem } from "../src/format/encode.js";
import type { IndexEntry } from "../src/format/records.js";
import { type ScanFs, nodeScanFs } from "../src/io/fs.js";
import { scanPartition } from "../src/node/scan-path.js";
import { type PassSummary, type ScrubEvent, type ScrubFinding, zeroFindingCounts } from "../src/scrub/findings.js";
import { formatMetrics } from "../src/scrub/metrics.js";
import { TokenBucket } from "../src/scrub/rate.js";
import { type ScrubOptions, scrub } from "../src/scrub/scrub.js";
import { defaultStatePath, loadState } from "../src/scrub/state.js";
import { spawnBounded } from "./helpers/cli.js";
import { parsePrometheusText } from "./helpers/prometheus.js";
import { allEngines } from "./helpers/engines.js";
import { type BuiltChain, buildChain, indexAt, tempDataDir, tempPartition, trackedTempDir, writeSegment } from "./helpers/fixtures.js";

const CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
/** The smallest window: many reads per segment, so stops and concurrent appends land mid-segment. */
const SMALL_WINDOW_BYTES = 4096;

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

interface Segment {
  logPath: string;
  indexPath: string;
  chain: BuiltChain;
  startOffset: bigint;
}

interface Tree {
  root: string;
  partitions: Segment[][];
  logBytes: number;
}

/** `partitions` partitions of `segments` segments, each of `batches` batches, every batch indexed. */
function writeTree(partitions: number, segments: number, batches: number, seed = 1): Tree {
  const root = tempDataDir();
  const tree: Tree = { root, partitions: [], logBytes: 0 };
  for (let p = 1; p <= partitions; p++) {
    const dir = tempPartition(p, root);
    const list: Segment[] = [];
    let startOffset = 0n;
    for (let s = 0; s < segments; s++) {
      const chain = buildChain({
        startOffset,
        counts: Array.from({ length: batches }, () => 3),
        payloadBytes: 200,
        seed: seed * 1000 + p * 100 + s,
      });
      const files = writeSegment(
        dir,
        startOffset,
        chain.log,
        indexAt(
          chain,
          chain.batches.map((_, i) => i),
        ),
      );
      list.push({ ...files, chain, startOffset });
      tree.logBytes += chain.log.length;
      startOffset = chain.nextOffset;
    }
    tree.partitions.push(list);
  }
  return tree;
}

/** A ScanFs that counts bytes read and lets a test act on every read (before it happens). */
function countingFs(beforeRead?: (path: string, position: number, length: number) => void): {
  scanFs: ScanFs;
  counter: { bytes: number; reads: number };
} {
  const counter = { bytes: 0, reads: 0 };
  const scanFs: ScanFs = {
    list: nodeScanFs.list,
    stat: nodeScanFs.stat,
    async open(path) {
      const file = await nodeScanFs.open(path);
      return {
        async read(target, position) {
          beforeRead?.(path, position, target.length);
          const count = await file.read(target, position);
          counter.bytes += count;
          counter.reads++;
          return count;
        },
        close: () => file.close(),
      };
    },
  };
  return { scanFs, counter };
}

/**
 * One pass. `findings` are the segment findings: these trees hold `streams/`
 * without `metadata/`, so each pass's node check also reports `warn`
 * `MetadataMissing` (docs/scrub.md §1.1), in `nodeFindings`.
 */
async function collect(
  root: string,
  options: ScrubOptions,
): Promise<{ events: ScrubEvent[]; findings: ScrubFinding[]; nodeFindings: ScrubFinding[]; summary: PassSummary }> {
  const events: ScrubEvent[] = [];
  for await (const event of scrub(root, { rate: Infinity, ...options })) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "pass-complete") throw new Error("a pass must end with pass-complete");
  const all = events.flatMap((event) => (event.type === "finding" ? [event.finding] : []));
  return {
    events,
    findings: all.filter((finding) => finding.item === undefined),
    nodeFindings: all.filter((finding) => finding.item !== undefined),
    summary: last.summary,
  };
}

/** Every path under `root` with its size and mtime. */
function snapshot(root: string): Record<string, [number, bigint]> {
  const entries: Record<string, [number, bigint]> = {};
  for (const name of readdirSync(root, { recursive: true }) as string[]) {
    const info = statSync(join(root, name), { bigint: true });
    entries[name] = [Number(info.size), info.mtimeNs];
  }
  return entries;
}

function statePathIn(tree: Tree): string {
  return join(tree.root, "..", `${tree.root.split("/").at(-1)}-scrub-state.json`);
}

describe("scrub: deep verification and the incremental pass", () => {
  it("verifies every segment of a clean tree; the second pass over it reads ≤ 1% of its bytes", async () => {
    for (const engine of engines) {
      const tree = writeTree(2, 3, 8);
      const state = statePathIn(tree);
      const before = snapshot(tree.root);
      const first = countingFs();
      const progress: { segmentsDone: number; segmentsTotal: number; bytesRead: number }[] = [];
      const pass1 = await collect(tree.root, {
        engine,
        state,
        scanFs: first.scanFs,
        windowBytes: SMALL_WINDOW_BYTES,
        onProgress: (event) => progress.push(event),
      });
      expect(progress.at(-1)).toMatchObject({ segmentsDone: 6, segmentsTotal: 6, bytesRead: first.counter.bytes });
      expect(progress.every((event, i) => i === 0 || event.bytesRead >= progress[i - 1]!.bytesRead)).toBe(true);
      expect(pass1.findings).toEqual([]);
      expect(pass1.summary).toMatchObject({ complete: true, segmentsVerified: 6, segmentsSkipped: 0, bytesVerified: tree.logBytes });
      expect(first.counter.bytes).toBeGreaterThanOrEqual(tree.logBytes);
      const verified = pass1.events.filter((event) => event.type === "segment-verified");
      // Sealed segments carry the XXH3-64 of their bytes; active ones do not.
      expect(verified.map((event) => event.type === "segment-verified" && [event.sealed, event.xxh3 !== null])).toEqual([
        [true, true],
        [true, true],
        [false, false],
        [true, true],
        [true, true],
        [false, false],
      ]);

      const second = countingFs();
      const pass2 = await collect(tree.root, { engine, state, scanFs: second.scanFs, windowBytes: SMALL_WINDOW_BYTES });
      expect(pass2.findings).toEqual([]);
      expect(pass2.summary).toMatchObject({ complete: true, segmentsVerified: 0, segmentsSkipped: 6 });
      expect(second.counter.bytes).toBeLessThanOrEqual(tree.logBytes * 0.01);

      // --reverify-after 0: every byte is read again.
      const third = countingFs();
      const pass3 = await collect(tree.root, { engine, state, scanFs: third.scanFs, reverifyAfterMs: 0 });
      expect(pass3.summary).toMatchObject({ segmentsVerified: 6 });
      expect(pass3.findings).toEqual([]);
      expect(pass3.nodeFindings.map((finding) => [finding.code, finding.severity])).toEqual([["MetadataMissing", "warn"]]);
      expect(third.counter.bytes).toBeGreaterThanOrEqual(tree.logBytes);
      // Read-only: not a file added, removed, resized or touched under the root.
      expect(snapshot(tree.root)).toEqual(before);
    }
  });

  it("re-verification is spread over the second half of --reverify-after, and every segment is due by its end", async () => {
    const tree = writeTree(4, 5, 1, 17);
    const state = statePathIn(tree);
    const verifiedAt = Date.now();
    const periodMs = 30 * 86_400_000;
    await collect(tree.root, { engine: engines[0]!, state, now: () => new Date(verifiedAt) });
    // Each probe starts from a copy of the state the first pass saved.
    const probe = async (elapsedMs: number): Promise<number> => {
      const copy = `${state}.probe`;
      writeFileSync(copy, readFileSync(state));
      return (
        await collect(tree.root, {
          engine: engines[0]!,
          state: copy,
          reverifyAfterMs: periodMs,
          now: () => new Date(verifiedAt + elapsedMs),
        })
      ).summary.segmentsVerified;
    };
    expect(await probe(periodMs / 2 - 1000)).toBe(0);
    const midway = await probe(periodMs * 0.75);
    expect(midway).toBeGreaterThan(0);
    expect(midway).toBeLessThan(20);
    expect(await probe(periodMs)).toBe(20);
  });

  it("finds no false damage while a writer appends (half batches too) to the active segment and rolls a new one", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 2, 6, 7);
      const dir = join(tree.root, "streams", "1", "topics", "1", "partitions", "1");
      const segments = tree.partitions[0]!;
      // The writer: on every read the scrub makes, append half of the next batch to
      // the active segment (its index entry once the batch is whole); in passes 1
      // and 3, roll once: seal the active segment and start a new one (in passes 2
      // and 4 the active segment only grows).
      let active = { logPath: segments[1]!.logPath, indexPath: segments[1]!.indexPath, size: segments[1]!.chain.log.length };
      let nextOffset = segments[1]!.chain.nextOffset;
      let pending: { bytes: Uint8Array; written: number; entry: IndexEntry } | null = null;
      let batchesWritten = 0;
      let rolls = 0;
      let rollAtNextWholeBatch = false;
      const writeHalf = (): void => {
        if (pending === null) {
          const chain = buildChain({ startOffset: nextOffset, counts: [2], payloadBytes: 300, seed: batchesWritten + 50 });
          pending = {
            bytes: chain.log,
            written: 0,
            entry: { offset: nextOffset, timestamp: chain.batches[0]!.baseTimestamp, position: BigInt(active.size) },
          };
          nextOffset = chain.nextOffset;
        }
        const half = pending.written === 0 ? Math.floor(pending.bytes.length / 2) : pending.bytes.length;
        appendFileSync(active.logPath, pending.bytes.subarray(pending.written, half));
        active.size += half - pending.written;
        pending.written = half;
        if (half === pending.bytes.length) {
          appendFileSync(active.indexPath, encodeIndexEntry(pending.entry));
          pending = null;
          batchesWritten++;
          if (rollAtNextWholeBatch) {
            rollAtNextWholeBatch = false;
            rolls++;
            const stem = segmentStem(nextOffset);
            active = { logPath: join(dir, `${stem}.log`), indexPath: join(dir, `${stem}.index`), size: 0 };
            writeFileSync(active.logPath, new Uint8Array(0));
            writeFileSync(active.indexPath, new Uint8Array(0));
          }
        }
      };
      const writer = countingFs(() => writeHalf());
      const state = statePathIn(tree);
      let inFlightSeen = 0;
      let resumedSeen = 0;
      for (let pass = 0; pass < 4; pass++) {
        rollAtNextWholeBatch = pass % 2 === 0;
        const result = await collect(tree.root, { engine, state, scanFs: writer.scanFs, windowBytes: SMALL_WINDOW_BYTES });
        expect(result.findings).toEqual([]);
        expect(result.summary.complete).toBe(true);
        for (const event of result.events) {
          if (event.type === "segment-verified" && event.inFlightBytes > 0) inFlightSeen++;
          if (event.type === "segment-verified" && event.fromPosition > 0) resumedSeen++;
        }
      }
      // The scrub did meet half-written batches, and resumed a grown active segment where it had stopped.
      expect(inFlightSeen).toBeGreaterThan(0);
      expect(resumedSeen).toBeGreaterThan(0);
      expect(rolls).toBe(2);
      // The last pass saw a half-written batch at the end of the active segment, or a whole one: never a finding.
      const final = await collect(tree.root, { engine, state: null, windowBytes: SMALL_WINDOW_BYTES });
      expect(final.findings).toEqual([]);
      expect(final.summary.segmentsVerified).toBeGreaterThanOrEqual(2 + rolls);
    }
  });
});

/** A segment of batches whose payload bytes all equal `fill`: another fill gives the same length, different bytes, still valid. */
function filledSegment(dir: string, fill: number): { logPath: string; indexPath: string } {
  const batches: Uint8Array[] = [];
  const entries: IndexEntry[] = [];
  let position = 0;
  for (let b = 0; b < 5; b++) {
    const baseOffset = BigInt(b * 2);
    const baseTimestamp = 1_700_000_000_000_000n + BigInt(b);
    const batch = encodeBatch({ baseOffset, baseTimestamp, messages: [0, 1].map(() => ({ payload: new Uint8Array(400).fill(fill) })) });
    entries.push({ offset: baseOffset, timestamp: baseTimestamp, position: BigInt(position) });
    batches.push(batch);
    position += batch.length;
  }
  const log = new Uint8Array(position);
  let at = 0;
  for (const batch of batches) {
    log.set(batch, at);
    at += batch.length;
  }
  const stem = segmentStem(0n);
  const logPath = join(dir, `${stem}.log`);
  const indexPath = join(dir, `${stem}.index`);
  // In place (same inode), so only the bytes differ.
  const fd = openSync(logPath, existsSync(logPath) ? "r+" : "w");
  writeSync(fd, log, 0, log.length, 0);
  closeSync(fd);
  writeFileSync(indexPath, encodeIndex(entries));
  return { logPath, indexPath };
}

/** An mtime of whole seconds, so it can be set back exactly (utimes takes seconds). */
const FIXED_MTIME_SECONDS = 1_700_000_000;

describe("scrub: what changed in a sealed segment", () => {
  it("a bit flipped in a sealed segment between two runs is found on the next run, at its batch's position", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 3, 8, 3);
      const state = statePathIn(tree);
      const target = tree.partitions[0]![1]!;
      expect((await collect(tree.root, { engine, state })).findings).toEqual([]);
      const batch = target.chain.batches[5]!;
      const flipAt = batch.position + 256 + 48 + 20; // a payload byte of the batch's first message
      const bytes = readFileSync(target.logPath);
      bytes[flipAt]! ^= 0x10;
      writeFileSync(target.logPath, bytes);
      utimesSync(target.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS + 1);
      const { findings, summary } = await collect(tree.root, { engine, state });
      expect(findings.map((finding) => [finding.code, finding.path, finding.position])).toEqual([
        ["SealedSegmentChanged", target.logPath, null],
        ["FrameChecksumFailure", target.logPath, batch.position],
      ]);
      expect(summary.findingsByCode.FrameChecksumFailure).toBe(1);
      // A damaged segment is not remembered as verified: every run reports it again.
      const again = await collect(tree.root, { engine, state });
      expect(again.findings.map((finding) => [finding.code, finding.position])).toEqual([["FrameChecksumFailure", batch.position]]);
    }
  });

  it("silent bit rot (same size, mtime and inode) is found when the segment is due for re-verification", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 2, 8, 4);
      const state = statePathIn(tree);
      const target = tree.partitions[0]![0]!;
      utimesSync(target.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS);
      expect((await collect(tree.root, { engine, state })).findings).toEqual([]);
      const batch = target.chain.batches[2]!;
      const fd = openSync(target.logPath, "r+");
      writeSync(fd, new Uint8Array([0xee]), 0, 1, batch.position + 40); // the batch checksum's first byte
      closeSync(fd);
      utimesSync(target.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS);
      // Not due yet: nothing visible changed, so nothing is read.
      expect((await collect(tree.root, { engine, state })).summary.segmentsVerified).toBe(0);
      // Due (reverify after 0): found at its position, and the XXH3-64 says the bytes changed since they verified.
      const due = await collect(tree.root, { engine, state, reverifyAfterMs: 0, windowBytes: SMALL_WINDOW_BYTES });
      expect(due.findings.map((finding) => [finding.code, finding.path, finding.position])).toEqual([
        ["SealedSegmentChanged", target.logPath, null],
        ["BatchChecksumFailure", target.logPath, batch.position],
      ]);
      expect(due.findings[0]!.message).toContain("changed in place");
    }
  });

  it("a sealed segment rewritten in place with other valid bytes is SealedSegmentChanged by its XXH3-64", async () => {
    for (const engine of engines) {
      const root = tempDataDir();
      const dir = tempPartition(1, root);
      const sealed = filledSegment(dir, 0x41);
      writeSegment(dir, 10n, buildChain({ startOffset: 10n, counts: [2, 2] }).log);
      utimesSync(sealed.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS);
      // Beside the scrubbed tree: a state inside it is refused (docs/scrub.md §3.1).
      const state = `${root}-state.json`;
      onTestFinished(() => rmSync(state, { force: true }));
      expect((await collect(root, { engine, state })).findings).toEqual([]);
      const inode = statSync(sealed.logPath).ino;
      filledSegment(dir, 0x42);
      utimesSync(sealed.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS);
      expect(statSync(sealed.logPath).ino).toBe(inode);
      const { findings } = await collect(root, { engine, state, reverifyAfterMs: 0 });
      expect(findings.map((finding) => [finding.code, finding.path])).toEqual([["SealedSegmentChanged", sealed.logPath]]);
      expect(findings[0]!.message).toContain("hash");
    }
  });

  it("a just-rolled segment still receiving its last batch is growth; once settled, a sealed segment cut mid-batch is TruncatedBatch", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 2, 4, 15);
      const rolled = tree.partitions[0]![0]!;
      const whole = rolled.chain.log.length;
      const next = buildChain({ startOffset: 0n, counts: [2], payloadBytes: 300, seed: 77 }).log;
      appendFileSync(rolled.logPath, next.subarray(0, 400)); // the broker's last flush, half done
      appendFileSync(rolled.indexPath, new Uint8Array(10)); // and half an index entry
      const state = statePathIn(tree);
      for (let pass = 0; pass < 2; pass++) {
        const { events, findings } = await collect(tree.root, { engine, state });
        expect(findings).toEqual([]);
        // Not remembered as verified while it settles: every pass looks again.
        expect(events.find((event) => event.type === "segment-verified" && event.path === rolled.logPath)).toMatchObject({
          sealed: true,
          verifiedBytes: whole,
          inFlightBytes: 400,
        });
      }
      utimesSync(rolled.logPath, FIXED_MTIME_SECONDS, FIXED_MTIME_SECONDS); // settled long ago, still cut short: damage
      const { findings } = await collect(tree.root, { engine, state });
      expect(findings.map((finding) => [finding.code, finding.path, finding.position])).toEqual([
        ["TruncatedBatch", rolled.logPath, whole],
        ["IndexTrailingBytes", rolled.indexPath, rolled.chain.batches.length * 24],
      ]);
    }
  });

  it("index entries that disagree with the log are findings at the entry's byte in the index", async () => {
    for (const engine of engines) {
      const root = tempDataDir();
      const dir = tempPartition(1, root);
      const chain = buildChain({ counts: [3, 3, 3, 3] });
      const entries = indexAt(chain, [0, 1, 2, 3]);
      entries[2] = { ...entries[2]!, position: entries[2]!.position + 8n };
      writeSegment(dir, 0n, chain.log, entries);
      writeSegment(dir, chain.nextOffset, buildChain({ startOffset: chain.nextOffset, counts: [1] }).log);
      const { findings } = await collect(root, { engine, state: null });
      expect(findings.map((finding) => [finding.code, finding.position])).toEqual([["IndexEntryMismatch", 2 * 24]]);
    }
  });

  it("an index that disagrees everywhere gives 16 findings with positions and one with the count of the rest", async () => {
    const root = tempDataDir();
    const dir = tempPartition(1, root);
    const chain = buildChain({ counts: Array.from({ length: 40 }, () => 2), payloadBytes: 50 });
    writeSegment(
      dir,
      0n,
      chain.log,
      indexAt(
        chain,
        chain.batches.map((_, i) => i),
      ).map((entry) => ({ ...entry, offset: entry.offset + 1n })),
    );
    writeSegment(dir, chain.nextOffset, buildChain({ startOffset: chain.nextOffset, counts: [1] }).log);
    const { findings } = await collect(root, { engine: engines[0]!, state: null });
    expect(findings.map((finding) => finding.position)).toEqual([...Array.from({ length: 16 }, (_, i) => i * 24), null]);
    expect(findings.every((finding) => finding.code === "IndexEntryMismatch")).toBe(true);
    expect(findings[16]!.message).toContain("24 more entries");
  });
});

describe("scrub: retention and unreadable files", () => {
  it("a segment deleted by retention before the scrub reaches it is skipped and noted, not a finding", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 4, 4, 5);
      const [first, second] = tree.partitions[0]!;
      const events: ScrubEvent[] = [];
      for await (const event of scrub(tree.root, { engine, state: null, rate: Infinity })) {
        events.push(event);
        if (event.type === "segment-verified" && event.path === first!.logPath) {
          unlinkSync(second!.logPath);
          unlinkSync(second!.indexPath);
        }
      }
      expect(events.filter((event) => event.type === "finding" && event.finding.item === undefined)).toEqual([]);
      expect(events.filter((event) => event.type === "segment-skipped")).toEqual([
        expect.objectContaining({ path: second!.logPath, reason: "deleted" }),
      ]);
      expect(events.at(-1)).toMatchObject({ type: "pass-complete", summary: { complete: true, segmentsVerified: 3, segmentsDeleted: 1 } });
    }
  });

  it("a segment deleted while the scrub reads it is skipped and noted, and dropped from the state", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 3, 8, 6);
      const doomed = tree.partitions[0]![0]!;
      let deleted = false;
      const { scanFs } = countingFs((path, position) => {
        if (path === doomed.logPath && position > 0 && !deleted) {
          deleted = true;
          unlinkSync(doomed.logPath);
          unlinkSync(doomed.indexPath);
        }
      });
      const state = statePathIn(tree);
      const { events, findings, summary } = await collect(tree.root, { engine, state, scanFs, windowBytes: SMALL_WINDOW_BYTES });
      expect(deleted).toBe(true);
      expect(findings).toEqual([]);
      expect(events.filter((event) => event.type === "segment-skipped")).toEqual([
        expect.objectContaining({ path: doomed.logPath, reason: "deleted" }),
      ]);
      expect(summary).toMatchObject({ complete: true, segmentsDeleted: 1, segmentsVerified: 2 });
      expect(Object.keys((await loadState(state, tree.root)).state.segments)).not.toContain(doomed.logPath);
    }
  });

  it("a segment that cannot be read is an UnreadableFile finding naming it; the pass goes on", async () => {
    const tree = writeTree(1, 3, 4, 8);
    const broken = tree.partitions[0]![1]!;
    const { scanFs } = countingFs((path) => {
      if (path === broken.logPath) throw Object.assign(new Error("injected EIO"), { code: "EIO" });
    });
    const { findings, summary } = await collect(tree.root, { engine: engines[0]!, state: null, scanFs });
    expect(findings.map((finding) => [finding.code, finding.path])).toEqual([["UnreadableFile", broken.logPath]]);
    expect(findings[0]!.message).toContain("EIO");
    expect(summary).toMatchObject({ complete: true, segmentsVerified: 2 });
  });

  it("a FIFO named like a segment .log is an UnreadableFile finding, never opened, as the scan fails it (one lister)", async () => {
    const tree = writeTree(1, 2, 4, 9);
    const dir = dirname(tree.partitions[0]![0]!.logPath);
    const fifo = join(dir, "10000000000000000000.log");
    execFileSync("mkfifo", [fifo]);
    const { findings, summary } = await collect(tree.root, { engine: engines[0]!, state: null });
    expect(findings.map((finding) => [finding.code, finding.path, finding.segmentPath])).toEqual([["UnreadableFile", fifo, fifo]]);
    expect(findings[0]!.message).toContain("not a regular file");
    expect(summary).toMatchObject({ complete: true, segmentsVerified: 2 });
    // The scan lists the partition the same way and fails it on the same file.
    expect((await scanPartition(dir, { engine: engines[0]! })).partitions[0]!.error).toMatchObject({ code: "NotRegularFile", path: fifo });
  });
});

describe("scrub: stopping and the state file", () => {
  it("an abort stops within one window, saves the state, and the next run resumes where it stopped", async () => {
    for (const engine of engines) {
      const tree = writeTree(1, 4, 10, 9);
      const state = statePathIn(tree);
      const controller = new AbortController();
      const stopIn = tree.partitions[0]![1]!;
      let bytesAtAbort = -1;
      const reader = countingFs((path, position) => {
        if (path === stopIn.logPath && position >= 2 * SMALL_WINDOW_BYTES && bytesAtAbort < 0) {
          bytesAtAbort = reader.counter.bytes;
          controller.abort();
        }
      });
      const stopped = await collect(tree.root, {
        engine,
        state,
        signal: controller.signal,
        scanFs: reader.scanFs,
        windowBytes: SMALL_WINDOW_BYTES,
      });
      expect(bytesAtAbort).toBeGreaterThan(0);
      expect(reader.counter.bytes - bytesAtAbort).toBeLessThanOrEqual(SMALL_WINDOW_BYTES);
      expect(stopped.summary).toMatchObject({ complete: false, segmentsVerified: 1 });
      const resumed = await collect(tree.root, { engine, state, windowBytes: SMALL_WINDOW_BYTES });
      expect(resumed.findings).toEqual([]);
      expect(
        resumed.events.filter((event) => event.type === "segment-skipped").map((event) => event.type === "segment-skipped" && event.path),
      ).toEqual([tree.partitions[0]![0]!.logPath]);
      expect(resumed.summary).toMatchObject({ complete: true, segmentsVerified: 3 });
    }
  });

  it("a torn or unusable state file the scrub wrote is reported and ignored: a full pass, then a good state", async () => {
    const tree = writeTree(1, 2, 4, 10);
    const state = statePathIn(tree);
    await collect(tree.root, { engine: engines[0]!, state });
    const whole = readFileSync(state, "utf8");
    const parsed = JSON.parse(whole) as Record<string, unknown>;
    for (const damaged of [
      whole.slice(0, Math.floor(whole.length / 2)),
      JSON.stringify({ ...parsed, version: 99 }, null, 1),
      JSON.stringify({ ...parsed, segments: null }, null, 1),
    ]) {
      writeFileSync(state, damaged);
      const { events, summary } = await collect(tree.root, { engine: engines[0]!, state });
      expect(events[0]).toMatchObject({ type: "state-ignored", path: state });
      expect(summary).toMatchObject({ complete: true, segmentsVerified: 2 });
      expect((await loadState(state, tree.root)).problem).toBeNull();
    }
  });

  it("a file at the state path the scrub did not write is refused before anything is read or written, and kept as it was", async () => {
    const tree = writeTree(1, 2, 4, 10);
    const state = statePathIn(tree);
    onTestFinished(() => rmSync(state, { force: true }));
    for (const foreign of ["\u0000\u0000\u0000", "[]", JSON.stringify({ version: 1 }), "", '{\n "version": 2\n}\n']) {
      writeFileSync(state, foreign);
      const events: ScrubEvent[] = [];
      await expect(
        (async () => {
          for await (const event of scrub(tree.root, { engine: engines[0]!, state, rate: Infinity })) events.push(event);
        })(),
      ).rejects.toMatchObject({ name: "StateFileError", message: expect.stringContaining("is not a scrub state file segscan wrote") });
      expect(events).toEqual([]);
      expect(readFileSync(state, "utf8")).toBe(foreign);
    }
  });

  it("the default state file lives under $XDG_STATE_HOME/segscan, one per root", () => {
    const env = { XDG_STATE_HOME: "/var/lib/x" };
    expect(defaultStatePath("/data/a", env)).toMatch(/^\/var\/lib\/x\/segscan\/scrub-a-[0-9a-f]{16}\.json$/);
    expect(defaultStatePath("/data/a", env)).not.toBe(defaultStatePath("/other/a", env));
    expect(defaultStatePath("/data/a", {})).toContain("/.local/state/segscan/");
  });
});

describe("scrub: token bucket arithmetic (a fake clock: no time passes)", () => {
  it("charges every byte at the requested rate, keeps at most the burst as credit, and wakes early on abort", async () => {
    let nowMs = 0;
    let sleptMs = 0;
    const clock = {
      nowMs: () => nowMs,
      sleep: async (ms: number) => {
        sleptMs += ms;
        nowMs += ms;
      },
    };
    const bucket = new TokenBucket(1000, clock, 500);
    for (let i = 0; i < 10; i++) await bucket.take(400);
    expect(sleptMs).toBeCloseTo(4000, 6); // 4000 bytes at 1000 B/s
    nowMs += 60_000; // idle for a minute: credit is capped at the burst
    sleptMs = 0;
    await bucket.take(1500);
    expect(sleptMs).toBeCloseTo(1000, 6);
    const controller = new AbortController();
    controller.abort();
    sleptMs = 0;
    await bucket.take(10_000, controller.signal);
    expect(sleptMs).toBe(0);
  });
});

// ---------------------------------------------------------------------------
// The CLI

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startCli(
  args: string[],
  onStdoutLine?: (line: string, child: ReturnType<typeof spawn>) => void,
): { child: ReturnType<typeof spawn>; done: Promise<Run> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const done = new Promise<Run>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      partial += chunk;
      const lines = partial.split("\n");
      partial = lines.pop()!;
      for (const line of lines) onStdoutLine?.(line, child);
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

function runCli(args: string[], onStdoutLine?: (line: string, child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return startCli(args, onStdoutLine).done;
}

const jsonLines = (run: Run): ScrubEvent[] =>
  run.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ScrubEvent);

describe("segscan scrub (CLI)", () => {
  it("finds an injected flip, exits 4, and writes a metrics file a strict Prometheus parser accepts", async () => {
    const tree = writeTree(2, 2, 6, 11);
    const state = statePathIn(tree);
    const metrics = join(tree.root, "..", `${tree.root.split("/").at(-1)}-scrub.prom`);
    const clean = await runCli(["scrub", tree.root, "--state", state, "--metrics", metrics, "--rate", "200MiB/s"]);
    expect(clean.code).toBe(0);
    const before = parsePrometheusText(readFileSync(metrics, "utf8"));
    expect(before.get("segscan_scrub_bytes_verified_total")).toMatchObject({
      type: "counter",
      samples: [{ labels: { root: tree.root }, value: tree.logBytes }],
    });
    expect(before.get("segscan_scrub_last_full_pass_timestamp_seconds")!.samples[0]!.value).toBeGreaterThan(0);

    const target = tree.partitions[1]![0]!;
    const batch = target.chain.batches[3]!;
    const bytes = readFileSync(target.logPath);
    bytes[batch.position + 256 + 48 + 5]! ^= 1;
    writeFileSync(target.logPath, bytes);
    const found = await runCli(["scrub", tree.root, "--state", state, "--metrics", metrics, "--json"]);
    expect(found.code).toBe(4);
    const findings = jsonLines(found).flatMap((event) =>
      event.type === "finding" && event.finding.item === undefined ? [event.finding] : [],
    );
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "FrameChecksumFailure", path: target.logPath, position: batch.position }),
    );
    const after = parsePrometheusText(readFileSync(metrics, "utf8"));
    const byCode = Object.fromEntries(after.get("segscan_scrub_findings")!.samples.map((sample) => [sample.labels.code, sample.value]));
    expect(byCode).toMatchObject({ FrameChecksumFailure: 1, SealedSegmentChanged: 1, BatchChecksumFailure: 0 });
    expect(after.get("segscan_scrub_segments_verified_total")!.samples[0]!.value).toBe(5);
    expect(after.get("segscan_scrub_rate_limit_bytes_per_second")!.samples[0]!.value).toBe(64 * 1024 * 1024);
  });

  it("the metrics text escapes label values (a strict parser reads the root back)", () => {
    const root = '/data/we"ird\\path\nx';
    const summary: PassSummary = {
      startedAt: new Date(0).toISOString(),
      finishedAt: new Date(1000).toISOString(),
      elapsedMs: 1000,
      complete: true,
      segmentsVerified: 1,
      segmentsSkipped: 0,
      segmentsDeleted: 0,
      bytesVerified: 10,
      bytesRead: 10,
      bytesPerSecond: 10,
      findingsByCode: zeroFindingCounts(),
      findings: 0,
      statePath: null,
      lastFullPassAt: null,
      lastSuccessAt: null,
      totals: { bytesVerified: 10, segmentsVerified: 1, passesCompleted: 1 },
      failingPartitions: [{ partition: `${root}/streams/1`, findings: 2 }],
      node: null,
    };
    const parsed = parsePrometheusText(formatMetrics({ root, summary, rateLimitBytesPerSecond: Infinity }));
    expect(parsed.get("segscan_scrub_partition_findings")!.samples[0]!.labels.partition).toBe(`${root}/streams/1`);
    expect(parsed.get("segscan_scrub_bytes_verified_total")!.samples[0]!.labels.root).toBe(root);
    expect(parsed.get("segscan_scrub_rate_limit_bytes_per_second")!.samples[0]!.value).toBe(Infinity);
  });

  it("--watch stops on SIGTERM within the current window, saves the state, exits 0; the next run resumes", async () => {
    // ~65 KiB segments read at 64 KiB/s: about a second each, ample time for the signal to land mid-pass.
    const tree = writeTree(1, 4, 60, 12);
    const state = statePathIn(tree);
    let signalled = false;
    const stopped = await runCli(
      ["scrub", tree.root, "--state", state, "--watch", "--interval", "1h", "--json", "--window", "64KiB", "--rate", "64KiB/s"],
      (line, child) => {
        if (!signalled && (JSON.parse(line) as ScrubEvent).type === "segment-verified") {
          signalled = true;
          child.kill("SIGTERM");
        }
      },
    );
    expect(stopped.code).toBe(0);
    const events = jsonLines(stopped);
    expect(events.at(-1)).toMatchObject({ type: "pass-complete", summary: { complete: false } });
    const verifiedBefore = events
      .filter((event) => event.type === "segment-verified")
      .map((event) => event.type === "segment-verified" && event.path);
    expect(verifiedBefore.length).toBeGreaterThanOrEqual(1);
    expect(verifiedBefore.length).toBeLessThan(4);
    const resumed = await runCli(["scrub", tree.root, "--state", state, "--json", "--rate", "unlimited"]);
    expect(resumed.code).toBe(0);
    // `--json` counts the unchanged segments in one line per pass (the library yields each: see above).
    expect(jsonLines(resumed).filter((event) => event.type === "segment-skipped")).toEqual([]);
    expect(resumed.stdout).toContain(`{"type":"segments-skipped","reason":"unchanged","count":${verifiedBefore.length}}\n`);

    // Without --watch, a stopped pass is a cancelled command: 32, as scan.
    let cancelled = false;
    const single = await runCli(
      ["scrub", tree.root, "--state", state, "--json", "--reverify-after", "0", "--window", "64KiB", "--rate", "64KiB/s"],
      (line, child) => {
        if (!cancelled && (JSON.parse(line) as ScrubEvent).type === "segment-verified") {
          cancelled = true;
          child.kill("SIGINT");
        }
      },
    );
    expect(single.code).toBe(32);
    expect(jsonLines(single).at(-1)).toMatchObject({ type: "pass-complete", summary: { complete: false } });
  });

  it("the state file survives kill -9 during its write: it parses, old or new", async () => {
    const tree = writeTree(30, 4, 1, 13);
    const stateDir = mkdtempSync(join(tmpdir(), "segscan-scrub-state-"));
    const state = join(stateDir, "state.json");
    expect((await runCli(["scrub", tree.root, "--state", state, "--rate", "unlimited"])).code).toBe(0);
    const segmentsKnown = Object.keys((await loadState(state, tree.root)).state.segments).length;
    expect(segmentsKnown).toBe(120);
    let killedDuringWrite = false;
    const watcher = watch(stateDir);
    const { child, done } = startCli(["scrub", tree.root, "--state", state, "--rate", "unlimited", "--reverify-after", "0"]);
    watcher.on("change", (_event, name) => {
      if (String(name).endsWith(".tmp") && !killedDuringWrite) {
        killedDuringWrite = true;
        child.kill("SIGKILL");
      }
    });
    const run = await done;
    watcher.close();
    if (process.env.SEGSCAN_DEBUG) console.log(`killed during the state write: ${killedDuringWrite}, exit ${run.code}`);
    // Killed mid-write (usually) or finished first: either way the state must parse.
    expect(run.code === 0 || run.code === null).toBe(true);
    const loaded = await loadState(state, tree.root);
    expect(loaded.problem).toBeNull();
    expect(Object.keys(loaded.state.segments)).toHaveLength(120);
    const next = await runCli(["scrub", tree.root, "--state", state, "--rate", "unlimited", "--json"]);
    expect(jsonLines(next).filter((event) => event.type === "state-ignored")).toEqual([]);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("--watch --metrics beside a writer that keeps appending and rolling: no false finding, the injected flip is found, metrics parse", async () => {
    const tree = writeTree(2, 2, 6, 14);
    const state = statePathIn(tree);
    const metrics = join(tree.root, "..", `${tree.root.split("/").at(-1)}-watch.prom`);
    // The writer (this test process; the scrub is another): a batch to partition 1's
    // active segment every few milliseconds, half a batch at a time, rolling every 6 batches.
    const dir = join(tree.root, "streams", "1", "topics", "1", "partitions", "1");
    let active = tree.partitions[0]![1]!.logPath;
    let nextOffset = tree.partitions[0]![1]!.chain.nextOffset;
    let pending: Uint8Array | null = null;
    let batches = 0;
    const writer = setInterval(() => {
      if (pending === null) {
        pending = buildChain({ startOffset: nextOffset, counts: [2], payloadBytes: 300, seed: batches + 900 }).log;
        nextOffset += 2n;
        appendFileSync(active, pending.subarray(0, 300));
        return;
      }
      appendFileSync(active, pending.subarray(300));
      pending = null;
      if (++batches % 6 === 0) {
        active = join(dir, `${segmentStem(nextOffset)}.log`);
        writeFileSync(active, new Uint8Array(0));
      }
    }, 5);
    const target = tree.partitions[1]![0]!;
    const batch = target.chain.batches[4]!;
    let flipped = false;
    let stopped = false;
    const findings: ScrubFinding[] = [];
    try {
      const run = await runCli(
        [
          "scrub",
          tree.root,
          "--watch",
          "--interval",
          "1s",
          "--json",
          "--state",
          state,
          "--metrics",
          metrics,
          "--rate",
          "unlimited",
          "--window",
          "4KiB",
        ],
        (line, child) => {
          const event = JSON.parse(line) as ScrubEvent;
          if (event.type === "finding" && event.finding.item === undefined) findings.push(event.finding);
          if (event.type !== "pass-complete") return;
          if (!flipped) {
            flipped = true;
            const bytes = readFileSync(target.logPath);
            bytes[batch.position + 256 + 48 + 7]! ^= 0x80;
            writeFileSync(target.logPath, bytes);
          } else if (event.summary.findings > 0 && !stopped) {
            stopped = true;
            child.kill("SIGTERM");
          }
        },
      );
      expect(run.code).toBe(0);
    } finally {
      clearInterval(writer);
    }
    expect(batches).toBeGreaterThan(0);
    expect(findings.map((finding) => [finding.code, finding.path, finding.position])).toEqual([
      ["SealedSegmentChanged", target.logPath, null],
      ["FrameChecksumFailure", target.logPath, batch.position],
    ]);
    const parsed = parsePrometheusText(readFileSync(metrics, "utf8"));
    const byCode = Object.fromEntries(parsed.get("segscan_scrub_findings")!.samples.map((sample) => [sample.labels.code, sample.value]));
    expect(byCode).toMatchObject({ FrameChecksumFailure: 1, SealedSegmentChanged: 1 });
  });

  it("usage errors exit 16, a missing path 8", async () => {
    expect((await runCli(["scrub", "/nonexistent/segscan-scrub", "--state", "/tmp/x.json"])).code).toBe(8);
    expect((await runCli(["scrub", tmpdir(), "--rate", "fast"])).code).toBe(16);
    expect((await runCli(["scrub", tmpdir(), "--reverify-after", "30 days"])).code).toBe(16);
    expect((await runCli(["scrub", tmpdir(), "--interval", "10ms"])).code).toBe(16);
    const empty = mkdtempSync(join(tmpdir(), "segscan-scrub-empty-"));
    const nothing = await runCli(["scrub", empty, "--state", join(empty, "..", `${empty.split("/").at(-1)}.json`)]);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toContain("no segments found");
  });

  it("--nice runs the pass at lower priority (or says why it cannot) and still verifies", async () => {
    const tree = writeTree(1, 2, 3, 16);
    const run = await runCli(["scrub", tree.root, "--nice", "--state", statePathIn(tree), "--rate", "unlimited"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("2 segment(s) verified");
  });
});

// ---------------------------------------------------------------------------
// Files that are not what the scrub can use, signals, messages

/** A hung CLI is killed after this long, so a hang fails the test instead of stalling the run. */
const HANG_TIMEOUT_MS = 15_000;

/** `runCli`, but SIGKILLed after `timeoutMs`: `timedOut` says so. */
async function runCliWithin(
  args: string[],
  timeoutMs: number,
  onStdoutLine?: (line: string, child: ReturnType<typeof spawn>) => void,
): Promise<Run & { timedOut: boolean }> {
  const { child, done } = startCli(args, onStdoutLine);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  try {
    return { ...(await done), timedOut };
  } finally {
    clearTimeout(timer);
  }
}

/** A FIFO in a fresh temp dir: opening it for reading blocks until a writer opens it. */
function makeFifo(): string {
  const dir = trackedTempDir("segscan-scrub-fifo-");
  const fifo = join(dir, "state.fifo");
  const made = spawnSync("mkfifo", [fifo]);
  if (made.status !== 0) throw new Error(`mkfifo ${fifo} failed: ${made.stderr.toString()}`);
  return fifo;
}

describe("scrub: state and metrics files that are not regular files", () => {
  it("--state <FIFO> is refused up front (exit 16, says FIFO), never blocks on the open", async () => {
    const tree = writeTree(1, 2, 3, 21);
    const fifo = makeFifo();
    const run = await runCliWithin(["scrub", tree.root, "--state", fifo, "--rate", "unlimited"], HANG_TIMEOUT_MS);
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`--state: the state file ${fifo} is a FIFO (named pipe), not a regular file`);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("--metrics <FIFO> is refused up front too (exit 16); the FIFO is not replaced", async () => {
    const tree = writeTree(1, 2, 3, 22);
    const fifo = makeFifo();
    const run = await runCliWithin(
      ["scrub", tree.root, "--state", statePathIn(tree), "--metrics", fifo, "--rate", "unlimited"],
      HANG_TIMEOUT_MS,
    );
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(`--metrics: the metrics file ${fifo} is a FIFO (named pipe), not a regular file`);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("the library never blocks on a FIFO: scrub() rejects with StateFileError, loadState reports it (child process)", async () => {
    const tree = writeTree(1, 1, 2, 23);
    const fifo = makeFifo();
    const script = `
      const { scrub } = await import(${JSON.stringify(new URL("../dist/src/scrub/scrub.js", import.meta.url).href)});
      const { loadState } = await import(${JSON.stringify(new URL("../dist/src/scrub/state.js", import.meta.url).href)});
      const loaded = await loadState(process.argv[1], process.argv[2]);
      let rejected = null;
      try { for await (const _ of scrub(process.argv[2], { state: process.argv[1], rate: Infinity })); } catch (e) { rejected = { name: e.name, message: e.message }; }
      console.log(JSON.stringify({ problem: loaded.problem, rejected }));`;
    const { child, done } = await spawnBounded(process.execPath, ["--input-type=module", "-e", script, fifo, tree.root], {});
    const timer = setTimeout(() => child.kill("SIGKILL"), HANG_TIMEOUT_MS);
    const run = await done.finally(() => clearTimeout(timer));
    expect(run.signal).toBe(null);
    const result = JSON.parse(run.stdout) as { problem: string; rejected: { name: string; message: string } };
    expect(result.problem).toBe(`cannot read the state file ${fifo} (it is a FIFO (named pipe), not a regular file); running a full pass`);
    expect(result.rejected).toEqual({
      name: "StateFileError",
      message: `the scrub state file ${fifo} is a FIFO (named pipe), not a regular file: give the path of a regular file (or of none yet); nothing was scrubbed`,
    });
  });

  it("SIGTERM stops a rate-limited scrub promptly (exit 32); a second SIGINT exits at once (32)", async () => {
    const tree = writeTree(2, 4, 60, 24);
    onTestFinished(() => rmSync(statePathIn(tree), { force: true }));
    for (const signals of [["SIGTERM"], ["SIGINT", "SIGINT"]] as const) {
      let sent = false;
      let sentAtMs = 0;
      const run = await runCliWithin(
        ["scrub", tree.root, "--state", statePathIn(tree), "--json", "--reverify-after", "0", "--window", "64KiB", "--rate", "64KiB/s"],
        HANG_TIMEOUT_MS,
        (line, child) => {
          if (sent || (JSON.parse(line) as ScrubEvent).type !== "segment-verified") return;
          sent = true;
          sentAtMs = performance.now();
          for (const signal of signals) child.kill(signal);
        },
      );
      expect(run.timedOut, signals.join("+")).toBe(false);
      expect(run.code, signals.join("+")).toBe(32);
      expect(performance.now() - sentAtMs, signals.join("+")).toBeLessThan(5_000);
    }
  });
});

describe("scrub: messages", () => {
  it("a target that is no .log, partition or data dir is the usage error scan gives (exit 16), not a TypeError", async () => {
    const dir = trackedTempDir("segscan-scrub-wal-");
    const wal = join(dir, "journal.wal");
    writeFileSync(wal, "not a segment");
    const [scrubbed, scanned] = await Promise.all([runCli(["scrub", wal, "--state", join(dir, "state.json")]), runCli(["scan", wal])]);
    expect(scanned.code).toBe(16);
    expect(scrubbed.code).toBe(16);
    expect(scrubbed.stderr).toBe(scanned.stderr);
    expect(scrubbed.stderr).not.toContain("TypeError");
  });

  it("--state under a regular file says the parent is not a directory (exit 16), not EEXIST", async () => {
    const tree = writeTree(1, 1, 2, 25);
    const dir = trackedTempDir("segscan-scrub-parent-");
    const file = join(dir, "file");
    writeFileSync(file, "");
    const run = await runCli(["scrub", tree.root, "--state", join(file, "x.json")]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain(
      `--state: the state file ${file}/x.json cannot be created: its parent ${file} is a regular file, not a directory`,
    );
    expect(run.stderr).not.toContain("EEXIST");
  });

  it("--json summarizes the unchanged segments of a pass in one line with their count", async () => {
    const tree = writeTree(2, 3, 2, 26);
    const state = statePathIn(tree);
    onTestFinished(() => rmSync(state, { force: true }));
    expect((await runCli(["scrub", tree.root, "--state", state, "--rate", "unlimited"])).code).toBe(0);
    const second = await runCli(["scrub", tree.root, "--state", state, "--json", "--rate", "unlimited"]);
    expect(second.code).toBe(0);
    const lines = second.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    // Nothing changed since the first pass: all 6 segments (2 partitions × 3) are skipped.
    expect(lines.filter((line) => line.type === "segment-skipped")).toEqual([]);
    expect(lines.filter((line) => line.type === "segments-skipped")).toEqual([{ type: "segments-skipped", reason: "unchanged", count: 6 }]);
    expect(lines.at(-2)).toEqual({ type: "segments-skipped", reason: "unchanged", count: 6 });
    expect(lines.at(-1)).toMatchObject({ type: "pass-complete", summary: { segmentsSkipped: 6 } });
  });
});
