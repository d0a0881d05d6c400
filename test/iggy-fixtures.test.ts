/**
 * An outside reference: partitions written by Apache Iggy's own encoding,
 * admission, stamping, flush and sparse-index code (test/fixtures/iggy-written,
 * its README and expected.json). Both engines, tail and deep scans, must call
 * both partitions clean with exactly the bounds Iggy wrote, and `dump --json`
 * must list exactly Iggy's batches.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dumpLog } from "../src/cli/dump.js";
import { BATCH_HEADER_BYTES, FRAME_HEADER_BYTES } from "../src/format/constants.js";
import { readBatchHeader, readFrameHeader } from "../src/format/records.js";
import { decodeUserHeaders } from "../src/format/user-headers.js";
import { scanPath } from "../src/node/scan-path.js";
import { toJsonReport } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";
import { colors } from "../src/report/format.js";
import { allEngines } from "./helpers/engines.js";

const fixtures = fileURLToPath(new URL("./fixtures/iggy-written/", import.meta.url));
const CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));

interface ExpectedBatch {
  position: number;
  base_offset: string;
  message_count: number;
  base_timestamp: string;
  origin_timestamp: string;
  batch_length: number;
  checksum: string;
}
interface ExpectedSegment {
  start_offset: string;
  end_offset: string | null;
  start_timestamp: string | null;
  end_timestamp: string | null;
  size: number;
  sealed: boolean;
  messages: number;
  index_entries: [string, string, number][];
  file: string;
  batches: ExpectedBatch[];
}
interface ExpectedPartition {
  path: string;
  partition_id: number;
  segments: ExpectedSegment[];
}
const expected = JSON.parse(readFileSync(join(fixtures, "expected.json"), "utf8")) as { partitions: ExpectedPartition[] };

/** A dump's batch as expected.json spells it. */
function dumpedBatch(batch: Record<string, unknown>): ExpectedBatch {
  return {
    position: batch.position as number,
    base_offset: batch.baseOffset as string,
    message_count: batch.messageCount as number,
    base_timestamp: batch.baseTimestamp as string,
    origin_timestamp: batch.originTimestamp as string,
    batch_length: batch.batchLength as number,
    checksum: batch.checksum as string,
  };
}

