/**
 * `repair --apply` and `restore` through the BUILT CLI (dist/src/cli/main.js)
 * and their cancellation messages (docs/repair.md §6.2): what a cancel says was done, Ctrl-C during restore, restore
 * of a data dir and of a `.segscan` dir, a lone .log of a refused partition
 * (dry run and --apply), a corrupt journal.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes as cryptoRandomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { readdir, readlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { rescanRepaired } from "../src/cli/commands.js";
import { applyRepair, nodeRepairFs, planRepair, restore } from "../src/repair/index.js";
import type { ApplyResult, RepairFs } from "../src/repair/index.js";
import { buildChain, concat, indexAt, randomBytes, tempDataDir, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { CHUNK_BYTES, REPAIRABLE, engine, repair, scan, snapshot } from "./helpers/repair-scenarios.js";

const CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
const garbageTail = REPAIRABLE.find((s) => s.name === "non-zero garbage tail")!;
const sweepScenario = REPAIRABLE.find((s) => s.name === "staging and orphan index sweep")!;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function startCli(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<Run>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

const runCli = (args: string[]): Promise<Run> => startCli(args).done;

/** The error `promise` rejects with (a resolve fails the test). */
const rejection = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error as Error,
  );

/** Resolves once the child has `file` open (Linux: /proc/<pid>/fd). */
async function hasOpen(pid: number, file: string): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")) === file) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`pid ${pid} never opened ${file}`);
}

/** Two repaired partitions of one data dir, with their bytes before the repair. */
async function repairedDataDir(): Promise<{ data: string; dirs: string[]; before: Record<string, string>[] }> {
  const data = tempDataDir();
  const dirs = [tempPartition(1, data), tempPartition(2, data)];
  for (const [i, dir] of dirs.entries()) (i === 0 ? garbageTail : sweepScenario).build(dir);
  const before = dirs.map((dir) => snapshot(dir));
  await repair(dirs[0]!, garbageTail);
  await repair(dirs[1]!, sweepScenario);
  return { data, dirs, before };
}

