/**
 * The scan progress bar: cli-progress on stderr, only when stderr is a TTY and
 * the operator did not ask for --no-progress or --json, and only once a scan has
 * run for PROGRESS_DELAY_MS (a quick scan prints no bar at all). It shows bytes
 * read of the total, the rate, the ETA and the partition being read.
 */
import type cliProgressModule from "cli-progress";
import type { ProgressEvent } from "../recovery/options.js";
import { formatBytes } from "../report/format.js";
import { escapeControl } from "../report/terminal-safe.js";

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

/** Bar cells at most and at least; below the minimum the bar is dropped rather than drawn unreadably thin. */
const BAR_MAX_CELLS = 24;
const BAR_MIN_CELLS = 8;
/** Width assumed when the stream does not say (not a real terminal, or a terminal that reports 0). */
const DEFAULT_COLUMNS = 80;
/** A path tail shorter than this says nothing useful, so the partition field is dropped instead. */
const MIN_PARTITION_CHARS = 12;
const SEPARATOR = " · ";

export interface ProgressFields {
  /** 0..1 */
  fraction: number;
  doneText: string;
  totalText: string;
  rateText: string;
  etaText: string;
  /** The partition being read (a path tail). */
  partition: string;
}

/**
 * The progress line for a terminal `columns` wide, never wider than
 * `columns - 1` (a line that reaches the last column wraps on some
 * terminals). Whole fields are dropped, least useful first: the partition
 * path, the "scanning" label, the bar, the rate, the total, then the ETA; the
 * percentage and bytes done always stay. Only the partition path is ever
 * shortened, from its start, with "…".
 */
export function progressLine(fields: ProgressFields, columns: number): string {
  const width = Math.max(1, (columns > 0 ? columns : DEFAULT_COLUMNS) - 1);
  const fraction = Math.min(1, Math.max(0, fields.fraction));
  const percent = `${Math.floor(fraction * 100)}%`;
  type Level = { label: boolean; bar: boolean; rate: boolean; total: boolean; eta: boolean; partition: boolean };
  const all: Level = { label: true, bar: true, rate: true, total: true, eta: true, partition: true };
  const levels: Level[] = [
    all,
    { ...all, partition: false },
    { ...all, partition: false, label: false },
    { ...all, partition: false, label: false, bar: false },
    { ...all, partition: false, label: false, bar: false, rate: false },
    { ...all, partition: false, label: false, bar: false, rate: false, total: false },
    { label: false, bar: false, rate: false, total: false, eta: false, partition: false },
  ];
  const drawBar = (cells: number): string => {
    const filled = Math.round(fraction * cells);
    return "█".repeat(filled) + "░".repeat(cells - filled);
  };
  for (const level of levels) {
    const facts = [level.total ? `${fields.doneText} of ${fields.totalText}` : fields.doneText];
    if (level.rate) facts.push(fields.rateText);
    if (level.eta) facts.push(`ETA ${fields.etaText}`);
    const compose = (bar: string, partition: string): string =>
      [
        [level.label ? "scanning" : "", bar, percent].filter((piece) => piece !== "").join(" "),
        ...facts,
        ...(partition === "" ? [] : [partition]),
      ].join(SEPARATOR);
    if (!level.bar) {
      const line = compose("", "");
      if (line.length <= width) return line;
      continue;
    }
    const partition = level.partition ? fields.partition : "";
    // The bar takes what the other fields leave, up to its maximum; the bar's own separating space is the + 1.
    const cells = Math.min(BAR_MAX_CELLS, width - compose("", partition).length - 1);
    if (cells >= BAR_MIN_CELLS) return compose(drawBar(cells), partition);
    if (!level.partition) continue;
    // A minimal bar, and the partition path's tail in the room left.
    const room = width - compose(drawBar(BAR_MIN_CELLS), "").length - SEPARATOR.length;
    if (room < MIN_PARTITION_CHARS) continue;
    return compose(drawBar(BAR_MIN_CELLS), `…${fields.partition.slice(fields.partition.length - room + 1)}`);
  }
  return percent.slice(0, width);
}

/**
 * `estimates`: partition path → bytes expected (from a stat pass), so the total
 * and ETA are right before each partition reports its own total.
 */
export function startProgress(
  stream: NodeJS.WriteStream,
  enabled: boolean,
  estimates: ReadonlyMap<string, number> = new Map(),
): ProgressReporter {
  return enabled ? new ProgressBar(stream, estimates) : NO_PROGRESS;
}

/** The bar drawn after PROGRESS_DELAY_MS, fed by the scan's progress events, fitted to the terminal at every redraw. */
class ProgressBar implements ProgressReporter {
  private readonly seen = new Map<string, { done: number; total: number }>();
  private readonly startedAt = Date.now();
  private current = "";
  private bar: cliProgressModule.SingleBar | null = null;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly estimates: ReadonlyMap<string, number>,
  ) {
    this.timer = setTimeout(() => void this.start(), PROGRESS_DELAY_MS);
    this.timer.unref();
  }

  // Arrow properties: callers pass these on as bare callbacks (`onProgress: reporter.onProgress`).
  readonly onProgress = (event: ProgressEvent): void => {
    this.current = event.path;
    this.seen.set(event.path, { done: event.bytesDone, total: event.bytesTotal });
    this.render();
  };

  readonly stop = (): void => {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.bar !== null) {
      this.bar.stop();
      this.bar = null;
    }
  };

  private async start(): Promise<void> {
    // The bar's package loads only when a bar is drawn (a TTY and a long scan: docs/benchmarks.md "Cold code").
    const { SingleBar } = (await import("cli-progress")).default;
    if (this.stopped) return;
    // Fitted to the terminal's width at every redraw (a resize takes effect at once).
    const format = (_options: unknown, params: { progress: number }, fields: Record<string, string>): string =>
      progressLine(
        {
          fraction: params.progress,
          doneText: fields.doneText ?? "",
          totalText: fields.totalText ?? "",
          rateText: fields.rateText ?? "",
          etaText: fields.etaText ?? "-",
          partition: fields.partition ?? "",
        },
        this.stream.columns ?? DEFAULT_COLUMNS,
      );
    this.bar = new SingleBar({
      stream: this.stream,
      format: format as unknown as cliProgressModule.GenericFormatter,
      hideCursor: true,
      clearOnComplete: true,
      fps: 8,
    });
    const { done, total } = this.totals();
    this.bar.start(Math.max(total, 1), done, this.payload(done, total));
  }

  private render(): void {
    if (this.bar === null) return;
    const { done, total } = this.totals();
    this.bar.setTotal(Math.max(total, 1));
    this.bar.update(done, this.payload(done, total));
  }

  /** Bytes done and expected: a partition's own total once it reported one, its estimate before. */
  private totals(): { done: number; total: number } {
    let done = 0;
    let total = 0;
    for (const [path, estimate] of this.estimates) {
      const entry = this.seen.get(path);
      total += entry ? entry.total : estimate;
    }
    for (const [path, entry] of this.seen) {
      done += entry.done;
      if (!this.estimates.has(path)) total += entry.total;
    }
    return { done: Math.min(done, total), total };
  }

  private payload(done: number, total: number): Record<string, string> {
    const seconds = Math.max(0.001, (Date.now() - this.startedAt) / 1000);
    const rate = done / seconds;
    const tail = escapeControl(this.current.split("/").slice(-5).join("/"));
    return {
      doneText: formatBytes(done),
      totalText: formatBytes(total),
      rateText: `${formatBytes(rate)}/s`,
      etaText: etaText(total - done, rate),
      partition: tail,
    };
  }
}
