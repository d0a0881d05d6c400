/**
 * `segscan fleet`'s flags and exit-status help, apart from the command so that
 * `--help` loads no merger, schema or renderer (issue 23).
 */
export const FLEET_EXIT_HELP = `
Exit status (conditions are OR-ed):
  0   nothing is lost anywhere: every offset any replica claims durable is held by a replica
      (lagging and degraded replicas are fine: the cluster catches them up or rebuilds them)
  4   data lost on every replica, committed metadata ops no booting node holds, two replicas
      with different batches at one offset (split brain), or conflicting node identities
  8   a report cannot be read or is not a report of this segscan version (the message names
      the file), or a replica's partition failed (its offsets are unknown)
  16  usage error: bad flags or arguments, two reports with the same node label`;

export interface FleetFlags {
  json?: boolean;
  html?: string;
}
