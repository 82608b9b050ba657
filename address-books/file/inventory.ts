/**
 * What a classic host → backends list holds, by name (`RoutesInventory`,
 * src/contracts/types.ts), from its matcher's candidates: each entry's host (its product), its
 * `host+path` cluster, and each backend once. For the `file` book and the sqlite book's
 * classic model; made once per matcher, when asked.
 */
import type { RoutesInventory } from '../../src/contracts/types.ts';
import type { FileMatcher } from './matcher.ts';

const kept = new WeakMap<FileMatcher, RoutesInventory>();

/** The inventory of the list `matcher` was built from (the same object for the same matcher). */
export function matcherInventory(matcher: FileMatcher): RoutesInventory {
  const known = kept.get(matcher);
  if (known !== undefined) return known;
  const hosts = new Set<string>();
  const clusters: string[] = [];
  const backends = new Set<string>();
  for (const c of matcher.all) {
    hosts.add(c.product);
    clusters.push(c.cluster);
    for (const s of c.subclusters) for (const b of s.backends) backends.add(b.id);
  }
  const inventory = Object.freeze({ hosts: [...hosts], products: [...hosts], clusters, backends: [...backends] });
  kept.set(matcher, inventory);
  return inventory;
}
