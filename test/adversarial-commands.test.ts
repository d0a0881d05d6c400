/**
 * The next steps segscan prints can be pasted as they are (docs/interfaces.md
 * §9.2): a data dir whose relative name begins with `-` (scanned as
 * `segscan scan -- -data`) gets `./` in the printed commands, so bash hands
 * the command a path, not an option. Through the BUILT CLI; the printed
 * command runs in bash with `segscan` defined as the built CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli, spawnBounded } from "./helpers/cli.js";

let root: string;
/** The data dir's name, relative to root: it begins with a dash and holds a quote, a space and a newline. */
const NAME = "-data b'c\nd";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-adv-commands-"));
  expect((await runCli(["gen", join(root, NAME), "--size", "tiny", "--scenario", "torn-tail"])).code).toBe(0);
}, 120_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs `command` (a printed shell line) in bash in `root`, with `segscan` the built CLI. */
function runPasted(command: string): { status: number | null; stdout: string; stderr: string } {
  const script = `segscan() { "$SEGSCAN_NODE" "$SEGSCAN_CLI" "$@"; }\n${command}\n`;
  const run = spawnSync("bash", ["-c", script], {
    cwd: root,
    env: { ...process.env, SEGSCAN_NODE: process.execPath, SEGSCAN_CLI: CLI },
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("a relative path beginning with '-'", () => {
  it("scan -- <-dir>: the printed repair command, pasted into bash, shows the plan (never 'unknown option')", async () => {
    const { done } = await spawnBounded(process.execPath, [CLI, "scan", "--no-progress", "--", NAME], { cwd: root });
    const scan = await done;
    expect(scan.code).toBe(4);
    const line = scan.stdout.split("→ repairs to make: ")[1];
    expect(line).toBeDefined();
    const command = line!.split(" shows the plan")[0]!;
    expect(command).toMatch(/^segscan repair \$?'\.\/-data/);
    const pasted = runPasted(command);
    expect(pasted.stderr).not.toMatch(/unknown option/);
    expect(pasted.status).not.toBe(16);
    expect(pasted.stdout).toMatch(/plan/i);
  });
});
