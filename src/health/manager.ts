/**
 * The health manager: health is judged per (cluster, backend) under each cluster's own policy
 * (DESIGN "Backend registry"), but a backend is probed once per distinct policy:
 *
 *   entries (cluster, backend, policy)  ──group by (backend id, probe policy)──►  BackendChecker
 *     web  127.0.0.1:9001 tcp/1s/5 passive  ┐
 *     api  127.0.0.1:9001 tcp/1s/5 passive  ┴─► one checker, clusters [web, api]
 *     adm  127.0.0.1:9001 tcp/100ms/1 active ──► one checker, clusters [adm]
 *
 * 1. The runtime calls `update(entries)` on every snapshot swap; checkers are kept (by backend
 *    and policy), created or closed to match, and their cluster lists updated.
 * 2. The registry reports each counted failure with the cluster record it was counted in; the
 *    manager hands it to the checker that judges that cluster (or, for a cluster it has no
 *    checker for, to the backend's cluster-less checker, if any).
 * 3. Removed backends have their checkers closed, whether `update` or the registry's `retain`
 *    removes them first.
 * 4. The registry's admin mode changes go to the backend's checkers (checker.ts): `disabled`
 *    pauses their probes and withdraws the verdict; leaving it restarts the checks from DOWN.
 */
import type { Logger } from 'pino';
import type { BackendRegistry, BackendState } from '../contracts/backend-registry.ts';
import type { Backend, HealthCheckPolicy } from '../contracts/types.ts';
import { BackendChecker, type LastProbe } from './checker.ts';
import type { ProbePolicy, ProbeProxyMode } from './probe.ts';

/** One backend, the cluster that lists it, and that cluster's health-check policy. */
export interface HealthEntry {
  readonly backend: Backend;
  readonly policy: HealthCheckPolicy;
  /** The cluster listing the backend; absent or '' = the backend as a whole. */
  readonly cluster?: string | undefined;
  /** The cluster's outbound PROXY mode: probes send v2 LOCAL (or v1) first when it is on. */
  readonly proxyProtocol?: ProbeProxyMode | undefined;
}

/** What one checker does, for `/backends` and tests. */
export interface HealthCheck {
  readonly id: string;
  readonly clusters: readonly string[];
  readonly policy: ProbePolicy;
  readonly probing: boolean;
}

/** The policy a checker probes with: the health policy plus the PROXY mode (probe.ts reads it). */
function probePolicy(entry: HealthEntry): ProbePolicy {
  const mode = entry.proxyProtocol ?? 'off';
  return mode === 'off' ? entry.policy : { ...entry.policy, proxyProtocol: mode };
}

/** Fingerprints by policy object and backend id: a reload mostly hands the same policy objects. */
const fingerprints = new WeakMap<ProbePolicy, Map<string, string>>();

/** Two entries with the same fingerprint are probed by one checker. */
function fingerprint(id: string, p: ProbePolicy): string {
  let byId = fingerprints.get(p);
  if (byId === undefined) {
    byId = new Map();
    fingerprints.set(p, byId);
  }
  let f = byId.get(id);
  if (f === undefined) {
    f = fingerprintOf(id, p);
    byId.set(id, f);
  }
  return f;
}

function fingerprintOf(id: string, p: ProbePolicy): string {
  const { type, interval, timeout, failNum, succNum, active, path, host, statusCode } = p;
  return JSON.stringify([
    id,
    type,
    interval,
    timeout,
    failNum,
    succNum,
    active,
    path,
    host,
    statusCode,
    p.proxyProtocol ?? 'off',
  ]);
}

/** The key of (cluster, backend) in the failure routing table. */
function scope(id: string, cluster: string): string {
  return `${cluster}\u0000${id}`;
}

/** The entries probed by one checker: the first one's backend and policy, every cluster once. */
interface Group {
  backend: Backend;
  policy: ProbePolicy;
  clusters: string[];
  seen: Set<string>;
}

/** `entries` grouped by fingerprint, in order. */
function group(entries: Iterable<HealthEntry>): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const entry of entries) {
    const policy = probePolicy(entry);
    add(groups, fingerprint(entry.backend.id, policy), entry, policy);
  }
  return groups;
}

/** `add` one entry to its group (`seen`: a backend shared by a thousand clusters is grouped in linear time). */
function add(groups: Map<string, Group>, key: string, entry: HealthEntry, policy: ProbePolicy): void {
  const cluster = entry.cluster ?? '';
  const g = groups.get(key);
  if (g === undefined)
    groups.set(key, { backend: entry.backend, policy, clusters: [cluster], seen: new Set([cluster]) });
  else if (!g.seen.has(cluster)) {
    g.seen.add(cluster);
    g.clusters.push(cluster);
  }
}

/** The fingerprint of each entry of a list, made once per list (the lists `updateChange` scans). */
const listKeys = new WeakMap<readonly HealthEntry[], readonly string[]>();

function keysOf(list: readonly HealthEntry[]): readonly string[] {
  let keys = listKeys.get(list);
  if (keys === undefined) {
    keys = list.map((e) => fingerprint(e.backend.id, probePolicy(e)));
    listKeys.set(list, keys);
  }
  return keys;
}

/** Runs the health checks of every configured (cluster, backend) against one registry. */
export class HealthManager {
  readonly #registry: BackendRegistry;
  /** fingerprint → checker. */
  readonly #checkers = new Map<string, BackendChecker>();
  /** scope(id, cluster) → the checker judging it. */
  readonly #byScope = new Map<string, BackendChecker>();
  /** checker → its backend id (for removal). */
  readonly #ids = new Map<BackendChecker, string>();
  readonly #unobserve: () => void;
  readonly #logger: Logger | undefined;

