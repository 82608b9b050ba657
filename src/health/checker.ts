/**
 * The health state machine of one backend under one policy (reference bfe.md §7, plus active
 * checking), for every cluster that lists the backend with that same policy:
 *
 *   NORMAL ──failNum consecutive failures in that cluster (passive)──► DOWN: probe every interval
 *     ▲      or failNum consecutive failed probes (active)                  │
 *     └──────────── succNum consecutive successful probes ◄─────────────────┘  (slow start restarts)
 *
 * Each cluster has its own record in the registry (`get(id, cluster)`): a passive trigger takes
 * down only the cluster whose failures reached `failNum`; probes are shared (one probe stream
 * per backend and policy, whatever the number of clusters) and each probe result is applied to
 * every cluster of the checker. Probes are chained (the next is scheduled when the last
 * settles), so they never overlap; a passive checker only probes while one of its clusters has
 * the backend down, an active one always. `close` clears the timer and aborts the probe in flight.
 * The cluster '' stands for the backend as a whole (entries that name no cluster).
 */
import type { BackendRegistry, BackendState } from '../backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../types.ts';
import { probe } from './probe.ts';

/**
 * Called when the checker moves a backend down or back up for `cluster` ('' = every cluster);
 * `reason` says why in words, for the log line.
 */
export type HealthListener = (backend: Backend, available: boolean, cluster: string, reason: string) => void;

/** Probes one backend and moves it down and up in the registry, per cluster. */
export class BackendChecker {
  readonly #registry: BackendRegistry;
  readonly #listener: HealthListener;
  #backend: Backend;
  #policy: HealthCheckPolicy;
  /** The clusters judged by this checker → consecutive probe successes while down there. */
  #clusters = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #inflight: AbortController | undefined;
  #closed = false;
  #probeFailures = 0;

  constructor(
    backend: Backend,
    policy: HealthCheckPolicy,
    registry: BackendRegistry,
    listener: HealthListener,
    clusters: readonly string[] = [''],
  ) {
    this.#backend = backend;
    this.#policy = policy;
    this.#registry = registry;
    this.#listener = listener;
    this.#setClusters(clusters);
    if (this.#wantsProbes()) this.#schedule();
  }

  /** True while a probe is scheduled or in flight. */
  get probing(): boolean {
    return this.#timer !== undefined || this.#inflight !== undefined;
  }

  /** The clusters this checker judges, in the order given. */
  get clusters(): string[] {
    return [...this.#clusters.keys()];
  }

  /** True when the checker judges `cluster`. */
  judges(cluster: string): boolean {
    return this.#clusters.has(cluster);
  }

  /** The policy it probes with. */
  get policy(): HealthCheckPolicy {
    return this.#policy;
  }

  /** Takes a new policy or cluster list (reload); starts or stops probing as now required. */
  update(backend: Backend, policy: HealthCheckPolicy, clusters: readonly string[] = ['']): void {
    this.#backend = backend;
    this.#policy = policy;
    this.#setClusters(clusters);
    this.recheck();
  }

  /** Starts or stops probing as the registry's records now require (what `update` ends with). */
  recheck(): void {
    if (this.#wantsProbes()) this.#schedule();
    else if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Passive trigger: real traffic failed `state.failures` consecutive times in `state.cluster`. */
  onConnectFailed(state: BackendState): void {
    if (this.#closed || !state.healthy || state.failures < this.#policy.failNum) return;
    const reason = `${state.failures} consecutive failures of real traffic (failNum ${this.#policy.failNum})`;
    this.#markDown([this.#clusters.has(state.cluster) ? state.cluster : ''], reason);
  }

  /** Stops the timer and aborts the probe in flight. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inflight?.abort();
    this.#inflight = undefined;
  }

  #setClusters(clusters: readonly string[]): void {
    const next = new Map<string, number>();
    for (const c of clusters) next.set(c, this.#clusters.get(c) ?? 0);
    this.#clusters = next;
  }

  #up(cluster: string): boolean {
    return this.#registry.get(this.#backend.id, cluster).healthy;
  }

  #wantsProbes(): boolean {
    if (this.#closed) return false;
    if (this.#policy.active) return true;
    for (const c of this.#clusters.keys()) if (!this.#up(c)) return true;
    return false;
  }

  #markDown(clusters: readonly string[], reason: string): void {
    for (const c of clusters) {
      this.#registry.setAvailable(this.#backend.id, false, c);
      this.#clusters.set(c, 0);
      this.#listener(this.#backend, false, c, reason);
    }
    this.#probeFailures = 0;
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

  /** Applies one probe result to every cluster: down ones count successes, up ones failures. */
  #record(ok: boolean): void {
    const id = this.#backend.id;
    const up: string[] = [];
    for (const [c, successes] of this.#clusters) {
      if (this.#up(c)) {
        up.push(c);
        continue;
      }
      const n = ok ? successes + 1 : 0;
      this.#clusters.set(c, n);
      if (n >= this.#policy.succNum) {
        this.#clusters.set(c, 0);
        this.#registry.setAvailable(id, true, c);
        this.#listener(this.#backend, true, c, `${n} consecutive successful ${this.#policy.type} probes (succNum)`);
      }
    }
    // A passive checker probes only for the clusters holding the backend down: its probes never
    // take it down elsewhere (that is what `active` is for).
    if (up.length === 0 || !this.#policy.active) return;
    this.#probeFailures = ok ? 0 : this.#probeFailures + 1;
    if (this.#probeFailures >= this.#policy.failNum) {
      this.#markDown(
        up,
        `${this.#probeFailures} consecutive failed ${this.#policy.type} probes (failNum ${this.#policy.failNum})`,
      );
    }
  }
}
