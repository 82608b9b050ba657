/**
 * A weighted hash ring (ketama-style) with bounded loads (Mirrokni et al., HAProxy
 * `hash-balance-factor`):
 *
 *   0 ──●a──●c────●b──●a───●c──●b──── 2^32   each backend owns ≈ points × weight / mean weight
 *             ▲ key hash: walk clockwise to the first point whose backend can take it
 *
 * 1. Built once per pool: point k of backend `id` sits at murmur3_h1(`id#k`)'s top 32 bits;
 *    points are sorted into a Uint32Array with their owners in an Int32Array.
 * 2. A lookup binary-searches the first point ≥ the key's position (wrapping to 0).
 * 3. Walking on, it skips backends that are down, excluded or — with bounded load — already at
 *    capacity `ceil(balanceFactor × (Σ active + 1) × weight / Σ weight)` over eligible backends.
 *    Some eligible backend is always under capacity, so the walk ends.
 */
import { murmur3First64 } from '../../src/base/murmur3.ts';
import { eligible, type Pool } from './pool.ts';

/** The sorted points of one pool. */
export interface Ring {
  readonly points: Uint32Array;
  readonly owners: Int32Array;
}

/** Builds the ring of `pool` with `replicas` points for a backend of mean weight. */
export function buildRing(pool: Pool, replicas: number): Ring {
  const n = pool.backends.length;
  let positive = 0;
  for (let i = 0; i < n; i++) if (pool.weights[i]! > 0) positive++;
  const mean = positive === 0 ? 1 : pool.totalWeight / positive;
  const entries: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    const w = pool.weights[i]!;
    if (w <= 0) continue;
    const count = Math.max(1, Math.round((replicas * w) / mean));
    const id = pool.backends[i]!.id;
    for (let k = 0; k < count; k++) entries.push([murmur3First64(Buffer.from(`${id}#${k}`))[0], i]);
  }
  // Equal positions: order by owner so the ring does not depend on insertion order.
  entries.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return { points: Uint32Array.from(entries, (e) => e[0]), owners: Int32Array.from(entries, (e) => e[1]) };
}

/** Index of the first point ≥ `position`, wrapping to 0. */
function firstAtOrAfter(points: Uint32Array, position: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (points[mid]! < position) lo = mid + 1;
    else hi = mid;
  }
  return lo === points.length ? 0 : lo;
}

/**
 * The backend index for ring position `position`; `balanceFactor` ≤ 0 turns bounded load off.
 * -1 when no backend is eligible.
 */
export function ringPick(
  pool: Pool,
  ring: Ring,
  position: number,
  exclude: ReadonlySet<string>,
  balanceFactor: number,
): number {
  const { points, owners } = ring;
  if (points.length === 0) return -1;
  let activeSum = 0;
  let weightSum = 0;
  if (balanceFactor > 0) {
    for (let i = 0; i < pool.backends.length; i++) {
      if (!eligible(pool, i, exclude)) continue;
      activeSum += pool.states[i]!.active;
      weightSum += pool.weights[i]!;
    }
  }
  const start = firstAtOrAfter(points, position);
  let fallback = -1;
  for (let k = 0; k < points.length; k++) {
    const i = owners[(start + k) % points.length]!;
    if (!eligible(pool, i, exclude)) continue;
    if (balanceFactor <= 0) return i;
    if (fallback < 0) fallback = i;
    const capacity = Math.ceil((balanceFactor * (activeSum + 1) * pool.weights[i]!) / weightSum);
    if (pool.states[i]!.active < capacity) return i;
  }
  return fallback;
}
