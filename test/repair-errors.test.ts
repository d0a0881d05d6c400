/**
 * docs/repair.md §6.2: every repair and restore error names the path, the
 * operation, the cause in words and whether anything was changed;
 * a failed copy leaves no partial `.tmp` behind (17.5); a move across
 * filesystems is refused by name with nothing moved (16.4).
 */
import { existsSync, mkdtempSync, readdirSync, renameSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { withFile, writeExactly } from "../src/repair/files.js";
import { RepairError, nodeRepairFs, restore } from "../src/repair/index.js";
import type { RepairFs } from "../src/repair/index.js";
import { CHUNK_BYTES, REPAIRABLE, buildScenario, engine, repair, snapshot } from "./helpers/repair-scenarios.js";

const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
const sweepScenario = REPAIRABLE.find((s) => s.name === "staging and orphan index sweep")!;

function errno(code: string, syscall: string): NodeJS.ErrnoException {
  // As node raises them: code and syscall, no path (fs.write and handle calls name none).
  return Object.assign(new Error(`${code}: injected, ${syscall}`), { code, syscall, errno: -1 });
}

/** nodeRepairFs with writes to files matching `target` failing with `code` once `afterBytes` were written. */
function failingWrites(target: RegExp, code: string, afterBytes = 0): RepairFs {
  return {
    ...nodeRepairFs,
    async open(filePath, mode) {
      const file = await nodeRepairFs.open(filePath, mode);
      if (!target.test(filePath)) return file;
      let written = 0;
      return {
        ...file,
        async write(buffer, offset, length, position) {
          if (written + length > afterBytes) {
            const part = afterBytes - written;
            if (part > 0) written += await file.write(buffer, offset, part, position);
            throw errno(code, "write");
          }
          written += length;
          return file.write(buffer, offset, length, position);
        },
      };
    },
  };
}

const failure = async (promise: Promise<unknown>): Promise<RepairError> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RepairError);
  return error as RepairError;
};

describe("errors name path, operation, cause and what changed", () => {
  it("a torn .log that is a symbolic link: refused as what it is (not 'became a link since the plan'); nothing changed", async () => {
    const { dir } = buildScenario(garbageTail);
    const log = readdirSync(dir).find((name) => name.endsWith(".log"))!;
    const elsewhere = join(mkdtempSync(join(tmpdir(), "segscan-linked-log-")), log);
    renameSync(join(dir, log), elsewhere);
    symlinkSync(elsewhere, join(dir, log));
    const before = snapshot(dirname(elsewhere));
    const error = await failure(repair(dir, garbageTail));
    expect(error.message).toContain(`${join(dir, log)} is a symbolic link`);
    expect(error.message).not.toContain("since the plan was made");
    expect(snapshot(dirname(elsewhere))).toEqual(before);
    expect(existsSync(`${dir}.segscan`) ? readdirSync(`${dir}.segscan`).filter((n) => n !== "lock") : []).toEqual([]);
  });

  it("disk full while preserving: the partial .residue.tmp is removed, named, and nothing in the partition changed", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    const error = await failure(repair(dir, garbageTail, failingWrites(/\.residue\.tmp$/, "ENOSPC", 1500)));
    expect(error.message).toMatch(/^cannot write \d+ bytes at byte 1000 to .*\.residue\.tmp: /);
    expect(error.message).toContain("ENOSPC");
    expect(error.message).toMatch(/the partial copy .*\.residue\.tmp was removed/);
    expect(error.message).toContain(`nothing in ${dir} was changed`);
    expect(readdirSync(`${dir}.segscan`).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
  });

  it("read-only filesystem creating the preserve dir: names the dir and the operation; nothing changed", async () => {
    const { dir } = buildScenario(garbageTail);
    const fs: RepairFs = {
      ...nodeRepairFs,
      mkdir: async () => {
        throw errno("EROFS", "mkdir");
      },
    };
    const error = await failure(repair(dir, garbageTail, fs));
    expect(error.message).toContain(`cannot create the directory ${dir}.segscan: `);
    expect(error.message).toContain("nothing was changed");
  });

  it("permission denied opening the log to cut it: names the log and 'open for writing'; nothing in the partition changed", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    const fs: RepairFs = {
      ...nodeRepairFs,
      open: async (filePath, mode) => {
        if (mode === "r+" && filePath.endsWith(".log")) throw errno("EPERM", "open");
        return nodeRepairFs.open(filePath, mode);
      },
    };
    const error = await failure(repair(dir, garbageTail, fs));
    expect(error.message).toMatch(new RegExp(`^cannot open for writing ${dir}/\\d+\\.log: `));
    expect(error.message).toContain(`nothing in ${dir} was changed`);
    expect(snapshot(dir)).toEqual(before);
  });

  it("disk full during restore: names the log and says how far restore got and how to resume", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    await repair(dir, garbageTail);
    const error = await failure(restore(dir, { engine, chunkBytes: CHUNK_BYTES, fs: failingWrites(/\.log$/, "ENOSPC", 10) }));
    expect(error.message).toMatch(new RegExp(`^cannot write \\d+ bytes at byte \\d+ to ${dir}/\\d+\\.log: `));
    expect(error.message).toContain("restore stopped part-way (0 of 1 steps undone; the step on line 3 was being undone)");
    expect(error.message).toContain(`segscan restore ${dir}\` again resumes there`);
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES });
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("moves across filesystems (16.4)", () => {
  it("rename failing with EXDEV: refused naming both paths; the file is not moved; restore and a new repair still converge", async () => {
    const { dir } = buildScenario(sweepScenario);
    const before = snapshot(dir);
    // Another filesystem: neither a hard link nor a rename can cross into the preserve dir.
    const fs: RepairFs = {
      ...nodeRepairFs,
      rename: async (from, to) => {
        if (dirname(from) !== dirname(to)) throw errno("EXDEV", "rename");
        return nodeRepairFs.rename(from, to);
      },
      link: async () => {
        throw errno("EXDEV", "link");
      },
    };
    const error = await failure(repair(dir, sweepScenario, fs));
    expect(error.message).toMatch(
      new RegExp(`^cannot move ${dir}/\\S+ to ${dir}\\.segscan/\\S+: the two are on different filesystems \\(EXDEV\\)`),
    );
    expect(error.message).toContain(`nothing in ${dir} was changed`);
    expect(snapshot(dir)).toEqual(before);
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES });
    expect(snapshot(dir)).toEqual(before);
    await repair(dir, sweepScenario);
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES });
    expect(snapshot(dir)).toEqual(before);
  });

  it("a preserve dir on another device is refused before anything is written, naming both paths", async () => {
    const { dir } = buildScenario(sweepScenario);
    const fs: RepairFs = {
      ...nodeRepairFs,
      stat: async (filePath) => {
        const stat = await nodeRepairFs.stat(filePath);
        const otherDevice = filePath === `${dir}.segscan` || filePath === dirname(dir);
        return stat && otherDevice ? { ...stat, dev: (stat.dev ?? 0) + 1 } : stat;
      },
    };
    const error = await failure(repair(dir, sweepScenario, fs));
    expect(error.message).toContain(`refusing to repair ${dir}: its preserve dir ${dir}.segscan is (or would be) on another filesystem`);
    expect(error.message).toContain("nothing was changed");
    expect(existsSync(`${dir}.segscan`)).toBe(false);
  });
});

