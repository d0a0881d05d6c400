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
import { FLEET_LOST_COLOR, FLEET_VERDICT_COLORS, mergeReports, renderFleetHtml } from "../src/fleet/index.js";
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

  it("problems first: a coloured verdict banner, the cluster's findings, the partitions, the summary, the legend last; legend swatches as drawn; the odd lane labelled; at 600 px no swatch leaves its label", async () => {
    const dir = trackedTempDir("segscan-fleet-html2-");
    await generateCluster(join(dir, "c"), 3, {
      seed: 5,
      faults: ["torn-on-one", "lost-everywhere", "divergent", "torn-everywhere", "identity-mismatch"],
    });
    const engine = createTsEngine();
    const reports = [];
    for (const name of ["node-0", "node-1", "node-2"])
      reports.push({ name, report: toJsonReport(await scanPath(join(dir, "c", name), { engine, replicaCount: 3 })) });
    const fleet = await mergeReports(reports);
    expect(fleet.verdict).toBe("diverged");
    const file = join(dir, "fleet.html");
    writeFileSync(file, renderFleetHtml({ ...fleet, partitions: fleet.partitions.filter((p) => p.verdict !== "clean") }));

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`file://${file}`);

      // The banner: the first thing under the title, in the verdict's colour, saying the verdict.
      const banner = page.locator(".banner");
      expect(await banner.getAttribute("data-verdict")).toBe("diverged");
      expect(await banner.textContent()).toMatch(/^verdict DIVERGED/);
      const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(", ")})`;
      expect(await banner.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(rgb(FLEET_VERDICT_COLORS.diverged.background));

      // Problems first, glossary last: banner, cluster findings, partitions, summary, legend.
      const order = await page.evaluate(() =>
        Array.from(document.body.children)
          .map((el) => el.className || el.tagName.toLowerCase())
          .filter((name) => name !== "p"),
      );
      expect(order[0]).toBe("h1");
      expect(order.slice(1, 3)).toEqual(["banner v-diverged", "problems"]);
      expect(order.at(-1)).toBe("legend");
      expect(order.at(-2)).toBe("summary");
      const y = async (selector: string) => (await page.locator(selector).first().boundingBox())!.y;
      expect(await y("section.part")).toBeLessThan(await y("table.summary"));
      expect(await y("section.part")).toBeLessThan(900);
      expect(await page.locator(".problems").textContent()).toContain("ClusterMismatch");
      expect(await page.locator(".problems code.cmd").first().textContent()).toMatch(/^segscan scan .*node-2 --replicas 3 --ndjson$/);

      // The split brain: node-1's lane says it diverged (the odd one out), never in-sync.
      const diverged = page.locator('section.part[data-verdict="diverged"]');
      expect(await diverged.locator('.lane[data-node="node-1"] .name').textContent()).toBe("node-1 · diverged");
      expect(await diverged.locator('.lane[data-node="node-1"] .name').getAttribute("title")).toContain("the odd one out");
      // No lane label is clipped: what it says is seen whole.
      const clipped = await page.evaluate(() =>
        Array.from(document.querySelectorAll(".lane .name"))
          .filter((name) => name.scrollWidth > name.clientWidth)
          .map((name) => name.textContent),
      );
      expect(clipped).toEqual([]);
      expect(await diverged.locator('.lane[data-node="node-1"]').getAttribute("data-role")).toBe("diverged");
      expect(await diverged.locator(".steps code.cmd").first().textContent()).toMatch(/^segscan dump .*\.log --messages$/);
      // A lost partition's steps: the salvage command to paste.
      const lost = page.locator('section.part[data-verdict="lost"]');
      expect(await lost.locator(".steps code.cmd").first().textContent()).toMatch(/^segscan salvage .* --apply$/);

      // Every legend swatch is painted as the mark it names is drawn.
      const paint = (selector: string) =>
        page
          .locator(selector)
          .first()
          .evaluate((el) => {
            const style = getComputedStyle(el);
            return { color: style.backgroundColor, image: style.backgroundImage };
          });
      for (const [swatch, drawn] of [
        [".legend .sw.proven", ".lanes .bar.proven"],
        [".legend .sw.intact", ".lanes .bar.intact"],
        [".legend .sw.unreadable", ".lanes .bar.unreadable"],
        [".legend .sw.cut", ".lanes .bar.cut"],
        [".legend .sw.lost", ".lanes .lost"],
        [".legend .sw.diverge", ".lanes .diverge"],
      ] as const) {
        expect(await page.locator(drawn).count(), drawn).toBeGreaterThan(0);
        expect(await paint(swatch), swatch).toEqual(await paint(drawn));
      }
      await page.screenshot({ path: join(dir, "fleet-1200.png"), fullPage: true });

      // At 600 px every swatch stays on its label's line.
      await page.setViewportSize({ width: 600, height: 900 });
      const keys = await page.evaluate(() =>
        Array.from(document.querySelectorAll(".legend .key")).map((key) => {
          const swatch = key.querySelector(".sw")!.getBoundingClientRect();
          const range = document.createRange();
          range.selectNodeContents(key.lastChild!);
          return { swatch: swatch.top + swatch.height / 2, text: Array.from(range.getClientRects()).map((r) => r.top + r.height / 2) };
        }),
      );
      expect(keys).toHaveLength(6);
      for (const key of keys) {
        expect(key.text).toHaveLength(1);
        expect(Math.abs(key.text[0]! - key.swatch)).toBeLessThanOrEqual(6);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(600);
      await page.screenshot({ path: join(dir, "fleet-600.png"), fullPage: true });
      if (process.env.SEGSCAN_KEEP_HTML) console.log(`fleet pages and screenshots kept in ${dir}`);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
