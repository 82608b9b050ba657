// Reloads view: the running config (version, file), counts since start, the recent reloads
// (trigger, result, errors with their config paths) and a button for POST /reload.
import { ApiError, call } from './api.js';
import { clock, fill, h, table } from './dom.js';

let message = '';

/** Renders the reloads view into `el`; `onDone` refreshes after a reload. */
export function renderReloads(el, data, onDone) {
  const { counts, recent } = data.reloads;
  // Rebuilt only when something shown changed (a click on the button is never lost to a redraw).
  const shape = JSON.stringify([data.version, counts, recent[0]?.at, message]);
  if (el.dataset.shape === shape) return;
  el.dataset.shape = shape;
  const reload = async () => {
    try {
      const r = await call('../reload', { method: 'POST' });
      message = r.changed ? `reloaded: ${r.version}` : 'config unchanged';
    } catch (e) {
      message = e instanceof ApiError ? `reload failed: ${e.message}` : String(e);
    }
    await onDone();
  };
  const rows = recent.map((r) =>
    h(
      'tr',
      { class: r.ok ? '' : 'error-row', dataset: { reload: r.ok ? (r.changed ? 'ok' : 'unchanged') : 'failed' } },
      h('td', {}, clock(r.at)),
      h('td', {}, r.trigger),
      h('td', {}, r.ok ? (r.changed ? 'ok' : 'unchanged') : 'failed'),
      h('td', { class: 'mono' }, r.version),
      h(
        'td',
        {},
        r.errors.length === 0
          ? ''
          : h(
              'ul',
              { class: 'errors' },
              r.errors.map((e) => h('li', { class: 'mono' }, e)),
            ),
      ),
    ),
  );
  const last = recent[0];
  fill(
    el,
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Running config'),
      h('p', {}, 'version ', h('code', { id: 'config-version' }, data.version)),
      h('p', {}, 'file ', h('code', {}, data.file)),
      h('p', { class: 'muted' }, `admin listener up since ${clock(data.startedAt)}`),
      h(
        'p',
        { id: 'last-reload' },
        last === undefined
          ? 'No reload since the dashboard started.'
          : `Last reload ${clock(last.at)} (${last.trigger}): ${last.ok ? (last.changed ? 'ok' : 'unchanged') : `failed, ${last.errors.length} error(s); the previous config keeps serving`}`,
      ),
      h('p', {}, `ok ${counts.ok} · unchanged ${counts.unchanged} · failed ${counts.failed}`),
      h('button', { onclick: reload }, 'Reload now'),
      h('span', { class: 'muted' }, ` ${message}`),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Recent reloads'),
      table(
        ['at', 'trigger', 'result', 'version', 'errors'],
        rows.length > 0 ? rows : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'none yet'))],
      ),
    ),
  );
}
