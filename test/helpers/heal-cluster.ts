/**
 * docs/heal.md: replicas to heal, from one generated 3-node cluster (`gen
 * --cluster 3`, src/gen/cluster.ts): the damaged partition of one node and
 * the same partition of a peer, copied side by side under a fresh root (the
 * crash explorer's durability model holds everything under it).
 */
import { cpSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { generateCluster } from "../../src/gen/cluster.js";
import type { ApplyResult, RepairFs, RepairPlan, RestoreResult } from "../../src/repair/index.js";
import { applyRepair, planHeal, planSalvage, restore } from "../../src/repair/index.js";
import { scanPartition } from "../../src/node/scan-path.js";
import { trackedTempDir } from "./fixtures.js";
import { applyPlan, clearStaleLock, engine, noSyncFs } from "./repair-scenarios.js";

/** The cluster faults the heal tests use: one partition each. */
export const HEAL_FAULTS = ["interior-on-one", "torn-on-one", "lost-everywhere"] as const;
export type HealFault = (typeof HEAL_FAULTS)[number];

let cluster: Promise<{ dir: string; partitions: Record<HealFault, string> }> | null = null;

/** The cluster, generated once per test file. */
export function healCluster(): Promise<{ dir: string; partitions: Record<HealFault, string> }> {
  cluster ??= (async () => {
    const dir = trackedTempDir("segscan-heal-cluster-");
    const generated = await generateCluster(dir, 3, { faults: [...HEAL_FAULTS], seed: 7 });
    const partitions = Object.fromEntries(generated.faults.map((f) => [f.fault.name, f.partition!])) as Record<HealFault, string>;
    return { dir, partitions };
  })();
  return cluster;
}

/** The node whose replica each fault damages, and a peer that holds it whole. */
export const DAMAGED: Record<HealFault, { node: string; peer: string }> = {
  "interior-on-one": { node: "node-0", peer: "node-1" },
  "torn-on-one": { node: "node-1", peer: "node-0" },
  "lost-everywhere": { node: "node-0", peer: "node-1" },
};

export interface HealPair {
  /** The durability model's root: holds both copies. */
  root: string;
  /** The damaged replica's partition dir. */
  dir: string;
  /** The peer's copy of the partition. */
  peer: string;
}

/** A fresh copy of a fault's damaged partition and its peer's, under one new root. */
export async function healPair(fault: HealFault): Promise<HealPair> {
  const { dir, partitions } = await healCluster();
  const { node, peer } = DAMAGED[fault];
  const root = trackedTempDir("segscan-heal-");
  const local = join(root, "local", "partition");
  const remote = join(root, "peer", "partition");
  mkdirSync(join(root, "local"), { recursive: true });
  mkdirSync(join(root, "peer"), { recursive: true });
  cpSync(join(dir, node, partitions[fault]), local, { recursive: true });
  cpSync(join(dir, peer, partitions[fault]), remote, { recursive: true });
  return { root, dir: local, peer: remote };
}

/** The salvage of a pair's damaged partition, applied (one replica's view: `--replicas 1`). */
export async function salvageLocal(pair: HealPair): Promise<void> {
  await applyPlan(await planSalvage(await scanPartition(pair.dir, { engine, verify: "full" }), { engine }));
}

export function healPlan(pair: HealPair): Promise<RepairPlan> {
  // In-process reads: the crash loops plan thousands of times (no scan thread to start each time).
  return planHeal(pair.dir, pair.peer, { engine, io: "blocking" });
}

/**
 * The copy and hash chunk of the heal crash tests: a generated segment is
 * ~100 KiB, so the 1,000-byte chunk of the other crash tests would make a
 * crash point of every kilobyte copied; 64 KiB keeps each copy to a few
 * steps (CI time), and the chunk loop itself is explored by the repair and
 * salvage crash tests.
 */
export const HEAL_CHUNK_BYTES = 64 * 1024;

export function applyHeal(plan: RepairPlan, fs: RepairFs = noSyncFs): Promise<ApplyResult> {
  return applyRepair(plan, { engine, chunkBytes: HEAL_CHUNK_BYTES, checkWriters: false, fs });
}

export function restoreHeal(dir: string, fs: RepairFs = noSyncFs): Promise<RestoreResult> {
  clearStaleLock(dir);
  return restore(dir, { engine, fs, chunkBytes: HEAL_CHUNK_BYTES, checkWriters: false });
}

/** What an operator runs after a crashed heal: clear the killed run's lock, plan the heal again, apply it when there is something to do. */
export async function healNoSync(pair: HealPair, fs: RepairFs = noSyncFs): Promise<void> {
  clearStaleLock(pair.dir);
  const plan = await healPlan(pair);
  if (plan.targets.length > 0) await applyHeal(plan, fs);
}

/** The segment files of a partition dir (`.log`, `.index`), name → bytes as hex. */
export function segmentFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith(".log") || name.endsWith(".index")) out[name] = readFileSync(join(dir, name)).toString("hex");
  }
  return out;
}
