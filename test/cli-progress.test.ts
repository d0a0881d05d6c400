/**
 * The CLI progress bar: only on a TTY, only without --no-progress/--json, only
 * once a scan has run PROGRESS_DELAY_MS, with bytes, rate and ETA; and
 * cleared before the report is printed.
 */
import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { PROGRESS_DELAY_MS, etaText, progressLine, progressWanted, startProgress } from "../src/cli/progress.js";

class FakeTty extends Writable {
  text = "";
  isTTY: boolean;
  columns = 160;
  constructor(isTTY: boolean) {
    super();
    this.isTTY = isTTY;
  }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString("utf8");
    callback();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const plain = (text: string): string => text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, "");

describe("progressWanted", () => {
  it("needs a TTY, progress on and no --json", () => {
    const tty = new FakeTty(true) as unknown as NodeJS.WriteStream;
    const pipe = new FakeTty(false) as unknown as NodeJS.WriteStream;
    expect(progressWanted(tty, { progress: true })).toBe(true);
    expect(progressWanted(tty, { progress: false })).toBe(false);
    expect(progressWanted(tty, { progress: true, json: true })).toBe(false);
    expect(progressWanted(pipe, { progress: true })).toBe(false);
  });
});

describe("startProgress", () => {
  it("draws nothing for a scan shorter than the delay", async () => {
    const stream = new FakeTty(true);
    const progress = startProgress(stream as unknown as NodeJS.WriteStream, true, new Map([["/p", 1000]]));
    progress.onProgress?.({ path: "/p", bytesDone: 500, bytesTotal: 1000 });
    await sleep(PROGRESS_DELAY_MS / 5);
    progress.stop();
    await sleep(PROGRESS_DELAY_MS);
    expect(stream.text).toBe("");
  });

  it("draws bytes, rate, ETA and the partition after the delay, then clears itself", async () => {
    const stream = new FakeTty(true);
    const estimates = new Map([
      ["/data/streams/1/topics/1/partitions/1", 4 * 1024 * 1024],
      ["/data/streams/1/topics/1/partitions/2", 4 * 1024 * 1024],
    ]);
    const progress = startProgress(stream as unknown as NodeJS.WriteStream, true, estimates);
    progress.onProgress?.({ path: "/data/streams/1/topics/1/partitions/1", bytesDone: 2 * 1024 * 1024, bytesTotal: 4 * 1024 * 1024 });
    await sleep(PROGRESS_DELAY_MS + 300);
    progress.onProgress?.({ path: "/data/streams/1/topics/1/partitions/1", bytesDone: 4 * 1024 * 1024, bytesTotal: 4 * 1024 * 1024 });
    await sleep(200);
    const drawn = plain(stream.text);
    expect(drawn).toContain("scanning");
    expect(drawn).toMatch(/2 MiB of 8 MiB|4 MiB of 8 MiB/);
    expect(drawn).toMatch(/[\d.]+ (B|KiB|MiB|GiB)\/s/);
    expect(drawn).toMatch(/ETA (\d+s|\d+m\d\ds|-)/);
    expect(drawn).toContain("topics/1/partitions/1");
    progress.stop();
    // The bar erases its line on stop (clearOnComplete) so the report starts clean.
    const afterLastDraw = stream.text.slice(stream.text.lastIndexOf("scanning"));
    expect(afterLastDraw).toContain("\x1b[2K");
  });

  it("is inert when disabled", async () => {
    const stream = new FakeTty(true);
    const progress = startProgress(stream as unknown as NodeJS.WriteStream, false);
    expect(progress.onProgress).toBeUndefined();
    await sleep(PROGRESS_DELAY_MS + 100);
    progress.stop();
    expect(stream.text).toBe("");
  });
});

describe("etaText", () => {
  it("formats the remaining time at the current rate", () => {
    expect(etaText(0, 100)).toBe("0s");
    expect(etaText(100, 0)).toBe("-");
    expect(etaText(1000, 100)).toBe("10s");
    expect(etaText(187 * 100, 100)).toBe("3m07s");
    expect(etaText(3720 * 10, 10)).toBe("1h02m");
  });
});

describe("progressLine fits the terminal (17.17)", () => {
  const fields = {
    fraction: 0.42,
    doneText: "84.0 GiB",
    totalText: "200.0 GiB",
    rateText: "812.3 MiB/s",
    etaText: "2m26s",
    partition: "streams/1/topics/1/partitions/12",
  };
  const words = ["84.0 GiB", "200.0 GiB", "812.3 MiB/s", "ETA 2m26s", "42%", "scanning"];

  it("at 120 columns shows every field and the whole partition", () => {
    const line = progressLine(fields, 120);
    expect(line.length).toBeLessThan(120);
    for (const word of words) expect(line).toContain(word);
    expect(line).toContain(fields.partition);
    expect(line).toMatch(/█+░+/);
  });

  it("at 80 columns keeps label, bar, bytes, rate and ETA; the partition goes first", () => {
    const line = progressLine(fields, 80);
    expect(line.length).toBeLessThan(80);
    for (const word of words) expect(line).toContain(word);
    expect(line).toMatch(/^scanning █+░+ 42% · .* · ETA 2m26s$/);
    // With a little more room the partition comes back as a tail cut at its start.
    expect(progressLine(fields, 96)).toMatch(/ · …[^ ]*partitions\/12$/);
  });

  it("at 60 columns drops the partition, label and bar but keeps bytes, rate and ETA whole", () => {
    const line = progressLine(fields, 60);
    expect(line).toBe("42% · 84.0 GiB of 200.0 GiB · 812.3 MiB/s · ETA 2m26s");
    expect(line.length).toBeLessThan(60);
  });

  it("at 40 columns drops whole fields, never cutting one mid-word", () => {
    const line = progressLine(fields, 40);
    expect(line.length).toBeLessThan(40);
    expect(line).toContain("42%");
    expect(line).toContain("84.0 GiB");
    // Every " · "-separated piece is one of the whole fields.
    for (const piece of line.split(" · ").slice(1))
      expect(["84.0 GiB of 200.0 GiB", "84.0 GiB", "812.3 MiB/s", "ETA 2m26s"]).toContain(piece);
  });

  it("a very narrow terminal still gets the percentage and never more than its width", () => {
    for (const columns of [1, 5, 12, 20]) expect(progressLine(fields, columns).length).toBeLessThan(Math.max(2, columns));
    expect(progressLine(fields, 12)).toContain("42%");
  });

  it("the drawn bar follows the stream's width", async () => {
    const stream = new FakeTty(true);
    stream.columns = 60;
    const progress = startProgress(
      stream as unknown as NodeJS.WriteStream,
      true,
      new Map([["/d/streams/1/topics/1/partitions/1", 200.5 * 1024 ** 3]]),
    );
    progress.onProgress?.({ path: "/d/streams/1/topics/1/partitions/1", bytesDone: 84.5 * 1024 ** 3, bytesTotal: 200.5 * 1024 ** 3 });
    await sleep(PROGRESS_DELAY_MS + 300);
    progress.stop();
    const drawn = plain(stream.text)
      .split(/\r|\n/)
      .filter((line) => line.includes("%"));
    expect(drawn.length).toBeGreaterThan(0);
    for (const line of drawn) {
      expect(line.length).toBeLessThan(60);
      expect(line).toContain("84.5 GiB of 200.5 GiB");
      expect(line).toMatch(/ETA /);
    }
  });
});
