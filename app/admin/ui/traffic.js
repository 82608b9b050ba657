// Traffic view: per listener (open connections, connections/s, bytes/s), per product/cluster
// (HTTP/1 requests/s), connection results (errors are every code but `ok`), and the chart of
// the last minutes from the router's ring buffer (app/admin/traffic.ts).
import { lineChart } from './chart.js';
import { bytes, fill, h, num, table } from './dom.js';

const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + (typeof b === 'number' ? b : b.cps), 0);

function errorsOf(results) {
  return Object.entries(results ?? {})
    .filter(([code]) => code !== 'ok')
    .reduce((a, [, v]) => a + v, 0);
}

/** Renders the traffic tables into `el` and the chart into `chartEl`. */
export function renderTraffic(el, chartEl, data, samples) {
  const last = samples.at(-1) ?? { listeners: {}, clusters: {}, results: {} };
  const totals = data.traffic.totals;
  const round = (v) => Math.round(v * 100) / 100;
  lineChart(chartEl, [
    { name: 'connections', color: '#2f6fdf', points: samples.map((s) => [s.t, round(sum(s.listeners))]) },
    { name: 'requests', color: '#1f9d55', points: samples.map((s) => [s.t, round(sum(s.clusters))]) },
    { name: 'errors', color: '#d64545', points: samples.map((s) => [s.t, round(errorsOf(s.results))]) },
  ]);
  const listeners = data.listeners.map((name) => {
    const l = last.listeners[name] ?? { open: 0, cps: 0, inBps: 0, outBps: 0 };
    return h(
      'tr',
      { dataset: { listener: name } },
      h('td', {}, name),
      h('td', {}, num(l.open)),
      h('td', {}, num(l.cps)),
      h('td', {}, bytes(l.inBps)),
      h('td', {}, bytes(l.outBps)),
    );
  });
  const clusterKeys = [...new Set([...Object.keys(totals.clusters), ...Object.keys(last.clusters)])].sort();
  const clusters = clusterKeys.map((k) =>
    h(
      'tr',
      { dataset: { cluster: k } },
      h('td', {}, k),
      h('td', {}, num(last.clusters[k] ?? 0)),
      h('td', {}, num(totals.clusters[k] ?? 0)),
    ),
  );
  const codes = [...new Set([...Object.keys(totals.results), ...Object.keys(last.results)])].sort();
  const results = codes.map((code) =>
    h(
      'tr',
      { dataset: { result: code }, class: code === 'ok' ? '' : 'error-row' },
      h('td', {}, code),
      h('td', {}, num(last.results[code] ?? 0)),
      h('td', {}, num(totals.results[code] ?? 0)),
    ),
  );
  const empty = (rows, text) => (rows.length > 0 ? rows : [h('tr', {}, h('td', { colspan: 3, class: 'muted' }, text))]);
  fill(
    el,
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Listeners'),
      table(['listener', 'open', 'conn/s', 'in', 'out'], listeners),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Products / clusters ', h('span', { class: 'muted' }, '(HTTP/1 requests)')),
      table(['product/cluster', 'req/s', 'total'], empty(clusters, 'no requests yet')),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Results ', h('span', { class: 'muted' }, '(connections, by result code)')),
      table(['result', 'per s', 'total'], empty(results, 'no connections ended yet')),
    ),
  );
}
