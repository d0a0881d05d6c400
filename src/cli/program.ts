/** The commander program: commands and flags of docs/interfaces.md §9.2, exit status after fsck. */
import { Command, CommanderError, Option } from "commander";
import { DEFAULT_WINDOW_BYTES, MAX_WINDOW_BYTES, MIN_WINDOW_BYTES } from "../format/constants.js";
import type { SizeProfileName } from "../gen/index.js";
import { SEGSCAN_VERSION } from "../version.js";
import type { DumpFlags, GenFlags, RepairFlags } from "./commands.js";
import type { FleetFlags } from "./fleet.js";
import type { ForgetFlags } from "./forget.js";
import { describeCause } from "../io/errors.js";
import { escapeControlKeepingLines } from "../report/terminal-safe.js";
import { EXIT, OperationalError, UsageError, failureExitCode, isAbortError } from "./exit.js";
import {
  DUMP_EXIT_HELP,
  EXIT_HELP,
  FLEET_EXIT_HELP,
  FORGET_EXIT_HELP,
  HEAL_EXIT_HELP,
  RESTORE_EXIT_HELP,
  SALVAGE_EXIT_HELP,
} from "./help.js";
import { operandPath, parseBytes, parseInteger, parseOnce } from "./parse.js";
import { type HealFlags, type SalvageFlags, type ScanFlags, addScanFlags, engineOption } from "./scan-flags.js";
import { addScrubCommand } from "./scrub.js";

/*
 * Each command's module is imported when the command runs (docs/benchmarks.md "Cold code"):
 * `--help` and `--version` load no scanner, engine, schema or renderer, and `scan` loads
 * what scanning needs.
 */

/** `gen --size` choices, named here so `--help` loads no generator; the type check fails if one is missing or unknown. */
const SIZE_PROFILE_NAMES = ["tiny", "small", "medium", "large"] as const satisfies readonly SizeProfileName[];
const _everySizeProfileNamed: Exclude<SizeProfileName, (typeof SIZE_PROFILE_NAMES)[number]> extends never ? true : never = true;

type SetExit = (code: number) => void;

/** A repeatable option's values, in the order given. */
const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function buildProgram(setExit: SetExit): Command {
  const program = new Command("segscan");
  program
    .description(
      "Prove what Apache Iggy segment files really hold after a crash: cut only a provably torn tail, " +
        "refuse where damage hides durable data, never lose a byte.",
    )
    .version(SEGSCAN_VERSION, "-V, --version")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .configureOutput({ outputError: (text, write) => write(`segscan: ${escapeControlKeepingLines(text.replace(/^error: /, ""))}`) })
    .addHelpText("after", EXIT_HELP);
  // The order of `--help`'s command list.
  for (const add of [addScan, addReport, addFleet, addRepair, addSalvage, addHeal, addRestore, addForget, addDump, addGen, addDemo]) {
    add(program, setExit);
  }
  addScrubCommand(program, setExit);
  addBench(program, setExit);
  return program;
}

function addScan(program: Command, setExit: SetExit): void {
  addScanFlags(
    program
      .command("scan")
      .description("scan partitions and report what their segments hold (read-only)")
      .argument(
        "<path...>",
        "node root, data dir, any dir under it, partition dir, or one .log file (each node root gets its node checks)",
      ),
  )
    .option(
      "--ndjson",
      'print one JSON line per partition ("type":"partition") as each completes (path order), then a "type":"summary" line; memory stays flat',
    )
    .option("--verbose", "the text report in full: every finding's whole explanation and next step, every segment of a problem partition")
    .option("--all", "the text report also lists the clean partitions (otherwise counted)")
    .option(
      "--html <file>",
      "also write a self-contained HTML report (byte maps of every segment) to <file> (not -: stdout carries the scan's report)",
    )
    .addHelpText("after", EXIT_HELP)
    .action(async (paths: string[], flags: ScanFlags, command: Command) =>
      setExit(await (await import("./scan-command.js")).scanCommand(paths.map(operandPath), flags, command)),
    );
}

