/**
 * docs/repair.md §6.1: what to do with a partition, as a pure function of its verdict,
 * its refusal and the replica count. A tombstone leaves every file where it is,
 * so the next load re-derives the same refusal from the same bytes.
 */
import type { PartitionAction, PartitionVerdict, Refusal } from "../domain/scan.js";

export interface PolicyDecision {
  action: PartitionAction;
  reason: string;
}

export function decideAction(verdict: PartitionVerdict, refusal: Refusal | null, replicaCount: number): PolicyDecision {
  switch (verdict) {
    case "clean":
      return { action: "serve", reason: "every segment is a proven batch chain" };
    case "repairable":
      return { action: "repair", reason: "only provably torn tails, empty segments, index work or scratch files to sweep" };
    case "failed":
      return { action: "retry", reason: "a read failed: fail stop and touch nothing; the bytes are not evidence" };
    case "refused":
      return decideRefused(refusal, replicaCount);
  }
}

function decideRefused(refusal: Refusal | null, replicaCount: number): PolicyDecision {
  if (refusal === null) throw new Error("a refused partition must carry its refusal");
  if (replicaCount <= 1) {
    return { action: "tombstone", reason: "no peer holds a copy: keep every byte in place and do not serve" };
  }
  if (refusal.code === "UnverifiedResidue") {
    return {
      action: "tombstone",
      reason: "a budget verdict repeats on every replica under the same limits, so rebuilding from peers could empty the whole group",
    };
  }
  return { action: "rebuild-from-peers", reason: "a peer holds the data: fence these files aside (never delete) and rebuild" };
}
