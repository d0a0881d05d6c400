/**
 * docs/node.md N7: the WAL torn-tail cut. Apply, then the WAL scans clean;
 * restore returns every byte; a crash at every mutating step, followed by
 * scan + plan + apply again, converges to the uncrashed end state and restore
 * still returns the original; a stale plan changes nothing.
 */
import { holdOpen } from "./helpers/holder.js";
import { describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateDataDir } from "../src/gen/generate.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { scanNode } from "../src/node/scan.js";
import { applyWalCut, planWalCut } from "../src/node/repair/wal-cut.js";
import { InjectedFault, StalePlanError, createFaultyFs, nodeRepairFs, restore } from "../src/repair/index.js";
import { LockHeldError, WriterOpenError } from "../src/repair/lock.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { tempDir } from "./helpers/node-wal.js";

const engine = createTsEngine();

async function tornNode(fault = "wal-torn-tail"): Promise<{ root: string; wal: string; original: Uint8Array }> {
  const root = tempDir();
  const generated = await generateDataDir(root, { size: "tiny", seed: 3 });
  await writeNodeMetadata(root, generated.partitions, { fault });
  const wal = join(root, "metadata/journal.wal");
  return { root, wal, original: readFileSync(wal) };
}

async function repair(root: string, fs = nodeRepairFs): Promise<boolean> {
  const plan = planWalCut(await scanNode(root, { engine }));
  if (plan === null) return false;
  await applyWalCut(plan, { fs, engine });
  return true;
}

/** Every file under metadata/ (not the preserve dir), by name. */
function metadataFiles(root: string): Record<string, string> {
  const dir = join(root, "metadata");
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString("hex")]),
  );
}

describe.each(["wal-torn-tail", "wal-zero-tail"])("WAL torn-tail cut (%s)", (fault) => {
  it("apply cuts to the proven prefix, the node scans clean, restore returns every byte", async () => {
    const { root, wal, original } = await tornNode(fault);
    const before = await scanNode(root, { engine });
    expect(before.verdict).toBe("repairable");
    const plan = planWalCut(before)!;
    const result = await applyWalCut(plan, { engine });
    expect(readFileSync(wal).length).toBe(plan.toSize);
    expect(result.preserved === null).toBe(fault === "wal-zero-tail");
    expect((await scanNode(root, { engine })).verdict).toBe("clean");
    const restored = await restore(join(root, "metadata"), { engine });
    expect(restored.restored).toBe(true);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
  });

  it("a crash at every step k, then scan + plan + apply again: the uncrashed end state; restore returns every byte", async () => {
    const reference = await tornNode(fault);
    const counter = createFaultyFs(nodeRepairFs);
    await repair(reference.root, counter);
    const end = metadataFiles(reference.root);
    expect(counter.steps).toBeGreaterThan(5);
    for (let k = 1; k <= counter.steps; k++) {
      for (const tornWriteFraction of counter.log[k - 1]!.startsWith("write") ? [0, 0.5] : [0]) {
        const label = `k=${k} (${counter.log[k - 1]}) torn=${tornWriteFraction}`;
        const { root, wal, original } = await tornNode(fault);
        const before = metadataFiles(root);
        await expect(repair(root, createFaultyFs(nodeRepairFs, { failAt: k, tornWriteFraction })), label).rejects.toBeInstanceOf(
          InjectedFault,
        );
        await repair(root);
        expect(metadataFiles(root), label).toEqual(end);
        expect((await scanNode(root, { engine })).verdict, label).toBe("clean");
        await restore(join(root, "metadata"), { engine });
        expect(metadataFiles(root), label).toEqual(before);
        expect(Buffer.compare(readFileSync(wal), original), label).toBe(0);
      }
    }
  });
});

describe("refusals", () => {
  it("a held lock in metadata.segscan/ refuses the cut (one writer at a time) and nothing changes", async () => {
    const { root, wal, original } = await tornNode();
    const plan = planWalCut(await scanNode(root, { engine }))!;
    mkdirSync(plan.preserveDir, { recursive: true });
    const lockInfo = { pid: 999_999, host: "elsewhere", started: new Date().toISOString(), command: "segscan repair" };
    writeFileSync(join(plan.preserveDir, "lock"), `${JSON.stringify(lockInfo)}\n`);
    await expect(applyWalCut(plan, { engine })).rejects.toBeInstanceOf(LockHeldError);
    expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
  });

  it("a plan whose WAL changed since the scan is refused and nothing changes", async () => {
    const { root, wal } = await tornNode();
    const plan = planWalCut(await scanNode(root, { engine }))!;
    appendFileSync(wal, new Uint8Array(10));
    const changed = readFileSync(wal);
    await expect(applyWalCut(plan, { engine })).rejects.toBeInstanceOf(StalePlanError);
    expect(Buffer.compare(readFileSync(wal), changed)).toBe(0);
  });

  it("no cut is planned for interior damage, a gap, or a clean WAL", async () => {
    for (const fault of ["wal-interior-damage", "wal-gap", undefined]) {
      const root = tempDir();
      const generated = await generateDataDir(root, { size: "tiny", seed: 3 });
      await writeNodeMetadata(root, generated.partitions, fault === undefined ? {} : { fault });
      expect(planWalCut(await scanNode(root, { engine }))).toBeNull();
    }
  });

  it("a torn tail beside a refused WAL finding is not cut (the WAL as a whole is refused)", async () => {
    const { root, wal } = await tornNode("wal-gap");
    const bytes = readFileSync(wal);
    writeFileSync(wal, Buffer.concat([bytes, Buffer.alloc(300)]));
    const node = await scanNode(root, { engine });
    expect(node.metadata.wal!.findings.map((f) => f.code).sort()).toEqual(["WalGap", "WalTornTail"]);
    expect(planWalCut(node)).toBeNull();
  });
});

describe.runIf(process.platform === "linux")("the WAL cut and a process writing the WAL (Linux /proc)", () => {
  it("refuses while another process has journal.wal open for writing, changing nothing; a reader does not stop it", async () => {
    const { root, wal, original } = await tornNode();
    const before = metadataFiles(root);
    const writer = await holdOpen(wal, "r+");
    try {
      const error = await applyWalCut(planWalCut(await scanNode(root, { engine }))!, { engine }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WriterOpenError);
      expect((error as Error).message).toContain(`pid ${writer.pid} has ${wal} open O_RDWR`);
      expect(metadataFiles(root)).toEqual(before);
      expect(Buffer.compare(readFileSync(wal), original)).toBe(0);
    } finally {
      writer.stop();
    }
    const reader = await holdOpen(wal, "r");
    try {
      await applyWalCut(planWalCut(await scanNode(root, { engine }))!, { engine });
      expect((await scanNode(root, { engine })).verdict).toBe("clean");
    } finally {
      reader.stop();
    }
  });
});
