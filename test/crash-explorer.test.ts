/**
 * The crash-exploration harness itself (helpers/crash-explorer.ts) on a toy
 * act shaped like a repair: take the lock through `RepairFs` (exclusive
 * create, write, fsync, fsync its directory), replace a file by staging +
 * rename, journal "done", release the lock (unlink). The correct act passes,
 * with the stale locks its crashes leave cleared by the operator's rule; the
 * same act missing one fsync is caught, with the crash point and the
 * persistence choice named.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LOCK_NAME, nodeRepairFs } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { type CrashExploration, exploreCrashes } from "./helpers/crash-explorer.js";
import { trackedTempDir } from "./helpers/fixtures.js";

const NEW = Buffer.from("the new record, 32 bytes long!!\n");

interface Toy {
  root: string;
  dir: string;
  preserve: string;
}

async function writeAll(fs: RepairFs, file: string, mode: "w" | "wx" | "a", bytes: Buffer, sync: boolean): Promise<void> {
  const handle = await fs.open(file, mode);
  try {
    await handle.write(bytes, 0, bytes.length, mode === "a" ? null : 0);
    if (sync) await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readAll(fs: RepairFs, file: string): Promise<string> {
  const stat = await fs.stat(file);
  if (stat === null) return "";
  const bytes = Buffer.alloc(stat.size);
  const handle = await fs.open(file, "r");
  try {
    await handle.read(bytes, 0, bytes.length, 0);
  } finally {
    await handle.close();
  }
  return bytes.toString();
}

/** The toy act; `skip` leaves out one of its fsyncs. */
async function toyRepair(fs: RepairFs, toy: Toy, skip: "none" | "staging fsync" = "none"): Promise<void> {
  await fs.mkdir(toy.preserve);
  await fs.syncDir(toy.root);
  const lock = join(toy.preserve, LOCK_NAME);
  const holder = { pid: process.pid, host: hostname(), started: new Date().toISOString(), command: "toy" };
  await writeAll(fs, lock, "wx", Buffer.from(`${JSON.stringify(holder)}\n`), true); // EEXIST: held (or stale)
  await fs.syncDir(toy.preserve);
  try {
    const journal = join(toy.preserve, "journal");
    if ((await readAll(fs, journal)).includes("done")) return;
    const staging = join(toy.dir, "f.staging");
    await writeAll(fs, staging, "w", NEW, skip !== "staging fsync");
    await fs.rename(staging, join(toy.dir, "f"));
    await fs.syncDir(toy.dir);
    const created = (await fs.stat(journal)) === null;
    await writeAll(fs, journal, "a", Buffer.from("done\n"), true);
    if (created) await fs.syncDir(toy.preserve);
  } finally {
    await fs.unlink(lock);
  }
}

function toyExploration(skip: "none" | "staging fsync" = "none"): CrashExploration<Toy> {
  return {
    build() {
      const root = trackedTempDir("segscan-toy-");
      const dir = join(root, "p");
      mkdirSync(dir);
      writeFileSync(join(dir, "f"), "the old record\n");
      writeFileSync(join(dir, "other"), "never touched\n");
      return { root, dir, preserve: join(root, "p.segscan") };
    },
    observe: (toy) => Object.fromEntries(readdirSync(toy.dir).map((name) => [name, readFileSync(join(toy.dir, name)).toString()])),
    act: (fs, toy) => toyRepair(fs, toy, skip),
    recover: (toy) => toyRepair(nodeRepairFs, toy, skip),
  };
}

describe("exploreCrashes on a toy act that takes its lock through RepairFs", () => {
  it("the correct act converges from every crash state; the locks its crashes leave behind are cleared before recovery", async () => {
    const report = await exploreCrashes(toyExploration());
    expect(report.steps).toBe(16);
    expect(report.failures).toEqual([]);
    // The lock is durable once its directory is synced; a crash after that leaves it (a process crash as well: release never ran).
    expect(report.locksCleared.some((lock) => lock.includes("(k="))).toBe(true);
    // After the act returned, the unlink of the lock is not synced: a power cut brings it back.
    expect(report.locksCleared.some((lock) => lock.includes("after the act returned"))).toBe(true);
    expect(report.states).toBeGreaterThan(report.runs);
  });

  it("a missing fsync (the staging file renamed unsynced) is caught, naming the crash point and the persistence choice", async () => {
    const error = (await exploreCrashes(toyExploration("staging fsync")).then(
      () => null,
      (e: unknown) => e,
    )) as Error | null;
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/k=\d+\/\d+ \(.+\) torn=[\d.]+ persistence=\S+/);
    expect(error!.message).toMatch(/recovery did not converge|not durable when the act returned/);
  });

  it('onFailure "collect" lists every crash state that does not recover', async () => {
    const report = await exploreCrashes({ ...toyExploration("staging fsync"), onFailure: "collect" });
    expect(report.failures.length).toBeGreaterThan(1);
    // Only power cuts lose the unsynced staging bytes: the process crash ("all") always recovers.
    expect(report.failures.filter((failure) => / persistence=all /.test(failure))).toEqual([]);
    expect(report.failures.some((failure) => failure.startsWith("after the act returned"))).toBe(true);
  });

  it("each recovery in `also` starts from every crash state and must reach its own reference; one that does not is named", async () => {
    const report = await exploreCrashes({
      ...toyExploration(),
      also: [
        // Repairs again, as the first recovery does: it converges from every crash state.
        { name: "repair again", recover: (toy) => toyRepair(nodeRepairFs, toy) },
        // Leaves the crash state as it is: its reference is the act's end state, which a crash mid-way does not reach.
        { name: "leave it", recover: async () => {} },
      ],
      onFailure: "collect",
    });
    expect(report.failures.length).toBeGreaterThan(0);
    expect(report.failures.filter((failure) => !failure.includes("(recovery 3: leave it)"))).toEqual([]);
    expect(report.failures.every((failure) => failure.includes("recovery did not converge"))).toBe(true);
  });

  it("`points` picks the crash points explored by the full paths each step changes; the power cut after the act returned is always explored", async () => {
    const seen: string[][] = [];
    const report = await exploreCrashes({
      ...toyExploration(),
      points(toy, point) {
        seen.push([...point.paths]);
        return point.paths.some((p) => p === toy.dir || p.startsWith(`${toy.dir}/`));
      },
    });
    // Every step was offered, with its full paths (a rename names both sides).
    expect(seen).toHaveLength(report.steps);
    expect(seen.some((paths) => paths.length === 2 && paths.every((p) => p.includes("/p/")))).toBe(true);
    // The staging file's open, write, fsync and rename, and the syncDir of p/, are kept; the lock and journal steps are left out.
    expect(report.skippedPoints).toBe(report.steps - 5);
    // One run per kept point (the write torn and whole) and the power cut after the act returned.
    expect(report.runs).toBe(5 + 1 + 1);
  });
});
