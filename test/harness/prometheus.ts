/**
 * A small parser for the Prometheus text exposition format (version 0.0.4) for tests: every
 * line must be a `# HELP`, a `# TYPE`, another comment, blank, or a sample
 * `name{label="value",...} value [timestamp]`; anything else throws with the line number.
 */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed exposition: samples plus the declared type of each metric family. */
export interface Exposition {
  readonly samples: readonly Sample[];
  readonly types: ReadonlyMap<string, string>;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(\\{(.*)\\})?\\s+(\\S+)(\\s+-?\\d+)?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  // Prometheus parses values with Go's ParseFloat, which takes NaN in any case: prom-client
  // writes `Nan` (e.g. nodejs_eventloop_lag_* before the event-loop histogram has a sample).
  if (text.toLowerCase() === 'nan') return Number.NaN;
  const n = Number(text);
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) || Number.isNaN(n)) {
    throw new Error(`line ${line}: bad sample value ${JSON.stringify(text)}`);
  }
  return n;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    if (m === null) throw new Error(`line ${line}: bad label set {${text}}`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    rest = rest.slice(m[0].length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest.length > 0) throw new Error(`line ${line}: expected , between labels in {${text}}`);
  }
  return labels;
}

/** Parses `text`; throws on the first line that is not valid exposition syntax. */
export function parsePrometheus(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(raw);
      if (m === null) return; // a plain comment
      if (!new RegExp(`^${NAME}$`).test(m[2]!)) throw new Error(`line ${line}: bad metric name ${m[2]}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3] ?? '')) throw new Error(`line ${line}: bad type ${m[3]}`);
        types.set(m[2]!, m[3]!);
      }
      return;
    }
    const m = SAMPLE.exec(raw);
    if (m === null) throw new Error(`line ${line}: not a sample: ${JSON.stringify(raw)}`);
    samples.push({ name: m[1]!, labels: parseLabels(m[3] ?? '', line), value: parseValue(m[4]!, line) });
  });
  return { samples, types };
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sum(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const s of exposition.samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}
