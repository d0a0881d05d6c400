import { describe, expect, it } from "vitest";
import { bundleSourceIndex, categorize, categoryOf, parseStraceSummary } from "../bench/breakdown.js";

describe("bench breakdown (docs/benchmarks.md)", () => {
  it("puts each sample in one category by its frame, module loading by its stack", () => {
    expect(categoryOf({ functionName: "(garbage collector)", url: "" }, false)).toBe("gc");
    expect(categoryOf({ functionName: "wasm-function[12]", url: "wasm://wasm/abc" }, false)).toBe("wasm");
    expect(categoryOf({ functionName: "readSync", url: "node:fs" }, false)).toBe("syscalls (js side)");
    expect(categoryOf({ functionName: "walk", url: "file:///x/dist/src/recovery/targets.js" }, false)).toBe("discovery");
    expect(categoryOf({ functionName: "(program)", url: "" }, true)).toBe("module load");
    expect(categoryOf({ functionName: "(program)", url: "" }, false)).toBe("v8 (program)");
    expect(categoryOf({ functionName: "compileSourceTextModule", url: "node:internal/modules/esm/utils" }, false)).toBe("module load");
  });

  it("sums self time per category from a profile's samples and time deltas", () => {
    const profile = {
      startTime: 0,
      endTime: 6000,
      nodes: [
        { id: 1, callFrame: { functionName: "(root)", url: "" }, children: [2, 4] },
        { id: 2, callFrame: { functionName: "import", url: "node:internal/modules/esm/loader" }, children: [3] },
        { id: 3, callFrame: { functionName: "(program)", url: "" } },
        { id: 4, callFrame: { functionName: "(garbage collector)", url: "" } },
      ],
      samples: [3, 3, 4],
      timeDeltas: [1000, 2000, 3000],
    };
    const totals = categorize(profile);
    expect(totals.get("module load")).toBe(3);
    expect(totals.get("gc")).toBe(3);
  });

  it("names a frame of the CLI's bundle by the module its line lies in; the bundle's loading is module load", () => {
    const bundleText = ["// x", "// src/recovery/targets.ts", "function walk() {}", "  // src/cli/scan-command.ts", "x();"].join("\n");
    const sourceAt = bundleSourceIndex(bundleText);
    expect([0, 1, 2, 3, 4].map(sourceAt)).toEqual([
      null,
      "src/recovery/targets.ts",
      "src/recovery/targets.ts",
      "src/cli/scan-command.ts",
      "src/cli/scan-command.ts",
    ]);
    const bundle = { path: "/p/dist/segscan-cli.cjs", sourceAt };
    const profile = {
      startTime: 0,
      endTime: 10,
      nodes: [
        { id: 1, callFrame: { functionName: "(root)", url: "" }, children: [2, 3, 5] },
        { id: 2, callFrame: { functionName: "walk", url: "/p/dist/segscan-cli.cjs", lineNumber: 2 } },
        { id: 3, callFrame: { functionName: "loadBundle", url: "file:///p/dist/src/cli/code-cache.js" }, children: [4] },
        { id: 4, callFrame: { functionName: "(program)", url: "" } },
        { id: 5, callFrame: { functionName: "src/cli/scan-command.ts", url: "/p/dist/segscan-cli.cjs", lineNumber: 4 } },
      ],
      samples: [2, 4, 5],
      timeDeltas: [1000, 2000, 4000],
    };
    const totals = categorize(profile, bundle);
    expect(totals.get("discovery")).toBe(1);
    expect(totals.get("module load")).toBe(6);
  });

  it("reads strace -c's table", () => {
    const text = [
      "% time     seconds  usecs/call     calls    errors syscall",
      "------ ----------- ----------- --------- --------- ------------------",
      " 76.31    0.047191         715        66         8 futex",
      "  0.98    0.000606           9        62           mmap",
      "------ ----------- ----------- --------- --------- ------------------",
      "100.00    0.061843          93       662        33 total",
    ].join("\n");
    expect(parseStraceSummary(text)).toEqual([
      { name: "futex", calls: 66, seconds: 0.047191 },
      { name: "mmap", calls: 62, seconds: 0.000606 },
      { name: "total", calls: 662, seconds: 0.061843 },
    ]);
  });
});
