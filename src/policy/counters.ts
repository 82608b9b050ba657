/**
 * Where the rule set's counters live, kept by rule identity across reloads.
 *
 * 1. A `CounterStore` hands out counters by key (`<kind> <rule identity> <spec>`). A rule
 *    asks through its `PolicyCounters` (contracts/policy.ts), which adds its identity.
 * 2. `next()` makes the store of the next snapshot: a counter asked for again under the same
 *    key is the very same object (its TATs and held slots carry over, so a reload hands out no
 *    fresh burst and a request in flight across it releases into the count it took); a counter
 *    nobody asks for again is dropped with the old snapshot.
 * 3. `LocalCounters` counts in one thread. `SharedCounters` (shared-counters.ts) is the same
 *    interface over a SharedArrayBuffer, for the worker panel: every thread counts once for the
 *    process.
 * 4. A rule with `scope: fleet` (issue 43) counts in the fleet store instead (app/fleet/
 *    limits-store.ts, handed in as `CompileOptions.fleetCounters`, paired with the local one in
 *    `ScopedCounters`); without one (no `fleet.redis`) the rule is refused, naming it.
 */
import { SwitchboardError } from '../base/errors.ts';
import type { ConcurrencyCounter, CounterScope, PolicyCounters, RateCounter, RateSpec } from '../contracts/policy.ts';
import { LocalConcurrency } from './concurrency.ts';
import { GcraCounter } from './gcra.ts';

/** A source of counters for one snapshot (`scope` matters to the fleet store only). */
export interface CounterStore {
  rate(key: string, spec: RateSpec, scope?: CounterScope): RateCounter;
  concurrency(key: string, max: number, scope?: CounterScope): ConcurrencyCounter;
  /** The store of the next snapshot, carrying over the counters asked for again. */
  next(): CounterStore;
  /** Called when the snapshot is compiled: forget the previous snapshot's counters. */
  seal(): void;
  /** Every counter of this snapshot by key (metrics: key-table sizes). */
  entries(): Iterable<readonly [string, RateCounter | ConcurrencyCounter]>;
}

/** Counters in this thread. */
export class LocalCounters implements CounterStore {
  readonly #kept = new Map<string, GcraCounter | LocalConcurrency>();
  #previous: ReadonlyMap<string, GcraCounter | LocalConcurrency> | undefined;

  constructor(previous?: ReadonlyMap<string, GcraCounter | LocalConcurrency>) {
    this.#previous = previous;
  }

  rate(key: string, spec: RateSpec): RateCounter {
    const id = `rate ${key} ${spec.rate}/${spec.per} ${spec.burst} ${spec.maxKeys}`;
    const found = this.#find(id);
    const counter = found instanceof GcraCounter ? found : new GcraCounter(spec);
    this.#kept.set(id, counter);
    return counter;
  }

  concurrency(key: string, max: number): ConcurrencyCounter {
    const id = `concurrency ${key} ${max}`;
    const found = this.#find(id);
    const counter = found instanceof LocalConcurrency ? found : new LocalConcurrency(max);
    this.#kept.set(id, counter);
    return counter;
  }

  next(): LocalCounters {
    return new LocalCounters(this.#kept);
  }

  seal(): void {
    this.#previous = undefined;
  }

  entries(): Iterable<readonly [string, RateCounter | ConcurrencyCounter]> {
    return this.#kept.entries();
  }

  #find(id: string): GcraCounter | LocalConcurrency | undefined {
    return this.#kept.get(id) ?? this.#previous?.get(id);
  }
}

/**
 * Step 4: a snapshot's counters when the fleet store is there: `scope: fleet` counters from
 * `fleet`, the rest from `local`; `entries()` lists both (key tables, explain).
 */
export class ScopedCounters implements CounterStore {
  readonly local: CounterStore;
  readonly fleet: CounterStore;

  constructor(local: CounterStore, fleet: CounterStore) {
    this.local = local;
    this.fleet = fleet;
  }

  rate(key: string, spec: RateSpec, scope?: CounterScope): RateCounter {
    return scope?.scope === 'fleet' ? this.fleet.rate(key, spec, scope) : this.local.rate(key, spec);
  }

  concurrency(key: string, max: number, scope?: CounterScope): ConcurrencyCounter {
    return scope?.scope === 'fleet' ? this.fleet.concurrency(key, max, scope) : this.local.concurrency(key, max);
  }

  next(): ScopedCounters {
    return new ScopedCounters(this.local.next(), this.fleet.next());
  }

  seal(): void {
    this.local.seal();
    this.fleet.seal();
  }

  *entries(): Iterable<readonly [string, RateCounter | ConcurrencyCounter]> {
    yield* this.local.entries();
    yield* this.fleet.entries();
  }
}

/**
 * The counters one rule sees: the store's, under the rule's identity; a `scope: fleet` counter
 * needs the fleet store (step 4), else the rule is refused.
 */
export function ruleCounters(store: CounterStore, identity: string): PolicyCounters {
  const check = (scope: CounterScope | undefined): void => {
    if (scope?.scope === 'fleet' && !(store instanceof ScopedCounters))
      throw new SwitchboardError('SWB_ERR_CONFIG', "scope: fleet needs fleet.redis (the fleet's shared counters)");
  };
  return {
    rate: (spec, scope) => {
      check(scope);
      return store.rate(identity, spec, scope);
    },
    concurrency: (max, scope) => {
      check(scope);
      return store.concurrency(identity, max, scope);
    },
  };
}
