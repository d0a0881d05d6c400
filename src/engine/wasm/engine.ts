/**
 * The wasm engine (docs/engines.md §8): AssemblyScript kernels compiled to one
 * `dist/segscan.wasm`, driven through raw pointers into linear memory.
 *
 * Memory management:
 * - The WebAssembly.Module is compiled once per process (cached promise).
 * - Every scan window gets a FRESH instance whose memory is grown ONCE at open to
 *   hold the kernels' static data, the window and a small read-ahead pad. It never
 *   grows afterwards, so the `view()` Uint8Array stays attached while async file
 *   reads write into it. `close()` drops the instance.
 * - `xxh3_64` of bytes that already sit in an open window's memory (≥ 4 KiB) runs
 *   in place, in that window's instance (the one-shot kernel keeps no state that a
 *   streaming verification could be holding).
 * - Hashing of other JS bytes (`xxh3_64`, `createHasher`) runs in one staging
 *   instance per engine: bytes are copied into a fixed 64 KiB staging area (small
 *   enough to stay in cache between the copy and the hash) and hashed one-shot or
 *   streamed. Each hasher keeps its 336-byte XXH3 state in JS and swaps it into the
 *   staging instance's state slot only when another hasher used the slot last.
 * - u64 values cross as BigInt (i64), window indexes and unit counts as numbers; every
 *   crossing is per window, batch, chunk or candidate scan, never per byte.
 * - `walkResident` walks many batches per call and writes its result to a small
 *   static area (assembly/walk.ts), read through typed-array views made at open.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { instantiateSync } from "@assemblyscript/loader";
import { assert } from "../../assert.js";
import { U64_MAX } from "../../format/constants.js";
import type { VerifyStatus } from "../../format/records.js";
import { resolveKernelLimits } from "../limits.js";
import type {
  CandidateScanRequest,
  CandidateScanResult,
  Engine,
  Hasher,
  KernelLimits,
  ResidentWalkBatch,
  ResidentWalkRequest,
  ResidentWalkResult,
  WalCandidateScanRequest,
  WalCandidateScanResult,
} from "../types.js";
import { ownEngine } from "../own.js";
import { CheckedEngineWindow } from "../window.js";
import { NOT_FINISHED, WALK_RESULT_SLOT, checkAbi } from "./abi.js";

export { WALK_RESULT_SLOT } from "./abi.js";

/*
 * The compiler options target plain ES2022 (no DOM lib), so the few WebAssembly
 * JS API types used here are declared locally rather than as globals.
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
/** An opaque compiled WebAssembly.Module. */
type WasmModule = object;
const WebAssemblyApi = (
  globalThis as unknown as {
    WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };
  }
).WebAssembly;

/** The raw exports of assembly/index.ts (pointers are byte addresses in the instance's memory). */
interface Kernels {
  readonly memory: WasmMemory;
  heapBase(): number;
  heapAlignBytes(): number;
  xxh3StateBytes(): number;
  stateSlotBytes(): number;
  readAheadPadBytes(): number;
  xxh3(p: number, len: number): bigint;
  xxh3Reset(st: number): void;
  xxh3Update(st: number, p: number, len: number): void;
  xxh3Update64(st: number, v: bigint): void;
  xxh3Digest(st: number): bigint;
  setMaxBatchBytes(v: number): void;
  headerStatus(p: number): number;
  verifyStart(p: number): void;
  verifyFeed(p: number, len: number): number;
  verifyFinish(): number;
  verifyInWindow(p: number): number;
  findCandidate(c: number, end: number, fileEnd: number, minBase: bigint): number;
  firstNonZero(p: number, limit: number): number;
  walHeaderStatus(p: number): number;
  findWalCandidate(c: number, end: number, fileEnd: number, minOp: bigint, structural: number): number;
  walkResident(p: number, heldEnd: number, batchEnd: number, stopAt: number, expected: bigint): void;
  walkResultAddress(): number;
}

const WASM_PAGE = 65536;
/** Staging area for JS bytes: fits in L2 so the hash reads what the copy just wrote. */
const STAGE_BYTES = 64 * 1024;
/**
 * The least read-ahead this wrapper's own reasoning needs: firstNonZero loads
 * whole 64-byte blocks past its limit (assembly/probe.ts). The module states
 * its real need; a smaller one means the build and this wrapper disagree.
 */
