import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Builds dist/ when stale and gives the run a temp dir it removes (see the file).
    globalSetup: ["test/setup/global.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // 2-core machine: two forks keep memory and contention predictable.
    pool: "forks",
    maxWorkers: 2,
  },
});
