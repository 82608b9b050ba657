/**
 * Smooth weighted round robin (nginx's SWRR, in BFE's form, reference bfe.md §6):
 *
 * 1. Each backend has `current`, initialised to its weight.
 * 2. A pick walks the eligible backends in order: the one with the strictly greatest `current`
 *    wins (ties: the earliest), every eligible `current` is summed into `total`, then raised by
 *    the backend's weight.
 * 3. The winner's `current` drops by `total`. Ineligible backends are skipped and frozen.
 *
 * Weights {a:5, b:1, c:1} give `a a b a c a a`; BFE's 3/2/1 give `b1 b2 b1 b3 b2 b1 b1 b2 b1`.
 * The same routine breaks WLC ties over a subset of indices (`swrrAmong`).
 */
import { eligible, type Pool, weightOf } from './pool.ts';

/** SWRR state of one pool: the `current` of each backend. */
export function swrrState(pool: Pool): Float64Array {
  return Float64Array.from(pool.weights);
}

/** One SWRR pick over the eligible backends of `pool`; -1 when none is eligible. */
export function swrrPick(
  pool: Pool,
  current: Float64Array,
  exclude: ReadonlySet<string>,
  slowStartMs: number,
  now: number,
): number {
  let best = -1;
  let max = 0;
  let total = 0;
  for (let i = 0; i < pool.backends.length; i++) {
    if (!eligible(pool, i, exclude)) continue;
    const c = current[i]!;
    if (best < 0 || c > max) {
      best = i;
      max = c;
    }
    total += c;
    current[i] = c + weightOf(pool, i, slowStartMs, now);
  }
  if (best >= 0) current[best] = current[best]! - total;
  return best;
}

/** One SWRR pick over `indices[0..count)` only (all assumed eligible). */
export function swrrAmong(
  pool: Pool,
  current: Float64Array,
  indices: Int32Array,
  count: number,
  slowStartMs: number,
  now: number,
): number {
  let best = -1;
  let max = 0;
  let total = 0;
  for (let k = 0; k < count; k++) {
    const i = indices[k]!;
    const c = current[i]!;
    if (best < 0 || c > max) {
      best = i;
      max = c;
    }
    total += c;
    current[i] = c + weightOf(pool, i, slowStartMs, now);
  }
  if (best >= 0) current[best] = current[best]! - total;
  return best;
}
