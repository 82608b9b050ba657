/**
 * `first-up`: an operator that sends every request to the first backend listed that may take it
 * (a primary and its standbys, in order). `poolOperator` does the rest the way every built-in
 * operator does: GSLB picks the sub-cluster, and a backend that is down, drained, disabled, at
 * weight 0 or already failed for this request is not eligible.
 */
import { eligible, type OperatorFactory, type PluginContext, poolOperator } from 'switchboard/plugin';

export default {
  name: 'first-up',
  create: (_options: unknown, ctx: PluginContext) =>
    poolOperator(ctx, (pool, exclude) => {
      for (let i = 0; i < pool.backends.length; i++) if (eligible(pool, i, exclude)) return i;
      return -1;
    }),
} satisfies OperatorFactory;
