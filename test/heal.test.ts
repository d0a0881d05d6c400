/**
 * docs/heal.md: `planHeal` / `segscan heal` on replicas of a generated 3-node
 * cluster (`gen --cluster 3`): a middle segment's interior damage, a torn
 * tail and a salvaged gap are filled from a peer; the partition is then the
 * peer's byte for byte, scans clean with both engines, a salvage's lost
 * offsets are no longer reported, and restore returns the original files.
 * Every refusal changes nothing.
 */
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeBatch, type MessageInput } from "../src/format/encode.js";
import { readBatchHeader } from "../src/format/records.js";
import { makeMessage } from "../src/gen/messages.js";
import { Prng } from "../src/gen/prng.js";
import { scanPartition } from "../src/node/scan-path.js";
import { HealRefusedError, planHeal } from "../src/repair/index.js";
import { runCli } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { type HealFault, type HealPair, healCluster, healPair, healPlan, salvageLocal, segmentFiles } from "./helpers/heal-cluster.js";
import { applyPlan, engine, restoreNoSync, snapshot } from "./helpers/repair-scenarios.js";

async function expectHealed(pair: HealPair): Promise<void> {
  expect(segmentFiles(pair.dir)).toEqual(segmentFiles(pair.peer));
  for (const kind of await allEngines()) {
    const partition = (await scanPartition(pair.dir, { engine: kind, verify: "full" })).partitions[0]!;
    expect(partition.verdict, kind.kind).toBe("clean");
    expect(partition.findings, kind.kind).toEqual([]);
    expect(
      partition.segments.flatMap((s) => s.gaps),
      kind.kind,
    ).toEqual([]);
  }
}

describe("heal from a peer", () => {
  it.each<[HealFault, string, string]>([
    ["interior-on-one", "unreadable", "a middle segment's interior damage"],
    ["torn-on-one", "torn", "a torn tail"],
  ])("%s: fills %s bytes (%s) from the peer; byte-identical, clean on both engines; restore returns the original", async (fault, kind) => {
    const pair = await healPair(fault);
    const before = snapshot(pair.dir);
    const plan = await healPlan(pair);
    const target = plan.targets[0]!;
    expect(target.heal!.ranges.map((r) => r.kind)).toEqual([kind]);
    expect(target.steps.map((s) => `${s.kind}/${s.role}`)).toEqual(["replace/segment-log", "replace/index"]);
    expect(snapshot(pair.dir)).toEqual(before);
    await applyPlan(plan);
    await expectHealed(pair);
    expect((await restoreNoSync(pair.dir)).restored).toBe(true);
    expect(segmentFiles(pair.dir)).toEqual(
      Object.fromEntries(Object.entries(before).filter(([name]) => !name.includes("/") && /\.(log|index)$/.test(name))),
    );
  });

  it("a salvaged gap: the offsets the salvage recorded as lost are filled, and no scan reports them lost any more", async () => {
    const pair = await healPair("interior-on-one");
    await salvageLocal(pair);
    const salvaged = (await scanPartition(pair.dir, { engine, verify: "full" })).partitions[0]!;
    const lost = salvaged.findings.filter((f) => f.code === "SalvageLostOffsets");
    expect(lost).toHaveLength(1);
    const plan = await healPlan(pair);
    const range = plan.targets[0]!.heal!.ranges[0]!;
    expect(range.kind).toBe("salvage-gap");
    expect(lost[0]!.code === "SalvageLostOffsets" && [lost[0]!.firstOffset, lost[0]!.lastOffset]).toEqual([
      BigInt(range.firstOffset),
      BigInt(range.lastOffset),
    ]);
    await applyPlan(plan);
    await expectHealed(pair);
    expect((await healPlan(pair)).targets).toEqual([]);
    // Restore undoes the heal and the salvage: the original damaged files, and no loss recorded.
    await restoreNoSync(pair.dir);
    const restored = (await scanPartition(pair.dir, { engine, verify: "full" })).partitions[0]!;
    expect(restored.refusal?.code).toBe("InteriorDamage");
    expect(restored.findings).toEqual([]);
  });
});

/** Rewrites the peer's batch that ends at byte `end` of `log` with other payloads under the same offsets (valid checksums). */
function divergeBatchEndingAt(log: string, end: number, seed: number): void {
  const bytes = new Uint8Array(readFileSync(log));
  let at = 0;
  while (at < bytes.length) {
    const header = readBatchHeader(bytes, at);
    if (at + header.batchLength === end) {
      const rng = new Prng(seed, 0xd1_7e);
      const messages: MessageInput[] = [];
      for (let i = 0; i < header.messageCount; i++) {
        messages.push(makeMessage(rng, header.baseOffset + BigInt(i), i, header.originTimestamp + BigInt(i), i));
      }
      const batch = encodeBatch({ ...header, messages });
      writeFileSync(log, Buffer.concat([bytes.subarray(0, at), batch, bytes.subarray(end)]));
      return;
    }
    at += header.batchLength;
  }
  throw new Error(`no batch ends at ${end} in ${log}`);
}

