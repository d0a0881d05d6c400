/** What every command shares: colour decision, engine choice, cancellation, output helpers. */
import type { Engine, EngineKind } from "../engine/index.js";
import { escapeControlKeepingLines } from "../report/terminal-safe.js";
import { OperationalError } from "./exit.js";

/**
 * Colour only on a TTY, never when NO_COLOR is set to anything non-empty
 * (no-color.org), never on TERM=dumb; FORCE_COLOR (not "0") forces it on.
 */
export function colorEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

/** A warning on stderr; names in it are shown terminal-safe (their control characters escaped). */
export function warn(message: string): void {
  process.stderr.write(`segscan: ${escapeControlKeepingLines(message)}\n`);
}

/**
 * The engine for a command. The default (wasm) falls back to the TypeScript
 * engine with a warning when the wasm module cannot be loaded (createEngine
 * does that, for the library too); an engine the operator asked for
 * explicitly must load or the command fails (exit 8).
 */
export async function resolveEngine(kind: EngineKind, explicit: boolean): Promise<Engine> {
  try {
    const { createEngine } = await import("../engine/index.js");
    return await createEngine(explicit || kind !== "wasm" ? kind : undefined, {
      onWarning: (message) => process.stderr.write(`${message}\n`),
    });
  } catch (error) {
    throw new OperationalError(`cannot load the ${kind} engine: ${(error as Error).message}`);
  }
}

/**
 * Runs `body` with an AbortSignal that SIGINT/SIGTERM abort. A second signal
 * while the first is being honoured exits at once with 32.
 */
export async function withCancellation<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      process.stderr.write("\nsegscan: cancelled again; exiting now\n");
      process.exit(32);
    }
    const error = new Error(`cancelled by ${signal}; nothing was changed`);
    error.name = "AbortError";
    controller.abort(error);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await body(controller.signal);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** Writes to stdout and resolves once the data is handed to the OS (so exit codes never cut output short). */
export function out(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (text.length === 0) {
      resolve();
      return;
    }
    process.stdout.write(text, () => resolve());
  });
}
