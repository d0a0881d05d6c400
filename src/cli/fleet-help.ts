/**
 * `segscan fleet`'s flags and exit-status help, apart from the command so that
 * `--help` loads no merger, schema or renderer.
 */
export const FLEET_EXIT_HELP = `
Exit status (conditions are OR-ed):
  0   nothing is lost anywhere: every offset any replica claims durable is held by a replica
      (lagging and degraded replicas are fine: the cluster catches them up or rebuilds them)
  4   data lost on every replica that could be judged, committed metadata ops no booting node
      holds, two replicas with different batches at one offset (split brain), or conflicting
      node identities
  8   something could not be judged: a replica's partition failed, a report does not cover a
      partition the others have (it is not of its node root), or a partition line names no
      streams/<s>/topics/<t>/partitions/<p>; or a report cannot be read, is too large to read
      whole, or is not a report of this segscan version (the message names the file)
  16  usage error: bad flags or arguments, two reports with the same node label`;

export interface FleetFlags {
  json?: boolean;
  html?: string;
}
