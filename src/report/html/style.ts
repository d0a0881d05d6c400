/**
 * The HTML report's stylesheet, inlined into the page (no network at view
 * time). Colours are the Okabe–Ito palette, which stays distinguishable under
 * the common colour-vision deficiencies; every mark ALSO differs by shape,
 * pattern or label, so colour is never the only cue. The print rules drop the
 * controls and keep the drawings (patterns print in black and white too).
 */
export const OKABE_ITO = {
  black: "#000000",
  orange: "#E69F00",
  skyBlue: "#56B4E9",
  bluishGreen: "#009E73",
  yellow: "#F0E442",
  blue: "#0072B2",
  vermillion: "#D55E00",
  reddishPurple: "#CC79A7",
} as const;

/** What each mark kind is drawn in; the browser tests read `damage` back from a screenshot. */
export const MARK_COLORS = {
  prefix: OKABE_ITO.blue,
  intact: OKABE_ITO.bluishGreen,
  residueNonZero: OKABE_ITO.vermillion,
  residueZero: OKABE_ITO.skyBlue,
  damage: OKABE_ITO.vermillion,
  survivor: OKABE_ITO.reddishPurple,
  cut: OKABE_ITO.black,
  gap: OKABE_ITO.orange,
  warning: OKABE_ITO.yellow,
  index: "#444444",
} as const;

/**
 * The verdict banner's colours (docs/html-report.md): the verdict's colour for
 * the border and the verdict word's fill, a tint of it behind the sentence.
 * The word's text is black on every fill (each has at least 4.5:1 contrast
 * with black), and each verdict also has its own border style and mark, so
 * colour is never the only cue.
 */
export const VERDICT_COLORS = {
  clean: { color: OKABE_ITO.bluishGreen, tint: "#e2f5ee", border: "solid", mark: "\\2713" },
  info: { color: OKABE_ITO.skyBlue, tint: "#e6f3fb", border: "solid", mark: "\\2139" },
  warn: { color: OKABE_ITO.yellow, tint: "#fcf9dc", border: "dashed", mark: "\\25B2" },
  repairable: { color: OKABE_ITO.orange, tint: "#fcf0d6", border: "dashed", mark: "\\270E" },
  refused: { color: OKABE_ITO.vermillion, tint: "#fbe4d7", border: "double", mark: "\\2715" },
  failed: { color: OKABE_ITO.reddishPurple, tint: "#f8e8f1", border: "dotted", mark: "!" },
} as const;

const bannerCss = Object.entries(VERDICT_COLORS)
  .map(
    ([verdict, { color, tint, border, mark }]) =>
      `.verdict-banner.v-${verdict} { border-color: ${color}; border-style: ${border}; background: ${tint}; }\n` +
      `.verdict-banner.v-${verdict} .verdict-word { background: ${color}; }\n` +
      `.verdict-banner.v-${verdict} .verdict-word::before { content: "${mark}"; }`,
  )
  .join("\n");

const C = MARK_COLORS;
const P = OKABE_ITO;

