/**
 * Iggy's user-header block (docs/format.md §1.3: the `user_headers_length` bytes after a
 * frame's payload), as current Iggy writes and validates it: a sequence of
 * entries `[key_kind u8][key_len u32 LE][key][value_kind u8][value_len u32 LE][value]`
 * with kinds 1..=15 and each length in 1..=255. segscan's own checks never
 * read this block (the frame checksum covers it); `segscan gen` writes it and
 * `segscan dump --messages` decodes it.
 */

/** Iggy's header kinds, by their on-disk byte. */
export const USER_HEADER_KINDS = [
  "raw",
  "string",
  "bool",
  "int8",
  "int16",
  "int32",
  "int64",
  "int128",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "uint128",
  "float32",
  "float64",
] as const;
export type UserHeaderKind = (typeof USER_HEADER_KINDS)[number];

/** Kind byte of `USER_HEADER_KINDS[0]`; the last kind is 15. */
const FIRST_KIND_BYTE = 1;
/** Iggy bounds each key and each value to 1..=255 bytes. */
export const USER_HEADER_MIN_FIELD_BYTES = 1;
export const USER_HEADER_MAX_FIELD_BYTES = 255;
/** kind u8 + length u32 before each key and each value. */
const FIELD_PREFIX_BYTES = 5;

/** The byte width a numeric or bool kind must have; raw and string take any allowed length. */
const FIXED_WIDTH: Partial<Record<UserHeaderKind, number>> = {
  bool: 1,
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  int128: 16,
  uint8: 1,
  uint16: 2,
  uint32: 4,
  uint64: 8,
  uint128: 16,
  float32: 4,
  float64: 8,
};

export interface UserHeaderField {
  kind: UserHeaderKind;
  bytes: Uint8Array;
}

export interface UserHeaderEntry {
  key: UserHeaderField;
  value: UserHeaderField;
}

const encoder = new TextEncoder();

/** A string field (Iggy kind 2). */
export function stringField(text: string): UserHeaderField {
  return { kind: "string", bytes: encoder.encode(text) };
}

/** An unsigned integer field of the kind's width, little-endian. */
export function uintField(kind: "uint8" | "uint16" | "uint32" | "uint64", value: bigint): UserHeaderField {
  const width = FIXED_WIDTH[kind]!;
  const bytes = new Uint8Array(width);
  for (let i = 0; i < width; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return { kind, bytes };
}

/** Encodes entries in Iggy's layout; throws RangeError on a length Iggy would reject. */
export function encodeUserHeaders(entries: readonly UserHeaderEntry[]): Uint8Array {
  let total = 0;
  for (const { key, value } of entries) {
    for (const field of [key, value]) {
      if (field.bytes.length < USER_HEADER_MIN_FIELD_BYTES || field.bytes.length > USER_HEADER_MAX_FIELD_BYTES) {
        throw new RangeError(`a user-header ${field.kind} field of ${field.bytes.length} bytes is outside Iggy's 1..=255`);
      }
      total += FIELD_PREFIX_BYTES + field.bytes.length;
    }
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const { key, value } of entries) {
    for (const field of [key, value]) {
      out[at] = USER_HEADER_KINDS.indexOf(field.kind) + FIRST_KIND_BYTE;
      view.setUint32(at + 1, field.bytes.length, true);
      out.set(field.bytes, at + FIELD_PREFIX_BYTES);
      at += FIELD_PREFIX_BYTES + field.bytes.length;
    }
  }
  return out;
}

export type UserHeadersDecode = { ok: true; entries: UserHeaderEntry[] } | { ok: false; entries: UserHeaderEntry[]; problem: string };

/** Decodes a block as Iggy's validation reads it: kinds 1..=15, lengths 1..=255, nothing left over. */
export function decodeUserHeaders(block: Uint8Array): UserHeadersDecode {
  const entries: UserHeaderEntry[] = [];
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  let at = 0;
  const field = (role: "key" | "value"): UserHeaderField | string => {
    if (block.length - at < FIELD_PREFIX_BYTES)
      return `${block.length - at} bytes left at ${at}: too short for a ${role}'s kind and length`;
    const kindByte = block[at]!;
    const kind = USER_HEADER_KINDS[kindByte - FIRST_KIND_BYTE];
    if (kind === undefined) return `${role} kind ${kindByte} at ${at} is not one of Iggy's 1..=15`;
    const length = view.getUint32(at + 1, true);
    if (length < USER_HEADER_MIN_FIELD_BYTES || length > USER_HEADER_MAX_FIELD_BYTES)
      return `${role} length ${length} at ${at + 1} is outside Iggy's 1..=255`;
    if (at + FIELD_PREFIX_BYTES + length > block.length)
      return `${role} of ${length} bytes at ${at + FIELD_PREFIX_BYTES} runs past the block's ${block.length} bytes`;
    const bytes = block.subarray(at + FIELD_PREFIX_BYTES, at + FIELD_PREFIX_BYTES + length);
    at += FIELD_PREFIX_BYTES + length;
    return { kind, bytes };
  };
  while (at < block.length) {
    const key = field("key");
    if (typeof key === "string") return { ok: false, entries, problem: key };
    const value = field("value");
    if (typeof value === "string") return { ok: false, entries, problem: value };
    entries.push({ key, value });
  }
  return { ok: true, entries };
}

function littleEndian(bytes: Uint8Array, signed: boolean): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return signed ? BigInt.asIntN(8 * bytes.length, value) : value;
}

const hex = (bytes: Uint8Array): string => `0x${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;

/**
 * A field as text: strings as JSON strings, numbers in decimal, bools as
 * true/false, raw bytes (and a numeric kind whose width is wrong) as hex.
 */
export function formatUserHeaderField(field: UserHeaderField): string {
  const width = FIXED_WIDTH[field.kind];
  if (field.kind === "string") return JSON.stringify(new TextDecoder("utf-8", { fatal: false }).decode(field.bytes));
  if (field.kind === "raw" || (width !== undefined && width !== field.bytes.length)) return hex(field.bytes);
  if (field.kind === "bool") return field.bytes[0] === 0 ? "false" : "true";
  const view = new DataView(field.bytes.buffer, field.bytes.byteOffset, field.bytes.byteLength);
  if (field.kind === "float32") return String(view.getFloat32(0, true));
  if (field.kind === "float64") return String(view.getFloat64(0, true));
  return littleEndian(field.bytes, field.kind.startsWith("int")).toString();
}
