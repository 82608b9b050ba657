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
 *
 * Maintenance (HAProxy's `disable server`): while the admin API holds the backend `disabled`
 * no probe is sent (`modeChanged` clears the timer and aborts the probe in flight) and the
 * verdict is withdrawn (every cluster marked down: a verdict nobody checks is not shown as
 * healthy). Leaving `disabled` (for `up` or `draining`) restarts the checks from DOWN: a probe
 * at once, then every interval, and the backend takes traffic again after `succNum` successful
 * probes, never on the verdict it had before. `draining` keeps its checks (HAProxy's drain).
 */
import type { AdminMode, BackendRegistry, BackendState } from '../contracts/backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../contracts/types.ts';
import { probe } from './probe.ts';

/**
 * Called when the checker moves a backend down or back up for `cluster` ('' = every cluster);
 * `reason` says why in words, for the log line.
 */
export type HealthListener = (backend: Backend, available: boolean, cluster: string, reason: string) => void;

/** One settled probe: its verdict and when it settled (ms since epoch). */
export interface LastProbe {
  readonly ok: boolean;
  readonly at: number;
}

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
  #lastProbe: LastProbe | undefined;

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
    if (this.#disabled()) this.#withdraw('disabled through the admin API: health checks paused');
    else if (this.#wantsProbes()) this.#schedule();
  }

  /** True while a probe is scheduled or in flight. */
  get probing(): boolean {
    return this.#timer !== undefined || this.#inflight !== undefined;
  }

  /** The result of the last probe that settled and when (undefined before the first; the dashboard). */
  get lastProbe(): LastProbe | undefined {
    return this.#lastProbe;
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

  /**
   * The admin mode of the backend changed (src/contracts/backend-registry.ts `setMode`): entering
   * `disabled` pauses the checks and withdraws the verdict; leaving it restarts them from DOWN.
   */
  modeChanged(mode: AdminMode, previous: AdminMode): void {
    if (this.#closed) return;
    if (mode === 'disabled') {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#inflight?.abort();
      this.#inflight = undefined;
      this.#withdraw('disabled through the admin API: health checks paused');
    } else if (previous === 'disabled') {
      this.#withdraw('enabled through the admin API: health checks restart, up after succNum probes');
      this.#probeFailures = 0;
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      if (this.#inflight === undefined) this.#schedule(0);
    }
  }

  /** Passive trigger: real traffic failed `state.failures` consecutive times in `state.cluster`. */
  onConnectFailed(state: BackendState): void {
    if (this.#closed || this.#disabled() || !state.healthy || state.failures < this.#policy.failNum) return;
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

  /** True while the admin API holds the backend in maintenance (no probe is sent). */
  #disabled(): boolean {
    return this.#registry.get(this.#backend.id).mode === 'disabled';
  }

  /** Marks every cluster down without probing (entering or leaving maintenance), logging those that were up. */
  #withdraw(reason: string): void {
    for (const c of this.#clusters.keys()) {
      this.#clusters.set(c, 0);
      if (!this.#up(c)) continue;
      this.#registry.setAvailable(this.#backend.id, false, c);
      this.#listener(this.#backend, false, c, reason);
    }
  }

  #wantsProbes(): boolean {
    if (this.#closed || this.#disabled()) return false;
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

  #schedule(delay = this.#policy.interval): void {
    if (this.#closed || this.probing || this.#disabled()) return;
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }

  #run(): void {
    this.#timer = undefined;
    const ac = new AbortController();
    this.#inflight = ac;
    void probe(this.#backend, this.#policy, ac.signal).then((ok) => {
      if (this.#inflight !== ac) return; // closed meanwhile
      this.#inflight = undefined;
      this.#lastProbe = { ok, at: Date.now() };
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
