/**
 * A backend registry whose per-backend counters live in `SharedArrayBuffer`s, so that every
 * worker thread of the `worker` panel reads and updates the same numbers (issue 11 §3):
 *
 *   ints    (Int32, Atomics)  slot × [active, total, failures, down]  +  worker × slot → active
 *   floats  (Float64, plain)  slot × [latencyEwma, upSince]
 *
 * 1. The main thread's registry is the *owner*: `retain` and `reserve` give each backend id a
 *    slot (never reused while free slots remain), health checks call `setAvailable` there.
 * 2. Workers hold *views* on the same buffers (`SharedRegistry.view`), adopt the owner's id →
 *    slot map with every snapshot, and count connects and closes with `Atomics.add`, so
 *    least-connections, p2c and ewma see every worker's connections.
 * 3. A worker's connect failure is counted in the shared `failures` and forwarded to the owner
 *    (`onConnectFailed` option) where the health manager observes it: passive checks run once.
 * 4. Each worker also counts its own share of `active` per slot; when a worker dies the owner
 *    subtracts that share (`forgetWorker`), so a crash does not leave phantom connections.
 * 5. `latencyEwma` and `upSince` are plain Float64 stores: a lost EWMA sample between two
 *    threads only blurs a heuristic, and `upSince` is written by the owner alone.
 * An id without a slot (buffer full, or a book the owner does not list) gets a local record.
 */
import { availableParallelism } from 'node:os';
import { BackendRegistry, type BackendState, type RegistryObserver } from './backend-registry.ts';

const ACTIVE = 0;
const TOTAL = 1;
const FAILURES = 2;
const DOWN = 3;
const INTS = 4;
const EWMA = 0;
const UP_SINCE = 1;
const FLOATS = 2;
const EWMA_DECAY = 0.3;

/** The buffers shared by the owner and its workers; plain data that survives `structuredClone`. */
export interface SharedRegistryState {
  readonly capacity: number;
  readonly workers: number;
  readonly ints: SharedArrayBuffer;
  readonly floats: SharedArrayBuffer;
}

/** Allocates the shared buffers for `capacity` backends and `workers` worker threads. */
export function allocateSharedState(capacity: number, workers: number): SharedRegistryState {
  return {
    capacity,
    workers,
    ints: new SharedArrayBuffer(4 * (capacity * INTS + workers * capacity)),
    floats: new SharedArrayBuffer(8 * capacity * FLOATS),
  };
}

/** One backend's record, read through to the shared buffers. */
class SlotState implements BackendState {
  readonly id: string;
  readonly #ints: Int32Array;
  readonly #floats: Float64Array;
  readonly #i: number;
  readonly #f: number;

