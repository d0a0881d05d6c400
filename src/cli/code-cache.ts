/**
 * The CLI's bundle compiled from V8's code cache (docs/benchmarks.md "Cold
 * code"). `npm run build` writes the whole CLI into one CommonJS file,
 * `dist/segscan-cli.cjs` (scripts/bundle.mjs). Running it through `vm.Script`
 * lets V8 keep the code it compiled: after the first run of each command
 * (`scan`, `repair`, …) the bytecode of every function that has run, in this
 * run and in those the file already held, is written to a cache file, and later
 * runs start from it instead of parsing and compiling again.
 *
 * The cache file is named by what makes V8's code valid: the Node and V8
 * versions, the platform, the V8 flags the process was started with, and the
 * bundle's bytes (a SHA-1 of them). It is kept in the user's cache directory
 * (`$SEGSCAN_CODE_CACHE`, else `$XDG_CACHE_HOME/segscan`, else
 * `~/.cache/segscan`), never beside the data: nothing is written when that
 * directory lies inside a path named on the command line, and
 * `SEGSCAN_CODE_CACHE=off` turns the cache off. Every failure is silent and
 * costs only the cache: an unreadable or unwritable directory, a file whose
 * checksum does not match (a torn or altered write), or data V8 rejects
 * (`cachedDataRejected`) compile the bundle from source as if there were no
 * cache, and a rejected or damaged file is replaced.
 *
 * Only `node:` modules are loaded here: this runs before anything else.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import * as vm from "node:vm";
import * as zlib from "node:zlib";

/** The environment variable naming the cache directory, or `off`. */
export const CODE_CACHE_ENV = "SEGSCAN_CODE_CACHE";
/** Set to `1`: run the compiled modules of dist/src instead of the bundle (to see which modules a command loads). */
export const NO_BUNDLE_ENV = "SEGSCAN_NO_BUNDLE";

/** The first bytes of a cache file: the format of what follows (a CRC-32 of the V8 data, then the data). */
const CACHE_MAGIC = Buffer.from("segscan-v8-cache-1\n", "latin1");
const CRC_BYTES = 4;
/** The length of the list of commands a file holds the code of (UTF-8 bytes, a 16-bit count). */
const LENGTH_BYTES = 2;
/**
 * Cache files kept in the directory: one per bundle and runtime, so a new build or Node leaves the old one
 * behind; beyond this many the oldest go (each is under a MiB).
 */
const MAX_CACHE_FILES = 8;
/** Commands one file records (segscan has about a dozen): a bound on how often a file is rewritten. */
const MAX_COMMANDS = 32;

interface CacheFile {
  /** The commands (the first argument: `scan`, `repair`, …) whose code ran when the data was made. */
  commands: string[];
  data: Buffer;
}

/** How the bundle was loaded, for the caller to finish with `save()` and for tests to see. */
export interface LoadedBundle {
  /** The bundle's exports (src/cli/program.ts). */
  exports: Record<string, unknown>;
  /** The cache file used or to be written; null when the cache is off or has no place. */
  cacheFile: string | null;
  /** `used`: V8 took the cached code; `none`: no file yet; `rejected`: V8 refused it; `damaged`: its checksum failed; `off`. */
  cache: "used" | "none" | "rejected" | "damaged" | "off";
  /** After the command ran: writes the cache file from the code compiled so far, when there was no usable one or it lacked this command's code. */
  save(): void;
}

/** The CommonJS wrapper Node itself puts around a `.cjs` file, so the bundle sees the same free variables. */
const WRAPPER_HEAD = "(function (exports, require, module, __filename, __dirname) { ";
const WRAPPER_TAIL = "\n})";

/**
 * The bundle at `bundlePath`, compiled (from the cache when it holds valid
 * code) and evaluated; null when this runtime cannot run it so (then the
 * caller imports the compiled modules). `argv`: the command line, whose paths
 * the cache must stay out of.
 */
export function loadBundle(bundlePath: string, argv: readonly string[], env: NodeJS.ProcessEnv = process.env): LoadedBundle | null {
  if (env[NO_BUNDLE_ENV] === "1" || !canRunBundle() || !existsSync(bundlePath)) return null;
  const sourceBytes = readFileSync(bundlePath);
  const source = WRAPPER_HEAD + sourceBytes.toString("utf8") + WRAPPER_TAIL;
  const cacheFile = cacheFileFor(sourceBytes, argv, env);
  // The command this run is for: its code joins the cache when the file does not hold it yet (V8 saves only code that ran).
  const command = argv[2] !== undefined && !argv[2].startsWith("-") ? argv[2] : "(options)";
  let cachedData: Buffer | undefined;
  let commands: string[] = [];
  let cache: LoadedBundle["cache"] = cacheFile === null ? "off" : "none";
  if (cacheFile !== null) {
    const read = readCacheFile(cacheFile);
    if (read === "damaged") cache = "damaged";
    else if (read !== null) {
      cachedData = read.data;
      commands = read.commands;
    }
  }
  const script = new vm.Script(source, {
    filename: bundlePath,
    ...(cachedData === undefined ? {} : { cachedData }),
    // `import()` inside the bundle (a module outside it, such as the bench suite) goes to Node's own loader.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cachedData !== undefined) cache = script.cachedDataRejected === true ? "rejected" : "used";
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} as Record<string, unknown> };
  wrapper.call(module.exports, module.exports, createRequire(bundlePath), module, bundlePath, dirname(bundlePath));
  return {
    exports: module.exports,
    cacheFile,
    cache,
    save: () => {
      if (cacheFile === null || (cache === "used" && commands.includes(command))) return;
      const covered = cache === "used" ? [...commands, command] : [command];
      if (covered.length <= MAX_COMMANDS) writeCacheFile(cacheFile, covered, script.createCachedData());
    },
  };
}

