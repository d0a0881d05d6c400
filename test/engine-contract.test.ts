/**
 * The EngineWindow contract (issue 16 item 8), enforced once in
 * src/engine/window.ts: both engines throw the same error type and message for
 * every call outside it, and the Wasm memory layout (item 19) is read from the
 * module and asserted at load.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as formatConstants from "../src/format/constants.js";
import { encodeBatch } from "../src/format/encode.js";
import { writeU64 } from "../src/format/bytes.js";
import { VerifyStatus } from "../src/format/records.js";
import type { Engine, EngineWindow } from "../src/engine/types.js";
import { WALK_RESULT_SLOT, createWasmEngine, readLayout, readWalkResultAddress } from "../src/engine/wasm/engine.js";
import { allEngines } from "./helpers/engines.js";

const engines = await allEngines();
const WINDOW_BYTES = 4096;

/** What a call did: its result, or its error's type and message. */
function outcome(call: () => unknown): { result?: unknown; error?: string; message?: string } {
  try {
    return { result: call() };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

/** Runs `call` on a fresh window of every engine; all outcomes must be identical, and are returned. */
function onEveryEngine(prepare: (window: EngineWindow) => void, call: (window: EngineWindow) => unknown) {
  const outcomes = engines.map((engine: Engine) => {
    const window = engine.openWindow(WINDOW_BYTES);
    try {
      prepare(window);
      return outcome(() => call(window));
    } finally {
      window.close();
    }
  });
  for (const other of outcomes.slice(1)) expect(other).toEqual(outcomes[0]);
  return outcomes[0]!;
}

const batch = encodeBatch({ baseOffset: 7n, baseTimestamp: 1n, messages: [{ payload: new Uint8Array(3000) }] });
const putBatch = (at: number) => (window: EngineWindow) => window.view().set(batch, at);
const nothing = () => {};

describe("EngineWindow contract: both engines throw the same errors", () => {
  it("runs on both engines", () => {
    expect(engines.map((engine) => engine.kind).sort()).toEqual(["ts", "wasm"]);
  });

  it("out-of-range indexes are RangeErrors", () => {
    for (const call of [
      (w: EngineWindow) => w.headerStatus(-1),
      (w: EngineWindow) => w.headerStatus(WINDOW_BYTES - 255),
      (w: EngineWindow) => w.headerStatus(0.5),
      (w: EngineWindow) => w.firstNonZero(WINDOW_BYTES - 10, 11),
      (w: EngineWindow) => w.firstNonZero(-1, 4),
      (w: EngineWindow) => w.verifyInWindow(WINDOW_BYTES - 100),
      (w: EngineWindow) => w.verifyStart(WINDOW_BYTES),
      (w: EngineWindow) =>
        w.scanCandidates({
          fromIndex: 0,
          toIndex: WINDOW_BYTES - 254,
          fileEndIndex: 1 << 20,
          minBaseOffset: 0n,
          spentUnits: 0,
          limitUnits: 100,
        }),
      (w: EngineWindow) =>
        w.scanCandidates({
          fromIndex: 0,
          toIndex: 10,
          fileEndIndex: -1,
          minBaseOffset: 0n,
          spentUnits: 0,
          limitUnits: 100,
        }),
    ]) {
      expect(onEveryEngine(nothing, call)).toMatchObject({ error: "RangeError" });
    }
    // In range, the same values.
    expect(onEveryEngine(nothing, (w) => w.headerStatus(WINDOW_BYTES - 256))).toEqual({ result: VerifyStatus.LengthBelowHeader });
    expect(onEveryEngine(putBatch(100), (w) => w.firstNonZero(0, WINDOW_BYTES))).toEqual({ result: 100 + batch.findIndex((b) => b !== 0) });
  });

  it("walkResident: bad indexes and offsets are RangeErrors with the same message from both engines", () => {
    const request = { fromIndex: 0, heldEndIndex: WINDOW_BYTES, fileEndIndex: WINDOW_BYTES, stopIndex: WINDOW_BYTES, expectedOffset: 7n };
    for (const [bad, message] of [
      [{ fromIndex: -1 }, "walkResident: fromIndex must be a non-negative integer, got -1"],
      [{ fromIndex: 0.5 }, "walkResident: fromIndex must be a non-negative integer, got 0.5"],
      [{ heldEndIndex: Number.NaN }, "walkResident: heldEndIndex must be a non-negative integer, got NaN"],
      [{ fileEndIndex: -3 }, "walkResident: fileEndIndex must be a non-negative integer, got -3"],
      [{ stopIndex: Number.POSITIVE_INFINITY }, "walkResident: stopIndex must be a non-negative integer, got Infinity"],
      [{ heldEndIndex: WINDOW_BYTES + 1 }, `walkResident: heldEndIndex ${WINDOW_BYTES + 1} is past the ${WINDOW_BYTES}-byte window`],
      [{ fromIndex: 200, heldEndIndex: 100 }, "walkResident: fromIndex 200 is past heldEndIndex 100"],
      [{ expectedOffset: -1n }, "walkResident: expectedOffset must be a u64, got -1"],
      [{ expectedOffset: 1n << 64n }, "walkResident: expectedOffset must be a u64, got 18446744073709551616"],
    ] as const) {
      expect(onEveryEngine(putBatch(0), (w) => w.walkResident({ ...request, ...bad }))).toEqual({ error: "RangeError", message });
    }
    // In range, the same walk: the batch at 100, then zeros (LengthBelowHeader) where it ends.
    expect(onEveryEngine(putBatch(100), (w) => w.walkResident({ ...request, fromIndex: 100 }))).toEqual({
      result: {
        stopIndex: 100 + batch.length,
        batches: 1,
        messages: 1,
        expectedOffset: 8n,
        firstWithMessages: { index: 100, baseOffset: 7n, baseTimestamp: 1n, messageCount: 1 },
        lastWithMessages: { index: 100, baseOffset: 7n, baseTimestamp: 1n, messageCount: 1 },
      },
    });
    // stopIndex past the window and fromIndex == heldEndIndex are in range.
    expect(onEveryEngine(putBatch(0), (w) => w.walkResident({ ...request, stopIndex: 2 ** 40 }))).toMatchObject({ result: { batches: 1 } });
    expect(onEveryEngine(putBatch(0), (w) => w.walkResident({ ...request, fromIndex: WINDOW_BYTES }))).toMatchObject({
      result: { stopIndex: WINDOW_BYTES, batches: 0 },
    });
  });

  it("walkResident ends a streaming verification in progress (it verifies with the same state)", () => {
    const request = { fromIndex: 0, heldEndIndex: WINDOW_BYTES, fileEndIndex: WINDOW_BYTES, stopIndex: WINDOW_BYTES, expectedOffset: 7n };
    expect(
      onEveryEngine(putBatch(0), (w) => {
        w.verifyStart(0);
        w.walkResident(request);
        return w.verifyFeed(256, 10);
      }),
    ).toEqual({ error: "Error", message: "verifyFeed called without verifyStart" });
  });

  it("a batch larger than the window (or below the header) cannot be verified in it", () => {
    // The batch is 3,000 + 48 + 256 bytes: a header at 1,000 claims bytes past the 4,096-byte window.
    const over = onEveryEngine(
      (w) => w.view().set(batch.subarray(0, 256), 1000),
      (w) => w.verifyInWindow(1000),
    );
    expect(over).toMatchObject({ error: "RangeError", message: expect.stringMatching(/not whole in the 4096-byte window/) });
    expect(onEveryEngine(putBatch(100), (w) => w.verifyInWindow(100))).toEqual({ result: VerifyStatus.Ok });
    const short = (w: EngineWindow) => writeU64(w.view(), 32, 255n);
    expect(onEveryEngine(short, (w) => w.verifyInWindow(0))).toMatchObject({ error: "RangeError" });
    expect(onEveryEngine(short, (w) => w.verifyStart(0))).toMatchObject({ error: "RangeError" });
  });

  it("streaming verification out of order is an Error; feeding past the blob a RangeError", () => {
    const blob = batch.length - 256;
    expect(onEveryEngine(putBatch(0), (w) => w.verifyFinish())).toEqual({
      error: "Error",
      message: "verifyFinish called without verifyStart",
    });
    expect(onEveryEngine(putBatch(0), (w) => w.verifyFeed(256, 10))).toEqual({
      error: "Error",
      message: "verifyFeed called without verifyStart",
    });
    expect(
      onEveryEngine(putBatch(0), (w) => {
        w.verifyStart(0);
        w.verifyFeed(256, blob - 1);
        return w.verifyFinish();
      }),
    ).toEqual({ error: "Error", message: "verifyFinish called before the whole blob was fed (1 bytes remain)" });
    expect(
      onEveryEngine(putBatch(0), (w) => {
        w.verifyStart(0);
        return w.verifyFeed(256, blob + 1);
      }),
    ).toMatchObject({ error: "RangeError" });
    expect(
      onEveryEngine(putBatch(0), (w) => {
        w.verifyStart(0);
        w.verifyFeed(256, 1000);
        w.verifyFeed(1256, blob - 1000);
        return w.verifyFinish();
      }),
    ).toEqual({ result: VerifyStatus.Ok });
    // A failed feed is final: finish returns its status without the "not fed" error.
    expect(
      onEveryEngine(putBatch(0), (w) => {
        w.view()[256 + 40] = 1; // the frame's reserved u64
        w.verifyStart(0);
        const fed = w.verifyFeed(256, 100);
        return [fed, w.verifyFinish()];
      }),
    ).toEqual({ result: [VerifyStatus.FrameReservedNonZero, VerifyStatus.FrameReservedNonZero] });
  });

  it("every call after close() is an Error naming the operation; close twice is harmless", () => {
    for (const [name, call] of [
      ["view", (w: EngineWindow) => w.view()],
      ["headerStatus", (w: EngineWindow) => w.headerStatus(0)],
      ["verifyInWindow", (w: EngineWindow) => w.verifyInWindow(0)],
      ["verifyFinish", (w: EngineWindow) => w.verifyFinish()],
      ["firstNonZero", (w: EngineWindow) => w.firstNonZero(0, 1)],
      [
        "walkResident",
        (w: EngineWindow) => w.walkResident({ fromIndex: 0, heldEndIndex: 0, fileEndIndex: 0, stopIndex: 0, expectedOffset: 0n }),
      ],
      [
        "scanCandidates",
        (w: EngineWindow) =>
          w.scanCandidates({
            fromIndex: 0,
            toIndex: 1,
            fileEndIndex: 4096,
            minBaseOffset: 0n,
            spentUnits: 0,
            limitUnits: 10,
          }),
      ],
    ] as const) {
      const closed = onEveryEngine((w) => w.close(), call);
      expect(closed).toEqual({ error: "Error", message: `${name}: engine window used after close()` });
    }
    expect(
      onEveryEngine(
        (w) => w.close(),
        (w) => w.close(),
      ),
    ).toEqual({ result: undefined });
  });

  it("a window smaller than one header is refused by both engines", () => {
    for (const engine of engines) {
      expect(() => engine.openWindow(255)).toThrow(RangeError);
      expect(() => engine.openWindow(Number.NaN)).toThrow(RangeError);
    }
  });
});

describe("the Wasm memory layout comes from assembly/ and is asserted at load", () => {
  it("is read from the module's exports", async () => {
    const { layout } = await createWasmEngine();
    expect(layout.heapBase % layout.heapAlignBytes).toBe(0);
    expect(layout.stateSlotBytes).toBeGreaterThanOrEqual(layout.xxh3StateBytes);
    expect(layout.readAheadPadBytes).toBeGreaterThanOrEqual(64);
  });

  it("a layout the wrapper cannot use is refused with a rebuild hint", () => {
    const good = { heapBase: 1024, heapAlignBytes: 64, xxh3StateBytes: 336, stateSlotBytes: 384, readAheadPadBytes: 256 };
    const exportsOf = (layout: typeof good) => ({
      heapBase: () => layout.heapBase,
      heapAlignBytes: () => layout.heapAlignBytes,
      xxh3StateBytes: () => layout.xxh3StateBytes,
      stateSlotBytes: () => layout.stateSlotBytes,
      readAheadPadBytes: () => layout.readAheadPadBytes,
    });
    expect(readLayout(exportsOf(good))).toEqual(good);
    for (const bad of [
      { heapBase: 1000 },
      { heapAlignBytes: 48 },
      { stateSlotBytes: 320 },
      { stateSlotBytes: 400 },
      { readAheadPadBytes: 16 },
    ]) {
      expect(() => readLayout(exportsOf({ ...good, ...bad }))).toThrow(/unexpected memory layout.*build:wasm/);
    }
  });

  it("walkResident's result area is asserted at load: the slot count the wrapper reads, aligned, below the heap", () => {
    const layout = { heapBase: 1024, heapAlignBytes: 64, xxh3StateBytes: 336, stateSlotBytes: 384, readAheadPadBytes: 256 };
    const exportsOf = (address: number, slots: number) => ({ walkResultAddress: () => address, walkResultSlots: () => slots });
    expect(readWalkResultAddress(exportsOf(512, WALK_RESULT_SLOT.RESULT_SLOTS), layout)).toBe(512);
    for (const [address, slots] of [
      [512, WALK_RESULT_SLOT.RESULT_SLOTS - 1],
      [516, WALK_RESULT_SLOT.RESULT_SLOTS],
      [1024 - 8, WALK_RESULT_SLOT.RESULT_SLOTS],
    ] as const) {
      expect(() => readWalkResultAddress(exportsOf(address, slots), layout)).toThrow(/unexpected memory layout.*build:wasm/);
    }
  });

  it("assembly/walk.ts result slots match the wrapper's WALK_RESULT_SLOT", () => {
    const source = readFileSync(new URL("../assembly/walk.ts", import.meta.url), "utf8");
    const declared = [...source.matchAll(/export const WALK_(\w+): usize = (\d+);/g)];
    const slots = WALK_RESULT_SLOT as Record<string, number>;
    expect(declared.map(([, name]) => name).sort()).toEqual(Object.keys(slots).sort());
    for (const [, name, value] of declared) expect({ name, value: Number(value) }).toEqual({ name, value: slots[name!] });
  });

  it("assembly/format.ts field positions match src/format/constants.ts", () => {
    const source = readFileSync(new URL("../assembly/format.ts", import.meta.url), "utf8");
    const declared = [...source.matchAll(/export const (\w+): usize = (\d+);/g)];
    expect(declared.length).toBeGreaterThan(8);
    const ts = formatConstants as unknown as Record<string, number>;
    for (const [, name, value] of declared) {
      if (name === "BATCH_CHECKSUMMED_HEADER_BYTES") expect(Number(value)).toBe(ts.BATCH_CHECKSUM_PREFIX_BYTES! - 4);
      else if (name === "BATCH_MESSAGE_COUNT_BYTES") expect(Number(value)).toBe(4);
      else expect({ name, value: Number(value) }).toEqual({ name, value: ts[name!] });
    }
  });
});
