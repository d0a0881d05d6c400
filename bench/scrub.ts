/**
 * Scrub rate-limit accuracy (docs/scrub.md §2): a deep scrub of 256 MiB
 * (32 partitions × a sealed and an active segment of 4 MiB) at a requested
 * rate; prints the achieved read rate and its error. The bar is ±20%.
 * `node dist/bench/scrub.js [rate, e.g. 64MiB/s]` — data is written once under
 * the bench cache (page-cache reads: the figure measures the limiter, not the disk).
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRate } from "../src/cli/scrub.js";
import { createEngine } from "../src/engine/index.js";
import { encodeBatch, encodeIndex, segmentStem } from "../src/format/encode.js";
import type { IndexEntry } from "../src/format/records.js";
import { scrub } from "../src/scrub/scrub.js";
import { cacheRoot } from "./data.js";

const SCRUB_DATA_VERSION = "scrub-v1";
const PARTITIONS = 32;
/** Each segment's size: two per partition make 256 MiB in all. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
const MESSAGES_PER_BATCH = 64;
const PAYLOAD_BYTES = 1000;
const DEFAULT_BENCH_RATE = "64MiB/s";

/** A segment of whole batches from `startOffset`, about SEGMENT_BYTES long, with an index entry per batch. */
function buildSegment(startOffset: bigint): { log: Uint8Array; index: Uint8Array; nextOffset: bigint } {
  const batches: Uint8Array[] = [];
  const entries: IndexEntry[] = [];
  let position = 0;
  let offset = startOffset;
  while (position < SEGMENT_BYTES) {
    const baseTimestamp = 1_717_200_000_000_000n + offset;
    const messages = Array.from({ length: MESSAGES_PER_BATCH }, (_, m) => ({
      payload: new Uint8Array(PAYLOAD_BYTES).fill((Number(offset) + m) & 0xff),
    }));
    const batch = encodeBatch({ baseOffset: offset, baseTimestamp, messages });
    entries.push({ offset, timestamp: baseTimestamp, position: BigInt(position) });
    batches.push(batch);
    position += batch.length;
    offset += BigInt(MESSAGES_PER_BATCH);
  }
  const log = new Uint8Array(position);
  let at = 0;
  for (const batch of batches) {
    log.set(batch, at);
    at += batch.length;
  }
  return { log, index: encodeIndex(entries), nextOffset: offset };
}

function ensureData(dir: string): void {
  if (existsSync(join(dir, "complete"))) return;
  console.error(`bench scrub: writing ${PARTITIONS} partitions into ${dir}…`);
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const sealed = buildSegment(0n);
  const active = buildSegment(sealed.nextOffset);
  for (let p = 1; p <= PARTITIONS; p++) {
    const partition = join(staging, "streams", "1", "topics", "1", "partitions", String(p));
    mkdirSync(partition, { recursive: true });
    for (const [start, segment] of [
      [0n, sealed],
      [sealed.nextOffset, active],
    ] as const) {
      writeFileSync(join(partition, `${segmentStem(start)}.log`), segment.log);
      writeFileSync(join(partition, `${segmentStem(start)}.index`), segment.index);
    }
  }
  writeFileSync(join(staging, "complete"), "");
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
}

async function main(): Promise<void> {
  const requested = parseRate(process.argv[2] ?? DEFAULT_BENCH_RATE);
  const dir = join(cacheRoot(), SCRUB_DATA_VERSION);
  ensureData(dir);
  const engine = await createEngine("wasm");
  const startedAt = performance.now();
  let summary = null;
  for await (const event of scrub(dir, { rate: requested, state: null, engine })) {
    if (event.type === "finding") throw new Error(`bench data must scrub clean: ${event.finding.message}`);
    if (event.type === "pass-complete") summary = event.summary;
  }
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  if (summary === null) throw new Error("no pass summary");
  const achieved = summary.bytesRead / elapsedSeconds;
  const errorPercent = ((achieved - requested) / requested) * 100;
  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  console.log(
    `scrub rate limit: ${mib(summary.bytesRead)} MiB read (${mib(summary.bytesVerified)} MiB verified, ${summary.segmentsVerified} segments) ` +
      `in ${elapsedSeconds.toFixed(2)} s → ${mib(achieved)} MiB/s for ${mib(requested)} MiB/s requested (${errorPercent >= 0 ? "+" : ""}${errorPercent.toFixed(1)}%, bar ±20%)`,
  );
  if (Math.abs(errorPercent) > 20) process.exitCode = 1;
}

await main();
