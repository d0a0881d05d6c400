/** Repair's limits, in a module of their own so the package entry exports them without loading the planner or the runner (docs/benchmarks.md). */

/**
 * How many leading bytes of a corrupt offset file the evidence copy keeps. An
 * offset record is 16 bytes; a larger file's remainder is not an offset, and
 * the copy (which changes nothing) must not cost the file's size — a 2 GiB
 * sparse file would otherwise be copied whole.
 */
export const OFFSET_EVIDENCE_MAX_BYTES = 64 * 1024;

/**
 * How many bytes before a cut point the journal's proof hashes (docs/repair.md
 * §6.3): enough that a replaced file with other bytes is told apart, bounded
 * so that restore does not read a whole segment to check it.
 */
export const CUT_PROOF_BYTES = 1024 * 1024;

/** How deep below a data dir `findRestorable` looks (a data dir's partitions are 6 levels down: streams/S/topics/T/partitions/P). */
export const RESTORE_SEARCH_DEPTH = 12;
