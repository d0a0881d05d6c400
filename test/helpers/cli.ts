/**
 * Running the BUILT CLI from tests, a bounded number of processes at a time.
 * The CLI test files use `describe.concurrent` and `Promise.all`, which would
 * otherwise start dozens of Node processes at once on a 2-core machine (a
 * `--version` run then took 11 s waiting for CPU). Each test file gets its own
 * bound (vitest loads this module once per file).
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

/** CLI processes one test file runs at once: one per core of the 2-core CI machine. */
export const MAX_CLI_PROCESSES = 2;

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let running = 0;
/** Highest number of processes this file ever ran at once (tests assert the bound holds). */
let peakRunning = 0;
const waiting: (() => void)[] = [];

export function peakCliProcesses(): number {
  return peakRunning;
}

async function acquireSlot(): Promise<void> {
  if (running >= MAX_CLI_PROCESSES) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  peakRunning = Math.max(peakRunning, running);
}

function releaseSlot(): void {
  running--;
  waiting.shift()?.();
}

/** Spawns once a slot is free; the slot is released when the process has closed. */
export async function spawnBounded(
  command: string,
  args: readonly string[],
  options: SpawnOptions,
): Promise<{ child: ChildProcess; done: Promise<Run> }> {
  await acquireSlot();
  let child: ChildProcess;
  try {
    child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    releaseSlot();
    throw error;
  }
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<Run>((resolve, reject) => {
    let released = false;
    const release = (): void => {
      if (!released) releaseSlot();
      released = true;
    };
    child.on("error", (error) => {
      release();
      reject(error);
    });
    child.on("close", (code, signal) => {
      release();
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/** Starts `segscan <args>` without the caller's colour settings (tests pass their own). */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; done: Promise<Run> }> {
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  return spawnBounded(process.execPath, [CLI, ...args], { env: { ...base, ...env } });
}

export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return (await startCli(args, env)).done;
}
