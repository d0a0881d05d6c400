/**
 * docs/node.md N1.1: the superblock's commit_max C is a lower bound of the
 * committed ops, and Iggy fsyncs each entry before its op can commit, so the
 * WAL must prove every op up to C. A WAL that proves less (emptied, absent,
 * cut, torn) is `refused` `WalCommittedOpsLost` on a solo node and `warn` on
 * a cluster, takes precedence over `WalTornTail`, and the forecast says the
 * boot only warns and runs without those ops. The torn-tail words follow what
 * the bytes prove. On both engines.
 */
import { describe, expect, it } from "vitest";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scanNode, nodeFindings } from "../src/node/scan.js";
import { planNodeTargets } from "../src/repair/plan-node.js";
import { type PlanTarget, nodeRepairFs, preserveDirOf } from "../src/repair/index.js";
import type { NodeReport } from "../src/domain/node.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { allEngines } from "./helpers/engines.js";
import { rewriteSuperblock, tinyNode } from "./helpers/metadata-node.js";

const engines = await allEngines();

/** The WAL cut the one repair plan makes of a node report (docs/node.md N7), or null. */
async function planWalCut(report: NodeReport): Promise<PlanTarget | null> {
  const targets: PlanTarget[] = [];
  await planNodeTargets(report, targets, { clampOffsets: false, fs: nodeRepairFs, preserveDirOf });
  return targets.find((target) => target.kind === "metadata") ?? null;
}
const _ts = createTsEngine();

const node = (fault?: string): Promise<string> => tinyNode({ seed: 11, fault });

function walCodes(report: NodeReport): string[] {
  return report.metadata.wal!.findings.map((finding) => finding.code);
}

function lossOf(report: NodeReport) {
  return nodeFindings(report).find((finding) => finding.code === "WalCommittedOpsLost");
}

describe("a WAL that proves fewer ops than commit_max (docs/node.md N1.1)", () => {
  it("an emptied journal.wal with commit_max 55 above the snapshot's op 40 on a solo node: refused, ops 41..55 named; the boot only warns", async () => {
    const root = await node();
    writeFileSync(join(root, "metadata/journal.wal"), new Uint8Array(0));
    for (const engine of engines) {
      const report = await scanNode(root, { engine });
      expect(walCodes(report)).toEqual(["WalCommittedOpsLost"]);
      expect(lossOf(report)).toMatchObject({ severity: "refused", provenOp: 40n, commitMax: 55n, replicaCount: 1 });
      expect(lossOf(report)!.message).toContain("ops 41..55 were committed");
      expect(lossOf(report)!.message).toContain("only warns and runs without them");
      expect(report.verdict).toBe("refused");
      expect(report.metadata.wal!.iggy.scan).toBe("boot");
      expect(report.bootForecast).toEqual([
        expect.objectContaining({ effect: "run-without-committed-ops", destructive: true, path: join(root, "metadata/journal.wal") }),
      ]);
      expect(report.bootForecast[0]!.detail).toContain("runs without ops 41..55");
    }
  });

  it("an absent journal.wal: WalAbsent beside the loss, which the forecast names", async () => {
    const root = await node();
    rmSync(join(root, "metadata/journal.wal"));
    const report = await scanNode(root, { engine: engines[0]! });
    expect(report.metadata.wal).toBeNull();
    expect(report.metadata.findings.map((finding) => [finding.code, finding.severity])).toEqual([
      ["WalAbsent", "info"],
      ["WalCommittedOpsLost", "refused"],
    ]);
    expect(lossOf(report)).toMatchObject({ provenOp: 40n, commitMax: 55n });
    expect(report.bootForecast.map((entry) => entry.effect)).toEqual(["run-without-committed-ops"]);
  });

  it("the last 4 entries cut away at an entry boundary: the WAL walks clean but proves only op 51", async () => {
    const report = await scanNode(await node("wal-committed-lost"), { engine: engines[0]! });
    expect(walCodes(report)).toEqual(["WalCommittedOpsLost"]);
    expect(lossOf(report)).toMatchObject({ severity: "refused", provenOp: 51n, commitMax: 55n });
  });

  it("on a 3-replica cluster the same loss is warn, never said to be held by a peer (only fleet knows), and the forecast is not destructive", async () => {
    const root = await node("wal-committed-lost");
    rewriteSuperblock(root, { replicaCount: 3 });
    const report = await scanNode(root, { engine: engines[0]! });
    expect(lossOf(report)).toMatchObject({ severity: "warn", provenOp: 51n, commitMax: 55n, replicaCount: 3 });
    expect(lossOf(report)!.message).toContain(
      "If one of the other 2 replicas of this 3-replica cluster holds them (check with `segscan fleet`), it re-supplies them when this replica rejoins; if none does, they are lost",
    );
    expect(lossOf(report)!.message).not.toMatch(/hold them and re-supply|replicas hold them/);
    expect(report.bootForecast[0]!.detail).toContain("until a peer that holds them re-supplies them (check with `segscan fleet`)");
    expect(report.verdict).toBe("warn");
    expect(report.bootForecast).toEqual([expect.objectContaining({ effect: "run-without-committed-ops", destructive: false })]);
  });

  it("an empty superblock (C = 0), or commit_max at the WAL's last op, is no loss", async () => {
    const root = await node();
    expect(lossOf(await scanNode(root, { engine: engines[0]! }))).toBeUndefined();
    rmSync(join(root, "metadata/superblock.a"));
    rmSync(join(root, "metadata/superblock.b"));
    writeFileSync(join(root, "metadata/journal.wal"), new Uint8Array(0));
    expect(lossOf(await scanNode(root, { engine: engines[0]! }))).toBeUndefined();
  });

  it("ops up to the snapshot's op live in the snapshot: a stale WAL below S with commit_max = S is no loss", async () => {
    const root = await node();
    rewriteSuperblock(root, { commitMax: 40n });
    const wal = join(root, "metadata/journal.wal");
    writeFileSync(wal, new Uint8Array(0));
    expect(lossOf(await scanNode(root, { engine: engines[0]! }))).toBeUndefined();
  });
});

