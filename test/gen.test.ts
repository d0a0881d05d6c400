/**
 * The sample generator (`segscan gen`): deterministic, realistic, and every
 * scenario injects its one fault. The scan verdict of every scenario is checked
 * end to end through the built CLI in cli-scan.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { DEMO_SCENARIOS, SCENARIOS, generateDataDir, getScenario, listScenarios, type GeneratedDataDir } from "../src/gen/index.js";
import {
  LAST_CHUNK_MIN_BATCHES,
  MAX_BATCHES_PAST_SEGMENT_BYTES,
  MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES,
  MIN_FLUSH_BYTES,
} from "../src/gen/generate.js";
import { Prng } from "../src/gen/prng.js";
import { BATCH_HEADER_BYTES, FRAME_HEADER_BYTES, INDEX_ENTRY_BYTES } from "../src/format/constants.js";
import { VerifyStatus, readBatchHeader, readFrameHeader, readIndexEntries } from "../src/format/records.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { decodeUserHeaders, encodeUserHeaders, formatUserHeaderField, stringField, uintField } from "../src/format/user-headers.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-gen-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every file under `dir` → sha256, by relative path. */
async function tree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else
        out.set(
          relative(dir, path),
          createHash("sha256")
            .update(await readFile(path))
            .digest("hex"),
        );
    }
  };
  await walk(dir);
  return out;
}

describe("Prng", () => {
  it("is a pure function of its seed and stream", () => {
    const a = new Prng(42, 3);
    const b = new Prng(42, 3);
    const c = new Prng(42, 4);
    const seqA = Array.from({ length: 64 }, () => a.u32());
    expect(Array.from({ length: 64 }, () => b.u32())).toEqual(seqA);
    expect(Array.from({ length: 64 }, () => c.u32())).not.toEqual(seqA);
  });

  it("int stays in its inclusive range", () => {
    const rng = new Prng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const value = rng.int(3, 9);
      expect(value).toBeGreaterThanOrEqual(3);
      expect(value).toBeLessThanOrEqual(9);
      seen.add(value);
    }
    expect(seen.size).toBe(7);
  });
});

