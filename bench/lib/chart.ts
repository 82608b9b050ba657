/**
 * A dependency-free SVG chart of the medians: one panel per scenario, one horizontal bar per
 * target scaled to the panel's largest value, labelled with the value, the ratio to the panel's
 * pivot (the first of `pivots` measured in that scenario: the bare Node pipe, else the direct
 * backend) and the p99 latency where measured. Switchboard's rows are drawn in a different colour.
 */
import type { Row } from './stats.ts';

const WIDTH = 1000;
const LABEL_W = 170;
const BAR_H = 18;
const GAP = 4;
const PANEL_PAD = 34;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

/** Renders `rows` as an SVG document; `titles` maps scenario name → heading; `caption` goes on top. */
export function renderChart(
  rows: readonly Row[],
  titles: Record<string, string>,
  caption: string,
  pivots: readonly string[],
): string {
  const scenarios = [...new Set(rows.map((r) => r.scenario))];
  const parts: string[] = [];
  let y = 30;
  parts.push(`<text x="10" y="20" font-size="13" font-weight="bold">${esc(caption)}</text>`);
  for (const s of scenarios) {
    const mine = rows.filter((r) => r.scenario === s);
    const max = Math.max(...mine.map((r) => r.median), 1e-9);
    const first = mine[0] as Row;
    const pivot = pivots.find((p) => mine.some((r) => r.target === p)) ?? '';
    const lowerBetter = first.unit.includes('KiB');
    y += PANEL_PAD;
    parts.push(
      `<text x="10" y="${y - 10}" font-size="13" font-weight="bold">${esc(titles[s] ?? s)} (${esc(first.unit)}, ${lowerBetter ? 'lower' : 'higher'} is better)</text>`,
    );
    for (const r of mine) {
      const w = Math.max(1, Math.round(((WIDTH - LABEL_W - 250) * r.median) / max));
      const colour = r.target.startsWith('switchboard') ? '#d9534f' : r.target === pivot ? '#555' : '#5b8dd9';
      const ratio = r.ratios[pivot];
      const p99 = r.extra.p99ms === undefined ? '' : `, p99 ${num(r.extra.p99ms)} ms`;
      const label = `${num(r.median)}${ratio === undefined ? '' : `  (${ratio.toFixed(2)}× ${pivot}${p99})`}`;
      parts.push(
        `<text x="${LABEL_W - 6}" y="${y + BAR_H - 5}" font-size="12" text-anchor="end">${esc(r.target)}</text>`,
        `<rect x="${LABEL_W}" y="${y}" width="${w}" height="${BAR_H}" fill="${colour}"/>`,
        `<text x="${LABEL_W + w + 6}" y="${y + BAR_H - 5}" font-size="11">${esc(label)}</text>`,
      );
      y += BAR_H + GAP;
    }
  }
  const height = y + 14;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="#fff"/>
${parts.join('\n')}
</svg>
`;
}
