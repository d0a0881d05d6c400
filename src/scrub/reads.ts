/**
 * The scrub's read path (docs/scrub.md §2): a ScanFs wrapper through which every
 * byte the scrub reads passes once. It charges the token bucket per read (one
 * window refill, or one index chunk), counts the bytes, caps a file at the size
 * it had when the scrub reached it (an active segment keeps growing; the scrub
 * verifies a frozen prefix) and feeds a sealed segment's bytes, in file order,
 * to an XXH3-64 hasher while the walk verifies them: no second pass.
 */
import type { Hasher } from "../engine/types.js";
import type { ReadableFile, ScanFs } from "../io/fs.js";
import type { TokenBucket } from "./rate.js";

export interface ReadMeter {
  bytesRead: number;
}

/** Hashes bytes handed to it in file order; a read that skips ahead spoils the hash (it is then not reported). */
export class PrefixHasher {
  private hashedUntil = 0;
  private broken = false;

  constructor(private readonly hasher: Hasher) {}

  /** Bytes [0, hashedBytes) have been hashed. */
  get hashedBytes(): number {
    return this.hashedUntil;
  }

  observe(bytes: Uint8Array, position: number): void {
    if (this.broken) return;
    const end = position + bytes.length;
    if (position > this.hashedUntil) {
      this.broken = true;
      return;
    }
    if (end <= this.hashedUntil) return; // a re-read of bytes already hashed
    this.hasher.update(bytes.subarray(this.hashedUntil - position));
    this.hashedUntil = end;
  }

  /** The digest of bytes [0, sizeBytes), or null when they were not all read in order. */
  digestOf(sizeBytes: number): bigint | null {
    return !this.broken && this.hashedUntil === sizeBytes ? this.hasher.digest() : null;
  }
}

export class ScrubReads implements ScanFs {
  constructor(
    private readonly base: ScanFs,
    private readonly bucket: TokenBucket | null,
    readonly meter: ReadMeter,
    private readonly signal: AbortSignal | undefined,
  ) {}

  list: ScanFs["list"] = (directory) => this.base.list(directory);
  stat: ScanFs["stat"] = (path) => this.base.stat(path);

  open(path: string): Promise<ReadableFile> {
    return this.openCapped(path, Number.MAX_SAFE_INTEGER, null);
  }

  /** Opens `path` as if it ended at `capBytes`, optionally hashing what is read. */
  async openCapped(path: string, capBytes: number, hasher: PrefixHasher | null): Promise<ReadableFile> {
    const file = await this.base.open(path);
    return {
      read: async (target, position) => {
        const wanted = Math.min(target.length, capBytes - position);
        if (wanted <= 0) return 0;
        await this.bucket?.take(wanted, this.signal);
        const view = target.subarray(0, wanted);
        const count = await file.read(view, position);
        this.meter.bytesRead += count;
        hasher?.observe(view.subarray(0, count), position);
        return count;
      },
      close: () => file.close(),
    };
  }
}
