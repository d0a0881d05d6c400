/**
 * The merge of one partition's replicas (src/fleet/merge.ts) on synthetic
 * report lines: the range algebra, the merge property (the ranges lost on
 * every replica are the complement of the union of proven ranges within the
 * cluster's span, for random per-replica damage, checked offset by offset
 * against an independent model), and the adapter's precedence for the
 * scope-of-loss fields.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { partitionIdentity } from "../src/fleet/adapter.js";
import { mergePartition } from "../src/fleet/merge.js";
import { intersect, normalize, subtract } from "../src/fleet/ranges.js";
import { type ModelSegment, partitionJson } from "./helpers/fleet-reports.js";

const KEY = "streams/1/topics/1/partitions/1";
const identity = partitionIdentity(`/n/${KEY}`)!;
const names = ["a", "b", "c"];

function expand(ranges: readonly { from: string | bigint; to: string | bigint }[]): Set<number> {
  const out = new Set<number>();
  for (const r of ranges) for (let o = Number(r.from); o <= Number(r.to); o++) out.add(o);
  return out;
}

describe("offset ranges", () => {
  it("normalize joins overlapping and adjacent ranges; subtract and intersect agree with sets", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), fc.nat(8)), { maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(60), fc.nat(8)), { maxLength: 8 }),
        (xs, ys) => {
          const a = normalize(xs.map(([from, len]) => ({ from: BigInt(from), to: BigInt(from + len) })));
          const b = normalize(ys.map(([from, len]) => ({ from: BigInt(from), to: BigInt(from + len) })));
          for (let i = 1; i < a.length; i++) expect(a[i]!.from > a[i - 1]!.to + 1n).toBe(true);
          const sa = expand(a);
          const sb = expand(b);
          expect(expand(subtract(a, b))).toEqual(new Set([...sa].filter((o) => !sb.has(o))));
          expect(expand(intersect(a, b))).toEqual(new Set([...sa].filter((o) => sb.has(o))));
        },
      ),
    );
  });
});

/** One replica's fate for the model: how its chain of three 10-offset segments ends. */
type Fate =
  | { kind: "clean"; length: number }
  | { kind: "torn"; at: number }
  | { kind: "interior"; segment: number; at: number }
  | { kind: "index"; segment: number };

const SEGMENT = 10;
const SEGMENTS = 3;

/** The replica's segments, and what the model says it proves and claims durable (offset sets). */
function replicaModel(fate: Fate, firstSegment: number): { segments: ModelSegment[]; proven: Set<number>; durable: Set<number> } {
  const segments: ModelSegment[] = [];
  const proven = new Set<number>();
  const durable = new Set<number>();
  const prove = (from: number, to: number) => {
    for (let o = from; o <= to; o++) proven.add(o);
  };
  for (let s = firstSegment; s < SEGMENTS; s++) {
    const start = s * SEGMENT;
    const last = s === SEGMENTS - 1;
    const nextStart = start + SEGMENT;
    if (fate.kind === "clean" && last) {
      const end = Math.max(start, Math.min(start + SEGMENT - 1, fate.length - 1));
      segments.push({ start: BigInt(start), end: BigInt(end), outcome: "clean" });
      prove(start, end);
    } else if (fate.kind === "torn" && last) {
      const end = start + fate.at;
      segments.push({ start: BigInt(start), end: BigInt(end), outcome: "torn-tail" });
      prove(start, end);
    } else if (fate.kind === "interior" && fate.segment === s) {
      const end = start + fate.at;
      segments.push({ start: BigInt(start), end: BigInt(end), outcome: "refused", refusal: "InteriorDamage" });
      prove(start, end);
      // The adapter's rule: to the next segment's start, or (last segment) one open-ended offset.
      for (let o = end + 1; o <= (last ? end + 1 : nextStart - 1); o++) durable.add(o);
    } else if (fate.kind === "index" && fate.segment === s) {
      segments.push({ start: BigInt(start), end: null, outcome: "refused", refusal: "IndexEntriesNotMonotone" });
      for (let o = start; o <= (last ? start : nextStart - 1); o++) durable.add(o);
    } else {
      segments.push({ start: BigInt(start), end: BigInt(nextStart - 1), outcome: "clean" });
      prove(start, nextStart - 1);
    }
  }
  return { segments, proven, durable };
}

