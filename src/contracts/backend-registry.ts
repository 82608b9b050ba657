/**
 * The backend registry contract (DESIGN "Backend registry"): one record per configured
 * `host:port`, shared by every operator and panel. Two implementations: `LocalRegistry`
 * (src/registry/local.ts, one process) and `SharedRegistry` (src/registry/shared.ts, the
 * `worker` panel's threads over shared memory). Both keep the same two kinds of state:
 *
 *   per backend id             active, total, latencyEwma         (connection counts are global)
 *   per (cluster, backend id)  failures, available, upSince       (health is judged per cluster)
 *
 * A backend listed by two clusters has one connection count and two health records, each judged
 * under its own cluster's policy (src/health/). The scope `''` is the backend as a whole.
 *
 * 1. Panels call `connected(id, latencyMs)`, `connectFailed(id, cluster)` and `closed(id)`;
 *    per-request routing also reports `responseFailed(id, cluster)` / `responseSucceeded`.
 *    A report without a cluster (older callers) counts in every cluster that lists the backend.
 * 2. Operators read `get(id, cluster)` — the record of that backend as the request's cluster
 *    sees it: `active`, `latencyEwma` (global), `available` and `upSince` (slow start, per
 *    cluster). `get(id)` is the whole backend: down while any cluster holds it down.
 * 3. The health manager observes failures and calls `setAvailable(id, available, cluster)`;
 *    without a cluster it applies to every cluster (and to clusters that appear later).
 * 4. The runtime calls `retain(entries)` on every snapshot swap: records of removed backends are
 *    dropped (observers hear `onRemoved`, so health checks stop their timers); records of added
 *    backends start their slow-start ramp, except on the very first `retain` (process start).
 * 5. The admin API (app/admin/) sets a backend's runtime state with `setMode` (up, draining,
 *    disabled) and `setWeight` (an override of the configured weight). Both are per backend id,
 *    whatever cluster lists it, live beside the connection counters (shared memory for worker
 *    threads) and so last exactly as long as the record: across reloads while the backend stays.
 *    `available` folds the mode in (healthy and `up`), so every operator that skips unavailable
 *    backends honours a drain without knowing about it; `healthy` is the health verdict alone.
 */
import type { BackendEntry } from './types.ts';

/** A backend's runtime admin state: `up` takes traffic; `draining` and `disabled` take no new traffic. */
export type AdminMode = 'up' | 'draining' | 'disabled';

/** The modes by their stored code (index); shared memory stores the index. */
export const ADMIN_MODES: readonly AdminMode[] = ['up', 'draining', 'disabled'];

/** One backend's record, as one cluster sees it (or the whole backend: `cluster === ''`). Read-only. */
export interface BackendState {
  readonly id: string;
  /** The cluster whose health this record shows; '' = the backend as a whole. */
  readonly cluster: string;
  /** Connections currently open to this backend (all clusters). */
  readonly active: number;
  /** Connections ever opened (all clusters). */
  readonly total: number;
  /** Consecutive failures counted for this cluster (reset by a success). */
  readonly failures: number;
  /** May take new traffic: `healthy` and `mode === 'up'` (what operators check). */
  readonly available: boolean;
  /** False while health checks hold the backend down for this cluster (the health verdict alone). */
  readonly healthy: boolean;
  /** The admin state (all clusters): `draining` and `disabled` make `available` false. */
  readonly mode: AdminMode;
  /** The admin weight override (all clusters), replacing the configured weight; undefined = none. */
  readonly weightOverride: number | undefined;
  /** Peak EWMA of connect latency in milliseconds (0 until the first sample; all clusters). */
  readonly latencyEwma: number;
  /** When the backend became available to this cluster (ms since epoch); slow start ramps from here. 0 = always up. */
  readonly upSince: number;
}

/** Listeners told about connects, failures and removals (health checks subscribe). */
export interface RegistryObserver {
  /** A failure was counted in `state` (one call per cluster record it was counted in). */
  onConnectFailed?(state: BackendState): void;
  onConnected?(state: BackendState): void;
  /** The backend left the configuration (`retain`); stop whatever runs for it. */
  onRemoved?(id: string): void;
  /** The admin mode of `id` changed from `previous` to `mode` (health checks pause while `disabled`). */
  onModeChanged?(id: string, mode: AdminMode, previous: AdminMode): void;
}

/** What `retain` and `reserve` keep: a backend id, or a backend with the cluster that lists it. */
export type RegistryKey = string | Pick<BackendEntry, 'backend' | 'cluster'>;

/** The backend registry every operator, panel and health check uses. */
export interface BackendRegistry {
  /** The registry's clock (ms); injectable so slow-start tests control time. */
  now(): number;
  /** The record of `id` as `cluster` sees it ('' or absent: the whole backend), created on first sight. */
  get(id: string, cluster?: string): BackendState;
  /** The record if one exists (read-only lookups). */
  peek(id: string, cluster?: string): BackendState | undefined;
  /** True when a record exists for `id`. */
  has(id: string): boolean;
  /** Every backend as a whole, in insertion order. */
  all(): IterableIterator<BackendState>;
  /** The per-cluster records of `id` (admin `/backends`). */
  clusters(id: string): BackendState[];
  /** Subscribes `observer`; returns the function that unsubscribes it. */
  observe(observer: RegistryObserver): () => void;
  /** A connect to `id` succeeded after `latencyMs`; the connection counts as active. Resets failures (of `cluster`, or all). */
  /**
   * `success: false` when the cluster judges its backends by response status (`outlierStatus`):
   * then a connect alone does not break a streak of failed responses.
   */
  connected(id: string, latencyMs: number, cluster?: string, success?: boolean): void;
  /** A connect to `id` failed (refused, reset or timed out) for a request of `cluster` (absent: every cluster). */
  connectFailed(id: string, cluster?: string): void;
  /** A response matched the cluster's `outlierStatus`: counts like a failed connect. */
  responseFailed(id: string, cluster?: string): void;
  /** A response did not match `outlierStatus`: the failure streak is broken (BFE OnSuccess). */
  responseSucceeded(id: string, cluster?: string): void;
  /** A connection that `connected` counted has closed. */
  closed(id: string): void;
  /** Marks a backend down or up for `cluster` (absent: every cluster); coming back restarts slow start. */
  setAvailable(id: string, available: boolean, cluster?: string): void;
  /**
   * Sets the admin mode of `id` (every cluster); leaving draining/disabled restarts slow start.
   * Observers hear `onModeChanged` after the change.
   */
  setMode(id: string, mode: AdminMode): void;
  /** Sets (or with undefined clears) the weight override of `id` (every cluster). */
  setWeight(id: string, weight: number | undefined): void;
  /** A number that changes whenever a weight override changes (operators rebuild their pools). */
  weightEpoch(): number;
  /**
   * Keeps the records of `keys` and drops the rest (after a reload). Backends seen for the first
   * time start their slow-start ramp now, unless this is the first call. Returns the dropped ids.
   */
  retain(keys: Iterable<RegistryKey>): string[];
  /**
   * Optional: `retain` for a change, when every key names a cluster: `ids` listed no more,
   * `pairs` (id, cluster) listed no more while their id still is, `added` keys listed anew. Ends
   * as `retain(every key listed now)` would; undefined (nothing done) when records exist that no
   * `retain` listed: then call `retain`. Returns the dropped ids.
   */
  retainChange?(
    ids: Iterable<string>,
    pairs: Iterable<readonly [string, string]>,
    added: Iterable<RegistryKey>,
  ): string[] | undefined;
}