describe("generateDataDir", () => {
  let generated: GeneratedDataDir;

  beforeAll(async () => {
    generated = await generateDataDir(join(root, "small"), { seed: 11 });
  });

  it("writes streams/<s>/topics/<t>/partitions/<p>/ with several segments each, a few MiB in all", async () => {
    expect(generated.partitions.map((p) => p.relativePath)).toEqual([
      "streams/1/topics/1/partitions/1",
      "streams/1/topics/1/partitions/2",
      "streams/1/topics/2/partitions/1",
      "streams/1/topics/2/partitions/2",
    ]);
    expect(generated.logBytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(generated.logBytes).toBeLessThan(12 * 1024 * 1024);
    for (const partition of generated.partitions) {
      expect(partition.segments).toHaveLength(3);
      const names = (await readdir(partition.path)).sort();
      expect(names).toEqual(partition.segments.flatMap((s) => [`${s.stem}.index`, `${s.stem}.log`]).sort());
    }
  });

  it("is deterministic: the same seed writes the same bytes, another seed other bytes", async () => {
    const again = await generateDataDir(join(root, "small-again"), { seed: 11 });
    const other = await generateDataDir(join(root, "small-other"), { seed: 12 });
    const a = await tree(generated.dir);
    expect(await tree(again.dir)).toEqual(a);
    const b = await tree(other.dir);
    expect([...b.values()]).not.toEqual([...a.values()]);
  });

  it("holds verifying batches with contiguous offsets across segments, increasing timestamps and realistic messages", async () => {
    const engine = createTsEngine();
    const window = engine.openWindow(8 * 1024 * 1024);
    let frames = 0;
    let withHeaders = 0;
    const sizes: number[] = [];
    const headerKinds = new Set<string>();
    for (const partition of generated.partitions) {
      let expected = 0n;
      let lastTimestamp = 0n;
      for (const segment of partition.segments) {
        expect(segment.startOffset).toBe(expected);
        expect(segment.stem).toBe(segment.startOffset.toString().padStart(20, "0"));
        const log = new Uint8Array(await readFile(segment.logPath));
        expect(log.length).toBe(segment.size);
        let position = 0;
        let batchIndex = 0;
        while (position < log.length) {
          const header = readBatchHeader(log, position);
          const layout = segment.batches[batchIndex++]!;
          expect(layout.position).toBe(position);
          expect(header.baseOffset).toBe(expected);
          expect(header.partitionId).toBe(BigInt(partition.partitionId));
          expect(header.baseTimestamp).toBeGreaterThan(lastTimestamp);
          lastTimestamp = header.baseTimestamp;
          window.view().set(log.subarray(position, position + header.batchLength), 0);
          expect(window.headerStatus(0)).toBe(VerifyStatus.Ok);
          expect(window.verifyInWindow(0)).toBe(VerifyStatus.Ok);
          let at = position + BATCH_HEADER_BYTES;
          for (let i = 0; i < header.messageCount; i++) {
            const frame = readFrameHeader(log, at);
            expect(frame.offsetDelta).toBe(i);
            sizes.push(frame.payloadLength);
            if (frame.userHeadersLength > 0) {
              withHeaders++;
              // Iggy's layout and validation (kinds 1..=15, lengths 1..=255, nothing left over).
              const start = at + FRAME_HEADER_BYTES + frame.payloadLength;
              const decoded = decodeUserHeaders(log.subarray(start, start + frame.userHeadersLength));
              expect(decoded).toMatchObject({ ok: true });
              for (const entry of decoded.entries) headerKinds.add(`${entry.key.kind}=${entry.value.kind}`);
            }
            frames++;
            at += frame.frameBytes;
          }
          expect(at).toBe(position + header.batchLength);
          expected += BigInt(header.messageCount);
          position += header.batchLength;
        }
        expect(batchIndex).toBe(segment.batches.length);
        expect(segment.endOffset).toBe(expected - 1n);
      }
    }
    window.close();
    expect(frames).toBe(generated.messages);
    // Hundreds of bytes to a few KiB, some user headers.
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8 * 1024);
    expect(sizes.filter((size) => size >= 1024).length).toBeGreaterThan(frames * 0.1);
    expect(withHeaders / frames).toBeGreaterThan(0.15);
    expect(withHeaders / frames).toBeLessThan(0.5);
    expect([...headerKinds].sort()).toEqual(["string=raw", "string=string", "string=uint32"]);
  });

  it("writes one index entry per flushed chunk, pointing at the chunk's first batch", async () => {
    for (const partition of generated.partitions) {
      for (const segment of partition.segments) {
        const { entries, trailingBytes } = readIndexEntries(new Uint8Array(await readFile(segment.indexPath)));
        expect(trailingBytes).toBe(0);
        expect(entries.length).toBeGreaterThanOrEqual(2);
        expect(entries).toEqual(segment.indexEntries);
        expect(entries[0]!.position).toBe(0n);
        expect(entries[0]!.offset).toBe(segment.startOffset);
        entries.forEach((entry, chunk) => {
          const first = segment.batches[segment.chunkStarts[chunk]!]!;
          expect(entry.position).toBe(BigInt(first.position));
          expect(entry.offset).toBe(first.baseOffset);
          expect(entry.timestamp).toBe(first.baseTimestamp);
          if (chunk > 0) {
            // A chunk is flushed once it holds ≥ flushBytes.
            const previous = segment.batches[segment.chunkStarts[chunk - 1]!]!;
            expect(first.position - previous.position).toBeGreaterThanOrEqual(generated.profile.flushBytes);
          }
        });
        // The last chunk holds ≥ 3 batches, so tail faults have an interior batch.
        expect(segment.batches.length - segment.chunkStarts.at(-1)!).toBeGreaterThanOrEqual(3);
      }
    }
  });

  it("honours explicit sizes", async () => {
    const custom = await generateDataDir(join(root, "custom"), {
      size: "tiny",
      topicsPerStream: 1,
      partitionsPerTopic: 1,
      segmentsPerPartition: 5,
      segmentBytes: 40 * 1024,
      flushBytes: 10 * 1024,
    });
    expect(custom.partitions).toHaveLength(1);
    expect(custom.partitions[0]!.segments).toHaveLength(5);
    for (const segment of custom.partitions[0]!.segments) {
      expect(segment.size).toBeGreaterThanOrEqual(40 * 1024);
      expect(segment.indexEntries.length).toBeGreaterThanOrEqual(3);
    }
  });

  it("refuses a flush size below MIN_FLUSH_BYTES before writing anything, naming the limit (4 KiB segments flushed every 1 KiB ran away)", async () => {
    const dir = join(root, "flush-too-small");
    const refused = generateDataDir(dir, { size: "tiny", segmentBytes: 4 * 1024, flushBytes: 1024 });
    await expect(refused).rejects.toThrow(RangeError);
    await expect(refused).rejects.toThrow(
      /flushBytes \(--flush-bytes\) 1,024 is below the generator's limit of 8,192 bytes: .* could not gather the 3 batches it closes with/,
    );
    await expect(stat(dir)).rejects.toMatchObject({ code: "ENOENT" });
    expect(MIN_FLUSH_BYTES).toBe(8 * 1024);
    // At the limit, the same segments are written and close.
    const atLimit = await generateDataDir(join(root, "flush-at-limit"), {
      size: "tiny",
      partitionsPerTopic: 1,
      segmentBytes: 4 * 1024,
      flushBytes: MIN_FLUSH_BYTES,
    });
    for (const segment of atLimit.partitions[0]!.segments) expect(segment.size).toBeGreaterThanOrEqual(4 * 1024);
  });

  it("MIN_FLUSH_BYTES is above every batch of one message the generator writes", async () => {
    const sample = await generateDataDir(join(root, "one-message-batches"), { size: "small", seed: 7 });
    const single = sample.partitions.flatMap((p) => p.segments.flatMap((s) => s.batches.filter((b) => b.messageCount === 1)));
    expect(single.length).toBeGreaterThan(20);
    for (const batch of single) expect(batch.length).toBeLessThan(MIN_FLUSH_BYTES);
  });

  it("closes every segment within MAX_BATCHES_PAST_SEGMENT_BYTES batches of its size, whatever the batch sizes (the loop's progress bound)", async () => {
    // Batches of up to 128 messages against 8 KiB chunks: a chunk rarely holds 3 batches before it flushes,
    // so without the bound a segment ran on for hundreds of batches (14 MB for an 8 KiB segment).
    const generated = await generateDataDir(join(root, "bounded"), {
      size: "large",
      streams: 1,
      topicsPerStream: 1,
      partitionsPerTopic: 1,
      segmentsPerPartition: 2,
      segmentBytes: 8 * 1024,
      flushBytes: 8 * 1024,
    });
    expect(MAX_BATCHES_PAST_SEGMENT_BYTES).toBe(
      MAX_CHUNKS_FLUSHED_PAST_SEGMENT_BYTES * (LAST_CHUNK_MIN_BATCHES - 1) + LAST_CHUNK_MIN_BATCHES,
    );
    for (const segment of generated.partitions[0]!.segments) {
      const full = segment.batches.findIndex((batch) => batch.position + batch.length >= 8 * 1024);
      expect(full).toBeGreaterThanOrEqual(0);
      expect(segment.batches.length - full).toBeLessThanOrEqual(MAX_BATCHES_PAST_SEGMENT_BYTES);
      // The segment still closes on a last chunk of LAST_CHUNK_MIN_BATCHES batches, and flushes happen at flushBytes.
      expect(segment.batches.length - segment.chunkStarts.at(-1)!).toBeGreaterThanOrEqual(LAST_CHUNK_MIN_BATCHES);
      for (let chunk = 1; chunk < segment.chunkStarts.length; chunk++) {
        const first = segment.batches[segment.chunkStarts[chunk]!]!;
        const previous = segment.batches[segment.chunkStarts[chunk - 1]!]!;
        expect(first.position - previous.position).toBeGreaterThanOrEqual(8 * 1024);
      }
    }
  });

  it("refuses a non-empty target directory unless forced", async () => {
    const dir = join(root, "occupied");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "precious"), "real data");
    await expect(generateDataDir(dir, { size: "tiny" })).rejects.toThrow(/not empty/);
    expect(await readFile(join(dir, "precious"), "utf8")).toBe("real data");
    await expect(generateDataDir(dir, { size: "tiny", force: true })).resolves.toBeDefined();
  });

  it("rejects bad options", async () => {
    await expect(generateDataDir(join(root, "bad1"), { scenario: "no-such-fault" })).rejects.toThrow(/unknown scenario/);
    await expect(generateDataDir(join(root, "bad2"), { scenario: "hole", segmentsPerPartition: 2 })).rejects.toThrow(/at least 3 segments/);
    await expect(generateDataDir(join(root, "bad3"), { segmentBytes: 0 })).rejects.toThrow(RangeError);
    await expect(
      generateDataDir(join(root, "bad4"), {
        scenarios: ["torn-tail", "hole", "zero-tail"],
        topicsPerStream: 1,
        partitionsPerTopic: 2,
      }),
    ).rejects.toThrow(/need at least as many partitions/);
  });
});

