// The dashboard's entry: token prompt, polling of `GET /ui/data` once a second, the routing
// table when the config version changes, GET /fleet (probed once; read again while the Fleet view
// is shown) and the seven views (one module each; Fleet only with `fleet:`).
import { call, setToken, Unauthorized } from './api.js';
import { renderBackends } from './backends.js';
import { setupExplain, updateListeners } from './explain.js';
import { hasFleet, loadFleet, renderFleet } from './fleet.js';
import { renderPolicies } from './policies.js';
import { renderReloads } from './reloads.js';
import { renderRoutes, setupRoutes } from './routes.js';
import { renderTraffic } from './traffic.js';

const POLL_MS = 1000;
/** Samples kept in the page (the router keeps five minutes). */
const KEEP = 300;

const state = { data: undefined, routes: undefined, routesVersion: undefined, samples: [], view: 'backends' };
let timer;
let locked = false;

const $ = (id) => document.getElementById(id);

function status(text, kind = '') {
  const el = $('status');
  el.textContent = text;
  el.dataset.kind = kind;
}

function showView(view) {
  const known = [...document.querySelectorAll('#tabs a')].map((a) => a.dataset.view);
  state.view = known.includes(view) && !(view === 'fleet' && hasFleet() === false) ? view : 'backends';
  for (const s of document.querySelectorAll('main > section')) s.hidden = s.dataset.view !== state.view;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.view === state.view);
  render();
}

function render() {
  const { data, routes } = state;
  if (data === undefined) return;
  $('version').textContent = `config ${data.version}`;
  $('tab-fleet').hidden = hasFleet() !== true;
  // The Fleet view of a router without `fleet:` (an old #fleet link): back to the backends.
  if (state.view === 'fleet' && hasFleet() === false) return showView('backends');
  if (state.view === 'backends') renderBackends($('backends-body'), data, routes, refresh);
  else if (state.view === 'traffic') renderTraffic($('traffic-body'), $('traffic-chart'), data, state.samples);
  else if (state.view === 'routes') renderRoutes($('routes-body'), routes);
  else if (state.view === 'reloads') renderReloads($('reloads-body'), data, refresh);
  else if (state.view === 'policies') renderPolicies($('policies-body'), data);
  else if (state.view === 'fleet') renderFleet($('fleet-body'), data);
}

function askToken(message) {
  locked = true;
  clearTimeout(timer);
  status('token needed', 'error');
  $('token-form').hidden = false;
  $('token-error').textContent = message ?? '';
  $('token-input').focus();
}

/** Fetches the data (and the routing table when the version changed), then renders. */
async function refresh() {
  const since = state.samples.at(-1)?.t ?? 0;
  const data = await call(`data?since=${since}`);
  state.samples.push(...data.traffic.samples);
  if (state.samples.length > KEEP) state.samples.splice(0, state.samples.length - KEEP);
  state.data = data;
  if (data.version !== state.routesVersion) {
    const r = await call('../routes');
    state.routes = r.routes;
    state.routesVersion = data.version;
    updateListeners(data.listeners);
  }
  await loadFleet(state.view === 'fleet');
  render();
}

async function poll() {
  clearTimeout(timer);
  if (locked) return;
  // A hidden tab does not poll (visibilitychange resumes it): nobody watching costs nothing.
  if (document.hidden) return;
  try {
    await refresh();
    status(`live · ${new Date(state.data.now).toLocaleTimeString([], { hour12: false })}`, 'ok');
  } catch (e) {
    if (e instanceof Unauthorized) {
      askToken(state.data === undefined ? '' : e.message);
      return;
    }
    status(`error: ${e.message}`, 'error');
  }
  timer = setTimeout(poll, POLL_MS);
}

$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken($('token-input').value.trim());
  $('token-input').value = '';
  $('token-form').hidden = true;
  locked = false;
  poll();
});

for (const a of document.querySelectorAll('#tabs a')) {
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    history.replaceState(null, '', `#${a.dataset.view}`);
    showView(a.dataset.view);
  });
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) poll();
});

setupRoutes($('routes-search'), () => render());
setupExplain($('explain-form'), $('explain-output'), $('explain-command'), $('explain-live'), () => state.data);
showView(location.hash.slice(1));
poll();
