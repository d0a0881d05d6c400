/**
 * Numbers shown to people carry thousands separators (docs/interfaces.md §9.2:
 * `453,347`, via src/domain/numbers.ts): a few representative sentences from
 * the WAL scan, a repair plan and a contiguity refusal's bytes.
 */
import { describe, expect, it } from "vitest";
import { formatCount } from "../src/domain/numbers.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { scanNode } from "../src/node/scan.js";
import type { PlanTarget } from "../src/repair/schema.js";
import type { PlanStep } from "../src/repair/steps/index.js";
import { stepLine } from "../src/report/repair-format.js";
import { tinyNode } from "./helpers/metadata-node.js";

describe("numbers shown to people are formatted one way", () => {
  it("a WAL torn tail names its byte position and size with thousands separators", async () => {
    const root = await tinyNode({ seed: 21, fault: "wal-torn-tail" });
    const node = await scanNode(root, { engine: createTsEngine() });
    const torn = node.metadata.wal!.findings.find((finding) => finding.code === "WalTornTail")!;
    const position = Number(torn.damagePosition);
    expect(position).toBeGreaterThanOrEqual(1000);
    expect(torn.message).toContain(`bytes from byte ${formatCount(position)} are a torn tail`);
    expect(torn.message).not.toContain(`byte ${position} `);
  });

  it("a repair plan's evidence copy names its bytes with thousands separators", () => {
    const step = {
      kind: "evidence-copy",
      role: "offset",
      file: "/p/offsets/consumers/1",
      reason: "offset-corrupt",
      size: 123_456,
      copyBytes: 4_096,
      consumer: { kind: "consumer", id: 1 },
      observed: {},
    } as unknown as PlanStep;
    expect(stepLine({ dir: "/p" } as PlanTarget, step)).toContain("(its first 4,096 of 123,456 bytes)");
  });
});
