/**
 * The `policies:` of an engine (issue 42): checked with the config, compiled once per config
 * version on the counters of the set it replaces, started with the engine, closed with it.
 *
 * 1. `policyErrors` (config load, so check, start and reload alike): every rule compiles (its
 *    `use:`, options, `when:`, point), on throwaway counters; a rule at a point the panels do
 *    not enforce yet is refused, one line naming it. Nothing is silently ignored.
 * 2. `compileEnginePolicies`: the counters come from `PolicyCounting`: this thread's own
 *    (`localCounting`, the previous set's store's `next()`), or a store shared by the worker
 *    panel's threads (`sharedCounting` on the main thread, `attachedCounting` in a thread), so
 *    an unchanged rule keeps its state across a reload (no fresh burst).
 * 3. A shared store too small for the snapshot (`full`) is replaced on the main thread by one
 *    of twice what it needs, and the rules compiled again on it (each rule starts afresh once);
 *    the threads attach to the state the panel posts with the snapshot.
 * 4. With `fleet.redis`, `scope: fleet` rules count in the fleet store (`PolicyCounting.fleet`,
 *    made by app/start.ts); without it they are refused at load, naming the rule, and so they
 *    are on the worker panel for now (docs/fleet.md "Limits").
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import type { Logger } from '../../src/base/log.ts';
import type { Config } from '../../src/config/schema.ts';
import type { AnyPolicyFactory } from '../../src/contracts/policy.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import {
  type CounterStore,
  compilePolicies,
  LocalCounters,
  type PolicySet,
  SharedCounters,
  type SharedCountersState,
} from '../../src/policy/index.ts';

/** The smallest shared store made when one fills up. */
const MIN_SHARED_BYTES = 1024 * 1024;

/** Where an engine's counters come from. */
export interface PolicyCounting {
  /** The store a new config version compiles on, given the set it replaces. */
  store(previous: PolicySet | undefined): CounterStore;
  /** Replace a shared store that filled up (the main thread, which compiles first). */
  readonly resize: boolean;
  /** The `scope: fleet` counters of a compile (app/fleet/limits-store.ts), with `fleet.redis`. */
  readonly fleet?: (() => CounterStore) | undefined;
}

/** The fleet store of the config-load check: throwaway counters, or a refusal naming the reason. */
function checkingFleetCounters(config: Config): CounterStore | undefined {
  if (config.fleet?.redis === undefined) return undefined;
  if (config.panel.name !== 'worker') return new LocalCounters();
  const refuse = (): never => {
    throw new SwitchboardError(
      'SWB_ERR_CONFIG',
      'scope: fleet is not served by the worker panel yet (docs/fleet.md "Limits"); use the net or http2 panel',
    );
  };
  return { rate: refuse, concurrency: refuse, next: refuse, seal: () => {}, entries: () => [] };
}

/** This thread's own counters. */
export const localCounting: PolicyCounting = {
  store: (previous) => previous?.counters.next() ?? new LocalCounters(),
  resize: false,
};

/** The worker panel's main thread: a shared store its threads attach to. */
export const sharedCounting: PolicyCounting = {
  store: (previous) =>
    previous?.counters instanceof SharedCounters ? previous.counters.next() : SharedCounters.create(),
  resize: true,
};

/** A worker thread: the store whose state the main thread posted with the config version. */
export function attachedCounting(state: () => SharedCountersState | undefined): PolicyCounting {
  return {
    store(previous) {
      const s = state();
      if (s === undefined) return localCounting.store(previous);
      const before = previous?.counters;
      return before instanceof SharedCounters && before.state.buffer === s.buffer
        ? before.next()
        : SharedCounters.attach(s);
    },
    resize: false,
  };
}

/** Step 1: every problem of the `policies:` list, one line each (empty when it is valid). */
export function policyErrors(config: Config, factories: ReadonlyMap<string, AnyPolicyFactory>, dir: string): string[] {
  if (config.policies.length === 0) return [];
  try {
    compilePolicies(config.policies, {
      resolve: (use) => factories.get(use),
      configDir: dir,
      fleetCounters: checkingFleetCounters(config),
    });
  } catch (e) {
    return [(e as Error).message];
  }
  return [];
}

/** Step 2 and 3: the compiled set of `loaded` (not started). */
export function compileEnginePolicies(
  loaded: LoadedConfig,
  previous: PolicySet | undefined,
  counting: PolicyCounting,
  logger: Logger,
): PolicySet {
  const compile = (store: CounterStore): PolicySet =>
    compilePolicies(loaded.config.policies, {
      resolve: (use) => loaded.policies.get(use),
      configDir: loaded.dir,
      previous,
      counters: store,
      fleetCounters: counting.fleet?.(),
      ...(store instanceof SharedCounters ? { now: store.now } : {}),
      logger,
    });
  const set = compile(counting.store(previous));
  const store = set.counters;
  if (!counting.resize || !(store instanceof SharedCounters) || !store.full) return set;
  const bytes = Math.max(2 * store.needed, MIN_SHARED_BYTES);
  logger.warn({ bytes }, 'policies: the shared counters are full; a larger store is made and every rule starts afresh');
  return compile(SharedCounters.create({ bytes }));
}
