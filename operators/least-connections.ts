/**
 * `least-connections`: weighted least active connections (registry `active`) inside the
 * sub-cluster GSLB chose; ties go to smooth WRR over the tied backends. Slow start applies.
 */
import type { BackendPicker } from '../src/gslb.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/plugin.ts';
import { memo, nowFor, operatorOf } from './lib/operator.ts';
import { type Pool, poolOf } from './lib/pool.ts';
import { swrrState } from './lib/swrr.ts';
import { wlcPick } from './lib/wlc.ts';

/** The `least-connections` operator factory (no options). */
export const leastConnections = {
  name: 'least-connections',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const { registry } = ctx;
    const now = () => registry.now();
    const currents = new WeakMap<Pool, Float64Array>();
    const picker: BackendPicker = {
      pick(sub, _request, candidates, exclude) {
        const pool = poolOf(registry, sub);
        const slow = candidates.policy.slowStart;
        const i = wlcPick(pool, memo(currents, pool, swrrState), exclude, slow, nowFor(slow, now));
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
