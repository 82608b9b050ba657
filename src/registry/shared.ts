/**
 * A backend registry whose cells live in `SharedArrayBuffer`s, so that every worker thread of
 * the `worker` panel reads and updates the same numbers (issue 11 §3). Connection counts are per
 * backend, health per (cluster, backend) (issue 16 §5):
 *
 *   ints    (Int32, Atomics)  slot × [active, total, mode, weight + 1]  +  worker × slot → active
 *                             + health slot × [failures, down]  +  [weight epoch]
 *   floats  (Float64, plain)  slot × [latencyEwma]    +  health slot × [upSince]
 *
 * 1. The main thread's registry is the *owner*: `retain` and `reserve` give each backend id a
 *    slot and each (cluster, backend) a health slot (never reused while free slots remain);
 *    health checks call `setAvailable` there.
 * 2. Workers hold *views* on the same buffers (`SharedRegistry.view`), adopt the owner's
 *    key → slot map with every snapshot, and count connects and closes with `Atomics.add`, so
 *    least-connections, p2c and ewma see every worker's connections. Keys are opaque strings:
 *    a backend id, or `slotKey(id, cluster)` for a health record.
 * 3. A worker's connect failure is counted in the shared `failures` of its cluster and
 *    forwarded to the owner (`onConnectFailed(key)`) where the health manager observes it
 *    (`noteConnectFailed(key)`): passive checks run once.
 * 4. Each worker also counts its own share of `active` per slot; when a worker dies the owner
 *    subtracts that share (`forgetWorker`), so a crash does not leave phantom connections.
 * 5. `latencyEwma` and `upSince` are plain Float64 stores: a lost EWMA sample between two
 *    threads only blurs a heuristic, and `upSince` is written by the owner alone.
 * 6. The admin state (mode, weight override) sits in the counters slot, written by the owner
 *    (admin API) and read by every worker on each pick; a weight change also bumps the shared
 *    epoch so each thread's operators rebuild their pools.
 * A key without a slot (buffers full, or a book the owner does not list) keeps a local cell.
 */
import { availableParallelism } from 'node:os';
import type { BackendRegistry, RegistryKey } from '../contracts/backend-registry.ts';
import type { CounterCell, HealthCell } from './cells.ts';
import { peakEwma } from './cells.ts';
import { type Entry, Ledger } from './ledger.ts';

const ACTIVE = 0;
const TOTAL = 1;
const MODE = 2;
/** The weight override plus one: 0 (a fresh slot) = none. */
const WEIGHT = 3;
const COUNTER_INTS = 4;
const FAILURES = 0;
const DOWN = 1;
const HEALTH_INTS = 2;
/** Separates the backend id from the cluster in a health slot key (ids are host:port). */
const SEP = '\u0000';

/** The buffers shared by the owner and its workers; plain data that survives `structuredClone`. */
export interface SharedRegistryState {
  readonly capacity: number;
  /** Health slots: one per (cluster, backend) plus one per backend as a whole. */
  readonly healthCapacity: number;
  readonly workers: number;
  readonly ints: SharedArrayBuffer;
  readonly floats: SharedArrayBuffer;
}

/** Allocates the shared buffers for `capacity` backends and `workers` worker threads. */
export function allocateSharedState(
  capacity: number,
  workers: number,
  healthCapacity = capacity * 3,
): SharedRegistryState {
  return {
    capacity,
    healthCapacity,
    workers,
    ints: new SharedArrayBuffer(4 * (capacity * COUNTER_INTS + workers * capacity + healthCapacity * HEALTH_INTS + 1)),
    floats: new SharedArrayBuffer(8 * (capacity + healthCapacity)),
  };
}

/** The slot key of the health record of (`cluster`, `id`); '' = the backend as a whole. */
export function slotKey(id: string, cluster: string): string {
  return `${id}${SEP}${cluster}`;
}

/** A slot key split back into backend id and cluster (undefined: a counters key). */
function parseKey(key: string): [id: string, cluster: string | undefined] {
  const i = key.indexOf(SEP);
  return i < 0 ? [key, undefined] : [key.slice(0, i), key.slice(i + 1)];
}

/** Offsets of the regions inside the shared buffers. */
class Layout {
  readonly ints: Int32Array;
  readonly floats: Float64Array;
  readonly shares: number;
  readonly health: number;
  readonly upSince: number;
  /** Index of the weight epoch. */
  readonly epoch: number;
  readonly state: SharedRegistryState;
  constructor(state: SharedRegistryState) {
    this.state = state;
    this.ints = new Int32Array(state.ints);
    this.floats = new Float64Array(state.floats);
    this.shares = state.capacity * COUNTER_INTS;
    this.health = this.shares + state.workers * state.capacity;
    this.upSince = state.capacity;
    this.epoch = this.health + state.healthCapacity * HEALTH_INTS;
  }
  /** Index of worker `w`'s share of `active` for `slot`. */
  share(w: number, slot: number): number {
    return this.shares + w * this.state.capacity + slot;
  }
}

