/**
 * The pure-TypeScript engine: the same kernels as the wasm engine, for hosts
 * without WebAssembly and as the benchmark baseline (docs/engines.md §8).
 */
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT } from "../../format/constants.js";
import { resolveKernelLimits } from "../limits.js";
import { readU64Clamped } from "../../format/bytes.js";
import { VerifyStatus, headerDecodeStatus } from "../../format/records.js";
import type {
  CandidateScanRequest,
  CandidateScanResult,
  Engine,
  Hasher,
  KernelLimits,
  ResidentWalkRequest,
  ResidentWalkResult,
  WalCandidateScanRequest,
  WalCandidateScanResult,
} from "../types.js";
import { CheckedEngineWindow } from "../window.js";
import { scanCandidatesSkipping } from "./candidates.js";
import { BatchVerifier } from "./verifier.js";
import { walkResidentBatches } from "./walk.js";
import { Xxh3Stream, xxh3_64 } from "../../hash/xxh3.js";
import { walHeaderStatus } from "../../format/wal.js";
import { ownEngine } from "../own.js";
import { scanWalCandidatesSkipping } from "./wal-candidates.js";

class TsWindow extends CheckedEngineWindow {
  private readonly windowBytes: Uint8Array;
  private readonly verifier = new BatchVerifier();

  constructor(capacityBytes: number, limits: KernelLimits) {
    super(capacityBytes, limits);
    this.windowBytes = new Uint8Array(capacityBytes);
  }

  protected bytes(): Uint8Array {
    return this.windowBytes;
  }

  protected rawHeaderStatus(index: number): VerifyStatus {
    return headerDecodeStatus(this.windowBytes, index, this.limits.maxBatchBytes);
  }

  protected rawVerifyInWindow(index: number): VerifyStatus {
    const batchLength = readU64Clamped(this.windowBytes, index + BATCH_LENGTH_AT);
    this.verifier.start(this.windowBytes, index);
    const blobStatus = this.verifier.feed(this.windowBytes, index + BATCH_HEADER_BYTES, batchLength - BATCH_HEADER_BYTES);
    return blobStatus === VerifyStatus.Ok ? this.verifier.finish() : blobStatus;
  }

  protected rawVerifyStart(index: number): void {
    this.verifier.start(this.windowBytes, index);
  }

  protected rawVerifyFeed(index: number, lengthBytes: number): VerifyStatus {
    return this.verifier.feed(this.windowBytes, index, lengthBytes);
  }

  protected rawVerifyFinish(): VerifyStatus {
    return this.verifier.finish();
  }

  protected rawScanCandidates(request: CandidateScanRequest): CandidateScanResult {
    return scanCandidatesSkipping(this.windowBytes, request);
  }

  protected rawFirstNonZero(index: number, lengthBytes: number): number {
    const end = index + lengthBytes;
    for (let i = index; i < end; i++) if (this.windowBytes[i] !== 0) return i;
    return end;
  }

  protected rawWalHeaderStatus(index: number): number {
    return walHeaderStatus(this.windowBytes, index);
  }

  protected rawScanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult {
    return scanWalCandidatesSkipping(this.windowBytes, request);
  }

  protected rawWalkResident(request: ResidentWalkRequest): ResidentWalkResult {
    return walkResidentBatches(this.windowBytes, this.limits.maxBatchBytes, request, (index) => this.rawVerifyInWindow(index));
  }

  protected release(): void {
    // Garbage-collected memory: nothing to release.
  }
}

class TsHasher implements Hasher {
  private readonly stream = new Xxh3Stream();
  update(bytes: Uint8Array): void {
    this.stream.update(bytes);
  }
  digest(): bigint {
    return this.stream.digest();
  }
}

export function createTsEngine(): Engine {
  return ownEngine<Engine>({
    kind: "ts",
    xxh3_64,
    createHasher: () => new TsHasher(),
    openWindow: (windowBytes, limits) => new TsWindow(windowBytes, resolveKernelLimits(limits)),
  });
}
