/**
 * `round-robin`: smooth weighted round robin inside the sub-cluster GSLB chose (weights 5,1,1
 * give exactly `a a b a c a a`). State is per sub-cluster snapshot; slow start applies.
 */
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import { memo, poolOperator } from './lib/operator.ts';
import type { Pool } from './lib/pool.ts';
import { swrrPick, swrrState } from './lib/swrr.ts';

/** The `round-robin` operator factory (no options). */
export const roundRobin = {
  name: 'round-robin',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const currents = new WeakMap<Pool, Float64Array>();
    return poolOperator(ctx, (pool, exclude, slow, now) =>
      swrrPick(pool, memo(currents, pool, swrrState), exclude, slow, now),
    );
  },
} satisfies OperatorFactory;
