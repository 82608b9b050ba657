/**
 * The health state machine of one backend (reference bfe.md §7, plus active checking):
 *
 *   NORMAL ──failNum consecutive connect failures (passive)──► DOWN: probe every interval
 *     ▲      or failNum consecutive failed probes (active)         │
 *     └──────────── succNum consecutive successful probes ◄────────┘  (slow start restarts)
 *
 * Probes are chained (the next is scheduled when the last settles), so they never overlap; a
 * passive checker only probes while the backend is down, an active one always. `close` clears
 * the timer and aborts the probe in flight.
 */
import type { BackendRegistry, BackendState } from '../backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../types.ts';
import { probe } from './probe.ts';

/** Called when the checker moves a backend down or back up. */
export type HealthListener = (backend: Backend, available: boolean) => void;

/** Probes one backend and moves it down and up in the registry. */
export class BackendChecker {
  readonly #registry: BackendRegistry;
  readonly #listener: HealthListener;
  #backend: Backend;
  #policy: HealthCheckPolicy;
  #timer: NodeJS.Timeout | undefined;
  #inflight: AbortController | undefined;
  #closed = false;
  #successes = 0;
  #probeFailures = 0;

  constructor(backend: Backend, policy: HealthCheckPolicy, registry: BackendRegistry, listener: HealthListener) {
    this.#backend = backend;
    this.#policy = policy;
    this.#registry = registry;
    this.#listener = listener;
    if (this.#wantsProbes()) this.#schedule();
  }

  /** True while a probe is scheduled or in flight. */
  get probing(): boolean {
    return this.#timer !== undefined || this.#inflight !== undefined;
  }

  /** Takes a new policy (reload); starts or stops probing as `active` now requires. */
  update(backend: Backend, policy: HealthCheckPolicy): void {
    this.#backend = backend;
    this.#policy = policy;
    if (this.#wantsProbes()) this.#schedule();
    else if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Passive trigger: real traffic failed to connect (`state.failures` consecutive). */
  onConnectFailed(state: BackendState): void {
    if (this.#closed || !state.available || state.failures < this.#policy.failNum) return;
    this.#markDown();
  }

  /** Stops the timer and aborts the probe in flight. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inflight?.abort();
    this.#inflight = undefined;
  }

  #wantsProbes(): boolean {
    return !this.#closed && (this.#policy.active || !this.#registry.get(this.#backend.id).available);
  }

  #markDown(): void {
    this.#registry.setAvailable(this.#backend.id, false);
    this.#successes = 0;
    this.#probeFailures = 0;
    this.#listener(this.#backend, false);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || this.probing) return;
    this.#timer = setTimeout(() => this.#run(), this.#policy.interval);
    this.#timer.unref();
  }

  #run(): void {
    this.#timer = undefined;
    const ac = new AbortController();
    this.#inflight = ac;
    void probe(this.#backend, this.#policy, ac.signal).then((ok) => {
      if (this.#inflight !== ac) return; // closed meanwhile
      this.#inflight = undefined;
      this.#record(ok);
      if (this.#wantsProbes()) this.#schedule();
    });
  }

  #record(ok: boolean): void {
    const id = this.#backend.id;
    if (!this.#registry.get(id).available) {
      this.#successes = ok ? this.#successes + 1 : 0;
      if (this.#successes >= this.#policy.succNum) {
        this.#successes = 0;
        this.#registry.setAvailable(id, true);
        this.#listener(this.#backend, true);
      }
      return;
    }
    this.#probeFailures = ok ? 0 : this.#probeFailures + 1;
    if (this.#probeFailures >= this.#policy.failNum) this.#markDown();
  }
}