/** One backend's counters in a shared slot; a view also counts its own share of `active`. */
class SharedCounters implements CounterCell {
  readonly #l: Layout;
  readonly #i: number;
  readonly #slot: number;
  readonly #share: number;
  constructor(l: Layout, slot: number, worker: number | undefined) {
    this.#l = l;
    this.#slot = slot;
    this.#i = slot * COUNTER_INTS;
    this.#share = worker === undefined ? -1 : l.share(worker, slot);
  }
  get active(): number {
    return Atomics.load(this.#l.ints, this.#i + ACTIVE);
  }
  get total(): number {
    return Atomics.load(this.#l.ints, this.#i + TOTAL) >>> 0;
  }
  get latencyEwma(): number {
    return this.#l.floats[this.#slot]!;
  }
  get mode(): number {
    return Atomics.load(this.#l.ints, this.#i + MODE);
  }
  get weight(): number {
    return Atomics.load(this.#l.ints, this.#i + WEIGHT) - 1;
  }
  setMode(mode: number): void {
    Atomics.store(this.#l.ints, this.#i + MODE, mode);
  }
  setWeight(weight: number): void {
    Atomics.store(this.#l.ints, this.#i + WEIGHT, weight + 1);
  }
  connect(latencyMs: number): void {
    const ints = this.#l.ints;
    Atomics.add(ints, this.#i + ACTIVE, 1);
    Atomics.add(ints, this.#i + TOTAL, 1);
    if (this.#share >= 0) Atomics.add(ints, this.#share, 1);
    this.#l.floats[this.#slot] = peakEwma(this.#l.floats[this.#slot]!, latencyMs);
  }
  close(): void {
    const ints = this.#l.ints;
    if (this.#share >= 0) {
      if (Atomics.load(ints, this.#share) <= 0) return;
      Atomics.sub(ints, this.#share, 1);
    }
    if (Atomics.sub(ints, this.#i + ACTIVE, 1) <= 0) Atomics.add(ints, this.#i + ACTIVE, 1);
  }
  /** Owner: the slot starts with `from`'s numbers. */
  load(from: CounterCell): void {
    Atomics.store(this.#l.ints, this.#i + ACTIVE, from.active);
    Atomics.store(this.#l.ints, this.#i + TOTAL, from.total);
    Atomics.store(this.#l.ints, this.#i + MODE, from.mode);
    Atomics.store(this.#l.ints, this.#i + WEIGHT, from.weight + 1);
    this.#l.floats[this.#slot] = from.latencyEwma;
  }
}

/** One (cluster, backend) health record in a shared slot. */
class SharedHealth implements HealthCell {
  readonly #l: Layout;
  readonly #i: number;
  readonly #f: number;
  constructor(l: Layout, slot: number) {
    this.#l = l;
    this.#i = l.health + slot * HEALTH_INTS;
    this.#f = l.upSince + slot;
  }
  get failures(): number {
    return Atomics.load(this.#l.ints, this.#i + FAILURES);
  }
  get available(): boolean {
    return Atomics.load(this.#l.ints, this.#i + DOWN) === 0;
  }
  get upSince(): number {
    return this.#l.floats[this.#f]!;
  }
  fail(): void {
    Atomics.add(this.#l.ints, this.#i + FAILURES, 1);
  }
  succeed(): void {
    Atomics.store(this.#l.ints, this.#i + FAILURES, 0);
  }
  set(available: boolean, now: number): boolean {
    const from = available ? 1 : 0;
    if (Atomics.compareExchange(this.#l.ints, this.#i + DOWN, from, 1 - from) !== from) return false;
    if (available) {
      this.#l.floats[this.#f] = now;
      Atomics.store(this.#l.ints, this.#i + FAILURES, 0);
    }
    return true;
  }
  reset(available: boolean, upSince: number, failures: number): void {
    Atomics.store(this.#l.ints, this.#i + DOWN, available ? 0 : 1);
    Atomics.store(this.#l.ints, this.#i + FAILURES, failures);
    this.#l.floats[this.#f] = upSince;
  }
}

/** Options of a shared registry. */
export interface SharedRegistryOptions {
  /** The worker index of a view (its share of `active` is counted apart); absent on the owner. */
  readonly worker?: number;
  /** Called after a failure was counted (a view forwards the slot key to the owner). */
  readonly onConnectFailed?: (key: string) => void;
  readonly now?: () => number;
}

/** Slots of one kind: fresh ones first, then freed ones. */
class SlotPool {
  #next = 0;
  readonly #free: number[] = [];
  readonly capacity: number;
  constructor(capacity: number) {
    this.capacity = capacity;
  }
  take(): number | undefined {
    // A freed slot is reused only when none is left: old connections on a reused slot could
    // otherwise decrement a stranger's count.
    return this.#next < this.capacity ? this.#next++ : this.#free.shift();
  }
  free(slot: number): void {
    this.#free.push(slot);
  }
}

/** A `BackendRegistry` backed by shared buffers (see the file header). */
export class SharedRegistry extends Ledger implements BackendRegistry {
  readonly shared: SharedRegistryState;
  readonly #layout: Layout;
  readonly #worker: number | undefined;
  readonly #onConnectFailed: ((key: string) => void) | undefined;
  /** key (backend id, or `slotKey(id, cluster)`) → slot. */
  #slots = new Map<string, number>();
  readonly #counterSlots: SlotPool;
  readonly #healthSlots: SlotPool;

  constructor(shared: SharedRegistryState, options: SharedRegistryOptions = {}) {
    super(options.now);
    this.shared = shared;
    this.#layout = new Layout(shared);
    this.#worker = options.worker;
    this.#onConnectFailed = options.onConnectFailed;
    this.#counterSlots = new SlotPool(shared.capacity);
    this.#healthSlots = new SlotPool(shared.healthCapacity);
  }

  /** A worker's view on an owner's buffers. */
  static view(shared: SharedRegistryState, worker: number, options: Omit<SharedRegistryOptions, 'worker'> = {}) {
    return new SharedRegistry(shared, { ...options, worker });
  }

  /** The owner's key → slot map, to send to workers with a snapshot. */
  slots(): [string, number][] {
    return [...this.#slots];
  }

  /** A view adopts the owner's key → slot map (records of backends it no longer lists are dropped). */
  adopt(slots: Iterable<readonly [string, number]>): void {
    const next = new Map(slots);
    for (const [key, slot] of next) {
      if (this.#slots.get(key) === slot) continue;
      const [id, cluster] = parseKey(key);
      const e = this.entry(id);
      if (cluster === undefined) e.setCounters(new SharedCounters(this.#layout, slot, this.#worker));
      else e.setHealth(cluster, new SharedHealth(this.#layout, slot));
    }
    for (const key of [...this.#slots.keys()]) {
      if (next.has(key)) continue;
      const [id, cluster] = parseKey(key);
      if (cluster === undefined) this.drop(id);
      else this.dropCluster(id, cluster);
    }
    this.#slots = next;
  }

  override connectFailed(id: string, cluster = ''): void {
    super.connectFailed(id, cluster);
    this.#onConnectFailed?.(cluster === '' ? id : slotKey(id, cluster));
  }

  /** Tells observers about a failure already counted (the owner hears a worker's failures here). */
  noteConnectFailed(key: string): void {
    const [id, cluster] = parseKey(key);
    this.notifyFailed(id, cluster ?? '');
  }

  /** Owner: gives `keys` slots without dropping anyone (a reload's engine before it is swapped in). */
  reserve(keys: Iterable<RegistryKey>): void {
    this.admit(this.group(keys));
  }

  override weightEpoch(): number {
    return Atomics.load(this.#layout.ints, this.#layout.epoch);
  }

  protected override bumpWeightEpoch(): void {
    Atomics.add(this.#layout.ints, this.#layout.epoch, 1);
  }

  /** Owner: a worker died; its share of every backend's `active` is taken back. */
  forgetWorker(worker: number): void {
    const { capacity } = this.shared;
    const ints = this.#layout.ints;
    for (let slot = 0; slot < capacity; slot++) {
      const n = Atomics.exchange(ints, this.#layout.share(worker, slot), 0);
      if (n > 0) Atomics.sub(ints, slot * COUNTER_INTS + ACTIVE, n);
    }
  }

  /** Owner: moves a kept backend's local cells into fresh slots, numbers and all. */
  protected place(e: Entry): void {
    if (!this.#slots.has(e.id)) {
      const slot = this.#counterSlots.take();
      if (slot === undefined) this.unsettle(true);
      else {
        const cell = new SharedCounters(this.#layout, slot, this.#worker);
        for (let w = 0; w < this.shared.workers; w++) Atomics.store(this.#layout.ints, this.#layout.share(w, slot), 0);
        cell.load(e.counters);
        e.setCounters(cell);
        this.#slots.set(e.id, slot);
      }
    }
    for (const [cluster, h] of e.health) {
      const key = slotKey(e.id, cluster);
      if (this.#slots.has(key)) continue;
      const slot = this.#healthSlots.take();
      if (slot === undefined) {
        this.unsettle(true);
        continue;
      }
      const cell = new SharedHealth(this.#layout, slot);
      cell.reset(h.available, h.upSince, h.failures);
      e.setHealth(cluster, cell);
      this.#slots.set(key, slot);
    }
  }

  protected freed(id: string, cluster: string | undefined): void {
    const key = cluster === undefined ? id : slotKey(id, cluster);
    const slot = this.#slots.get(key);
    if (slot === undefined) return;
    this.#slots.delete(key);
    (cluster === undefined ? this.#counterSlots : this.#healthSlots).free(slot);
  }
}

/** Distinct backends a shared registry holds before it reuses freed slots. */
export const SHARED_CAPACITY = 16_384;

/** A shared registry (owner side) sized for `threads` worker threads. */
export function sharedRegistryFor(threads: number | undefined): SharedRegistry {
  return new SharedRegistry(allocateSharedState(SHARED_CAPACITY, workerThreads(threads)));
}

/** The number of worker threads: `threads`, or one per available core. */
export function workerThreads(threads: number | undefined): number {
  return threads ?? Math.max(1, availableParallelism());
}
