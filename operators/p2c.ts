/**
 * `p2c`: power of two random choices on active connections, weight-aware: two backends drawn
 * by weight, the one with the lower `(active + 1) / weight` wins (ties: the first drawn).
 */
import type { BackendPicker } from '../src/gslb.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/plugin.ts';
import { nowFor, operatorOf } from './lib/operator.ts';
import { type Pool, poolOf } from './lib/pool.ts';
import { twoChoicesPick } from './lib/two-choices.ts';

/** Load per unit of weight, counting the request about to be sent. */
function loadCost(pool: Pool, i: number, weight: number): number {
  return (pool.states[i]!.active + 1) / weight;
}

/** The `p2c` operator factory (no options). */
export const p2c = {
  name: 'p2c',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const { registry } = ctx;
    const now = () => registry.now();
    const picker: BackendPicker = {
      pick(sub, _request, candidates, exclude) {
        const pool = poolOf(registry, sub);
        const slow = candidates.policy.slowStart;
        const i = twoChoicesPick(pool, exclude, slow, nowFor(slow, now), ctx.random, loadCost);
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
