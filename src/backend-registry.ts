/**
 * The backend registry: one record per configured `host:port`, shared by every operator and
 * panel (DESIGN "Backend registry"). Panels report connects, failures and closes; operators and
 * health checks read it. Records survive reloads for backends that stay (`retain`).
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
  /** Connect latency EWMA in milliseconds (0 until the first sample). */
  latencyEwma: number;
  /** When the backend became available (ms since epoch); slow start ramps from here. */
  upSince: number;
}

/** Listeners told when a backend crosses a health threshold (health checks subscribe). */
export interface RegistryObserver {
  onConnectFailed?(state: BackendState): void;
  onConnected?(state: BackendState): void;
}

const EWMA_DECAY = 0.3;

export class BackendRegistry {
  readonly #states = new Map<string, BackendState>();
  readonly #observers: RegistryObserver[] = [];
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The record for `id`, created on first sight. */
  get(id: string): BackendState {
    let s = this.#states.get(id);
    if (s === undefined) {
      s = { id, active: 0, total: 0, failures: 0, available: true, latencyEwma: 0, upSince: this.#now() };
      this.#states.set(id, s);
    }
    return s;
  }

  /** The record for `id` if one exists (read-only lookups on the hot path). */
  peek(id: string): BackendState | undefined {
    return this.#states.get(id);
  }

  has(id: string): boolean {
    return this.#states.has(id);
  }

  all(): IterableIterator<BackendState> {
    return this.#states.values();
  }

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
    s.latencyEwma = s.latencyEwma === 0 ? latencyMs : s.latencyEwma + EWMA_DECAY * (latencyMs - s.latencyEwma);
    for (const o of this.#observers) o.onConnected?.(s);
  }

  /** A connect to `id` failed (refused, reset or timed out). */
  connectFailed(id: string): void {
    const s = this.get(id);
    s.failures++;
    for (const o of this.#observers) o.onConnectFailed?.(s);
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

  /** Keeps the records of `ids` and drops the rest (after a reload). Returns the dropped ids. */
  retain(ids: Iterable<string>): string[] {
    const keep = new Set(ids);
    const dropped: string[] = [];
    for (const id of this.#states.keys()) {
      if (!keep.has(id)) {
        this.#states.delete(id);
        dropped.push(id);
      }
    }
    for (const id of keep) this.get(id);
    return dropped;
  }
}
