/** The exit-status help of each command (docs/interfaces.md §9.2), apart from the commands so `--help` loads none of them. */

/** `scan` and `repair` (and the program). */
export const EXIT_HELP = `
Exit status (after fsck; conditions are OR-ed, e.g. 5 = 1|4):
  0   every partition is clean; node findings of severity warn or info are shown but do
      not count (a verdict of WARN or INFO exits 0)
  1   repairs were applied and the repaired partitions scan clean now
  4   problems left: a dry run found repairs to make, or a partition or node item was refused
  8   operational error: I/O, a failed partition or node item, a missing or unreadable path
      (9 = 1|8: an apply that stopped part-way after changing files; the message says how to finish or undo)
  16  usage error: bad flags or arguments, a path that holds no partition
  32  cancelled (Ctrl-C): the message says what was done (a scan or dry run changed nothing;
      repair/restore name what completed, every completed step is in the journal)`;

/** `fleet` (docs/fleet.md). */
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

/** `salvage` (docs/repair.md §6.5). */
export const SALVAGE_EXIT_HELP = `
Exit status:
  0   nothing to do (never for a refused partition)
  1   the salvage was applied and the partition scans clean now (its lost offsets show as forward gaps,
      and every scan names them until \`segscan forget <partition> --lost-offsets --apply\`)
  4   a dry run printed the plan, or salvage refused (the message says why and what to do instead)
  8   operational error: I/O, a failed partition, an unreadable path
  9   (1|8) the salvage stopped part-way after changing files: the message says how to finish or undo
  16  usage error: bad flags, a path that is not one partition directory
  32  cancelled (Ctrl-C): the message says what was done`;

/** `heal` (docs/heal.md). */
export const HEAL_EXIT_HELP = `
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

/** `restore`. */
export const RESTORE_EXIT_HELP = `
Exit status:
  0   every journal's steps were undone (or there was nothing to restore)
  8   operational error: an undo step failed (the message says how far it got and that running
      restore again resumes there); given a data dir, the other partitions are still restored
  16  usage error: bad flags, a path that is not a directory
  32  cancelled (Ctrl-C) between undo steps: the message names the partitions restored in full`;

/** `forget` (docs/repair.md §6.7). */
export const FORGET_EXIT_HELP = `
Exit status (OR-ed):
  0   a dry run, or nothing to forget
  1   --apply deleted copies (or cleared the loss record)
  4   copies are kept because a restore still needs them (an unfinished run or restore: the listing says which)
  8   a target could not be handled (its lock is held, its journal cannot be read, its .segscan is a link)
  16  usage error: bad flags, a path that is not a directory`;

/** `dump`. */
export const DUMP_EXIT_HELP = `
Exit status:
  0   every batch verified and the listing reached the end of the file (a .index: whole entries
      only; a WAL: every entry verified or unsealed; a snapshot: no finding worse than warn)
  4   problems: batches or entries that failed to verify (the last line counts them), a listing that
      stopped before the end of the file, a .index ending in a partial entry, a refused snapshot
  8   operational error: the file cannot be read
  16  usage error: bad flags, a path that is not a file, a file that is not a segment .log or .index,
      journal.wal or snapshot.bin
  32  cancelled (Ctrl-C)`;

/** `scrub` (docs/scrub.md): what a pass re-reads, what it writes, its exit status. */
export const SCRUB_HELP = `
Re-verification and bit rot: a segment is read in full when first seen and whenever it changes; one
that did not change (bit rot keeps size, mtime and inode) is re-read and re-hashed once it is due,
between half and all of --reverify-after after its last verification. Bit rot in it is found within
--reverify-after plus one --interval. The node items (WAL, snapshot, superblocks, offsets, purge.gen)
are small and re-read by every pass.

On a node root (a dir holding metadata/ or streams/) each pass ends with the node check; a finding
about a file the server is writing (the WAL's live tail, a .tmp, offsets ahead of unflushed
messages) waits until the file has been left alone for a minute (docs/scrub.md §1.1).

The active segment is verified up to its size when reached; a batch still being appended there is growth.
Once the segment has been left alone for a minute, damage at its end is a torn tail, as \`scan\` says.

The state and metrics files are the only files scrub writes (atomically: a temp file beside, then a
rename). Neither may lie inside the scrubbed tree (symlinks resolved), be a directory or a FIFO, or be
one file; an existing file there must be one scrub wrote, or nothing is scrubbed (exit 16).

Exit status: 0 no findings (node findings of severity info or warn are printed and exit 0) · 4 findings ·
8 operational error (unreadable files, a failed node item, state not writable) · 16 usage error (a
--state or --metrics path scrub may not write) · 32 a single pass was cancelled (with --watch a
SIGTERM/SIGINT stop exits 0).`;
