/**
 * Data for the metadata-WAL bench rows (docs/benchmarks.md, docs/node.md N1):
 * a WAL of chained, sealed 64 KiB prepares to verify, and a short WAL followed
 * by a random tail to probe (no verified entry in it: a torn tail). Written once
 * per size into the bench cache.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { nodeBlockingScanFs } from "../src/io/fs.js";
import type { Engine } from "../src/engine/types.js";
import { PROBE_BUDGET_UNITS } from "../src/format/constants.js";
import { buildWal, encodePrepare } from "../src/gen/node/wal.js";
import { scanWal, type WalScan } from "../src/node/wal/scan.js";
import { ByteSource, cacheRoot } from "./data.js";

/** One verify entry: large enough that the walk is hash-bound, as a 64 MiB WAL of big prepares is. */
const VERIFY_ENTRY_BYTES = 64 * 1024;
const WAL_DATA_VERSION = "wal-v1";

export interface WalDataSet {
  path: string;
  bytes: number;
}

function writeOnce(name: string, produce: (write: (chunk: Uint8Array) => void) => void): WalDataSet {
  const dir = join(cacheRoot(), WAL_DATA_VERSION);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  if (!existsSync(path)) {
    const tmp = `${path}.tmp`;
    const fd = openSync(tmp, "w");
    try {
      produce((chunk) => {
        writeSync(fd, chunk);
      });
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  }
  return { path, bytes: statSync(path).size };
}

/** `totalBytes` of chained sealed prepares, `VERIFY_ENTRY_BYTES` each. */
export function walVerifyData(totalBytes: number): WalDataSet {
  return writeOnce(`verify-${totalBytes}.wal`, (write) => {
    const source = new ByteSource(11);
    let parent = 0n;
    for (let op = 1n; op <= BigInt(Math.max(1, Math.floor(totalBytes / VERIFY_ENTRY_BYTES))); op++) {
      const body = source.fill(new Uint8Array(VERIFY_ENTRY_BYTES - 256));
      const entry = encodePrepare({ op, parent, operation: 128, body });
      write(entry.bytes);
      parent = entry.checksum;
    }
  });
}

/** Eight sealed entries, then `tailBytes` of random bytes: the probe must rule out every candidate. */
export function walProbeData(tailBytes: number): WalDataSet {
  return writeOnce(`probe-${tailBytes}.wal`, (write) => {
    const source = new ByteSource(13);
    write(buildWal({ firstOp: 1n, count: 8, random: () => source.next() / 2 ** 32 }).bytes);
    const chunk = new Uint8Array(1024 * 1024);
    for (let done = 0; done < tailBytes; done += chunk.length)
      write(source.fill(chunk).subarray(0, Math.min(chunk.length, tailBytes - done)));
  });
}

export function scanWalFile(set: WalDataSet, engine: Engine): Promise<WalScan> {
  return scanWal(set.path, set.bytes, {
    engine,
    scanFs: nodeBlockingScanFs,
    windowBytes: 1024 * 1024,
    probeBudgetUnits: PROBE_BUDGET_UNITS,
    snapshotOp: 0n,
    superblockCluster: null,
  });
}

/** What each data set must give; a different answer is reported as a WARNING note. */
export function walProblem(kind: "verify" | "probe", scan: WalScan): string | null {
  const codes = scan.report.findings.map((finding) => finding.code);
  if (kind === "verify")
    return codes.length === 0 && scan.report.walkedSize === scan.report.size ? null : `verify: ${codes.join(",") || "short walk"}`;
  return codes.length === 1 && codes[0] === "WalTornTail" ? null : `probe: ${codes.join(",")}`;
}
