/**
 * Power of two random choices (Mitzenmacher; HAProxy `random(2)`, Envoy LEAST_REQUEST): draw two
 * distinct eligible backends weighted-randomly, keep the one with the lower cost. Drawing by
 * weight makes an idle pool (equal costs, the first draw wins) follow the weights exactly in
 * expectation; under load the cost steers traffic away from busy or slow backends.
 */

import type { Random } from '../../src/base/random.ts';
import type { OperatorInstance, PluginContext } from '../../src/contracts/plugin.ts';
import { poolOperator } from './operator.ts';
import { type Pool, weightOf } from './pool.ts';
import { weightedRandomPick } from './weighted-random.ts';

/** The cost of backend `i` of `pool` with current weight `weight`; lower wins. */
export type Cost = (pool: Pool, i: number, weight: number) => number;

/** One two-choices pick; -1 when no backend is eligible. */
export function twoChoicesPick(
  pool: Pool,
  exclude: ReadonlySet<string>,
  slowStartMs: number,
  now: number,
  random: Random,
  cost: Cost,
): number {
  const a = weightedRandomPick(pool, exclude, slowStartMs, now, random);
  if (a < 0) return a;
  const b = weightedRandomPick(pool, exclude, slowStartMs, now, random, a);
  if (b < 0) return a;
  const ca = cost(pool, a, weightOf(pool, a, slowStartMs, now));
  const cb = cost(pool, b, weightOf(pool, b, slowStartMs, now));
  return cb < ca ? b : a;
}

/** An operator that picks by two choices under `cost` (shared by `p2c` and `ewma`). */
export function twoChoicesOperator(ctx: PluginContext, cost: Cost): OperatorInstance {
  return poolOperator(ctx, (pool, exclude, slow, now) => twoChoicesPick(pool, exclude, slow, now, ctx.random, cost));
}
