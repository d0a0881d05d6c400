/**
 * docs/scrub.md §1: a torn tail of the active segment after a crash. While the
 * segment is being written, half a batch at its end is growth; once it has
 * been left alone longer than the settle time, the end is judged as `scan`
 * judges it, by the same probe: a torn tail (`TornTail`, with scan's torn
 * evidence and a next step bash reads back as the partition's real path), or,
 * when a verified batch follows the damage, the damage itself with scan's
 * refusal named. Both engines; `scan` run beside as the reference.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../src/engine/types.js";
import { scanPartition } from "../src/node/scan-path.js";
import { type ScrubEvent, type ScrubFinding, passOutcome } from "../src/scrub/findings.js";
import { ACTIVE_SETTLE_MS, type ScrubOptions, scrub } from "../src/scrub/scrub.js";
import { runCli } from "./helpers/cli.js";
import { allEngines } from "./helpers/engines.js";
import { type BuiltChain, buildChain, indexAt, tempDataDir, tempPartition, trackedTempDir, writeSegment } from "./helpers/fixtures.js";

let engines: Engine[] = [];
beforeAll(async () => {
  engines = await allEngines();
});

/** Back-dates `path` by twice the active settle time: a file nobody has written for that long (a stopped or crashed server). */
function leaveAlone(path: string): void {
  const when = (Date.now() - 2 * ACTIVE_SETTLE_MS) / 1000;
  utimesSync(path, when, when);
}

/** A partition of a sealed and an active segment (3 batches each) under `root`. */
function partition(root = tempDataDir()): {
  root: string;
  dir: string;
  active: string;
  activeChain: BuiltChain;
  activeBytes: number;
  nextOffset: bigint;
} {
  const dir = tempPartition(1, root);
  const sealed = buildChain({ startOffset: 0n, counts: [3, 3, 3], payloadBytes: 200, seed: 41 });
  writeSegment(dir, 0n, sealed.log, indexAt(sealed, [0, 1, 2]));
  const activeChain = buildChain({ startOffset: sealed.nextOffset, counts: [3, 3, 3], payloadBytes: 200, seed: 42 });
  const { logPath } = writeSegment(dir, sealed.nextOffset, activeChain.log, indexAt(activeChain, [0, 1, 2]));
  return { root, dir, active: logPath, activeChain, activeBytes: activeChain.log.length, nextOffset: activeChain.nextOffset };
}

async function pass(root: string, options: ScrubOptions): Promise<{ events: ScrubEvent[]; findings: ScrubFinding[] }> {
  const events: ScrubEvent[] = [];
  for await (const event of scrub(root, { rate: Infinity, state: null, ...options })) events.push(event);
  const findings = events.flatMap((event) => (event.type === "finding" && event.finding.item === undefined ? [event.finding] : []));
  return { events, findings };
}

/** What `scan` says of the active (last) segment. */
async function scanOfActive(dir: string, engine: Engine) {
  const report = (await scanPartition(dir, { engine, verify: "full" })).partitions[0]!;
  const segment = report.segments.at(-1)!;
  return { verdict: report.verdict, outcome: segment.outcome, residue: segment.residue, refusal: report.refusal?.code ?? null };
}

