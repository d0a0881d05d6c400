/**
 * docs/node.md N0: one verdict for the node — partitions,
 * metadata plane and offsets together — shown the same everywhere: the text
 * report's first line, its summary line, the HTML headline, the JSON's top and
 * the exit status. A refused node finding is never behind "all clean".
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers/cli.js";
import { tempDir } from "./helpers/node-wal.js";

async function node(fault: string): Promise<string> {
  const dir = join(tempDir(), "node");
  const gen = await runCli(["gen", dir, "--size", "tiny", "--partitions", "2", "--node-fault", fault]);
  expect(gen.code, gen.stderr).toBe(0);
  return dir;
}

describe("one verdict for the node, everywhere", () => {
  it("a corrupt snapshot under clean partitions: REFUSED first in the text, in the summary, the HTML headline, the JSON top; exit 4", async () => {
    const root = await node("snapshot-corrupt");
    const text = await runCli(["scan", root]);
    expect(text.code).toBe(4);
    expect(text.stdout.split("\n")[0]).toBe("verdict REFUSED");
    const summary = text.stdout.trimEnd().split("\n").at(-1)!;
    expect(summary).toMatch(/^verdict REFUSED · \d+ partitions: \d+ clean, 0 repairable, 0 refused, 0 failed · node findings: 1 refused/);

    const json = JSON.parse((await runCli(["scan", root, "--json"])).stdout);
    expect(Object.keys(json).slice(0, 3)).toEqual(["segscan", "engine", "verdict"]);
    expect(json.verdict).toBe("refused");
    expect(json.summary.refused).toBe(0);

    const ndjson = (await runCli(["scan", root, "--ndjson"])).stdout.trimEnd().split("\n");
    expect(JSON.parse(ndjson.at(-1)!).verdict).toBe("refused");

    const page = join(tempDir(), "page.html");
    expect((await runCli(["scan", root, "--html", page])).code).toBe(4);
    const html = readFileSync(page, "utf8");
    const headline = /<p class="headline">(.*?)<\/p>/.exec(html)![1]!.replace(/<[^>]*>/g, "");
    expect(headline).toMatch(/^Verdict: REFUSED — all \d+ partitions are clean; node findings: 1 refused \(SnapshotCorrupt\)/);
    expect(html).not.toContain("<p><b>All ");
  });

  it("a refused OffsetCorrupt beside a repairable partition: the summary names it; verdict REFUSED, not 'repairable'", async () => {
    const root = await node("offset-corrupt");
    const text = await runCli(["scan", root]);
    expect(text.code).toBe(4);
    expect(text.stdout.split("\n")[0]).toBe("verdict REFUSED");
    expect(text.stdout).toMatch(/verdict REFUSED · \d+ partitions: .* · node findings: 1 refused/);
  });

  it("warn or info alone: the verdict says so and the exit status is 0", async () => {
    const root = await node("snapshot-unsealed");
    const text = await runCli(["scan", root]);
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toBe("verdict WARN");
    expect(JSON.parse((await runCli(["scan", root, "--json"])).stdout).verdict).toBe("warn");
  });

  it("a scan below the node root (no node section): the verdict leads the summary line", async () => {
    const root = await node("snapshot-corrupt");
    const text = await runCli(["scan", join(root, "streams")]);
    expect(text.code).toBe(0);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(/^verdict CLEAN · \d+ partitions: /);
    expect(JSON.parse((await runCli(["scan", join(root, "streams"), "--json"])).stdout).verdict).toBe("clean");
  });
});
