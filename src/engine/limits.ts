/**
 * Kernel limits shared by every engine (docs/format.md §2.2). They sit beside the Engine
 * types, below both engine implementations, so neither engine imports the other.
 */
import { BATCH_HEADER_BYTES, MAX_BATCH_BYTES } from "../format/constants.js";
import type { KernelLimits } from "./types.js";

/** The limits a window runs with: `MAX_BATCH_BYTES` unless the caller overrode it explicitly. */
export function resolveKernelLimits(limits: Partial<KernelLimits> = {}): KernelLimits {
  const maxBatchBytes = limits.maxBatchBytes ?? MAX_BATCH_BYTES;
  if (!Number.isSafeInteger(maxBatchBytes) || maxBatchBytes < BATCH_HEADER_BYTES) {
    throw new RangeError(`maxBatchBytes must be an integer ≥ ${BATCH_HEADER_BYTES}, got ${maxBatchBytes}`);
  }
  return { maxBatchBytes };
}
