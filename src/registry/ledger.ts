/**
 * The bookkeeping both registries share (`LocalRegistry`, `SharedRegistry`): which backends and
 * which (cluster, backend) health records exist, what a report changes, and who hears about it.
 * Where the numbers live is the implementation's business, behind two small cells:
 *
 *   Entry (one per backend id)
 *     counters: CounterCell          active, total, latencyEwma        (global per backend)
 *     health:   '' → HealthCell      the backend as a whole (reports without a cluster)
 *               'web' → HealthCell   failures, available, upSince      (per cluster)
 *     views:    one BackendState per cluster, handed to operators' pools once and kept
 *
 * Views read through to the entry's current cells, so a registry may swap a cell (a worker
 * adopting the owner's shared slots) without invalidating pools built earlier.
 * A cluster's health record is created on first sight with the whole backend's state, so a
 * backend marked down without a cluster is down for clusters that appear later too.
 */
import {
  ADMIN_MODES,
  type AdminMode,
  type BackendRegistry,
  type BackendState,
  type RegistryKey,
  type RegistryObserver,
} from '../contracts/backend-registry.ts';
import { type HealthCell, LocalCounters, LocalHealth } from './cells.ts';
import { Entry } from './entry.ts';

export { Entry } from './entry.ts';

/** The registry logic over cells; subclasses decide where cells live (see the file header). */
export abstract class Ledger implements BackendRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #observers: RegistryObserver[] = [];
  readonly #now: () => number;
  #seeded = false;
  #weightEpoch = 0;
  /** True while the records are exactly what the last `retain` listed (`retainChange` needs it). */
  #settled = false;
  #retaining = false;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * `retain`/`reserve` admitted `entry`: give it whatever storage a kept backend needs. New cells
   * are always local (`LocalCounters`, `LocalHealth`); an implementation swaps them here.
   */
  protected abstract place(entry: Entry): void;
  /** A cell of `id` was dropped (`cluster` undefined: its counters). */
  protected abstract freed(id: string, cluster: string | undefined): void;

  now(): number {
    return this.#now();
  }

  get(id: string, cluster = ''): BackendState {
    const e = this.entry(id);
    if (cluster !== '') this.healthOf(e, cluster);
    return e.view(cluster);
  }

  peek(id: string, cluster = ''): BackendState | undefined {
    const e = this.#entries.get(id);
    if (e === undefined || !e.health.has(cluster)) return undefined;
    return e.view(cluster);
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  *all(): IterableIterator<BackendState> {
    for (const e of this.#entries.values()) yield e.whole;
  }

  clusters(id: string): BackendState[] {
    const e = this.#entries.get(id);
    if (e === undefined) return [];
    return [...e.health.keys()].filter((c) => c !== '').map((c) => e.view(c));
  }

  observe(observer: RegistryObserver): () => void {
    this.#observers.push(observer);
    return () => {
      const i = this.#observers.indexOf(observer);
      if (i >= 0) this.#observers.splice(i, 1);
    };
  }

  connected(id: string, latencyMs: number, cluster = '', success = true): void {
    const e = this.entry(id);
    e.counters.connect(latencyMs);
    if (!success) {
      if (cluster !== '') this.healthOf(e, cluster);
    } else if (cluster !== '') this.healthOf(e, cluster).succeed();
    else for (const h of e.health.values()) h.succeed();
    if (this.#observers.length === 0) return;
    const s = e.view(cluster);
    for (const o of this.#observers) o.onConnected?.(s);
  }

  connectFailed(id: string, cluster = ''): void {
    const e = this.entry(id);
    if (cluster !== '') this.healthOf(e, cluster).fail();
    else for (const h of e.health.values()) h.fail();
    this.notifyFailed(id, cluster);
  }

  responseFailed(id: string, cluster?: string): void {
    this.connectFailed(id, cluster);
  }

  responseSucceeded(id: string, cluster = ''): void {
    const e = this.#entries.get(id);
    if (e === undefined) return;
    if (cluster !== '') e.health.get(cluster)?.succeed();
    else for (const h of e.health.values()) h.succeed();
  }

  closed(id: string): void {
    this.#entries.get(id)?.counters.close();
  }

  setAvailable(id: string, available: boolean, cluster = ''): void {
    const e = this.entry(id);
    const now = available ? this.#now() : 0;
    if (cluster !== '') this.healthOf(e, cluster).set(available, now);
    else for (const h of e.health.values()) h.set(available, now);
  }

  setMode(id: string, mode: AdminMode): void {
    const e = this.entry(id);
    const code = ADMIN_MODES.indexOf(mode);
    if (code < 0 || e.counters.mode === code) return;
    const previous = e.counters.mode;
    e.counters.setMode(code);
    if (previous !== 0 && code === 0) {
      // Back in service: ramp up again like a backend that came back from a health check.
      const now = this.#now();
      for (const h of e.health.values()) if (h.available) h.reset(true, now, h.failures);
    }
    for (const o of this.#observers) o.onModeChanged?.(id, mode, ADMIN_MODES[previous] ?? 'up');
  }

  setWeight(id: string, weight: number | undefined): void {
    const e = this.entry(id);
    const w = weight === undefined ? -1 : weight;
    if (e.counters.weight === w) return;
    e.counters.setWeight(w);
    this.bumpWeightEpoch();
  }

  weightEpoch(): number {
    return this.#weightEpoch;
  }

  /** A weight override changed: pools built before are stale. */
  protected bumpWeightEpoch(): void {
    this.#weightEpoch++;
  }

  retain(keys: Iterable<RegistryKey>): string[] {
    this.#retaining = true;
    this.#settled = true;
    try {
      const keep = this.group(keys);
      const dropped: string[] = [];
      for (const id of [...this.#entries.keys()]) {
        if (!keep.has(id)) {
          this.drop(id);
          dropped.push(id);
        }
      }
      this.admit(keep);
      for (const [id, clusters] of keep) {
        if (clusters === undefined) continue;
        const e = this.#entries.get(id)!;
        for (const c of [...e.health.keys()]) if (!clusters.has(c)) this.dropCluster(id, c);
      }
      return this.#removed(dropped);
    } finally {
      this.#retaining = false;
    }
  }

  /**
   * `retain` for a change of a listing that names a cluster in every key (app/runtime/backend-sync.ts):
   * `ids` are listed no more, `pairs` (id, cluster) no more while their id still is, `added` are
   * listed anew. The records end as `retain(every key listed now)` would leave them. Returns
   * undefined, changing nothing, while records exist that no `retain` listed (made by a report,
   * `reserve`, or a slot that was not free): the caller then calls `retain`.
   */
  retainChange(ids: Iterable<string>, pairs: Iterable<readonly [string, string]>, added: Iterable<RegistryKey>) {
    if (!this.#settled) return undefined;
    this.#retaining = true;
    try {
      const gone = new Set(ids);
      const dropped: string[] = [];
      if (gone.size > 0) for (const id of [...this.#entries.keys()]) if (gone.has(id)) dropped.push(id);
      for (const id of dropped) this.drop(id);
      this.admit(this.group(added));
      for (const [id, cluster] of pairs) if (!gone.has(id)) this.dropCluster(id, cluster);
      return this.#removed(dropped);
    } finally {
      this.#retaining = false;
    }
  }

  #removed(dropped: string[]): string[] {
    for (const id of dropped) for (const o of this.#observers) o.onRemoved?.(id);
    return dropped;
  }

  /** Records changed outside `retain`, or (`always`) a kept record has no place (see `retainChange`). */
  protected unsettle(always = false): void {
    if (always || !this.#retaining) this.#settled = false;
  }

  /** Tells observers about a failure already counted (the owner hears a worker's failures here). */
  protected notifyFailed(id: string, cluster: string): void {
    if (this.#observers.length === 0) return;
    const e = this.#entries.get(id);
    if (e === undefined) return;
    const clusters = cluster !== '' ? [cluster] : [...e.health.keys()];
    for (const c of clusters) {
      if (!e.health.has(c)) continue;
      const s = e.view(c);
      for (const o of this.#observers) o.onConnectFailed?.(s);
    }
  }

  /** Creates the records of `keep` that are missing (slow start begins now unless first) and places them. */
  protected admit(keep: ReadonlyMap<string, ReadonlySet<string> | undefined>): void {
    const now = this.#seeded ? this.#now() : 0;
    for (const [id, clusters] of keep) {
      let e = this.#entries.get(id);
      if (e === undefined) {
        e = this.entry(id);
        e.health.get('')!.reset(true, now, 0);
      }
      for (const c of clusters ?? []) this.healthOf(e, c);
      this.place(e);
    }
    this.#seeded = true;
  }

  /** The entry of `id`, created on first sight (as an old, fully ramped backend). */
  protected entry(id: string): Entry {
    let e = this.#entries.get(id);
    if (e === undefined) {
      e = new Entry(id, new LocalCounters(), new LocalHealth());
      this.#entries.set(id, e);
      this.unsettle();
    }
    return e;
  }

  /** The existing entry of `id`. */
  protected existing(id: string): Entry | undefined {
    return this.#entries.get(id);
  }

  /** Removes `id` and frees its cells (no observer is told). */
  protected drop(id: string): void {
    const e = this.#entries.get(id);
    if (e === undefined) return;
    this.unsettle();
    this.#entries.delete(id);
    this.freed(id, undefined);
    for (const c of e.health.keys()) this.freed(id, c);
  }

  /** Removes the health record of (`cluster`, `id`); the whole backend's ('') stays. */
  protected dropCluster(id: string, cluster: string): void {
    const e = this.#entries.get(id);
    if (cluster === '' || e === undefined || !e.health.delete(cluster)) return;
    this.unsettle();
    e.views.delete(cluster);
    this.freed(id, cluster);
  }

  /** The health cell of (`cluster`, backend), created with the whole backend's state. */
  protected healthOf(e: Entry, cluster: string): HealthCell {
    let h = e.health.get(cluster);
    if (h === undefined) {
      const whole = e.health.get('')!;
      h = new LocalHealth();
      h.reset(whole.available, whole.upSince, 0);
      e.setHealth(cluster, h);
      this.unsettle();
    }
    return h;
  }

  /** `keys` as id → clusters listing it (undefined when no key named a cluster). */
  protected group(keys: Iterable<RegistryKey>): Map<string, Set<string> | undefined> {
    const out = new Map<string, Set<string> | undefined>();
    for (const k of keys) {
      const id = typeof k === 'string' ? k : k.backend.id;
      const cluster = typeof k === 'string' ? undefined : k.cluster;
      if (cluster === undefined || cluster === '') {
        if (!out.has(id)) out.set(id, undefined);
        continue;
      }
      let set = out.get(id);
      if (set === undefined) {
        set = new Set();
        out.set(id, set);
      }
      set.add(cluster);
    }
    return out;
  }
}
