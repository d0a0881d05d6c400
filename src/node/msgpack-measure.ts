/**
 * docs/node.md N2 decode bounds: one pass over the type bytes and length
 * headers of the first msgpack value in a buffer, building nothing, that says
 * where the value ends and what decoding it would build (containers, scalar
 * values, string and binary bytes, nesting depth). The values themselves are
 * decoded by `@msgpack/msgpack`; this pass exists because that library cannot
 * be stopped by size before it allocates: a payload of `0xdd` + count + that
 * many empty maps passes every per-length cap and still builds one JS object
 * per payload byte.
 */

/** What decoding the first value would build, and where it ends. */
export interface MsgpackExtent {
  /** The byte after the first value: bytes from here on are trailing (Iggy's `rmp_serde::from_slice` ignores them). */
  endPosition: number;
  /** Arrays and maps: each becomes a JS array or object. */
  containers: number;
  /** Every other value (integers, floats, strings, binaries, nil, booleans, extensions). */
  scalars: number;
  /** Bytes of string, binary and extension data (copied into JS strings and arrays). */
  rawBytes: number;
  /** Deepest nesting of containers (the root container is depth 1; a scalar root is 0). */
  depth: number;
  /** The root value: its kind, its element count when it is an array, and the kind of its first element. */
  root: { kind: MsgpackKind; length: number; firstKind: MsgpackKind | null };
}

export type MsgpackKind = "integer" | "float" | "string" | "binary" | "nil" | "boolean" | "extension" | "array" | "map";

export type MsgpackMeasure = { ok: true; extent: MsgpackExtent } | { ok: false; position: number; reason: string };

/** One value's header: its kind, the header's length, the data bytes after it, and the child values it opens. */
interface Header {
  kind: MsgpackKind;
  headerBytes: number;
  dataBytes: number;
  children: number;
}

/**
 * Reads the header of the value at `position` into `header` (reused: the pass
 * allocates nothing per value); false when the type byte is 0xc1 (never used)
 * or the header runs past the end.
 */
function readHeader(bytes: Uint8Array, position: number, header: Header): boolean {
  const type = bytes[position]!;
  header.headerBytes = 1;
  header.dataBytes = 0;
  header.children = 0;
  if (type <= 0x7f || type >= 0xe0) {
    header.kind = "integer";
  } else if (type <= 0x8f) {
    header.kind = "map";
    header.children = (type & 0x0f) * 2;
  } else if (type <= 0x9f) {
    header.kind = "array";
    header.children = type & 0x0f;
  } else if (type <= 0xbf) {
    header.kind = "string";
    header.dataBytes = type & 0x1f;
  } else {
    const fixed = FIXED_HEADERS.get(type);
    if (fixed !== undefined) {
      header.kind = fixed.kind;
      header.dataBytes = fixed.dataBytes;
      return true;
    }
    const sized = SIZED_HEADERS.get(type);
    if (sized === undefined || position + 1 + sized.lengthBytes > bytes.length) return false;
    const length = readLength(bytes, position + 1, sized.lengthBytes);
    header.kind = sized.kind;
    header.headerBytes = 1 + sized.lengthBytes;
    if (sized.kind === "array") header.children = length;
    else if (sized.kind === "map") header.children = length * 2;
    else if (sized.kind === "extension")
      header.dataBytes = 1 + length; // the type byte, then the data
    else header.dataBytes = length;
  }
  return true;
}

/** Type bytes whose value has a fixed size: nil, booleans, floats, fixed-width integers, fixext (type byte + data). */
const FIXED_HEADERS = new Map<number, { kind: MsgpackKind; dataBytes: number }>([
  [0xc0, { kind: "nil", dataBytes: 0 }],
  [0xc2, { kind: "boolean", dataBytes: 0 }],
  [0xc3, { kind: "boolean", dataBytes: 0 }],
  [0xca, { kind: "float", dataBytes: 4 }],
  [0xcb, { kind: "float", dataBytes: 8 }],
  [0xcc, { kind: "integer", dataBytes: 1 }],
  [0xcd, { kind: "integer", dataBytes: 2 }],
  [0xce, { kind: "integer", dataBytes: 4 }],
  [0xcf, { kind: "integer", dataBytes: 8 }],
  [0xd0, { kind: "integer", dataBytes: 1 }],
  [0xd1, { kind: "integer", dataBytes: 2 }],
  [0xd2, { kind: "integer", dataBytes: 4 }],
  [0xd3, { kind: "integer", dataBytes: 8 }],
  [0xd4, { kind: "extension", dataBytes: 2 }],
  [0xd5, { kind: "extension", dataBytes: 3 }],
  [0xd6, { kind: "extension", dataBytes: 5 }],
  [0xd7, { kind: "extension", dataBytes: 9 }],
  [0xd8, { kind: "extension", dataBytes: 17 }],
]);

