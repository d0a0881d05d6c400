/**
 * The self-contained HTML report, in a real browser: Debian's
 * Chromium driven by playwright-core. The demo data set goes through the BUILT
 * CLI (`scan --json --html`, then `report <scan.json> --html`), a synthetic
 * 10,000-partition report through the renderer; each page is checked for its
 * rows, filters, mark positions, tooltips, keyboard use, console errors and
 * network requests, and a screenshot's pixels (so a blank page cannot pass).
 * The browser tests skip, saying why, only when no Chromium is installed and
 * SEGSCAN_REQUIRE_BROWSER=1 is not set (CI sets it: there a missing browser fails).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import pngjs from "pngjs";
import { DEMO_SCENARIOS, Prng, generateDataDir } from "../src/gen/index.js";
import { writeNodeMetadata } from "../src/gen/node/node.js";
import { shellQuote } from "../src/domain/command.js";
import { SEVERITY_ORDER } from "../src/domain/node.js";
import {
  HTML_FINDING_PATHS_SHOWN,
  MARK_COLORS,
  NEXT_STEP_ARGV_FIELD,
  OKABE_ITO,
  VERDICT_COLORS,
  nextStepCommands,
  renderHtmlReport,
  type HtmlReportInput,
} from "../src/report/html/index.js";
import { naturalCompare } from "../src/report/html/render.js";
import { scopeLine } from "../src/report/format.js";
import type { JsonPartition, JsonScanReport, JsonSegment, JsonSegmentScopeRange } from "../src/report/json.js";
import { validateJsonReport } from "../src/report/json-validate.js";

const CLI = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
const CHROMIUM = process.env.SEGSCAN_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** Synthetic report size the issue asks to stay usable. */
const LARGE_PARTITIONS = 10_000;
/** Pixel channels may differ this much from the palette colour (anti-aliasing, colour management). */
const COLOR_TOLERANCE = 12;
/** Mark centres may sit this far from the computed position (sub-pixel rounding of percentage coordinates). */
const POSITION_TOLERANCE_PX = 2;
/** Where the synthetic report's refused segments stop their proven prefix. */
const REFUSED_DAMAGE_POSITION = 300_000;

/**
 * CI sets SEGSCAN_REQUIRE_BROWSER=1 (.ci/run installs Chromium): a browser that
 * is missing there FAILS the browser tests instead of skipping them quietly.
 */
const BROWSER_REQUIRED = process.env.SEGSCAN_REQUIRE_BROWSER === "1";