  constructor(registry: BackendRegistry, logger?: Logger) {
    this.#registry = registry;
    this.#logger = logger;
    this.#unobserve = registry.observe({
      onConnectFailed: (state) => this.#failed(state),
      onRemoved: (id) => this.#remove(id),
      onModeChanged: (id, mode, previous) => {
        for (const [c, cid] of this.#ids) if (cid === id) c.modeChanged(mode, previous);
      },
    });
  }

  /**
   * Makes the checked set exactly `entries`: one checker per backend and distinct probe policy,
   * judging every cluster that lists the backend with that policy. Kept checkers take the new
   * cluster list (and backend object); the others are closed.
   */
  update(entries: Iterable<HealthEntry>): void {
    const groups = group(entries);
    for (const [key, c] of [...this.#checkers]) if (!groups.has(key)) this.#close(key, c);
    this.#byScope.clear();
    for (const [key, g] of groups) this.#apply(key, g, true);
  }

  /**
   * `update` for a change (app/runtime/backend-sync.ts): `removed` entries are listed no more, `added`
   * ones anew, `all` is every entry listed now, in lists kept while unchanged, in order. Only
   * the checkers of the (backend, policy) pairs these touch are rebuilt, from `all` in its order,
   * so each ends as `update(all)` leaves it; the others start or stop probing as `update` would
   * make them, nothing more.
   */
  updateChange(
    removed: readonly (readonly HealthEntry[])[],
    added: readonly (readonly HealthEntry[])[],
    all: Iterable<readonly HealthEntry[]>,
  ): void {
    const touched = new Set<string>();
    for (const list of [...removed, ...added]) for (const key of keysOf(list)) touched.add(key);
    const groups = new Map<string, Group>();
    if (touched.size > 0) {
      for (const list of all) {
        const keys = keysOf(list);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          if (touched.has(key)) add(groups, key, list[i]!, probePolicy(list[i]!));
        }
      }
    }
    for (const [key, c] of [...this.#checkers]) {
      if (!touched.has(key)) continue;
      const g = groups.get(key);
      const id = this.#ids.get(c)!;
      for (const cluster of c.clusters) if (g?.seen.has(cluster) !== true) this.#unscope(id, cluster, c);
      if (g === undefined) this.#close(key, c);
    }
    for (const [key, g] of groups) this.#apply(key, g, false);
    for (const [key, c] of this.#checkers) if (!touched.has(key)) c.recheck();
  }

  /**
   * Keeps (updated) or creates the checker of `key` for group `g` and routes its scopes to it
   * (`all`: every scope; otherwise those of clusters it did not judge before).
   */
  #apply(key: string, g: Group, all: boolean): void {
    let c = this.#checkers.get(key);
    if (c !== undefined) {
      for (const cluster of g.clusters)
        if (all || !c.judges(cluster)) this.#byScope.set(scope(g.backend.id, cluster), c);
      c.update(g.backend, g.policy, g.clusters);
      return;
    }
    c = new BackendChecker(g.backend, g.policy, this.#registry, this.#log, g.clusters);
    this.#checkers.set(key, c);
    this.#ids.set(c, g.backend.id);
    for (const cluster of g.clusters) this.#byScope.set(scope(g.backend.id, cluster), c);
  }

  #close(key: string, c: BackendChecker): void {
    c.close();
    this.#checkers.delete(key);
    this.#ids.delete(c);
  }

  #unscope(id: string, cluster: string, c: BackendChecker): void {
    const s = scope(id, cluster);
    if (this.#byScope.get(s) === c) this.#byScope.delete(s);
  }

  /** Ids of the backends under check (admin, tests), each once. */
  ids(): string[] {
    return [...new Set(this.#ids.values())];
  }

  /** Every checker: its backend, the clusters it judges and its policy (admin, tests). */
  checks(): HealthCheck[] {
    return [...this.#checkers.values()].map((c) => ({
      id: this.#ids.get(c)!,
      clusters: c.clusters,
      policy: c.policy,
      probing: c.probing,
    }));
  }

  /** True while a probe for `id` (judging `cluster`, when given) is scheduled or in flight. */
  probing(id: string, cluster?: string): boolean {
    if (cluster !== undefined) return this.#byScope.get(scope(id, cluster))?.probing ?? false;
    for (const [c, cid] of this.#ids) if (cid === id && c.probing) return true;
    return false;
  }

  /** The last settled probe of `id` judging `cluster` (undefined: none yet, or not checked). */
  lastProbe(id: string, cluster: string): LastProbe | undefined {
    return (this.#byScope.get(scope(id, cluster)) ?? this.#byScope.get(scope(id, '')))?.lastProbe;
  }

  /** Stops every checker and unsubscribes from the registry. */
  async close(): Promise<void> {
    this.#unobserve();
    for (const c of this.#checkers.values()) c.close();
    this.#checkers.clear();
    this.#byScope.clear();
    this.#ids.clear();
  }

  #failed(state: BackendState): void {
    const c = this.#byScope.get(scope(state.id, state.cluster)) ?? this.#byScope.get(scope(state.id, ''));
    c?.onConnectFailed(state);
  }

  #remove(id: string): void {
    for (const [key, c] of [...this.#checkers]) {
      if (this.#ids.get(c) !== id) continue;
      c.close();
      this.#checkers.delete(key);
      this.#ids.delete(c);
      for (const cluster of c.clusters) this.#byScope.delete(scope(id, cluster));
    }
  }

  readonly #log = (backend: Backend, available: boolean, cluster: string, reason: string): void => {
    const fields = cluster === '' ? { backend: backend.id, reason } : { backend: backend.id, cluster, reason };
    if (available) this.#logger?.info(fields, 'backend up');
    else this.#logger?.warn(fields, 'backend down');
  };
}
