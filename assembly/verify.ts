// Header decode gate (docs/format.md §1.2) and batch verification (docs/format.md §2.1 steps 2-3).
//
// The verifier is a streaming state machine held in module globals (every scan
// window owns its own instance, so one verifier per window). Check order follows the
// TypeScript engine's BatchVerifier, status codes come from assembly/abi.ts: chunking
// never changes a result.

import { xxh3, xxh3Digest, xxh3Reset, xxh3Update, xxh3Update64, XXH3_STATE_BYTES } from "./xxh3";
import {
  BATCH_CHECKSUM_AT, BATCH_CHECKSUM_PREFIX_BYTES, BATCH_HEADER_BYTES, BATCH_LENGTH_AT, BATCH_MESSAGE_COUNT_AT,
  BATCH_RESERVED_START, FRAME_CHECKSUM_AT, FRAME_CHECKSUMMED_FROM, FRAME_HEADER_BYTES, FRAME_PAYLOAD_LENGTH_AT,
  FRAME_RESERVED_AT, FRAME_USER_HEADERS_LENGTH_AT, MAX_TRACKED_BATCH_BYTES, VERIFY_BATCH_CHECKSUM as BATCH_CHECKSUM,
  VERIFY_FRAME_CHECKSUM as FRAME_CHECKSUM, VERIFY_FRAME_COUNT_MISMATCH as FRAME_COUNT_MISMATCH,
  VERIFY_FRAME_HEADER_OVERRUN as FRAME_HEADER_OVERRUN, VERIFY_FRAME_OVERRUN as FRAME_OVERRUN,
  VERIFY_FRAME_RESERVED_NON_ZERO as FRAME_RESERVED_NON_ZERO, VERIFY_LENGTH_BELOW_HEADER as LENGTH_BELOW_HEADER,
  VERIFY_LENGTH_OVER_CAP as LENGTH_OVER_CAP, VERIFY_NOT_FINISHED as NOT_FINISHED, VERIFY_OK as OK,
  VERIFY_RESERVED_NON_ZERO as RESERVED_NON_ZERO,
} from "./abi";

// @ts-ignore: decorator
@inline const HEADER_BYTES: u64 = <u64>BATCH_HEADER_BYTES;
// @ts-ignore: decorator
@inline const FRAME_HEADER: usize = FRAME_HEADER_BYTES;
/** The checksummed header prefix is bytes [0, 40) (up to the checksum field), then message_count (docs/format.md §1.4). */
// @ts-ignore: decorator
@inline const CHECKSUMMED_HEADER_BYTES: usize = BATCH_CHECKSUM_AT;
// @ts-ignore: decorator
@inline const MESSAGE_COUNT_BYTES: usize = BATCH_CHECKSUM_PREFIX_BYTES - BATCH_CHECKSUM_AT;

/** The decode gate's length cap (docs/format.md §2.2 MAX_BATCH_BYTES or an override). */
export let maxBatchBytes: u64 = 64 << 20;

export function setMaxBatchBytes(v: f64): void {
  maxBatchBytes = <u64>v;
}

// ---------------------------------------------------------------------------
// Decode gate

/**
 * True when the 204 reserved bytes [p+52, p+256) are all zero: twelve 16-byte
 * loads from BATCH_RESERVED_START, then the last 16 header bytes (overlapping).
 */
// @ts-ignore: decorator
@inline export function reservedZero(p: usize): bool {
  let r = v128.or(v128.load(p, BATCH_RESERVED_START), v128.load(p, BATCH_RESERVED_START + 16));
  r = v128.or(r, v128.or(v128.load(p, BATCH_RESERVED_START + 32), v128.load(p, BATCH_RESERVED_START + 48)));
  r = v128.or(r, v128.or(v128.load(p, BATCH_RESERVED_START + 64), v128.load(p, BATCH_RESERVED_START + 80)));
  r = v128.or(r, v128.or(v128.load(p, BATCH_RESERVED_START + 96), v128.load(p, BATCH_RESERVED_START + 112)));
  r = v128.or(r, v128.or(v128.load(p, BATCH_RESERVED_START + 128), v128.load(p, BATCH_RESERVED_START + 144)));
  r = v128.or(r, v128.or(v128.load(p, BATCH_RESERVED_START + 160), v128.load(p, BATCH_RESERVED_START + 176)));
  r = v128.or(r, v128.load(p, BATCH_HEADER_BYTES - 16));
  return !v128.any_true(r);
}

