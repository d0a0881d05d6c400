/**
 * Streaming byte helpers for repair and restore: every read, copy, hash and
 * comparison goes through one bounded buffer, so preserving a 1 GiB residue
 * costs the chunk size in memory, never the residue's size.
 */
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import type { Engine } from "../engine/types.js";
import { hex64, isAllZero } from "../format/bytes.js";
import { type PositionalRead, forEachChunk as forEachChunkOf, readExactly as readExactlyAt } from "../io/read-exactly.js";
import { assert } from "../assert.js";
import { PreserveError, RepairError } from "./errors.js";
import type { RepairFile, RepairFs } from "./fs-layer.js";
import { OFFSET_RECORD_BYTES } from "../format/partition-files.js";

/** Default chunk of every streamed copy, hash and comparison. */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024;

/** A repair run's id: its start time and 4 random bytes (journal and preserve-dir names). */
export function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, "")}-${randomBytes(4).toString("hex")}`;
}

/** XXH3-64 as the journal writes it: 16 lower-case hex digits (defined with the byte helpers). */
export { hex64 } from "../format/bytes.js";

/** The path each file `withFile` opened was opened at, so a failed write can name it. */
const openedPaths = new WeakMap<RepairFile, string>();

export async function withFile<T>(
  fs: RepairFs,
  filePath: string,
  mode: "r" | "r+" | "w",
  body: (file: RepairFile) => Promise<T>,
): Promise<T> {
  const file = await fs.open(filePath, mode);
  openedPaths.set(file, filePath);
  try {
    return await body(file);
  } finally {
    await file.close();
  }
}

/** Reads exactly `length` bytes at `position`, or throws: a short read is never taken as the file's content. */
export async function readExactly(file: RepairFile, filePath: string, buffer: Uint8Array, length: number, position: number): Promise<void> {
  await readExactlyAt(positional(file), buffer.subarray(0, length), position, {
    readFailed: (cause) => cause,
    endedAt: (at) =>
      new RepairError(`${filePath} ended at byte ${at}, before the ${length} bytes expected at ${position}`, {
        path: filePath,
        position: at,
      }),
  });
}

/** A RepairFile as the io loops read it. */
function positional(file: RepairFile): PositionalRead {
  return { read: (target, position) => file.read(target, 0, target.length, position) };
}

/**
 * Writes exactly `length` bytes at `position` (null appends), or throws: a
 * write that makes no progress would otherwise be retried forever.
 */
export async function writeExactly(
  file: RepairFile,
  buffer: Uint8Array,
  length: number,
  position: number | null,
  filePath: string = openedPaths.get(file) ?? "a file opened outside withFile",
): Promise<void> {
  let done = 0;
  while (done < length) {
    const n = await file.write(buffer, done, length - done, position === null ? null : position + done);
    if (!(n > 0)) {
      const at = position === null ? `${done} bytes into an append` : `byte ${position + done}`;
      throw new RepairError(`cannot write ${filePath}: the write at ${at} wrote ${n} of ${length - done} bytes (no progress)`, {
        path: filePath,
        ...(position === null ? {} : { position: position + done }),
      });
    }
    done += n;
  }
}

/**
 * Calls `visit` with `[from, from + length)` of an open file, chunk by chunk,
 * in order. An aborted `signal` stops before the next chunk (a copy of a large
 * residue answers Ctrl-C within one chunk; every caller's step is idempotent).
 */
export async function forEachChunk(
  file: RepairFile,
  filePath: string,
  from: number,
  length: number,
  chunkBytes: number,
  visit: (bytes: Uint8Array, at: number) => Promise<void> | void,
  signal?: AbortSignal,
): Promise<void> {
  const buffer = new Uint8Array(Math.max(1, Math.min(chunkBytes, length)));
  await forEachChunkOf(
    from,
    length,
    buffer.length,
    async (position, bytes) => {
      await readExactly(file, filePath, buffer, bytes, position);
      return buffer.subarray(0, bytes);
    },
    visit,
    signal,
  );
}

/** One byte range `[from, to)` of a named file: a piece of what a digest or copy streams, in order. */
export interface SourcedPiece {
  file: string;
  from: number;
  to: number;
}

/** What streaming pieces saw: the XXH3-64 of their concatenation, its length, and whether every byte was zero. */
export interface StreamedBytes {
  xxh3: string;
  bytes: number;
  allZero: boolean;
}

/** Where `streamPieces` writes: a new file (created or overwritten, fsynced); `sparse` skips all-zero chunks (the truncate extends the file). */
export interface StreamDest {
  path: string;
  sparse: boolean;
}

/**
 * Streams the concatenation of `pieces` through XXH3-64 and, with `dest`, into
 * a new file. Each distinct source is opened once, in order of first use, then
 * `dest`. A sparse copy writes no all-zero chunk, so a 2 GiB sparse file costs
 * no 2 GiB of disk to preserve.
 */
export async function streamPieces(
  fs: RepairFs,
  engine: Engine,
  pieces: readonly SourcedPiece[],
  chunkBytes: number,
  signal?: AbortSignal,
  dest?: StreamDest,
): Promise<StreamedBytes> {
  const hasher = engine.createHasher();
  let written = 0;
  let allZero = true;
  const stream = async (handles: Map<string, RepairFile>, output: RepairFile | null): Promise<void> => {
    for (const piece of pieces) {
      const input = handles.get(piece.file);
      assert(input !== undefined, "every piece's file was opened");
      assert(piece.from <= piece.to, "a piece is a range [from, to)");
      const base = written;
      await forEachChunk(
        input,
        piece.file,
        piece.from,
        piece.to - piece.from,
        chunkBytes,
        async (bytes, at) => {
          hasher.update(bytes);
          const zero = (allZero || dest?.sparse === true) && isAllZero(bytes);
          if (!zero) allZero = false;
          if (output !== null && dest !== undefined && !(dest.sparse && zero)) {
            await writeExactly(output, bytes, bytes.length, base + at, dest.path);
          }
        },
        signal,
      );
      written += piece.to - piece.from;
    }
    if (output !== null) {
      await output.truncate(written);
      await output.sync();
    }
  };
  await withFiles(
    fs,
    pieces.map((piece) => piece.file),
    (handles) => (dest === undefined ? stream(handles, null) : withFile(fs, dest.path, "w", (output) => stream(handles, output))),
  );
  return { xxh3: hex64(hasher.digest()), bytes: written, allZero };
}

/** Opens each distinct file once, read-only, in order of first use, and runs `body` with them all open. */
async function withFiles<T>(fs: RepairFs, files: readonly string[], body: (handles: Map<string, RepairFile>) => Promise<T>): Promise<T> {
  const distinct = [...new Set(files)];
  const handles = new Map<string, RepairFile>();
  const open = async (i: number): Promise<T> => {
    const file = distinct[i];
    if (file === undefined) return body(handles);
    return withFile(fs, file, "r", async (handle) => {
      handles.set(file, handle);
      return open(i + 1);
    });
  };
  return open(0);
}

/** XXH3-64 of `[from, from + length)` of a file, and whether every byte of it is zero. */
export async function digestRange(
  fs: RepairFs,
  engine: Engine,
  filePath: string,
  from: number,
  length: number,
  chunkBytes: number,
  signal?: AbortSignal,
): Promise<StreamedBytes> {
  return streamPieces(fs, engine, [{ file: filePath, from, to: from + length }], chunkBytes, signal);
}

/** Byte ranges `[from, to)` of one file, in the order a salvaged log holds them (docs/repair.md §6.5). */
export type ByteRanges = readonly { from: number; to: number }[];

/** docs/heal.md: the files a healed log's pieces are read from, the local log or the peer's `.log` of the same name (the peer is only read). */
export function sourcedPieces(
  localLog: string,
  peerDir: string,
  pieces: readonly { source: "local" | "peer"; from: number; to: number }[],
): SourcedPiece[] {
  const peerLog = path.join(peerDir, path.basename(localLog));
  return pieces.map((piece) => ({ file: piece.source === "local" ? localLog : peerLog, from: piece.from, to: piece.to }));
}

/** The pieces of `filePath` that `ranges` name. */
export function piecesOf(filePath: string, ranges: ByteRanges): SourcedPiece[] {
  return ranges.map((range) => ({ file: filePath, from: range.from, to: range.to }));
}

export interface PreservedCopy {
  /** Name inside the preserve directory. */
  file: string;
  bytes: number;
  xxh3: string;
}

/** What `preserveRange` kept: a copy, or (with `zeroByLength`, bytes all zero) nothing but the length and hash. */
export type PreservedRange = PreservedCopy | { file: null; bytes: number; xxh3: string };

/** A range of `source` to preserve under `baseName` in `preserveDir`. */
export interface PreserveRequest {
  source: string;
  from: number;
  length: number;
  preserveDir: string;
  baseName: string;
  chunkBytes: number;
  signal: AbortSignal | undefined;
  /** A range that turns out all zero is not kept as a file, but recorded by length and hash (`file: null`); restore re-extends the file with zeros. */
  zeroByLength: boolean;
}

/**
 * Copies `[from, from + length)` of `source` into the preserve directory under
 * `baseName` and makes it durable: the bytes go to `<baseName>.tmp`, are
 * fsynced, read back and checked against the hash taken while copying, then
 * renamed into place and the directory is fsynced. A file already holding
 * exactly these bytes under the chosen name (a crashed earlier run) is simply
 * replaced by the identical copy; a different file under that name is kept and
 * the copy takes the next free `<baseName>.<n>`.
 */
export async function preserveRange(fs: RepairFs, engine: Engine, request: PreserveRequest): Promise<PreservedRange> {
  const { source, from, length, preserveDir, baseName, chunkBytes, signal, zeroByLength } = request;
  const tmp = path.join(preserveDir, `${baseName}.tmp`);
  let xxh3: string;
  try {
    const copied = await streamPieces(fs, engine, [{ file: source, from, to: from + length }], chunkBytes, signal, {
      path: tmp,
      sparse: true,
    });
    xxh3 = copied.xxh3;
    if (zeroByLength && copied.allZero) {
      await fs.unlink(tmp);
      return { file: null, bytes: length, xxh3 };
    }
    const check = await digestRange(fs, engine, tmp, 0, length, chunkBytes, signal);
    const size = (await fs.stat(tmp))?.size;
    if (check.xxh3 !== xxh3 || size !== length) {
      throw new PreserveError(`the copy of ${source} [${from}, ${from + length}) in ${tmp} does not read back identical`, {
        path: tmp,
        position: from,
      });
    }
  } catch (error) {
    throw await removePartialCopy(fs, tmp, error);
  }
  const file = await freeName(fs, preserveDir, baseName, async (existing) => {
    const stat = await fs.stat(existing);
    return (
      stat !== null && stat.isFile && stat.size === length && (await digestRange(fs, engine, existing, 0, length, chunkBytes)).xxh3 === xxh3
    );
  });
  await fs.rename(tmp, path.join(preserveDir, file));
  await fs.syncDir(preserveDir);
  return { file, bytes: length, xxh3 };
}

/**
 * A copy into the preserve dir failed (a full disk, an I/O error, a bad read
 * back): its partial `.tmp` is removed so it does not keep the filesystem
 * full, and the error says so. This runs before any destructive step of the
 * repair, and the `.tmp` only ever holds a copy, so nothing is lost. A crashed
 * process (an `InjectedFault`) cleans up nothing: the next run overwrites it.
 */
async function removePartialCopy(fs: RepairFs, tmp: string, error: unknown): Promise<unknown> {
  if ((error as Error | null)?.name === "AbortError") {
    await fs.unlink(tmp).catch(() => {}); // a cancel: the next run would overwrite it anyway
    return error;
  }
  if (!(error instanceof RepairError)) return error;
  try {
    await fs.unlink(tmp);
    error.message += `; the partial copy ${tmp} was removed`;
  } catch (cleanup) {
    error.message += `; the partial copy ${tmp} could not be removed either (${(cleanup as Error).message}): delete it by hand`;
  }
  return error;
}

/**
 * The first of `base`, `base.1`, `base.2`, … in `dir` that is free, or that
 * `reusable` accepts (an identical copy from a crashed earlier run).
 */
export async function freeName(
  fs: RepairFs,
  dir: string,
  base: string,
  reusable?: (existingPath: string) => Promise<boolean>,
): Promise<string> {
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}.${n}`;
    const full = path.join(dir, name);
    if ((await fs.stat(full)) === null) return name;
    if (reusable !== undefined && (await reusable(full))) return name;
  }
}

