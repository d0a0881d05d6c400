/**
 * docs/repair.md §6.2: one writer at a time. `applyRepair` and
 * `restore` take an exclusive lock file in `<partition>.segscan/`, refuse while
 * it is held (saying how to clear a stale one), release it on every way out,
 * and refuse while another process has a segment file open for writing
 * (Linux: /proc/<pid>/fd + fdinfo flags).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { holdOpen } from "./helpers/holder.js";
import { describe, expect, it } from "vitest";
import {
  InjectedFault,
  LOCK_NAME,
  LockHeldError,
  RepairError,
  WriterOpenError,
  acquireLock,
  applyRepair,
  createFaultyFs,
  findWriters,
  nodeRepairFs,
  planRepair,
  restore,
} from "../src/repair/index.js";
import { CHUNK_BYTES, REPAIRABLE, buildScenario, clearStaleLock, engine, repair, scan, snapshot } from "./helpers/repair-scenarios.js";
import type { RepairFs } from "../src/repair/index.js";
import { RECLAIM_NAME } from "../src/repair/lock.js";
import { scanPath } from "../src/node/scan-path.js";
import { failureExitCode } from "../src/cli/exit.js";

const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
const logOf = (dir: string): string => join(dir, readdirSync(dir).find((n) => n.endsWith(".log"))!);

describe("the partition lock", () => {
  it("a held lock refuses apply and restore, naming the holder and how to clear a stale lock; nothing changes", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    const held = await acquireLock(nodeRepairFs, `${dir}.segscan`, "test", "segscan repair --apply (the other run)");
    try {
      const error = await repair(dir, garbageTail).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockHeldError);
      const lockPath = join(`${dir}.segscan`, LOCK_NAME);
      const message = (error as Error).message;
      expect(message).toContain(
        `refusing to repair ${dir}: another segscan run holds its lock ${lockPath}: pid ${process.pid} on host ${hostname()}`,
      );
      expect(message).toContain("(segscan repair --apply (the other run))");
      expect(message).toContain(`check that pid ${process.pid} is not running`);
      expect(message).toContain(`then clear it with \`rm -- ${lockPath}\` and run again`);
      expect(snapshot(dir)).toEqual(before);
      const info = JSON.parse(readFileSync(lockPath, "utf8"));
      expect(info).toMatchObject({ pid: process.pid, host: hostname(), command: "segscan repair --apply (the other run)" });
      expect(typeof info.started).toBe("string");
    } finally {
      await held.release();
    }
    await repair(dir, garbageTail);
    const cut = snapshot(dir);
    const again = await acquireLock(nodeRepairFs, `${dir}.segscan`, "test", "other");
    try {
      await expect(restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false })).rejects.toBeInstanceOf(LockHeldError);
      expect(snapshot(dir)).toEqual(cut);
    } finally {
      await again.release();
    }
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false });
    expect(snapshot(dir)).toEqual(before);
  });

  it("two applies at once: exactly one repairs, the other is refused by the lock", async () => {
    const { dir } = buildScenario(garbageTail);
    const plan = await planRepair(await scan(dir, garbageTail));
    const results = await Promise.allSettled([0, 1].map(() => applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(LockHeldError);
    expect((await scan(dir, garbageTail)).partitions[0]!.verdict).toBe("clean");
  });

  it("is released on every way out: success, a refusal, a failure mid-apply", async () => {
    const { dir } = buildScenario(garbageTail);
    const lockPath = join(`${dir}.segscan`, LOCK_NAME);
    // An I/O failure mid-apply (the process lives on): the cut fails with EIO, and the lock is still released.
    const eio: RepairFs = {
      ...nodeRepairFs,
      async open(filePath, mode) {
        if (mode === "r+") throw Object.assign(new Error(`EIO: i/o error, open '${filePath}'`), { code: "EIO" });
        return nodeRepairFs.open(filePath, mode);
      },
    };
    await expect(repair(dir, garbageTail, eio)).rejects.toThrow(/i\/o error|EIO/i);
    expect(existsSync(lockPath)).toBe(false);
    // A crash (the process dies: every later call fails too) leaves the lock, as kill -9 does: the operator clears it.
    await expect(repair(dir, garbageTail, createFaultyFs(nodeRepairFs, { failAt: 12 }))).rejects.toBeInstanceOf(InjectedFault);
    expect(existsSync(lockPath)).toBe(true);
    clearStaleLock(dir);
    await repair(dir, garbageTail);
    expect(existsSync(lockPath)).toBe(false);
    const { dir: other } = buildScenario(garbageTail);
    const stalePlan = await planRepair(await scan(other, garbageTail));
    writeFileSync(logOf(other), "changed"); // the plan is stale now: refused
    await expect(applyRepair(stalePlan, { engine, checkWriters: false })).rejects.toThrow(/stale/);
    expect(existsSync(join(`${other}.segscan`, LOCK_NAME))).toBe(false);
    expect(existsSync(lockPath)).toBe(false);
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false }).catch(() => {});
    expect(existsSync(lockPath)).toBe(false);
  });
});

describe("the lock at process exit", () => {
  it("a process that exits at once (a second Ctrl-C: process.exit) still removes its lock", async () => {
    const { dir } = buildScenario(garbageTail);
    const lockModule = new URL("../dist/src/repair/lock.js", import.meta.url).href;
    const fsModule = new URL("../dist/src/repair/fs-layer.js", import.meta.url).href;
    const script =
      `const { acquireLock } = await import(${JSON.stringify(lockModule)}); ` +
      `const { nodeRepairFs } = await import(${JSON.stringify(fsModule)}); ` +
      `await acquireLock(nodeRepairFs, ${JSON.stringify(`${dir}.segscan`)}, "test", "child"); process.exit(32);`;
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
      child.once("error", reject);
      child.once("exit", resolve);
    });
    expect(code).toBe(32);
    expect(existsSync(join(`${dir}.segscan`, LOCK_NAME))).toBe(false);
    expect(existsSync(`${dir}.segscan`)).toBe(false); // made only for the lock: removed with it
  });
});

describe.runIf(process.platform === "linux")("other writers (Linux /proc)", () => {
  it("a process with the .log open for writing refuses apply, naming the pid and file; a reader does not", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    const log = logOf(dir);
    const writer = await holdOpen(log, "r+");
    try {
      const check = await findWriters({ segmentDirs: [dir], files: [] });
      expect(check.checked).toBe(true);
      expect(check.writers).toContainEqual({ pid: writer.pid, file: log, access: "O_RDWR" });
      const plan = await planRepair(await scan(dir, garbageTail));
      const error = await applyRepair(plan, { engine, chunkBytes: CHUNK_BYTES }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WriterOpenError);
      expect((error as Error).message).toContain(`pid ${writer.pid} has ${log} open O_RDWR`);
      expect((error as Error).message).toContain("Stop iggy-server");
      expect(snapshot(dir)).toEqual(before);
      expect(existsSync(join(`${dir}.segscan`, LOCK_NAME))).toBe(false);
    } finally {
      writer.stop();
    }
    const reader = await holdOpen(log, "r");
    try {
      const result = await applyRepair(await planRepair(await scan(dir, garbageTail)), { engine, chunkBytes: CHUNK_BYTES });
      expect(result.writerCheck.checked).toBe(true);
    } finally {
      reader.stop();
    }
  });
});

/** A pid that no process holds: a child that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid!;
}

/** A lock file as a run on `host` with `pid` left it (`pidNamespace` omitted: an older lock). */
function leaveLock(dir: string, holder: { pid: number; host?: string; pidNamespace?: string | null }): string {
  const preserveDir = `${dir}.segscan`;
  mkdirSync(preserveDir, { recursive: true });
  const lockPath = join(preserveDir, LOCK_NAME);
  const namespace = holder.pidNamespace === undefined ? readlinkSync("/proc/self/ns/pid") : holder.pidNamespace;
  writeFileSync(
    lockPath,
    `${JSON.stringify({
      pid: holder.pid,
      host: holder.host ?? hostname(),
      started: "2020-01-01T00:00:00.000Z",
      command: "segscan repair --apply (killed)",
      ...(namespace === null ? {} : { pidNamespace: namespace }),
    })}\n`,
  );
  return lockPath;
}