const MIN_READ_AHEAD_PAD_BYTES = 64;

/**
 * The memory layout the kernels need (assembly/layout.ts), read from the module
 * at load and asserted, never hard-coded here.
 */
export interface WasmLayout {
  /** First free byte above the kernels' static data. */
  heapBase: number;
  heapAlignBytes: number;
  xxh3StateBytes: number;
  /** Bytes one XXH3 state slot occupies (≥ xxh3StateBytes, keeps the next slot aligned). */
  stateSlotBytes: number;
  /** Bytes past a window or the staging area the kernels may read. */
  readAheadPadBytes: number;
}

/** Reads the layout from an instance's exports and throws if it cannot be used (exported for tests). */
export function readLayout(
  k: Pick<Kernels, "heapBase" | "heapAlignBytes" | "xxh3StateBytes" | "stateSlotBytes" | "readAheadPadBytes">,
): WasmLayout {
  const layout: WasmLayout = {
    heapBase: k.heapBase(),
    heapAlignBytes: k.heapAlignBytes(),
    xxh3StateBytes: k.xxh3StateBytes(),
    stateSlotBytes: k.stateSlotBytes(),
    readAheadPadBytes: k.readAheadPadBytes(),
  };
  const align = layout.heapAlignBytes;
  const problems = [
    !(Number.isInteger(align) && align >= 16 && (align & (align - 1)) === 0) &&
      `heap alignment ${align} is not a power of two ≥ 16 (v128 loads)`,
    layout.heapBase % align !== 0 && `heap base ${layout.heapBase} is not ${align}-byte aligned`,
    !(layout.xxh3StateBytes > 0) && `XXH3 state size ${layout.xxh3StateBytes} is not positive`,
    (layout.stateSlotBytes < layout.xxh3StateBytes || layout.stateSlotBytes % align !== 0) &&
      `state slot of ${layout.stateSlotBytes} bytes cannot hold a ${layout.xxh3StateBytes}-byte state at ${align}-byte alignment`,
    layout.readAheadPadBytes < MIN_READ_AHEAD_PAD_BYTES && `read-ahead pad ${layout.readAheadPadBytes} < ${MIN_READ_AHEAD_PAD_BYTES} bytes`,
  ].filter((problem): problem is string => typeof problem === "string");
  if (problems.length > 0) {
    throw new Error(`segscan.wasm has an unexpected memory layout (${problems.join("; ")}); rebuild it with \`npm run build:wasm\``);
  }
  return layout;
}

/**
 * Where walkResident writes its result, asserted once at load: 8-byte aligned, its
 * WALK_RESULT_SLOTS slots (checked with the other shared constants, ./abi.ts) in the
 * static data below heapBase, so the windows laid out above it never overlap it.
 * Exported for tests.
 */
export function readWalkResultAddress(k: Pick<Kernels, "walkResultAddress">, layout: WasmLayout): number {
  const address = k.walkResultAddress() >>> 0;
  const slots = WALK_RESULT_SLOT.RESULT_SLOTS;
  const problems = [
    address % 8 !== 0 && `walk result area at ${address} is not 8-byte aligned`,
    address + slots * 8 > layout.heapBase &&
      `walk result area [${address}, ${address + slots * 8}) runs past the heap base ${layout.heapBase}`,
  ].filter((problem): problem is string => typeof problem === "string");
  if (problems.length > 0) {
    throw new Error(`segscan.wasm has an unexpected memory layout (${problems.join("; ")}); rebuild it with \`npm run build:wasm\``);
  }
  return address;
}

/** Keeps an absolute file end inside i64 when it crosses as f64. */
const FILE_END_CLAMP = 2 ** 62;

/** Inputs at least this long that live in an open window's memory are hashed in place. */
const IN_PLACE_MIN_BYTES = 4096;

let modulePromise: Promise<WasmModule> | undefined;

/** The kernels of every open window, by the ArrayBuffer of its memory. */
const openWindowKernels = new WeakMap<ArrayBuffer, Kernels>();

