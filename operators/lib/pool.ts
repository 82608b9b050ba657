/**
 * A pool is one sub-cluster's backends laid out for the hot path: the backends, their registry
 * records and weights in parallel arrays, built once per (registry, sub-cluster object) and
 * cached in a WeakMap. A new snapshot brings new sub-cluster objects, so a reload is picked up
 * without any invalidation; an old pool is collected with its snapshot.
 *
 * An admin weight override (`POST /backends/{id}/weight`) replaces the configured weight of that
 * backend in every pool; the registry's `weightEpoch()` changes with each override, and a pool
 * built under another epoch is rebuilt (so are the rings and SWRR states keyed by it).
 *
 * The records are the backends as the request's cluster sees them (`registry.get(id, cluster)`):
 * connection counts are global per backend, availability and slow start are that cluster's.
 */
import type { BackendRegistry, BackendState } from '../../src/contracts/backend-registry.ts';
import type { Backend, Jack, SubCluster } from '../../src/contracts/types.ts';
import { slowStartWeight } from '../../src/routing/slow-start.ts';

/** One sub-cluster's backends with their registry records, in the address book's order. */
export interface Pool {
  readonly sub: SubCluster;
  /** The cluster whose health records `states` are. */
  readonly cluster: string;
  readonly backends: readonly Backend[];
  readonly states: readonly BackendState[];
  /** One frozen jack per backend, so a pick allocates nothing. */
  readonly jacks: readonly Jack[];
  /** The registry's weight epoch this pool was built under. */
  readonly epoch: number;
  /** Configured weights, or the admin override where one is set (never negative). */
  readonly weights: Float64Array;
  /** Sum of the configured weights. */
  readonly totalWeight: number;
}

const pools = new WeakMap<BackendRegistry, WeakMap<SubCluster, Pool>>();

/** The cached pool of `sub` (a sub-cluster of `cluster`) for `registry`. */
export function poolOf(registry: BackendRegistry, sub: SubCluster, cluster = ''): Pool {
  let byRegistry = pools.get(registry);
  if (byRegistry === undefined) {
    byRegistry = new WeakMap();
    pools.set(registry, byRegistry);
  }
  let pool = byRegistry.get(sub);
  // A book that shares one sub-cluster object between clusters gets the last cluster's pool.
  if (pool === undefined || pool.cluster !== cluster || pool.epoch !== registry.weightEpoch()) {
    pool = buildPool(registry, sub, cluster);
    byRegistry.set(sub, pool);
  }
  return pool;
}

function buildPool(registry: BackendRegistry, sub: SubCluster, cluster: string): Pool {
  const backends = sub.backends;
  const epoch = registry.weightEpoch();
  const weights = new Float64Array(backends.length);
  let totalWeight = 0;
  const states: BackendState[] = [];
  const jacks: Jack[] = [];
  for (let i = 0; i < backends.length; i++) {
    const b = backends[i]!;
    jacks.push(Object.freeze({ backend: b, subcluster: sub.name }));
    const state = registry.get(b.id, cluster);
    weights[i] = Math.max(state.weightOverride ?? b.weight, 0);
    totalWeight += weights[i]!;
    states.push(state);
  }
  return { sub, cluster, epoch, backends, states, jacks, weights, totalWeight };
}

/** True when backend `i` of `pool` may take traffic: up, positive weight, not excluded. */
export function eligible(pool: Pool, i: number, exclude: ReadonlySet<string>): boolean {
  return (
    pool.weights[i]! > 0 && pool.states[i]!.available && (exclude.size === 0 || !exclude.has(pool.backends[i]!.id))
  );
}

/** The weight backend `i` is worth now, slow start applied (`now` is only read when ramping). */
export function weightOf(pool: Pool, i: number, slowStartMs: number, now: number): number {
  const w = pool.weights[i]!;
  return slowStartMs > 0 ? slowStartWeight(w, pool.states[i]!, slowStartMs, now) : w;
}
