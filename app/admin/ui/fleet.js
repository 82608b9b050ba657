// Fleet view (issue 43 item 1): the live members of the fleet as GET /fleet lists them — id (this
// router marked), version, config hash, listeners, start and how long ago each was last seen —
// with a banner while the fleet is degraded (etcd unreachable: the list is the last one etcd
// gave) and a note when members differ in version or config hash (a rollout in progress).
//
// 1. `loadFleet` is called on every refresh of the page with GET /ui/data's `fleet` (true: the
//    router has `fleet:`; false: it has not, and GET /fleet is never asked, so no 404 shows in the
//    console). Without that field (an older router) its first call probes GET /fleet: 200
//    means this router has `fleet:` (the Fleet tab shows, backends.js shows its scope select),
//    404 `{ fleet: false }` means it has not, and it is never asked again.
// 2. With a fleet, GET /fleet is read again on each refresh while the Fleet view is shown, so
//    "last seen" follows the page's polling; other views cost no extra request.
// 3. "Last seen" is measured against the router's clock (`now` of GET /ui/data), not the
//    browser's, so a skewed laptop clock does not age the members.
import { ApiError, call, Unauthorized } from './api.js';
import { clock, fill, h, table } from './dom.js';

/** Whether this router has `fleet:`: undefined until GET /fleet answered, then true or false. */
let present;
/** The last answer of GET /fleet. */
let last;

/** True, false, or undefined while unknown: whether GET /fleet answers 200 on this router. */
export function hasFleet() {
  return present;
}

/**
 * Reads GET /fleet when `wanted` (the Fleet view is shown). `configured` is GET /ui/data's `fleet`
 * (whether the router has `fleet:`): a router without one is never asked, so the page causes no
 * 404 in the console; undefined (an older router) probes GET /fleet once instead.
 */
export async function loadFleet(wanted, configured) {
  if (configured === false) {
    present = false;
    last = undefined;
    return;
  }
  if (configured === true && present === undefined) present = true;
  if (present === false || (present === true && !wanted)) return;
  try {
    last = await call('../fleet');
    present = true;
  } catch (e) {
    // 404 { fleet: false }: no fleet. A refused token is the page's to ask for; another failure
    // of the first probe leaves the answer unknown (asked again on the next poll) rather than
    // stopping the other views; one of the Fleet view's own reads shows as the page's error.
    if (e instanceof ApiError && e.status === 404) {
      present = false;
      last = undefined;
      return;
    }
    if (e instanceof Unauthorized || present === true) throw e;
  }
}

/** `seenAt` as "3 s ago" from `now` (ms, the router's clock). */
function ago(iso, now) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return '–';
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

const short = (hash) => hash.slice(0, 8);

/** The values of `field` that more than one kind of member has: `[[value, [ids]]…]`, or []. */
function spread(members, field) {
  const by = new Map();
  for (const m of members) by.set(m[field], [...(by.get(m[field]) ?? []), m.id]);
  return by.size > 1 ? [...by] : [];
}

function mixedNote(members) {
  const versions = spread(members, 'version');
  const hashes = spread(members, 'configHash');
  if (versions.length === 0 && hashes.length === 0) return null;
  const list = (pairs, show) => pairs.map(([v, ids]) => `${show(v)} (${ids.join(', ')})`).join(' · ');
  return h(
    'div',
    { class: 'card note', dataset: { fleetMixed: '' } },
    h('strong', {}, 'Members differ'),
    ' — a rollout in progress, or a router left behind.',
    versions.length > 0 ? h('div', { dataset: { mixed: 'version' } }, `versions: ${list(versions, String)}`) : null,
    hashes.length > 0 ? h('div', { dataset: { mixed: 'config' } }, `config hashes: ${list(hashes, short)}`) : null,
  );
}

function cell(label, props, ...children) {
  return h('td', { ...props, dataset: { ...props.dataset, label } }, ...children);
}

function row(m, self, now) {
  const differs = (field) => (self !== undefined && m[field] !== self[field] ? 'differs' : undefined);
  return h(
    'tr',
    { dataset: { member: m.id, self: String(m.self) } },
    cell(
      'member',
      { class: 'mono' },
      m.id,
      m.self ? h('span', { class: 'badge self', dataset: { field: 'self' } }, 'this router') : null,
    ),
    cell('version', { class: differs('version') }, m.version),
    cell(
      'config',
      { class: ['mono', differs('configHash')].filter(Boolean).join(' '), title: m.configHash },
      short(m.configHash),
    ),
    cell('listeners', { class: 'mono' }, m.listeners.length === 0 ? '–' : m.listeners.join(', ')),
    cell('started', { title: m.startedAt }, clock(m.startedAt)),
    cell('last seen', { title: m.seenAt, dataset: { field: 'seen' } }, ago(m.seenAt, now)),
  );
}

/** Renders the fleet view into `el` from the last GET /fleet and `data` (GET /ui/data). */
export function renderFleet(el, data) {
  if (present !== true || last === undefined) {
    fill(el, h('p', { class: 'card muted' }, present === false ? 'No fleet: in this config.' : 'Loading the fleet…'));
    return;
  }
  const members = [...last.members].sort((a, b) => a.id.localeCompare(b.id));
  const self = members.find((m) => m.self);
  const banner = last.degraded
    ? h(
        'div',
        { class: 'card banner', role: 'alert', dataset: { fleetDegraded: '' } },
        h('strong', {}, `degraded: ${last.reason ?? 'etcd unreachable'}`),
        ' — the members below are the last list etcd gave; this router serves from its last state.',
      )
    : null;
  fill(
    el,
    banner,
    mixedNote(members),
    h(
      'div',
      { class: 'card fleet' },
      h(
        'h2',
        {},
        'Fleet ',
        h(
          'span',
          { class: 'muted' },
          `(${members.length} live member${members.length === 1 ? '' : 's'}; this router: ${last.id})`,
        ),
      ),
      table(
        ['member', 'version', 'config', 'listeners', 'started', 'last seen'],
        members.map((m) => row(m, self, data.now)),
        // Labelled lines under 40rem (style.css `table.stack`); the cells carry their own labels.
        { class: 'stack' },
      ),
    ),
  );
}
