/**
 * The backends as the dashboard shows them (`GET /ui/data` `backends`): what `/backends` reports
 * (backend-control.ts), plus per backend what it served and, per cluster, its last health
 * probe and how long it has been in its state.
 *
 * | field (per backend)      | from                                                          |
 * |--------------------------|---------------------------------------------------------------|
 * | `rate`                   | connections opened per second (registry totals, traffic.ts)   |
 * | `served.rps`             | requests per second (app/metrics/backend-traffic.ts, traffic.ts) |
 * | `served.requests`, `classes`, `bytesIn`, `bytesOut` | counts since start (backend-traffic.ts) |
 * | `clusters[].lastCheck`   | `{ ok, at }` of the last settled probe, null before one (src/health) |
 * | `clusters[].state`, `since`, `sinceExact` | the state in that cluster and since when (state-clock.ts) |
 */
import { backendsView } from './backend-control.ts';
import type { AdminDeps } from './deps.ts';
import type { StateClock } from './state-clock.ts';
import type { TrafficHistory } from './traffic.ts';

const CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

interface ClusterView {
  readonly cluster: string;
  readonly healthy: boolean;
  readonly upSince: string | null;
}

interface BackendView {
  readonly id: string;
  readonly mode: string;
  readonly clusters: ClusterView[];
}

/** The state a backend is in for one cluster: its admin mode when not up, else that cluster's verdict. */
function stateIn(b: BackendView, c: ClusterView): string {
  if (b.mode !== 'up') return b.mode;
  return c.healthy ? 'up' : 'down';
}

/**
 * Advances `clock` with every backend's state in every cluster (dashboard.ts, once a second,
 * whether or not a page is open: a state change is timed when it happens, not when looked at).
 */
export function observeStates(deps: AdminDeps, clock: StateClock, now: number): void {
  const { registry } = deps.runtime;
  for (const s of registry.all()) {
    for (const c of registry.clusters(s.id)) {
      const state = s.mode !== 'up' ? s.mode : c.healthy ? 'up' : 'down';
      clock.observe(`${s.id}\u0000${c.cluster}`, state, now, c.upSince);
    }
  }
}

/** Every backend for the page; `clock` is advanced with the states seen now. */
export function dashboardBackends(deps: AdminDeps, history: TrafficHistory, clock: StateClock, now: number) {
  const { health } = deps.runtime;
  const traffic = deps.metrics.backendTraffic;
  const seen = new Set<string>();
  const out = (backendsView(deps) as BackendView[]).map((b) => {
    const counts = traffic.of(b.id);
    const clusters = b.clusters.map((c) => {
      const key = `${b.id}\u0000${c.cluster}`;
      seen.add(key);
      const state = stateIn(b, c);
      const period = clock.observe(key, state, now, c.upSince === null ? 0 : Date.parse(c.upSince));
      const probe = health.lastProbe(b.id, c.cluster);
      return {
        ...c,
        state,
        since: new Date(period.since).toISOString(),
        sinceExact: period.exact,
        lastCheck: probe === undefined ? null : { ok: probe.ok, at: new Date(probe.at).toISOString() },
      };
    });
    return {
      ...b,
      clusters,
      rate: history.backendRate(b.id),
      served: {
        rps: history.backendRequestRate(b.id),
        requests: counts.requests,
        classes: Object.fromEntries(CLASSES.map((k, i) => [k, counts.classes[i] ?? 0])),
        bytesIn: counts.bytesIn,
        bytesOut: counts.bytesOut,
      },
    };
  });
  clock.retain(seen);
  traffic.prune((id) => deps.runtime.registry.has(id));
  return out;
}
