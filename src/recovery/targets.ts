/** What to scan: partitions discovered under a path (SPEC §9.2), or one `.log`. */
import { basename, dirname, join } from "node:path";
import { INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import type { ScanFs } from "../io/fs.js";
import { parseSegmentStem } from "./partition.js";
import type { SegmentFiles } from "./segment.js";

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

/** One `.log` scanned alone: its `.index` beside it, its start offset from its name. */
export async function singleLogFiles(logPath: string, scanFs: ScanFs): Promise<SegmentFiles> {
  const stem = basename(logPath).slice(0, -LOG_SUFFIX.length);
  const indexPath = join(dirname(logPath), stem + INDEX_SUFFIX);
  const indexSize = await scanFs.stat(indexPath).then((info) => info.size, () => 0);
  const startOffset = parseSegmentStem(stem);
  if (startOffset === null) throw new TypeError(`${logPath}: a segment's name must be its start offset, a decimal u64`);
  return {
    startOffset,
    logPath,
    indexPath,
    logSize: (await scanFs.stat(logPath)).size,
    indexSize,
  };
}
