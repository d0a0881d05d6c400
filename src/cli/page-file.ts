/**
 * Writing an HTML page the CLI drew (`scan --html`, `report --html`,
 * `fleet --html`): next to its destination first, then renamed into place, so a
 * failed write never leaves a half-written page under the requested name; `-`
 * writes it to stdout.
 */
import { rename, rm, writeFile } from "node:fs/promises";
import { out } from "./context.js";
import { OperationalError } from "./exit.js";

/** `--html -`: the page goes to stdout. */
export const PAGE_TO_STDOUT = "-";

/** Writes `html` to `path` (or stdout for `-`); an OperationalError names the page (`what`) and the cause. */
export async function writePageFile(path: string, html: string, what: string): Promise<void> {
  if (path === PAGE_TO_STDOUT) {
    await out(html);
    return;
  }
  const staging = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(staging, html);
    await rename(staging, path);
  } catch (error) {
    await rm(staging, { force: true }).catch(() => undefined);
    throw new OperationalError(
      `cannot write ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; ` +
        "no page was written and nothing else was changed",
    );
  }
}