/**
 * `dist/src/engine/wasm/engine.js` → `dist/segscan.wasm` (the published layout).
 * Run from source (`src/engine/wasm/engine.ts` under vitest or a TS loader) the
 * same relative step lands on the repo root, so `dist/segscan.wasm` there is
 * the fallback.
 */
function wasmPath(): string {
  const published = fileURLToPath(new URL("../../../segscan.wasm", import.meta.url));
  if (existsSync(published)) return published;
  const fromSource = fileURLToPath(new URL("../../../dist/segscan.wasm", import.meta.url));
  if (existsSync(fromSource)) return fromSource;
  throw new Error(`segscan.wasm not found at ${published} (run \`npm run build:wasm\`)`);
}

/** Compiles the kernels once per process (every engine and window shares the Module). */
export function loadWasmModule(): Promise<WasmModule> {
  if (modulePromise === undefined) {
    modulePromise = (async () => {
      const bytes = readFileSync(wasmPath());
      return WebAssemblyApi.compile(bytes);
    })();
    // A failed load may be retried by a later call.
    modulePromise.catch(() => {
      modulePromise = undefined;
    });
  }
  return modulePromise;
}

function instantiate(module: WasmModule): Kernels {
  const { instance } = instantiateSync(module as Parameters<typeof instantiateSync>[0], {});
  // The raw exports: the loader's demangled wrappers add a rest-args hop per call.
  return (instance as unknown as { exports: Kernels }).exports;
}

/** Grows `memory` once so that it holds at least `bytes`. */
function growTo(memory: WasmMemory, bytes: number): void {
  const have = memory.buffer.byteLength;
  if (bytes > have) memory.grow(Math.ceil((bytes - have) / WASM_PAGE));
}

/** An i64 result as the u64 it is (i64 crosses into JS as a signed BigInt). */
function u64(value: bigint): bigint {
  return value < 0n ? BigInt.asUintN(64, value) : value;
}

// ---------------------------------------------------------------------------
// Hashing of JS bytes

class HashStage {
  private readonly k: Kernels;
  private readonly bytes: Uint8Array;
  /** State for one-shot hashing of inputs larger than the stage. */
  private readonly scratchState: number;
  /** The state slot hashers swap their state into. */
  private readonly slot: number;
  private readonly stage: number;
  private resident: WasmHasher | null = null;
  readonly stateBytes: number;
  readonly freshState: Uint8Array;

  constructor(k: Kernels, layout: WasmLayout) {
    this.k = k;
    this.scratchState = layout.heapBase;
    this.slot = layout.heapBase + layout.stateSlotBytes;
    this.stage = layout.heapBase + 2 * layout.stateSlotBytes;
    growTo(this.k.memory, this.stage + STAGE_BYTES + layout.readAheadPadBytes);
    this.bytes = new Uint8Array(this.k.memory.buffer);
    this.stateBytes = layout.xxh3StateBytes;
    this.k.xxh3Reset(this.slot);
    this.freshState = this.bytes.slice(this.slot, this.slot + this.stateBytes);
  }

  hash(input: Uint8Array): bigint {
    const n = input.length;
    if (n >= IN_PLACE_MIN_BYTES) {
      // Bytes already in a window's memory (e.g. a residue read into a window): no copy.
      const owner = openWindowKernels.get(input.buffer as ArrayBuffer);
      if (owner !== undefined) return u64(owner.xxh3(input.byteOffset, n));
    }
    const k = this.k;
    if (n <= STAGE_BYTES) {
      this.bytes.set(input, this.stage);
      return u64(k.xxh3(this.stage, n));
    }
    k.xxh3Reset(this.scratchState);
    this.feed(this.scratchState, input);
    return u64(k.xxh3Digest(this.scratchState));
  }

  private feed(state: number, input: Uint8Array): void {
    const n = input.length;
    for (let at = 0; at < n; at += STAGE_BYTES) {
      const take = Math.min(STAGE_BYTES, n - at);
      this.bytes.set(input.subarray(at, at + take), this.stage);
      this.k.xxh3Update(state, this.stage, take);
    }
  }

