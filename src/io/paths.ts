/**
 * Paths the scan builds per file: `join` normalizes its whole result
 * character by character, which made it the largest allocation of a scan of
 * many small partitions (docs/benchmarks.md: 12 KiB of strings per partition). Every
 * directory the scan builds on is already absolute and normalized (resolved,
 * real, or built here), and every name is one listed entry or a constant, so
 * concatenation gives exactly what `join` would.
 */
import { sep } from "node:path";

/**
 * `join(directory, name)` for a normalized `directory` and a single path
 * component `name` (no separator, not `.` or `..`): a directory entry's name.
 */
export function childPath(directory: string, name: string): string {
  return directory.endsWith(sep) ? directory + name : directory + sep + name;
}
