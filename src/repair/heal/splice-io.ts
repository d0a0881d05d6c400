/**
 * docs/heal.md: the bytes a healed log holds — pieces of the local `.log` and
 * of the peer's same-named `.log`, in order — hashed (what the plan and the
 * journal record as the new image) and copied into the staging file (what the
 * replace step renames over the log). Both stream in chunks; the peer is only
 * read.
 */
import * as path from "node:path";
import type { Engine } from "../../engine/types.js";
import { forEachChunk, hex64, withFile, writeExactly } from "../files.js";
import type { RepairFile, RepairFs } from "../fs-layer.js";

/** One byte range of a healed log (the plan's HealPieceSchema, steps/replace.ts; kept structural here so the step does not import the plan schema). */
export interface HealPiece {
  source: "local" | "peer";
  from: number;
  to: number;
}

/** A piece with the file it is read from. */
export interface SourcedPiece {
  file: string;
  from: number;
  to: number;
}

/** The files a healed log's pieces are read from: the local log, or the peer's `.log` of the same name. */
export function sourcedPieces(localLog: string, peerDir: string, pieces: readonly HealPiece[]): SourcedPiece[] {
  const peerLog = path.join(peerDir, path.basename(localLog));
  return pieces.map((piece) => ({ file: piece.source === "local" ? localLog : peerLog, from: piece.from, to: piece.to }));
}

async function withFiles<T>(fs: RepairFs, files: readonly string[], body: (handles: Map<string, RepairFile>) => Promise<T>): Promise<T> {
  const distinct = [...new Set(files)];
  const handles = new Map<string, RepairFile>();
  const open = async (i: number): Promise<T> => {
    if (i === distinct.length) return body(handles);
    return withFile(fs, distinct[i]!, "r", async (file) => {
      handles.set(distinct[i]!, file);
      return open(i + 1);
    });
  };
  return open(0);
}

/** XXH3-64 and length of the concatenated pieces. */
export async function digestPieces(
  fs: RepairFs,
  engine: Engine,
  pieces: readonly SourcedPiece[],
  chunkBytes: number,
  signal?: AbortSignal,
): Promise<{ xxh3: string; bytes: number }> {
  const hasher = engine.createHasher();
  let bytes = 0;
  await withFiles(
    fs,
    pieces.map((p) => p.file),
    async (handles) => {
      for (const piece of pieces) {
        await forEachChunk(
          handles.get(piece.file)!,
          piece.file,
          piece.from,
          piece.to - piece.from,
          chunkBytes,
          (c) => hasher.update(c),
          signal,
        );
        bytes += piece.to - piece.from;
      }
    },
  );
  return { xxh3: hex64(hasher.digest()), bytes };
}

/** Writes the concatenated pieces to `dest` (created or truncated), fsyncs it, and returns what was written. */
export async function copyPiecesToFile(
  fs: RepairFs,
  engine: Engine,
  pieces: readonly SourcedPiece[],
  dest: string,
  chunkBytes: number,
  signal?: AbortSignal,
): Promise<{ xxh3: string; bytes: number }> {
  const hasher = engine.createHasher();
  let written = 0;
  await withFiles(
    fs,
    pieces.map((p) => p.file),
    (handles) =>
      withFile(fs, dest, "w", async (output) => {
        for (const piece of pieces) {
          const base = written;
          await forEachChunk(
            handles.get(piece.file)!,
            piece.file,
            piece.from,
            piece.to - piece.from,
            chunkBytes,
            async (chunk, at) => {
              hasher.update(chunk);
              await writeExactly(output, chunk, chunk.length, base + at, dest);
            },
            signal,
          );
          written += piece.to - piece.from;
        }
        await output.truncate(written);
        await output.sync();
      }),
  );
  return { xxh3: hex64(hasher.digest()), bytes: written };
}
