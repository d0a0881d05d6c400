/**
 * The two files a scrub run writes, checked together before the first pass
 * (docs/scrub.md §3.1): each by the rules of src/scrub/output-file.ts, and
 * never the same file twice (the metrics would replace the state, or the
 * reverse, at every pass).
 */
import { resolve } from "node:path";
import { isScrubMetricsHead } from "./metrics.js";
import { OutputFileError, checkOutputPath, protectedTrees, resolveOutputPath } from "./output-file.js";
import { isScrubStateHead } from "./state.js";

/** Which output a problem is about: `--state` or `--metrics`. */
export type ScrubOutput = "state" | "metrics";

/** An output path that may not be written, and which one it is; nothing was written. */
export class ScrubOutputError extends OutputFileError {
  override readonly name = "ScrubOutputError";
  constructor(
    readonly output: ScrubOutput,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface ScrubOutputs {
  /** The state file, every symlink resolved: the path the scrub reads and replaces. */
  statePath: string;
  /** The metrics file, resolved likewise, or null when none was asked for. */
  metricsPath: string | null;
}

/**
 * Resolves and checks the state file (`statePath`, given or default) and the
 * metrics file (`metricsPath`, or none) a scrub of `root` would write;
 * throws ScrubOutputError naming the one that may not be. Reads at most the
 * first bytes of each existing file; creates and writes nothing.
 */
export async function checkScrubOutputs(root: string, statePath: string, metricsPath: string | null): Promise<ScrubOutputs> {
  const trees = await protectedTrees(root);
  const checked = async (output: ScrubOutput, check: Parameters<typeof checkOutputPath>[0]): Promise<string> => {
    try {
      return await checkOutputPath(check, trees);
    } catch (error) {
      if (error instanceof OutputFileError) throw new ScrubOutputError(output, error.message, { cause: error });
      throw error;
    }
  };
  // The same file under two names is told first: else the second check would only say it is not a metrics file.
  if (metricsPath !== null) {
    const [stateResolved, metricsResolved] = await Promise.all([
      resolveOutputPath(statePath, "state file").catch(() => null),
      resolveOutputPath(metricsPath, "metrics file").catch(() => null),
    ]);
    if (stateResolved !== null && stateResolved === metricsResolved) {
      // Named alike, no link between them: the resolved path would only repeat the name.
      const plain = resolve(statePath) === stateResolved && resolve(metricsPath) === stateResolved;
      throw new ScrubOutputError(
        "metrics",
        `the metrics file ${metricsPath} is the state file ${statePath}${plain ? "" : ` (both are ${stateResolved})`}: ` +
          "each pass would replace one with the other; give two different files",
      );
    }
  }
  const state = await checked("state", { path: statePath, what: "state file", recognise: isScrubStateHead });
  if (metricsPath === null) return { statePath: state, metricsPath: null };
  const metrics = await checked("metrics", { path: metricsPath, what: "metrics file", recognise: isScrubMetricsHead });
  return { statePath: state, metricsPath: metrics };
}