describe.runIf(process.platform === "linux")("a stale lock (docs/repair.md §6.2 rule 2)", () => {
  it("a lock of a killed run on this host (its pid gone, the same pid namespace) is reclaimed: the repair runs and leaves no lock", async () => {
    const { dir } = buildScenario(garbageTail);
    const lockPath = leaveLock(dir, { pid: deadPid() });
    await repair(dir, garbageTail);
    expect(existsSync(lockPath)).toBe(false);
    expect(existsSync(join(`${dir}.segscan`, RECLAIM_NAME))).toBe(false);
    expect((await scan(dir, garbageTail)).partitions[0]!.verdict).toBe("clean");
  });

  it("a run killed by SIGKILL leaves its lock; the next run on this host reclaims it", async () => {
    const { dir } = buildScenario(garbageTail);
    const lockModule = new URL("../dist/src/repair/lock.js", import.meta.url).href;
    const fsModule = new URL("../dist/src/repair/fs-layer.js", import.meta.url).href;
    const script =
      `const { acquireLock } = await import(${JSON.stringify(lockModule)}); ` +
      `const { nodeRepairFs } = await import(${JSON.stringify(fsModule)}); ` +
      `await acquireLock(nodeRepairFs, ${JSON.stringify(`${dir}.segscan`)}, "test", "child"); process.kill(process.pid, "SIGKILL");`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
      child.once("error", reject);
      child.once("exit", () => resolve());
    });
    expect(existsSync(join(`${dir}.segscan`, LOCK_NAME))).toBe(true);
    await repair(dir, garbageTail);
    expect(existsSync(join(`${dir}.segscan`, LOCK_NAME))).toBe(false);
  });

  it("a live holder, another host, or an older lock without a pid namespace is not reclaimed: refused with the exact command", async () => {
    for (const holder of [
      { pid: process.pid },
      { pid: deadPid(), host: `not-${hostname()}` },
      { pid: deadPid(), pidNamespace: null },
      { pid: deadPid(), pidNamespace: "pid:[1]" },
    ]) {
      const { dir } = buildScenario(garbageTail);
      const before = snapshot(dir);
      const lockPath = leaveLock(dir, holder);
      const error = await repair(dir, garbageTail).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockHeldError);
      expect((error as Error).message).toContain(`clear it with \`rm -- ${lockPath}\``);
      expect(existsSync(lockPath)).toBe(true);
      expect(snapshot(dir)).toEqual(before);
    }
  });

  it("a reclaim another run left half-done (lock.reclaim) refuses, naming both files to clear", async () => {
    const { dir } = buildScenario(garbageTail);
    const lockPath = leaveLock(dir, { pid: deadPid() });
    const reclaimPath = join(`${dir}.segscan`, RECLAIM_NAME);
    writeFileSync(reclaimPath, "{}\n");
    const error = await repair(dir, garbageTail).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as Error).message).toContain(`\`rm -- ${reclaimPath} ${lockPath}\``);
    expect(existsSync(lockPath)).toBe(true);
  });
});

