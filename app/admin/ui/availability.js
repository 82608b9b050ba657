// Availability at a glance (HAProxy's stats page colours a backend with no server left): for each
// cluster and sub-cluster, how many backends can take traffic now out of how many it lists, and
// the warning when none is left. Pure functions over the rows backends.js groups; no DOM.
//
// A backend counts as available in a cluster when that cluster's verdict says so (health judged
// per cluster, and not drained or disabled: the registry's `available`) and its weight there is
// not 0 (an admin weight of 0 takes it out of rotation too).

/** Whether one row (`{ b, c }`: the backend and its record for this cluster) can take traffic. */
export function isAvailable({ b, c }) {
  const available = c.available ?? b.available;
  const weight = c.weight ?? b.weight;
  return available === true && (weight === null || weight === undefined || weight > 0);
}

/** `{ available, total }` of a list of rows. */
export function countOf(rows) {
  let available = 0;
  for (const r of rows) if (isAvailable(r)) available++;
  return { available, total: rows.length };
}

/**
 * The config paths of the rules that send requests to `cluster` (bfe routing table), so the
 * warning can say which traffic fails: `products.web.rules[1]`.
 */
export function rulesTo(routes, cluster) {
  const out = [];
  for (const [name, p] of Object.entries(routes?.products ?? {})) {
    (p.basicRules ?? []).forEach((r, i) => {
      if (r.cluster === cluster) out.push(`products.${name}.basicRules[${i}]`);
    });
    (p.rules ?? []).forEach((r, i) => {
      if (r.cluster === cluster) out.push(`products.${name}.rules[${i}]`);
    });
  }
  return out;
}

/**
 * The warnings for `grouped` (cluster → sub-cluster → rows): one per cluster with no backend left,
 * and one per sub-cluster with none left in a cluster that still has some.
 * `[{ cluster, subcluster?, text }]`.
 */
export function warnings(grouped, routes) {
  const out = [];
  for (const [cluster, subs] of grouped) {
    const all = [...subs.values()].flat();
    const { available, total } = countOf(all);
    if (available === 0) {
      const rules = rulesTo(routes, cluster);
      const via = rules.length > 0 ? ` (${rules.join(', ')})` : '';
      out.push({
        cluster,
        text: `cluster ${cluster}: no backend available (0 of ${total}): every request routed to it${via} is answered 503`,
      });
      continue;
    }
    for (const [sub, rows] of subs) {
      if (sub === '' || countOf(rows).available > 0) continue;
      out.push({
        cluster,
        subcluster: sub,
        text: `cluster ${cluster}, sub-cluster ${sub}: no backend available (0 of ${rows.length}): the requests its weight draws are answered 503 unless the cluster's crossRetries send them to another sub-cluster`,
      });
    }
  }
  return out;
}
