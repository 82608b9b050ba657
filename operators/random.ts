/**
 * `random`: weighted random choice inside the sub-cluster GSLB chose (Switchboard classic),
 * from the injected random source so tests can assert exact sequences. Slow start applies.
 */
import type { BackendPicker } from '../src/gslb.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/plugin.ts';
import { nowFor, operatorOf } from './lib/operator.ts';
import { poolOf } from './lib/pool.ts';
import { weightedRandomPick } from './lib/weighted-random.ts';

/** The `random` operator factory (no options). */
export const random = {
  name: 'random',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const { registry } = ctx;
    const now = () => registry.now();
    const picker: BackendPicker = {
      pick(sub, _request, candidates, exclude) {
        const pool = poolOf(registry, sub);
        const slow = candidates.policy.slowStart;
        const i = weightedRandomPick(pool, exclude, slow, nowFor(slow, now), ctx.random);
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
