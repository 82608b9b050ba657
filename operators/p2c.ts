/**
 * `p2c`: power of two random choices on active connections, weight-aware: two backends drawn
 * by weight, the one with the lower `active / weight` wins (ties: the first drawn). Weight counts
 * in the draw and in the comparison of loads, but an idle pool ties, so idle traffic follows the
 * weights exactly instead of favouring heavy backends twice.
 */
import type { BackendPicker } from '../src/gslb.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/plugin.ts';
import { nowFor, operatorOf } from './lib/operator.ts';
import { type Pool, poolOf } from './lib/pool.ts';
import { twoChoicesPick } from './lib/two-choices.ts';

/** Load per unit of weight. */
function loadCost(pool: Pool, i: number, weight: number): number {
  return pool.states[i]!.active / weight;
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
