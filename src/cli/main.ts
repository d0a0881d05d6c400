#!/usr/bin/env node
/** The `segscan` executable (docs/interfaces.md §9.2). */
import { run } from "./program.js";

// A closed pipe (`segscan dump x.log | head`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await run(process.argv);