function addReport(program: Command, setExit: SetExit): void {
  program
    .command("report")
    .description("draw a saved `scan --json` or `--ndjson` report as a self-contained HTML page (- reads stdin)")
    .argument("<scan.json>", "a report written by `segscan scan --json` or `--ndjson`")
    .requiredOption("--html <file>", "write the HTML report to <file> (- writes it to stdout)")
    .action(async (file: string, flags: { html: string }) => setExit(await (await import("./report-html.js")).reportCommand(file, flags)));
}

function addFleet(program: Command, setExit: SetExit): void {
  program
    .command("fleet")
    .description(
      "the cluster view: merge several nodes' `scan --json` or `--ndjson` reports, per partition what the cluster " +
        "still holds, what is lost on every replica, which replica to rebuild from, lagging and divergent replicas",
    )
    .argument("<report...>", "a node's report, as name=path (the name labels the node) or path (labelled by the report's node root)")
    .option("--json", "print the cluster view as JSON (docs/fleet.schema.json), partitions streamed as they are merged")
    .option(
      "--html <file>",
      "also write one HTML page (partitions as rows, replicas as lanes on one offset scale) to <file> (- for stdout)",
    )
    .addHelpText("after", FLEET_EXIT_HELP)
    .action(async (reports: string[], flags: FleetFlags, command: Command) =>
      setExit(await (await import("./fleet.js")).fleetCommand(reports, flags, command)),
    );
}

function addRepair(program: Command, setExit: SetExit): void {
  addScanFlags(
    program
      .command("repair")
      .description(
        "print the repair plan; with --apply, carry it out (cut bytes are preserved and journaled). " +
          "Stop iggy-server first: on Linux --apply refuses while another process has a file it would change open for writing",
      )
      .argument("<path...>", "one node root, or data dirs, dirs under them, partition dirs, or .log files")
      .option("--apply", "carry out the plan, then re-scan the repaired partitions")
      .option(
        "--clamp-offsets",
        "node root: also rewrite consumer offsets ahead of the partition head to the head, complete torn offset records, and move offsets of empty partitions aside (changes what a consumer reads next)",
      ),
  )
    .addHelpText("after", EXIT_HELP)
    .action(async (paths: string[], flags: RepairFlags, command: Command) =>
      setExit(await (await import("./commands.js")).repairCommand(paths.map(operandPath), flags, command)),
    );
}

function addSalvage(program: Command, setExit: SetExit): void {
  addScanFlags(
    program
      .command("salvage")
      .description(
        "the last copy of a refused partition: keep every batch that verifies and extends the chain, drop only the bytes " +
          "nothing proves (recorded as lost, preserved first); prints the plan, --apply carries it out",
      )
      .argument("<partition>", "one refused partition dir")
      .option("--apply", "carry out the plan, then re-scan the partition"),
  )
    .addHelpText("after", SALVAGE_EXIT_HELP)
    .action(async (path: string, flags: SalvageFlags, command: Command) =>
      setExit(await (await import("./one-partition.js")).salvageCommand(operandPath(path), flags, command)),
    );
}

function addHeal(program: Command, setExit: SetExit): void {
  addScanFlags(
    program
      .command("heal")
      .description(
        "fill what this replica's partition lacks or holds damaged (unreadable, torn, a salvaged gap) with a peer replica's " +
          "batches, once the peer proves them (checksums, equal neighbours, a continuous chain); partition segments only, " +
          "never the metadata plane; prints the plan, --apply carries it out (preserved first; segscan restore undoes it)",
      )
      .argument("<partition>", "the damaged partition dir on this node")
      .requiredOption("--from <peer>", "the same partition's dir of a peer replica (only read)")
      .option("--apply", "carry out the plan, then re-scan the partition"),
  )
    .addHelpText("after", HEAL_EXIT_HELP)
    .action(async (path: string, flags: HealFlags, command: Command) =>
      setExit(await (await import("./one-partition.js")).healCommand(path, flags, command)),
    );
}

