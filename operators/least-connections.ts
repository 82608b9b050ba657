/**
 * `least-connections`: weighted least active connections (registry `active`) inside the
 * sub-cluster GSLB chose; ties go to smooth WRR over the tied backends. Slow start applies.
 */
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import { memo, poolOperator } from './lib/operator.ts';
import type { Pool } from './lib/pool.ts';
import { swrrState } from './lib/swrr.ts';
import { wlcPick } from './lib/wlc.ts';

/** The `least-connections` operator factory (no options). */
export const leastConnections = {
  name: 'least-connections',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const currents = new WeakMap<Pool, Float64Array>();
    return poolOperator(ctx, (pool, exclude, slow, now) =>
      wlcPick(pool, memo(currents, pool, swrrState), exclude, slow, now),
    );
  },
} satisfies OperatorFactory;
