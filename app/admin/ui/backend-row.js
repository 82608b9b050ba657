// One backend row of the Backends view (HAProxy's stats line): state and time in it, weight,
// active connections, requests/s, responses by status class, bytes in/out, the last health check
// with its result and time, and the controls that apply to the backend's mode. Built once, then
// updated in place each second (a weight being typed keeps its focus).
import { ApiError, call, Unauthorized } from './api.js';
import { age, dur, h, num, total } from './dom.js';
import { hasFleet } from './fleet.js';

/** The column headers, in the order `row` builds the cells. */
export const HEADERS = [
  'backend',
  'state',
  'in state',
  'weight',
  'active',
  'req/s',
  '2xx / 3xx / 4xx / 5xx',
  'bytes in / out',
  'last health check',
  'failures',
  'latency EWMA',
  '',
];

function stateText(b, c) {
  let state = b.state ?? (b.available ? 'up' : 'down');
  // A backend down for this cluster only (health is judged per cluster).
  if (state === 'up' && c.healthy === false) state = 'down';
  return state;
}

/**
 * The health cell: the check and its last result with the time, or why there is none. A disabled
 * backend's checks are paused (its verdict withdrawn), so it says so instead of "failing".
 */
export function healthText(b, c, policy, now) {
  if (b.mode === 'disabled') return 'disabled (not checked)';
  if (!b.healthChecked) return 'not checked';
  const check = policy?.healthCheck;
  const kind = check ? `${check.type}${check.active ? ` every ${dur(check.interval)}` : ' on failure'}` : 'check';
  const last = c.lastCheck;
  if (last === null || last === undefined) {
    // A passive check probes only while the backend is down: no probe yet is the normal case.
    return `${kind}: ${c.healthy === false ? 'failing' : 'passing'} · no probe yet`;
  }
  const verdict = c.healthy === false ? 'failing' : 'passing';
  return `${kind}: ${verdict} · last probe ${last.ok ? 'ok' : 'failed'} ${age(Date.parse(last.at), now)} ago`;
}

/** Where the setting of `scope` comes from: `fleet · set by r2` ('' when from the config). */
function overrideLabel(b, scope) {
  const o = scope ? b.overrides?.[scope] : undefined;
  if (!scope) return { text: '', title: '' };
  return { text: o ? `${scope} · set by ${o.setBy}` : scope, title: o ? `set at ${o.setAt}` : '' };
}

/** Updates `row` with the latest `b` (the backend) and `c` (its record for the row's cluster). */
export function update(row, b, c, policy, now) {
  const state = stateText(b, c);
  row.dataset.state = state;
  row.dataset.mode = b.mode ?? 'up';
  const set = (field, text) => {
    const el = row.querySelector(`[data-field="${field}"]`);
    if (el.textContent !== text) el.textContent = text;
  };
  const ramp = c.rampPercent !== undefined && c.rampPercent < 100 && state === 'up';
  // `drained`: out of service with no connection left (safe to stop the backend).
  const drained = state === 'draining' && b.drained === true ? ' · drained' : '';
  set('state', ramp ? `up · slow start ${Math.round(c.rampPercent)}%` : `${state}${drained}`);
  row.querySelector('[data-field="state"]').className = `badge ${state}`;
  set('since', c.since ? `${c.sinceExact === false ? '≥ ' : ''}${age(Date.parse(c.since), now)}` : '–');
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
  const served = b.served ?? { rps: 0, classes: {}, bytesIn: 0, bytesOut: 0 };
  set('active', num(b.active));
  set('rps', num(served.rps));
  set('classes', ['2xx', '3xx', '4xx', '5xx'].map((k) => num(served.classes[k] ?? 0)).join(' / '));
  set('bytes', `${total(served.bytesIn)} / ${total(served.bytesOut)}`);
  set('failures', num(c.failures ?? b.failures));
  set('latency', b.latencyEwmaMs ? `${num(b.latencyEwmaMs)} ms` : '–');
  set('health', healthText(b, c, policy, now));
  // Only the controls that apply: drain and disable from up, enable back from either.
  const m = b.mode ?? 'up';
  for (const [action, shown] of [
    ['drain', m === 'up'],
    ['disable', m !== 'disabled'],
    ['enable', m !== 'up'],
    ['clear-weight', setWeight],
  ]) {
    row.querySelector(`button[data-action="${action}"]`).hidden = !shown;
  }
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
  const weight = h('input', { type: 'number', min: '0', class: 'weight', placeholder: 'N' });
  const button = (action, text, onclick) => h('button', { type: 'button', dataset: { action }, onclick }, text);
  return h(
    'td',
    { class: 'controls' },
    scope,
    button('drain', 'Drain', () => act('drain')),
    button('disable', 'Disable', () => act('disable')),
    button('enable', 'Enable', () => act('enable')),
    h('label', { class: 'weight-box' }, 'weight ', weight),
    button('weight', 'Set', () => act('weight', { weight: weight.value === '' ? null : Number(weight.value) })),
    button('clear-weight', 'Clear', () => act('weight', { weight: null })),
  );
}

/** A new row for backend `b` in cluster record `c`. */
export function row(b, c, onDone, errorEl) {
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
    ...['since', 'weight', 'active', 'rps', 'classes', 'bytes', 'health', 'failures', 'latency'].map(cell),
    controls(b.id, onDone, errorEl),
  );
}
