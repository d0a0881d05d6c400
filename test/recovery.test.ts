import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { scanPartition } from "../src/recovery/scan.js";
import { buildChain, indexAt, tempPartition, writeSegment, concat } from "./helpers/fixtures.js";

describe("smoke", () => {
  it("a clean indexed segment", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    writeSegment(dir, 0n, chain.log, indexAt(chain, [0, 2]));
    const report = await scanPartition(dir, { engine: createTsEngine() });
    const partition = report.partitions[0]!;
    expect(partition.verdict).toBe("clean");
    expect(partition.segments[0]!.endOffset).toBe(11n);
    expect(partition.segments[0]!.outcome).toBe("clean");
  });
  it("a zero tail", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4, 5] });
    writeSegment(dir, 0n, concat([chain.log, new Uint8Array(4096)]), indexAt(chain, [0, 2]));
    const report = await scanPartition(dir, { engine: createTsEngine() });
    const partition = report.partitions[0]!;
    expect(partition.verdict).toBe("repairable");
    console.log(partition.segments[0]);
  });
});
