/**
 * The admin endpoints, one small handler each. Every answer is JSON except `/metrics` (Prometheus
 * text) and the plain-text probes.
 *
 * | method | path      | answer                                                        |
 * |--------|-----------|---------------------------------------------------------------|
 * | GET    | /healthz  | 200 `ok` while the process runs                                |
 * | GET    | /readyz   | 200 `ready`; 503 `draining` once shutdown began, or `starting` |
 * | GET    | /metrics  | Prometheus text (src/metrics.ts)                               |
 * | GET    | /routes   | { version, routes }: the book's routing table, when it has one |
 * | GET    | /backends | { version, backends: [registry state + health] }               |
 * | GET    | /version  | { version, file }                                              |
 * | GET    | /certificates | { certificates: [file + acme], acme: [per-name state] } (app/certificates.ts) |
 * | POST   | /reload   | 200 { ok, changed, version }; 422 { ok: false, errors }          |
 *
 * server.ts runs auth.ts's checks before any handler here, so the handlers never see a refused
 * request; a refusal is answered by `refuse()` below.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RoutingTableSource } from '../../src/types.ts';
import type { AcmeManager } from '../acme/manager.ts';
import { certificatesReport } from '../certificates.ts';
import type { Metrics } from '../metrics.ts';
import type { Reloader } from '../reload.ts';
import type { Runtime } from '../runtime.ts';
import type { Refusal } from './auth.ts';

/** What the admin endpoints read. */
export interface AdminDeps {
  readonly runtime: Runtime;
  readonly metrics: Metrics;
  readonly reloader: Reloader;
  /** True once listeners are bound and until shutdown begins. */
  ready(): boolean;
  /** The ACME manager, when the router runs one. */
  readonly acme?: AcmeManager | undefined;
}

type Handler = (req: IncomingMessage, res: ServerResponse, deps: AdminDeps) => void | Promise<void>;

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, `${JSON.stringify(value, null, 2)}\n`, 'application/json');
}

function routingTable(deps: AdminDeps): unknown {
  const book = deps.runtime.engine.book as Partial<RoutingTableSource>;
  return typeof book.routingTable === 'function' ? book.routingTable() : null;
}

function backends(deps: AdminDeps): unknown[] {
  const { registry, health } = deps.runtime;
  const checked = new Set(health.ids());
  return [...registry.all()].map((s) => ({
    id: s.id,
    available: s.available,
    active: s.active,
    total: s.total,
    failures: s.failures,
    latencyEwmaMs: Math.round(s.latencyEwma * 1000) / 1000,
    upSince: isoTime(s.upSince),
    healthChecked: checked.has(s.id),
    probing: health.probing(s.id),
    // Health is judged per cluster: the fields above are the backend as a whole (down while any
    // cluster holds it down), these are each cluster's own verdict.
    clusters: registry.clusters(s.id).map((c) => ({
      cluster: c.cluster,
      available: c.available,
      failures: c.failures,
      upSince: isoTime(c.upSince),
      probing: health.probing(s.id, c.cluster),
    })),
  }));
}

function isoTime(ms: number): string | null {
  return ms === 0 ? null : new Date(ms).toISOString();
}

/** Answers a refused request: `{ ok: false, error: <code>, message }` with `X-Switchboard-Error`. */
export function refuse(res: ServerResponse, r: Refusal): void {
  res.setHeader('x-switchboard-error', r.code);
  if (r.status === 401) res.setHeader('www-authenticate', 'Bearer realm="switchboard-admin"');
  json(res, r.status, { ok: false, error: r.code, message: r.message });
}

const reload: Handler = async (_req, res, deps) => {
  const result = await deps.reloader.reload('api');
  json(res, result.ok ? 200 : 422, result);
};

/** The handlers by `METHOD path`. */
export const routes: ReadonlyMap<string, Handler> = new Map<string, Handler>([
  ['GET /healthz', (_q, res) => send(res, 200, 'ok\n')],
  [
    'GET /readyz',
    (_q, res, deps) => {
      if (deps.runtime.drain.draining) send(res, 503, 'draining\n');
      else if (!deps.ready()) send(res, 503, 'starting\n');
      else send(res, 200, 'ready\n');
    },
  ],
  ['GET /metrics', async (_q, res, deps) => send(res, 200, await deps.metrics.text(), deps.metrics.contentType)],
  [
    'GET /routes',
    (_q, res, deps) => json(res, 200, { version: deps.runtime.engine.version, routes: routingTable(deps) }),
  ],
  [
    'GET /backends',
    (_q, res, deps) => json(res, 200, { version: deps.runtime.engine.version, backends: backends(deps) }),
  ],
  [
    'GET /version',
    (_q, res, deps) => json(res, 200, { version: deps.runtime.engine.version, file: deps.runtime.engine.loaded.file }),
  ],
  ['GET /certificates', (_q, res, deps) => json(res, 200, certificatesReport(deps.runtime, deps.acme))],
  ['POST /reload', reload],
]);

/** The paths that exist (for 405 versus 404). */
export const knownPaths: ReadonlySet<string> = new Set([...routes.keys()].map((k) => k.split(' ')[1]!));