  /** Makes `hasher`'s state the resident one in the slot. */
  private activate(hasher: WasmHasher): void {
    if (this.resident === hasher) return;
    if (this.resident !== null) {
      this.resident.state.set(this.bytes.subarray(this.slot, this.slot + this.stateBytes));
    }
    this.bytes.set(hasher.state, this.slot);
    this.resident = hasher;
  }

  update(hasher: WasmHasher, input: Uint8Array): void {
    if (input.length === 0) return;
    this.activate(hasher);
    this.feed(this.slot, input);
  }

  digest(hasher: WasmHasher): bigint {
    this.activate(hasher);
    return u64(this.k.xxh3Digest(this.slot));
  }
}

class WasmHasher implements Hasher {
  /** This hasher's XXH3 state while another hasher holds the stage's slot. */
  readonly state: Uint8Array;

  constructor(private readonly stage: HashStage) {
    this.state = stage.freshState.slice();
  }

  update(bytes: Uint8Array): void {
    this.stage.update(this, bytes);
  }

  digest(): bigint {
    return this.stage.digest(this);
  }
}

// ---------------------------------------------------------------------------
// Scan windows

class WasmWindow extends CheckedEngineWindow {
  private k: Kernels | null;
  /** Address of window byte 0 in the instance's memory. */
  private readonly base: number;
  private readonly windowBytes: Uint8Array;
  /** walkResident's result area, as numbers and as u64s (the same bytes). */
  private readonly walkNumbers: Float64Array;
  private readonly walkU64s: BigUint64Array;

  constructor(
    private readonly instances: InstancePool,
    capacityBytes: number,
    limits: KernelLimits,
  ) {
    super(capacityBytes, limits);
    const k = instances.take();
    this.base = instances.layout.heapBase;
    // The one and only growth: from here on the view can never be detached.
    growTo(k.memory, this.base + capacityBytes + instances.layout.readAheadPadBytes);
    k.setMaxBatchBytes(limits.maxBatchBytes);
    this.windowBytes = new Uint8Array(k.memory.buffer, this.base, capacityBytes);
    this.walkNumbers = new Float64Array(k.memory.buffer, instances.walkResultAddress, WALK_RESULT_SLOT.RESULT_SLOTS);
    this.walkU64s = new BigUint64Array(k.memory.buffer, instances.walkResultAddress, WALK_RESULT_SLOT.RESULT_SLOTS);
    this.k = k;
    openWindowKernels.set(k.memory.buffer, k);
  }

  /** The contract checks (CheckedEngineWindow) already refused a closed window. */
  private kernels(): Kernels {
    return this.k!;
  }

  protected bytes(): Uint8Array {
    return this.windowBytes;
  }

  protected rawHeaderStatus(index: number): VerifyStatus {
    return this.kernels().headerStatus(this.base + index) as VerifyStatus;
  }

  protected rawVerifyInWindow(index: number): VerifyStatus {
    return finished(this.kernels().verifyInWindow(this.base + index));
  }

  protected rawVerifyStart(index: number): void {
    this.kernels().verifyStart(this.base + index);
  }

  protected rawVerifyFeed(index: number, lengthBytes: number): VerifyStatus {
    return this.kernels().verifyFeed(this.base + index, lengthBytes) as VerifyStatus;
  }

  protected rawVerifyFinish(): VerifyStatus {
    return finished(this.kernels().verifyFinish());
  }

  protected rawScanCandidates(request: CandidateScanRequest): CandidateScanResult {
    const min = request.minBaseOffset;
    if (min === null || min > U64_MAX) return chargeCandidates(request, null);
    const fileEnd = this.fileEndAddress(request.fileEndIndex);
    return chargeCandidates(request, (from, searchEnd) =>
      this.indexOf(this.kernels().findCandidate(this.base + from, this.base + searchEnd, fileEnd, min < 0n ? 0n : min)),
    );
  }

  protected rawWalHeaderStatus(index: number): number {
    return this.kernels().walHeaderStatus(this.base + index);
  }

