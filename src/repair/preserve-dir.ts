/**
 * docs/repair.md §6.2 rule 5: where a target's preserved bytes, journal and lock
 * live — `<realpath(dir)>.segscan`, beside the directory as it is on disk. A
 * partition dir or `metadata/` reached through a symlink (the link itself, or
 * any link above it) keeps its preserve dir beside the real directory, so
 * repair and restore through the link or through the real path find the same
 * journal and lock, and deleting the link orphans nothing.
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";
import { INDEX_SUFFIX, LOG_SUFFIX } from "../format/constants.js";
import { PRESERVE_DIR_SUFFIX } from "../format/journal.js";

export { PRESERVE_DIR_SUFFIX };

export function preserveDirOf(dir: string): string {
  return dir.replace(/[\\/]+$/, "") + PRESERVE_DIR_SUFFIX;
}

/** `<realpath(dir)>.segscan`; a path that does not resolve (it does not exist) keeps its own spelling, resolved. */
export function realPreserveDirOf(dir: string): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    real = path.resolve(dir);
  }
  return preserveDirOf(real);
}

export function indexPathOf(logPath: string): string {
  return logPath.slice(0, logPath.length - LOG_SUFFIX.length) + INDEX_SUFFIX;
}