/**
 * Whether this runtime runs the bundle: a script's `import()` through Node's own loader
 * (`vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER`) and `zlib.crc32` arrived in Node 20.12 and 20.15;
 * an older Node, or Deno, runs the compiled modules.
 */
function canRunBundle(): boolean {
  return (
    vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER !== undefined &&
    typeof zlib.crc32 === "function" &&
    typeof (globalThis as { Deno?: unknown }).Deno === "undefined"
  );
}

/** The cache directory the environment names, or null when the cache is off or no directory can be named. */
export function cacheDirectory(env: NodeJS.ProcessEnv): string | null {
  const named = env[CODE_CACHE_ENV];
  if (named !== undefined && named !== "") return named === "off" ? null : resolve(named);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg.startsWith("/")) return join(xdg, "segscan");
  let home: string;
  try {
    home = homedir();
  } catch {
    return null;
  }
  return home === "" ? null : join(home, ".cache", "segscan");
}

/** The cache file for these bundle bytes under this runtime, or null (no directory, or one inside a path on the command line). */
function cacheFileFor(sourceBytes: Buffer, argv: readonly string[], env: NodeJS.ProcessEnv): string | null {
  const directory = cacheDirectory(env);
  if (directory === null) return null;
  // Never inside what is scanned or repaired: any argument that names a directory the cache lies in rules it out.
  for (const arg of argv.slice(2)) {
    if (arg.startsWith("-") || arg === "") continue;
    const named = resolve(arg);
    if (directory === named || directory.startsWith(named.endsWith(sep) ? named : named + sep)) return null;
  }
  const key = createHash("sha1")
    .update([process.version, process.versions.v8, process.platform, process.arch, ...process.execArgv, env.NODE_OPTIONS ?? ""].join("\0"))
    .update("\0")
    .update(sourceBytes)
    .digest("hex");
  return join(directory, `cli-${key.slice(0, 32)}.v8cache`);
}

/** A cache file's V8 data and the commands whose code it holds; null when there is none; `damaged` when its framing or checksum is wrong. */
function readCacheFile(file: string): CacheFile | null | "damaged" {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  const headerBytes = CACHE_MAGIC.length + CRC_BYTES + LENGTH_BYTES;
  if (bytes.length <= headerBytes || !bytes.subarray(0, CACHE_MAGIC.length).equals(CACHE_MAGIC)) return "damaged";
  const body = bytes.subarray(CACHE_MAGIC.length + CRC_BYTES);
  // V8 checks versions, flags and the source's length, not the data itself (its checksum is a debug-build check).
  if (bytes.readUInt32LE(CACHE_MAGIC.length) !== zlib.crc32(body)) return "damaged";
  const commandsBytes = body.readUInt16LE(0);
  if (LENGTH_BYTES + commandsBytes >= body.length) return "damaged";
  const commands = body.subarray(LENGTH_BYTES, LENGTH_BYTES + commandsBytes).toString("utf8");
  return { commands: commands === "" ? [] : commands.split("\n"), data: body.subarray(LENGTH_BYTES + commandsBytes) };
}

/** Writes the file whole or not at all (a temporary file renamed over it); any failure only leaves the cache out. */
function writeCacheFile(file: string, commands: readonly string[], data: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    pruneCacheFiles(dirname(file));
    const commandBytes = Buffer.from(commands.join("\n"), "utf8");
    const length = Buffer.alloc(LENGTH_BYTES);
    length.writeUInt16LE(commandBytes.length);
    const body = Buffer.concat([length, commandBytes, data]);
    const crc = Buffer.alloc(CRC_BYTES);
    crc.writeUInt32LE(zlib.crc32(body));
    writeFileSync(temporary, Buffer.concat([CACHE_MAGIC, crc, body]), { mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // the directory is not ours to clean: the cache is simply not kept
    }
  }
}

/** Before a new file is written: the oldest cache files beyond `MAX_CACHE_FILES - 1` are removed (old bundles, old Nodes). */
function pruneCacheFiles(directory: string): void {
  const files = readdirSync(directory)
    .filter((name) => name.startsWith("cli-") && name.endsWith(".v8cache"))
    .map((name) => {
      const path = join(directory, name);
      return { path, mtimeMs: statSync(path).mtimeMs };
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const stale of files.slice(MAX_CACHE_FILES - 1)) rmSync(stale.path, { force: true });
}
