/**
 * docs/heal.md "What a heal closes": a salvage's lost offsets (docs/repair.md
 * §6.6) stop being reported once a heal run that filled them stands — it
 * reached its end, its steps on that segment are done, and no restore undid
 * any of them. A heal that stopped part-way or was undone closes nothing, and
 * a loss recorded after a heal is not closed by it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodeScanFs } from "../src/io/fs.js";
import { readSalvageRecord } from "../src/io/journal.js";
import { trackedTempDir } from "./helpers/fixtures.js";

const lost = {
  segment: "62",
  kind: "unreadable",
  startPosition: 100,
  endPosition: 200,
  bytes: 100,
  firstOffset: "117",
  lastOffset: "121",
  messages: 5,
  tornEvidence: null,
};
const image = { size: 10, xxh3: "0123456789abcdef" };
const line = (run: string, seq: number, body: object): string => JSON.stringify({ v: 2, run, seq, ...body });

const salvage = [
  line("s", 0, { kind: "begin", time: "t", partition: "/p", target: "partition", plan: {} }),
  line("s", 1, {
    kind: "intent",
    op: { kind: "replace", role: "segment-log", file: "x.log", segment: "62", old: { ...image, file: "x.log.replaced" }, new: image },
    lost: [lost],
  }),
  line("s", 1, { kind: "done" }),
  line("s", 2, { kind: "end", time: "t" }),
];
const healRun = (run: string, range = { segment: "62", kind: "salvage-gap", firstOffset: "117", lastOffset: "121" }) => [
  line(run, 0, { kind: "begin", time: "t", partition: "/p", target: "partition", plan: {}, heal: { peer: "/q", ranges: [range] } }),
  line(run, 1, {
    kind: "intent",
    op: { kind: "replace", role: "segment-log", file: "x.log", segment: "62", old: { ...image, file: "x.log.replaced.1" }, new: image },
    lost: [],
  }),
  line(run, 1, { kind: "done" }),
];

async function lossesOf(lines: string[]): Promise<string[]> {
  const dir = trackedTempDir("segscan-heal-record-");
  const preserve = join(dir, "p.segscan");
  mkdirSync(preserve);
  writeFileSync(join(preserve, "journal.jsonl"), `${lines.join("\n")}\n`);
  const record = await readSalvageRecord(nodeScanFs, preserve);
  if (record.kind !== "read") throw new Error(JSON.stringify(record));
  return record.losses.map((loss) => `${loss.range.firstOffset}..${loss.range.lastOffset}`);
}

describe("a heal closes the salvage losses it filled", () => {
  it("a salvage alone: its loss is reported", async () => {
    expect(await lossesOf(salvage)).toEqual(["117..121"]);
  });

  it("a heal run that ended: the loss is closed", async () => {
    expect(await lossesOf([...salvage, ...healRun("h"), line("h", 2, { kind: "end", time: "t" })])).toEqual([]);
  });

  it("a heal run that stopped before its end closes nothing", async () => {
    expect(await lossesOf([...salvage, ...healRun("h")])).toEqual(["117..121"]);
  });

  it("a heal run a restore undid closes nothing", async () => {
    const undone = line("r", 0, { kind: "undone", of: { run: "h", seq: 1 } });
    expect(await lossesOf([...salvage, ...healRun("h"), line("h", 2, { kind: "end", time: "t" }), undone])).toEqual(["117..121"]);
  });

  it("a heal of other offsets, or of another segment, closes nothing", async () => {
    const other = healRun("h", { segment: "62", kind: "salvage-gap", firstOffset: "118", lastOffset: "121" });
    expect(await lossesOf([...salvage, ...other, line("h", 2, { kind: "end", time: "t" })])).toEqual(["117..121"]);
  });

  it("a loss recorded after the heal is not closed by it", async () => {
    const later = salvage.map((text) => text.replaceAll('"run":"s"', '"run":"s2"'));
    expect(await lossesOf([...salvage, ...healRun("h"), line("h", 2, { kind: "end", time: "t" }), ...later])).toEqual(["117..121"]);
  });
});
