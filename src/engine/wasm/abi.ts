/**
 * The constants the wasm kernels share with TypeScript (docs/engines.md §8.1): field
 * positions of the batch, frame and WAL prepare headers, the status codes the kernels
 * return, walkResident's result slots and the streaming verifier's length clamp. The
 * module exports each one as an immutable global (assembly/abi.ts); `checkAbi` compares
 * them, name by name, with the TypeScript definitions at load, so a module built from
 * other numbers is refused before any kernel runs.
 */
import * as formatConstants from "../../format/constants.js";
import { VerifyStatus } from "../../format/records.js";
import * as walFormat from "../../format/wal.js";
import { WalHeaderStatus } from "../../format/wal.js";

/**
 * The slots of walkResident's result area (assembly/abi.ts `WALK_…`, 8 bytes each).
 * Addresses and counts are f64, offsets and timestamps u64.
 */
export const WALK_RESULT_SLOT = {
  STOP: 0,
  BATCHES: 1,
  MESSAGES: 2,
  EXPECTED_OFFSET: 3,
  FIRST_AT: 4,
  FIRST_BASE_OFFSET: 5,
  FIRST_BASE_TIMESTAMP: 6,
  FIRST_MESSAGE_COUNT: 7,
  LAST_AT: 8,
  LAST_BASE_OFFSET: 9,
  LAST_BASE_TIMESTAMP: 10,
  LAST_MESSAGE_COUNT: 11,
  RESULT_SLOTS: 12,
} as const;

/** verifyFinish's code for "called before the whole blob was fed" (not a VerifyStatus). */
export const NOT_FINISHED = -1;

/** The batch and frame header positions the kernels read (docs/format.md §1.2–1.4). */
const FORMAT_NAMES = [
  "BATCH_HEADER_BYTES",
  "BATCH_BASE_OFFSET_AT",
  "BATCH_BASE_TIMESTAMP_AT",
  "BATCH_LENGTH_AT",
  "BATCH_CHECKSUM_AT",
  "BATCH_MESSAGE_COUNT_AT",
  "BATCH_RESERVED_START",
  "BATCH_CHECKSUM_PREFIX_BYTES",
  "FRAME_HEADER_BYTES",
  "FRAME_CHECKSUM_AT",
  "FRAME_CHECKSUMMED_FROM",
  "FRAME_USER_HEADERS_LENGTH_AT",
  "FRAME_PAYLOAD_LENGTH_AT",
  "FRAME_RESERVED_AT",
  "MAX_TRACKED_BATCH_BYTES",
] as const satisfies readonly (keyof typeof formatConstants)[];

/** The prepare-header positions and limits the WAL kernels read (docs/node.md N1). */
const WAL_NAMES = [
  "WAL_HEADER_BYTES",
  "WAL_MAX_ENTRY_BYTES",
  "WAL_CHECKSUM_AT",
  "WAL_CHECKSUM_BODY_AT",
  "WAL_SIZE_AT",
  "WAL_COMMAND_AT",
  "WAL_RESERVED_FRAME_AT",
  "WAL_RESERVED_FRAME_END",
  "WAL_PARENT_AT",
  "WAL_OP_AT",
  "WAL_OPERATION_AT",
  "WAL_RESERVED_AT",
  "WAL_COMMAND_PREPARE",
] as const satisfies readonly (keyof typeof walFormat)[];

/** `LengthBelowHeader` → `LENGTH_BELOW_HEADER`. */
function screamingSnake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A numeric enum's members under `prefix` + their SCREAMING_SNAKE names. */
function enumEntries(prefix: string, members: Record<string, string | number>): [string, number][] {
  return Object.entries(members)
    .filter((entry): entry is [string, number] => typeof entry[1] === "number")
    .map(([name, value]) => [`${prefix}${screamingSnake(name)}`, value]);
}

/** Every constant the module must export, by the name it exports it under, with the value TypeScript uses. */
export function expectedAbi(): ReadonlyMap<string, number> {
  const constants = formatConstants as unknown as Record<string, number>;
  const wal = walFormat as unknown as Record<string, number>;
  return new Map<string, number>([
    ...FORMAT_NAMES.map((name): [string, number] => [name, constants[name]!]),
    ...WAL_NAMES.map((name): [string, number] => [name, wal[name]!]),
    ...enumEntries("VERIFY_", VerifyStatus),
    ["VERIFY_NOT_FINISHED", NOT_FINISHED],
    ...enumEntries("WAL_HEADER_", WalHeaderStatus),
    ...Object.entries(WALK_RESULT_SLOT).map(([name, slot]): [string, number] => [`WALK_${name}`, slot]),
  ]);
}

/** An exported immutable global, as the JS API shows it (a u64 global reads as a BigInt). */
interface ExportedGlobal {
  readonly value: unknown;
}

function isGlobal(value: unknown): value is ExportedGlobal {
  const Global = (globalThis as unknown as { WebAssembly: { Global: new (...args: never[]) => unknown } }).WebAssembly.Global;
  return value instanceof Global;
}

/**
 * Compares the module's exported constants with `expectedAbi()` and throws, naming
 * every constant that is missing, differs or is unknown to this wrapper. `exports`:
 * an instance's exports (functions and the memory are ignored).
 */
export function checkAbi(exports: Readonly<Record<string, unknown>>, expected: ReadonlyMap<string, number> = expectedAbi()): void {
  const problems: string[] = [];
  const exported = new Map<string, unknown>();
  for (const [name, value] of Object.entries(exports)) if (isGlobal(value)) exported.set(name, value.value);
  for (const [name, want] of expected) {
    if (!exported.has(name)) {
      problems.push(`${name} is missing from the module (TypeScript has ${want})`);
      continue;
    }
    const got = exported.get(name);
    // A u64 global reads as a BigInt, every other as a number: compare them as integers.
    const same = (typeof got === "bigint" || typeof got === "number") && BigInt(got) === BigInt(want);
    if (!same) problems.push(`${name} is ${String(got)} in the module, ${want} in TypeScript`);
  }
  for (const name of exported.keys()) {
    if (!expected.has(name)) problems.push(`${name} is exported by the module but unknown to this wrapper`);
  }
  if (problems.length > 0) {
    throw new Error(`segscan.wasm does not match this build's constants (${problems.join("; ")}); rebuild it with \`npm run build:wasm\``);
  }
}