  constructor(id: string, ints: Int32Array, floats: Float64Array, slot: number) {
    this.id = id;
    this.#ints = ints;
    this.#floats = floats;
    this.#i = slot * INTS;
    this.#f = slot * FLOATS;
  }
  get active(): number {
    return Atomics.load(this.#ints, this.#i + ACTIVE);
  }
  set active(v: number) {
    Atomics.store(this.#ints, this.#i + ACTIVE, v);
  }
  get total(): number {
    return Atomics.load(this.#ints, this.#i + TOTAL) >>> 0;
  }
  set total(v: number) {
    Atomics.store(this.#ints, this.#i + TOTAL, v);
  }
  get failures(): number {
    return Atomics.load(this.#ints, this.#i + FAILURES);
  }
  set failures(v: number) {
    Atomics.store(this.#ints, this.#i + FAILURES, v);
  }
  get available(): boolean {
    return Atomics.load(this.#ints, this.#i + DOWN) === 0;
  }
  set available(v: boolean) {
    Atomics.store(this.#ints, this.#i + DOWN, v ? 0 : 1);
  }
  get latencyEwma(): number {
    return this.#floats[this.#f + EWMA]!;
  }
  set latencyEwma(v: number) {
    this.#floats[this.#f + EWMA] = v;
  }
  get upSince(): number {
    return this.#floats[this.#f + UP_SINCE]!;
  }
  set upSince(v: number) {
    this.#floats[this.#f + UP_SINCE] = v;
  }
}

/** Options of a shared registry. */
export interface SharedRegistryOptions {
  /** The worker index of a view (its share of `active` is counted apart); absent on the owner. */
  readonly worker?: number;
  /** Called after a connect failure was counted (a view forwards it to the owner). */
  readonly onConnectFailed?: (id: string) => void;
  readonly now?: () => number;
}

/** A `BackendRegistry` backed by shared buffers (see the file header). */
export class SharedRegistry extends BackendRegistry {
  readonly shared: SharedRegistryState;
  readonly #ints: Int32Array;
  readonly #floats: Float64Array;
  readonly #worker: number | undefined;
  readonly #onConnectFailed: ((id: string) => void) | undefined;
  readonly #slots = new Map<string, number>();
  readonly #states = new Map<string, BackendState>();
  readonly #local = new BackendRegistry();
  readonly #observers: RegistryObserver[] = [];
  readonly #free: number[] = [];
  #next = 0;
  #seeded = false;

  constructor(shared: SharedRegistryState, options: SharedRegistryOptions = {}) {
    super(options.now);
    this.shared = shared;
    this.#ints = new Int32Array(shared.ints);
    this.#floats = new Float64Array(shared.floats);
    this.#worker = options.worker;
    this.#onConnectFailed = options.onConnectFailed;
  }

  /** A worker's view on an owner's buffers. */
  static view(shared: SharedRegistryState, worker: number, options: Omit<SharedRegistryOptions, 'worker'> = {}) {
    return new SharedRegistry(shared, { ...options, worker });
  }

  /** The owner's id → slot map, to send to workers with a snapshot. */
  slots(): [string, number][] {
    return [...this.#slots];
  }

  /** A view adopts the owner's id → slot map (records of ids it no longer lists are dropped). */
  adopt(slots: Iterable<readonly [string, number]>): void {
    const next = new Map(slots);
    for (const id of this.#slots.keys()) if (!next.has(id)) this.#states.delete(id);
    for (const [id, slot] of next) {
      if (this.#slots.get(id) !== slot) {
        this.#slots.set(id, slot);
        this.#states.set(id, new SlotState(id, this.#ints, this.#floats, slot));
      }
    }
    for (const id of [...this.#slots.keys()]) if (!next.has(id)) this.#slots.delete(id);
  }

  override get(id: string): BackendState {
    return this.#states.get(id) ?? this.#local.get(id);
  }
  override peek(id: string): BackendState | undefined {
    return this.#states.get(id) ?? this.#local.peek(id);
  }
  override has(id: string): boolean {
    return this.#states.has(id) || this.#local.has(id);
  }
  override *all(): IterableIterator<BackendState> {
    yield* this.#states.values();
    yield* this.#local.all();
  }

  override observe(observer: RegistryObserver): () => void {
    this.#observers.push(observer);
    return () => {
      const i = this.#observers.indexOf(observer);
      if (i >= 0) this.#observers.splice(i, 1);
    };
  }

  override connected(id: string, latencyMs: number): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) {
      this.#local.connected(id, latencyMs);
      return;
    }
    const s = this.#states.get(id)!;
    Atomics.add(this.#ints, slot * INTS + ACTIVE, 1);
    Atomics.add(this.#ints, slot * INTS + TOTAL, 1);
    Atomics.store(this.#ints, slot * INTS + FAILURES, 0);
    if (this.#worker !== undefined) Atomics.add(this.#ints, this.#share(this.#worker, slot), 1);
    const e = s.latencyEwma;
    s.latencyEwma = latencyMs > e ? latencyMs : e + EWMA_DECAY * (latencyMs - e);
    for (const o of this.#observers) o.onConnected?.(s);
  }

  override connectFailed(id: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) this.#local.connectFailed(id);
    else Atomics.add(this.#ints, slot * INTS + FAILURES, 1);
    this.#onConnectFailed?.(id);
    this.noteConnectFailed(id);
  }

  /** Tells observers about a failure already counted (the owner hears a worker's failures here). */
  noteConnectFailed(id: string): void {
    const s = this.get(id);
    for (const o of this.#observers) o.onConnectFailed?.(s);
  }

  override responseSucceeded(id: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) this.#local.responseSucceeded(id);
    else Atomics.store(this.#ints, slot * INTS + FAILURES, 0);
  }

  override closed(id: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) {
      this.#local.closed(id);
      return;
    }
    if (this.#worker !== undefined) {
      const share = this.#share(this.#worker, slot);
      if (Atomics.load(this.#ints, share) <= 0) return;
      Atomics.sub(this.#ints, share, 1);
    }
    const at = slot * INTS + ACTIVE;
    if (Atomics.sub(this.#ints, at, 1) <= 0) Atomics.add(this.#ints, at, 1);
  }

  override setAvailable(id: string, available: boolean): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) {
      this.#local.setAvailable(id, available);
      return;
    }
    const at = slot * INTS + DOWN;
    if (Atomics.compareExchange(this.#ints, at, available ? 1 : 0, available ? 0 : 1) !== (available ? 1 : 0)) return;
    if (available) {
      this.#floats[slot * FLOATS + UP_SINCE] = this.now();
      Atomics.store(this.#ints, slot * INTS + FAILURES, 0);
    }
  }

  /** Owner: gives `ids` slots without dropping anyone (a reload's engine before it is swapped in). */
  reserve(ids: Iterable<string>): void {
    const now = this.#seeded ? this.now() : 0;
    for (const id of ids) if (!this.#slots.has(id)) this.#assign(id, now);
  }

  override retain(ids: Iterable<string>): string[] {
    const keep = new Set(ids);
    const dropped: string[] = [];
    for (const [id, slot] of this.#slots) {
      if (keep.has(id)) continue;
      this.#slots.delete(id);
      this.#states.delete(id);
      this.#free.push(slot);
      dropped.push(id);
    }
    dropped.push(...this.#local.retain([]));
    this.reserve(keep);
    this.#seeded = true;
    for (const id of dropped) for (const o of this.#observers) o.onRemoved?.(id);
    return dropped;
  }

  /** Owner: a worker died; its share of every backend's `active` is taken back. */
  forgetWorker(worker: number): void {
    const { capacity } = this.shared;
    for (let slot = 0; slot < capacity; slot++) {
      const share = this.#share(worker, slot);
      const n = Atomics.exchange(this.#ints, share, 0);
      if (n > 0) Atomics.sub(this.#ints, slot * INTS + ACTIVE, n);
    }
  }

  /** Index of worker `w`'s share of `active` for `slot`. */
  #share(w: number, slot: number): number {
    return this.shared.capacity * INTS + w * this.shared.capacity + slot;
  }

  #assign(id: string, upSince: number): void {
    // Fresh slots first; a freed slot is reused only when none is left (old connections on a
    // reused slot could otherwise decrement a stranger's count).
    const slot = this.#next < this.shared.capacity ? this.#next++ : this.#free.shift();
    if (slot === undefined) {
      this.#local.get(id).upSince = upSince;
      return;
    }
    this.#ints.fill(0, slot * INTS, slot * INTS + INTS);
    this.#floats[slot * FLOATS + EWMA] = 0;
    this.#floats[slot * FLOATS + UP_SINCE] = upSince;
    this.#slots.set(id, slot);
    this.#states.set(id, new SlotState(id, this.#ints, this.#floats, slot));
  }
}

/** Distinct backends a shared registry holds before it reuses freed slots. */
export const SHARED_CAPACITY = 16_384;

/** The registry a runtime starts with: shared buffers for the `worker` panel, a plain one otherwise. */
export function registryFor(panel: { readonly name: string; readonly threads?: number | undefined }): BackendRegistry {
  if (panel.name !== 'worker') return new BackendRegistry();
  return new SharedRegistry(allocateSharedState(SHARED_CAPACITY, workerThreads(panel.threads)));
}

/** The number of worker threads: `threads`, or one per available core. */
export function workerThreads(threads: number | undefined): number {
  return threads ?? Math.max(1, availableParallelism());
}