  protected rawScanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult {
    const structural = request.rule === "structural";
    const min = structural ? 0n : request.minOp;
    if (min === null || min > U64_MAX) return chargeCandidates(request, null);
    const fileEnd = this.fileEndAddress(request.fileEndIndex);
    return chargeCandidates(request, (from, searchEnd) =>
      this.indexOf(
        this.kernels().findWalCandidate(this.base + from, this.base + searchEnd, fileEnd, min < 0n ? 0n : min, structural ? 1 : 0),
      ),
    );
  }

  /** The file end as a kernel address (an f64 the kernel reads as i64), clamped inside i64. */
  private fileEndAddress(fileEndIndex: number): number {
    return Math.min(FILE_END_CLAMP, this.base + fileEndIndex);
  }

  /** The window index of a kernel's address result (an i32 that crosses as a signed number). */
  private indexOf(address: number): number {
    return (address >>> 0) - this.base;
  }

  protected rawWalkResident(request: ResidentWalkRequest): ResidentWalkResult {
    const base = this.base;
    const { fromIndex, heldEndIndex } = request;
    // Bounded here so the kernel's addresses stay inside the bytes held.
    const batchEnd = base + Math.min(request.fileEndIndex, heldEndIndex);
    const stopAt = base + Math.min(request.stopIndex, heldEndIndex);
    this.kernels().walkResident(base + fromIndex, base + heldEndIndex, batchEnd, stopAt, request.expectedOffset);
    const numbers = this.walkNumbers;
    const batches = numbers[WALK_RESULT_SLOT.BATCHES]!;
    return {
      stopIndex: numbers[WALK_RESULT_SLOT.STOP]! - base,
      batches,
      messages: numbers[WALK_RESULT_SLOT.MESSAGES]!,
      expectedOffset: batches === 0 ? request.expectedOffset : this.walkU64s[WALK_RESULT_SLOT.EXPECTED_OFFSET]!,
      firstWithMessages: this.walkedBatch(WALK_RESULT_SLOT.FIRST_AT),
      lastWithMessages: this.walkedBatch(WALK_RESULT_SLOT.LAST_AT),
    };
  }

  /** The four slots from `atSlot` (address, base offset, base timestamp, message count), or null (address -1). */
  private walkedBatch(atSlot: number): ResidentWalkBatch | null {
    const at = this.walkNumbers[atSlot]!;
    if (at < 0) return null;
    return {
      index: at - this.base,
      baseOffset: this.walkU64s[atSlot + 1]!,
      baseTimestamp: this.walkU64s[atSlot + 2]!,
      messageCount: this.walkNumbers[atSlot + 3]!,
    };
  }

  protected rawFirstNonZero(index: number, lengthBytes: number): number {
    // The kernel reads whole 64-byte blocks; the read-ahead pad keeps that inside memory.
    const at = this.base + index;
    return (this.kernels().firstNonZero(at, at + lengthBytes) >>> 0) - this.base;
  }

  protected release(): void {
    const k = this.kernels();
    openWindowKernels.delete(k.memory.buffer);
    this.instances.give(k);
    this.k = null;
  }
}

/**
 * The unit arithmetic of both candidate loops (docs/recovery.md §3.5): every candidate
 * costs 1 unit, so the candidate whose unit first takes the spend past the limit is
 * `exhaustAt`, and only the first candidate that passes the kernel's checks, at or
 * before it, can stop the loop earlier. `findFirst(from, searchEnd)` runs the kernel
 * over `[from, searchEnd)` and returns the first passing window index, or `searchEnd`;
 * null when no candidate can pass (nothing can extend the chain).
 */
function chargeCandidates(
  request: { fromIndex: number; toIndex: number; spentUnits: number; limitUnits: number },
  findFirst: ((from: number, searchEnd: number) => number) | null,
): CandidateScanResult {
  const { fromIndex: from, toIndex: to, spentUnits: spent, limitUnits: limit } = request;
  // CheckedEngineWindow.checkCandidateScan hands over a non-empty range of safe integers, cut at the budget.
  assert(from < to && Number.isSafeInteger(spent) && Number.isSafeInteger(limit), "a candidate scan covers a non-empty range");
  const exhaustAt = from + Math.max(0, limit - spent);
  const searchEnd = Math.min(to, exhaustAt + 1);
  const passed = findFirst === null ? searchEnd : findFirst(from, searchEnd);
  assert(passed >= from && passed <= searchEnd, "the candidate kernel stays inside its range");
  if (passed < searchEnd) return { status: "passed", index: passed, spentUnits: spent + (passed - from + 1) };
  if (exhaustAt < to) return { status: "exhausted", index: exhaustAt, spentUnits: spent + (exhaustAt - from + 1) };
  return { status: "done", index: to, spentUnits: spent + (to - from) };
}

