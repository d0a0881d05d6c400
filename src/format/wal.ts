/**
 * The metadata WAL's byte layout (docs/node.md N1): 256-byte `PrepareHeader`
 * followed by the body, packed with no padding; `size` is the whole entry.
 * Every multi-byte field is little-endian. The gate and the candidate checks
 * here are the definition that both engines' kernels follow.
 */
import { readU128, readU32, readU64 } from "./bytes.js";

const MiB = 1024 * 1024;

/** docs/node.md N1: fixed prepare header. */
export const WAL_HEADER_BYTES = 256;
/** docs/node.md N1: Iggy's MAX_ENTRY_SIZE; a larger `size` is corruption, rejected before any read. */
export const WAL_MAX_ENTRY_BYTES = 64 * MiB;
/** Iggy refuses to cut more than one entry's worth of trailing bytes (its 64 MiB trailing cap). */
export const WAL_IGGY_TRAILING_CAP_BYTES = 64 * MiB;

export const WAL_CHECKSUM_AT = 0;
export const WAL_CHECKSUM_BODY_AT = 16;
export const WAL_CLUSTER_AT = 32;
export const WAL_SIZE_AT = 48;
export const WAL_VIEW_AT = 52;
export const WAL_RELEASE_AT = 56;
export const WAL_COMMAND_AT = 60;
export const WAL_REPLICA_AT = 61;
/** `reserved_frame`: bytes 62..128, must be zero. */
export const WAL_RESERVED_FRAME_AT = 62;
export const WAL_RESERVED_FRAME_END = 128;
export const WAL_CLIENT_AT = 128;
export const WAL_PARENT_AT = 144;
export const WAL_REQUEST_CHECKSUM_AT = 160;
export const WAL_OP_AT = 176;
export const WAL_COMMIT_AT = 184;
export const WAL_TIMESTAMP_AT = 192;
export const WAL_REQUEST_AT = 200;
export const WAL_OPERATION_AT = 208;
export const WAL_GROUP_AT = 216;
export const WAL_USER_ID_AT = 224;
/** `reserved`: bytes 228..256, must be zero. */
export const WAL_RESERVED_AT = 228;

/** `Command::Prepare`, the only command a WAL entry may carry. */
export const WAL_COMMAND_PREPARE = 6;
/** Highest valid `Command` discriminant (Iggy's bit-pattern check). */
export const WAL_COMMAND_MAX = 29;
/** The metadata consensus group, `1 << 63`. */
export const WAL_METADATA_GROUP = 1n << 63n;
/** XXH3-64 of the empty input: the sealed body checksum of a header-only entry. */
export const XXH3_EMPTY = 0x2d06800538d394c2n;

/** Valid `Operation` discriminants (docs/node.md N1): 0–3, 64–68, 128–149, 160–162. */
export function isValidOperation(value: number): boolean {
  return value <= 3 || (value >= 64 && value <= 68) || (value >= 128 && value <= 149) || (value >= 160 && value <= 162);
}

/**
 * Iggy's `Operation` discriminants by name (docs/node.md N1), for the dump's
 * listing; a valid value is exactly one of these (isValidOperation).
 */
export const WAL_OPERATION_NAMES: ReadonlyMap<number, string> = new Map([
  [0, "Reserved"],
  [1, "Register"],
  [2, "NonReplicated"],
  [3, "Logout"],
  [64, "CreateTopicWithAssignments"],
  [65, "CreatePartitionsWithAssignments"],
  [66, "RemoveConsumerGroupMember"],
  [67, "CompleteConsumerGroupRevocation"],
  [68, "TruncatePartition"],
  [128, "CreateStream"],
  [129, "UpdateStream"],
  [130, "DeleteStream"],
  [131, "PurgeStream"],
  [132, "CreateTopic"],
  [133, "UpdateTopic"],
  [134, "DeleteTopic"],
  [135, "PurgeTopic"],
  [136, "CreatePartitions"],
  [137, "DeletePartitions"],
  [138, "DeleteSegments"],
  [139, "CreateConsumerGroup"],
  [140, "DeleteConsumerGroup"],
  [141, "CreateUser"],
  [142, "UpdateUser"],
  [143, "DeleteUser"],
  [144, "ChangePassword"],
  [145, "UpdatePermissions"],
  [146, "CreatePersonalAccessToken"],
  [147, "DeletePersonalAccessToken"],
  [148, "JoinConsumerGroup"],
  [149, "LeaveConsumerGroup"],
  [160, "SendMessages"],
  [161, "StoreConsumerOffset"],
  [162, "DeleteConsumerOffset"],
]);

/** Outcome of the prepare-header gate, in order of checking. */
export enum WalHeaderStatus {
  Ok = 0,
  CommandNotPrepare = 1,
  OperationInvalid = 2,
  SizeBelowHeader = 3,
  SizeOverCap = 4,
  ReservedNonZero = 5,
  UpperBytesNonZero = 6,
}

