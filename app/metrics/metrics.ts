/**
 * Prometheus metrics (`GET /metrics`), one prom-client registry per router:
 *
 * 1. Event counts come from the diagnostics channels of src/base/diagnostics.ts (accept, route
 *    decided, upstream connect, request end, connection end, reload): the hot path publishes only
 *    while someone subscribes, so a router without an admin listener pays nothing.
 * 2. State (open connections per listener, backend up/down and active connections, config
 *    version) is read from the panel and the backend registry at scrape time (`collect`).
 * 3. Process metrics (`process_*`, `nodejs_*`: CPU, RSS, heap, open fds, event-loop lag, GC)
 *    from prom-client's default collectors, into this router's own registry (only the main
 *    thread has one: the worker panel's threads forward events, they register nothing).
 * 4. Per backend, where the panel frames requests (per-request routing, the http2 panel): one
 *    cheap count per request end (backend-requests.ts), labelled by the cluster and backend id
 *    from the config and the result code (bounded sets).
 * 5. `policy-actions.ts`: `switchboard_policy_actions_total{policy,action}`, from the same
 *    connection and request end records (their `policy` and `action`); `policy-keys.ts`:
 *    `switchboard_policy_keys{policy}`, each rule's key-table size at scrape time; both by rule for
 *    `GET /policies`.
 * 6. `access-log.ts`: `switchboard_access_log_lines_total{outcome,rule}`, the runtime's counts of
 *    lines written and skipped by `log.access.rules` (the worker panel's main thread judges every
 *    thread's lines), read at scrape time.
 * 7. `backend-traffic.ts`: per backend, requests, status classes and bytes for the dashboard, from
 *    the same request and connection end records (not exported to Prometheus).
 * 8. `close()` unsubscribes every channel.
 *
 * Channels are process-wide: two routers in one process (tests) would count each other's events.
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { channels } from '../../src/base/diagnostics.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Panel, Request } from '../../src/contracts/types.ts';
import { countsListeners } from '../../src/panel/capabilities.ts';
import type { BoundPanel } from '../../src/panel/contract.ts';
import type { Runtime } from '../runtime/runtime.ts';
import { accessLogLineCounter } from './access-log.ts';
import { BackendRequestMetrics } from './backend-requests.ts';
import { backendStateGauges } from './backend-states.ts';
import { BackendTraffic } from './backend-traffic.ts';
import { registerCertificateMetrics } from './certificates.ts';
import { type Exposition, exposition, wantsOpenMetrics } from './exposition.ts';
import { PolicyActions } from './policy-actions.ts';
import { policyKeyGauge } from './policy-keys.ts';
import { routesMetrics } from './routes.ts';

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The metrics of one router. */
export class Metrics {
  readonly registry = new Registry();
  /** What the `policies:` rules did, by rule and action (policy-actions.ts). */
  readonly policyActions: PolicyActions;
  /** What each backend served: requests, status classes, bytes (backend-traffic.ts; the dashboard). */
  readonly backendTraffic = new BackendTraffic();
  readonly #subscriptions: [string, (message: unknown) => void][] = [];
  /** Accept time by socket peer `ip:port`, for the peek duration (matched when the route is decided). */
  readonly #accepted = new Map<string, number>();

  readonly #panel: Panel;