function addRestore(program: Command, setExit: SetExit): void {
  program
    .command("restore")
    .description(
      "undo applied repairs and salvages from their journals (each changed dir's .segscan/journal.jsonl); " +
        "given a node root or a data dir, restores metadata/ and every partition below it that has a journal. Stop iggy-server first",
    )
    .argument("<path>", "a node root or data dir, a repaired partition dir or metadata dir, or its .segscan dir")
    .option("--json", "print the result as JSON")
    .addHelpText("after", RESTORE_EXIT_HELP)
    .action(async (dir: string, flags: { json?: boolean }) =>
      setExit(await (await import("./commands.js")).restoreCommand(operandPath(dir), flags)),
    );
}

function addForget(program: Command, setExit: SetExit): void {
  program
    .command("forget")
    .description(
      "delete preserved copies (<dir>.segscan residues, .replaced files) no restore needs any more, closing their journal runs; " +
        "prints what it would do, --apply does it (docs/repair.md §6.7)",
    )
    .argument("<path...>", "a partition dir, a metadata dir, its .segscan dir, or a data dir holding them")
    .option("--older-than <age>", "only runs begun at least this long ago (30d, 12h, 90m)")
    .option("--lost-offsets", "instead: clear the record of offsets a salvage recorded as lost, so scans stop reporting them")
    .option("--apply", "carry it out")
    .option("--json", "print the result as JSON")
    .addHelpText("after", FORGET_EXIT_HELP)
    .action(async (paths: string[], flags: ForgetFlags) =>
      setExit(await (await import("./forget.js")).forgetCommand(paths.map(operandPath), flags)),
    );
}

function addDump(program: Command, setExit: SetExit): void {
  program
    .command("dump")
    .description(
      "list a .log's batches (position, offsets, count, timestamps, length, verify result), a .index's entries, " +
        "a metadata journal.wal's entries (op, parent, checksums, size, verify result) or a snapshot.bin's trailer, header and counts",
    )
    .argument("<file>", "a segment .log or .index, or a node's metadata/journal.wal or metadata/snapshot.bin")
    .option("--messages", "also list every message frame (offset, timestamp, id, sizes, checksum, payload preview)")
    .option("--json", "print JSON (u64 values as decimal strings)")
    .addOption(engineOption())
    .option(
      "--window <bytes>",
      `verification window; larger batches are streamed (${MIN_WINDOW_BYTES}..${MAX_WINDOW_BYTES})`,
      parseBytes(MIN_WINDOW_BYTES, MAX_WINDOW_BYTES),
      DEFAULT_WINDOW_BYTES,
    )
    .addHelpText("after", DUMP_EXIT_HELP)
    .action(async (file: string, flags: DumpFlags, command: Command) =>
      setExit(await (await import("./commands.js")).dumpCommand(operandPath(file), flags, command)),
    );
}

