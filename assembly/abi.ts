// Every number the kernels share with the TypeScript side, written once (docs/engines.md
// §8.1): on-disk field positions (docs/format.md §1.2–1.4, docs/node.md N1), the status
// codes the kernels return, the resident walk's result slots and the streaming verifier's
// length clamp. The module exports each one as an immutable global under the name its
// TypeScript twin has; the wrapper (src/engine/wasm/abi.ts) compares the two sets at load
// and refuses a module that disagrees, naming the constant. Plain `const` globals with
// constant initialisers are folded into the kernels like `@inline` ones.

// ---------------------------------------------------------------------------
// Batch header (docs/format.md §1.2); src/format/constants.ts.

export const BATCH_HEADER_BYTES: usize = 256;
export const BATCH_BASE_OFFSET_AT: usize = 8;
export const BATCH_BASE_TIMESTAMP_AT: usize = 16;
export const BATCH_LENGTH_AT: usize = 32;
export const BATCH_CHECKSUM_AT: usize = 40;
export const BATCH_MESSAGE_COUNT_AT: usize = 48;
/** Bytes [52, 256) of the header must be zero. */
export const BATCH_RESERVED_START: usize = 52;
/**
 * The batch checksum's header prefix (docs/format.md §1.4): partition_id .. batch_length
 * (the bytes before the checksum field), then message_count.
 */
export const BATCH_CHECKSUM_PREFIX_BYTES: usize = 44;

// Message frame header (docs/format.md §1.3).
export const FRAME_HEADER_BYTES: usize = 48;
export const FRAME_CHECKSUM_AT: usize = 0;
/** The frame checksum covers the frame from here to its end. */
export const FRAME_CHECKSUMMED_FROM: usize = 8;
export const FRAME_USER_HEADERS_LENGTH_AT: usize = 32;
export const FRAME_PAYLOAD_LENGTH_AT: usize = 36;
export const FRAME_RESERVED_AT: usize = 40;

/**
 * The largest batch_length a streaming verification tracks exactly (2^53 − 1): a larger
 * one counts as this, so the verifier's i64 never sees a u64 past 2^63 (docs/engines.md
 * §8.4).
 */
export const MAX_TRACKED_BATCH_BYTES: u64 = 9007199254740991;

// ---------------------------------------------------------------------------
// Metadata WAL prepare header (docs/node.md N1); src/format/wal.ts.

export const WAL_HEADER_BYTES: u32 = 256;
export const WAL_MAX_ENTRY_BYTES: u32 = 64 << 20;
export const WAL_CHECKSUM_AT: usize = 0;
export const WAL_CHECKSUM_BODY_AT: usize = 16;
export const WAL_SIZE_AT: usize = 48;
export const WAL_COMMAND_AT: usize = 60;
export const WAL_RESERVED_FRAME_AT: usize = 62;
export const WAL_RESERVED_FRAME_END: usize = 128;
export const WAL_PARENT_AT: usize = 144;
export const WAL_OP_AT: usize = 176;
export const WAL_OPERATION_AT: usize = 208;
export const WAL_RESERVED_AT: usize = 228;
export const WAL_COMMAND_PREPARE: u8 = 6;

// ---------------------------------------------------------------------------
// Status codes: VerifyStatus (src/format/records.ts), WalHeaderStatus (src/format/wal.ts).

export const VERIFY_OK: i32 = 0;
export const VERIFY_HEADER_BEYOND_FILE: i32 = 1;
export const VERIFY_LENGTH_BELOW_HEADER: i32 = 2;
export const VERIFY_LENGTH_OVER_CAP: i32 = 3;
export const VERIFY_RESERVED_NON_ZERO: i32 = 4;
export const VERIFY_BATCH_BEYOND_FILE: i32 = 5;
export const VERIFY_FRAME_COUNT_MISMATCH: i32 = 6;
export const VERIFY_FRAME_HEADER_OVERRUN: i32 = 7;
export const VERIFY_FRAME_RESERVED_NON_ZERO: i32 = 8;
export const VERIFY_FRAME_OVERRUN: i32 = 9;
export const VERIFY_FRAME_CHECKSUM: i32 = 10;
export const VERIFY_BATCH_CHECKSUM: i32 = 11;
/** Not a VerifyStatus: verifyFinish was called before the whole blob was fed. */
export const VERIFY_NOT_FINISHED: i32 = -1;

export const WAL_HEADER_OK: i32 = 0;
export const WAL_HEADER_COMMAND_NOT_PREPARE: i32 = 1;
export const WAL_HEADER_OPERATION_INVALID: i32 = 2;
export const WAL_HEADER_SIZE_BELOW_HEADER: i32 = 3;
export const WAL_HEADER_SIZE_OVER_CAP: i32 = 4;
export const WAL_HEADER_RESERVED_NON_ZERO: i32 = 5;
export const WAL_HEADER_UPPER_BYTES_NON_ZERO: i32 = 6;

// ---------------------------------------------------------------------------
// walkResident's result area (assembly/walk.ts): slots of 8 bytes. Positions and counts
// are f64 (exact below 2^53: a walk covers at most one window); offsets and timestamps u64.

/** f64: address of the first batch not walked. */
export const WALK_STOP: usize = 0;
/** f64: batches walked. */
export const WALK_BATCHES: usize = 1;
/** f64: sum of their message_count. */
export const WALK_MESSAGES: usize = 2;
/** u64: the offset the next batch must carry after the walked ones. */
export const WALK_EXPECTED_OFFSET: usize = 3;
/** f64: address of the first walked batch with message_count > 0, or -1 when none. */
export const WALK_FIRST_AT: usize = 4;
/** u64 base_offset, u64 base_timestamp, f64 message_count of that batch follow WALK_FIRST_AT. */
export const WALK_FIRST_BASE_OFFSET: usize = 5;
export const WALK_FIRST_BASE_TIMESTAMP: usize = 6;
export const WALK_FIRST_MESSAGE_COUNT: usize = 7;
/** The same four slots for the last walked batch with message_count > 0. */
export const WALK_LAST_AT: usize = 8;
export const WALK_LAST_BASE_OFFSET: usize = 9;
export const WALK_LAST_BASE_TIMESTAMP: usize = 10;
export const WALK_LAST_MESSAGE_COUNT: usize = 11;
/** Slots in the result area. */
export const WALK_RESULT_SLOTS: usize = 12;
