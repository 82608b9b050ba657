// Backends view: one card per cluster, one table per sub-cluster, a row per backend with its
// state, weight, connections, rate, failures, latency EWMA and health, and the runtime controls
// (POST /backends/{id}/drain|disable|enable|weight, on this router or, with the scope select shown
// when the router has `fleet:`, the whole fleet). An override shows where it was set and by whom ("fleet · set by r2"; its time on
// hover). Rows are updated in place each second so a weight being typed keeps its focus; the
// tables are rebuilt only when the set of rows changes.
import { ApiError, call, Unauthorized } from './api.js';
import { dur, fill, h, num, table } from './dom.js';
import { hasFleet } from './fleet.js';

const HEADERS = ['backend', 'state', 'weight', 'active', 'conn/s', 'total', 'failures', 'latency EWMA', 'health', ''];

/** The sub-cluster of `id` in `cluster`, read from the bfe routing table (undefined for other books). */
function subclusterOf(routes, cluster, id) {
  const subs = routes?.clusters?.[cluster]?.subclusters ?? {};
  for (const [name, s] of Object.entries(subs)) {
    if ((s.backends ?? []).some((b) => (b.address ?? b.id ?? b) === id)) return name;
  }
  return undefined;
}

/** cluster → sub-cluster → [{ backend, view (the cluster's own record) }]. */
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

function stateText(b, c) {
  let state = b.state ?? (b.available ? 'up' : 'down');
  // A backend down for this cluster only (health is judged per cluster).
  if (state === 'up' && c.healthy === false) state = 'down';
  return state;
}

function healthText(b, c, policy) {
  const check = policy?.healthCheck;
  const kind = check ? `${check.type}${check.active ? ` every ${dur(check.interval)}` : ' on failure'}` : 'check';
  if (!b.healthChecked) return 'not checked';
  const verdict = c.healthy === false || (c.healthy === undefined && c.available === false) ? 'failing' : 'passing';
  // Active checks always have a probe scheduled; passive ones probe only to bring a backend back.
  return `${kind}: ${verdict}${c.probing && !check?.active ? ' · probing' : ''}`;
}

/** Where the setting of `scope` comes from: `fleet · set by r2` ('' when from the config). */
function overrideLabel(b, scope) {
  const o = scope ? b.overrides?.[scope] : undefined;
  if (!scope) return { text: '', title: '' };
  return { text: o ? `${scope} · set by ${o.setBy}` : scope, title: o ? `set at ${o.setAt}` : '' };
}

function update(row, b, c, policy) {
  const state = stateText(b, c);
  row.dataset.state = state;
  const set = (field, text) => {
    const el = row.querySelector(`[data-field="${field}"]`);
    if (el.textContent !== text) el.textContent = text;
  };
  const ramp = c.rampPercent !== undefined && c.rampPercent < 100 && state === 'up';
  // `drained`: out of service with no connection left (safe to stop the backend).
  const drained = state === 'draining' && b.drained === true ? ' · drained' : '';
  set('state', ramp ? `up · slow start ${Math.round(c.rampPercent)}%` : `${state}${drained}`);
  row.querySelector('[data-field="state"]').className = `badge ${state}`;
  const mode = overrideLabel(b, b.modeScope);
  set('override', mode.text);
  row.querySelector('[data-field="override"]').title = mode.title;
  row.dataset.modeScope = b.modeScope ?? '';
  row.querySelector('select.scope').hidden = hasFleet() !== true;
  const w = c.weight ?? b.weight;
  // A fleet weight says so and by whom; this router's own stays "(set)" (its label: on hover).
  const weight = overrideLabel(b, b.weightScope);
  const setWeight = b.weightOverride !== null && b.weightOverride !== undefined;
  const mark = b.weightScope === 'fleet' ? ` (${weight.text})` : setWeight ? ' (set)' : '';
  set('weight', w === null || w === undefined ? '–' : `${w}${mark}`);
  row.querySelector('[data-field="weight"]').title = weight.text === '' ? '' : `${weight.text}, ${weight.title}`;
  set('active', num(b.active));
  set('rate', num(b.rate));
  set('total', num(b.total));
  set('failures', num(c.failures ?? b.failures));
  set('latency', b.latencyEwmaMs ? `${num(b.latencyEwmaMs)} ms` : '–');
  set('health', healthText(b, c, policy));
}

function controls(id, onDone, errorEl) {
  const scope = h(
    'select',
    { class: 'scope', hidden: hasFleet() !== true, 'aria-label': `scope of the controls of ${id}` },
    h('option', { value: 'local' }, 'this router'),
    h('option', { value: 'fleet' }, 'fleet'),
  );
  const act = async (path, body) => {
    errorEl.textContent = '';
    try {
      await call(`../backends/${encodeURIComponent(id)}/${path}`, {
        method: 'POST',
        body: { ...body, scope: scope.value },
      });
      await onDone();
    } catch (e) {
      errorEl.textContent = `${id}: ${e instanceof Unauthorized || e instanceof ApiError ? e.message : String(e)}`;
    }
  };
  const weight = h('input', { type: 'number', min: '0', class: 'weight', 'aria-label': `weight of ${id}` });
  return h(
    'td',
    { class: 'controls' },
    scope,
    h('button', { dataset: { action: 'drain' }, onclick: () => act('drain') }, 'Drain'),
    h('button', { dataset: { action: 'disable' }, onclick: () => act('disable') }, 'Disable'),
    h('button', { dataset: { action: 'enable' }, onclick: () => act('enable') }, 'Enable'),
    weight,
    h(
      'button',
      {
        dataset: { action: 'weight' },
        onclick: () => act('weight', { weight: weight.value === '' ? null : Number(weight.value) }),
      },
      'Set weight',
    ),
  );
}

function row(b, c, onDone, errorEl) {
  const cell = (field) => h('td', { dataset: { field } });
  return h(
    'tr',
    { dataset: { backend: b.id, cluster: c.cluster ?? '' } },
    h('td', { class: 'mono' }, b.id),
    h(
      'td',
      {},
      h('span', { dataset: { field: 'state' } }),
      ' ',
      h('span', { class: 'muted override', dataset: { field: 'override' } }),
    ),
    ...['weight', 'active', 'rate', 'total', 'failures', 'latency', 'health'].map(cell),
    controls(b.id, onDone, errorEl),
  );
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
          sub === '' ? null : h('h3', {}, `sub-cluster ${sub}`, weightOf(routes, cluster, sub)),
          table(
            HEADERS,
            list.map(({ b, c }) => row(b, c, onDone, errorEl)),
          ),
        ),
      );
      cards.push(
        h(
          'div',
          { class: 'card', dataset: { cluster } },
          h('h2', {}, cluster, h('span', { class: 'muted' }, title)),
          tables,
        ),
      );
    }
    fill(el, cards);
  }
  for (const [cluster, subs] of grouped) {
    for (const list of subs.values()) {
      for (const { b, c } of list) {
        const r = el.querySelector(
          `tr[data-backend="${CSS.escape(b.id)}"][data-cluster="${CSS.escape(c.cluster ?? '')}"]`,
        );
        if (r) update(r, b, c, routes?.clusters?.[cluster]);
      }
    }
  }
}

function weightOf(routes, cluster, sub) {
  const w = routes?.clusters?.[cluster]?.subclusters?.[sub]?.weight;
  return w === undefined ? null : h('span', { class: 'muted' }, ` · weight ${w}`);
}