/** nodeRepairFs with `unlink` of the lock failing (EPERM) and writes to `target` failing (ENOSPC). */
function failingRun(target: RegExp, lockUnlink: boolean): RepairFs {
  const errno = (code: string, syscall: string) => Object.assign(new Error(`${code}: injected, ${syscall}`), { code, syscall, errno: -1 });
  return {
    ...nodeRepairFs,
    async unlink(filePath) {
      if (lockUnlink && filePath.endsWith(`/${LOCK_NAME}`)) throw errno("EPERM", "unlink");
      return nodeRepairFs.unlink(filePath);
    },
    async open(filePath, mode) {
      const file = await nodeRepairFs.open(filePath, mode);
      if (!target.test(filePath)) return file;
      return {
        ...file,
        async write() {
          throw errno("ENOSPC", "write");
        },
      };
    },
  };
}

describe("a run that stops part-way (docs/repair.md §6.2)", () => {
  it("some targets done, then ENOSPC: the error says what was repaired, and the exit is 9 (1|8), not 8", async () => {
    const a = buildScenario(garbageTail).dir;
    const b = buildScenario(garbageTail).dir;
    const plan = await planRepair(await scanPath([a, b], { engine }));
    expect(plan.targets).toHaveLength(2);
    const second = plan.targets[1]!.dir;
    const error = await applyRepair(plan, {
      engine,
      chunkBytes: CHUNK_BYTES,
      checkWriters: false,
      fs: failingRun(new RegExp(`^${second}\\.segscan/.*\\.tmp$`), false),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepairError);
    expect((error as RepairError).changed).toBe(true);
    expect((error as Error).message).toContain(`repaired in full: ${plan.targets[0]!.path}`);
    expect((error as Error).message).toContain(`nothing in ${second} was changed`);
    expect(failureExitCode(error)).toBe(9);
    // Nothing changed anywhere: 8.
    const { dir } = buildScenario(garbageTail);
    const untouched = await repair(dir, garbageTail, failingRun(/\.tmp$/, false)).catch((e: unknown) => e);
    expect((untouched as RepairError).changed).toBe(false);
    expect(failureExitCode(untouched)).toBe(8);
  });

  it.runIf(process.platform === "linux")(
    "a run that cannot remove its own lock says so with the command that clears it, and its 'run again' works once it has exited",
    async () => {
      const a = buildScenario(garbageTail).dir;
      const b = buildScenario(garbageTail).dir;
      const plan = await planRepair(await scanPath([a, b], { engine }));
      const second = plan.targets[1]!;
      const error = await applyRepair(plan, {
        engine,
        chunkBytes: CHUNK_BYTES,
        checkWriters: false,
        fs: failingRun(new RegExp(`^${second.dir}\\.segscan/.*\\.tmp$`), true),
      }).catch((e: unknown) => e);
      const message = (error as Error).message;
      const lockPath = join(second.preserveDir, LOCK_NAME);
      // Both locks are left (every unlink of a lock fails): each is named, and one command clears them.
      expect(message).toMatch(new RegExp(`this run's own locks .* \\(pid ${process.pid}\\) were left behind`));
      expect(message).toContain(lockPath);
      expect(message).toMatch(/`rm -- \S+\/lock \S+\/lock`/);
      expect(existsSync(lockPath)).toBe(true);
      // The CLI process exits after the failure: its pid is gone, and the advised run again reclaims the lock.
      const gone = deadPid();
      for (const target of plan.targets) {
        const path = join(target.preserveDir, LOCK_NAME);
        writeFileSync(path, `${JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), pid: gone })}\n`);
      }
      await applyRepair(await planRepair(await scanPath([a, b], { engine })), { engine, chunkBytes: CHUNK_BYTES, checkWriters: false });
      expect(existsSync(lockPath)).toBe(false);
      expect((await scanPath([a, b], { engine })).partitions.map((p) => p.verdict)).toEqual(["clean", "clean"]);
    },
  );
});
