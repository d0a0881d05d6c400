/** What to scan: partitions discovered under a path (SPEC §9.2), or one `.log`. */
import { join } from "node:path";
import { LOG_SUFFIX } from "../format/constants.js";
import type { ScanFs } from "../io/fs.js";

/** Directories segscan itself creates beside a partition: never scanned as partitions. */
const OWN_DIRECTORY_PATTERN = /\.(segscan|fenced\.\d+)$/;

export interface ScanTarget {
  /** A partition directory, or one `.log` file scanned as a partition of one segment. */
  path: string;
  singleLog: boolean;
}

/**
 * Partitions under `path`: directories holding `.log` files, in path order.
 * A `.log` path is a target of its own.
 */
export async function discoverTargets(path: string, scanFs: ScanFs): Promise<ScanTarget[]> {
  const info = await scanFs.stat(path);
  if (info.isFile) {
    if (!path.endsWith(LOG_SUFFIX)) throw new TypeError(`${path} is not a .log file, a partition directory or a data directory`);
    return [{ path, singleLog: true }];
  }
  const found: ScanTarget[] = [];
  const visit = async (directory: string): Promise<void> => {
    const entries = await scanFs.list(directory);
    if (entries.some((entry) => entry.isFile && entry.name.endsWith(LOG_SUFFIX))) found.push({ path: directory, singleLog: false });
    const children = entries.filter((entry) => entry.isDirectory && !OWN_DIRECTORY_PATTERN.test(entry.name)).map((entry) => entry.name);
    for (const child of children) await visit(join(directory, child));
  };
  await visit(path);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
