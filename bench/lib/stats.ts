/**
 * Medians over rounds and ratios against the baselines measured in the same run, as a table
 * for the terminal and as plain data for results.json.
 */
import type { Metric } from './types.ts';

/** The median of `xs` (mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** One cell of the result: every round's metric for one scenario × target. */
export interface Cell {
  readonly scenario: string;
  readonly target: string;
  readonly rounds: Metric[];
  /**
   * `--paired`: each round's value over the pivot's (`vs`), the pivot measured right before it.
   */
  pairs?: { readonly vs: string; readonly ratios: number[] };
}

/** A summarised row: the median plus its ratio to each baseline's median in the same scenario. */
export interface Row {
  readonly scenario: string;
  readonly target: string;
  readonly unit: string;
  readonly median: number;
  readonly extra: Record<string, number>;
  /** Baseline name → target median / baseline median (for KiB/conn, lower is better). */
  readonly ratios: Record<string, number>;
  readonly samples: number[];
  /** `--paired`: the median of the per-round ratios to `vs` (also shown as `ratios[vs]`). */
  readonly paired?: { readonly vs: string; readonly ratio: number; readonly ratios: number[] };
}

/** Summarises cells into rows with ratios against the named baselines of the same scenario. */
export function summarise(cells: readonly Cell[], baselines: readonly string[]): Row[] {
  const rows = cells
    .filter((c) => c.rounds.length > 0)
    .map((c): Row => {
      const first = c.rounds[0] as Metric;
      const extra: Record<string, number> = {};
      for (const key of Object.keys(first.extra ?? {})) extra[key] = median(c.rounds.map((m) => m.extra?.[key] ?? 0));
      const samples = c.rounds.map((m) => m.value);
      return {
        scenario: c.scenario,
        target: c.target,
        unit: first.unit,
        median: median(samples),
        extra,
        ratios: {},
        samples,
        ...(c.pairs === undefined || c.pairs.ratios.length === 0
          ? {}
          : { paired: { vs: c.pairs.vs, ratio: median(c.pairs.ratios), ratios: c.pairs.ratios } }),
      };
    });
  for (const row of rows) {
    for (const b of baselines) {
      const base = rows.find((r) => r.scenario === row.scenario && r.target === b);
      if (row.paired?.vs === b) row.ratios[b] = row.paired.ratio;
      else if (base !== undefined && base.median > 0) row.ratios[b] = row.median / base.median;
    }
  }
  return rows;
}

const fmt = (n: number) =>
  Number.isFinite(n) ? (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2)) : '-';

/** A fixed-width text table of `rows`, one block per scenario. */
export function formatTable(rows: readonly Row[], baselines: readonly string[]): string {
  const head = [
    'scenario',
    'target',
    'median',
    'unit',
    ...baselines.map((b) => `×${b}`),
    'p50ms',
    'p99ms',
    'errors',
    'cpuµs',
    'cores',
  ];
  const lines = rows.map((r) => [
    r.scenario,
    r.target,
    fmt(r.median),
    r.unit,
    ...baselines.map((b) => (r.ratios[b] === undefined ? '-' : (r.ratios[b] as number).toFixed(2))),
    r.extra.p50ms === undefined ? '' : fmt(r.extra.p50ms),
    r.extra.p99ms === undefined ? '' : fmt(r.extra.p99ms),
    r.extra.errors === undefined ? '' : String(Math.round(r.extra.errors)),
    // The target's CPU per unit (µs per request, connection or MiB) and the cores it kept busy
    // (lib/cpu-time.ts): a single event loop at ~1 core is the row's bottleneck.
    r.extra.cpuUs === undefined ? '' : fmt(r.extra.cpuUs),
    r.extra.targetCores === undefined ? '' : r.extra.targetCores.toFixed(2),
  ]);
  return textTable([head, ...lines]);
}

/** Rows of cells as fixed-width columns, two spaces apart, trailing spaces trimmed. */
export function textTable(all: readonly (readonly string[])[]): string {
  const widths = (all[0] ?? []).map((_, i) => Math.max(...all.map((l) => (l[i] ?? '').length)));
  return all
    .map((l) =>
      l
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
