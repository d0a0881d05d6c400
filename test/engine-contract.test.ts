/**
 * The EngineWindow contract (docs/engines.md §8.5), enforced once in
 * src/engine/window.ts: both engines throw the same error type and message for
 * every call outside it; the Wasm memory layout and the constants the kernels
 * share with TypeScript are read from the module and asserted at load (§8.1).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as formatConstants from "../src/format/constants.js";
import { encodeBatch } from "../src/format/encode.js";
import { writeU64 } from "../src/format/bytes.js";
import { VerifyStatus } from "../src/format/records.js";
import type { Engine, EngineWindow } from "../src/engine/types.js";
import { WALK_RESULT_SLOT, createWasmEngine, loadKernels, readLayout, readWalkResultAddress } from "../src/engine/wasm/engine.js";
import { checkAbi, expectedAbi } from "../src/engine/wasm/abi.js";
import { WAL_OP_AT, WalHeaderStatus } from "../src/format/wal.js";
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

  it("walkResident's result area is asserted at load: aligned, below the heap", () => {
    const layout = { heapBase: 1024, heapAlignBytes: 64, xxh3StateBytes: 336, stateSlotBytes: 384, readAheadPadBytes: 256 };
    const exportsOf = (address: number) => ({ walkResultAddress: () => address });
    expect(readWalkResultAddress(exportsOf(512), layout)).toBe(512);
    for (const address of [516, 1024 - 8, 1024 - WALK_RESULT_SLOT.RESULT_SLOTS * 8 + 8]) {
      expect(() => readWalkResultAddress(exportsOf(address), layout)).toThrow(/unexpected memory layout.*build:wasm/);
    }
  });
});

describe("the constants the kernels share with TypeScript are exported by the module and asserted at load", () => {
  const module = new WebAssembly.Module(readFileSync(new URL("../dist/segscan.wasm", import.meta.url)));
  const realExports = (): Record<string, unknown> => ({ ...new WebAssembly.Instance(module, {}).exports });
  const global = (value: number, type: "i32" | "i64" = "i32") =>
    new WebAssembly.Global({ value: type, mutable: false }, type === "i64" ? BigInt(value) : value);

  it("the built module exports every one of them, with the TypeScript values", () => {
    expect(() => checkAbi(realExports())).not.toThrow();
    const exported = Object.entries(realExports()).filter(([, value]) => value instanceof WebAssembly.Global);
    expect(new Set(exported.map(([name]) => name))).toEqual(new Set(expectedAbi().keys()));
  });

  it("covers the field positions, every status code, the walk's slots and MAX_TRACKED_BATCH_BYTES", () => {
    const expected = expectedAbi();
    const ts = formatConstants as unknown as Record<string, number>;
    for (const name of ["BATCH_LENGTH_AT", "BATCH_RESERVED_START", "FRAME_PAYLOAD_LENGTH_AT", "MAX_TRACKED_BATCH_BYTES"]) {
      expect(expected.get(name)).toBe(ts[name]);
    }
    expect(expected.get("WAL_OP_AT")).toBe(WAL_OP_AT);
    for (const [name, code] of [
      ["VERIFY_OK", VerifyStatus.Ok],
      ["VERIFY_LENGTH_BELOW_HEADER", VerifyStatus.LengthBelowHeader],
      ["VERIFY_FRAME_RESERVED_NON_ZERO", VerifyStatus.FrameReservedNonZero],
      ["VERIFY_BATCH_CHECKSUM", VerifyStatus.BatchChecksum],
      ["WAL_HEADER_UPPER_BYTES_NON_ZERO", WalHeaderStatus.UpperBytesNonZero],
    ] as const) {
      expect({ name, code: expected.get(name) }).toEqual({ name, code });
    }
    const statuses = [...expected.keys()].filter((name) => name.startsWith("VERIFY_") && name !== "VERIFY_NOT_FINISHED");
    expect(statuses).toHaveLength(Object.values(VerifyStatus).filter((value) => typeof value === "number").length);
    for (const [slot, index] of Object.entries(WALK_RESULT_SLOT)) expect(expected.get(`WALK_${slot}`)).toBe(index);
  });

  it("a module whose constant differs is refused, naming the constant and the two values", () => {
    const differing = { ...realExports(), BATCH_LENGTH_AT: global(33) };
    expect(() => checkAbi(differing)).toThrow(/BATCH_LENGTH_AT is 33 in the module, 32 in TypeScript.*build:wasm/);
    const clamp = { ...realExports(), MAX_TRACKED_BATCH_BYTES: global(2 ** 52, "i64") };
    expect(() => checkAbi(clamp)).toThrow(/MAX_TRACKED_BATCH_BYTES is 4503599627370496 in the module, 9007199254740991/);
    const slots = { ...realExports(), WALK_RESULT_SLOTS: global(11) };
    expect(() => checkAbi(slots)).toThrow(/WALK_RESULT_SLOTS is 11 in the module, 12 in TypeScript/);
    const status = { ...realExports(), WAL_HEADER_SIZE_OVER_CAP: global(7) };
    expect(() => checkAbi(status)).toThrow(/WAL_HEADER_SIZE_OVER_CAP is 7 in the module, 4 in TypeScript/);
  });

  it("a module missing a constant, or exporting one the wrapper does not know, is refused", () => {
    const { VERIFY_FRAME_OVERRUN: _dropped, ...missing } = realExports();
    expect(() => checkAbi(missing)).toThrow(/VERIFY_FRAME_OVERRUN is missing from the module \(TypeScript has 9\)/);
    const extra = { ...realExports(), FRAME_ID_AT: global(8) };
    expect(() => checkAbi(extra)).toThrow(/FRAME_ID_AT is exported by the module but unknown to this wrapper/);
  });

  it("the wasm engine checks its module at load: one built from other numbers is refused before any kernel runs", async () => {
    // A module that exports only BATCH_LENGTH_AT = 33, an immutable i32 global (wasm binary format by hand).
    const name = [..."BATCH_LENGTH_AT"].map((char) => char.charCodeAt(0));
    const globalSection = [0x01, 0x7f, 0x00, 0x41, 33, 0x0b];
    const exportSection = [0x01, name.length, ...name, 0x03, 0x00];
    const bytes = new Uint8Array([
      ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      ...[0x06, globalSection.length, ...globalSection],
      ...[0x07, exportSection.length, ...exportSection],
    ]);
    const other = await WebAssembly.compile(bytes);
    expect(() => loadKernels(other)).toThrow(/BATCH_LENGTH_AT is 33 in the module, 32 in TypeScript/);
    expect(() => loadKernels(other)).toThrow(/FRAME_HEADER_BYTES is missing from the module/);
    // The built module agrees, and the engine loads.
    expect(loadKernels(module).walkResultAddress).toBeGreaterThan(0);
    await expect(createWasmEngine()).resolves.toBeDefined();
  });
});
