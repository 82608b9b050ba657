/**
 * The admin endpoints, one small handler each. Every answer is JSON except `/metrics` (Prometheus
 * text) and the plain-text probes.
 *
 * | method | path      | answer                                                        |
 * |--------|-----------|---------------------------------------------------------------|
 * | GET    | /healthz  | 200 `ok` while the process runs                                |
 * | GET    | /readyz   | 200 `ready` (`ready (fleet degraded: …)`); 503 `draining` once shutdown began, or `starting` |
 * | GET    | /metrics  | Prometheus text (src/metrics.ts)                               |
 * | GET    | /routes   | { version, book, routes }: the book's origin, own version and counts; its routing table, when it has one |
 * | GET    | /backends | { version, backends: [registry state + health] }               |
 * | GET    | /version  | { version, file }                                              |
 * | GET    | /fleet    | { id, degraded, members }; 404 { fleet: false } without `fleet:` (fleet-view.ts) |
 * | GET    | /certificates | { certificates: [file + acme], acme: [per-name state] } (app/metrics/certificates.ts) |
 * | POST   | /reload   | 200 { ok, changed, version }; 422 { ok: false, errors }          |
 * | GET    | /         | the index of these endpoints (index.ts)                        |
 * | GET    | /config   | the effective config, secrets redacted (config-view.ts)        |
 * | GET    | /backends/{id} | one backend; POST …/drain, /disable, /enable, /weight: backend-control.ts |
 * | GET    | /ui, /ui/{file}, /ui/data; POST /explain: the dashboard (ui-routes.ts)     |
 *
 * A `{name}` segment of a key matches one path segment (URL-decoded by its handler) and reaches
 * the handler as `params.name`; `findRoute` tries exact keys first.
 *
 * server.ts runs auth.ts's checks before any handler here, so the handlers never see a refused
 * request; a refusal is answered by `refuse()` below.
 */
import type { ServerResponse } from 'node:http';
import type { RoutingTableSource } from '../../src/contracts/types.ts';
import { certificatesReport } from '../metrics/certificates.ts';
import type { Refusal } from './auth.ts';
import { AdminError, backendsView, modeHandler, oneHandler, weightHandler } from './backend-control.ts';
import { configView } from './config-view.ts';
import type { AdminDeps, Handler } from './deps.ts';
import { indexOf } from './endpoints.ts';
import { fleetView } from './fleet-view.ts';
import { policiesView } from './policies-view.ts';
import { dataHandler, explainHandler, fileHandler, pageHandler, redirectHandler } from './ui-routes.ts';

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

export function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, `${JSON.stringify(value, null, 2)}\n`, 'application/json');
}

/** Where the routes come from, the book's own version, counts and updates since start (null: the book does not say). */
function routesBook(deps: AdminDeps): unknown {
  const s = deps.runtime.routes;
  return s === undefined ? null : { ...s.origin, ...s.counts, updates: s.updates };
}

function routingTable(deps: AdminDeps): unknown {
  const book = deps.runtime.engine.book as Partial<RoutingTableSource>;
  return typeof book.routingTable === 'function' ? book.routingTable() : null;
}

/** Answers a refused request: `{ ok: false, error: <code>, message }` with `X-Switchboard-Error`. */
export function refuse(res: ServerResponse, r: Pick<Refusal, 'status' | 'message'> & { code: string }): void {
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
      // Degraded is still ready: the router serves from its last state (docs/fleet.md).
      else if (deps.fleet?.degraded === true) send(res, 200, `ready (fleet degraded: ${deps.fleet.degradedReason})\n`);
      else send(res, 200, 'ready\n');
    },
  ],
  [
    'GET /metrics',
    async (q, res, deps) => {
      // OpenMetrics (exemplars) when the scraper asks for it; Prometheus text otherwise.
      const e = await deps.metrics.exposition(q.headers.accept);
      send(res, 200, e.body, e.contentType);
    },
  ],
  [
    'GET /routes',
    (_q, res, deps) =>
      json(res, 200, { version: deps.runtime.engine.version, book: routesBook(deps), routes: routingTable(deps) }),
  ],
  [
    'GET /backends',
    (_q, res, deps) => json(res, 200, { version: deps.runtime.engine.version, backends: backendsView(deps) }),
  ],
  [
    'GET /version',
    (_q, res, deps) => json(res, 200, { version: deps.runtime.engine.version, file: deps.runtime.engine.loaded.file }),
  ],
  ['GET /certificates', (_q, res, deps) => json(res, 200, certificatesReport(deps.runtime, deps.acme))],
  ['POST /reload', reload],
  ['GET /', (req, res) => indexOf(req, res, [...routes.keys()])],
  ['GET /config', (_q, res, deps) => json(res, 200, configView(deps.runtime.engine.loaded))],
  ['GET /policies', (_q, res, deps) => json(res, 200, policiesView(deps.runtime.engine, deps.metrics.policyActions))],
  [
    'GET /fleet',
    (_q, res, deps) =>
      deps.fleet === undefined ? json(res, 404, { fleet: false }) : json(res, 200, fleetView(deps.fleet)),
  ],
  ['GET /backends/{id}', oneHandler(json)],
  ['POST /backends/{id}/drain', modeHandler('draining', json)],
  ['POST /backends/{id}/disable', modeHandler('disabled', json)],
  ['POST /backends/{id}/enable', modeHandler('up', json)],
  ['POST /backends/{id}/weight', weightHandler(json)],
  ['GET /ui', redirectHandler],
  ['GET /ui/', pageHandler],
  ['GET /ui/data', dataHandler(json)],
  ['GET /ui/{file}', fileHandler],
  ['POST /explain', explainHandler(json)],
]);

/** Whether `pattern` (a route path, `{name}` segments allowed) matches `path`; its params if so. */
function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  if (!pattern.includes('{')) return pattern === path ? {} : undefined;
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith('{') && w.endsWith('}')) {
      if (got[i] === '') return undefined;
      params[w.slice(1, -1)] = got[i]!;
    } else if (w !== got[i]) return undefined;
  }
  return params;
}

/** The route of `method path`: its handler and params, `'method'` for a known path with another method, or undefined. */
export function findRoute(
  method: string,
  path: string,
): { handler: Handler; params: Record<string, string> } | 'method' | undefined {
  const exact = routes.get(`${method} ${path}`);
  if (exact !== undefined) return { handler: exact, params: {} };
  let other = false;
  for (const [key, handler] of routes) {
    const space = key.indexOf(' ');
    const params = matchPath(key.slice(space + 1), path);
    if (params === undefined) continue;
    if (key.slice(0, space) === method) return { handler, params };
    other = true;
  }
  return other ? 'method' : undefined;
}

/** Answers a handler's failure: an `AdminError` as JSON with its answer code, anything else 500. */
export function answerError(res: ServerResponse, err: unknown): boolean {
  if (!(err instanceof AdminError)) return false;
  refuse(res, { status: err.status, code: err.answer, message: err.message });
  return true;
}
