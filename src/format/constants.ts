/**
 * Every on-disk size and build-time limit of docs/format.md §1–2. Limits are constants,
 * never read from a live server knob (docs/format.md §2.2: a knob lowered between boots
 * would refuse partitions written under the old value). Callers may override
 * the probe budget explicitly; the report records the value used.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** docs/format.md §1.2: fixed batch header; the blob of frames follows it. */
export const BATCH_HEADER_BYTES = 256;
/** docs/format.md §1.2: bytes 52..256 of the batch header must all be zero. */
export const BATCH_RESERVED_START = 52;
export const BATCH_RESERVED_BYTES = BATCH_HEADER_BYTES - BATCH_RESERVED_START;
/** Field positions inside the batch header (docs/format.md §1.2). */
export const BATCH_PARTITION_ID_AT = 0;
export const BATCH_BASE_OFFSET_AT = 8;
export const BATCH_BASE_TIMESTAMP_AT = 16;
export const BATCH_ORIGIN_TIMESTAMP_AT = 24;
export const BATCH_LENGTH_AT = 32;
export const BATCH_CHECKSUM_AT = 40;
export const BATCH_MESSAGE_COUNT_AT = 48;
/** docs/format.md §1.4: the header fields the batch checksum covers, before the frame checksums (5 × u64 + u32). */
export const BATCH_CHECKSUM_PREFIX_BYTES = 44;

/** docs/format.md §1.3: fixed frame header. */
export const FRAME_HEADER_BYTES = 48;
export const FRAME_CHECKSUM_AT = 0;
export const FRAME_ID_AT = 8;
export const FRAME_OFFSET_DELTA_AT = 24;
export const FRAME_TIMESTAMP_DELTA_AT = 28;
export const FRAME_USER_HEADERS_LENGTH_AT = 32;
export const FRAME_PAYLOAD_LENGTH_AT = 36;
export const FRAME_RESERVED_AT = 40;
/** The frame checksum covers the frame from here to its end (docs/format.md §1.3). */
export const FRAME_CHECKSUMMED_FROM = 8;

/** docs/format.md §1.5: offset u64 | timestamp u64 | position u64. */
export const INDEX_ENTRY_BYTES = 24;

/**
 * docs/format.md §2.2: the largest record a segment may legally hold. A header claiming
 * more is rejected by one comparison before anything is read or allocated, so a
 * bit-flipped batch_length can never drive a huge read or allocation.
 */
export const MAX_BATCH_BYTES = 64 * MiB;
/** docs/format.md §2.2: a segment may close one whole batch past its 1 GiB ceiling. */
export const MAX_SEGMENT_BYTES = 1 * GiB + MAX_BATCH_BYTES;
/** docs/format.md §2.2/§3.5: one partition load's probe budget: enough to probe two full segments. */
export const PROBE_BUDGET_UNITS = 2 * MAX_SEGMENT_BYTES;
/** docs/format.md §2.2/§3.3: spacing of rebuilt index entries, matching the server's ~1 MiB flush cadence. */
export const REBUILT_INDEX_STRIDE_BYTES = 1 * MiB;

/** docs/engines.md §7: default scan window; big enough to amortise syscalls, small enough to bound memory. */
export const DEFAULT_WINDOW_BYTES = 1 * MiB;
/**
 * Smallest window a scan accepts: it must hold a whole batch header plus room to
 * make progress past it (a 4 KiB window is the smallest the tests exercise).
 */
export const MIN_WINDOW_BYTES = 4 * KiB;
/** Largest window: keeps a scan's memory bounded even if a caller asks for more. */
export const MAX_WINDOW_BYTES = 256 * MiB;

/** docs/format.md §1.1: segment file names are the start offset zero-padded to 20 digits. */
export const SEGMENT_NAME_DIGITS = 20;
export const LOG_SUFFIX = ".log";
export const INDEX_SUFFIX = ".index";
export const STAGING_SUFFIX = ".staging";

/** The largest u64, for range checks on values kept as bigint. */
export const U64_MAX = (1n << 64n) - 1n;

/**
 * The largest batch_length a streaming verification tracks exactly (2^53 − 1):
 * a larger one (any u64, up to 2^64 − 1) counts as this many bytes. No file
 * holds that many bytes after a header, and every check against the bytes
 * remaining compares them with at most a frame header plus a body of 2^33
 * bytes, so the statuses are those of the exact length; and both engines hold
 * the count exactly, the TS engine as a number and the wasm engine as an i64
 * (assembly/verify.ts mirrors it; test/wasm-engine.test.ts compares lengths
 * around 2^31, 2^32, 2^53, 2^63 and 2^64 − 1). Without it the wasm engine read
 * a length past 2^63 as negative and the TS engine rounded one past 2^53.
 */
export const MAX_TRACKED_BATCH_BYTES = Number.MAX_SAFE_INTEGER;
