/**
 * `round-robin`: smooth weighted round robin inside the sub-cluster GSLB chose (weights 5,1,1
 * give exactly `a a b a c a a`). State is per sub-cluster snapshot; slow start applies.
 */
import type { BackendPicker } from '../src/gslb.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/plugin.ts';
import { memo, nowFor, operatorOf } from './lib/operator.ts';
import { type Pool, poolOf } from './lib/pool.ts';
import { swrrPick, swrrState } from './lib/swrr.ts';

/** The `round-robin` operator factory (no options). */
export const roundRobin = {
  name: 'round-robin',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const { registry } = ctx;
    const now = () => registry.now();
    const currents = new WeakMap<Pool, Float64Array>();
    const picker: BackendPicker = {
      pick(sub, _request, candidates, exclude) {
        const pool = poolOf(registry, sub);
        const slow = candidates.policy.slowStart;
        const i = swrrPick(pool, memo(currents, pool, swrrState), exclude, slow, nowFor(slow, now));
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