/** Stalled writes a caller may retry before the test calls it a loop (the fixed code retries none). */
const MAX_STALLED_WRITES = 100;

/**
 * nodeRepairFs whose writes to files matching `target` return 0 (no progress)
 * once `afterBytes` were written. A caller that keeps retrying is stopped with
 * an error after MAX_STALLED_WRITES, so the unfixed code fails instead of hanging.
 */
function stallingWrites(target: RegExp, afterBytes = 0): RepairFs {
  return {
    ...nodeRepairFs,
    async open(filePath, mode) {
      const file = await nodeRepairFs.open(filePath, mode);
      if (!target.test(filePath)) return file;
      let written = 0;
      let stalled = 0;
      return {
        ...file,
        async write(buffer, offset, length, position) {
          if (written >= afterBytes) {
            if (++stalled > MAX_STALLED_WRITES) throw new Error(`a write to ${filePath} returned 0 and was retried ${stalled} times`);
            return 0;
          }
          const n = await file.write(buffer, offset, Math.min(length, afterBytes - written), position);
          written += n;
          return n;
        },
      };
    },
  };
}

describe("a write that makes no progress", () => {
  it("writeExactly throws naming the file and the byte position when a write returns 0", async () => {
    const { dir } = buildScenario(garbageTail);
    const target = `${dir}/stalled.bin`;
    const error = await failure(
      withFile(stallingWrites(/stalled\.bin$/, 7), target, "w", (file) => writeExactly(file, new Uint8Array(32), 32, 100)),
    );
    expect(error.message).toBe(`cannot write ${target}: the write at byte 107 wrote 0 of 25 bytes (no progress)`);
    expect(error.path).toBe(target);
    expect(error.position).toBe(107);
  });

  it("a repair whose residue copy stalls fails naming the .residue.tmp; nothing in the partition changed", async () => {
    const { dir } = buildScenario(garbageTail);
    const before = snapshot(dir);
    const error = await failure(repair(dir, garbageTail, stallingWrites(/\.residue\.tmp$/, 1500)));
    expect(error.message).toMatch(/\.residue\.tmp/);
    expect(error.message).toMatch(/no progress/);
    expect(snapshot(dir)).toEqual(before);
  });
});
