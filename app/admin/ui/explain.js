// Explain view: the form posts `switchboard route`'s flags to `POST /explain`, which runs the
// same function as the CLI (app/explain/explain.ts) on the running address book, and shows its text
// output verbatim, with the equivalent command line.
import { ApiError, call, Unauthorized } from './api.js';
import { h } from './dom.js';

let listenerSelect;

/** Fills the listener choice (the first listener is the CLI's default). */
export function updateListeners(names) {
  if (listenerSelect === undefined) return;
  const current = listenerSelect.value;
  listenerSelect.replaceChildren(...names.map((n) => h('option', { value: n }, n)));
  if (names.includes(current)) listenerSelect.value = current;
}

const quote = (s) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

function input(form) {
  const v = (name) => form.elements[name].value.trim();
  const headers = form.elements.headers.value
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const body = { headers };
  for (const k of ['host', 'path', 'method', 'client', 'sni', 'listener']) if (v(k) !== '') body[k] = v(k);
  return body;
}

function command(body, firstListener) {
  const args = ['switchboard', 'route'];
  const flag = (name, value) => args.push(`--${name}`, quote(value));
  if (body.host) flag('host', body.host);
  if (body.path && body.path !== '/') flag('path', body.path);
  if (body.method && body.method !== 'GET') flag('method', body.method);
  for (const x of body.headers) flag('header', x);
  if (body.client && body.client !== '127.0.0.1') flag('client', body.client);
  if (body.sni) flag('sni', body.sni);
  if (body.listener && body.listener !== firstListener) flag('listener', body.listener);
  // The admin listener this page came from: the CLI asks it, so it answers on the same live state.
  flag('admin', new URL('..', location.href).href);
  return args.join(' ');
}

/**
 * Wires the explain form. The answer is the running router's, on its live state (health, drain,
 * disable, weights, slow start: POST /explain), as `switchboard route --admin` gives it.
 */
export function setupExplain(form, output, commandEl) {
  listenerSelect = form.elements.listener;
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = input(form);
    commandEl.textContent = command(body, listenerSelect.options[0]?.value);
    output.dataset.state = 'pending';
    try {
      const answer = await call('../explain', { method: 'POST', body });
      output.textContent = answer.text;
      output.className = `card ${answer.routed ? 'routed' : 'no-route'}`;
      output.dataset.exitCode = String(answer.exitCode);
    } catch (e) {
      output.textContent = e instanceof ApiError || e instanceof Unauthorized ? e.message : String(e);
      output.className = 'card error';
      output.dataset.exitCode = e instanceof ApiError && e.status === 400 ? '2' : '';
    }
    output.dataset.state = 'done';
  });
}