if (!HAVE_CHROMIUM && !BROWSER_REQUIRED) {
  console.warn(`html-report browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set SEGSCAN_CHROMIUM)`);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
function runCli(args: string[], stdin?: string, cwd?: string): Promise<Run> {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [CLI, ...args], {
    env,
    stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const count = (value: number): string => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** A segment scope range of the synthetic report (offsets given as numbers). */
function scopeRange(
  kind: JsonSegmentScopeRange["kind"],
  startPosition: number,
  endPosition: number,
  firstOffset: number | null,
  lastOffset: number | null,
  messages: number | null,
): JsonSegmentScopeRange {
  return {
    kind,
    firstOffset: firstOffset === null ? null : String(firstOffset),
    lastOffset: lastOffset === null ? null : String(lastOffset),
    messages,
    bytes: endPosition - startPosition,
    tornEvidence: null,
    startPosition,
    endPosition,
  };
}

/**
 * A valid 10,000-partition report: mostly clean, every 13th a torn tail, every
 * 97th refused with a survivor, every 1,001st failed. Sizes, offsets and
 * timestamps vary by a seeded PRNG, so the embedded JSON compresses like a real
 * report's rather than like one row repeated.
 */
function syntheticReport(partitions: number): JsonScanReport {
  const rng = new Prng(14);
  const out: JsonPartition[] = [];
  let bytesScanned = 0;
  for (let i = 0; i < partitions; i++) {
    const segmentBytes = rng.int(524_288, 1_048_576);
    const firstOffset = rng.int(0, 5_000_000);
    const perSegment = rng.int(300, 2000);
    const startMicros = 1_717_200_000_000_000 + rng.int(0, 86_400_000_000);
    const path = `/var/lib/iggy/streams/${Math.floor(i / 1000) + 1}/topics/${(Math.floor(i / 100) % 10) + 1}/partitions/${(i % 100) + 1}`;
    const verdict = i % 1001 === 500 ? "failed" : i % 97 === 3 ? "refused" : i % 13 === 5 ? "repairable" : "clean";
    const segments: JsonSegment[] = [];
    for (let s = 0; s < 3; s++) {
      const start = firstOffset + s * perSegment;
      const tail = s === 2;
      const firstMicros = startMicros + s * rng.int(1_000_000, 60_000_000);
      bytesScanned += segmentBytes;
      const segment: JsonSegment = {
        startOffset: String(start),
        endOffset: String(start + perSegment - 1),
        startTimestamp: String(firstMicros),
        endTimestamp: String(firstMicros + rng.int(1000, 999_000)),
        messageCount: perSegment,
        logPath: `${path}/${String(start).padStart(20, "0")}.log`,
        messagesSize: segmentBytes,
        indexSize: 64,
        arm: "indexed",
        outcome: "clean",
        walkedSize: segmentBytes,
        residue: null,
        gaps: [],
        warnings: [],
        index: { entries: 4, trailingBytes: 0, rebuilt: false, rebuiltEntries: 0, mismatches: 0 },
        refusal: null,
        lastBatch: null,
        batchChecksumsXxh3: null,
        scope: [scopeRange("proven", 0, segmentBytes, start, start + perSegment - 1, perSegment)],
      };
      if (tail && verdict === "repairable") {
        const damagePosition = segmentBytes - rng.int(100, 100_000);
        Object.assign(segment, {
          outcome: "torn-tail",
          walkedSize: damagePosition,
          messageCount: null,
          endOffset: String(start + perSegment - 20),
          residue: {
            damagePosition,
            bytes: segmentBytes - damagePosition,
            allZero: i % 2 === 0,
            probe: "no-survivor",
            survivorPosition: null,
            spentUnits: 1000,
            tornEvidence: i % 2 === 0 ? "zero-filled" : "short-batch",
          },
          scope: [
            scopeRange("proven", 0, damagePosition, start, start + perSegment - 20, null),
            {
              ...scopeRange("torn", damagePosition, segmentBytes, null, null, null),
              tornEvidence: i % 2 === 0 ? "zero-filled" : "short-batch",
            },
          ],
        });
      }
      if (s === 1 && verdict === "refused") {
        const damagePosition = REFUSED_DAMAGE_POSITION;
        const survivorPosition = REFUSED_DAMAGE_POSITION + rng.int(1000, 100_000);
        Object.assign(segment, {
          outcome: "refused",
          walkedSize: damagePosition,
          messageCount: null,
          residue: {
            damagePosition,
            bytes: segmentBytes - damagePosition,
            allZero: false,
            probe: "survivor",
            survivorPosition,
            spentUnits: 300_000,
            tornEvidence: "complete-batch",
          },
          scope: [
            scopeRange("proven", 0, damagePosition, start, start + 99, null),
            scopeRange("unreadable", damagePosition, survivorPosition, start + 100, start + 104, 5),
            scopeRange("intact", survivorPosition, segmentBytes, start + 105, start + perSegment - 1, perSegment - 105),
          ],
          refusal: {
            code: "InteriorDamage",
            message: `segment ${start}: damage at byte ${damagePosition} is followed by a verifying batch at byte ${survivorPosition}`,
            segment: String(start),
            damagePosition,
            survivorPosition,
          },
        });
      }
      segments.push(segment);
    }
    const refusal = verdict === "refused" ? segments[1]!.refusal : null;
    out.push({
      path,
      verdict,
      refusal,
      action: verdict === "clean" ? "serve" : verdict === "repairable" ? "repair" : verdict === "refused" ? "tombstone" : "retry",
      error: verdict === "failed" ? { code: "ReadFailure", path: segments[0]!.logPath, message: "EIO reading 4096 bytes at 0" } : null,
      budget: { limitUnits: 2_281_701_376, spentUnits: verdict === "refused" ? 300_000 : verdict === "repairable" ? 1000 : 0 },
      sweep: [],
      ignored: [],
      segments,
      scope:
        verdict === "failed"
          ? []
          : segments.flatMap((segment) => segment.scope).map(({ startPosition: _s, endPosition: _e, ...range }) => range),
      nextStep:
        verdict === "failed"
          ? "retry: fix what stopped the scan (ReadFailure) and scan again; nothing was concluded or changed"
          : `the next step of ${path}`,
      findings: [],
    });
  }
  const tally = (verdict: JsonPartition["verdict"]): number => out.filter((p) => p.verdict === verdict).length;
  const worst = (["failed", "refused", "repairable"] as const).find((verdict) => tally(verdict) > 0) ?? "clean";
  return {
    segscan: "1.0.0",
    engine: "wasm",
    verdict: worst,
    options: { verify: "tail", replicaCount: 1, probeBudgetUnits: 2_281_701_376, windowBytes: 1_048_576 },
    partitions: out,
    summary: {
      partitions: out.length,
      clean: tally("clean"),
      repairable: tally("repairable"),
      refused: tally("refused"),
      failed: tally("failed"),
      findings: { warn: 0, failed: 0 },
      bytesScanned,
      elapsedMs: 1234,
    },
  };
}

interface JsonFinding {
  severity: string;
  code: string;
  path: string;
  message: string;
  nextStep: string;
  [field: string]: unknown;
}

/** Every finding of a node section (each `findings` array, however deep), as the page collects them. */
function jsonFindings(value: unknown, into: JsonFinding[] = []): JsonFinding[] {
  if (Array.isArray(value)) for (const item of value) jsonFindings(item, into);
  else if (value !== null && typeof value === "object")
    for (const [key, inner] of Object.entries(value)) {
      if (key === "findings" && Array.isArray(inner)) into.push(...(inner as JsonFinding[]));
      else if (key !== "bootForecast") jsonFindings(inner, into);
    }
  return into;
}

/** A path no shell reads as itself: a quote, a space and a terminal escape (OSC retitle) in one name. */
const HOSTILE_DIR = "it's here\u001b]0;owned\u0007";

/**
 * The report as it reads once every next step carries its command as an argv
 * array beside the sentence (docs/interfaces.md §9.2): each partition that is
 * not clean (the first refused one under a hostile directory name) and each
 * node finding that is not clean.
 */
function withArgv(report: JsonScanReport): HtmlReportInput {
  const copy = structuredClone(report) as HtmlReportInput;
  let hostile = true;
  for (const partition of copy.partitions) {
    if (partition.verdict === "clean") continue;
    const verb = partition.action === "repair" ? "repair" : "salvage";
    const path = partition.verdict === "refused" && hostile ? `${partition.path}/${HOSTILE_DIR}` : partition.path;
    if (partition.verdict === "refused") hostile = false;
    (partition as unknown as Record<string, unknown>)[NEXT_STEP_ARGV_FIELD] = ["segscan", verb, path, "--apply"];
  }
  const root = String(copy.node?.path ?? "/");
  for (const finding of jsonFindings(copy.node)) {
    if (finding.severity === "clean") continue;
    finding[NEXT_STEP_ARGV_FIELD] = /clamp-offsets/.test(finding.nextStep)
      ? ["segscan", "repair", root, "--clamp-offsets", "--apply"]
      : ["segscan", "repair", root, "--apply"];
  }
  return copy;
}

/** The same report with every argv field taken out: the page must read as it did before the field existed. */
function withoutArgv<T>(report: T): T {
  return JSON.parse(JSON.stringify(report, (key, value: unknown) => (key === NEXT_STEP_ARGV_FIELD ? undefined : value))) as T;
}

/** The JSON payload embedded in a rendered page, decoded (plain or gzip+base64). */
function embeddedReport(html: string): unknown {
  const match = /<script type="application\/json" id="segscan-data"( data-encoding="gzip\+base64")?>([^<]*)<\/script>/.exec(html);
  expect(match).not.toBeNull();
  const [, gzip, payload] = match!;
  return JSON.parse(gzip ? gunzipSync(Buffer.from(payload!, "base64")).toString("utf8") : payload!);
}

let root: string;
let demoJson: JsonScanReport;
let demoHtmlPath: string;
let nodeHtmlPath: string;
let nodeJson: JsonScanReport;
let demoAgainPath: string;
let demoScanRun: Run;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "segscan-html-"));
  const data = join(root, "data");
  await generateDataDir(data, { scenarios: DEMO_SCENARIOS, topicsPerStream: 3, partitionsPerTopic: 2 });
  demoHtmlPath = join(root, "demo.html");
  demoScanRun = await runCli(["scan", data, "--json", "--engine", "ts", "--html", demoHtmlPath]);
  demoJson = JSON.parse(demoScanRun.stdout) as JsonScanReport;
  const jsonPath = join(root, "demo.json");
  await writeFile(jsonPath, demoScanRun.stdout);
  nodeHtmlPath = join(root, "node.html");
  const nodeDir = join(root, "node");
  const generated = await generateDataDir(nodeDir, {
    size: "tiny",
    topicsPerStream: 1,
    partitionsPerTopic: 12,
    scenarios: [
      "two-damaged-ranges",
      "last-batch-bitflip",
      "payload-bitflip",
      "torn-tail",
      "zero-tail",
      "crafted-residue",
      "hole",
      "torn-tail",
      "zero-tail",
      "lost-index",
    ],
  });
  await writeNodeMetadata(nodeDir, generated.partitions, { fault: "wal-torn-tail" });
  const nodeScan = await runCli(["scan", nodeDir, "--json", "--engine", "ts", "--html", nodeHtmlPath]);
  nodeJson = JSON.parse(nodeScan.stdout) as JsonScanReport;
  demoAgainPath = join(root, "demo-again.html");
  const again = await runCli(["report", jsonPath, "--html", demoAgainPath]);
  expect(again.stderr).toContain(`wrote the HTML report ${demoAgainPath}`);
  expect(again.code).toBe(0);
});

afterAll(async () => {
  if (root && !process.env.SEGSCAN_KEEP_HTML) await rm(root, { recursive: true, force: true });
  else if (root) console.log(`html-report: pages and screenshots kept in ${root}`);
});

