/**
 * Weighted random choice over a pool's eligible backends: draw `r` in [0, Σw) from the injected
 * source, then walk the eligible backends subtracting weights. One draw per pick, no allocation.
 */
import type { Random } from '../../src/base/random.ts';
import { eligible, type Pool, weightOf } from './pool.ts';

/**
 * One weighted-random index of `pool`, skipping `skip` (-1 for none) and ineligible backends;
 * -1 when none is left.
 */
export function weightedRandomPick(
  pool: Pool,
  exclude: ReadonlySet<string>,
  slowStartMs: number,
  now: number,
  random: Random,
  skip = -1,
): number {
  const n = pool.backends.length;
  let total = 0;
  let last = -1;
  for (let i = 0; i < n; i++) {
    if (i === skip || !eligible(pool, i, exclude)) continue;
    total += weightOf(pool, i, slowStartMs, now);
    last = i;
  }
  if (last < 0) return -1;
  let r = random() * total;
  for (let i = 0; i < n; i++) {
    if (i === skip || !eligible(pool, i, exclude)) continue;
    r -= weightOf(pool, i, slowStartMs, now);
    if (r < 0) return i;
  }
  return last;
}
