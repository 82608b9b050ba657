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
 */
import type { ConcurrencyCounter, PolicyCounters, RateCounter, RateSpec } from '../contracts/policy.ts';
import { LocalConcurrency } from './concurrency.ts';
import { GcraCounter } from './gcra.ts';

/** A source of counters for one snapshot. */
export interface CounterStore {
  rate(key: string, spec: RateSpec): RateCounter;
  concurrency(key: string, max: number): ConcurrencyCounter;
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

/** The counters one rule sees: the store's, under the rule's identity. */
export function ruleCounters(store: CounterStore, identity: string): PolicyCounters {
  return {
    rate: (spec) => store.rate(identity, spec),
    concurrency: (max) => store.concurrency(identity, max),
  };
}