/** docs/format.md §1.2 on the 256 bytes at p: length floor, length cap (u64, before anything else is read), reserved. */
export function headerStatus(p: usize): i32 {
  const len = load<u64>(p, BATCH_LENGTH_AT);
  if (len < HEADER_BYTES) return LENGTH_BELOW_HEADER;
  if (len > maxBatchBytes) return LENGTH_OVER_CAP;
  if (!reservedZero(p)) return RESERVED_NON_ZERO;
  return OK;
}

// ---------------------------------------------------------------------------
// Verifier state

const BATCH_STATE: usize = memory.data(<i32>XXH3_STATE_BYTES, 16);
const FRAME_STATE: usize = memory.data(<i32>XXH3_STATE_BYTES, 16);
/** A frame header collected across chunks (48 bytes), or the stored checksum of a streamed body. */
const FRAME_HDR: usize = memory.data(64, 16);

let expectedChecksum: u64 = 0;
let messageCount: u32 = 0;
let framesSeen: u32 = 0;
/** Blob bytes not yet fed. */
let blobRemaining: i64 = 0;
/** Bytes of the current frame header collected so far (0 = between frames). */
let headerFilled: usize = 0;
/** Body bytes of the current frame still to hash (valid while inBody). */
let bodyRemaining: u64 = 0;
let inBody: bool = false;
let status: i32 = OK;

/** Starts verifying the batch whose decoded header is at p. */
export function verifyStart(p: usize): void {
  xxh3Reset(BATCH_STATE);
  xxh3Update(BATCH_STATE, p, CHECKSUMMED_HEADER_BYTES);
  xxh3Update(BATCH_STATE, p + BATCH_MESSAGE_COUNT_AT, MESSAGE_COUNT_BYTES);
  expectedChecksum = load<u64>(p, BATCH_CHECKSUM_AT);
  messageCount = load<u32>(p, BATCH_MESSAGE_COUNT_AT);
  const length = load<u64>(p, BATCH_LENGTH_AT);
  blobRemaining = <i64>(length < MAX_TRACKED_BATCH_BYTES ? length : MAX_TRACKED_BATCH_BYTES) - <i64>HEADER_BYTES;
  framesSeen = 0;
  headerFilled = 0;
  bodyRemaining = 0;
  inBody = false;
  status = OK;
}

/** Checks that run the moment a new frame starts, before any of its bytes are read. */
// @ts-ignore: decorator
@inline function beginFrame(): bool {
  if (framesSeen == messageCount) {
    status = FRAME_COUNT_MISMATCH;
    return false;
  }
  if (blobRemaining < <i64>FRAME_HEADER) {
    status = FRAME_HEADER_OVERRUN;
    return false;
  }
  return true;
}

/** Checks a complete frame header at h; returns the body length, or -1 on failure. */
// @ts-ignore: decorator
@inline function acceptHeader(h: usize): i64 {
  if (load<u64>(h, FRAME_RESERVED_AT) != 0) {
    status = FRAME_RESERVED_NON_ZERO;
    return -1;
  }
  const body = <i64>load<u32>(h, FRAME_PAYLOAD_LENGTH_AT) + <i64>load<u32>(h, FRAME_USER_HEADERS_LENGTH_AT);
  if (body > blobRemaining - <i64>FRAME_HEADER) {
    status = FRAME_OVERRUN;
    return -1;
  }
  return body;
}

/** A frame is complete: compare its stored checksum and bind it into the batch checksum. */
// @ts-ignore: decorator
@inline function completeFrame(stored: u64, computed: u64): void {
  if (stored != computed) {
    status = FRAME_CHECKSUM;
    return;
  }
  framesSeen++;
  xxh3Update64(BATCH_STATE, stored);
}

