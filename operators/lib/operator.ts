/**
 * Glue shared by the built-in operators: every `findJack` is the shared GSLB step (`balance`,
 * src/gslb.ts) around the operator's own picker, and per-pool algorithm state is memoised in a
 * WeakMap so it lives exactly as long as its snapshot.
 */
import { type BackendPicker, balance } from '../../src/gslb.ts';
import type { OperatorInstance } from '../../src/plugin.ts';
import type { Random } from '../../src/random.ts';
import type { Attempt, Candidates, Jack, Refusal, Request } from '../../src/types.ts';
import type { Pool } from './pool.ts';

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
