// Policies view: the `policies:` rules of the running config in order (GET /ui/data carries them
// as GET /policies shows them): name, policy, point, when, selectors, how often each action was
// taken since start, and the keys a counting rule holds now.
import { fill, h, num, table } from './dom.js';

const selectors = (p) =>
  [p.products && `products: ${p.products.join(', ')}`, p.clusters && `clusters: ${p.clusters.join(', ')}`]
    .filter(Boolean)
    .join('; ');

const actions = (a) => {
  const entries = Object.entries(a ?? {});
  return entries.length === 0 ? '–' : entries.map(([k, n]) => `${k} ${num(n)}`).join(', ');
};

/** Renders the policies view into `el`. */
export function renderPolicies(el, data) {
  const rules = data.policies ?? [];
  // Rebuilt only when something shown changed.
  const shape = JSON.stringify(rules);
  if (el.dataset.shape === shape) return;
  el.dataset.shape = shape;
  if (rules.length === 0) {
    fill(el, h('p', { class: 'card muted' }, 'No policies: rules in this config.'));
    return;
  }
  const rows = rules.map((p) =>
    h(
      'tr',
      { dataset: { policy: p.name } },
      h('td', { class: 'mono' }, p.name),
      h('td', {}, p.use),
      h('td', {}, p.point),
      h('td', { class: 'mono' }, p.when ?? ''),
      h('td', {}, selectors(p)),
      h('td', { dataset: { actions: '' } }, actions(p.actions)),
      h('td', { dataset: { keys: '' } }, p.keys === undefined || p.keys === null ? '–' : num(p.keys)),
    ),
  );
  fill(
    el,
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Policies ', h('span', { class: 'muted' }, '(in order; counts since start)')),
      table(['Rule', 'Policy', 'Point', 'When', 'Selectors', 'Actions', 'Keys'], rows),
    ),
  );
}
