/**
 * docs/repair.md §6.2: the version of the repair plan's JSON shape, apart from
 * its schema (./schema.ts) so that the package entry exports it without
 * loading TypeBox. `parsePlan` refuses a plan of any other version.
 */
export const PLAN_VERSION = 2;
