/** docs/heal.md "When heal refuses": why `planHeal` made no plan. Loads without the planner (a caller's `instanceof`). */
import { RepairError } from "../errors.js";

/** Why `planHeal` made no plan (docs/heal.md "When heal refuses"). */
export type HealRefusal =
  | "NotOnePartition"
  | "MetadataPlane"
  | "SamePartition"
  | "NotHealable"
  | "NotProven"
  | "Divergence"
  | "SegmentBoundary";

/** `planHeal` refuses: the message says why and what to do instead. Nothing was written. */
export class HealRefusedError extends RepairError {
  override name = "HealRefusedError";
  constructor(
    message: string,
    readonly code: HealRefusal,
    partitionPath: string,
  ) {
    super(message, { path: partitionPath });
  }
}