/** Type bytes followed by a big-endian length of 1, 2 or 4 bytes. */
const SIZED_HEADERS = new Map<number, { kind: MsgpackKind; lengthBytes: number }>([
  [0xc4, { kind: "binary", lengthBytes: 1 }],
  [0xc5, { kind: "binary", lengthBytes: 2 }],
  [0xc6, { kind: "binary", lengthBytes: 4 }],
  [0xc7, { kind: "extension", lengthBytes: 1 }],
  [0xc8, { kind: "extension", lengthBytes: 2 }],
  [0xc9, { kind: "extension", lengthBytes: 4 }],
  [0xd9, { kind: "string", lengthBytes: 1 }],
  [0xda, { kind: "string", lengthBytes: 2 }],
  [0xdb, { kind: "string", lengthBytes: 4 }],
  [0xdc, { kind: "array", lengthBytes: 2 }],
  [0xdd, { kind: "array", lengthBytes: 4 }],
  [0xde, { kind: "map", lengthBytes: 2 }],
  [0xdf, { kind: "map", lengthBytes: 4 }],
]);

function readLength(bytes: Uint8Array, at: number, lengthBytes: number): number {
  let length = 0;
  for (let i = 0; i < lengthBytes; i++) length = length * 256 + bytes[at + i]!;
  return length;
}

/**
 * Measures the first msgpack value of `bytes`. Fails (nothing built) at a
 * value that runs past the end, a container claiming more elements than the
 * bytes left can hold (each element takes at least one byte), the unused type
 * byte 0xc1, or nesting deeper than `maxDepth`. Steps are bounded by
 * `bytes.length`: every value consumes at least one byte.
 */
export function measureMsgpackValue(bytes: Uint8Array, maxDepth: number): MsgpackMeasure {
  if (!(Number.isInteger(maxDepth) && maxDepth >= 1)) throw new RangeError(`maxDepth must be a positive integer, got ${maxDepth}`);
  const extent: MsgpackExtent = {
    endPosition: 0,
    containers: 0,
    scalars: 0,
    rawBytes: 0,
    depth: 0,
    root: { kind: "nil", length: 0, firstKind: null },
  };
  /** Per open container, the child values still to come. */
  const open: number[] = [];
  const header: Header = { kind: "nil", headerBytes: 0, dataBytes: 0, children: 0 };
  let position = 0;
  for (let values = 0; ; values++) {
    if (position >= bytes.length)
      return { ok: false, position, reason: `the value ends early: ${bytes.length} bytes hold no value at byte ${position}` };
    if (!readHeader(bytes, position, header)) {
      return {
        ok: false,
        position,
        reason: `byte ${position} (0x${bytes[position]!.toString(16).padStart(2, "0")}) starts no msgpack value that fits`,
      };
    }
    if (values === 0) extent.root = { kind: header.kind, length: header.kind === "array" ? header.children : 0, firstKind: null };
    else if (values === 1 && open.length === 1) extent.root.firstKind = header.kind;
    position += header.headerBytes;
    const left = bytes.length - position;
    if (header.dataBytes > left) {
      return {
        ok: false,
        position,
        reason: `a ${header.kind} at byte ${position - header.headerBytes} claims ${header.dataBytes} bytes but ${left} remain`,
      };
    }
    if (header.kind === "array" || header.kind === "map") {
      extent.containers++;
      if (header.children > left) {
        const what = header.kind === "map" ? `${header.children / 2} entries (${header.children} values)` : `${header.children} elements`;
        return {
          ok: false,
          position,
          reason: `a ${header.kind} at byte ${position - header.headerBytes} claims ${what} but only ${left} bytes remain`,
        };
      }
      const containerDepth = open.length + 1;
      if (containerDepth > maxDepth) {
        return { ok: false, position, reason: `containers nest deeper than ${maxDepth} levels at byte ${position - header.headerBytes}` };
      }
      extent.depth = Math.max(extent.depth, containerDepth);
      if (header.children > 0) {
        open.push(header.children);
        continue;
      }
    } else {
      extent.scalars++;
      extent.rawBytes += header.kind === "string" || header.kind === "binary" || header.kind === "extension" ? header.dataBytes : 0;
      position += header.dataBytes;
    }
    // A value is complete: close every container it completes.
    while (open.length > 0 && --open[open.length - 1]! === 0) open.pop();
    if (open.length === 0) break;
  }
  extent.endPosition = position;
  return { ok: true, extent };
}