describe("partitions written by Apache Iggy", () => {
  it("runs on both engines", async () => {
    expect((await allEngines()).map((engine) => engine.kind)).toEqual(["ts", "wasm"]);
  });

  it("expected.json describes two partitions, one with a trailing empty segment", () => {
    expect(expected.partitions.map((partition) => partition.path)).toEqual([
      "streams/1/topics/1/partitions/2",
      "streams/1/topics/1/partitions/4",
    ]);
    expect(expected.partitions[0]!.segments.at(-1)).toMatchObject({ size: 0, messages: 0, end_offset: null });
  });

  for (const verify of ["tail", "full"] as const) {
    it(`scan in ${verify} mode: both partitions clean, every segment with Iggy's exact bounds (both engines)`, async () => {
      for (const engine of await allEngines()) {
        const report = await scanPath(fixtures, { engine, verify, concurrency: 1 });
        const json = toJsonReport(report);
        expect(validateJsonReport(JSON.parse(JSON.stringify(json)))).toEqual([]);
        expect(report.summary, engine.kind).toMatchObject({ partitions: 2, clean: 2, repairable: 0, refused: 0, failed: 0 });
        expect(report.partitions.map((partition) => partition.path)).toEqual(
          expected.partitions.map((partition) => join(fixtures, partition.path)),
        );
        report.partitions.forEach((partition, p) => {
          const want = expected.partitions[p]!;
          expect(partition.verdict).toBe("clean");
          expect(partition.action).toBe("serve");
          expect(partition.sweep).toEqual([]);
          expect(partition.segments).toHaveLength(want.segments.length);
          partition.segments.forEach((segment, s) => {
            const seg = want.segments[s]!;
            const where = `${engine.kind} ${verify} ${want.path}/${seg.file}`;
            expect(segment.logPath, where).toBe(join(fixtures, want.path, seg.file));
            expect(
              {
                startOffset: segment.startOffset.toString(),
                endOffset: segment.endOffset?.toString() ?? null,
                startTimestamp: segment.startTimestamp?.toString() ?? null,
                endTimestamp: segment.endTimestamp?.toString() ?? null,
                messagesSize: segment.messagesSize,
                walkedSize: segment.walkedSize,
                indexEntries: segment.index.entries,
              },
              where,
            ).toEqual({
              startOffset: seg.start_offset,
              endOffset: seg.end_offset,
              startTimestamp: seg.start_timestamp,
              endTimestamp: seg.end_timestamp,
              messagesSize: seg.size,
              walkedSize: seg.size,
              indexEntries: seg.index_entries.length,
            });
            expect(segment.outcome, where).toBe("clean");
            expect(segment.refusal, where).toBeNull();
            expect(segment.gaps, where).toEqual([]);
            expect(segment.index, where).toMatchObject({ trailingBytes: 0, rebuilt: false, mismatches: 0 });
            // Deep mode walks every batch, so it knows every count; tail mode counts what it walked
            // (from the last index entry) and says null when that is not the whole segment.
            if (verify === "full" || segment.messageCount !== null) expect(segment.messageCount, where).toBe(seg.messages);
          });
        });
      }
    });
  }

  it("dump --json lists exactly Iggy's batches, and every message's user headers decode (both engines)", async () => {
    for (const engine of await allEngines()) {
      for (const partition of expected.partitions) {
        for (const segment of partition.segments) {
          let text = "";
          const path = join(fixtures, partition.path, segment.file);
          const result = await dumpLog(path, {
            messages: true,
            json: true,
            engine,
            windowBytes: 64 * 1024,
            color: colors(false),
            write: async (chunk) => {
              text += chunk;
            },
          });
          const dump = JSON.parse(text) as { size: number; verified: number; stopped: unknown; batches: Record<string, unknown>[] };
          const where = `${engine.kind} ${partition.path}/${segment.file}`;
          expect(dump.size, where).toBe(segment.size);
          expect(dump.stopped, where).toBeNull();
          expect(result).toMatchObject({ batches: segment.batches.length, verified: segment.batches.length, stopped: null });
          expect(dump.batches.map(dumpedBatch), where).toEqual(segment.batches);
          for (const batch of dump.batches) {
            expect(batch.verify).toBe("ok");
            const messages = batch.messages as {
              checksum: string;
              timestamp: string;
              userHeadersLength: number;
              userHeaders: unknown[];
              userHeadersProblem?: string;
            }[];
            expect(messages).toHaveLength(batch.messageCount as number);
            for (const message of messages) {
              expect(message.checksum).toBe("ok");
              // Iggy's message timestamp is the batch's base timestamp.
              expect(message.timestamp).toBe(batch.baseTimestamp);
              expect(message.userHeadersProblem).toBeUndefined();
              if (message.userHeadersLength > 0) expect(message.userHeaders.length).toBeGreaterThan(0);
            }
          }
        }
      }
    }
  });

  it("every user-header block Iggy wrote decodes under segscan's reading of the layout, with several kinds", () => {
    const kinds = new Set<string>();
    let blocks = 0;
    for (const partition of expected.partitions) {
      for (const segment of partition.segments) {
        const log = new Uint8Array(readFileSync(join(fixtures, partition.path, segment.file)));
        for (const batch of segment.batches) {
          const header = readBatchHeader(log, batch.position);
          let at = batch.position + BATCH_HEADER_BYTES;
          for (let i = 0; i < header.messageCount; i++) {
            const frame = readFrameHeader(log, at);
            if (frame.userHeadersLength > 0) {
              const start = at + FRAME_HEADER_BYTES + frame.payloadLength;
              const decoded = decodeUserHeaders(log.subarray(start, start + frame.userHeadersLength));
              expect(decoded).toMatchObject({ ok: true });
              for (const entry of decoded.entries) kinds.add(entry.value.kind);
              blocks++;
            }
            at += frame.frameBytes;
          }
        }
      }
    }
    expect(blocks).toBeGreaterThan(0);
    expect(kinds.size).toBeGreaterThan(2);
  });

  it("the built CLI's `dump --json` lists Iggy's batches for the tiny partition", () => {
    const partition = expected.partitions[1]!;
    const segment = partition.segments[0]!;
    const stdout = execFileSync(process.execPath, [CLI, "dump", "--json", join(fixtures, partition.path, segment.file)], {
      encoding: "utf8",
    });
    expect((JSON.parse(stdout) as { batches: Record<string, unknown>[] }).batches.map(dumpedBatch)).toEqual(segment.batches);
  });
});
