// Traffic view: per listener (address, TLS mode and certificates: names, expiry, source file or
// ACME; open connections, connections ended, connections/s, bytes/s), per product/cluster (HTTP/1
// requests/s), connection results (errors are every code but `ok`), and the chart of the last
// minutes from the router's ring buffer (app/admin/traffic.ts), smoothed over SMOOTH_MS (smooth.js).
import { lineChart } from './chart.js';
import { age, bytes, fill, h, num, stack, table } from './dom.js';
import { SMOOTH_MS, smooth } from './smooth.js';

const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + (typeof b === 'number' ? b : b.cps), 0);

function errorsOf(results) {
  return Object.entries(results ?? {})
    .filter(([code]) => code !== 'ok')
    .reduce((a, [, v]) => a + v, 0);
}

function tlsText(d) {
  if (!d.tls || d.tls === 'off')
    return d.proxyProtocol && d.proxyProtocol !== 'off' ? `off · PROXY ${d.proxyProtocol}` : 'off';
  const proxy = d.proxyProtocol && d.proxyProtocol !== 'off' ? ` · PROXY ${d.proxyProtocol}` : '';
  return `${d.tls}${proxy}`;
}

/** One line per certificate: its names, expiry ("in 89d") and where it comes from. */
function certificates(d, now) {
  const list = d.certificates ?? [];
  if (d.tls !== 'terminate') return d.tls === 'passthrough' ? "the backends' (passed through)" : '–';
  const lines = list.map((c) => {
    const left = Date.parse(c.notAfter) - now;
    const when = left <= 0 ? `expired ${age(Date.parse(c.notAfter), now)} ago` : `expires in ${age(now, now + left)}`;
    return h(
      'div',
      { class: left < 14 * 86_400_000 ? 'warn' : '', dataset: { certificate: c.names.join(','), source: c.source } },
      `${c.names.join(', ')} · ${when} (${c.notAfter.slice(0, 10)}) · ${c.source === 'acme' ? 'ACME' : 'file'}`,
    );
  });
  const pending = (d.acme ?? []).filter((n) => !list.some((c) => c.source === 'acme' && c.names.includes(n)));
  if (pending.length > 0) lines.push(h('div', { class: 'muted' }, `ACME, not obtained yet: ${pending.join(', ')}`));
  return lines.length > 0 ? lines : 'none';
}

/** Renders the traffic tables into `el` and the chart into `chartEl`. */
export function renderTraffic(el, chartEl, data, samples) {
  const last = samples.at(-1) ?? { listeners: {}, clusters: {}, results: {} };
  const totals = data.traffic.totals;
  const round = (v) => Math.round(v * 100) / 100;
  const series = (f) => smooth(samples.map((s) => [s.t, round(f(s))]));
  lineChart(chartEl, [
    { name: 'connections', color: '#2f6fdf', points: series((s) => sum(s.listeners)) },
    { name: 'requests', color: '#1f9d55', points: series((s) => sum(s.clusters)) },
    { name: 'errors', color: '#d64545', points: series((s) => errorsOf(s.results)) },
  ]);
  const window = document.getElementById('chart-window');
  if (window) window.textContent = `(per second, ${SMOOTH_MS / 1000} s average)`;
  const details = data.listenerDetails ?? data.listeners.map((name) => ({ name }));
  const listeners = details.map((d) => {
    const l = last.listeners[d.name] ?? { open: 0, cps: 0, inBps: 0, outBps: 0 };
    return h(
      'tr',
      { dataset: { listener: d.name, tls: d.tls ?? '' } },
      h('td', {}, d.name),
      h('td', { class: 'mono' }, d.bound && d.bound !== d.address ? `${d.address} (${d.bound})` : (d.address ?? '–')),
      h('td', {}, tlsText(d)),
      h('td', { dataset: { field: 'certificates' } }, certificates(d, data.now)),
      h('td', {}, num(d.open ?? l.open)),
      h('td', {}, num(d.total ?? 0)),
      h('td', {}, num(l.cps)),
      h('td', {}, `${bytes(l.inBps)} / ${bytes(l.outBps)}`),
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
      stack(table(['listener', 'address', 'TLS', 'certificates', 'open', 'ended', 'conn/s', 'in / out'], listeners)),
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
