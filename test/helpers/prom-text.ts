/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for tests of
 * GET /metrics: it throws on anything a scraper could misread. Each family has HELP and TYPE
 * before its samples; a sample belongs to a declared family (histograms: `_bucket` with `le`,
 * `_sum`, `_count`); label names and escaping are checked; no series appears twice; a
 * histogram's buckets are cumulative and its `+Inf` bucket equals its count.
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parsePromText(text: string): Map<string, PromFamily> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  let current: PromFamily | null = null;
  const lines = text.slice(0, -1).split("\n");
  for (const [index, line] of lines.entries()) {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    if (line === "") continue;
    if (line.startsWith("# HELP ")) {
      const [, name = "", help = ""] = /^# HELP (\S+) (.*)$/.exec(line) ?? [];
      if (!NAME.test(name)) throw new Error(`bad HELP, ${where}`);
      if (families.has(name)) throw new Error(`family declared twice, ${where}`);
      current = { name, help, type: "untyped", samples: [] };
      families.set(name, current);
      continue;
    }
    if (line.startsWith("# TYPE ")) {
      const [, name = "", type = ""] = /^# TYPE (\S+) (\S+)$/.exec(line) ?? [];
      if (current?.name !== name || !TYPES.has(type) || current.samples.length > 0) throw new Error(`TYPE must follow its HELP, before samples, ${where}`);
      current.type = type as PromFamily["type"];
      continue;
    }
    if (line.startsWith("#")) continue;
    const sample = parseSample(line, where);
    if (current === null || !belongsTo(sample.name, current)) throw new Error(`sample outside its family (${current?.name ?? "none"}), ${where}`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`series repeated, ${where}`);
    seen.add(key);
    if (sample.name.endsWith("_bucket") && current.type === "histogram" && sample.labels.le === undefined) throw new Error(`bucket without le, ${where}`);
    current.samples.push(sample);
  }
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

function belongsTo(sample: string, family: PromFamily): boolean {
  if (sample === family.name) return family.type !== "histogram";
  if (family.type === "histogram") return [`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`].includes(sample);
  if (family.type === "summary") return [`${family.name}_sum`, `${family.name}_count`].includes(sample);
  return false;
}

function parseSample(line: string, where: string): PromSample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (match === null) throw new Error(`bad sample, ${where}`);
  const [, name = "", rawLabels, rawValue = ""] = match;
  const value = parseValue(rawValue, where);
  return { name, labels: rawLabels === undefined ? {} : parseLabels(rawLabels.slice(1, -1), where), value };
}

/** A float as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case; prom-client writes "Nan"). */
function parseValue(raw: string, where: string): number {
  if (/^\+?inf(inity)?$/i.test(raw)) return Infinity;
  if (/^-inf(inity)?$/i.test(raw)) return -Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`bad value ${raw}, ${where}`);
  return Number(raw);
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let at = 0;
  while (at < text.length) {
    const eq = text.indexOf("=", at);
    if (eq < 0 || text[eq + 1] !== '"') throw new Error(`bad label, ${where}`);
    const name = text.slice(at, eq);
    if (!LABEL.test(name) || name in labels) throw new Error(`bad or repeated label name ${name}, ${where}`);
    let value = "";
    let index = eq + 2;
    for (;;) {
      const char = text[index];
      if (char === undefined) throw new Error(`unterminated label value, ${where}`);
      if (char === '"') break;
      if (char === "\\") {
        const next = text[index + 1];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`bad escape in a label value, ${where}`);
        index += 2;
        continue;
      }
      if (char === "\n") throw new Error(`raw newline in a label value, ${where}`);
      value += char;
      index += 1;
    }
    labels[name] = value;
    at = index + 1;
    if (at < text.length) {
      if (text[at] !== ",") throw new Error(`labels must be separated by commas, ${where}`);
      at += 1;
    }
  }
  return labels;
}

/** Per label set (without `le`): buckets non-decreasing in `le` order, and `+Inf` equal to `_count`. */
function checkHistogram(family: PromFamily): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name.endsWith("_bucket")) group.buckets.push([le === "+Inf" ? Infinity : Number(le), sample.value]);
    else if (sample.name.endsWith("_count")) group.count = sample.value;
  }
  for (const [key, group] of groups) {
    const sorted = [...group.buckets].sort((a, b) => a[0] - b[0]);
    for (let index = 1; index < sorted.length; index++) {
      if ((sorted[index]?.[1] ?? 0) < (sorted[index - 1]?.[1] ?? 0)) throw new Error(`${family.name}${key}: buckets are not cumulative`);
    }
    const last = sorted.at(-1);
    if (last?.[0] !== Infinity || last[1] !== group.count) throw new Error(`${family.name}${key}: the +Inf bucket must equal the count`);
  }
}

/** The value of the one sample with exactly these labels (0 when the series does not exist yet). */
export function sampleValue(families: Map<string, PromFamily>, sample: string, labels: Record<string, string>): number {
  const familyName = sample.replace(/_(bucket|sum|count)$/, "");
  const family = families.get(sample) ?? families.get(familyName);
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const found = family?.samples.find((candidate) => candidate.name === sample && JSON.stringify(Object.entries(candidate.labels).sort()) === wanted);
  return found?.value ?? 0;
}

/** Every label value of every sample (to show none carries what it must not). */
export function labelValues(families: Map<string, PromFamily>): string[] {
  return [...families.values()].flatMap((family) => family.samples.flatMap((sample) => Object.values(sample.labels)));
}