/** A verifier status, or the kernel's NOT_FINISHED (unreachable through CheckedEngineWindow) as an error. */
function finished(code: number): VerifyStatus {
  if (code === NOT_FINISHED) throw new Error("verifyFinish called before the whole blob was fed");
  return code as VerifyStatus;
}

// ---------------------------------------------------------------------------

/**
 * Idle window instances kept for reuse: a fresh instance's memory costs a page
 * fault per 4 KiB on first touch (~4.5 ms per 1 MiB window on a small VM), and
 * scans open one window per partition. A closed instance has no read in
 * flight, so growing its memory again on reuse cannot detach a live view.
 */
const MAX_IDLE_WINDOW_INSTANCES = 2;

class InstancePool {
  private readonly idle: Kernels[] = [];
  /** Instances lent to open windows (their memory is alive until they come back). */
  private readonly lent = new Set<Kernels>();
  constructor(
    private readonly module: WasmModule,
    readonly layout: WasmLayout,
    /** Where walkResident writes its result (the same in every instance of the module). */
    readonly walkResultAddress: number,
  ) {}

  take(): Kernels {
    const kernels = this.idle.pop() ?? instantiate(this.module);
    this.lent.add(kernels);
    return kernels;
  }

  give(kernels: Kernels): void {
    this.lent.delete(kernels);
    if (this.idle.length < MAX_IDLE_WINDOW_INSTANCES) this.idle.push(kernels);
  }

  /** Linear-memory bytes of every instance the pool holds: lent to open windows, or idle. */
  memoryBytes(): number {
    let bytes = 0;
    for (const kernels of [...this.lent, ...this.idle]) bytes += kernels.memory.buffer.byteLength;
    return bytes;
  }
}

export interface WasmEngine extends Engine {
  /** The memory layout read from the module and asserted at load. */
  readonly layout: WasmLayout;
  /**
   * Bytes of WebAssembly linear memory the engine holds now: its hashing
   * instance, every open window's instance and the idle ones kept for reuse.
   * `process.memoryUsage().arrayBuffers` does not count WebAssembly.Memory, so
   * this is the figure that shows whether a scan's memory grows with its input.
   */
  memoryBytes(): number;
}

/**
 * A first instance of `module`, with what every instance of it shares asserted once,
 * at load: the constants the kernels share with TypeScript (./abi.ts), then the memory
 * layout and the walk's result area. Exported for tests.
 */
export function loadKernels(module: WasmModule): { kernels: Kernels; layout: WasmLayout; walkResultAddress: number } {
  const kernels = instantiate(module);
  checkAbi(kernels as unknown as Readonly<Record<string, unknown>>);
  const layout = readLayout(kernels);
  return { kernels, layout, walkResultAddress: readWalkResultAddress(kernels, layout) };
}

export async function createWasmEngine(): Promise<WasmEngine> {
  const module = await loadWasmModule();
  const { kernels: stageKernels, layout, walkResultAddress } = loadKernels(module);
  const stage = new HashStage(stageKernels, layout);
  const instances = new InstancePool(module, layout, walkResultAddress);
  return ownEngine<WasmEngine>({
    kind: "wasm",
    xxh3_64: (bytes: Uint8Array) => stage.hash(bytes),
    createHasher: () => new WasmHasher(stage),
    layout,
    memoryBytes: () => stageKernels.memory.buffer.byteLength + instances.memoryBytes(),
    openWindow: (windowBytes: number, limits?: Partial<KernelLimits>) =>
      new WasmWindow(instances, windowBytes, resolveKernelLimits(limits)),
  });
}