describe("HTML report: CLI and page file (no browser)", () => {
  it("scan --json --html and report <scan.json> --html write the same page, embedding the same report", async () => {
    expect(demoScanRun.code).toBe(4); // repairable and refused partitions: problems left
    expect(validateJsonReport(demoJson)).toEqual([]);
    const page = await readFile(demoHtmlPath, "utf8");
    expect(await readFile(demoAgainPath, "utf8")).toBe(page);
    expect(embeddedReport(page)).toEqual(demoJson);
    // `report -` reads the JSON from stdin and draws the same page.
    const fromStdin = join(root, "demo-stdin.html");
    const piped = await runCli(["report", "-", "--html", fromStdin], demoScanRun.stdout);
    expect(piped.code).toBe(0);
    expect(await readFile(fromStdin, "utf8")).toBe(page);
    // Self-contained: a CSP forbidding every fetch, and no external reference at all.
    expect(page).toContain(`content="default-src 'none';`);
    expect(page).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    expect(page).not.toMatch(/<link\b/);
  });

  it("report refuses a file that is not a scan --json report, names the problem, and writes nothing", async () => {
    const bad = join(root, "bad.json");
    const out = join(root, "bad.html");
    const broken = { ...demoJson, summary: { ...demoJson.summary, refused: 7 } };
    await writeFile(bad, JSON.stringify(broken));
    const run = await runCli(["report", bad, "--html", out]);
    expect(run.code).toBe(16);
    expect(run.stderr).toContain("is not a `segscan scan --json` report: $.summary.refused: 7 but 1 partitions are refused");
    expect(run.stderr).toContain("nothing was written");
    expect(existsSync(out)).toBe(false);

    await writeFile(bad, "{ not json");
    const notJson = await runCli(["report", bad, "--html", out]);
    expect(notJson.code).toBe(16);
    expect(notJson.stderr).toMatch(/bad\.json is not JSON/);
    expect(existsSync(out)).toBe(false);

    const missing = await runCli(["report", join(root, "missing.json"), "--html", out]);
    expect(missing.code).toBe(8);
    expect(missing.stderr).toContain("ENOENT");

    const noHtml = await runCli(["report", bad]);
    expect(noHtml.code).toBe(16);
    expect(noHtml.stderr).toContain("--html <file>");
  });

  it("report on a 20,000-deep nested JSON is a usage error naming the file, not a raw RangeError", async () => {
    const deep = join(root, "deep.json");
    const out = join(root, "deep.html");
    await writeFile(deep, "[".repeat(20_000) + "]".repeat(20_000));
    const run = await runCli(["report", deep, "--html", out]);
    expect(run.code).toBe(16);
    expect(run.stderr).toBe(
      `segscan: ${deep} is not a \`segscan scan --json\` report: $: nests arrays and objects more than 64 levels deep ` +
        "(a report nests fewer than 10); nothing was written\n",
    );
    expect(existsSync(out)).toBe(false);
  });

  it("scan --html to an unwritable path keeps the findings' exit bits and adds 8", async () => {
    const data = join(root, "data");
    const run = await runCli(["scan", data, "--engine", "ts", "--html", join(root, "missing-dir", "x.html")]);
    expect(run.code).toBe(4 | 8);
    expect(run.stderr).toContain(`cannot write the HTML report ${join(root, "missing-dir", "x.html")}: ENOENT`);
    expect(run.stdout).toContain("partitions:"); // the text report is printed all the same
  });

  it("--html -: report writes the page to stdout; scan refuses it (stdout carries its own report)", async () => {
    const piped = await runCli(["report", "-", "--html", "-"], demoScanRun.stdout, root);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(await readFile(demoHtmlPath, "utf8"));
    expect(existsSync(join(root, "-"))).toBe(false);
    const scanned = await runCli(["scan", join(root, "data"), "--html", "-"]);
    expect(scanned.code).toBe(16);
    expect(scanned.stdout).toBe("");
    expect(scanned.stderr).toContain("scan --html -: stdout carries scan's own report; give --html a file");
  });

  it("embeds a large report gzip+base64 and a small one as plain JSON, both decoding to the report", () => {
    const large = syntheticReport(LARGE_PARTITIONS);
    expect(validateJsonReport(large)).toEqual([]);
    const page = renderHtmlReport(large);
    expect(page).toContain(`data-encoding="gzip+base64"`);
    expect(embeddedReport(page)).toEqual(large);
    const small = renderHtmlReport(demoJson);
    expect(small).toContain(`<script type="application/json" id="segscan-data">{`);
    expect(embeddedReport(small)).toEqual(demoJson);
  });

  it("a path holding </script> cannot end the embedded JSON early", () => {
    const hostile = structuredClone(demoJson);
    hostile.partitions[0]!.path = "/data/</script><script>alert(1)</script>";
    const page = renderHtmlReport(hostile, { embed: "plain" });
    expect(page.match(/<\/script>/g)!.length).toBe(4); // config, data, commands, script: nothing more
    expect(embeddedReport(page)).toEqual(hostile);
  });

  it("findings that say the same thing to do are one item: its head names the first HTML_FINDING_PATHS_SHOWN paths and counts the rest; why lists each with its message", () => {
    const report = structuredClone(nodeJson) as HtmlReportInput;
    const root = String(report.node!.path);
    const many = 11;
    const partitions = (report.node as { partitions: { findings: unknown[] }[] }).partitions;
    for (let i = 1; i <= many; i++)
      partitions[0]!.findings.push({
        severity: "warn",
        code: "OffsetTorn",
        path: `${root}/streams/1/topics/1/partitions/${i}/offsets/consumers/9`,
        message: `consumer 9 of partition ${i}: the value is lost`,
        nextStep: "nothing segscan can do: the consumer restarts from 0",
      });
    const page = renderHtmlReport(report);
    const item = /<li class="node-finding sev-warn" data-severity="warn" data-code="OffsetTorn">(.*?<\/li>)<\/ul><\/details>/s.exec(
      page,
    )![1]!;
    const head = item.slice(0, item.indexOf("<details"));
    expect(head).toContain(`&times; ${many}`);
    expect(head.match(/class="mono finding-path"/g)!.length).toBe(HTML_FINDING_PATHS_SHOWN);
    expect(head).toContain(`and ${many - HTML_FINDING_PATHS_SHOWN} more (under why)`);
    // Numbers as numbers: partitions/2 before partitions/10.
    expect(head.indexOf("partitions/2/")).toBeLessThan(head.indexOf("partitions/8/"));
    for (let i = 1; i <= many; i++)
      expect(item).toContain(
        `<li><span class="mono">streams/1/topics/1/partitions/${i}/offsets/consumers/9</span>: consumer 9 of partition ${i}: the value is lost</li>`,
      );
    expect(page.match(/data-code="OffsetTorn"/g)!.length).toBe(1);
  });

  it("a next step's argv is shown shell-quoted: one command or several, none when the field is absent or not an argv", () => {
    const argv = ["segscan", "salvage", `/data/${HOSTILE_DIR}`, "--apply"];
    expect(nextStepCommands({ nextStep: "s", [NEXT_STEP_ARGV_FIELD]: argv })).toEqual([shellQuote(argv)]);
    expect(nextStepCommands({ [NEXT_STEP_ARGV_FIELD]: [argv, ["segscan", "scan", "/data"]] })).toEqual([
      shellQuote(argv),
      "segscan scan /data",
    ]);
    expect(shellQuote(argv)).toBe("segscan salvage $'/data/it\\'s here\\x1b]0;owned\\x07' --apply");
    for (const absent of [
      { nextStep: "s" },
      { [NEXT_STEP_ARGV_FIELD]: null },
      { [NEXT_STEP_ARGV_FIELD]: [] },
      { [NEXT_STEP_ARGV_FIELD]: "segscan scan" },
      null,
    ])
      expect(nextStepCommands(absent)).toEqual([]);
    // The node findings are static HTML: their commands are there without the script, HTML-escaped.
    const page = renderHtmlReport(withArgv(nodeJson));
    expect(page).toContain(`<code class="mono" tabindex="0">segscan repair ${shellQuote([nodeJson.node!.path as string])} --apply</code>`);
    expect(renderHtmlReport(withoutArgv(nodeJson))).not.toContain('<code class="mono" tabindex="0">segscan');
  });
});

const describeBrowser = HAVE_CHROMIUM ? describe : describe.skip;

if (!HAVE_CHROMIUM && BROWSER_REQUIRED) {
  describe("HTML report in headless Chromium (required)", () => {
    it("finds Chromium: SEGSCAN_REQUIRE_BROWSER=1 makes a missing browser a failure", () => {
      throw new Error(
        `no Chromium at ${CHROMIUM}, and SEGSCAN_REQUIRE_BROWSER=1 requires the browser tests: apt-get install chromium, or set SEGSCAN_CHROMIUM`,
      );
    });
  });
}

