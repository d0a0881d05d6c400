/**
 * The torn-tail words (docs/recovery.md §3.7, docs/node.md N1.1) come from one
 * table, src/policy/torn-evidence.ts: a segment's torn range and the metadata
 * WAL's WalTornTail say the same thing of the same bytes, and every sentence
 * that concludes "never acknowledged" says it is the crash model's conclusion.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { TornEvidence } from "../src/domain/scan.js";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { scanNode } from "../src/node/scan.js";
import {
  TORN_EVIDENCE_BRIEF,
  TORN_EVIDENCE_WORDS,
  TORN_TAILS_CLAIM,
  TORN_TAILS_CLAIM_BRIEF,
  WAL_TAIL_BYTES_WORDS,
  type WalTornEvidence,
  neverAcknowledgedClaim,
  provesNeverAcknowledged,
  walTornClaim,
} from "../src/policy/torn-evidence.js";
import { nodeFindingNextStep } from "../src/policy/next-step.js";
import { scanPartition } from "../src/node/scan-path.js";
import { formatPartition } from "../src/report/format.js";
import { buildChain, concat, indexAt, tempPartition, writeSegment } from "./helpers/fixtures.js";
import { tinyNode } from "./helpers/metadata-node.js";

const SEGMENT: readonly TornEvidence[] = ["zero-filled", "short-batch", "complete-batch", "unverifiable"];
const WAL: readonly WalTornEvidence[] = ["zero-filled", "short-entry", "complete-entry", "unverifiable"];

describe("one table of torn-tail words for segments and the WAL", () => {
  it("only zero-filled and short tails conclude 'never acknowledged', and each says it is the crash model's conclusion", () => {
    for (const evidence of SEGMENT) {
      const words = TORN_EVIDENCE_WORDS[evidence];
      expect(words.includes("never acknowledged"), evidence).toBe(provesNeverAcknowledged(evidence));
      if (provesNeverAcknowledged(evidence)) expect(words, evidence).toContain("under the crash model (a completed fsync leaves no ");
    }
    for (const evidence of WAL) {
      const claim = walTornClaim(evidence);
      expect(claim.includes("never acknowledged"), evidence).toBe(provesNeverAcknowledged(evidence));
      if (provesNeverAcknowledged(evidence)) expect(claim, evidence).toContain("under the crash model (a completed fsync leaves no ");
    }
    expect(SEGMENT.filter(provesNeverAcknowledged)).toEqual(["zero-filled", "short-batch"]);
    expect(WAL.filter(provesNeverAcknowledged)).toEqual(["zero-filled", "short-entry"]);
  });

  it("a segment's claim and the WAL's are the same sentence, the record named for what it is", () => {
    const pairs: [TornEvidence, WalTornEvidence][] = [
      ["zero-filled", "zero-filled"],
      ["short-batch", "short-entry"],
      ["complete-batch", "complete-entry"],
      ["unverifiable", "unverifiable"],
    ];
    for (const [segment, wal] of pairs) {
      expect(TORN_EVIDENCE_WORDS[segment], segment).toContain(walTornClaim(wal).replaceAll("entry", "batch"));
    }
    expect(WAL_TAIL_BYTES_WORDS["short-entry"]).toBe("a short last entry, the append never completed");
  });

  it("the scan's text and the WAL finding print the table's sentences", async () => {
    const dir = tempPartition();
    const chain = buildChain({ counts: [3, 4] });
    writeSegment(dir, 0n, concat([chain.log, new Uint8Array(900)]), indexAt(chain, [0]));
    const engine = createTsEngine();
    const partition = (await scanPartition(dir, { engine })).partitions[0]!;
    expect(formatPartition(partition)).toContain(TORN_EVIDENCE_WORDS["zero-filled"]);

    const root = await tinyNode({ seed: 21, fault: "wal-torn-tail" });
    const node = await scanNode(root, { engine });
    const torn = node.metadata.wal!.findings.find((finding) => finding.code === "WalTornTail")!;
    expect(torn.tornEvidence).toBe("short-entry");
    expect(torn.message).toContain(walTornClaim("short-entry"));
  });

  it("the brief words (one line per finding) and the cluster's words say 'never acknowledged' only under the crash model", () => {
    for (const evidence of SEGMENT) {
      const brief = TORN_EVIDENCE_BRIEF[evidence];
      expect(brief.includes("never acknowledged"), evidence).toBe(provesNeverAcknowledged(evidence));
      if (provesNeverAcknowledged(evidence)) expect(brief, evidence).toContain("under the crash model, never acknowledged");
    }
    expect(TORN_TAILS_CLAIM_BRIEF).toBe("under the crash model, never acknowledged if zero-filled or short");
    expect(TORN_TAILS_CLAIM).toContain("a complete last batch whose checksum fails may have been");
    expect(neverAcknowledgedClaim(["short-batch", "zero-filled", "short-batch"])).toBe(
      "under the crash model (a completed fsync leaves no short batch or zeros), never fsynced, so never acknowledged",
    );
    expect(neverAcknowledgedClaim(["short-entry"], "entry")).toBe(walTornClaim("short-entry"));
    // A shape that does not prove the append never completed cannot be given the claim.
    expect(() => neverAcknowledgedClaim(["complete-batch"])).toThrow(/does not prove the append never completed/);
    expect(() => neverAcknowledgedClaim([])).toThrow();
  });

  it("a WAL torn tail's next step says what the crash model concludes in the table's words, and only for the shapes that prove it", () => {
    const step = (tornEvidence: WalTornEvidence): string =>
      nodeFindingNextStep(
        { severity: "repairable", code: "WalTornTail", path: "/n/metadata/journal.wal", message: "m", tornEvidence },
        "/n",
      );
    expect(step("short-entry")).toContain(walTornClaim("short-entry"));
    expect(step("zero-filled")).toContain(walTornClaim("zero-filled"));
    expect(step("complete-entry")).not.toContain("never acknowledged");
    expect(step("unverifiable")).not.toContain("never acknowledged");
  });

  it("no code outside the table says 'never acknowledged' of its own: every sentence that draws the conclusion takes it from the table", () => {
    const src = join(import.meta.dirname, "..", "src");
    const table = join(src, "policy", "torn-evidence.ts");
    const files = (readdirSync(src, { recursive: true }) as string[])
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(src, name))
      .filter((path) => path !== table);
    const offenders: string[] = [];
    for (const path of files) {
      for (const [i, line] of readFileSync(path, "utf8").split("\n").entries()) {
        const code = line.trim();
        // Comments may name the conclusion (they cite docs/recovery.md §3.7); a denial ("not a never-acknowledged tail") draws none.
        if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) continue;
        const said = code.replaceAll(/not a never-acknowledged/gi, "");
        if (/never[- ]acknowledged/i.test(said)) offenders.push(`${relative(src, path)}:${i + 1}: ${code}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
