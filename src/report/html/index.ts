/** The self-contained HTML report (`scan --html`, `report <scan.json> --html`). */
export {
  renderHtmlReport,
  HTML_PLAIN_JSON_MAX_BYTES,
  HTML_ONLY_PROBLEMS_ABOVE_PARTITIONS,
  HTML_PAGE_SIZES,
  HTML_MAX_INDEX_TICKS,
  HTML_SEARCH_DEBOUNCE_MS,
  HTML_ZOOM_BELOW_FRACTION,
  HTML_ZOOM_MARGIN_FRACTION,
  HTML_FINDING_PATHS_SHOWN,
  NEXT_STEP_ARGV_FIELD,
  nextStepCommands,
  type BootForecastEntry,
  type HtmlRenderOptions,
  type HtmlReportInput,
} from "./render.js";
export { MARK_COLORS, OKABE_ITO, VERDICT_COLORS } from "./style.js";