describe("scenarios", () => {
  it("are listed with unique names, one-line descriptions and expectations", () => {
    const listed = listScenarios();
    expect(listed.map((s) => s.name)).toEqual(SCENARIOS.map((s) => s.name));
    expect(new Set(listed.map((s) => s.name)).size).toBe(listed.length);
    for (const { name, description } of listed) {
      expect(name).toMatch(/^[a-z][a-z-]*$/);
      expect(description.length).toBeGreaterThan(20);
      expect(description).not.toContain("\n");
      const expected = getScenario(name).expected;
      expect(expected.verdict === "refused").toBe(expected.refusal !== null);
      expect(expected.scanExit).toBe(expected.verdict === "clean" ? 0 : 4);
    }
    for (const name of [
      "zero-tail",
      "torn-tail",
      "payload-bitflip",
      "length-bitflip",
      "forward-gap",
      "backward-gap",
      "lost-index",
      "non-monotone-index",
      "index-before-start",
      "hole",
      "empty-non-tail",
      "scratch-files",
      "crafted-residue",
    ]) {
      expect(listed.map((s) => s.name)).toContain(name);
    }
    for (const name of DEMO_SCENARIOS) expect(() => getScenario(name)).not.toThrow();
  });

  it.each(SCENARIOS.map((s) => s.name))("%s changes exactly the first partition", async (name) => {
    const base = await generateDataDir(join(root, `base-${name}`), { size: "tiny", seed: 5 });
    const faulty = await generateDataDir(join(root, `fault-${name}`), { size: "tiny", seed: 5, scenario: name });
    expect(faulty.faults).toHaveLength(1);
    expect(faulty.faults[0]!.partition).toBe(faulty.partitions[0]!.path);
    expect(faulty.faults[0]!.detail.length).toBeGreaterThan(0);
    const [first, ...others] = base.partitions;
    for (const [i, partition] of others.entries()) {
      expect(await tree(faulty.partitions[i + 1]!.path)).toEqual(await tree(partition.path));
    }
    const before = await tree(first!.path);
    const after = await tree(faulty.partitions[0]!.path);
    if (name === "clean") expect(after).toEqual(before);
    else expect(after).not.toEqual(before);
  });

  it("crafted-residue is large but sparse", async () => {
    const generated = await generateDataDir(join(root, "crafted"), { size: "tiny", scenario: "crafted-residue" });
    const log = generated.partitions[0]!.segments.at(-1)!.logPath;
    const info = await stat(log);
    expect(info.size).toBeGreaterThan(64 * 1024 * 1024);
    // Allocated blocks stay far below the logical size (where the filesystem supports holes).
    expect(info.blocks * 512).toBeLessThan(8 * 1024 * 1024);
  });

  it("torn-index leaves a partial trailing entry", async () => {
    const generated = await generateDataDir(join(root, "torn-index"), { size: "tiny", scenario: "torn-index" });
    const size = (await stat(generated.partitions[0]!.segments.at(-1)!.indexPath)).size;
    expect(size % INDEX_ENTRY_BYTES).not.toBe(0);
  });

  it("payload-bitflip damages a frame payload, nothing else", async () => {
    const base = await generateDataDir(join(root, "flip-base"), { size: "tiny", seed: 9 });
    const faulty = await generateDataDir(join(root, "flip"), { size: "tiny", seed: 9, scenario: "payload-bitflip" });
    const segment = faulty.partitions[0]!.segments[1]!;
    const a = await readFile(base.partitions[0]!.segments[1]!.logPath);
    const b = await readFile(segment.logPath);
    const diffs = [...a.keys()].filter((i) => a[i] !== b[i]);
    expect(diffs).toHaveLength(1);
    const batch = segment.batches.find(
      (candidate) => candidate.position <= diffs[0]! && diffs[0]! < candidate.position + candidate.length,
    )!;
    expect(diffs[0]!).toBeGreaterThanOrEqual(batch.position + BATCH_HEADER_BYTES + FRAME_HEADER_BYTES);
    expect(batch.chunk).toBe(segment.chunkStarts.length - 1);
    expect(batch).not.toBe(segment.batches.at(-1));
  });
});

