// The dashboard's entry: token prompt, polling of `GET /ui/data` once a second, the routing
// table when the config version changes, GET /fleet (probed once; read again while the Fleet view
// is shown) and the seven views (one module each; Fleet only with `fleet:`).
import { call, setToken, Unauthorized } from './api.js';
import { renderBackends } from './backends.js';
import { setupExplain, updateListeners } from './explain.js';
import { hasFleet, loadFleet, renderFleet } from './fleet.js';
import { renderPolicies } from './policies.js';
import { renderReloads } from './reloads.js';
import { bookLine, renderRoutes, setupRoutes } from './routes.js';
import { renderTraffic } from './traffic.js';

const POLL_MS = 1000;
/** Samples kept in the page (the router keeps five minutes). */
const KEEP = 300;

/** Polls between two reads of GET /routes when the config version did not change. */
const ROUTES_EVERY = 10;

const state = {
  data: undefined,
  routes: undefined,
  book: undefined,
  routesVersion: undefined,
  polls: 0,
  samples: [],
  view: 'backends',
};
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
  $('version').textContent = `config ${data.version}${state.book?.version ? ` · routes ${state.book.version}` : ''}`;
  $('tab-fleet').hidden = hasFleet() !== true;
  // The Fleet view of a router without `fleet:` (an old #fleet link): back to the backends.
  if (state.view === 'fleet' && hasFleet() === false) return showView('backends');
  if (state.view === 'backends') renderBackends($('backends-body'), data, routes, refresh);
  else if (state.view === 'traffic') renderTraffic($('traffic-body'), $('traffic-chart'), data, state.samples);
  else if (state.view === 'routes') {
    $('routes-book').textContent = bookLine(state.book);
    renderRoutes($('routes-body'), routes);
  } else if (state.view === 'reloads') renderReloads($('reloads-body'), data, refresh);
  else if (state.view === 'policies') renderPolicies($('policies-body'), data);
  else if (state.view === 'fleet') renderFleet($('fleet-body'), data);
}

/** Whether a token was entered in this tab (a 401 then means a wrong one, not a missing one). */
let tokenGiven = false;

/** Shows the token form with what went wrong: no token yet, or the one given was refused. */
function askToken(message) {
  locked = true;
  clearTimeout(timer);
  const refused = tokenGiven
    ? `The router refused this token (${message || 'unauthorized'}): check admin.token or SWITCHBOARD_ADMIN_TOKEN and try again.`
    : 'This admin listener needs a token: nothing is shown without it.';
  status(tokenGiven ? 'token refused' : 'token needed', 'error');
  $('token-form').hidden = false;
  $('token-error').textContent = refused;
  $('token-input').focus();
}

/** Fetches the data (and the routing table when the version changed), then renders. */
async function refresh() {
  const since = state.samples.at(-1)?.t ?? 0;
  const data = await call(`data?since=${since}`);
  state.samples.push(...data.traffic.samples);
  if (state.samples.length > KEEP) state.samples.splice(0, state.samples.length - KEEP);
  state.data = data;
  // The book can change its routes without a config reload (a file saved, an etcd or SQLite
  // change): the table is read again every ROUTES_EVERY polls too, and on every version change.
  if (data.version !== state.routesVersion || ++state.polls % ROUTES_EVERY === 0) {
    const r = await call('../routes');
    state.routes = r.routes;
    state.book = r.book;
    if (data.version !== state.routesVersion) updateListeners(data.listeners);
    state.routesVersion = data.version;
  }
  await loadFleet(state.view === 'fleet', data.fleet);
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
      askToken(e.message);
      return;
    }
    status(`error: ${e.message}`, 'error');
  }
  timer = setTimeout(poll, POLL_MS);
}

$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken($('token-input').value.trim());
  tokenGiven = true;
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
setupExplain($('explain-form'), $('explain-output'), $('explain-command'));
showView(location.hash.slice(1));
poll();
