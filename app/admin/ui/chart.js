// A small SVG line chart (no library): one polyline per series over a shared time axis.
const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Draws `series` ([{ name, color, points: [[t, value]] }]) into `el`, `minutes` wide, the newest
 * sample at the right edge.
 */
export function lineChart(el, series, { width = 900, height = 180, minutes = 5 } = {}) {
  const pad = { left: 48, right: 12, top: 10, bottom: 22 };
  const all = series.flatMap((s) => s.points);
  const end = all.length > 0 ? Math.max(...all.map((p) => p[0])) : Date.now();
  const start = end - minutes * 60_000;
  const max = Math.max(1, ...all.map((p) => p[1]));
  const x = (t) => pad.left + ((t - start) / (end - start)) * (width - pad.left - pad.right);
  const y = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'traffic chart' });
  for (const f of [0, 0.5, 1]) {
    const v = max * f;
    root.append(svg('line', { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: 'grid' }));
    const label = svg('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
    label.textContent = v >= 100 ? Math.round(v) : v.toFixed(1);
    root.append(label);
  }
  for (let m = 0; m <= minutes; m++) {
    const label = svg('text', { x: x(end - m * 60_000), y: height - 6, 'text-anchor': 'middle', class: 'axis' });
    label.textContent = m === 0 ? 'now' : `-${m}m`;
    root.append(label);
  }
  for (const s of series) {
    const pts = s.points.filter((p) => p[0] >= start).map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`);
    if (pts.length > 0)
      root.append(svg('polyline', { points: pts.join(' '), fill: 'none', stroke: s.color, 'stroke-width': 1.8 }));
  }
  const legend = document.createElement('div');
  legend.className = 'legend';
  for (const s of series) {
    const item = document.createElement('span');
    item.style.setProperty('--c', s.color);
    item.textContent = `${s.name}: ${s.points.at(-1)?.[1] ?? 0}/s`;
    legend.append(item);
  }
  el.replaceChildren(root, legend);
}
