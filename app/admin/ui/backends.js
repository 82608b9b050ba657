// Backends view: the warnings first (a cluster or sub-cluster with no backend left, availability.js),
// then one card per cluster ("2 of 3 available"), one table per sub-cluster (its own count), a row
// per backend (backend-row.js) with its controls (POST /backends/{id}/drain|disable|enable|weight,
// on this router or, with the scope select shown when the router has `fleet:`, the whole fleet).
// Rows are updated in place each second; the tables are rebuilt only when the set of rows changes.
import { countOf, warnings } from './availability.js';
import { HEADERS, row, update } from './backend-row.js';
import { dur, fill, h, stack, table } from './dom.js';

/** The sub-cluster of `id` in `cluster`, read from the bfe routing table (undefined for other books). */
function subclusterOf(routes, cluster, id) {
  const subs = routes?.clusters?.[cluster]?.subclusters ?? {};
  for (const [name, s] of Object.entries(subs)) {
    if ((s.backends ?? []).some((b) => (b.address ?? b.id ?? b) === id)) return name;
  }
  return undefined;
}

/** cluster → sub-cluster → [{ b: the backend, c: its record for the cluster }]. */
function groups(data, routes) {
  const out = new Map();
  for (const b of data.backends) {
    const views = b.clusters.length > 0 ? b.clusters : [{ cluster: '', ...b }];
    for (const c of views) {
      const cluster = c.cluster || '(no cluster)';
      const sub = subclusterOf(routes, c.cluster, b.id) ?? '';
      if (!out.has(cluster)) out.set(cluster, new Map());
      const subs = out.get(cluster);
      if (!subs.has(sub)) subs.set(sub, []);
      subs.get(sub).push({ b, c });
    }
  }
  return out;
}

function weightOf(routes, cluster, sub) {
  const w = routes?.clusters?.[cluster]?.subclusters?.[sub]?.weight;
  return w === undefined ? '' : ` · weight ${w}`;
}

/** Sets `el` (a count span) to "N of M available", marked `data-none` when N is 0. */
function showCount(el, rows) {
  const { available, total } = countOf(rows);
  const text = `${available} of ${total} available`;
  if (el.textContent !== text) el.textContent = text;
  el.dataset.available = String(available);
  el.dataset.total = String(total);
  el.classList.toggle('none-left', available === 0);
}

function build(el, grouped, routes, onDone, errorEl) {
  const cards = [];
  for (const [cluster, subs] of grouped) {
    const policy = routes?.clusters?.[cluster];
    const title = policy
      ? ` · ${policy.balance}${policy.slowStart ? ` · slow start ${dur(policy.slowStart)}` : ''}`
      : '';
    const tables = [...subs].map(([sub, list]) =>
      h(
        'div',
        { class: 'subcluster', dataset: { subcluster: sub } },
        sub === ''
          ? null
          : h(
              'h3',
              {},
              `sub-cluster ${sub} · `,
              h('span', { class: 'count', dataset: { count: 'subcluster' } }),
              h('span', { class: 'muted' }, weightOf(routes, cluster, sub)),
            ),
        stack(
          table(
            HEADERS,
            list.map(({ b, c }) => row(b, c, onDone, errorEl)),
          ),
        ),
      ),
    );
    cards.push(
      h(
        'div',
        { class: 'card', dataset: { cluster } },
        h(
          'h2',
          {},
          `${cluster} · `,
          h('span', { class: 'count', dataset: { count: 'cluster' } }),
          h('span', { class: 'muted' }, title),
        ),
        tables,
      ),
    );
  }
  fill(el, h('div', { id: 'availability' }), cards);
}

/** Renders (or updates) the backends view into `el`; `onDone` refreshes after a control. */
export function renderBackends(el, data, routes, onDone) {
  const grouped = groups(data, routes);
  const shape = JSON.stringify(
    [...grouped].map(([k, subs]) => [k, [...subs].map(([s, l]) => [s, l.map((x) => x.b.id)])]),
  );
  const errorEl = document.getElementById('control-error');
  if (el.dataset.shape !== shape) {
    el.dataset.shape = shape;
    if (data.backends.length === 0) {
      fill(el, h('p', { class: 'muted' }, 'No backends in the running config.'));
      return;
    }
    build(el, grouped, routes, onDone, errorEl);
  }
  const warned = warnings(grouped, routes);
  const key = JSON.stringify(warned);
  const box = el.querySelector('#availability');
  if (box.dataset.key !== key) {
    box.dataset.key = key;
    fill(
      box,
      warned.map((w) =>
        h(
          'p',
          { class: 'card banner', role: 'alert', dataset: { noBackend: w.cluster, subcluster: w.subcluster ?? '' } },
          w.text,
        ),
      ),
    );
  }
  for (const [cluster, subs] of grouped) {
    const card = el.querySelector(`.card[data-cluster="${CSS.escape(cluster)}"]`);
    showCount(card.querySelector('[data-count="cluster"]'), [...subs.values()].flat());
    for (const [sub, list] of subs) {
      const count = card.querySelector(`[data-subcluster="${CSS.escape(sub)}"] [data-count="subcluster"]`);
      if (count) showCount(count, list);
      for (const { b, c } of list) {
        const r = card.querySelector(
          `tr[data-backend="${CSS.escape(b.id)}"][data-cluster="${CSS.escape(c.cluster ?? '')}"]`,
        );
        if (r) update(r, b, c, routes?.clusters?.[cluster], data.now);
      }
    }
  }
}
