/**
 * A scrape of GET /metrics as Prometheus reads it: fetched over HTTP, checked for the text format's content type,
 * its families (HELP, TYPE) read by a Prometheus text parser (parse-prometheus-text-format), and every sample line
 * read strictly here: that parser folds the samples of a labelled histogram into one, losing their labels, so the
 * samples are parsed by the exposition format's grammar, and a line that does not follow it fails the test.
 */
import { expect } from "chai";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  families: Map<string, ParsedFamily>;
  samples: Sample[];
  /** The value of the sample named `name` (`x_bucket`, `x_count`, `x_sum` for a histogram's parts) whose labels
   * include `labels`; 0 when there is none (a counter never incremented has no sample). */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether a sample of that name and labels exists. */
  has(name: string, labels?: Record<string, string>): boolean;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (-?[0-9.eE+-]+|[+-]?[Ii]nf|[Nn]a[Nn])(?: -?[0-9]+)?$`,
);
const LABEL_PART = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;

/** Sample lines by the text format's grammar; throws on any line that is neither a sample, a comment nor blank. */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(LABEL_PART)) {
      labels[key] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({
      name: match[1],
      labels,
      value: Number(match[3].replace(/inf/i, "Infinity").replace(/^nan$/i, "NaN")),
    });
  }
  return samples;
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  const text = await response.text();
  expect(response.status, text).to.equal(200);
  expect(response.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
  const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
  const samples = parseSamples(text);
  // Every sample belongs to a declared family (a histogram's parts to the histogram).
  for (const sample of samples) {
    const family = sample.name.replace(/_(bucket|count|sum)$/, "");
    expect(families.has(sample.name) || families.has(family), `${sample.name} has no # TYPE`).to.equal(true);
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  return {
    families,
    samples,
    value: (name, labels) => find(name, labels)?.value ?? 0,
    has: (name, labels) => find(name, labels) !== undefined,
  };
}