/** Moves a file into `destDir` under a free name derived from its own (`moveBetweenDirs`). Returns the new name. */
export async function moveAside(fs: RepairFs, filePath: string, destDir: string, suffix = ""): Promise<string> {
  const name = await freeName(fs, destDir, path.basename(filePath) + suffix);
  await moveBetweenDirs(fs, filePath, path.join(destDir, name));
  return name;
}

/** errno codes of a filesystem that has no hard links: the move falls back to one rename. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Moves a file from one directory to another so that no crash can leave it
 * under neither name (docs/repair.md §6.2): link it under its new name, fsync
 * the new directory, then remove the old name and fsync the old directory.
 * A crash in between leaves it under both names (one file, two names; restore
 * and a new repair both accept that). A rename persists its two halves with
 * two directories, and a power cut between their fsyncs may keep only the
 * removal on some filesystems. Where hard links are not supported, it falls
 * back to rename + both fsyncs. `to` must not exist.
 */
export async function moveBetweenDirs(fs: RepairFs, from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || !NO_HARD_LINKS.has(code)) throw error;
    await fs.rename(from, to);
    await fs.syncDir(path.dirname(to));
    await fs.syncDir(path.dirname(from));
    return;
  }
  await fs.syncDir(path.dirname(to));
  await fs.unlink(from);
  await fs.syncDir(path.dirname(from));
}

/** The offset an offset file stores now (its first 8 bytes, decimal), or null when it is gone or shorter. */
export async function storedOffsetNow(fs: RepairFs, filePath: string): Promise<string | null> {
  const leading = new Uint8Array(OFFSET_RECORD_BYTES);
  const stat = await fs.stat(filePath);
  const length = Math.min(stat?.size ?? 0, OFFSET_RECORD_BYTES);
  let stored: string | null = null;
  if (stat !== null && length >= 8) {
    await withFile(fs, filePath, "r", async (file) => {
      for (let done = 0; done < length; ) {
        const count = await file.read(leading, done, length - done, done);
        if (count <= 0) break;
        done += count;
      }
    });
    stored = new DataView(leading.buffer).getBigUint64(0, true).toString();
  }
  return stored;
}
