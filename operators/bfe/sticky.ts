/**
 * BFE's weighted-hash sticky mode (`stickyBalance`, reference bfe.md §6). Not consistent
 * hashing: any change in membership or availability remaps many keys.
 *
 * 1. The pool's backends are ordered by id (`addr:port`, string order) once per pool.
 * 2. A pick sums BFE's internal weights (configured weight × 100) of the eligible backends,
 *    takes `v = murmur3_h1(key) % Σ` (random when the key is empty) and walks the ordered
 *    eligible backends subtracting weights until `v` drops below zero.
 * 3. Slow start does not apply (as in BFE).
 */

import type { Random } from '../../src/base/random.ts';
import { hashBucket } from '../../src/routing/gslb.ts';
import { eligible, type Pool } from '../lib/pool.ts';

/** The pool's indices ordered by backend id. */
export function stickyOrder(pool: Pool): Int32Array {
  const order = Int32Array.from(pool.backends.keys());
  const ids = pool.backends.map((b) => b.id);
  return order.sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
}

/** BFE's internal weight of backend `i`. */
function internalWeight(pool: Pool, i: number): number {
  return Math.round(pool.weights[i]! * 100);
}

/** The sticky pick for `key` over `pool`; -1 when no backend is eligible. */
export function stickyPick(
  pool: Pool,
  order: Int32Array,
  key: Uint8Array | undefined,
  exclude: ReadonlySet<string>,
  random: Random,
): number {
  let total = 0;
  for (const i of order) if (eligible(pool, i, exclude)) total += internalWeight(pool, i);
  if (total <= 0) return -1;
  let v = hashBucket(key, total, random);
  for (const i of order) {
    if (!eligible(pool, i, exclude)) continue;
    v -= internalWeight(pool, i);
    if (v < 0) return i;
  }
  return -1;
}