  constructor(runtime: Runtime, panel: Panel) {
    this.#panel = panel;
    const registers = [this.registry];
    const policyActions = new PolicyActions(this.registry);
    this.policyActions = policyActions;
    const connections = new Counter({
      name: 'switchboard_connections_total',
      help: 'Client connections ended, by listener and result code (ok, no_route, overloaded, ...)',
      labelNames: ['listener', 'result'],
      registers,
    });
    new Gauge({
      name: 'switchboard_connections_open',
      help: 'Client connections open now, by listener',
      labelNames: ['listener'],
      registers,
      collect() {
        this.reset();
        // Panels without the ListenerCounts capability report nothing here.
        if (!countsListeners(panel)) return;
        for (const [listener, n] of Object.entries(panel.connectionsByListener())) this.set({ listener }, n);
      },
    });
    const requests = new Counter({
      name: 'switchboard_requests_total',
      help: 'HTTP/1 requests (per-request routing), by product, cluster and status',
      labelNames: ['product', 'cluster', 'status'],
      registers,
    });
    const backends = new BackendRequestMetrics(this.registry, SECONDS, (id) => runtime.registry.has(id));
    collectDefaultMetrics({ register: this.registry });
    const bytes = new Counter({
      name: 'switchboard_bytes_total',
      help: 'Bytes from clients (in) and to clients (out), by listener, counted when connections end',
      labelNames: ['listener', 'direction'],
      registers,
    });
    const peek = new Histogram({
      name: 'switchboard_peek_duration_seconds',
      help: 'Accept to route decided (PROXY header and head read, request parsed)',
      buckets: SECONDS,
      registers,
    });
    const connect = new Histogram({
      name: 'switchboard_upstream_connect_duration_seconds',
      help: 'Upstream connect attempts, by outcome',
      labelNames: ['outcome'],
      buckets: SECONDS,
      registers,
    });
    const total = new Histogram({
      name: 'switchboard_connection_duration_seconds',
      help: 'Client connection lifetime, accept to close',
      buckets: SECONDS,
      registers,
    });
    const retries = new Counter({
      name: 'switchboard_upstream_retries_total',
      help: 'Upstream connect attempts after the first for the same request',
      registers,
    });
    const exhausted = new Counter({
      name: 'switchboard_fd_exhausted_total',
      help: 'Upstream connects that failed because the router had no file descriptor left (EMFILE/ENFILE)',
      registers,
    });
    const reloads = new Counter({
      name: 'switchboard_reloads_total',
      help: 'Config reloads, by result (ok, failed, unchanged)',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['ok', 'failed', 'unchanged']) reloads.inc({ result }, 0);
    new Gauge({
      name: 'switchboard_backend_up',
      help: '1 when the backend is healthy, 0 while health checks hold it down',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const s of runtime.registry.all()) this.set({ backend: s.id }, s.healthy ? 1 : 0);
      },
    });
    backendStateGauges(registers, runtime.registry);
    policyKeyGauge(registers, () => runtime.engine.policies);
    accessLogLineCounter(registers, runtime.accessLogCounts);
    // The book's own version of the routes serving now, updates, counts (routes.ts).
    routesMetrics(registers, runtime);
    new Gauge({
      name: 'switchboard_backend_active_connections',
      help: 'Connections open to each backend',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const s of runtime.registry.all()) this.set({ backend: s.id }, s.active);
      },
    });
    new Gauge({
      name: 'switchboard_config_info',
      help: 'The loaded config version (sha256 prefix of the config text @ load time); always 1',
      labelNames: ['version'],
      registers,
      collect() {
        this.reset();
        this.set({ version: runtime.engine.version }, 1);
      },
    });

    registerCertificateMetrics(this.registry, runtime, (name, fn) => this.#on(name, fn));
    this.#on(channels.accept.name, (m) => {
      const { socket } = m as { socket: Socket };
      const key = `${socket.remoteAddress}:${socket.remotePort}`;
      this.#accepted.set(key, performance.now());
      socket.once('close', () => this.#accepted.delete(key));
    });
    this.#on(channels.routeDecided.name, (m) => {
      const { request } = m as { request: Request };
      // Without PROXY the client is the socket peer; with it the match fails and no sample is taken.
      const at = this.#accepted.get(`${request.peerIp}:${request.clientPort}`);
      if (at !== undefined) peek.observe((performance.now() - at) / 1000);
      this.#accepted.delete(`${request.peerIp}:${request.clientPort}`);
    });
    this.#on(channels.upstreamConnect.name, (m) => {
      const e = m as { attempt: number; ok: boolean; latencyMs: number; exhausted?: boolean };
      if (e.exhausted === true) exhausted.inc();
      else connect.observe({ outcome: e.ok ? 'ok' : 'failed' }, e.latencyMs / 1000);
      if (e.attempt > 1) retries.inc();
    });
    this.#on(channels.requestEnd.name, (m) => {
      const { record } = m as { record: AccessRecord };
      policyActions.noteRequest(record);
      this.backendTraffic.noteRequest(record);
      requests.inc({
        product: record.product ?? '',
        cluster: record.cluster ?? '',
        status: String(record.status ?? 0),
      });
      // Only requests that reached a backend: its id comes from the config (bounded labels).
      const backend = record.backend;
      if (backend === undefined) return;
      const cluster = record.cluster ?? '';
      backends.record(cluster, backend, record.result, record.durationMs / 1000, record.trace_id);
    });
    this.#on(channels.connectionEnd.name, (m) => {
      const { record } = m as { record: AccessRecord };
      policyActions.noteConnection(record);
      this.backendTraffic.noteConnection(record);
      connections.inc({ listener: record.listener, result: record.result });
      bytes.inc({ listener: record.listener, direction: 'in' }, record.bytesIn);
      bytes.inc({ listener: record.listener, direction: 'out' }, record.bytesOut);
      total.observe(record.durationMs / 1000);
    });
    this.#on(channels.reload.name, (m) => {
      const { ok, changed } = m as { ok: boolean; changed?: boolean };
      reloads.inc({ result: !ok ? 'failed' : changed === false ? 'unchanged' : 'ok' });
    });
  }

  #on(name: string | symbol, fn: (message: unknown) => void): void {
    subscribe(name, fn);
    this.#subscriptions.push([name as string, fn]);
  }

  /** The listeners' bound addresses (port 0 resolved) by name, when the panel reports them (the dashboard). */
  boundAddresses(): Record<string, { host: string; port: number }> {
    const p = this.#panel as Partial<BoundPanel>;
    return typeof p.addresses === 'function' ? p.addresses() : {};
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition `accept` asks for: OpenMetrics (with exemplars) or, by default, Prometheus text. */
  exposition(accept: string | undefined): Promise<Exposition> {
    return exposition(this.registry, wantsOpenMetrics(accept));
  }

  /** The exposition's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Unsubscribes from every channel. */
  close(): void {
    for (const [name, fn] of this.#subscriptions.splice(0)) unsubscribe(name, fn);
    this.#accepted.clear();
  }
}
