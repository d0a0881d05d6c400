/**
 * A closed stdout never turns a verdict into exit 0 (docs/interfaces.md §9.2
 * "Exit status"): `segscan scan <refused partition> | head -1` exits with the
 * verdict's code. Real pipes through the BUILT CLI: the reading end is closed
 * before the CLI writes (every write then fails with EPIPE), or after its first
 * chunk, as `head -1` does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateDataDir } from "../src/gen/index.js";
import { type Run, startCli } from "./helpers/cli.js";

let root: string;
let refusedPartition: string;
let refusedDir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-cli-pipe-"));
  const sample = await generateDataDir(join(root, "refused"), { size: "tiny", seed: 3, scenario: "payload-bitflip" });
  refusedDir = sample.dir;
  refusedPartition = join(sample.dir, "streams", "1", "topics", "1", "partitions", "1");
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs the CLI and closes the reading end of its stdout: at once, or after the first chunk (`head -1`). */
async function runClosingStdout(args: readonly string[], when: "at-once" | "after-first-chunk"): Promise<Run & { read: string }> {
  const { child, done } = await startCli(args);
  let read = "";
  const stdout = child.stdout!;
  if (when === "at-once") {
    stdout.destroy();
  } else {
    stdout.once("data", (chunk: string) => {
      read += chunk;
      stdout.destroy();
    });
  }
  return { ...(await done), read };
}

describe.concurrent("a closed stdout keeps the verdict's exit status", () => {
  for (const when of ["at-once", "after-first-chunk"] as const) {
    it(`scan of a refused partition, reader gone ${when}: exit 4, never 0`, async () => {
      const run = await runClosingStdout(["scan", refusedPartition, "--no-progress"], when);
      expect(run.signal).toBeNull();
      expect(run.code).toBe(4);
      expect(run.stderr).not.toMatch(/EPIPE|Error/);
    });

    it(`scan --ndjson of a data dir with a refused partition, reader gone ${when}: exit 4`, async () => {
      const run = await runClosingStdout(["scan", refusedDir, "--ndjson", "--no-progress"], when);
      expect(run.code).toBe(4);
    });

    it(`scan --json of a missing path, reader gone ${when}: exit 8`, async () => {
      const run = await runClosingStdout(["scan", join(root, "no-such-dir"), "--json", "--no-progress"], when);
      expect(run.code).toBe(8);
    });
  }

  it("the first line read through the pipe is the verdict", async () => {
    const run = await runClosingStdout(["scan", refusedPartition, "--no-progress"], "after-first-chunk");
    expect(run.code).toBe(4);
    expect(run.read.split("\n")[0]).toBe("verdict REFUSED");
  });
});
