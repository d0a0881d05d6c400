/**
 * docs/node.md N4, N7: `evidence-copy` copies an offset file whose checksum
 * fails (`OffsetCorrupt`) into the preserve dir as `<name>.evidence` before
 * the server's next boot unlinks it. Nothing in the target changes, so it
 * journals no intent (only a `preserved` record) and restore has nothing to
 * undo. At most `copyBytes` leading bytes are copied: an offset record is 16
 * bytes, and what follows in a huge file is not an offset.
 */
import { formatCount } from "../../domain/numbers.js";
import { type Static, Type } from "@sinclair/typebox";
import { Count, Text, closed } from "../../domain/schema-vocabulary.js";
import { ConsumerSchema, ObservedSchema, type StepKind, consumerName, expectFile, preserveBaseOf, preserveCopy } from "./step.js";

export const EvidenceCopyStepSchema = closed({
  kind: Type.Literal("evidence-copy"),
  role: Type.Literal("offset"),
  file: Text,
  reason: Type.Literal("offset-corrupt"),
  size: Count,
  /** How many leading bytes are copied (an offset record is 16 bytes; a huge file's tail is not an offset). */
  copyBytes: Count,
  consumer: ConsumerSchema,
  observed: ObservedSchema,
});
export type EvidenceCopyStep = Static<typeof EvidenceCopyStepSchema>;

export const evidenceCopy: StepKind<EvidenceCopyStep> = {
  schema: EvidenceCopyStepSchema,

  async prepare(step, ctx) {
    const { target } = ctx;
    await expectFile(ctx, step.file, step.size, null, "copy");
    const copy = await preserveCopy(ctx, step.file, 0, step.copyBytes, `${preserveBaseOf(target, step.file)}.evidence`);
    const partial = step.copyBytes < step.size ? ` (its first ${formatCount(step.copyBytes)} of ${formatCount(step.size)} bytes)` : "";
    const summary = `copied ${step.file}${partial} into the preserve dir as ${copy.file} (evidence; the file is left in place)`;
    return { execute: async () => ({ summary, preserved: copy.file, op: null }) };
  },

  journal: null,

  describe(step, { name }) {
    const part = step.copyBytes < step.size ? `its first ${formatCount(step.copyBytes)} of ${formatCount(step.size)} bytes` : "it";
    return `copy ${name} (${consumerName(step.consumer)}, checksum fails) into the preserve dir as evidence (${part}); the file stays (the server unlinks it at boot)`;
  },
};