describe("scrub: a torn tail of the active segment after a crash", () => {
  it("half a batch at the end is growth while the file is fresh, and scan's torn-tail once it was left alone", async () => {
    for (const engine of engines) {
      const { root, dir, active, activeBytes, nextOffset } = partition();
      const next = buildChain({ startOffset: nextOffset, counts: [2], payloadBytes: 300, seed: 43 }).log;
      appendFileSync(active, next.subarray(0, 400));
      const fresh = await pass(root, { engine });
      expect(fresh.findings, engine.kind).toEqual([]);
      expect(fresh.events).toContainEqual(expect.objectContaining({ type: "segment-verified", path: active, inFlightBytes: 400 }));

      leaveAlone(active);
      const quiet = await pass(root, { engine });
      const argv = ["segscan", "scan", dir];
      expect(quiet.findings, engine.kind).toEqual([
        expect.objectContaining({
          code: "TornTail",
          path: active,
          position: activeBytes,
          segmentPath: active,
          details: { tornEvidence: "short-batch", residueBytes: 400 },
          nextStepArgv: argv,
        }),
      ]);
      expect(quiet.findings[0]!.message).toContain("torn-tail");
      const last = quiet.events.at(-1)!;
      expect(last.type === "pass-complete" && passOutcome(last.summary)).toEqual({ problems: 1, failures: 0 });
      // The same words as scan: its outcome, its cut point, its evidence.
      const scanned = await scanOfActive(dir, engine);
      expect(scanned).toMatchObject({ verdict: "repairable", outcome: "torn-tail" });
      expect(scanned.residue).toMatchObject({ damagePosition: activeBytes, tornEvidence: "short-batch" });
    }
  });

  it("a zero-filled tail left alone is a torn tail too (zero-filled), as scan says", async () => {
    for (const engine of engines) {
      const { root, dir, active, activeBytes } = partition();
      appendFileSync(active, new Uint8Array(4096));
      leaveAlone(active);
      const { findings } = await pass(root, { engine });
      expect(findings.map((f) => [f.code, f.position, f.details])).toEqual([
        ["TornTail", activeBytes, { tornEvidence: "zero-filled", residueBytes: 4096 }],
      ]);
      expect((await scanOfActive(dir, engine)).residue).toMatchObject({ damagePosition: activeBytes, tornEvidence: "zero-filled" });
    }
  });

  it("damage a verified batch follows is no torn tail: the checksum finding says scan refuses it (InteriorDamage)", async () => {
    for (const engine of engines) {
      const { root, dir, active, activeChain: chain } = partition();
      const bytes = readFileSync(active);
      const damaged = chain.batches[1]!;
      bytes[damaged.position + 256 + 48 + 5]! ^= 0x10;
      writeFileSync(active, bytes);
      leaveAlone(active);
      const { findings } = await pass(root, { engine });
      expect(findings.map((f) => [f.code, f.position])).toEqual([["FrameChecksumFailure", damaged.position]]);
      expect(findings[0]!.message).toContain(`a verified batch follows at byte ${chain.batches[2]!.position}`);
      expect(findings[0]!.message).toContain("InteriorDamage");
      expect(await scanOfActive(dir, engine)).toMatchObject({ verdict: "refused", refusal: "InteriorDamage" });
    }
  });

  it("the CLI exits 4 and prints a next step bash reads back as the partition's real path", async () => {
    const { root, dir, active, nextOffset } = partition(join(trackedTempDir("segscan-scrub-quote-"), "node 'a' $b"));
    appendFileSync(active, buildChain({ startOffset: nextOffset, counts: [2], payloadBytes: 300, seed: 44 }).log.subarray(0, 100));
    leaveAlone(active);
    const state = join(trackedTempDir("segscan-scrub-state-"), "state.json");
    const run = await runCli(["scrub", root, "--state", state, "--rate", "unlimited"]);
    expect(run.code).toBe(4);
    expect(run.stdout).toContain(`FINDING TornTail ${active} @ byte `);
    const line = run.stdout.split("\n").find((l) => l.startsWith("  next step: "))!;
    const command = line.slice("  next step: ".length, line.indexOf(" (read-only"));
    const parsed = spawnSync("bash", ["-c", `set -- ${command}; printf '%s\\0' "$@"`], { encoding: "utf8" });
    expect(parsed.stdout.split("\0").slice(0, -1)).toEqual(["segscan", "scan", dir]);
    const json = await runCli(["scrub", root, "--state", state, "--rate", "unlimited", "--json"]);
    const finding = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ScrubEvent)
      .find((e) => e.type === "finding");
    expect(finding).toMatchObject({ finding: { code: "TornTail", nextStepArgv: ["segscan", "scan", dir] } });
  });
});