function addGen(program: Command, setExit: SetExit): void {
  program
    .command("gen")
    .description("write a realistic sample data dir, optionally with one named fault injected")
    .argument("[dir]", "target directory (created; must be empty)")
    .option(
      "--scenario <name>",
      "inject this fault (see --list); repeat for several: the i-th goes into the i-th partition (path order)",
      collect,
      [] as string[],
    )
    .option("--list", "list the fault scenarios and their expected verdicts")
    .option("--seed <n>", "PRNG seed: the same seed writes the same bytes", parseInteger(0, 0xffffffff), 1)
    .addOption(new Option("--size <profile>", "size profile").choices(SIZE_PROFILE_NAMES).default("small"))
    .option("--segments <n>", "segments per partition", parseInteger(1, 100_000))
    .option("--segment-bytes <bytes>", "close a segment at this size (e.g. 512KiB, 16MiB)", parseBytes(1024, 2 ** 30))
    .option(
      "--flush-bytes <bytes>",
      "one index entry per flushed chunk of this size, at least 8KiB (the server's cadence is 1MiB)",
      parseBytes(1024, 2 ** 30),
    )
    .option("--topics <n>", "topics per stream", parseInteger(1, 10_000))
    .option("--partitions <n>", "partitions per topic", parseInteger(1, 10_000))
    .option("--force", "write even if the directory is not empty")
    .option("--node", "also write metadata/ (WAL, snapshot, superblocks): a whole node root")
    .option(
      "--cluster <n>",
      "write n node roots of one cluster (<dir>/node-0 …), the same bytes on each replica, then replica-specific faults (see --list)",
      parseInteger(2, 255),
    )
    .option(
      "--cluster-fault <name>",
      "with --cluster: inject only these cluster faults (repeatable; default: all; `none` for a clean cluster)",
      collect,
      [] as string[],
    )
    .option(
      "--node-fault <name>",
      "inject this metadata-plane fault (see --list); implies --node; one per data dir",
      parseOnce("--node-fault", "gen injects one node fault per data dir, so the scan has one expected finding to show"),
    )
    .option("--json", "print what was written as JSON")
    .action(async (dir: string | undefined, flags: GenFlags) => setExit(await (await import("./commands.js")).genCommand(dir, flags)));
}

function addDemo(program: Command, setExit: SetExit): void {
  program
    .command("demo")
    .description("write a sample with faults to a temp dir, scan it, show the report and the repair plan")
    .addOption(engineOption())
    .option("--no-progress", "never show the progress bar")
    .action(async (flags: { engine: "wasm" | "ts"; progress: boolean }, command: Command) =>
      setExit(await (await import("./commands.js")).demoCommand(flags, command)),
    );
}

function addBench(program: Command, setExit: SetExit): void {
  program
    .command("bench")
    .description("run the benchmark suite (docs/benchmarks.md §10)")
    .option("--json", "machine-readable results")
    .option("--quick", "small inputs (16 MiB) for a fast smoke run")
    .option("--scaling", "the scaling check: scans at 64 MiB, 256 MiB and 1 GiB, and the probe's budget plateau")
    .action(async (flags: { json?: boolean; quick?: boolean; scaling?: boolean }) =>
      setExit(await (await import("./commands.js")).benchCommand(flags)),
    );
}

function report(message: string): void {
  process.stderr.write(`segscan: ${escapeControlKeepingLines(message)}\n`);
}

/** Parses `argv` and runs the command; resolves to the process exit status. */
export async function run(argv: readonly string[]): Promise<number> {
  let code: number = EXIT.CLEAN;
  const program = buildProgram((value) => {
    code = value;
  });
  if (argv.length <= 2) {
    program.outputHelp({ error: true });
    return EXIT.USAGE;
  }
  try {
    await program.parseAsync([...argv]);
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.CLEAN : EXIT.USAGE;
    if (error instanceof UsageError) {
      report(error.message);
      return EXIT.USAGE;
    }
    if (isAbortError(error)) {
      report((error as Error).message.replace(/^segscan: /, ""));
      return EXIT.CANCELLED;
    }
    if (error instanceof OperationalError) {
      report(error.message);
      return EXIT.OPERATIONAL;
    }
    const err = error as NodeJS.ErrnoException & { dest?: string };
    if (typeof err.code === "string" && typeof err.syscall === "string") {
      // A raw errno error that no command put into words: say what failed, where, and why.
      report(`cannot ${err.syscall}${err.path ? ` ${err.path}` : ""}${err.dest ? ` to ${err.dest}` : ""}: ${describeCause(err)}`);
    } else {
      report(`${err.name && err.name !== "Error" ? `${err.name}: ` : ""}${err.message ?? String(error)}`);
    }
    if (process.env.SEGSCAN_DEBUG) process.stderr.write(`${err.stack ?? ""}\n`);
    return failureExitCode(error);
  }
}