describeBrowser("HTML report in headless Chromium", () => {
  let context: BrowserContext;
  let userDataDir: string;

  beforeAll(async () => {
    userDataDir = await mkdtemp(join(tmpdir(), "segscan-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: 1,
    });
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  interface Watched {
    page: Page;
    errors: string[];
    requests: string[];
  }

  /** Opens a page from disk, recording console errors, page errors and every request other than the page itself. */
  async function open(path: string): Promise<Watched & { openMs: number }> {
    const page = await context.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    const self = pathToFileURL(path).href;
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("request", (request) => {
      if (request.url() !== self) requests.push(request.url());
    });
    await page.route("**/*", (route) => (route.request().url() === self ? route.continue() : route.abort()));
    const started = performance.now();
    await page.goto(self);
    await page.waitForSelector("html[data-ready=true]");
    return { page, errors, requests, openMs: performance.now() - started };
  }

  async function rowCount(page: Page): Promise<number> {
    return page.locator("ol#partitions > li.partition").count();
  }

  /** The RGB of one pixel of a viewport screenshot. */
  function pixel(png: Buffer, x: number, y: number): [number, number, number] {
    const image = pngjs.PNG.sync.read(png);
    const at = (image.width * Math.round(y) + Math.round(x)) * 4;
    return [image.data[at]!, image.data[at + 1]!, image.data[at + 2]!];
  }

  function rgb(hex: string): [number, number, number] {
    const value = Number.parseInt(hex.slice(1), 16);
    return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
  }

  function expectColor(actual: [number, number, number], hex: string): void {
    const wanted = rgb(hex);
    for (let i = 0; i < 3; i++)
      expect(Math.abs(actual[i]! - wanted[i]!), `channel ${i} of ${actual} vs ${hex}`).toBeLessThanOrEqual(COLOR_TOLERANCE);
  }

  it("demo report: rows, marks at their byte positions, tooltips on hover and focus, filters, pixels, no errors or requests", async () => {
    const { page, errors, requests } = await open(demoHtmlPath);
    // Six partitions (≤ 50): nothing hidden by default.
    expect(await page.locator("#only-problems").isChecked()).toBe(false);
    expect(await rowCount(page)).toBe(demoJson.partitions.length);

    // The refused partition's segment with a survivor, from the JSON the page draws.
    const refusedIndex = demoJson.partitions.findIndex((p) => p.verdict === "refused");
    const refused = demoJson.partitions[refusedIndex]!;
    const segmentIndex = refused.segments.findIndex((s) => s.residue?.probe === "survivor");
    const segment = refused.segments[segmentIndex]!;
    const residue = segment.residue!;
    const row = page.locator(`li.partition[data-index="${refusedIndex}"]`);
    await expect(row.locator(".badge").textContent()).resolves.toBe("refused");
    await expect(row.locator(".refusal").textContent()).resolves.toContain("InteriorDamage");
    const bar = row.locator("svg.bar:not(.zoom)").nth(segmentIndex);
    await bar.evaluate((element) => element.scrollIntoView({ block: "center" }));
    const file = (await bar.locator("rect.file").boundingBox())!;
    const damage = (await bar.locator("rect.damage-line").boundingBox())!;
    const survivor = (await bar.locator("rect.survivor-line").boundingBox())!;
    const expectedDamageX = file.x + file.width * (residue.damagePosition / segment.messagesSize);
    const expectedSurvivorX = file.x + file.width * (residue.survivorPosition! / segment.messagesSize);
    expect(Math.abs(damage.x + damage.width / 2 - expectedDamageX)).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    expect(Math.abs(survivor.x + survivor.width / 2 - expectedSurvivorX)).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    expect(survivor.x).toBeGreaterThan(damage.x + damage.width); // the survivor lies after the damage, visibly apart
    // The proven prefix ends exactly at the damage.
    const prefix = (await bar.locator("rect.prefix").boundingBox())!;
    expect(Math.abs(prefix.x + prefix.width - expectedDamageX)).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    // The zoomed bar of the same segment draws bytes [from, size) across the row: the marks come apart.
    const zoom = row.locator("svg.bar.zoom");
    await expect(zoom.count()).resolves.toBe(1);
    const from = Number(await zoom.getAttribute("data-from"));
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(residue.damagePosition);
    const zoomFile = (await zoom.locator("rect.file").boundingBox())!;
    const zoomDamage = (await zoom.locator("rect.damage-line").boundingBox())!;
    const zoomSurvivor = (await zoom.locator("rect.survivor-line").boundingBox())!;
    const zoomX = (position: number): number => zoomFile.x + zoomFile.width * ((position - from) / (segment.messagesSize - from));
    expect(Math.abs(zoomDamage.x + zoomDamage.width / 2 - zoomX(residue.damagePosition))).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    expect(Math.abs(zoomSurvivor.x + zoomSurvivor.width / 2 - zoomX(residue.survivorPosition!))).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    expect(zoomSurvivor.x - zoomDamage.x).toBeGreaterThan(survivor.x - damage.x);

    // Pixels: the damage line is vermillion, the survivor line reddish purple (so a blank page cannot pass).
    await page.mouse.move(0, 0);
    const shot = await page.screenshot({ path: join(root, "demo-viewport.png") });
    expectColor(pixel(shot, damage.x + damage.width / 2, damage.y + damage.height * 0.75), MARK_COLORS.damage);
    expectColor(pixel(shot, survivor.x + survivor.width / 2, survivor.y + survivor.height * 0.75), MARK_COLORS.survivor);
    await page.screenshot({ path: join(root, "demo-full.png"), fullPage: true });

    // Hover shows the exact numbers.
    const tooltip = page.locator("#tooltip");
    await bar.locator('[data-mark="damage"] rect.hit').hover();
    await expect(tooltip.isVisible()).resolves.toBe(true);
    const damageTip = await tooltip.textContent();
    expect(damageTip).toContain(`Damage at byte ${count(residue.damagePosition)} (InteriorDamage)`);
    expect(damageTip).toContain(`probe spent ${count(residue.spentUnits)} units`);
    // Keyboard: focus the damage mark, an arrow key moves to the survivor, its numbers show, Esc hides them.
    await page.mouse.move(0, 0);
    await bar.locator('[data-mark="damage"]').focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-mark"))).toBe("survivor");
    await expect(tooltip.textContent()).resolves.toContain(`Survivor at byte ${count(residue.survivorPosition!)}`);
    await page.keyboard.press("Escape");
    await expect(tooltip.isVisible()).resolves.toBe(false);

    // Text alternatives: every drawing and every mark has an accessible name and a <title>.
    const unnamed = await page.evaluate(
      () =>
        [
          ...Array.from(document.querySelectorAll("svg.bar")).filter((svg) => !svg.getAttribute("aria-label")),
          ...Array.from(document.querySelectorAll(".mark")).filter(
            (mark) => !mark.getAttribute("aria-label") || !mark.querySelector("title"),
          ),
          ...Array.from(document.querySelectorAll(".mark")).filter((mark) => mark.getAttribute("tabindex") !== "0"),
        ].length,
    );
    expect(unnamed).toBe(0);

    // The torn tail's cut point sits at the proven prefix P.
    const tornIndex = demoJson.partitions.findIndex((p) =>
      p.segments.some((s) => s.outcome === "torn-tail" && s.residue?.allZero === false),
    );
    const torn = demoJson.partitions[tornIndex]!;
    const tornSegmentIndex = torn.segments.findIndex((s) => s.outcome === "torn-tail");
    const tornSegment = torn.segments[tornSegmentIndex]!;
    const tornBar = page.locator(`li.partition[data-index="${tornIndex}"] svg.bar:not(.zoom)`).nth(tornSegmentIndex);
    await tornBar.evaluate((element) => element.scrollIntoView({ block: "center" }));
    await tornBar.locator('[data-mark="cut"] rect.hit').hover();
    await expect(tooltip.textContent()).resolves.toContain(
      `Damage position and cut point at byte ${count(tornSegment.walkedSize)}: a repair truncates the .log from ${count(tornSegment.messagesSize)}`,
    );

    // Every card says its next step and its scope in the words of the JSON and the text report.
    for (const [i, partition] of demoJson.partitions.entries()) {
      const card = page.locator(`li.partition[data-index="${i}"]`);
      await expect(card.locator("p.next-step").textContent()).resolves.toBe(
        `Next step: ${partition.nextStep} (action ${partition.action})`,
      );
      if (partition.scope.length > 1) {
        await expect(card.locator("p.scope").textContent()).resolves.toBe(`Scope: ${scopeLine(partition.scope as never)}`);
      } else {
        await expect(card.locator("p.scope").count()).resolves.toBe(0);
      }
    }
    // The scope's ranges are drawn on the bar where their bytes are: the unreadable one from the damage to the survivor.
    const unreadable = segment.scope.find((range) => range.kind === "unreadable")!;
    const unreadableBox = (await bar.locator('[data-mark="range-unreadable"] rect.range').boundingBox())!;
    expect(Math.abs(unreadableBox.x - (file.x + file.width * (unreadable.startPosition / segment.messagesSize)))).toBeLessThanOrEqual(
      POSITION_TOLERANCE_PX,
    );
    expect(
      Math.abs(unreadableBox.x + unreadableBox.width - (file.x + file.width * (unreadable.endPosition / segment.messagesSize))),
    ).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    await expect(bar.locator('[data-mark="range-unreadable"]').getAttribute("data-tip")).resolves.toContain(
      `offsets ${unreadable.firstOffset === unreadable.lastOffset ? unreadable.firstOffset : `${unreadable.firstOffset}..${unreadable.lastOffset}`} cannot be proven`,
    );
    await expect(bar.locator('[data-mark="range-intact"]').count()).resolves.toBe(1);
    // The verdicts' meanings are said once, in the header, not in every card.
    const refusedWords = await page.evaluate(
      () => (document.body.textContent ?? "").split("damage hides data that may be durable").length - 1,
    );
    expect(refusedWords).toBe(1);

    // Zero and non-zero residues are told apart by pattern; sweep candidates are listed; index entries are ticks.
    const zeroResidues = demoJson.partitions.flatMap((p) => p.segments).filter((s) => s.residue?.allZero === true).length;
    const nonZeroResidues = demoJson.partitions.flatMap((p) => p.segments).filter((s) => s.residue?.allZero === false).length;
    expect(zeroResidues).toBeGreaterThan(0);
    await expect(page.locator('svg.bar:not(.zoom) [data-mark="residue-zero"]').count()).resolves.toBe(zeroResidues);
    await expect(page.locator('svg.bar:not(.zoom) [data-mark="residue-nonzero"]').count()).resolves.toBe(nonZeroResidues);
    const sweepIndex = demoJson.partitions.findIndex((p) => p.sweep.length > 0);
    const sweepItems = page.locator(`li.partition[data-index="${sweepIndex}"] .sweep li`);
    await expect(sweepItems.count()).resolves.toBe(demoJson.partitions[sweepIndex]!.sweep.length);
    await expect(sweepItems.first().textContent()).resolves.toContain(".index.staging");
    const firstSegment = demoJson.partitions[0]!.segments[0]!;
    const indexMark = page.locator('li.partition[data-index="0"] svg.bar:not(.zoom)').first().locator('[data-mark="index"]');
    await expect(indexMark.locator("line.tick").count()).resolves.toBe(firstSegment.index.entries);
    await expect(indexMark.getAttribute("data-tip")).resolves.toContain(
      `Index: ${firstSegment.index.entries} entries (${firstSegment.indexSize} bytes)\nthe report holds the count, not the positions`,
    );

    // Filters: only the partitions that are not clean, then search by path.
    const notClean = demoJson.partitions.filter((p) => p.verdict !== "clean").length;
    await page.locator("#only-problems").check();
    expect(await rowCount(page)).toBe(notClean);
    await page.locator("#search").fill("topics/3/");
    await page.locator("#search").press("Enter");
    const query = (p: JsonPartition): boolean => p.path.includes("topics/3/");
    expect(await rowCount(page)).toBe(demoJson.partitions.filter((p) => p.verdict !== "clean" && query(p)).length);
    await page.locator("#only-problems").uncheck();
    expect(await rowCount(page)).toBe(demoJson.partitions.filter(query).length);
    await page.locator("#search").fill("no such partition");
    await page.locator("#search").press("Enter");
    expect(await rowCount(page)).toBe(0);
    await expect(page.locator("#empty").isVisible()).resolves.toBe(true);

    // Print: the controls go, the drawings stay.
    await page.locator("#search").fill("");
    await page.locator("#search").press("Enter");
    await page.emulateMedia({ media: "print" });
    await expect(page.locator(".toolbar").isVisible()).resolves.toBe(false);
    await expect(page.locator("svg.bar").first().isVisible()).resolves.toBe(true);
    await page.emulateMedia({ media: "screen" });

    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it("draws segment warnings, ignored files and a boot forecast when present", async () => {
    const extended = structuredClone(demoJson) as HtmlReportInput;
    const first = extended.partitions[0]!;
    const warned = first.segments[0]!;
    warned.gaps = [{ position: 8192, expectedOffset: "12", foundOffset: "20" }];
    Object.assign(warned, {
      warnings: [{ code: "OversizedBatch", position: 4096, batchLength: 70_000_000, message: "batch at byte 4096 is 70000000 bytes long" }],
    });
    Object.assign(first, {
      path: `${first.path}<img src="https://example.invalid/x.png">`,
      ignored: [{ path: `${first.path}/notes.log`, kind: "bad-segment-name", message: "notes.log: the stem is not a u64 offset" }],
    });
    (extended as { node?: unknown }).node = {
      bootForecast: [
        { effect: "truncate", path: warned.logPath, destructive: true, detail: "the server would cut 8,635 bytes" },
        { effect: "create-index", path: "/data/x.index", destructive: false, detail: "rebuilt from the log" },
      ],
    };
    const path = join(root, "extended.html");
    await writeFile(path, renderHtmlReport(extended));
    const { page, errors, requests } = await open(path);
    await expect(page.locator("table.forecast tbody tr").count()).resolves.toBe(2);
    await expect(page.locator("table.forecast tr.destructive").textContent()).resolves.toContain("destructive");
    const row = page.locator('li.partition[data-index="0"]');
    await expect(row.locator(".path").textContent()).resolves.toContain('<img src="https://example.invalid/x.png">'); // shown as text
    await expect(row.locator(".ignored").textContent()).resolves.toContain("notes.log: the stem is not a u64 offset");
    await expect(row.locator(".warnings").textContent()).resolves.toContain("OversizedBatch");
    const warning = row.locator('[data-mark="warning"]');
    await warning.evaluate((element) => element.scrollIntoView({ block: "center" }));
    await warning.focus();
    await expect(page.locator("#tooltip").textContent()).resolves.toContain(
      "Warning OversizedBatch at byte 4,096 (batch length 70,000,000 bytes)",
    );
    const gap = row.locator('svg.bar:not(.zoom) [data-mark="gap"]');
    await gap.focus();
    await expect(page.locator("#tooltip").textContent()).resolves.toContain("Forward gap at byte 8,192: expected offset 12, found 20");
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it("a node with faults: findings with their paths and next steps, worst first; 600 px wide without sideways scrolling; no label collides", async () => {
    const { page, errors, requests } = await open(nodeHtmlPath);
    const node = nodeJson.node!;
    // Node findings: each names its files (relative to the node root) and its next step, worst first, then by path;
    // findings that say the same thing to do are one item listing every path they concern.
    const items = await page.locator("ul.node-findings > li").evaluateAll((lis) =>
      lis.map((li) => ({
        severity: li.getAttribute("data-severity")!,
        paths: Array.from(li.querySelectorAll(".finding-head .finding-path")).map((path) => path.textContent!),
        next: li.querySelector(":scope > .next-step")?.textContent ?? "",
      })),
    );
    expect(items.length).toBeGreaterThan(2);
    for (const item of items) {
      for (const path of item.paths) expect(path.length).toBeGreaterThan(0);
      expect(item.paths).toEqual([...item.paths].sort(naturalCompare));
      expect(item.next).toMatch(/^Next step: \S/);
    }
    const sorted = [...items].sort(
      (a, b) =>
        SEVERITY_ORDER.indexOf(b.severity as never) - SEVERITY_ORDER.indexOf(a.severity as never) ||
        naturalCompare(a.paths[0]!, b.paths[0]!),
    );
    expect(items).toEqual(sorted);
    // Every finding that is not clean is named by its path (this node has fewer than HTML_FINDING_PATHS_SHOWN per item).
    const notClean = jsonFindings(node).filter((finding) => finding.severity !== "clean");
    expect(items.flatMap((item) => item.paths).length).toBe(notClean.length);
    // Findings about one kind of file in several partitions can be told apart by their paths.
    const aheadPaths = items.flatMap((item) => item.paths).filter((path) => path.includes("offsets/groups/"));
    expect(aheadPaths.length).toBeGreaterThan(1);
    expect(new Set(aheadPaths).size).toBe(aheadPaths.length);
    expect(node.verdict).toBe("refused");

    // Numbers as numbers: partitions/2 before partitions/10 when sorted by path.
    await page.locator("#sort").selectOption("path");
    const paths = await page
      .locator("ol#partitions > li.partition .path")
      .evaluateAll((spans) => spans.map((span) => span.getAttribute("title")!));
    expect(paths).toEqual([...paths].sort(naturalCompare));
    expect(paths.findIndex((path) => path.endsWith("/1/partitions/2"))).toBeLessThan(
      paths.findIndex((path) => path.endsWith("/1/partitions/10")),
    );

    /** Labels under a bar that overlap another label of the same bar, and range names that overrun their range. */
    const collisions = (): Promise<string[]> =>
      page.evaluate(() => {
        const found: string[] = [];
        for (const bar of Array.from(document.querySelectorAll("svg.bar"))) {
          const boxes = Array.from(bar.querySelectorAll("text.mark-label, text.cut-label")).map((label) => ({
            text: label.textContent,
            box: label.getBoundingClientRect(),
          }));
          for (let i = 0; i < boxes.length; i++)
            for (let j = i + 1; j < boxes.length; j++) {
              const [a, b] = [boxes[i]!.box, boxes[j]!.box];
              if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
                found.push(`${boxes[i]!.text}/${boxes[j]!.text}`);
            }
          const barWidth = bar.getBoundingClientRect().width;
          for (const name of Array.from(bar.querySelectorAll("text.range-label"))) {
            if (name.getAttribute("visibility") === "hidden") continue;
            const room = (barWidth * Number.parseFloat(name.parentElement!.getAttribute("width")!)) / 100;
            if ((name as SVGTextElement).getComputedTextLength() + 3 > room)
              found.push(`range label ${name.textContent} overruns its range`);
          }
        }
        return found;
      });
    await page.locator("#page-size").selectOption("0");
    expect(await collisions()).toEqual([]);

    // 600 px: nothing scrolls sideways (the boot forecast stacks), and still nothing collides.
    await page.setViewportSize({ width: 600, height: 900 });
    await page.waitForTimeout(400); // the resize re-lays the labels after a pause
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(600);
    expect(await collisions()).toEqual([]);
    await page.screenshot({ path: join(root, "node-600.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it("a scan of two node roots draws one node section per root, titled with it, worst first, both counted in the banner", async () => {
    // `segscan gen` two node roots, the second with a corrupt snapshot: scanned together, the report carries `nodes`.
    const clean = join(root, "two-nodes", "node-a");
    const broken = join(root, "two-nodes", "node-b");
    const common = ["--size", "tiny", "--topics", "1", "--partitions", "2"];
    expect((await runCli(["gen", clean, "--node", ...common])).code).toBe(0);
    expect((await runCli(["gen", broken, "--node-fault", "snapshot-corrupt", ...common])).code).toBe(0);
    const pagePath = join(root, "two-nodes.html");
    const scan = await runCli(["scan", clean, broken, "--json", "--engine", "ts", "--html", pagePath]);
    expect(scan.code, scan.stderr).toBe(4);
    const report = JSON.parse(scan.stdout) as JsonScanReport;
    expect(report.node).toBeUndefined();
    expect(report.nodes!.map((node) => [node.path, node.verdict])).toEqual([
      [clean, "clean"],
      [broken, "refused"],
    ]);

    const { page, errors, requests } = await open(pagePath);
    const sections = await page.locator("section.node-section").evaluateAll((elements) =>
      elements.map((section) => ({
        root: section.getAttribute("data-root"),
        verdict: section.getAttribute("data-verdict"),
        title: section.querySelector("h2")!.textContent!,
        codes: Array.from(section.querySelectorAll("ul.node-findings > li")).map((li) => li.getAttribute("data-code")),
        forecast: section.querySelector(".forecast-line a")?.getAttribute("href") ?? null,
      })),
    );
    // Worst first: the refused node before the clean one, each titled with its root.
    expect(sections.map((section) => [section.root, section.verdict])).toEqual([
      [broken, "refused"],
      [clean, "clean"],
    ]);
    expect(sections[0]!.title).toBe(`Node findings: ${broken}`);
    expect(sections[1]!.title).toBe(`Node findings: ${clean}`);
    expect(sections[0]!.codes).toContain("SnapshotCorrupt");
    expect(sections[1]!.codes).not.toContain("SnapshotCorrupt");
    // Each node root has its own boot forecast table, titled with its root; a section's line links to its own.
    const forecasts = await page
      .locator("h2[id^=boot-forecast]")
      .evaluateAll((headings) => headings.map((heading) => [heading.id, heading.textContent]));
    expect(forecasts).toEqual([
      ["boot-forecast", `Boot forecast: ${broken}`],
      ["boot-forecast-2", `Boot forecast: ${clean}`],
    ]);
    expect(sections[0]!.forecast).toBe("#boot-forecast");
    // The banner counts both nodes' findings: the refused snapshot is never behind "clean".
    const banner = (await page.locator("section.verdict-banner").textContent())!;
    expect(banner).toMatch(/^Verdict: REFUSED — all 4 partitions are clean; findings of 2 nodes: 1 refused \(SnapshotCorrupt\)/);
    // Problems first: the node sections come before the partitions.
    const tops = await page.evaluate(() => ({
      node: document.querySelector("section.node-section")!.getBoundingClientRect().top,
      partitions: document.querySelector("#partitions-heading")!.getBoundingClientRect().top,
    }));
    expect(tops.node).toBeLessThan(tops.partitions);
    await page.screenshot({ path: join(root, "two-nodes.png"), fullPage: true });
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it("a report written before partitions carried their next step shows words for its action, never a command with a placeholder", async () => {
    const old = structuredClone(demoJson) as HtmlReportInput;
    for (const partition of old.partitions) {
      delete (partition as Partial<JsonPartition>).nextStep;
      delete (partition as Record<string, unknown>)[NEXT_STEP_ARGV_FIELD];
    }
    expect(old.partitions.some((partition) => partition.action === "repair")).toBe(true);
    const path = join(root, "no-next-step.html");
    await writeFile(path, renderHtmlReport(old));
    const { page, errors } = await open(path);
    await page.locator("#page-size").selectOption("0");
    const steps = await page.locator("ol#partitions > li.partition .next-step").allTextContents();
    expect(steps.length).toBe(old.partitions.length);
    const repair = steps.find((step) => step.includes("(action repair)"))!;
    expect(repair).toMatch(/^Next step: Repair it: /);
    // No placeholder anywhere a command could be read: not in a step, not in a command element, not in the page.
    const placeholder = /<(partition|node root|path|root|dir)>/;
    for (const step of steps) expect(step).not.toMatch(placeholder);
    await expect(page.locator(".command").count()).resolves.toBe(0);
    // biome-ignore lint/performance/useDomNodeTextContent: the text a reader sees, not the page's script
    expect(await page.evaluate(() => document.body.innerText)).not.toMatch(placeholder);
    expect(errors).toEqual([]);
    await page.close();
  });

  /** The CSS rgb() text of a palette colour, as getComputedStyle reports it. */
  const cssRgb = (hex: string): string => `rgb(${rgb(hex).join(", ")})`;

  it("the verdict is a banner in its verdict's colour, first on the page: refused in vermillion, clean in green", async () => {
    for (const [path, verdict] of [
      [demoHtmlPath, "refused"],
      [nodeHtmlPath, "refused"],
    ] as const) {
      const { page, errors } = await open(path);
      const banner = page.locator("section.verdict-banner");
      await expect(banner.count()).resolves.toBe(1);
      await expect(banner.getAttribute("class")).resolves.toContain(`v-${verdict}`);
      const look = await banner.evaluate((element) => {
        const style = getComputedStyle(element);
        const word = element.querySelector(".verdict-word")!;
        return {
          border: style.borderTopColor,
          borderStyle: style.borderTopStyle,
          word: getComputedStyle(word).backgroundColor,
          text: element.textContent!,
          top: element.getBoundingClientRect().top,
        };
      });
      expect(look.border).toBe(cssRgb(VERDICT_COLORS[verdict].color));
      expect(look.borderStyle).toBe("double"); // not colour alone: each verdict has its own border
      expect(look.word).toBe(cssRgb(OKABE_ITO.vermillion));
      expect(look.text).toMatch(/^Verdict: REFUSED — \d+ of \d+ partitions need attention/);
      expect(look.top).toBeLessThan(120); // right under the title
      expect(errors).toEqual([]);
      await page.close();
    }
    const clean = syntheticReport(3);
    expect(clean.verdict).toBe("clean");
    const cleanPath = join(root, "clean.html");
    await writeFile(cleanPath, renderHtmlReport(clean));
    const { page, errors } = await open(cleanPath);
    const banner = page.locator("section.verdict-banner");
    await expect(banner.getAttribute("class")).resolves.toContain("v-clean");
    expect(await banner.evaluate((element) => getComputedStyle(element).borderTopColor)).toBe(cssRgb(OKABE_ITO.bluishGreen));
    await expect(banner.textContent()).resolves.toBe("Verdict: clean — all 3 partitions are clean.");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("problems first: the node findings and the first partition that is not clean come before the boot forecast, the scan's facts, the glossary and the legend, on the first screen", async () => {
    for (const [path, report] of [
      [demoHtmlPath, demoJson],
      [nodeHtmlPath, nodeJson],
    ] as const) {
      const { page } = await open(path);
      const tops = await page.evaluate(() => {
        const top = (selector: string): number => {
          const element = document.querySelector(selector);
          return element === null ? Number.NaN : element.getBoundingClientRect().top + window.scrollY;
        };
        return {
          finding: top("ul.node-findings > li"),
          problem: top("ol#partitions > li.partition:not(.v-clean)"),
          clean: top("ol#partitions > li.partition.v-clean"),
          forecast: top("#boot-forecast"),
          facts: top("#scan-facts"),
          glossary: top("#glossary"),
          legend: top("ul.legend"),
        };
      });
      expect(tops.problem).toBeLessThan(tops.glossary);
      expect(tops.problem).toBeLessThan(tops.legend);
      expect(tops.problem).toBeLessThan(tops.facts);
      expect(tops.problem).toBeLessThan(tops.clean); // worst first
      expect(tops.facts).toBeLessThan(tops.glossary); // the reference comes last
      if (report.node !== undefined) {
        expect(tops.finding).toBeLessThan(tops.problem);
        expect(tops.finding).toBeLessThan(900 / 3); // the first problem is near the top of a 1280×900 screen
        expect(tops.problem).toBeLessThan(tops.forecast);
      } else {
        expect(Number.isNaN(tops.finding)).toBe(true);
        expect(tops.problem).toBeLessThan(900); // above the fold
      }
      await page.close();
    }
  });

  it("a partition's title names it: topics/T/partitions/P (from streams/ on when the streams differ), never a bare id", async () => {
    const titles = async (path: string): Promise<{ shown: string[]; note: string }> => {
      const { page, errors } = await open(path);
      await page.locator("#page-size").selectOption("0");
      const shown = await page.locator("ol#partitions > li.partition h3 .path").allTextContents();
      const note = (await page.locator("#prefix-note").textContent())!;
      expect(errors).toEqual([]);
      await page.close();
      return { shown, note };
    };
    const node = await titles(nodeHtmlPath); // one stream, one topic: the shared prefix ends in partitions/
    expect(node.shown.length).toBe(nodeJson.partitions.length);
    for (const title of node.shown) expect(title).toMatch(/^topics\/1\/partitions\/\d+$/);
    expect(node.note).toMatch(/\/streams\/1\/$/);
    const demo = await titles(demoHtmlPath); // one stream, three topics
    for (const title of demo.shown) expect(title).toMatch(/^topics\/[1-3]\/partitions\/\d+$/);
    // Several streams: the title starts at streams/.
    const path = join(root, "streams.html");
    await writeFile(path, renderHtmlReport(syntheticReport(2_100)));
    const many = await titles(path);
    expect(many.note).toBe("Paths below are relative to /var/lib/iggy/");
    for (const title of many.shown) expect(title).toMatch(/^streams\/[1-3]\/topics\/\d+\/partitions\/\d+$/);
  });

  it("each next step shows its command shell-quoted in a copyable code element when the report carries its argv; the sentence alone without it; 600 px still fits", async () => {
    const argvReport = withArgv(nodeJson);
    const path = join(root, "argv.html");
    await writeFile(path, renderHtmlReport(argvReport));
    const { page, errors, requests } = await open(path);
    // Every partition that is not clean: its sentence, then its command, exactly shellQuote(argv).
    const rows = await page.locator("ol#partitions > li.partition").evaluateAll((lis) =>
      lis.map((li) => ({
        index: Number(li.getAttribute("data-index")),
        next: li.querySelector(".next-step")!.textContent!,
        commands: Array.from(li.querySelectorAll(".command code")).map((code) => code.textContent!),
      })),
    );
    expect(rows.length).toBe(argvReport.partitions.length);
    for (const row of rows) {
      const partition = argvReport.partitions[row.index]!;
      expect(row.next).toContain(partition.nextStep);
      expect(row.commands).toEqual(nextStepCommands(partition));
      expect(row.commands.length).toBe(partition.verdict === "clean" ? 0 : 1);
    }
    const hostile = rows.flatMap((row) => row.commands).find((command) => command.includes("owned"))!;
    expect(hostile).toContain("$'"); // the terminal escape travels as \x1b inside $'…', never raw
    expect(hostile).not.toMatch(/[\u0000-\u001f]/);
    // Node findings: each item's command, once per item.
    const findingCommands = await page.locator("ul.node-findings > li .command code").allTextContents();
    expect(findingCommands.length).toBe(await page.locator("ul.node-findings > li").count());
    expect(findingCommands).toContain(`segscan repair ${shellQuote([String(nodeJson.node!.path)])} --apply`);

    // Copy: the button puts the exact command on the clipboard.
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    const row = page.locator("ol#partitions > li.partition", { hasText: "owned" });
    await row.locator("button.copy").click();
    await expect(row.locator("button.copy").textContent()).resolves.toBe("copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(hostile);

    // 600 px: nothing scrolls sideways; long commands wrap inside their box.
    await page.setViewportSize({ width: 600, height: 900 });
    await page.waitForTimeout(400);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(600);
    const rights = await page.locator(".command").evaluateAll((blocks) => blocks.map((block) => block.getBoundingClientRect().right));
    for (const right of rights) expect(right).toBeLessThanOrEqual(600);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();

    // Without the field: the sentences as before, no command element.
    const plainPath = join(root, "no-argv.html");
    await writeFile(plainPath, renderHtmlReport(withoutArgv(argvReport)));
    const plain = await open(plainPath);
    await expect(plain.page.locator(".command").count()).resolves.toBe(0);
    await expect(plain.page.locator("ol#partitions > li.partition .next-step").count()).resolves.toBe(nodeJson.partitions.length);
    expect(plain.errors).toEqual([]);
    await plain.page.close();
  });

  it("findings of any code render with their path, on the node list and on their partition's card; a name's control characters show as visible escapes", async () => {
    const report = structuredClone(nodeJson) as HtmlReportInput;
    const cleanIndex = report.partitions.findIndex((p) => p.verdict === "clean");
    expect(cleanIndex).toBeGreaterThanOrEqual(0);
    const clean = report.partitions[cleanIndex]!;
    const lost = {
      severity: "warn",
      code: "SalvageRecordedLoss",
      path: clean.path,
      message: "offsets 637..647 were recorded as lost by a salvage",
      nextStep: "restore them from a backup, or clear the record",
      firstOffset: "637",
      lastOffset: "647",
    };
    const nodePartitions = (report.node as { partitions: { findings: unknown[] }[] }).partitions;
    nodePartitions[0]!.findings.push(lost);
    (clean as unknown as { findings: unknown[] }).findings = [lost];
    const refused = report.partitions.find((p) => p.verdict === "refused")!;
    refused.path = `${refused.path}\u001b[2J\nforged line`;
    const path = join(root, "any-code.html");
    await writeFile(path, renderHtmlReport(report));
    const { page, errors } = await open(path);
    // The node list names it with its path, relative to the node root; the headline counts it.
    const item = page.locator('ul.node-findings > li[data-code="SalvageRecordedLoss"]');
    await expect(item.locator(".finding-path").textContent()).resolves.toBe(clean.path.slice(String(report.node!.path).length + 1));
    await expect(item.locator(".next-step").textContent()).resolves.toBe(`Next step: ${lost.nextStep}`);
    await expect(page.locator("section.verdict-banner").textContent()).resolves.toContain("1 warn (SalvageRecordedLoss)");
    // The clean partition's card shows it, and the filter for problems keeps that partition.
    await page.locator("#only-problems").check();
    const card = page.locator(`li.partition[data-index="${cleanIndex}"]`);
    await expect(card.locator("ul.partition-findings li").textContent()).resolves.toContain("SalvageRecordedLoss topics/1/partitions/");
    await expect(card.locator("ul.partition-findings li").textContent()).resolves.toContain(lost.message);
    // A name with a terminal escape and a newline: shown as \x1b and \x0a, never acted on or broken.
    const title = (await page.locator(`li.partition[data-verdict="refused"] h3 .path`).first().textContent())!;
    const forged = await page.locator("li.partition h3 .path", { hasText: "forged line" }).textContent();
    expect(forged).toContain("\\x1b[2J\\x0aforged line");
    expect(title).not.toMatch(/[\u0000-\u001f]/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("marks a few bytes apart get their letters on separate rows: D and S never read DS", async () => {
    const close = structuredClone(demoJson) as HtmlReportInput;
    const refused = close.partitions.find((p) => p.verdict === "refused")!;
    const segment = refused.segments.find((s) => s.residue?.probe === "survivor")!;
    const residue = segment.residue!;
    residue.survivorPosition = residue.damagePosition + 5;
    const path = join(root, "close-marks.html");
    await writeFile(path, renderHtmlReport(close));
    const { page, errors } = await open(path);
    const bar = page.locator(`li.partition[data-verdict="refused"] svg.bar:not(.zoom)`).nth(refused.segments.indexOf(segment));
    const d = (await bar.locator('[data-mark="damage"] text.mark-label').boundingBox())!;
    const s = (await bar.locator('[data-mark="survivor"] text.mark-label').boundingBox())!;
    expect(Math.abs(d.x - s.x)).toBeLessThan(4); // drawn at nearly one position …
    expect(s.y).toBeGreaterThanOrEqual(d.y + d.height); // … on separate rows
    expect((await bar.boundingBox())!.height).toBeGreaterThan(38); // the bar grew to hold the second row
    expect(errors).toEqual([]);
    await page.close();
  });

  it("10,000 partitions: opens with clean ones hidden, filters, searches and pages; logs size and timings", async () => {
    const report = syntheticReport(LARGE_PARTITIONS);
    const path = join(root, "large.html");
    await writeFile(path, renderHtmlReport(report));
    const fileBytes = (await stat(path)).size;
    console.log(
      `html-report: ${count(LARGE_PARTITIONS)} partitions → ${count(fileBytes)} bytes of HTML ` +
        `(${(fileBytes / 1048576).toFixed(2)} MiB; the report JSON alone is ${count(JSON.stringify(report).length)} bytes)`,
    );

    const { page, errors, requests, openMs } = await open(path);
    const notClean = report.partitions.filter((p) => p.verdict !== "clean");
    expect(await page.locator("#only-problems").isChecked()).toBe(true); // more than 50 partitions
    expect(await rowCount(page)).toBe(Math.min(50, notClean.length));
    await expect(page.locator("#status").textContent()).resolves.toContain(
      `of ${count(notClean.length)} matching partitions (10,000 in the report)`,
    );
    expect(await page.locator("li.partition.v-clean").count()).toBe(0);
    const failedRow = page.locator('li.partition[data-verdict="failed"]').first();
    await expect(failedRow.locator(".error").textContent()).resolves.toContain("ReadFailure: EIO reading 4096 bytes at 0");
    await expect(failedRow.locator(".next-step").first().textContent()).resolves.toContain(
      "Next step: retry: fix what stopped the scan (ReadFailure) and scan again",
    );

    // Show the clean ones too: timed in the page, up to the next painted frame.
    const filterMs = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const started = performance.now();
          (document.getElementById("only-problems") as HTMLInputElement).click();
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - started), 0));
        }),
    );
    expect(await rowCount(page)).toBe(50);
    await expect(page.locator("#status").textContent()).resolves.toContain("of 10,000 matching partitions");
    const readyMs = await page.evaluate(() => performance.getEntriesByName("segscan-ready")[0]?.startTime ?? Number.NaN);
    console.log(
      `html-report: ${count(LARGE_PARTITIONS)} partitions open in ${readyMs.toFixed(0)} ms in the page (navigation start to first rows built; ` +
        `${openMs.toFixed(0)} ms as the test driver saw it) ` +
        `and re-filter in ${filterMs.toFixed(1)} ms (click to next frame) in headless Chromium`,
    );

    // Rows come worst first, then by path with numbers as numbers; page 2 starts at the 51st.
    const worstFirst = report.partitions
      .map((p, i) => ({ p, i }))
      .sort((a, b) => SEVERITY_ORDER.indexOf(b.p.verdict) - SEVERITY_ORDER.indexOf(a.p.verdict) || naturalCompare(a.p.path, b.p.path));
    const firstRows = await page
      .locator("ol#partitions > li.partition")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-index")));
    expect(firstRows).toEqual(worstFirst.slice(0, 50).map(({ i }) => String(i)));
    await page.locator("#next").click();
    await expect(page.locator("ol#partitions > li.partition").first().getAttribute("data-index")).resolves.toBe(String(worstFirst[50]!.i));
    // By path: streams/1/topics/1/partitions/2 before …/partitions/10.
    await page.locator("#sort").selectOption("path");
    const byPath = await page
      .locator("ol#partitions > li.partition .path")
      .evaluateAll((paths) => paths.slice(0, 12).map((p) => p.getAttribute("title")));
    expect(byPath.slice(0, 3)).toEqual([1, 2, 3].map((n) => `/var/lib/iggy/streams/1/topics/1/partitions/${n}`));
    expect(byPath[9]).toBe("/var/lib/iggy/streams/1/topics/1/partitions/10");
    await page.locator("#sort").selectOption("worst");

    // Search by path: the same substring match the test computes from the JSON.
    const query = "streams/3/topics/4/partitions/5";
    const searchStarted = performance.now();
    await page.locator("#search").fill(query);
    await page.locator("#search").press("Enter");
    const matches = report.partitions.filter((p) => p.path.includes(query)).length;
    expect(matches).toBe(11); // …/5 and …/50 to …/59
    expect(await rowCount(page)).toBe(matches);
    console.log(
      `html-report: search over ${count(LARGE_PARTITIONS)} partitions answered in ${(performance.now() - searchStarted).toFixed(0)} ms (fill + Enter, as driven)`,
    );

    // A refused partition of the big report draws its damage where its JSON says.
    await page.locator("#search").fill("");
    await page.locator("#only-problems").check();
    await page.locator("#search").press("Enter");
    const refusedRow = page.locator('li.partition[data-verdict="refused"]').first();
    const bar = refusedRow.locator("svg.bar:not(.zoom)").nth(1);
    await bar.evaluate((element) => element.scrollIntoView({ block: "center" }));
    const file = (await bar.locator("rect.file").boundingBox())!;
    const damage = (await bar.locator("rect.damage-line").boundingBox())!;
    const refusedSegment = report.partitions[Number(await refusedRow.getAttribute("data-index"))]!.segments[1]!;
    const expectedX = file.x + file.width * (REFUSED_DAMAGE_POSITION / refusedSegment.messagesSize);
    expect(Math.abs(damage.x + damage.width / 2 - expectedX)).toBeLessThanOrEqual(POSITION_TOLERANCE_PX);
    await page.mouse.move(0, 0);
    const shot = await page.screenshot({ path: join(root, "large-viewport.png") });
    expectColor(pixel(shot, damage.x + damage.width / 2, damage.y + damage.height * 0.75), MARK_COLORS.damage);

    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });
});
