/**
 * The pure-TypeScript engine: the same kernels as the wasm engine, for hosts
 * without WebAssembly and as the benchmark baseline (SPEC §8).
 */
import { BATCH_HEADER_BYTES, BATCH_LENGTH_AT, MAX_BATCH_BYTES } from "../../format/constants.js";
import { readU64 } from "../../format/bytes.js";
import { VerifyStatus, headerDecodeStatus } from "../../format/records.js";
import type {
  CandidateScanRequest, CandidateScanResult, Engine, EngineWindow, Hasher, KernelLimits,
  WalCandidateScanRequest, WalCandidateScanResult,
} from "../types.js";
import { scanCandidatesSkipping } from "./candidates.js";
import { BatchVerifier } from "./verifier.js";
import { Xxh3Stream, xxh3_64 } from "./xxh3.js";
import { walHeaderStatus } from "../../node/wal/format.js";
import { scanWalCandidatesSkipping } from "../../node/wal/candidates.js";

export function resolveKernelLimits(limits: Partial<KernelLimits> = {}): KernelLimits {
  const maxBatchBytes = limits.maxBatchBytes ?? MAX_BATCH_BYTES;
  if (!Number.isSafeInteger(maxBatchBytes) || maxBatchBytes < BATCH_HEADER_BYTES) {
    throw new RangeError(`maxBatchBytes must be an integer ≥ ${BATCH_HEADER_BYTES}, got ${maxBatchBytes}`);
  }
  return { maxBatchBytes };
}

class TsWindow implements EngineWindow {
  private readonly bytes: Uint8Array;
  private readonly verifier = new BatchVerifier();
  readonly limits: KernelLimits;

  constructor(readonly capacityBytes: number, limits: KernelLimits) {
    this.bytes = new Uint8Array(capacityBytes);
    this.limits = limits;
  }

  view(): Uint8Array {
    return this.bytes;
  }

  headerStatus(offset: number): VerifyStatus {
    return headerDecodeStatus(this.bytes, offset, this.limits.maxBatchBytes);
  }

  verifyInWindow(offset: number): VerifyStatus {
    const batchLength = Number(readU64(this.bytes, offset + BATCH_LENGTH_AT));
    this.verifier.start(this.bytes, offset);
    const blobStatus = this.verifier.feed(this.bytes, offset + BATCH_HEADER_BYTES, batchLength - BATCH_HEADER_BYTES);
    return blobStatus === VerifyStatus.Ok ? this.verifier.finish() : blobStatus;
  }

  verifyStart(offset: number): void {
    this.verifier.start(this.bytes, offset);
  }

  verifyFeed(offset: number, lengthBytes: number): VerifyStatus {
    return this.verifier.feed(this.bytes, offset, lengthBytes);
  }

  verifyFinish(): VerifyStatus {
    return this.verifier.finish();
  }

  scanCandidates(request: CandidateScanRequest): CandidateScanResult {
    return scanCandidatesSkipping(this.bytes, request, this.limits.maxBatchBytes);
  }

  firstNonZero(offset: number, lengthBytes: number): number {
    const end = offset + lengthBytes;
    for (let i = offset; i < end; i++) if (this.bytes[i] !== 0) return i;
    return end;
  }

  walHeaderStatus(index: number): number {
    return walHeaderStatus(this.bytes, index);
  }

  scanWalCandidates(request: WalCandidateScanRequest): WalCandidateScanResult {
    return scanWalCandidatesSkipping(this.bytes, request);
  }

  close(): void {
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
  return {
    kind: "ts",
    xxh3_64,
    createHasher: () => new TsHasher(),
    openWindow: (windowBytes, limits) => new TsWindow(windowBytes, resolveKernelLimits(limits)),
  };
}
