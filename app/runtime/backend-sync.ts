/**
 * What the runtime does after the current book swapped its snapshot: the registry keeps the
 * records of the backends listed now (new ones start their slow-start ramp) and drops the rest,
 * and the health manager checks exactly those (`retain` + `update`, over every entry).
 *
 * A book that lists its backends in groups kept while unchanged (`BackendGroups`: the `bfe`,
 * `sqlite` and `etcd` books, one group per compiled cluster) is synced by the change only:
 *
 *   previous groups ─┬─ same object, same order ─► nothing to do (counted, not read)
 *   current groups  ─┴─ only in one of the two  ─► removed / added entries
 *       registry: `retainChange` (ids and (id, cluster) pairs whose count of listing entries
 *                 fell to 0 are dropped, added keys admitted)
 *       health:   `updateChange` (only the checkers of the (backend, policy) pairs touched)
 *
 * Both end exactly as the whole sync would leave them. The whole sync runs instead for the
 * first listing, a book without groups, groups in another order, a change bigger than half the
 * listing, an entry without a cluster, or a registry with records no sync listed.
 */
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import { type AddressBook, type BackendEntry, hasBackendGroups, isBackendLister } from '../../src/contracts/types.ts';
import type { HealthEntry, HealthManager } from '../../src/health/manager.ts';

type Group = readonly BackendEntry[];

/** The health manager's form of an entry. */
function healthEntry(e: BackendEntry): HealthEntry {
  return {
    backend: e.backend,
    cluster: e.cluster,
    policy: e.policy.healthCheck,
    proxyProtocol: e.policy.proxyProtocol,
  };
}

/** Each group's entries in the health manager's form, made once per group. */
const healthEntries = new WeakMap<Group, readonly HealthEntry[]>();

function healthOf(g: Group): readonly HealthEntry[] {
  let h = healthEntries.get(g);
  if (h === undefined) {
    h = g.map(healthEntry);
    healthEntries.set(g, h);
  }
  return h;
}

/** Keeps the registry and the health checks in step with the current book's backends. */
export class BackendSync {
  readonly #registry: BackendRegistry;
  readonly #health: HealthManager;
  /** The groups of the last sync, when the book had them. */
  #groups: readonly Group[] | undefined;
  /** id → cluster → how many entries of the last sync list that pair. */
  #counts = new Map<string, Map<string, number>>();
  /** id → how many entries of the last sync list it. */
  #totals = new Map<string, number>();

  constructor(registry: BackendRegistry, health: HealthManager) {
    this.#registry = registry;
    this.#health = health;
  }

  sync(book: AddressBook): void {
    if (!isBackendLister(book)) return;
    const groups = hasBackendGroups(book) ? book.backendGroups() : undefined;
    if (groups !== undefined && this.#groups !== undefined && this.#change(this.#groups, groups)) {
      this.#groups = groups;
      return;
    }
    const entries = [...book.listBackends()];
    this.#registry.retain(entries);
    this.#health.update(entries.map(healthEntry));
    this.#counts = new Map();
    this.#totals = new Map();
    // A listing with an entry that names no cluster is always synced whole (`retain` keeps
    // such a backend's other cluster records).
    const named = entries.every((e) => e.cluster !== undefined && e.cluster !== '');
    this.#groups = named ? groups : undefined;
    if (this.#groups !== undefined) for (const e of entries) this.#count(e.backend.id, e.cluster!, 1);
  }

  /** The change from `before` to `after`, applied; false (nothing done) when it cannot be. */
  #change(before: readonly Group[], after: readonly Group[]): boolean {
    const was = new Set(before);
    const is = new Set(after);
    const removed: Group[] = [];
    const added: Group[] = [];
    let size = 0;
    let i = 0;
    for (const g of before) if (!is.has(g)) removed.push(g);
    for (const g of after) {
      if (!was.has(g)) {
        added.push(g);
        continue;
      }
      // The groups both list keep their order, or the whole sync orders the checks anew.
      while (i < before.length && !is.has(before[i]!)) i++;
      if (before[i++] !== g) return false;
    }
    for (const g of [...removed, ...added]) {
      size += g.length;
      for (const e of g) if (e.cluster === undefined || e.cluster === '') return false;
    }
    let total = 0;
    for (const g of after) total += g.length;
    if (size * 2 > total) return false;
    if (this.#registry.retainChange === undefined) return false;
    // What the change does to the counts (applied only once the registry took it).
    const delta = new Map<string, Map<string, number>>();
    const bump = (e: BackendEntry, by: number) => {
      const id = e.backend.id;
      let byCluster = delta.get(id);
      if (byCluster === undefined) {
        byCluster = new Map();
        delta.set(id, byCluster);
      }
      byCluster.set(e.cluster!, (byCluster.get(e.cluster!) ?? 0) + by);
    };
    for (const g of removed) for (const e of g) bump(e, -1);
    for (const g of added) for (const e of g) bump(e, 1);
    const ids: string[] = [];
    const pairs: [string, string][] = [];
    for (const [id, byCluster] of delta) {
      let total = this.#totals.get(id) ?? 0;
      for (const [cluster, d] of byCluster) {
        total += d;
        if ((this.#counts.get(id)?.get(cluster) ?? 0) + d === 0) pairs.push([id, cluster]);
      }
      if (total === 0) ids.push(id);
    }
    if (this.#registry.retainChange(ids, pairs, added.flat()) === undefined) return false;
    for (const [id, byCluster] of delta) for (const [cluster, d] of byCluster) this.#count(id, cluster, d);
    this.#health.updateChange(removed.map(healthOf), added.map(healthOf), after.map(healthOf));
    return true;
  }

  #count(id: string, cluster: string, by: number): void {
    let byCluster = this.#counts.get(id);
    if (byCluster === undefined) {
      byCluster = new Map();
      this.#counts.set(id, byCluster);
    }
    const n = (byCluster.get(cluster) ?? 0) + by;
    if (n === 0) byCluster.delete(cluster);
    else byCluster.set(cluster, n);
    const total = (this.#totals.get(id) ?? 0) + by;
    if (total === 0) {
      this.#totals.delete(id);
      this.#counts.delete(id);
    } else this.#totals.set(id, total);
  }
}