const fateArbitrary: fc.Arbitrary<Fate> = fc.oneof(
  fc.record({ kind: fc.constant("clean" as const), length: fc.integer({ min: 21, max: 30 }) }),
  fc.record({ kind: fc.constant("torn" as const), at: fc.integer({ min: 0, max: SEGMENT - 1 }) }),
  fc.record({
    kind: fc.constant("interior" as const),
    segment: fc.integer({ min: 0, max: SEGMENTS - 1 }),
    at: fc.integer({ min: 0, max: SEGMENT - 2 }),
  }),
  fc.record({ kind: fc.constant("index" as const), segment: fc.integer({ min: 0, max: SEGMENTS - 1 }) }),
);

describe("mergePartition", () => {
  it("property: lost = the cluster span without the union of proven ranges, durable where a replica claims it, offset by offset", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fateArbitrary, fc.integer({ min: 0, max: 1 })), { minLength: 1, maxLength: 4 }), (replicas) => {
        const models = replicas.map(([fate, first]) => replicaModel(fate, first));
        const lines = models.map((model, i) => partitionJson(`/n${i}/${KEY}`, model.segments));
        const nodeNames = models.map((_, i) => `n${i}`);
        const merged = mergePartition(identity, nodeNames, lines);
        const held = new Set(models.flatMap((m) => [...m.proven]));
        const durable = new Set(models.flatMap((m) => [...m.durable]));
        const claims = [...held, ...durable];
        expect(expand(merged.held)).toEqual(held);
        if (claims.length === 0) {
          expect(merged.span).toBeNull();
          expect(merged.lost).toEqual([]);
          return;
        }
        const from = Math.min(...claims);
        const to = Math.max(...claims);
        expect(merged.span).toEqual({ from: String(from), to: String(to) });
        const lost = new Set<number>();
        for (let o = from; o <= to; o++) if (!held.has(o)) lost.add(o);
        expect(expand(merged.lost)).toEqual(lost);
        const durableLost = expand(merged.lost.filter((r) => r.kind === "durable"));
        expect(durableLost).toEqual(new Set([...lost].filter((o) => durable.has(o))));
        for (const r of merged.lost) expect(BigInt(r.count)).toBe(BigInt(r.to) - BigInt(r.from) + 1n);
        expect(merged.verdict === "lost").toBe(durableLost.size > 0);
        // Each lost range's claims: every replica's unreadable range and torn-tail claim that meets it, in node order (the plain nested loop).
        for (const r of merged.lost) {
          const naive: { node: string; as: string }[] = [];
          for (const replica of merged.replicas) {
            for (const u of replica.unreadable)
              if (BigInt(u.from) <= BigInt(r.to) && BigInt(u.to) >= BigInt(r.from)) naive.push({ node: replica.node, as: u.code });
            for (const cut of replica.cuts) {
              if (cut.claimed !== null && BigInt(cut.claimed.from) <= BigInt(r.to) && BigInt(cut.claimed.to) >= BigInt(r.from))
                naive.push({ node: replica.node, as: "torn-tail" });
            }
          }
          expect(r.claimedBy).toEqual(naive);
        }
        // Every lost offset is held by no replica: the replicas' proven ranges and the lost ranges never meet.
        for (const replica of merged.replicas)
          expect(intersect(normalize(replica.proven.map(big)), normalize(merged.lost.map(big)))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("a torn tail on one replica that another holds: degraded, rebuild from the one that holds it", () => {
    const clean = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 99n, outcome: "clean" }]);
    const torn = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 80n, outcome: "torn-tail" }]);
    const lagging = partitionJson(`/c/${KEY}`, [{ start: 0n, end: 90n, outcome: "clean" }]);
    const merged = mergePartition(identity, names, [clean, torn, lagging]);
    expect(merged.verdict).toBe("degraded");
    expect(merged.lost).toEqual([]);
    expect(merged.replicas.map((r) => r.role)).toEqual(["in-sync", "damaged", "lagging"]);
    expect(merged.replicas[1]!.rebuildFrom).toBe("a");
    expect(merged.replicas[1]!.cuts).toEqual([{ segment: "0", fromOffset: "81", bytes: 2048, claimed: null }]);
    expect(merged.replicas[2]).toMatchObject({ behind: "9", rebuildFrom: "a", missing: [{ from: "91", to: "99", count: "9" }] });
  });

  it("rebuild from: the peer covering most of the lost range, ties by verdict then node order", () => {
    const damaged = partitionJson(`/a/${KEY}`, [
      { start: 0n, end: 9n, outcome: "refused", refusal: "InteriorDamage" },
      { start: 20n, end: 29n, outcome: "clean" },
    ]);
    const torn = partitionJson(`/b/${KEY}`, [
      { start: 0n, end: 19n, outcome: "clean" },
      { start: 20n, end: 25n, outcome: "torn-tail" },
    ]);
    const clean = partitionJson(`/c/${KEY}`, [
      { start: 0n, end: 19n, outcome: "clean" },
      { start: 20n, end: 29n, outcome: "clean" },
    ]);
    const merged = mergePartition(identity, names, [damaged, torn, clean]);
    // b and c both hold 10..19 (a's unreadable range); c is clean, b repairable.
    expect(merged.replicas[0]!.rebuildFrom).toBe("c");
    expect(merged.replicas[1]!.rebuildFrom).toBe("c");
  });

  it("divergence: two replicas with a batch at one base offset and different checksums", () => {
    const a = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 9n, outcome: "clean", lastBatch: { baseOffset: 5n, checksum: 1n } }]);
    const b = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 9n, outcome: "clean", lastBatch: { baseOffset: 5n, checksum: 2n } }]);
    const c = partitionJson(`/c/${KEY}`, [{ start: 0n, end: 9n, outcome: "clean", lastBatch: { baseOffset: 5n, checksum: 1n } }]);
    const merged = mergePartition(identity, names, [a, b, c]);
    expect(merged.verdict).toBe("diverged");
    expect(merged.divergence).toHaveLength(1);
    expect(merged.divergence[0]).toMatchObject({ kind: "last-batch", offset: "5" });
    expect(merged.divergence[0]).toMatchObject({ majority: { checksum: "1", nodes: ["a", "c"] }, odd: ["b"] });
    expect(merged.divergence[0]!.message).toContain("b is the odd one out (b 0x0000000000000002 against a, c 0x0000000000000001)");
    expect(merged.replicas.map((r) => r.role)).toEqual(["in-sync", "diverged", "in-sync"]);
  });

  it("a replica without the partition is missing, a failed one is failed; neither proves anything", () => {
    const a = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 9n, outcome: "clean" }]);
    const failed = {
      ...partitionJson(`/c/${KEY}`, []),
      verdict: "failed" as const,
      action: "retry" as const,
      error: { code: "ReadFailure" as const, path: "/c", message: "EIO" },
    };
    const merged = mergePartition(identity, names, [a, null, failed]);
    expect(merged.replicas.map((r) => r.role)).toEqual(["in-sync", "missing", "failed"]);
    expect(merged.replicas[1]!.rebuildFrom).toBe("a");
    expect(merged.verdict).toBe("failed");
  });

  it("the scope-of-loss fields take precedence: intact ranges count as held, unreadable ranges are exact, a cut's claim is unacknowledged", () => {
    const refused = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 9n, outcome: "refused", refusal: "InteriorDamage" }]);
    const at = (kind: string, first: string, last: string, messages: number, startPosition: number, endPosition: number) => ({
      kind,
      firstOffset: first,
      lastOffset: last,
      messages,
      bytes: endPosition - startPosition,
      tornEvidence: kind === "torn" ? "complete-batch" : null,
      startPosition,
      endPosition,
    });
    Object.assign(refused.segments[0]!, {
      scope: [at("proven", "0", "9", 10, 0, 2048), at("unreadable", "10", "12", 3, 2048, 3072), at("intact", "13", "19", 7, 3072, 4096)],
    });
    const torn = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 11n, outcome: "torn-tail" }]);
    Object.assign(torn.segments[0]!, { scope: [at("proven", "0", "11", 12, 0, 2048), at("torn", "12", "21", 10, 2048, 4096)] });
    const merged = mergePartition(identity, ["a", "b"], [refused, torn]);
    expect(merged.held).toEqual([
      { from: "0", to: "11", count: "12" },
      { from: "13", to: "19", count: "7" },
    ]);
    expect(merged.lost.map((r) => [r.from, r.to, r.kind])).toEqual([
      ["12", "12", "durable"],
      ["20", "21", "unacknowledged"],
    ]);
    expect(merged.replicas[0]!.intact).toEqual([{ from: "13", to: "19", count: "7" }]);
    expect(merged.replicas[1]!.cuts[0]!.claimed).toEqual({ from: "12", to: "21", count: "10" });
  });

  it("a forward gap is not held: subtracted from what the replica proves, a claim where no peer holds it, a hole a peer fills", () => {
    const gapped = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 99n, outcome: "clean" }]);
    gapped.segments[0]!.gaps = [{ position: 2048, expectedOffset: "40", foundOffset: "45" }];
    const whole = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 99n, outcome: "clean" }]);
    const held = mergePartition(identity, ["a", "b"], [gapped, whole]);
    expect(held.replicas[0]!.proven).toEqual([
      { from: "0", to: "39", count: "40" },
      { from: "45", to: "99", count: "55" },
    ]);
    expect(held.verdict).toBe("degraded");
    expect(held.replicas[0]).toMatchObject({ role: "damaged", rebuildFrom: "b", missing: [{ from: "40", to: "44", count: "5" }] });
    // A gap every replica shares, with no record of loss, is what the server's boot mints in byte-clean files
    // (docs/recovery.md §3.4): not held anywhere, but no claim that anything was lost.
    const shared = mergePartition(identity, ["a", "b"], [gapped, gapped]);
    expect(shared.verdict).not.toBe("lost");
    expect(shared.lost.filter((range) => range.kind === "durable")).toEqual([]);
    expect(shared.lost).toEqual([expect.objectContaining({ from: "40", to: "44", kind: "unclaimed" })]);
    // A salvage's record of the same offsets makes them a claim of loss: held by no replica, lost everywhere.
    const salvaged = structuredClone(gapped);
    salvaged.findings = [
      {
        severity: "warn",
        code: "SalvageLostOffsets",
        path: `/a/${KEY}.segscan/journal.jsonl`,
        message: "m",
        nextStep: "s",
        nextCommand: ["segscan", "forget", `/a/${KEY}`, "--lost-offsets"],
        line: 3,
        run: "r",
        salvagedAt: null,
        segment: "0",
        kind: "unreadable",
        firstOffset: "40",
        lastOffset: "44",
        messages: 5,
        bytes: 100,
        completed: true,
      },
    ];
    const alone = mergePartition(identity, ["a", "b"], [salvaged, gapped]);
    expect(alone.verdict).toBe("lost");
    expect(alone.lost).toEqual([
      {
        from: "40",
        to: "44",
        count: "5",
        kind: "durable",
        openEnded: false,
        claimedBy: [
          { node: "a", as: "SalvageLostOffsets" },
          { node: "a", as: "ForwardGap" },
          { node: "b", as: "ForwardGap" },
        ],
      },
    ]);
  });

  it("a salvage record that cannot be read (a failed finding) makes its replica failed: a shared gap is then never clean", () => {
    // Every replica salvaged the same range; each record then became unreadable (a corrupt journal line): the bytes
    // alone show a gap every replica shares, which without a record reads as unclaimed. Whether offsets were
    // recorded as lost is unknown on each, so none is judged (docs/repair.md §6.6).
    const unreadable = partitionJson(`/a/${KEY}`, [{ start: 0n, end: 99n, outcome: "clean" }]);
    unreadable.segments[0]!.gaps = [{ position: 2048, expectedOffset: "40", foundOffset: "45" }];
    unreadable.findings = [
      {
        severity: "failed",
        code: "SalvageRecordUnreadable",
        path: `/a/${KEY}.segscan/journal.jsonl`,
        message: `cannot read /a/${KEY}.segscan/journal.jsonl: its line 5 is not JSON`,
        nextStep: "fix or inspect the journal and scan again",
        nextCommand: null,
      },
    ];
    const everywhere = mergePartition(identity, names, [unreadable, unreadable, unreadable]);
    expect(everywhere.verdict).toBe("failed");
    expect(everywhere.replicas.map((replica) => replica.role)).toEqual(["failed", "failed", "failed"]);
    expect(everywhere.replicas[0]!.error).toMatch(/^SalvageRecordUnreadable: /);
    expect(everywhere.judged).toEqual({ replicas: 0, of: 3 });
    // Beside a replica that is whole, the unreadable one is failed, and the whole one is judged in sync.
    const whole = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 99n, outcome: "clean" }]);
    const beside = mergePartition(identity, ["a", "b"], [unreadable, whole]);
    expect(beside.verdict).toBe("failed");
    expect(beside.replicas.map((replica) => replica.role)).toEqual(["failed", "in-sync"]);
  });
  it("a report that does not cover the partition: unknown, not missing; not judged, so never 'lost on every replica'", () => {
    const refused = partitionJson(`/a/${KEY}`, [
      { start: 0n, end: 9n, outcome: "refused", refusal: "InteriorDamage" },
      { start: 20n, end: 29n, outcome: "clean" },
    ]);
    const context = { names: ["a", "b"], covers: [true, false], roots: ["/a", "/b"], replicas: 2 };
    const merged = mergePartition(identity, context, [refused, null]);
    expect(merged.replicas[1]).toMatchObject({ role: "unknown", rebuildFrom: null, missing: [] });
    expect(merged.verdict).toBe("lost");
    expect(merged.judged).toEqual({ replicas: 1, of: 2 });
    expect(merged.nextSteps[0]).toMatchObject({
      about: "unknown",
      node: "b",
      argv: ["segscan", "scan", `/b/${KEY}`, "--replicas", "2"],
      command: `segscan scan /b/${KEY} --replicas 2`,
    });
    const clean = mergePartition(identity, context, [partitionJson(`/a/${KEY}`, [{ start: 0n, end: 9n, outcome: "clean" }]), null]);
    expect(clean.verdict).toBe("unknown");
  });

  it("consumer offsets past the highest head any replica proves", () => {
    const a = { ...partitionJson(`/a/${KEY}`, [{ start: 0n, end: 9n, outcome: "torn-tail" }]) };
    const b = partitionJson(`/b/${KEY}`, [{ start: 0n, end: 14n, outcome: "clean" }]);
    const entry = (offset: string) => ({
      path: `/x/${KEY}`,
      superblock: null,
      head: { lastProvenOffset: null, offsetFrontier: "0", head: null, known: true, quarantined: false },
      purgeGeneration: null,
      offsets: [{ kind: "group" as const, id: 1, path: "p", size: 16, offset, checksummed: true, head: null, findings: [] }],
      fenced: [],
      findings: [],
    });
    const merged = mergePartition(
      identity,
      ["a", "b"],
      [
        { ...a, node: entry("12") },
        { ...b, node: entry("20") },
      ],
    );
    // a's 12 is behind b's head 14: nothing; b's 20 is past every head: 6 offsets re-minted.
    expect(merged.offsetsAhead).toHaveLength(1);
    expect(merged.offsetsAhead[0]).toMatchObject({
      nodes: [{ node: "b", offset: "20" }],
      kind: "group",
      id: 1,
      offset: "20",
      clusterHead: "14",
      reminted: "6",
    });
  });
});

function big(range: { from: string; to: string }) {
  return { from: BigInt(range.from), to: BigInt(range.to) };
}

it("partitionIdentity reads streams/<s>/topics/<t>/partitions/<p> at a path's end, and nothing else", () => {
  expect(partitionIdentity("/var/lib/iggy/streams/3/topics/12/partitions/7")).toEqual({
    key: "streams/3/topics/12/partitions/7",
    streamId: 3,
    topicId: 12,
    partitionId: 7,
    root: "/var/lib/iggy",
  });
  expect(partitionIdentity("/data/p1")).toBeNull();
  expect(partitionIdentity("/x/streams/1/topics/1/partitions/1/00000000000000000000.log")).toBeNull();
});
