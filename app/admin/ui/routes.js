// Routes view: the routing table as the address book reports it (`GET /routes`): for the bfe
// family, each product's hosts, basic rules and advanced rules with the config path the route
// explainer prints for them, then every cluster with its policy, sub-clusters and backends.
// Other books' tables are shown as JSON. The search box filters rows by their text.
import { expand, usesNamed } from './conditions.js';
import { dur, fill, h, stack, table } from './dom.js';

let query = '';
/** What the view shows now: the table (a new object per config version) and the query. */
let shown = { routes: undefined, query: undefined };

/** Wires the search box; `rerender` is called on input. */
export function setupRoutes(input, rerender) {
  input.addEventListener('input', () => {
    query = input.value.trim().toLowerCase();
    rerender();
  });
}

const matches = (...parts) => query === '' || parts.join(' ').toLowerCase().includes(query);

function productRows(name, p, named) {
  const rows = [];
  (p.hosts ?? []).forEach((host, i) => {
    rows.push(['host', `products.${name}.hosts[${i}]`, host, '']);
  });
  for (const [key, kind] of [
    ['vips', 'vip'],
    ['tags', 'tag'],
  ]) {
    if (Array.isArray(p[key])) {
      p[key].forEach((v, i) => {
        rows.push([kind, `products.${name}.${key}[${i}]`, String(v), '']);
      });
    }
  }
  (p.basicRules ?? []).forEach((r, i) => {
    const what = `hosts ${(r.hosts ?? ['(product hosts)']).join(', ')} paths ${(r.paths ?? ['*']).join(', ')}`;
    rows.push(['basic rule', `products.${name}.basicRules[${i}]`, what, r.cluster]);
  });
  (p.rules ?? []).forEach((r, i) => {
    const expanded = usesNamed(r.cond, named) ? expand(r.cond, named) : undefined;
    rows.push(['advanced rule', `products.${name}.rules[${i}]`, r.cond, r.cluster, expanded]);
  });
  return rows.filter((r) => matches(name, ...r));
}

function clusterRows(name, c) {
  const rows = [];
  for (const [sub, s] of Object.entries(c.subclusters ?? {})) {
    const backends = (s.backends ?? []).map(
      (b) => `${b.name && b.name !== b.address ? `${b.name}=` : ''}${b.address} w${b.weight ?? 1}`,
    );
    rows.push([sub, String(s.weight ?? ''), backends.join(', ')]);
  }
  const policy = [
    c.balance,
    `retries ${c.retries ?? 0}`,
    `crossRetries ${c.crossRetries ?? 0}`,
    c.slowStart ? `slow start ${dur(c.slowStart)}` : '',
    c.healthCheck
      ? `health ${c.healthCheck.type}${c.healthCheck.active ? ` every ${dur(c.healthCheck.interval)}` : ''}`
      : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const hit = matches(name, policy);
  return { policy, rows: rows.filter((r) => hit || matches(name, ...r)) };
}

/**
 * Where the routes serving now come from (GET /routes `book`, issue 45 item 6): the book, its
 * source, its own version and when it changed, the counts, the updates since start. '' when the
 * router does not say (an older router, a custom book).
 */
export function bookLine(book) {
  if (!book?.version) return '';
  const parts = [`${book.book ?? 'book'} routes from ${book.source ?? '?'}`, `version ${book.version}`];
  if (book.changedAt) parts.push(`changed ${new Date(book.changedAt).toLocaleString([], { hour12: false })}`);
  if (book.hosts !== undefined) {
    parts.push(`${book.hosts} hosts, ${book.products} products, ${book.clusters} clusters, ${book.backends} backends`);
  }
  if (book.updates !== undefined) parts.push(`${book.updates} updates since start`);
  return parts.join(' · ');
}

/** Renders the routing table into `el`. */
export function renderRoutes(el, routes) {
  if (shown.routes === routes && shown.query === query && el.childElementCount > 0) return;
  shown = { routes, query };
  if (routes === undefined || routes === null) {
    fill(el, h('p', { class: 'muted' }, 'The address book does not publish a routing table.'));
    return;
  }
  if (typeof routes !== 'object' || routes.products === undefined) {
    const lines = JSON.stringify(routes, null, 2)
      .split('\n')
      .filter((l) => matches(l));
    fill(el, h('pre', { class: 'card' }, lines.join('\n')));
    return;
  }
  const cards = [];
  if (routes.defaultProduct && matches('default product', routes.defaultProduct)) {
    cards.push(h('p', {}, 'default product: ', h('code', {}, routes.defaultProduct)));
  }
  for (const [name, p] of Object.entries(routes.products)) {
    const rows = productRows(name, p, routes.conditions);
    if (rows.length === 0) continue;
    cards.push(
      h(
        'div',
        { class: 'card', dataset: { product: name } },
        h('h2', {}, `product ${name}`),
        stack(
          table(
            ['kind', 'config path', 'match', 'cluster'],
            rows.map((r) =>
              h(
                'tr',
                {},
                h('td', {}, r[0]),
                h('td', { class: 'mono' }, r[1]),
                h(
                  'td',
                  { class: 'mono' },
                  r[2],
                  r[4] === undefined ? null : h('div', { class: 'expanded', dataset: { expanded: '' } }, `= ${r[4]}`),
                ),
                h('td', {}, r[3]),
              ),
            ),
          ),
        ),
      ),
    );
  }
  const named = Object.entries(routes.conditions ?? {}).filter(([k, v]) => matches(`$${k}`, v));
  if (named.length > 0) {
    cards.push(
      h(
        'div',
        { class: 'card', dataset: { conditions: '' } },
        h('h2', {}, 'named conditions'),
        stack(
          table(
            ['name', 'condition', 'expanded'],
            named.map(([k, v]) =>
              h(
                'tr',
                { dataset: { condition: k } },
                h('td', { class: 'mono' }, `$${k}`),
                h('td', { class: 'mono' }, v),
                h('td', { class: 'mono' }, usesNamed(v, routes.conditions) ? expand(v, routes.conditions) : '–'),
              ),
            ),
          ),
        ),
      ),
    );
  }
  for (const [name, c] of Object.entries(routes.clusters ?? {})) {
    const { policy, rows } = clusterRows(name, c);
    if (rows.length === 0) continue;
    cards.push(
      h(
        'div',
        { class: 'card', dataset: { routeCluster: name } },
        h('h2', {}, `cluster ${name} `, h('span', { class: 'muted' }, policy)),
        stack(
          table(
            ['sub-cluster', 'weight', 'backends'],
            rows.map((r) => h('tr', {}, h('td', {}, r[0]), h('td', {}, r[1]), h('td', { class: 'mono' }, r[2]))),
          ),
        ),
      ),
    );
  }
  if (cards.length === 0) cards.push(h('p', { class: 'muted' }, `Nothing matches “${query}”.`));
  fill(el, cards);
}
