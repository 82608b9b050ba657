/**
 * `ewma`: peak-EWMA latency balancing (Finagle/Linkerd PeakEwma, adapted to connect latency):
 * two backends drawn by weight, the one with the lower `latencyEwma × (active + 1) / weight` wins
 * (ties: the first drawn). The registry's `latencyEwma` jumps up on a slow connect and decays on
 * fast ones, so a backend that turns slow is avoided at once. An unmeasured backend (latency 0)
 * costs 0, so it is tried early and gets measured; a pool with no samples follows the weights.
 */
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import type { Pool } from './lib/pool.ts';
import { twoChoicesOperator } from './lib/two-choices.ts';

/** Expected wait: latency times the queue it would join, per unit of weight. */
function latencyCost(pool: Pool, i: number, weight: number): number {
  const s = pool.states[i]!;
  return (s.latencyEwma * (s.active + 1)) / weight;
}

/** The `ewma` operator factory (no options). */
export const ewma = {
  name: 'ewma',
  create: (_options: unknown, ctx: PluginContext): OperatorInstance => twoChoicesOperator(ctx, latencyCost),
} satisfies OperatorFactory;
