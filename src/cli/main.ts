#!/usr/bin/env node
/** The `segscan` executable (docs/interfaces.md §9.2). */

// `segscan --version` alone answers from package.json without loading the
// program (issue 23: start-up loads nothing before it is needed).
if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V")) {
  const { SEGSCAN_VERSION } = await import("../version.js");
  process.stdout.write(`${SEGSCAN_VERSION}\n`);
} else {
  // A closed pipe (`segscan dump x.log | head`) is not an error worth a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
  const { run } = await import("./program.js");
  process.exitCode = await run(process.argv);
}
