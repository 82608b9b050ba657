/**
 * Weighted least connections (BFE's WlcSmooth, reference bfe.md §6):
 *
 * 1. Among the eligible backends find the least `active / weight`, compared by cross-multiplying
 *    (`a.active × b.weight − b.active × a.weight`) so no division is needed.
 * 2. A single winner is returned; a tie is broken by smooth WRR over the tied set only.
 * 3. Unlike BFE, the tied list is reset whenever a strictly better backend appears, so a later
 *    tie with the new best never leaves the new best out (BFE's stale-list quirk, fixed).
 */
import { eligible, type Pool, weightOf } from './pool.ts';
import { swrrAmong } from './swrr.ts';

// Shared scratch for the tied indices: picks are synchronous, so one buffer serves all.
let ties = new Int32Array(64);

/** One WLC pick over `pool` with SWRR state `current` for ties; -1 when none is eligible. */
export function wlcPick(
  pool: Pool,
  current: Float64Array,
  exclude: ReadonlySet<string>,
  slowStartMs: number,
  now: number,
): number {
  const n = pool.backends.length;
  if (ties.length < n) ties = new Int32Array(n);
  let count = 0;
  let bestActive = 0;
  let bestWeight = 0;
  for (let i = 0; i < n; i++) {
    if (!eligible(pool, i, exclude)) continue;
    const w = weightOf(pool, i, slowStartMs, now);
    const a = pool.states[i]!.active;
    const cmp = count === 0 ? 1 : bestActive * w - a * bestWeight;
    if (cmp > 0) {
      bestActive = a;
      bestWeight = w;
      count = 0;
      ties[count++] = i;
    } else if (cmp === 0) {
      ties[count++] = i;
    }
  }
  if (count === 0) return -1;
  if (count === 1) return ties[0]!;
  return swrrAmong(pool, current, ties, count, slowStartMs, now);
}
