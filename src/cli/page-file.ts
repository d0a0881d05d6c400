/**
 * Writing an HTML page the CLI drew (`scan --html`, `report --html`,
 * `fleet --html`): `-` writes it to stdout; a file gets the rules scrub's own
 * outputs follow (docs/scrub.md §3.1, src/scrub/output-file.ts), so a page
 * never replaces what segscan was asked only to read. The path is resolved
 * through every symlink; it must lie outside the trees the command read (for
 * `scan`: each path scanned and the node root holding it), be a regular file
 * or nothing yet, and, when it exists, be a page (it begins `<!doctype html>`,
 * as every page segscan draws does): a segment, a WAL, a report or a device
 * named by mistake is refused, never replaced. The page is written to a temp
 * file beside it, fsynced and renamed into place, so a failed write never
 * leaves a half-written page under the requested name.
 */
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { out } from "./context.js";
import { OperationalError, UsageError } from "./exit.js";
import { OutputFileError, checkOutputPath, protectedTrees, writeOwnFileAtomic } from "../scrub/output-file.js";

/** `--html -`: the page goes to stdout. */
export const PAGE_TO_STDOUT = "-";

/** What the refusals call the file. */
const WHAT = "page";

/** segscan's pages (src/report/html, src/fleet/html) begin so; an existing file that does not is not one of them. */
const isPage = (head: string): boolean => /^<!doctype html>/i.test(head);

/** The trees a command read from `reads` (the paths it scanned): a page is never written inside them. */
async function treesOf(reads: readonly string[]): Promise<string[]> {
  const trees: string[] = [];
  for (const read of reads) trees.push(...(await protectedTrees(read)));
  return trees;
}

/**
 * Checks, before any work, that `path` may take a page (see the file comment);
 * a path that may not is a usage error naming why. `-` always may.
 */
export async function checkPagePath(path: string, reads: readonly string[] = [], nothing = "nothing was read or written"): Promise<void> {
  if (path === PAGE_TO_STDOUT) return;
  try {
    await checkOutputPath({ path, what: WHAT, recognise: isPage, reader: "the scan" }, await treesOf(reads));
  } catch (error) {
    if (error instanceof OutputFileError) throw new UsageError(`--html: ${error.message}; ${nothing}`);
    throw error;
  }
}

/**
 * Writes `html` to `path` (or stdout for `-`), checked again as checkPagePath
 * checks it; an OperationalError names the page (`what`) and the cause.
 */
export async function writePageFile(path: string, html: string, what: string, reads: readonly string[] = []): Promise<void> {
  if (path === PAGE_TO_STDOUT) {
    await out(html);
    return;
  }
  try {
    const resolved = await checkOutputPath({ path, what: WHAT, recognise: isPage, reader: "the scan" }, await treesOf(reads));
    // A page never creates directories (a mistyped path is said, not made): a missing parent fails with ENOENT.
    await stat(dirname(resolved));
    await writeOwnFileAtomic(resolved, html, WHAT, isPage);
  } catch (error) {
    const cause = error instanceof OutputFileError ? error.message : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
    throw new OperationalError(`cannot write ${what} ${path}: ${cause}; no page was written and nothing else was changed`);
  }
}
