/**
 * Glue shared by the built-in operators: every `findJack` is the shared GSLB step (`balance`,
 * src/routing/gslb.ts) around the operator's own picker, and per-pool algorithm state is memoised in a
 * WeakMap so it lives exactly as long as its snapshot.
 */

import type { Random } from '../../src/base/random.ts';
import type { OperatorInstance, PluginContext } from '../../src/contracts/plugin.ts';
import type { Attempt, Candidates, Jack, Refusal, Request } from '../../src/contracts/types.ts';
import { type BackendPicker, balance } from '../../src/routing/gslb.ts';
import { type Pool, poolOf } from './pool.ts';

/** An operator whose `findJack` runs GSLB then `picker` inside the chosen sub-cluster. */
export function operatorOf(picker: BackendPicker, random: Random): OperatorInstance {
  return {
    findJack(request: Request, candidates: Candidates, attempt: Attempt): Jack | Refusal {
      return balance(picker, request, candidates, attempt, random);
    },
  };
}

/** The value cached for `pool` in `cache`, built by `build` on first use. */
export function memo<T>(cache: WeakMap<Pool, T>, pool: Pool, build: (pool: Pool) => T): T {
  let v = cache.get(pool);
  if (v === undefined) {
    v = build(pool);
    cache.set(pool, v);
  }
  return v;
}

/** The clock reading slow start needs: only read when the cluster ramps at all. */
export function nowFor(slowStartMs: number, now: () => number): number {
  return slowStartMs > 0 ? now() : 0;
}

/** An in-sub-cluster algorithm over a pool: the index of the chosen backend, -1 when none. */
export type PoolPick = (pool: Pool, exclude: ReadonlySet<string>, slowStartMs: number, now: number) => number;

/** An operator whose in-sub-cluster step is `pick` over the chosen sub-cluster's pool. */
export function poolOperator(ctx: PluginContext, pick: PoolPick): OperatorInstance {
  const { registry } = ctx;
  const now = () => registry.now();
  const picker: BackendPicker = {
    pick(sub, _request, candidates, exclude) {
      const pool = poolOf(registry, sub, candidates.cluster);
      const slow = candidates.policy.slowStart;
      const i = pick(pool, exclude, slow, nowFor(slow, now));
      return i < 0 ? undefined : pool.jacks[i];
    },
  };
  return operatorOf(picker, ctx.random);
}
