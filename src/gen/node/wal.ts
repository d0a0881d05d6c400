/**
 * Builds metadata WAL entries (docs/node.md N1) the way Iggy writes them:
 * sealed prepares chained by `parent`, packed with no padding.
 */
import { writeU32, writeU64 } from "../../format/bytes.js";
import { xxh3_64 } from "../../hash/xxh3.js";
import {
  WAL_CHECKSUM_AT,
  WAL_CHECKSUM_BODY_AT,
  WAL_CLIENT_AT,
  WAL_CLUSTER_AT,
  WAL_COMMAND_AT,
  WAL_COMMAND_PREPARE,
  WAL_COMMIT_AT,
  WAL_GROUP_AT,
  WAL_HEADER_BYTES,
  WAL_METADATA_GROUP,
  WAL_OPERATION_AT,
  WAL_OP_AT,
  WAL_PARENT_AT,
  WAL_REPLICA_AT,
  WAL_REQUEST_AT,
  WAL_SIZE_AT,
  WAL_TIMESTAMP_AT,
  WAL_USER_ID_AT,
  WAL_VIEW_AT,
  identityInput,
} from "../../format/wal.js";

export function writeU128(bytes: Uint8Array, at: number, value: bigint): void {
  writeU64(bytes, at, value & ((1n << 64n) - 1n));
  writeU64(bytes, at + 8, value >> 64n);
}

export interface PrepareInput {
  op: bigint;
  parent: bigint;
  operation: number;
  body: Uint8Array;
  cluster?: bigint;
  view?: number;
  commit?: bigint;
  timestamp?: bigint;
  client?: bigint;
  request?: bigint;
  group?: bigint;
  userId?: number;
  /** Default true: seal both the header and the body. */
  sealHeader?: boolean;
  sealBody?: boolean;
  /** Changes header bytes before the seals are computed (fault injection: a writer that stamped non-zero reserved bytes). */
  alterHeader?: (header: Uint8Array) => void;
}

/** One entry (header + body); `checksum` is its identity checksum (0 when unsealed). */
export function encodePrepare(input: PrepareInput): { bytes: Uint8Array; checksum: bigint } {
  const size = WAL_HEADER_BYTES + input.body.length;
  const bytes = new Uint8Array(size);
  writeU128(bytes, WAL_CLUSTER_AT, input.cluster ?? 0n);
  writeU32(bytes, WAL_SIZE_AT, size);
  writeU32(bytes, WAL_VIEW_AT, input.view ?? 0);
  bytes[WAL_COMMAND_AT] = WAL_COMMAND_PREPARE;
  bytes[WAL_REPLICA_AT] = 0;
  writeU128(bytes, WAL_CLIENT_AT, input.client ?? 0n);
  writeU128(bytes, WAL_PARENT_AT, input.parent);
  writeU64(bytes, WAL_OP_AT, input.op);
  writeU64(bytes, WAL_COMMIT_AT, input.commit ?? (input.op > 0n ? input.op - 1n : 0n));
  writeU64(bytes, WAL_TIMESTAMP_AT, input.timestamp ?? 0n);
  writeU64(bytes, WAL_REQUEST_AT, input.request ?? 0n);
  bytes[WAL_OPERATION_AT] = input.operation;
  writeU64(bytes, WAL_GROUP_AT, input.group ?? WAL_METADATA_GROUP);
  writeU32(bytes, WAL_USER_ID_AT, input.userId ?? 0);
  bytes.set(input.body, WAL_HEADER_BYTES);
  input.alterHeader?.(bytes);
  if (input.sealBody ?? true) writeU128(bytes, WAL_CHECKSUM_BODY_AT, xxh3_64(input.body));
  let checksum = 0n;
  if (input.sealHeader ?? true) {
    checksum = xxh3_64(identityInput(bytes, 0));
    writeU128(bytes, WAL_CHECKSUM_AT, checksum);
  }
  return { bytes, checksum };
}

/** A realistic request body for an operation (wire-encoded names and ids; segscan never decodes them). */
export function sampleBody(operation: number, op: bigint, random: () => number): Uint8Array {
  const text = new TextEncoder();
  switch (operation) {
    case 128:
      return withName(text.encode(`stream-${op}`));
    case 64: {
      const name = text.encode(`topic-${op}`);
      const body = new Uint8Array(24 + name.length);
      writeU32(body, 0, 1);
      writeU32(body, 4, 1 + Math.floor(random() * 4));
      body[8] = 1;
      body[9] = name.length;
      body.set(name, 10);
      return body;
    }
    case 141:
      return withName(text.encode(`user-${op}`), 40);
    case 1:
      return new Uint8Array(0);
    default: {
      const body = new Uint8Array(8 + Math.floor(random() * 120));
      for (let i = 0; i < body.length; i++) body[i] = Math.floor(random() * 256);
      return body;
    }
  }
}

function withName(name: Uint8Array, extra = 0): Uint8Array {
  const body = new Uint8Array(5 + name.length + extra);
  body[4] = name.length;
  body.set(name, 5);
  return body;
}

export interface BuiltWal {
  bytes: Uint8Array;
  entries: { position: number; size: number; op: bigint; checksum: bigint }[];
}

/** Ops `firstOp..firstOp+count-1`, chained, packed; `parentOfFirst` links the first to its predecessor. */
export function buildWal(options: {
  firstOp: bigint;
  count: number;
  random: () => number;
  cluster?: bigint;
  parentOfFirst?: bigint;
}): BuiltWal {
  const operations = [128, 64, 141, 1, 139, 129, 65];
  const parts: Uint8Array[] = [];
  const entries: BuiltWal["entries"] = [];
  let parent = options.parentOfFirst ?? 0n;
  let position = 0;
  for (let i = 0; i < options.count; i++) {
    const op = options.firstOp + BigInt(i);
    const operation = operations[Math.floor(options.random() * operations.length)]!;
    const { bytes, checksum } = encodePrepare({
      op,
      parent,
      operation,
      body: sampleBody(operation, op, options.random),
      cluster: options.cluster ?? 0n,
      timestamp: 1_700_000_000_000_000n + op * 1000n,
    });
    parts.push(bytes);
    entries.push({ position, size: bytes.length, op, checksum });
    position += bytes.length;
    parent = checksum;
  }
  return { bytes: concat(parts), entries };
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
