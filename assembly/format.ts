// On-disk field positions the kernels read (docs/format.md §1.2, 1.3). They mirror
// src/format/constants.ts; test/wasm-engine.test.ts checks that the two agree.

// Batch header (docs/format.md §1.2).
// @ts-ignore: decorator
@inline export const BATCH_HEADER_BYTES: usize = 256;
// @ts-ignore: decorator
@inline export const BATCH_BASE_OFFSET_AT: usize = 8;
// @ts-ignore: decorator
@inline export const BATCH_BASE_TIMESTAMP_AT: usize = 16;
// @ts-ignore: decorator
@inline export const BATCH_LENGTH_AT: usize = 32;
// @ts-ignore: decorator
@inline export const BATCH_CHECKSUM_AT: usize = 40;
// @ts-ignore: decorator
@inline export const BATCH_MESSAGE_COUNT_AT: usize = 48;
/** Bytes [52, 256) of the header must be zero. */
// @ts-ignore: decorator
@inline export const BATCH_RESERVED_START: usize = 52;
/** The batch checksum covers header bytes [0, 40) (partition_id .. batch_length), then message_count (docs/format.md §1.4). */
// @ts-ignore: decorator
@inline export const BATCH_CHECKSUMMED_HEADER_BYTES: usize = 40;
/** Bytes of message_count. */
// @ts-ignore: decorator
@inline export const BATCH_MESSAGE_COUNT_BYTES: usize = 4;

// Message frame header (docs/format.md §1.3).
// @ts-ignore: decorator
@inline export const FRAME_HEADER_BYTES: usize = 48;
// @ts-ignore: decorator
@inline export const FRAME_CHECKSUM_AT: usize = 0;
/** The frame checksum covers the frame from here to its end. */
// @ts-ignore: decorator
@inline export const FRAME_CHECKSUMMED_FROM: usize = 8;
// @ts-ignore: decorator
@inline export const FRAME_USER_HEADERS_LENGTH_AT: usize = 32;
// @ts-ignore: decorator
@inline export const FRAME_PAYLOAD_LENGTH_AT: usize = 36;
// @ts-ignore: decorator
@inline export const FRAME_RESERVED_AT: usize = 40;