export const HTML_REPORT_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #555; --line: #c8c8c8; --bg: #fff; --panel: #f6f6f6; }
* { box-sizing: border-box; }
html { scroll-padding-top: 72px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0 auto; max-width: 1280px; padding: 16px 20px 48px; }
h1 { font-size: 1.5rem; margin: 0 0 4px; }
h2 { font-size: 1.15rem; margin: 20px 0 8px; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
.muted { color: var(--muted); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
a { color: ${P.blue}; }
a.skip { position: absolute; left: -9999px; top: 0; background: #fff; padding: 4px 8px; z-index: 20; }
a.skip:focus { left: 8px; }
:focus-visible { outline: 3px solid ${P.black}; outline-offset: 2px; }

header.summary { padding-bottom: 4px; }
.verdict-banner { border-width: 4px; border-radius: 6px; padding: 10px 14px; margin: 8px 0 4px; font-size: 1.1rem; line-height: 1.5; }
.verdict-banner p { margin: 0; overflow-wrap: anywhere; }
.verdict-banner .verdict-word { display: inline-block; color: #000; padding: 1px 10px; margin-right: 4px; border-radius: 3px; font-weight: 800; letter-spacing: 0.02em; }
.verdict-banner .verdict-word::before { margin-right: 6px; }
${bannerCss}
.verdict-banner.v-refused { border-width: 6px; }
.forecast-line { margin: 6px 0; }
#prefix-note { margin: 0; }
#prefix-note:empty { display: none; }
.command { display: flex; align-items: stretch; gap: 0; margin: 4px 0 6px; max-width: 100%; }
.command code { flex: 1 1 auto; min-width: 0; display: block; padding: 4px 8px; background: #1e1e1e; color: #f4f4f4; border-radius: 4px 0 0 4px; white-space: pre-wrap; overflow-wrap: anywhere; user-select: all; -webkit-user-select: all; }
.command code::before { content: "$ "; color: #9a9a9a; user-select: none; -webkit-user-select: none; }
.command button.copy { flex: none; font: inherit; font-size: 0.85rem; padding: 2px 10px; border: 1px solid #1e1e1e; border-radius: 0 4px 4px 0; background: #fff; cursor: pointer; }
.reference { margin-top: 28px; border-top: 1px solid var(--line); }
.facts { display: flex; flex-wrap: wrap; gap: 6px 20px; margin: 8px 0; padding: 0; list-style: none; }
.facts li b { font-weight: 600; }
table.counts { border-collapse: collapse; margin: 8px 0; }
table.counts th, table.counts td { border: 1px solid var(--line); padding: 3px 10px; text-align: left; }
table.counts td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.forecast { border-collapse: collapse; width: 100%; margin: 6px 0; }
table.forecast th, table.forecast td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.forecast td.mono { overflow-wrap: anywhere; }
tr.destructive td { background: #fdeee4; }

.badge { display: inline-block; padding: 0 8px; border: 2px solid; border-radius: 3px; font-weight: 700; font-size: 0.85rem; letter-spacing: 0.03em; text-transform: uppercase; background: #fff; }
.badge.clean { border-color: ${P.bluishGreen}; border-style: solid; }
.badge.repairable { border-color: ${P.orange}; border-style: dashed; }
.badge.refused { border-color: ${P.vermillion}; border-style: double; border-width: 4px; }
.badge.failed { border-color: ${P.reddishPurple}; border-style: dotted; border-width: 3px; }
.badge::before { margin-right: 4px; }
.badge.clean::before { content: "\\2713"; }
.badge.repairable::before { content: "\\270E"; }
.badge.refused::before { content: "\\2715"; }
.badge.failed::before { content: "!"; }
.badge.info { border-color: ${P.skyBlue}; }
.badge.warn { border-color: ${P.yellow}; border-style: dashed; }
.badge.info::before { content: "\\2139"; }
.badge.warn::before { content: "\\25B2"; }

.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 8px 0; padding: 0; list-style: none; align-items: center; }
.legend li { display: flex; align-items: center; gap: 6px; }
.legend svg { flex: none; }

.toolbar { position: sticky; top: 0; z-index: 5; background: var(--bg); display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; padding: 10px 0; border-bottom: 1px solid var(--line); }
.toolbar input[type=search] { width: 14rem; max-width: 100%; padding: 4px 6px; font: inherit; }
.toolbar select, .toolbar button { font: inherit; padding: 3px 8px; }
.pager { display: flex; gap: 6px; align-items: center; }

ol.partitions { list-style: none; padding: 0; margin: 0; }
li.partition { border: 1px solid var(--line); border-left-width: 6px; border-radius: 4px; margin: 12px 0; padding: 8px 12px; break-inside: avoid; }
li.partition.v-clean { border-left-color: ${P.bluishGreen}; }
li.partition.v-repairable { border-left-color: ${P.orange}; border-left-style: dashed; }
li.partition.v-refused { border-left-color: ${P.vermillion}; border-left-style: double; border-left-width: 8px; }
li.partition.v-failed { border-left-color: ${P.reddishPurple}; border-left-style: dotted; }
li.partition h3 { font-size: 1rem; margin: 0 0 4px; display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; }
li.partition h3 .path { word-break: break-all; }
.words { margin: 2px 0; }
.refusal, .error { margin: 4px 0; padding: 4px 8px; background: #fdeee4; border-left: 3px solid ${P.vermillion}; }
.error { background: #f7eaf2; border-left-color: ${P.reddishPurple}; }
.notes { margin: 4px 0; padding-left: 18px; }
.next-step { margin: 4px 0; }
p.next-step { padding: 4px 8px; background: var(--panel); border-left: 3px solid ${P.blue}; }
.scope { margin: 4px 0; font-size: 0.9rem; }
.scope-range.unreadable, .scope-range.missing { font-weight: 600; }
dl.meanings { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; }
dl.meanings dt { margin: 0; }
dl.meanings dd { margin: 0; }
ul.node-findings { list-style: none; padding: 0; margin: 6px 0; }
ul.node-findings > li { margin: 6px 0; padding: 4px 10px; border-left: 4px solid var(--line); overflow-wrap: anywhere; }
ul.node-findings > li.sev-failed { border-left-color: ${P.reddishPurple}; border-left-style: dotted; }
ul.node-findings > li.sev-refused { border-left-color: ${P.vermillion}; border-left-style: double; border-left-width: 6px; }
ul.node-findings > li.sev-repairable { border-left-color: ${P.orange}; border-left-style: dashed; }
ul.node-findings > li.sev-warn { border-left-color: ${P.yellow}; border-left-style: dashed; }
ul.node-findings > li.sev-info { border-left-color: ${P.skyBlue}; }
.finding-head { display: flex; flex-wrap: wrap; gap: 2px 8px; align-items: baseline; }
.finding-code { font-weight: 700; }
.finding-path { color: var(--muted); }
.finding-head .finding-path { background: var(--panel); padding: 0 4px; border-radius: 3px; }
.finding-head details.why { margin-left: auto; }
.finding-head details.why[open] { flex-basis: 100%; margin-left: 0; }
.section-note { margin: 0 0 6px; color: var(--muted); }
ul.node-findings .next-step, ul.partition-findings .next-step { margin: 2px 0; }
details.why { margin: 0 0 2px; font-size: 0.9rem; }
details.why summary { cursor: pointer; color: var(--muted); }
details.why ul { margin: 2px 0; padding-left: 18px; }
details.why p { margin: 2px 0; }
ul.partition-findings { margin: 4px 0; padding-left: 0; list-style: none; overflow-wrap: anywhere; }
ul.partition-findings li { margin: 2px 0; }

.segments { display: grid; grid-template-columns: minmax(170px, 15rem) 1fr; gap: 2px 12px; margin-top: 6px; align-items: center; }
.seglabel { font-size: 0.85rem; line-height: 1.25; }
.seglabel .name { font-weight: 600; }
svg.bar { display: block; width: 100%; height: 38px; overflow: visible; }
svg.bar .file { fill: #fff; stroke: #777; stroke-width: 1; }
svg.bar .prefix { fill: ${C.prefix}; }
svg.bar .range { stroke: none; }
svg.bar .range.intact { fill: url(#pat-intact); }
svg.bar .range.unreadable { fill: rgba(0,0,0,0); stroke: ${C.residueNonZero}; stroke-width: 2; }
svg.bar .range.torn { fill: rgba(0,0,0,0); }
svg.bar .range-label { font-size: 10px; font-weight: 600; fill: #fff; stroke: #000; stroke-width: 2.5px; paint-order: stroke; stroke-linejoin: round; pointer-events: none; }
svg.bar .mark:focus .range, svg.bar .mark:hover .range { stroke: #000; stroke-width: 1.5; stroke-dasharray: 2 1; }
svg.bar .residue-nonzero { fill: url(#pat-residue-nonzero); stroke: ${C.residueNonZero}; stroke-width: 1; }
svg.bar .residue-zero { fill: url(#pat-residue-zero); stroke: ${C.residueZero}; stroke-width: 1; }
svg.bar .damage-line { fill: ${C.damage}; }
svg.bar .damage-cap { fill: ${C.damage}; stroke: #000; stroke-width: 0.75; }
svg.bar .survivor-line { fill: ${C.survivor}; }
svg.bar .survivor-cap { fill: ${C.survivor}; stroke: #000; stroke-width: 0.75; }
svg.bar .cut-line { stroke: ${C.cut}; stroke-width: 2; stroke-dasharray: 3 2; }
svg.bar .cut-label, svg.bar .mark-label { font-size: 9px; font-weight: 700; fill: #000; }
svg.bar .gap-mark { fill: url(#pat-gap); stroke: #000; stroke-width: 0.75; }
svg.bar .warning-mark { fill: ${C.warning}; stroke: #000; stroke-width: 0.75; }
svg.bar .tick { stroke: ${C.index}; stroke-width: 1; }
svg.bar .hit { fill: transparent; stroke: none; }
svg.bar .mark { cursor: help; outline: none; }
svg.bar .mark:focus .hit, svg.bar .mark:hover .hit { stroke: #000; stroke-width: 1.5; stroke-dasharray: 2 1; }
svg.bar.zoom { height: 38px; }
.zoomlabel { text-align: right; font-size: 0.8rem; }
.empty-file { font-size: 0.85rem; }

.sweep, .ignored, .warnings { margin: 6px 0 0; font-size: 0.9rem; }
.sweep ul, .ignored ul, .warnings ul { margin: 2px 0; padding-left: 18px; }

#tooltip { position: fixed; z-index: 10; max-width: 28rem; padding: 6px 8px; background: #111; color: #fff; border-radius: 4px; font-size: 0.85rem; line-height: 1.35; pointer-events: none; white-space: pre-line; box-shadow: 0 2px 6px rgba(0,0,0,.35); }
#tooltip[hidden] { display: none; }
.status { min-height: 1.4em; }
.empty-list { padding: 16px; border: 1px dashed var(--line); text-align: center; }

/* A narrow screen (600 px): one column, everything wraps, nothing scrolls sideways. */
@media (max-width: 720px) {
  body { padding: 10px 10px 32px; }
  .segments { grid-template-columns: 1fr; }
  .zoomlabel { text-align: left; }
  .toolbar input[type=search] { width: 100%; }
  dl.meanings { grid-template-columns: 1fr; }
  dl.meanings dd { margin-bottom: 4px; }
  .refusal, .error, .words, .scope, .next-step, .sweep, .ignored, .warnings, .notes { overflow-wrap: anywhere; }
  /* The boot forecast stacks: one block per effect, each cell under its column's name. */
  table.forecast, table.forecast tbody, table.forecast tr, table.forecast td { display: block; width: 100%; }
  table.forecast thead { display: none; }
  table.forecast tr { border: 1px solid var(--line); margin: 6px 0; }
  table.forecast td { border: none; padding: 2px 8px; }
  table.forecast td::before { content: attr(data-label) ": "; font-weight: 600; font-family: system-ui, sans-serif; }
}

@media print {
  html { font-size: 11px; }
  body { max-width: none; padding: 0; }
  .toolbar, .pager, #tooltip, .no-print { display: none !important; }
  li.partition { border-color: #999; }
  svg, .badge, li.partition { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
  .print-note { display: block !important; }
}
.print-note { display: none; }
`;
