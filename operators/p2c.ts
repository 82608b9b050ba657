/**
 * `p2c`: power of two random choices on active connections, weight-aware: two backends drawn
 * by weight, the one with the lower `active / weight` wins (ties: the first drawn). Weight counts
 * in the draw and in the comparison of loads, but an idle pool ties, so idle traffic follows the
 * weights exactly instead of favouring heavy backends twice.
 */
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import type { Pool } from './lib/pool.ts';
import { twoChoicesOperator } from './lib/two-choices.ts';

/** Load per unit of weight. */
function loadCost(pool: Pool, i: number, weight: number): number {
  return pool.states[i]!.active / weight;
}

/** The `p2c` operator factory (no options). */
export const p2c = {
  name: 'p2c',
  create: (_options: unknown, ctx: PluginContext): OperatorInstance => twoChoicesOperator(ctx, loadCost),
} satisfies OperatorFactory;
