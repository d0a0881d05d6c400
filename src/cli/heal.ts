/**
 * `segscan heal`: its flags and help. The command itself (./heal-command.ts)
 * loads when it runs, so `--help` loads no planner or scanner.
 */
import type { Command } from "commander";
import { type HealFlags, addScanFlags } from "./scan-flags.js";

/** `segscan heal`'s flags: the scan's, `--from` and `--apply`. */

const healCommand: typeof import("./heal-command.js").healCommand = async (...args) =>
  (await import("./heal-command.js")).healCommand(...args);

const HEAL_EXIT_HELP = `
Heal fills only partition segments: the metadata plane (metadata/) is replica-specific and never
copied between replicas. Name one partition directory here and the same partition of a peer
replica (mounted or copied here); the peer is only read. Both are scanned deep.

Exit status:
  0   nothing to heal
  1   the heal was applied and the partition scans clean now
  4   a dry run printed the plan, or heal refused (the message says why: the peer does not prove
      the range, the replicas diverged, they drew a segment boundary differently, the same directory)
  8   operational error: I/O, a failed partition, an unreadable path
  9   (1|8) the heal stopped part-way after changing files: the message says how to finish or undo
  16  usage error: bad flags, a path that is not one partition directory
  32  cancelled (Ctrl-C): the message says what was done`;

export function addHealCommand(program: Command, setExit: (code: number) => void): void {
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
    .action(async (path: string, flags: HealFlags, command: Command) => setExit(await healCommand(path, flags, command)));
}
