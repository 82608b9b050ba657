/**
 * One backend's records in a registry (`Entry`: its cells, one per counter set and per cluster's
 * health) and the views operators hold (`BackendState` per cluster, the whole backend). Views
 * read through to the entry's current cells (src/registry/ledger.ts has the full picture).
 */
import { ADMIN_MODES, type AdminMode, type BackendState } from '../contracts/backend-registry.ts';
import type { CounterCell, HealthCell } from './cells.ts';

/** One backend as one cluster sees it. */
class ClusterView implements BackendState {
  readonly id: string;
  readonly cluster: string;
  counters: CounterCell;
  health: HealthCell;
  constructor(id: string, cluster: string, counters: CounterCell, health: HealthCell) {
    this.id = id;
    this.cluster = cluster;
    this.counters = counters;
    this.health = health;
  }
  get active(): number {
    return this.counters.active;
  }
  get total(): number {
    return this.counters.total;
  }
  get latencyEwma(): number {
    return this.counters.latencyEwma;
  }
  get failures(): number {
    return this.health.failures;
  }
  get available(): boolean {
    return this.counters.mode === 0 && this.health.available;
  }
  get healthy(): boolean {
    return this.health.available;
  }
  get mode(): AdminMode {
    return ADMIN_MODES[this.counters.mode] ?? 'up';
  }
  get weightOverride(): number | undefined {
    const w = this.counters.weight;
    return w < 0 ? undefined : w;
  }
  get upSince(): number {
    return this.health.upSince;
  }
}

/** The whole backend: down while any cluster holds it down, the longest streak, the latest return. */
class WholeView implements BackendState {
  readonly cluster = '';
  readonly #entry: Entry;
  constructor(entry: Entry) {
    this.#entry = entry;
  }
  get id(): string {
    return this.#entry.id;
  }
  get active(): number {
    return this.#entry.counters.active;
  }
  get total(): number {
    return this.#entry.counters.total;
  }
  get latencyEwma(): number {
    return this.#entry.counters.latencyEwma;
  }
  get failures(): number {
    let n = 0;
    for (const h of this.#entry.health.values()) n = Math.max(n, h.failures);
    return n;
  }
  get available(): boolean {
    return this.#entry.counters.mode === 0 && this.healthy;
  }
  get healthy(): boolean {
    for (const h of this.#entry.health.values()) if (!h.available) return false;
    return true;
  }
  get mode(): AdminMode {
    return ADMIN_MODES[this.#entry.counters.mode] ?? 'up';
  }
  get weightOverride(): number | undefined {
    const w = this.#entry.counters.weight;
    return w < 0 ? undefined : w;
  }
  get upSince(): number {
    let t = 0;
    for (const h of this.#entry.health.values()) t = Math.max(t, h.upSince);
    return t;
  }
}

/** One backend's cells and views. */
export class Entry {
  readonly id: string;
  counters: CounterCell;
  /** Health per cluster; '' (always present) is the backend as a whole. */
  readonly health = new Map<string, HealthCell>();
  readonly views = new Map<string, ClusterView>();
  readonly whole: WholeView;

  constructor(id: string, counters: CounterCell, whole: HealthCell) {
    this.id = id;
    this.counters = counters;
    this.health.set('', whole);
    this.whole = new WholeView(this);
  }

  /** Swaps the counters cell; views follow. */
  setCounters(cell: CounterCell): void {
    this.counters = cell;
    for (const v of this.views.values()) v.counters = cell;
  }

  /** Swaps (or adds) the health cell of `cluster`; its view follows. */
  setHealth(cluster: string, cell: HealthCell): void {
    this.health.set(cluster, cell);
    const v = this.views.get(cluster);
    if (v !== undefined) v.health = cell;
  }

  /** The view of `cluster` ('' = the whole backend). */
  view(cluster: string): BackendState {
    if (cluster === '') return this.whole;
    let v = this.views.get(cluster);
    if (v === undefined) {
      v = new ClusterView(this.id, cluster, this.counters, this.health.get(cluster)!);
      this.views.set(cluster, v);
    }
    return v;
  }
}