/** Feeds the next `len` blob bytes at p; a non-Ok result is final. */
export function verifyFeed(p: usize, len: usize): i32 {
  const end = p + len;
  while (status == OK && p < end) {
    if (inBody) {
      // Body of a frame whose header arrived in an earlier chunk.
      let take = <u64>(end - p);
      if (take > bodyRemaining) take = bodyRemaining;
      xxh3Update(FRAME_STATE, p, <usize>take);
      bodyRemaining -= take;
      blobRemaining -= <i64>take;
      p += <usize>take;
      if (bodyRemaining == 0) {
        inBody = false;
        completeFrame(load<u64>(FRAME_HDR, FRAME_CHECKSUM_AT), xxh3Digest(FRAME_STATE));
      }
    } else if (headerFilled == 0 && end - p >= FRAME_HEADER) {
      // Fast path: the whole frame header is here.
      if (!beginFrame()) break;
      const body = acceptHeader(p);
      if (body < 0) break;
      const frameEnd = p + FRAME_HEADER + <usize>body;
      if (<u64>body <= <u64>(end - p - FRAME_HEADER)) {
        const computed = xxh3(p + FRAME_CHECKSUMMED_FROM, FRAME_HEADER - FRAME_CHECKSUMMED_FROM + <usize>body);
        blobRemaining -= <i64>FRAME_HEADER + body;
        completeFrame(load<u64>(p, FRAME_CHECKSUM_AT), computed);
        p = frameEnd;
      } else {
        // The body continues in a later chunk: keep the stored checksum and stream the rest.
        store<u64>(FRAME_HDR, load<u64>(p, FRAME_CHECKSUM_AT), FRAME_CHECKSUM_AT);
        xxh3Reset(FRAME_STATE);
        xxh3Update(FRAME_STATE, p + FRAME_CHECKSUMMED_FROM, FRAME_HEADER - FRAME_CHECKSUMMED_FROM);
        blobRemaining -= <i64>FRAME_HEADER;
        bodyRemaining = <u64>body;
        inBody = true;
        p += FRAME_HEADER;
      }
    } else {
      // Slow path: a frame header split across chunks.
      if (headerFilled == 0 && !beginFrame()) break;
      let take = FRAME_HEADER - headerFilled;
      if (take > end - p) take = end - p;
      memory.copy(FRAME_HDR + headerFilled, p, take);
      headerFilled += take;
      p += take;
      if (headerFilled < FRAME_HEADER) continue;
      headerFilled = 0;
      const body = acceptHeader(FRAME_HDR);
      if (body < 0) break;
      xxh3Reset(FRAME_STATE);
      xxh3Update(FRAME_STATE, FRAME_HDR + FRAME_CHECKSUMMED_FROM, FRAME_HEADER - FRAME_CHECKSUMMED_FROM);
      blobRemaining -= <i64>FRAME_HEADER;
      if (body == 0) {
        // A frame with no body is complete with its header.
        completeFrame(load<u64>(FRAME_HDR, FRAME_CHECKSUM_AT), xxh3Digest(FRAME_STATE));
      } else {
        bodyRemaining = <u64>body;
        inBody = true;
      }
    }
  }
  return status;
}

/** After the whole blob was fed: frame count, then the batch checksum. */
export function verifyFinish(): i32 {
  if (status != OK) return status;
  if (blobRemaining != 0 || inBody || headerFilled != 0) return NOT_FINISHED;
  if (framesSeen != messageCount) return (status = FRAME_COUNT_MISMATCH);
  if (xxh3Digest(BATCH_STATE) != expectedChecksum) return (status = BATCH_CHECKSUM);
  return OK;
}

/** The whole batch (decoded header at p) is in memory: verify it in one pass. */
export function verifyInWindow(p: usize): i32 {
  verifyStart(p);
  const s = verifyFeed(p + <usize>HEADER_BYTES, <usize>(<u64>load<u64>(p, BATCH_LENGTH_AT) - HEADER_BYTES));
  return s == OK ? verifyFinish() : s;
}
