/**
 * The `bfe` operator (the default): BFE's GSLB then the cluster's `balance` inside the chosen
 * sub-cluster — `wrr` (smooth WRR), `wlc` (weighted least connections, SWRR tie-break) or
 * `sticky` (weighted hash of the GSLB hash key). See README.md beside this file.
 */

import type { OperatorFactory, OperatorInstance, PluginContext } from '../../src/contracts/plugin.ts';
import { type BackendPicker, hashKey } from '../../src/routing/gslb.ts';
import { memo, nowFor, operatorOf } from '../lib/operator.ts';
import { type Pool, poolOf } from '../lib/pool.ts';
import { swrrPick, swrrState } from '../lib/swrr.ts';
import { wlcPick } from '../lib/wlc.ts';
import { stickyOrder, stickyPick } from './sticky.ts';

/** The `bfe` operator factory (no options; the algorithm is per cluster: `policy.balance`). */
export const bfe = {
  name: 'bfe',
  create(_options: unknown, ctx: PluginContext): OperatorInstance {
    const { registry } = ctx;
    const now = () => registry.now();
    // WRR and WLC share the SWRR `current` values, as BFE's BalanceRR does.
    const currents = new WeakMap<Pool, Float64Array>();
    const orders = new WeakMap<Pool, Int32Array>();
    const picker: BackendPicker = {
      pick(sub, request, candidates, exclude) {
        const pool = poolOf(registry, sub, candidates.cluster);
        const policy = candidates.policy;
        let i: number;
        if (policy.balance === 'sticky') {
          i = stickyPick(pool, memo(orders, pool, stickyOrder), hashKey(request, policy.hash), exclude, ctx.random);
        } else {
          const slow = policy.slowStart;
          const pick = policy.balance === 'wlc' ? wlcPick : swrrPick;
          i = pick(pool, memo(currents, pool, swrrState), exclude, slow, nowFor(slow, now));
        }
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
