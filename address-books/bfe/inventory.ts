/**
 * What a bfe routing table holds, by name (`RoutesInventory`, src/contracts/types.ts): the
 * host patterns of every product (hosts and host tags), the products, the clusters and each
 * backend address once. Counted in the runtime's `routes updated` line, compared at debug.
 * Computed once per snapshot (kept beside it) and only when asked: never on the request path.
 */
import type { RoutesInventory } from '../../src/contracts/types.ts';
import type { RoutingTable } from './routing-table.ts';

const kept = new WeakMap<RoutingTable, RoutesInventory>();

/** The inventory of `table` (the same object for the same table). */
export function tableInventory(table: RoutingTable): RoutesInventory {
  const known = kept.get(table);
  if (known !== undefined) return known;
  const hosts = new Set<string>();
  for (const product of Object.values(table.products)) {
    for (const h of product.hosts ?? []) hosts.add(h);
    for (const tagged of Object.values(product.hostTags ?? {})) for (const h of tagged) hosts.add(h);
  }
  const backends = new Set<string>();
  for (const cluster of Object.values(table.clusters)) {
    for (const sub of Object.values(cluster.subclusters)) for (const b of sub.backends) backends.add(b.address);
  }
  const inventory = Object.freeze({
    hosts: [...hosts],
    products: Object.keys(table.products),
    clusters: Object.keys(table.clusters),
    backends: [...backends],
  });
  kept.set(table, inventory);
  return inventory;
}