describe("a torn tail and commit_max (docs/node.md N1.1)", () => {
  it("a torn entry at or below commit_max on a solo node: WalCommittedOpsLost instead of WalTornTail, and no cut is planned", async () => {
    const root = await node("wal-committed-torn");
    for (const engine of engines) {
      const report = await scanNode(root, { engine });
      expect(walCodes(report)).toEqual(["WalCommittedOpsLost"]);
      const loss = lossOf(report)!;
      expect(loss).toMatchObject({ severity: "refused", provenOp: 54n, commitMax: 55n, damagePosition: report.metadata.wal!.walkedSize });
      expect(loss.message).toContain("not a never-acknowledged torn tail");
      expect(loss.message).not.toContain("never fsynced");
      expect(report.metadata.wal!.residue).toMatchObject({ probe: "no-survivor" });
      expect(await planWalCut(report)).toBeNull();
      // Iggy cuts those bytes unpreserved: destructive, since they may hold a committed op.
      expect(report.bootForecast).toEqual([
        expect.objectContaining({ effect: "truncate-wal-tail", destructive: true }),
        expect.objectContaining({ effect: "run-without-committed-ops", destructive: true }),
      ]);
    }
  });

  it("the same torn entry on a 3-replica cluster: WalTornTail stays repairable (no never-acknowledged claim) beside a warn loss; the cut is planned", async () => {
    const root = await node("wal-committed-torn");
    rewriteSuperblock(root, { replicaCount: 3 });
    const report = await scanNode(root, { engine: engines[0]! });
    expect(report.metadata.wal!.findings.map((finding) => [finding.code, finding.severity])).toEqual([
      ["WalTornTail", "repairable"],
      ["WalCommittedOpsLost", "warn"],
    ]);
    const torn = report.metadata.wal!.findings[0]!;
    expect(torn.message).toContain("op 55 was committed");
    expect(torn.message).not.toContain("never fsynced");
    expect(await planWalCut(report)).not.toBeNull();
  });

  it("a short entry above commit_max was never fsynced, so never acknowledged", async () => {
    const report = await scanNode(await node("wal-torn-tail"), { engine: engines[0]! });
    expect(walCodes(report)).toEqual(["WalTornTail"]);
    const torn = report.metadata.wal!.findings[0]!;
    expect(torn).toMatchObject({ severity: "repairable", tornEvidence: "short-entry" });
    expect(torn.message).toMatch(/the entry for op 55 claims \d+ bytes and only \d+ remain/);
    expect(torn.message).toContain("under the crash model (a completed fsync leaves no short entry), never fsynced, so never acknowledged");
    expect(await planWalCut(report)).not.toBeNull();
  });

  it("a zero-filled residue was never written", async () => {
    const report = await scanNode(await node("wal-zero-tail"), { engine: engines[0]! });
    const torn = report.metadata.wal!.findings[0]!;
    expect(torn).toMatchObject({ code: "WalTornTail", tornEvidence: "zero-filled" });
    expect(torn.message).toContain(
      "are zero, never written; under the crash model (a completed fsync leaves no zeros), never fsynced, so never acknowledged",
    );
    expect(report.metadata.wal!.residue).toMatchObject({ allZero: true });
  });

  it("a complete entry whose body checksum fails cannot be told from corruption of an acknowledged entry: said so, and the cut is still planned", async () => {
    const report = await scanNode(await node("wal-torn-tail-stale-copy"), { engine: engines[0]! });
    expect(walCodes(report)).toEqual(["WalTornTail"]);
    const torn = report.metadata.wal!.findings[0]!;
    expect(torn).toMatchObject({ severity: "repairable", tornEvidence: "complete-entry" });
    expect(torn.message).toContain("the entry for op 55 is complete (its header verifies and its length fits)");
    expect(torn.message).toContain("segscan cannot tell a torn write from corruption of an acknowledged entry");
    expect(torn.message).toContain("commit_max is only a lower bound");
    // Iggy refuses these bytes; the cut lets it boot, but "nothing lost" is not what the bytes prove.
    expect(torn.message).toContain("lets the server boot, the cut bytes preserved");
    expect(torn.message).not.toContain("never fsynced");
    expect(report.metadata.wal!.residue).toMatchObject({ allZero: false });
    expect(await planWalCut(report)).not.toBeNull();
  });
});
