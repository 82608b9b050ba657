/**
 * `GET /`: the index of the admin endpoints, one line each: JSON `{ endpoints: [{ method, path,
 * description }] }`, or plain text (`METHOD path  description`) when `Accept` prefers
 * `text/plain` over JSON (curl's default `*\/*` gets JSON). Built from the route table, so a
 * route added there is listed even before it has a line below.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One line per route key (`METHOD path`). */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  'GET /': 'this index',
  'GET /healthz': '200 ok while the process runs',
  'GET /readyz': '200 ready (says when the fleet is degraded); 503 starting or draining',
  'GET /metrics': 'Prometheus metrics',
  'GET /routes': "the address book's routing table",
  'GET /backends':
    'every backend: state (up/down/draining/disabled), weight, overrides (local, fleet: who, when), health, connections',
  'GET /version': 'the running config version and file',
  'GET /config': 'the effective config (defaults applied), secrets redacted',
  'GET /policies': 'the policies: rules in order (name, use, point, when, selectors), actions taken, keys held',
  'GET /fleet': 'the fleet (fleet:): this id, degraded, live members with version, config hash, last seen',
  'POST /reload': 'reload the config file now',
  'GET /backends/{id}': 'one backend as /backends shows it (drained: out of service with no connection left)',
  'POST /backends/{id}/drain':
    'no new connections or requests to the backend; open ones finish (?scope=fleet: every router)',
  'POST /backends/{id}/disable': 'take the backend out of service (open connections are kept; ?scope=fleet)',
  'POST /backends/{id}/enable': 'put the backend back in service (slow start ramps again; ?scope=fleet)',
  'POST /backends/{id}/weight': 'body {"weight": N, "scope"?}: override the configured weight (null clears)',
  'GET /ui': 'the dashboard (docs/dashboard.md)',
  'GET /ui/': 'the dashboard',
  'GET /ui/{file}': "the dashboard's static files",
  'GET /ui/data': 'the dashboard data: backends with rates, traffic samples (?since=ms), reloads',
  'POST /explain': 'body {host, path, method, headers, client, sni, …}: explain a route as `switchboard route`',
};

/** Quality of `type` in an Accept header (0 when absent). */
function quality(accept: string, type: string): number {
  let best = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2)) || 0;
    const t = type.split('/')[0];
    if (range === type || range === `${t}/*`) best = Math.max(best, value + 0.001);
    else if (range === '*/*') best = Math.max(best, value);
  }
  return best;
}

/** Answers the index for the route keys `keys`. */
export function indexOf(req: IncomingMessage, res: ServerResponse, keys: readonly string[]): void {
  const endpoints = keys.map((k) => {
    const [method, path] = k.split(' ') as [string, string];
    return { method, path, description: DESCRIPTIONS[k] ?? '' };
  });
  const accept = req.headers.accept ?? '';
  const text = accept !== '' && quality(accept, 'text/plain') > quality(accept, 'application/json');
  const body = text
    ? `${endpoints.map((e) => `${e.method.padEnd(5)} ${e.path.padEnd(28)} ${e.description}`.trimEnd()).join('\n')}\n`
    : `${JSON.stringify({ endpoints }, null, 2)}\n`;
  res.writeHead(200, {
    'content-type': text ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}