describe("heal refuses, changing nothing", () => {
  async function refused(pair: HealPair, peer: string, code: string, words: RegExp): Promise<void> {
    const before = snapshot(join(pair.dir, ".."));
    const error = await planHeal(pair.dir, peer, { engine }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HealRefusedError);
    expect((error as HealRefusedError).code).toBe(code);
    expect((error as Error).message).toMatch(words);
    expect((error as Error).message).toMatch(/nothing was changed/);
    expect(snapshot(join(pair.dir, ".."))).toEqual(before);
    expect(existsSync(`${pair.dir}.segscan`)).toBe(false);
  }

  it("the peer does not prove the range (it lost the same batch)", async () => {
    const pair = await healPair("lost-everywhere");
    await refused(pair, pair.peer, "NotProven", /peer/);
  });

  it("the neighbours differ: divergence", async () => {
    const pair = await healPair("interior-on-one");
    const range = (await healPlan(pair)).targets[0]!.heal!.ranges[0]!;
    const log = readdirSync(pair.peer).find((name) => name.startsWith(range.segment.padStart(20, "0")) && name.endsWith(".log"))!;
    divergeBatchEndingAt(join(pair.peer, log), range.localFrom, 5);
    await refused(pair, pair.peer, "Divergence", /divergence/);
  });

  it("the peer is the same directory (also through a link)", async () => {
    const pair = await healPair("interior-on-one");
    await refused(pair, pair.dir, "SamePartition", /same directory/);
    const link = join(pair.root, "link");
    symlinkSync(pair.dir, link);
    await refused(pair, link, "SamePartition", /same directory/);
  });

  it("the range crosses a segment boundary the replicas drew differently: names the segments", async () => {
    const pair = await healPair("interior-on-one");
    const range = (await healPlan(pair)).targets[0]!.heal!.ranges[0]!;
    // The peer's damaged segment merged into the segment before it: the peer drew no boundary there.
    const names = readdirSync(pair.peer)
      .filter((n) => n.endsWith(".log"))
      .sort();
    const at = names.findIndex((n) => n.startsWith(range.segment.padStart(20, "0")));
    const previous = join(pair.peer, names[at - 1]!);
    const merged = join(pair.peer, names[at]!);
    writeFileSync(previous, Buffer.concat([readFileSync(previous), readFileSync(merged)]));
    const { rmSync } = await import("node:fs");
    rmSync(merged);
    rmSync(merged.replace(/\.log$/, ".index"));
    await refused(pair, pair.peer, "SegmentBoundary", new RegExp(`segment ${range.segment} .*drew segment boundaries differently`));
  });

  it("the metadata plane is never copied: a node root or metadata/ on either side is refused", async () => {
    const { dir, partitions } = await healCluster();
    const pair = await healPair("interior-on-one");
    await refused(pair, join(dir, "node-1", "metadata"), "MetadataPlane", /partition segments only/);
    await refused(pair, join(dir, "node-1"), "MetadataPlane", /partition segments only/);
    const error = await planHeal(join(dir, "node-0"), join(dir, "node-1", partitions["interior-on-one"]), { engine }).catch(
      (e: unknown) => e,
    );
    expect((error as HealRefusedError).code).toBe("MetadataPlane");
  });
});

describe("segscan heal (CLI)", () => {
  it("a dry run exits 4 and changes nothing; --apply exits 1 and leaves the peer's bytes; a refusal exits 4 and says why", async () => {
    const pair = await healPair("torn-on-one");
    const before = snapshot(pair.dir);
    const dry = await runCli(["heal", pair.dir, "--from", pair.peer]);
    expect(dry.code).toBe(4);
    expect(dry.stdout).toContain("Heal plan: 2 steps");
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(snapshot(pair.dir)).toEqual(before);
    const same = await runCli(["heal", pair.dir, "--from", pair.dir]);
    expect(same.code).toBe(4);
    expect(same.stderr).toContain("same directory");
    const applied = await runCli(["heal", pair.dir, "--from", pair.peer, "--apply"]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain("re-scan: the healed partition is clean now");
    expect(segmentFiles(pair.dir)).toEqual(segmentFiles(pair.peer));
    const again = await runCli(["heal", pair.dir, "--from", pair.peer]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to heal");
  });
});

describe("fleet names the heal", () => {
  it("per degraded partition: segscan heal <path on the damaged node> --from <path on the source node>, which then heals it", async () => {
    const { mergeReports } = await import("../src/fleet/index.js");
    const { scanPath } = await import("../src/node/scan-path.js");
    const { toJsonReport } = await import("../src/report/json.js");
    const { dir, partitions } = await healCluster();
    const reports = [];
    for (const name of ["node-0", "node-1", "node-2"]) {
      reports.push({ name, report: toJsonReport(await scanPath(join(dir, name), { engine, verify: "full", replicaCount: 3 })) });
    }
    const fleet = await mergeReports(reports);
    for (const [fault, damaged, source] of [
      ["interior-on-one", "node-0", "node-1"],
      ["torn-on-one", "node-1", "node-0"],
    ] as const) {
      const partition = fleet.partitions.find((p) => p.key === partitions[fault])!;
      expect(partition.verdict).toBe("degraded");
      const heal = partition.nextSteps.find((s) => s.argv?.[1] === "heal")!;
      expect(heal.node).toBe(damaged);
      expect(heal.argv).toEqual(["segscan", "heal", join(dir, damaged, partitions[fault]), "--from", join(dir, source, partitions[fault])]);
      expect(heal.command).toBe(heal.argv!.join(" "));
    }
    // The interior one, as printed: the plan heals it (on copies, so the cluster stays as generated).
    const pair = await healPair("interior-on-one");
    await applyPlan(await planHeal(pair.dir, pair.peer, { engine }));
    await expectHealed(pair);
  });
});