function zeroRange(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** `reserved_frame` and `reserved` both zero. */
export function walReservedZero(bytes: Uint8Array, at: number): boolean {
  return (
    zeroRange(bytes, at + WAL_RESERVED_FRAME_AT, at + WAL_RESERVED_FRAME_END) &&
    zeroRange(bytes, at + WAL_RESERVED_AT, at + WAL_HEADER_BYTES)
  );
}

/**
 * docs/node.md N1 prepare-header gate on the 256 bytes at `at` (everything but
 * "fits the file", which needs the file size, and the checksums).
 */
export function walHeaderStatus(bytes: Uint8Array, at: number): WalHeaderStatus {
  if (bytes[at + WAL_COMMAND_AT] !== WAL_COMMAND_PREPARE) return WalHeaderStatus.CommandNotPrepare;
  if (!isValidOperation(bytes[at + WAL_OPERATION_AT]!)) return WalHeaderStatus.OperationInvalid;
  const size = readU32(bytes, at + WAL_SIZE_AT);
  if (size < WAL_HEADER_BYTES) return WalHeaderStatus.SizeBelowHeader;
  if (size > WAL_MAX_ENTRY_BYTES) return WalHeaderStatus.SizeOverCap;
  if (!walReservedZero(bytes, at)) return WalHeaderStatus.ReservedNonZero;
  if (
    !zeroRange(bytes, at + WAL_CHECKSUM_AT + 8, at + WAL_CHECKSUM_AT + 16) ||
    !zeroRange(bytes, at + WAL_CHECKSUM_BODY_AT + 8, at + WAL_CHECKSUM_BODY_AT + 16) ||
    !zeroRange(bytes, at + WAL_PARENT_AT + 8, at + WAL_PARENT_AT + 16)
  ) {
    return WalHeaderStatus.UpperBytesNonZero;
  }
  return WalHeaderStatus.Ok;
}

/**
 * Iggy's own structural rule (`valid_entry_header` + fits, used by
 * `find_complete_entry`): command byte 6, a valid operation, 256 ≤ size ≤ 64 MiB,
 * and the entry fits. No reserved-byte check and no checksum.
 */
export function walStructurallyComplete(bytes: Uint8Array, at: number, fileEndIndex: number): boolean {
  if (bytes[at + WAL_COMMAND_AT] !== WAL_COMMAND_PREPARE) return false;
  if (!isValidOperation(bytes[at + WAL_OPERATION_AT]!)) return false;
  const size = readU32(bytes, at + WAL_SIZE_AT);
  return size >= WAL_HEADER_BYTES && size <= WAL_MAX_ENTRY_BYTES && size <= fileEndIndex - at;
}

export interface WalHeader {
  checksum: bigint;
  checksumBody: bigint;
  cluster: bigint;
  size: number;
  view: number;
  release: number;
  command: number;
  replica: number;
  parent: bigint;
  op: bigint;
  commit: bigint;
  timestamp: bigint;
  operation: number;
  group: bigint;
  userId: number;
}

export function readWalHeader(bytes: Uint8Array, at: number): WalHeader {
  return {
    checksum: readU128(bytes, at + WAL_CHECKSUM_AT),
    checksumBody: readU128(bytes, at + WAL_CHECKSUM_BODY_AT),
    cluster: readU128(bytes, at + WAL_CLUSTER_AT),
    size: readU32(bytes, at + WAL_SIZE_AT),
    view: readU32(bytes, at + WAL_VIEW_AT),
    release: readU32(bytes, at + WAL_RELEASE_AT),
    command: bytes[at + WAL_COMMAND_AT]!,
    replica: bytes[at + WAL_REPLICA_AT]!,
    parent: readU128(bytes, at + WAL_PARENT_AT),
    op: readU64(bytes, at + WAL_OP_AT),
    commit: readU64(bytes, at + WAL_COMMIT_AT),
    timestamp: readU64(bytes, at + WAL_TIMESTAMP_AT),
    operation: bytes[at + WAL_OPERATION_AT]!,
    group: readU64(bytes, at + WAL_GROUP_AT),
    userId: readU32(bytes, at + WAL_USER_ID_AT),
  };
}

/** The bytes the identity checksum covers: the header with bytes 0..16 and 52..56 zeroed. */
export function identityInput(bytes: Uint8Array, at: number, scratch: Uint8Array = new Uint8Array(WAL_HEADER_BYTES)): Uint8Array {
  scratch.set(bytes.subarray(at, at + WAL_HEADER_BYTES));
  scratch.fill(0, WAL_CHECKSUM_AT, WAL_CHECKSUM_AT + 16);
  scratch.fill(0, WAL_VIEW_AT, WAL_VIEW_AT + 4);
  return scratch;
}
