/**
 * docs/heal.md: the batch walks a heal plans from — over a byte range of one
 * `.log` (the local replica's or the peer's), every batch verified as the scan
 * verifies it (docs/recovery.md §3.2), each told with its byte extent.
 */
import { FileWindow } from "../../engine/file-window.js";
import type { Engine, EngineWindow } from "../../engine/types.js";
import { nodeScanFs, type ScanFs } from "../../io/fs.js";
import { type ProvenBatch, type WalkResult, walkBatches } from "../../recovery/walk.js";

/** What planning a heal reads with. */
export interface HealWalkContext {
  engine: Engine;
  windowBytes: number;
  maxBatchBytes?: number;
  scanFs?: ScanFs;
  signal?: AbortSignal;
}

/** A verified batch and where it ends (`end` is the next batch's position, or the walk's stop). */
export interface ExtentBatch extends ProvenBatch {
  end: number;
}

/**
 * Walks `[from, until)` of `logPath` (a file of `size` bytes) expecting
 * `expectedOffset` first; tells `visit` of every verified batch with its
 * extent, in order. Returns the walk's result (where it stopped and why).
 */
export async function walkExtents(
  context: HealWalkContext,
  logPath: string,
  size: number,
  from: number,
  until: number,
  expectedOffset: bigint,
  visit: (batch: ExtentBatch) => void,
): Promise<WalkResult> {
  const scanFs = context.scanFs ?? nodeScanFs;
  const file = await scanFs.open(logPath);
  const engineWindow: EngineWindow = context.engine.openWindow(
    context.windowBytes,
    context.maxBatchBytes === undefined ? {} : { maxBatchBytes: context.maxBatchBytes },
  );
  let pending: ProvenBatch | null = null;
  try {
    const window = new FileWindow(file, logPath, size, engineWindow, context.signal === undefined ? {} : { signal: context.signal });
    const walk = await walkBatches(window, {
      fromPosition: from,
      untilPosition: until,
      expectedOffset,
      rebuildIndex: false,
      onVerifiedBatch: (batch) => {
        if (pending !== null) visit({ ...pending, end: batch.position });
        pending = batch;
      },
    });
    if (pending !== null) visit({ ...(pending as ProvenBatch), end: walk.stopPosition });
    return walk;
  } finally {
    engineWindow.close();
    await file.close();
  }
}
