/**
 * What the dashboard (`/ui`) reads besides the admin endpoints: the traffic history
 * (traffic.ts) and the reload history. One per admin listener, created with it and closed with it.
 *
 * 1. Reloads are heard on the `switchboard:reload` diagnostics channel (app/reload.ts publishes
 *    every outcome: ok, unchanged, failed with its errors); the last `RELOADS_KEPT` are kept.
 * 2. `data(since)` is the compact answer of `GET /ui/data`: config version and file, every
 *    backend as `/backends` shows it plus its connections per second, the traffic samples newer
 *    than `since`, cumulative totals, the reloads, and the `policies:` rules as `GET /policies`
 *    shows them (point, when, selectors, counts by action, keys held).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channels } from '../../src/base/diagnostics.ts';
import type { ReloadResult } from '../runtime/reload-result.ts';
import { backendsView } from './backend-control.ts';
import type { AdminDeps } from './deps.ts';
import { policiesView } from './policies-view.ts';
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
    subscribe(channels.reload.name, this.#onReload);
  }

  /** The answer of `GET /ui/data?since=<ms>`. */
  data(since: number) {
    const { engine } = this.#deps.runtime;
    const backends = (backendsView(this.#deps) as { id: string }[]).map((b) => ({
      ...b,
      rate: this.history.backendRate(b.id),
    }));
    return {
      version: engine.version,
      file: engine.loaded.file,
      startedAt: this.#startedAt,
      now: Date.now(),
      listeners: engine.loaded.config.listeners.map((l) => l.name),
      backends,
      traffic: { samples: this.history.since(since), totals: this.history.totals() },
      reloads: { counts: { ...this.#counts }, recent: this.#reloads },
      policies: policiesView(engine, this.#deps.metrics.policyActions).policies,
    };
  }

  close(): void {
    this.history.close();
    unsubscribe(channels.reload.name, this.#onReload);
  }
}
