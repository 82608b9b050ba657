/**
 * The candidates of a routing explanation, backend by backend: what each one is worth to the
 * operator now and, when it is skipped or takes less than its weight, why.
 *
 * 1. Live (`POST /explain`, `switchboard route --admin`): each backend's record is read as the
 *    request's cluster sees it (`registry.get(id, cluster)`, the record the operators' pools
 *    read, src/contracts/backend-registry.ts): `available` (healthy and mode `up`), the admin
 *    weight override, `upSince` for slow start (src/routing/slow-start.ts, the operators' own
 *    ramp). A backend takes traffic when it is available with a weight above 0, which is what
 *    the operators skip by (operators/lib/pool.ts `eligible`).
 * 2. Why, in this order: the admin mode (drained, disabled: the layer that set it, who, when,
 *    from app/fleet/backend-state.ts), the health verdict (unhealthy in this cluster, with the
 *    last probe's result and time from the health manager), weight 0,
 *    a weight override, slow start (the percent of its weight it takes now).
 * 3. Assumed (offline `switchboard route`): no registry; every backend is up at its configured
 *    weight, and only a configured weight 0 is skipped.
 */
import type { BackendRegistry, BackendState } from '../../src/contracts/backend-registry.ts';
import type { Backend, Candidates } from '../../src/contracts/types.ts';
import { slowStartWeight } from '../../src/routing/slow-start.ts';
import type { OverridesView } from '../fleet/backend-state.ts';
import { stateOf } from '../metrics/backend-states.ts';

/** Where each backend's admin mode and weight were set (app/fleet/backend-state.ts `BackendStates.view`). */
export type OverrideLookup = (id: string) => OverridesView;

/** The last settled health probe of a backend judging a cluster (src/health/manager.ts `lastProbe`). */
export type ProbeLookup = (id: string, cluster: string) => { readonly ok: boolean; readonly at: number } | undefined;

/** The running router's backend state, as the explainer reads it. */
export interface LiveBackends {
  /** The registry the operators read (read-only: registry-view.ts). */
  readonly registry: BackendRegistry;
  readonly overrides?: OverrideLookup | undefined;
  readonly probes?: ProbeLookup | undefined;
}

/** One backend of a sub-cluster. */
export interface ExplainedBackend {
  readonly id: string;
  readonly name: string;
  /** The configured weight. */
  readonly weight: number;
  /** The weight the operator balances with now: the admin override where set, slow start applied. */
  readonly effectiveWeight: number;
  /** As `/backends` says it: the admin mode when not `up`, else the health verdict in this cluster. */
  readonly state: 'up' | 'down' | 'draining' | 'disabled';
  /** True when the operator may pick it for a new request now. */
  readonly takesTraffic: boolean;
  /** While slow start ramps it: the percent of its weight it takes now. */
  readonly slowStartPercent: number | undefined;
  /** Why it is skipped or takes less than its weight (step 2); undefined when neither. */
  readonly why: string | undefined;
}

/** The candidates' cluster as the explanation shows it. */
export interface ExplainedCluster {
  readonly name: string;
  readonly balance: string;
  readonly retries: number;
  readonly crossRetries: number;
  readonly subclusters: readonly {
    readonly name: string;
    readonly weight: number;
    readonly backends: readonly ExplainedBackend[];
  }[];
}

/** `local, by router-1 at 2026-12-05T06:00:00.000Z`: the layer that set a mode or weight. */
function layer(view: OverridesView | undefined, which: 'modeScope' | 'weightScope'): string | undefined {
  const scope = view?.[which];
  if (scope === undefined || scope === null) return undefined;
  const o = view?.overrides[scope];
  return o === undefined || o === null ? scope : `${scope}, by ${o.setBy} at ${o.setAt}`;
}

/** ` (a, b)` of the parts given, '' when none. */
function paren(...parts: (string | undefined)[]): string {
  const given = parts.filter((p) => p !== undefined);
  return given.length === 0 ? '' : ` (${given.join(', ')})`;
}

/** ` (last probe failed at …)`, '' before the first probe settles. */
function lastProbe(p: ReturnType<ProbeLookup>): string {
  return p === undefined ? '' : ` (last probe ${p.ok ? 'passed' : 'failed'} at ${new Date(p.at).toISOString()})`;
}

/** What step 2 reads besides the record. */
interface Context {
  readonly cluster: string;
  readonly percent: number | undefined;
  readonly view: OverridesView | undefined;
  readonly probe: ReturnType<ProbeLookup>;
}

/** Step 2 for a live record. */
function liveWhy(b: Backend, s: BackendState, { cluster, percent, view, probe }: Context) {
  const why: string[] = [];
  if (s.mode === 'draining') why.push(`drained${paren(layer(view, 'modeScope'))}`);
  if (s.mode === 'disabled') why.push(`disabled${paren(layer(view, 'modeScope'))}`);
  else if (!s.healthy) why.push(`unhealthy: health checks hold it down in cluster ${cluster}${lastProbe(probe)}`);
  const w = s.weightOverride;
  if (w !== undefined && w !== b.weight) {
    why.push(`weight ${Math.max(w, 0)}${paren(`admin override of ${b.weight}`, layer(view, 'weightScope'))}`);
  } else if ((w ?? b.weight) <= 0) why.push('weight 0 (configured)');
  if (percent !== undefined) {
    why.push(`slow start: ${percent}% of its weight (up since ${new Date(s.upSince).toISOString()})`);
  }
  return why.length === 0 ? undefined : why.join('; ');
}

/** Step 1–2: one backend as the operators see it now. */
function liveBackend(b: Backend, c: Candidates, live: LiveBackends): ExplainedBackend {
  const s = live.registry.get(b.id, c.cluster);
  const weight = Math.max(s.weightOverride ?? b.weight, 0);
  const slowMs = c.policy.slowStart;
  const ramped = slowMs > 0 ? slowStartWeight(weight, s, slowMs, live.registry.now()) : weight;
  // Slow start only matters to a backend that takes traffic.
  const percent = s.available && weight > 0 && ramped < weight ? Math.round((ramped / weight) * 1000) / 10 : undefined;
  return {
    id: b.id,
    name: b.name,
    weight: b.weight,
    effectiveWeight: ramped,
    state: stateOf(s),
    takesTraffic: s.available && weight > 0,
    slowStartPercent: percent,
    why: liveWhy(b, s, {
      cluster: c.cluster,
      percent,
      view: live.overrides?.(b.id),
      probe: s.healthy ? undefined : live.probes?.(b.id, c.cluster),
    }),
  };
}

/** Step 3: one backend assumed up at its configured weight. */
function assumedBackend(b: Backend): ExplainedBackend {
  const takes = b.weight > 0;
  return {
    id: b.id,
    name: b.name,
    weight: b.weight,
    effectiveWeight: b.weight,
    state: 'up',
    takesTraffic: takes,
    slowStartPercent: undefined,
    why: takes ? undefined : 'weight 0 (configured)',
  };
}

/** The cluster of `c`, each backend live (with `live`) or assumed up at its configured weight. */
export function explainCluster(c: Candidates, live: LiveBackends | undefined): ExplainedCluster {
  return {
    name: c.cluster,
    balance: c.policy.balance,
    retries: c.policy.retries,
    crossRetries: c.policy.crossRetries,
    subclusters: c.subclusters.map((s) => ({
      name: s.name,
      weight: s.weight,
      backends: s.backends.map((b) => (live === undefined ? assumedBackend(b) : liveBackend(b, c, live))),
    })),
  };
}
