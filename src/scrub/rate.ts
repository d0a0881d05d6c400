/**
 * The scrub's token bucket (docs/scrub.md §2): `bytesPerSecond` tokens arrive
 * continuously, at most `burstBytes` accumulate while idle, and a read of n
 * bytes takes n tokens, waiting first when the bucket is in debt. The average
 * rate over any long run is the requested rate, so a broker's own I/O is never
 * starved by a scrub that fell behind and tries to catch up.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** Default scrub rate: modest, a small fraction of any SSD or even a spinning disk. */
export const DEFAULT_SCRUB_RATE_BYTES_PER_SECOND = 64 * 1024 * 1024;

/**
 * Every byte is re-read at least this often, even when nothing changed: bit rot
 * changes no size, mtime or inode, so in a segment that did not change it is
 * found within this interval (plus the time until the next pass). A week, as
 * Ceph deep-scrubs each placement group (`osd_deep_scrub_interval`, 7 days by
 * default). A week of reading at the default 64 MiB/s is about 37 TiB, more
 * than a node holds, so the weekly re-read fits within the rate limit, while a
 * bad sector waits at most a week to be found, with time left to re-replicate
 * from a peer before a second failure. Here, beside the rate, so the CLI's flag
 * defaults load no scrubber.
 */
export const DEFAULT_REVERIFY_AFTER_MS = 7 * 24 * 3600 * 1000;

/**
 * Idle credit the bucket may hold, in seconds of rate: enough that a window read
 * never waits when the scrub runs on time, small enough that a scrub paused for
 * minutes does not then burst at full disk speed.
 */
export const BURST_SECONDS = 0.25;

/** A clock and sleeper, injectable so the bucket's arithmetic can be tested without time passing. */
export interface BucketClock {
  nowMs(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: BucketClock = {
  nowMs: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined),
};

export class TokenBucket {
  private tokens: number;
  private lastRefillMs: number;
  readonly burstBytes: number;

  constructor(
    readonly bytesPerSecond: number,
    private readonly clock: BucketClock = realClock,
    burstBytes = bytesPerSecond * BURST_SECONDS,
  ) {
    if (!(bytesPerSecond > 0) || !Number.isFinite(bytesPerSecond)) {
      throw new RangeError(`rate must be a positive number of bytes per second, got ${bytesPerSecond}`);
    }
    this.burstBytes = Math.max(1, burstBytes);
    // Start empty: the first window waits its share, so a short scrub is not one unthrottled burst.
    this.tokens = 0;
    this.lastRefillMs = clock.nowMs();
  }

  /**
   * Takes `bytes` tokens, waiting while the bucket is in debt. An aborted
   * `signal` ends the wait early so a stop takes effect within one window;
   * the tokens stay owed either way.
   */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = this.clock.nowMs();
    this.tokens = Math.min(this.burstBytes, this.tokens + ((now - this.lastRefillMs) * this.bytesPerSecond) / 1000);
    this.lastRefillMs = now;
    this.tokens -= bytes;
    if (this.tokens >= 0 || signal?.aborted) return;
    const waitMs = (-this.tokens * 1000) / this.bytesPerSecond;
    await this.clock.sleep(waitMs, signal);
  }
}
