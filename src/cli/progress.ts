/**
 * The scan progress bar: cli-progress on stderr, only when stderr is a TTY and
 * the operator did not ask for --no-progress or --json, and only once a scan has
 * run for PROGRESS_DELAY_MS (a quick scan prints no bar at all). It shows bytes
 * read of the total, the rate, the ETA and the partition being read.
 */
import cliProgress from "cli-progress";
import type { ProgressEvent } from "../recovery/options.js";
import { formatBytes } from "../report/format.js";

export const PROGRESS_DELAY_MS = 500;

export interface ProgressReporter {
  onProgress: ((event: ProgressEvent) => void) | undefined;
  stop(): void;
}

const NO_PROGRESS: ProgressReporter = { onProgress: undefined, stop() {} };

export function progressWanted(stream: NodeJS.WriteStream, flags: { progress: boolean; json?: boolean }): boolean {
  return stream.isTTY === true && flags.progress && flags.json !== true;
}

/** Remaining time at the mean rate so far: "42s", "3m07s", "1h02m"; "-" until there is a rate. */
export function etaText(remainingBytes: number, bytesPerSecond: number): string {
  if (remainingBytes <= 0) return "0s";
  if (!(bytesPerSecond > 0)) return "-";
  const seconds = Math.ceil(remainingBytes / bytesPerSecond);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * `estimates`: partition path → bytes expected (from a stat pass), so the total
 * and ETA are right before each partition reports its own total.
 */
export function startProgress(
  stream: NodeJS.WriteStream, enabled: boolean, estimates: ReadonlyMap<string, number> = new Map(),
): ProgressReporter {
  if (!enabled) return NO_PROGRESS;
  const seen = new Map<string, { done: number; total: number }>();
  const startedAt = Date.now();
  let current = "";
  let bar: cliProgress.SingleBar | null = null;
  let stopped = false;

  const totals = (): { done: number; total: number } => {
    let done = 0;
    let total = 0;
    for (const [path, estimate] of estimates) {
      const entry = seen.get(path);
      total += entry ? entry.total : estimate;
    }
    for (const [path, entry] of seen) {
      done += entry.done;
      if (!estimates.has(path)) total += entry.total;
    }
    return { done: Math.min(done, total), total };
  };

  const payload = (done: number, total: number): Record<string, string> => {
    const seconds = Math.max(0.001, (Date.now() - startedAt) / 1000);
    const rate = done / seconds;
    const tail = current.split("/").slice(-5).join("/");
    return {
      doneText: formatBytes(done), totalText: formatBytes(total),
      rateText: `${formatBytes(rate)}/s`, etaText: etaText(total - done, rate), partition: tail,
    };
  };

  const render = (): void => {
    if (bar === null) return;
    const { done, total } = totals();
    bar.setTotal(Math.max(total, 1));
    bar.update(done, payload(done, total));
  };

  const timer = setTimeout(() => {
    if (stopped) return;
    bar = new cliProgress.SingleBar({
      stream,
      format: "scanning {bar} {percentage}% · {doneText} of {totalText} · {rateText} · ETA {etaText} · {partition}",
      barCompleteChar: "█",
      barIncompleteChar: "░",
      barsize: 24,
      hideCursor: true,
      clearOnComplete: true,
      fps: 8,
    });
    const { done, total } = totals();
    bar.start(Math.max(total, 1), done, payload(done, total));
  }, PROGRESS_DELAY_MS);
  timer.unref();

  return {
    onProgress(event: ProgressEvent): void {
      current = event.path;
      seen.set(event.path, { done: event.bytesDone, total: event.bytesTotal });
      render();
    },
    stop(): void {
      stopped = true;
      clearTimeout(timer);
      if (bar !== null) {
        bar.stop();
        bar = null;
      }
    },
  };
}
