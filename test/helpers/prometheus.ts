/** Test helper: a strict Prometheus text-format parser (the scrub's metrics file, docs/scrub.md §5). */

/**
 * A strict parser of the Prometheus text exposition format (0.0.4): HELP and
 * TYPE at most once per family and before its samples, a family's samples
 * contiguous, metric and label names and escapes as the format defines them, no
 * duplicate series, values as Go's ParseFloat accepts, a final newline.
 */
export function parsePrometheusText(
  text: string,
): Map<string, { type: string; samples: { labels: Record<string, string>; value: number }[] }> {
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  const families = new Map<string, { type: string; help: boolean; samples: { labels: Record<string, string>; value: number }[] }>();
  const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
  const seenSeries = new Set<string>();
  let current: string | null = null;
  const family = (name: string) => {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    let entry = families.get(name);
    if (!entry) {
      entry = { type: "untyped", help: false, samples: [] };
      families.set(name, entry);
    }
    return entry;
  };
  for (const [lineNo, line] of text.slice(0, -1).split("\n").entries()) {
    const fail = (why: string): never => {
      throw new Error(`line ${lineNo + 1}: ${why}: ${line}`);
    };
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) continue; // a plain comment
      const [, keyword, name, rest] = match;
      const entry = family(name!);
      if (entry.samples.length > 0) fail(`${keyword} after the family's samples`);
      if (keyword === "HELP") {
        if (entry.help) fail("second HELP");
        if (/\\[^\\n]/.test(rest!.replace(/\\\\/g, ""))) fail("bad escape in HELP");
        entry.help = true;
      } else {
        if (entry.type !== "untyped" || families.get(name!)!.samples.length > 0) fail("second TYPE");
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest!)) fail(`bad type ${rest}`);
        entry.type = rest!;
      }
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ([^ ]+)( -?\d+)?$/.exec(line) ?? fail("not a sample line");
    const [, name, , labelText, valueText] = sample;
    const entry = family(name!);
    if (current !== name && entry.samples.length > 0) fail("samples of a family are not contiguous");
    current = name!;
    const labels: Record<string, string> = {};
    let rest = labelText ?? "";
    while (rest.length > 0) {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest) ?? fail(`bad label list ${rest}`);
      if (label[1]! in labels) fail(`duplicate label ${label[1]}`);
      labels[label[1]!] = label[2]!.replace(/\\(["\\n])/g, (_m, c: string) => (c === "n" ? "\n" : c));
      rest = rest.slice(label[0].length);
    }
    const value = /^[+-]?Inf$/.test(valueText!)
      ? valueText!.startsWith("-")
        ? -Infinity
        : Infinity
      : valueText === "NaN"
        ? NaN
        : /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(valueText!)
          ? Number(valueText)
          : fail(`bad value ${valueText}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seenSeries.has(key)) fail("duplicate series");
    seenSeries.add(key);
    if (entry.type === "counter" && !(value >= 0)) fail("negative counter");
    entry.samples.push({ labels, value });
  }
  return new Map([...families].map(([name, entry]) => [name, { type: entry.type, samples: entry.samples }]));
}
