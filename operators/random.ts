/**
 * `random`: weighted random choice inside the sub-cluster GSLB chose (Switchboard classic),
 * from the injected random source so tests can assert exact sequences. Slow start applies.
 */
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import { poolOperator } from './lib/operator.ts';
import { weightedRandomPick } from './lib/weighted-random.ts';

/** The `random` operator factory (no options). */
export const random = {
  name: 'random',
  create: (_options: unknown, ctx: PluginContext): OperatorInstance =>
    poolOperator(ctx, (pool, exclude, slow, now) => weightedRandomPick(pool, exclude, slow, now, ctx.random)),
} satisfies OperatorFactory;
