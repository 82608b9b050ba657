/**
 * What the dashboard (`/ui`) reads besides the admin endpoints: the traffic history
 * (traffic.ts) and the reload history. One per admin listener, created with it and closed with it.
 *
 * 1. Reloads are heard on the `switchboard:reload` diagnostics channel (app/reload.ts publishes
 *    every outcome: ok, unchanged, failed with its errors); the last `RELOADS_KEPT` are kept.
 * 2. `data(since)` is the compact answer of `GET /ui/data`: config version and file, every
 *    backend as `/backends` shows it plus what it served, its last probe and time in state
 *    (dashboard-backends.ts), each listener's address, TLS and certificates (listeners-view.ts),
 *    the traffic samples newer
 *    than `since`, cumulative totals, the reloads, and the `policies:` rules as `GET /policies`
 *    shows them (point, when, selectors, counts by action, keys held).
 * 3. Once a second (unref'd) every backend's state per cluster is noted in a `StateClock`
 *    (state-clock.ts), so "in state for" is timed when the state changes, watched or not.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channels } from '../../src/base/diagnostics.ts';
import type { ReloadResult } from '../runtime/reload-result.ts';
import { dashboardBackends, observeStates } from './dashboard-backends.ts';
import type { AdminDeps } from './deps.ts';
import { listenersView } from './listeners-view.ts';
import { policiesView } from './policies-view.ts';
import { StateClock } from './state-clock.ts';
import { TrafficHistory } from './traffic.ts';

/** Reloads remembered for the page. */
export const RELOADS_KEPT = 20;

/** One reload as the page shows it. */
export interface ReloadRecord extends ReloadResult {
  /** When it finished (ISO time). */
  readonly at: string;
}

export class Dashboard {
  readonly history: TrafficHistory;
  readonly #deps: AdminDeps;
  readonly #startedAt = new Date().toISOString();
  readonly #reloads: ReloadRecord[] = [];
  readonly #counts = { ok: 0, unchanged: 0, failed: 0 };
  readonly #clock = new StateClock();
  readonly #tick: NodeJS.Timeout;
  readonly #onReload = (message: unknown) => {
    const r = message as ReloadResult;
    this.#counts[!r.ok ? 'failed' : r.changed ? 'ok' : 'unchanged']++;
    this.#reloads.unshift({ ...r, errors: [...r.errors], at: new Date().toISOString() });
    this.#reloads.length = Math.min(this.#reloads.length, RELOADS_KEPT);
  };

  constructor(deps: AdminDeps, options: { intervalMs?: number } = {}) {
    this.#deps = deps;
    this.history = new TrafficHistory(deps.metrics, deps.runtime);
    this.history.start(options.intervalMs ?? 1000);
    this.#tick = setInterval(() => observeStates(deps, this.#clock, Date.now()), options.intervalMs ?? 1000);
    this.#tick.unref();
    subscribe(channels.reload.name, this.#onReload);
  }

  /** The answer of `GET /ui/data?since=<ms>`. */
  data(since: number) {
    const { engine } = this.#deps.runtime;
    const backends = dashboardBackends(this.#deps, this.history, this.#clock, Date.now());
    return {
      version: engine.version,
      file: engine.loaded.file,
      startedAt: this.#startedAt,
      now: Date.now(),
      listeners: engine.loaded.config.listeners.map((l) => l.name),
      listenerDetails: listenersView(this.#deps, this.history),
      // Whether GET /fleet answers (the page asks it only then: no 404 in the console).
      fleet: this.#deps.fleet !== undefined,
      backends,
      traffic: { samples: this.history.since(since), totals: this.history.totals() },
      reloads: { counts: { ...this.#counts }, recent: this.#reloads },
      policies: policiesView(engine, this.#deps.metrics.policyActions).policies,
    };
  }

  close(): void {
    this.history.close();
    clearInterval(this.#tick);
    unsubscribe(channels.reload.name, this.#onReload);
  }
}
