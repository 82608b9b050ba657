/**
 * The backend registry: one record per configured `host:port`, shared by every operator and
 * panel (DESIGN "Backend registry"). Panels report connects, failures and closes; operators and
 * health checks read it. Records survive reloads for backends that stay (`retain`).
 *
 * 1. Panels call `connected(id, latencyMs)`, `connectFailed(id)` and `closed(id)`; per-request
 *    routing also reports `responseFailed(id)` / `responseSucceeded(id)` (outlier statuses).
 * 2. Operators read `active`, `available`, `latencyEwma` and `upSince` (slow start).
 * 3. The health manager observes connect failures and calls `setAvailable`.
 * 4. The runtime calls `retain(ids)` on every snapshot swap: records of removed backends are
 *    dropped (observers hear `onRemoved`, so health checks stop their timers); records of added
 *    backends start their slow-start ramp, except on the very first `retain` (process start).
 */

/** Per-backend state. Mutable by the registry only; everyone else reads. */
export interface BackendState {
  readonly id: string;
  /** Connections currently open to this backend. */
  active: number;
  /** Connections ever opened. */
  total: number;
  /** Consecutive connect failures (reset by a success). */
  failures: number;
  /** False while health checks hold the backend down. */
  available: boolean;
  /** Peak EWMA of connect latency in milliseconds (0 until the first sample). */
  latencyEwma: number;
  /** When the backend became available (ms since epoch); slow start ramps from here. 0 = always up. */
  upSince: number;
}

/** Listeners told about connects, failures and removals (health checks subscribe). */
export interface RegistryObserver {
  onConnectFailed?(state: BackendState): void;
  onConnected?(state: BackendState): void;
  /** The backend left the configuration (`retain`); stop whatever runs for it. */
  onRemoved?(id: string): void;
}

/** Weight of a new sample in the latency EWMA when it is not a new peak. */
const EWMA_DECAY = 0.3;

export class BackendRegistry {
  readonly #states = new Map<string, BackendState>();
  readonly #observers: RegistryObserver[] = [];
  readonly #now: () => number;
  #seeded = false;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The registry's clock (ms); injectable so slow-start tests control time. */
  now(): number {
    return this.#now();
  }

  /** The record for `id`, created on first sight (as an old, fully ramped backend). */
  get(id: string): BackendState {
    let s = this.#states.get(id);
    if (s === undefined) {
      s = { id, active: 0, total: 0, failures: 0, available: true, latencyEwma: 0, upSince: 0 };
      this.#states.set(id, s);
    }
    return s;
  }

  /** The record for `id` if one exists (read-only lookups on the hot path). */
  peek(id: string): BackendState | undefined {
    return this.#states.get(id);
  }

  /** True when a record exists for `id`. */
  has(id: string): boolean {
    return this.#states.has(id);
  }

  /** Every record, in insertion order. */
  all(): IterableIterator<BackendState> {
    return this.#states.values();
  }

  /** Subscribes `observer`; returns the function that unsubscribes it. */
  observe(observer: RegistryObserver): () => void {
    this.#observers.push(observer);
    return () => {
      const i = this.#observers.indexOf(observer);
      if (i >= 0) this.#observers.splice(i, 1);
    };
  }

  /** A connect to `id` succeeded after `latencyMs`; the connection now counts as active. */
  connected(id: string, latencyMs: number): void {
    const s = this.get(id);
    s.active++;
    s.total++;
    s.failures = 0;
    // Peak EWMA: a slower sample is taken at once, a faster one decays in (tower/Finagle PeakEwma).
    s.latencyEwma = latencyMs > s.latencyEwma ? latencyMs : s.latencyEwma + EWMA_DECAY * (latencyMs - s.latencyEwma);
    for (const o of this.#observers) o.onConnected?.(s);
  }

  /** A connect to `id` failed (refused, reset or timed out). */
  connectFailed(id: string): void {
    const s = this.get(id);
    s.failures++;
    for (const o of this.#observers) o.onConnectFailed?.(s);
  }

  /**
   * A response from `id` matched its cluster's `outlierStatus`: it counts toward the same
   * consecutive-failure counter as a failed connect, so passive health checks see it alike.
   */
  responseFailed(id: string): void {
    this.connectFailed(id);
  }

  /** A response from `id` did not match `outlierStatus`: the failure streak is broken (BFE OnSuccess). */
  responseSucceeded(id: string): void {
    const s = this.#states.get(id);
    if (s !== undefined) s.failures = 0;
  }

  /** A connection to `id` that `connected` counted has closed. */
  closed(id: string): void {
    const s = this.#states.get(id);
    if (s !== undefined && s.active > 0) s.active--;
  }

  /** Marks a backend down or back up; coming back restarts its slow-start ramp. */
  setAvailable(id: string, available: boolean): void {
    const s = this.get(id);
    if (s.available === available) return;
    s.available = available;
    if (available) {
      s.upSince = this.#now();
      s.failures = 0;
    }
  }

  /**
   * Keeps the records of `ids` and drops the rest (after a reload). Backends seen for the first
   * time start their slow-start ramp now, unless this is the first call. Returns the dropped ids.
   */
  retain(ids: Iterable<string>): string[] {
    const keep = new Set(ids);
    const dropped: string[] = [];
    for (const id of this.#states.keys()) {
      if (!keep.has(id)) {
        this.#states.delete(id);
        dropped.push(id);
      }
    }
    const now = this.#seeded ? this.#now() : 0;
    for (const id of keep) {
      if (!this.#states.has(id)) this.get(id).upSince = now;
    }
    this.#seeded = true;
    for (const id of dropped) for (const o of this.#observers) o.onRemoved?.(id);
    return dropped;
  }
}