describe("cancellation says what was done (17.4)", () => {
  it("Ctrl-C during the re-scan after --apply names the repaired targets and journals, not 'nothing was changed'", async () => {
    const result = {
      targets: [
        { path: "/d/p1", journalPath: "/d/p1.segscan/journal.jsonl" },
        { path: "/d/p2", journalPath: "/d/p2.segscan/journal.jsonl" },
      ],
    } as unknown as ApplyResult;
    const abort = Object.assign(new Error("cancelled by SIGINT; nothing was changed"), { name: "AbortError" });
    const error = await rejection(
      rescanRepaired(result, ["/d/p1", "/d/p2"], async () => {
        throw abort;
      }),
    );
    expect(error.name).toBe("AbortError");
    expect(error.message).not.toContain("nothing was changed");
    expect(error.message).toContain("every repair step completed and is in the journal");
    expect(error.message).toContain("/d/p1 (journal /d/p1.segscan/journal.jsonl), /d/p2 (journal /d/p2.segscan/journal.jsonl)");
    expect(error.message).toContain("`segscan scan /d/p1 /d/p2` shows the state");
  });

  it("a cancel mid-apply says the partition is part-way repaired and its journal has every completed step", async () => {
    const scenario = REPAIRABLE.find((s) => s.name.startsWith("three segments"))!;
    const dir = tempPartition();
    scenario.build(dir);
    const controller = new AbortController();
    // The cancel arrives right after the log is cut: the next step boundary (before the index steps) stops.
    const fs: RepairFs = {
      ...nodeRepairFs,
      async open(filePath, mode) {
        const file = await nodeRepairFs.open(filePath, mode);
        return {
          ...file,
          truncate: async (size) => {
            await file.truncate(size);
            if (filePath.endsWith(".log")) controller.abort(Object.assign(new Error("SIGINT"), { name: "AbortError" }));
          },
        };
      },
    };
    const plan = await planRepair(await scan(dir, scenario));
    const error = await rejection(applyRepair(plan, { engine, fs, signal: controller.signal, checkWriters: false }));
    expect(error.name).toBe("AbortError");
    expect(error.message).toContain(`cancelled while applying: ${dir} is part-way repaired: done: `);
    expect(error.message).toContain(`; cut ${dir}/`);
    expect(error.message).toContain("2 steps not done; ");
    expect(error.message).toContain(`the journal ${dir}.segscan/journal.jsonl records every step begun`);
    expect(error.message).toContain(`undo what was done with \`segscan restore ${dir}\``);
    expect(error.message).toContain("`segscan scan` shows the state");
  });

  it("a cancelled restore (17.10) says how far it got; restore again finishes", async () => {
    const dir = tempPartition();
    garbageTail.build(dir);
    const before = snapshot(dir);
    await repair(dir, garbageTail);
    const controller = new AbortController();
    controller.abort(Object.assign(new Error("cancelled by SIGINT; nothing was changed"), { name: "AbortError" }));
    const error = await rejection(restore(dir, { engine, chunkBytes: CHUNK_BYTES, signal: controller.signal, checkWriters: false }));
    expect(error.name).toBe("AbortError");
    expect(error.message).toBe(
      `restore cancelled: no step was undone, so ${dir} is as the repair left it; \`segscan scan ${dir}\` shows the state`,
    );
    await restore(dir, { engine, chunkBytes: CHUNK_BYTES, checkWriters: false });
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("restore targets (17.10)", () => {
  it.skipIf(process.platform !== "linux")(
    "SIGINT during restore exits 32 with a message saying how far it got; restore again returns every byte",
    async () => {
      const data = tempDataDir();
      onTestFinished(() => rmSync(data, { recursive: true, force: true })); // 64 MiB: not left in the temp dir
      const dir = tempPartition(1, data);
      const chain = buildChain({ counts: [3, 2], seed: 51 });
      // A 32 MiB non-zero residue: restore hashes it, re-appends it and hashes it again, long enough to be interrupted.
      const { logPath } = writeSegment(
        dir,
        0n,
        concat([chain.log, new Uint8Array(cryptoRandomBytes(32 * 1024 * 1024))]),
        indexAt(chain, [0, 1]),
      );
      const digest = (): string => createHash("sha256").update(readFileSync(logPath)).digest("hex");
      const before = digest();
      const repaired = await runCli(["repair", dir, "--apply", "--no-progress"]);
      expect(repaired.code, repaired.stderr).toBe(1);
      const residue = join(`${dir}.segscan`, `${basename(logPath)}.${chain.log.length}.residue`);
      const { child, done } = startCli(["restore", dir]);
      await hasOpen(child.pid!, residue); // restore is checking the residue: its signal handler is installed
      child.kill("SIGINT");
      const run = await done;
      expect(run.signal).toBeNull();
      expect(run.code, run.stderr).toBe(32);
      expect(run.stderr).toContain("restore cancelled: ");
      expect(run.stderr).toContain(`\`segscan scan ${dir}\` shows the state`);
      const again = await runCli(["restore", dir]);
      expect(again.code, again.stderr).toBe(0);
      expect(digest()).toBe(before);
    },
  );

  it("restore <data dir> restores every partition below it that has a journal", async () => {
    const { data, dirs, before } = await repairedDataDir();
    const run = await runCli(["restore", data]);
    expect(run.code, run.stderr).toBe(0);
    for (const [i, dir] of dirs.entries()) {
      expect(run.stdout).toContain(`restored ${dir}:`);
      expect(snapshot(dir)).toEqual(before[i]);
    }
    const again = await runCli(["restore", data]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to restore");
  });

  it("restore <partition>.segscan restores that partition", async () => {
    const { dirs, before } = await repairedDataDir();
    const run = await runCli(["restore", `${dirs[1]}.segscan`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`restored ${dirs[1]}:`);
    expect(snapshot(dirs[1]!)).toEqual(before[1]);
    expect(snapshot(dirs[0]!)).not.toEqual(before[0]); // the other partition is left repaired
  });

  it("a corrupt journal line: exit 8 naming the journal and the line; the journal stays (17.1)", async () => {
    const { dirs } = await repairedDataDir();
    const journal = join(`${dirs[0]}.segscan`, "journal.jsonl");
    const lines = readFileSync(journal, "utf8").split("\n");
    lines[2] = "GARBAGE";
    writeFileSync(journal, lines.join("\n"));
    const run = await runCli(["restore", dirs[0]!]);
    expect(run.code).toBe(8);
    expect(run.stderr).toContain(`journal ${journal} line 3 is not a journal record`);
    expect(readFileSync(journal, "utf8")).toBe(lines.join("\n"));
  });
});

describe("repair of a lone .log (17.2)", () => {
  it("a .log of a partition refused as a whole: exit 4, says why, nothing cut", async () => {
    const dir = tempPartition();
    const a = buildChain({ counts: [3, 2], seed: 41 });
    const b = buildChain({ counts: [2, 2], seed: 42, startOffset: a.nextOffset + 100n });
    const { logPath } = writeSegment(dir, 0n, concat([a.log, randomBytes(500, 4)]), indexAt(a, [0]));
    writeSegment(dir, b.batches[0]!.baseOffset, b.log, indexAt(b, [0]));
    const before = snapshot(dir);
    for (const args of [
      ["repair", logPath, "--no-progress"],
      ["repair", logPath, "--apply", "--no-progress"],
    ]) {
      const run = await runCli(args);
      expect(run.code, args.join(" ")).toBe(4);
      expect(run.stderr).toContain(`refusing to repair ${logPath} alone: its partition ${dir} is refused as a whole`);
    }
    expect(snapshot(dir)).toEqual(before);
  });
});
