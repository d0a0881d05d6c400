/**
 * `segscan salvage`: its flags and help. The command itself (./salvage-command.ts)
 * loads when it runs, so `--help` loads no planner or scanner (docs/benchmarks.md).
 */
import type { Command } from "commander";
import { type SalvageFlags, addScanFlags } from "./scan-flags.js";
import { operandPath } from "./parse.js";

export type { SalvageFlags } from "./scan-flags.js";

const salvageCommand: typeof import("./salvage-command.js").salvageCommand = async (...args) =>
  (await import("./salvage-command.js")).salvageCommand(...args);

const SALVAGE_EXIT_HELP = `
Exit status:
  0   nothing to do (never for a refused partition)
  1   the salvage was applied and the partition scans clean now (its lost offsets show as forward gaps,
      and every scan names them until \`segscan forget <partition> --lost-offsets --apply\`)
  4   a dry run printed the plan, or salvage refused (the message says why and what to do instead)
  8   operational error: I/O, a failed partition, an unreadable path
  9   (1|8) the salvage stopped part-way after changing files: the message says how to finish or undo
  16  usage error: bad flags, a path that is not one partition directory
  32  cancelled (Ctrl-C): the message says what was done`;

export function addSalvageCommand(program: Command, setExit: (code: number) => void): void {
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
      setExit(await salvageCommand(operandPath(path), flags, command)),
    );
}