describe("user headers in Iggy's layout", () => {
  it("encode as [key_kind u8][key_len u32 LE][key][value_kind u8][value_len u32 LE][value] and decode back", () => {
    const block = encodeUserHeaders([
      { key: stringField("ct"), value: stringField("json") },
      { key: stringField("n"), value: uintField("uint32", 7n) },
    ]);
    expect([...block]).toEqual([
      2, 2, 0, 0, 0, 0x63, 0x74, 2, 4, 0, 0, 0, 0x6a, 0x73, 0x6f, 0x6e, 2, 1, 0, 0, 0, 0x6e, 11, 4, 0, 0, 0, 7, 0, 0, 0,
    ]);
    const decoded = decodeUserHeaders(block);
    expect(decoded.ok).toBe(true);
    expect(decoded.entries.map((entry) => [formatUserHeaderField(entry.key), formatUserHeaderField(entry.value)])).toEqual([
      ['"ct"', '"json"'],
      ['"n"', "7"],
    ]);
  });

  it("rejects what Iggy's validation rejects: kind 0 or 16, a length of 0 or 256, a truncated entry", () => {
    const good = encodeUserHeaders([{ key: stringField("k"), value: stringField("v") }]);
    const patched = (at: number, byte: number): Uint8Array => {
      const copy = good.slice();
      copy[at] = byte;
      return copy;
    };
    expect(decodeUserHeaders(patched(0, 0))).toMatchObject({ ok: false, problem: expect.stringMatching(/key kind 0/) });
    expect(decodeUserHeaders(patched(6, 16))).toMatchObject({ ok: false, problem: expect.stringMatching(/value kind 16/) });
    expect(decodeUserHeaders(patched(1, 0))).toMatchObject({ ok: false, problem: expect.stringMatching(/key length 0/) });
    const long = good.slice();
    new DataView(long.buffer).setUint32(7, 256, true);
    expect(decodeUserHeaders(long)).toMatchObject({ ok: false, problem: expect.stringMatching(/value length 256/) });
    expect(decodeUserHeaders(good.subarray(0, good.length - 1))).toMatchObject({ ok: false });
    expect(() => encodeUserHeaders([{ key: stringField(""), value: stringField("v") }])).toThrow(RangeError);
    expect(() => encodeUserHeaders([{ key: stringField("k"), value: stringField("v".repeat(256)) }])).toThrow(RangeError);
  });
});
