#!/usr/bin/env node
/** The `segscan` executable (docs/interfaces.md §9.2). */
import { fileURLToPath } from "node:url";

// `segscan --version` alone answers from package.json without loading the
// program (docs/benchmarks.md: start-up loads nothing before it is needed).
if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V")) {
  const { SEGSCAN_VERSION } = await import("../version.js");
  process.stdout.write(`${SEGSCAN_VERSION}\n`);
} else {
  // Memory flat in the partition count (docs/benchmarks.md): over a long scan V8 grew its young generation from 1 to 16 MiB
  // per semi-space and let the old generation fill with promoted garbage up to several times the live heap before
  // collecting it, 40 MiB of peak RSS over 50,000 partitions for a scan that keeps 2 MiB. Both are read at each
  // heap-sizing decision, so setting them now takes effect; neither costs measurable CPU (bench/scale.ts).
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--heap-growing-percent=50");
  // A closed pipe (`segscan scan x | head -1`) is not an error worth a stack trace, and never a reason to exit 0:
  // the verdict is not known yet when the reader goes away. Node ignores SIGPIPE, so the process cannot die by it
  // as grep does; instead what is still to be written is dropped and the command runs to its end, so the exit
  // status is the verdict's (docs/interfaces.md §9.2 "Exit status").
  // Any other failed write (ENOSPC, EIO: `segscan scan x > file` on a full disk) loses output the reader wanted: it
  // is said on stderr and adds the operational bit (8) to the verdict's code. An uncaught throw would exit 1, which
  // in segscan says "repairs were applied and scan clean now".
  let stdoutFailure: NodeJS.ErrnoException | null = null;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") stdoutFailure ??= error;
    dropStdout();
  });
  // The program runs from its bundle, compiled from V8's code cache when one is kept (docs/benchmarks.md "Cold code");
  // without a bundle (a `tsc`-only build, Deno, an older Node) from the compiled modules. The flags above are set
  // first: V8 accepts cached code only under the flags it was made with.
  const { loadBundle } = await import("./code-cache.js");
  // The bundle's `import(variable)` (the bench suite) goes through this module's own import: a script restored from
  // the code cache has no dynamic-import callback of its own on Node 20 (scripts/bundle.mjs).
  (globalThis as { __segscanDynamicImport?: (url: string) => Promise<unknown> }).__segscanDynamicImport = (url) => import(url);
  const bundle = loadBundle(fileURLToPath(new URL("../../segscan-cli.cjs", import.meta.url)), process.argv);
  const run = (bundle?.exports.run as typeof import("./program.js").run | undefined) ?? (await import("./program.js")).run;
  const code = await run(process.argv);
  bundle?.save();
  if (stdoutFailure !== null) {
    const { EXIT } = await import("./exit.js");
    const failure: NodeJS.ErrnoException = stdoutFailure;
    process.stderr.write(
      `segscan: cannot write to stdout (${failure.code ?? failure.message}): the output is incomplete; the exit status has the operational bit (${EXIT.OPERATIONAL})\n`,
    );
    process.exitCode = code | EXIT.OPERATIONAL;
  } else {
    process.exitCode = code;
  }
}

/** After EPIPE: every later write to stdout is dropped and reported done, so a command awaiting its output goes on. */
function dropStdout(): void {
  const drop = (...args: unknown[]): boolean => {
    const callback = args[args.length - 1];
    if (typeof callback === "function") queueMicrotask(() => (callback as (error?: Error | null) => void)(null));
    return true;
  };
  process.stdout.write = drop as typeof process.stdout.write;
}
