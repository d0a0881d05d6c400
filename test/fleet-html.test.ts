/**
 * The `fleet --html` page in a real browser (Chromium driven by playwright-core,
 * as test/html-report.test.ts): a row per partition not clean everywhere, a
 * lane per replica, the lost-everywhere range drawn where its offsets lie on the
 * partition's scale and in its colour (read back from a screenshot), no script
 * errors and no requests. Skipped without Chromium unless
 * SEGSCAN_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import pngjs from "pngjs";
import { describe, expect, it } from "vitest";
import { createTsEngine } from "../src/engine/ts/engine.js";
import { FLEET_LOST_COLOR, mergeReports, renderFleetHtml } from "../src/fleet/index.js";
import { generateCluster } from "../src/gen/index.js";
import { scanPath } from "../src/node/scan-path.js";
import { toJsonReport } from "../src/report/json.js";
import { trackedTempDir } from "./helpers/fixtures.js";

const CHROMIUM = process.env.SEGSCAN_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const BROWSER_REQUIRED = process.env.SEGSCAN_REQUIRE_BROWSER === "1";
if (!HAVE_CHROMIUM && !BROWSER_REQUIRED) console.warn(`fleet-html browser test SKIPPED: no Chromium at ${CHROMIUM}`);

describe.skipIf(!HAVE_CHROMIUM && !BROWSER_REQUIRED)("fleet --html in Chromium", () => {
  it("rows, lanes, the lost range at its offsets and in its colour, no errors or requests", async () => {
    const dir = trackedTempDir("segscan-fleet-html-");
    await generateCluster(join(dir, "c"), 3, { seed: 3, faults: ["torn-on-one", "lost-everywhere", "divergent"] });
    const engine = createTsEngine();
    const reports = [];
    for (const name of ["node-0", "node-1", "node-2"])
      reports.push({ name, report: toJsonReport(await scanPath(join(dir, "c", name), { engine })) });
    const fleet = await mergeReports(reports);
    const notable = fleet.partitions.filter((p) => p.verdict !== "clean");
    const file = join(dir, "fleet.html");
    writeFileSync(file, renderFleetHtml({ ...fleet, partitions: notable }));

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 1400 } });
      const errors: string[] = [];
      const requests: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("request", (request) => {
        if (!request.url().startsWith("file:")) requests.push(request.url());
      });
      await page.goto(`file://${file}`);
      expect(await page.locator("section.part").count()).toBe(3);
      expect(await page.locator("section.part .lane").count()).toBe(9);
      const lostPartition = notable.find((p) => p.verdict === "lost")!;
      const range = lostPartition.lost.find((r) => r.kind === "durable")!;
      const section = page.locator(`section.part[data-key="${lostPartition.key}"]`);
      const lanes = (await section.locator(".lanes").boundingBox())!;
      const band = (await section.locator(".lost").boundingBox())!;
      const span = { from: Number(lostPartition.span!.from), to: Number(lostPartition.span!.to) };
      const width = span.to - span.from + 1;
      expect(Math.abs(band.x - (lanes.x + (lanes.width * (Number(range.from) - span.from)) / width))).toBeLessThanOrEqual(2);
      expect(Math.abs(band.width - (lanes.width * Number(range.count)) / width)).toBeLessThanOrEqual(2);
      expect(await page.locator("section.part[data-verdict=diverged] .diverge").count()).toBe(1);
      await section.scrollIntoViewIfNeeded();
      const box = (await section.locator(".lost").boundingBox())!;
      const shot = pngjs.PNG.sync.read(await page.screenshot());
      const at = (shot.width * Math.round(box.y + box.height / 2) + Math.round(box.x + box.width / 2)) * 4;
      const want = Number.parseInt(FLEET_LOST_COLOR.slice(1), 16);
      const wanted = [(want >> 16) & 255, (want >> 8) & 255, want & 255];
      for (let i = 0; i < 3; i++) expect(Math.abs(shot.data[at + i]! - wanted[i]!)).toBeLessThanOrEqual(12);
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
