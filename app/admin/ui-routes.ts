/**
 * The dashboard's endpoints on the admin listener:
 *
 * | method | path          | answer                                                             |
 * |--------|---------------|--------------------------------------------------------------------|
 * | GET    | /ui/          | the page (ui/index.html); `/ui` redirects here                     |
 * | GET    | /ui/{file}    | its static files (ui/*.js, *.css): the shell, no data              |
 * | GET    | /ui/data      | `Dashboard.data`: backends, traffic samples (`?since=<ms>`), reloads |
 * | POST   | /explain      | the route explanation of app/explain/explain.ts, as `switchboard route` prints it |
 *
 * The static files are the shell of the page and hold no data: they pass the Host check like
 * every admin path but not the token (auth.ts `shell`), so the page can load and then ask for
 * the token. Everything with data (`/ui/data`, `/routes`, `/explain`, the controls) needs it.
 * The files are read from the package (app/admin/ui/), no build step; answers carry a strict
 * Content-Security-Policy (own origin only, no inline script, no framing).
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ExplainInputError, explainRoute } from '../explain/explain.ts';
import { formatRouteExplanation } from '../explain/format.ts';
import { openLiveExplain } from '../explain/live.ts';
import { AdminError, readJson } from './backend-control.ts';
import type { AdminDeps } from './deps.ts';

const DIR = new URL('./ui/', import.meta.url);

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** The files served under /ui/ (read once: the folder ships with the package). */
const FILES: ReadonlySet<string> = new Set(
  readdirSync(DIR).filter((f) => /^[a-z0-9-]+\.(html|js|css|svg)$/.test(f) && f !== 'README.md'),
);

/** The paths of the page's shell (auth.ts serves them without the token). */
export const SHELL_PATHS: readonly string[] = ['/ui', '/ui/', ...[...FILES].map((f) => `/ui/${f}`)];

const SECURITY = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

type Params = Readonly<Record<string, string>>;
type Answer = (res: ServerResponse, status: number, value: unknown) => void;

async function serveFile(res: ServerResponse, name: string): Promise<void> {
  if (!FILES.has(name)) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  const body = await readFile(new URL(name, DIR));
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  res.writeHead(200, { ...SECURITY, 'content-type': type, 'content-length': body.length });
  res.end(body);
}

/** `GET /ui/`: the page. */
export function pageHandler(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  return serveFile(res, 'index.html');
}

/** `GET /ui`: to `/ui/`, so the page's relative URLs (`data`, `../routes`) work behind a path prefix too. */
export function redirectHandler(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(308, { location: 'ui/', 'content-length': 0, 'cache-control': 'no-store' }).end();
}

/** `GET /ui/{file}`. */
export function fileHandler(_req: IncomingMessage, res: ServerResponse, _deps: AdminDeps, params: Params) {
  return serveFile(res, params.file ?? '');
}

/** `GET /ui/data?since=<ms>`. */
export function dataHandler(json: Answer) {
  return (req: IncomingMessage, res: ServerResponse, deps: AdminDeps): void => {
    if (deps.dashboard === undefined) throw new AdminError(404, 'not_found', 'admin: the dashboard is not running');
    const since = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('since') ?? 0);
    json(res, 200, deps.dashboard.data(Number.isFinite(since) ? since : 0));
  };
}

/** The body of `POST /explain`: `switchboard route`'s flags as JSON. */
interface ExplainBody {
  host?: string;
  path?: string;
  method?: string;
  /** `NAME: VALUE` lines, as `--header`. */
  headers?: string[];
  client?: string;
  sni?: string;
  /** Comma-separated, as `--alpn`. */
  alpn?: string;
  vip?: string;
  listener?: string;
}

const STRINGS = ['host', 'path', 'method', 'client', 'sni', 'alpn', 'vip', 'listener'] as const;

function parseExplainBody(body: unknown): ExplainBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AdminError(
      400,
      'bad_request',
      'admin: expected a JSON object {host, path, method, headers, client, sni}',
    );
  }
  const out: ExplainBody = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === null || v === '') continue;
    if (k === 'headers') {
      if (!Array.isArray(v) || !v.every((h) => typeof h === 'string')) {
        throw new AdminError(400, 'bad_request', 'admin: headers must be a list of "NAME: VALUE" strings');
      }
      out.headers = v;
    } else if ((STRINGS as readonly string[]).includes(k)) {
      if (typeof v !== 'string') throw new AdminError(400, 'bad_request', `admin: ${k} must be a string`);
      out[k as (typeof STRINGS)[number]] = v;
    } else throw new AdminError(400, 'bad_request', `admin: unknown field ${JSON.stringify(k)}`);
  }
  return out;
}

function parseHeaders(list: readonly string[]): [string, string][] {
  return list.map((h) => {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new ExplainInputError(`--header ${JSON.stringify(h)}: expected NAME:VALUE`);
    return [h.slice(0, colon).trim(), h.slice(colon + 1).trim()];
  });
}

/**
 * `POST /explain`: the explanation on the running router's live state (app/explain/live.ts): the
 * address book and `policies:` rules traffic uses now, and a fresh instance of the configured
 * operator over the runtime's backend registry (read-only), so attempt 1 skips what the data
 * plane skips now (unhealthy, drained, disabled, weight 0, in either scope) and weighs what it
 * weighs (overrides, slow start); each candidate says why, and a note gives the all-healthy
 * answer when it differs. The live operator is not advanced. The `policies:` lines come from the
 * running rule set, asked without side effects (no token or slot taken).
 * 200 `{ ok, routed, exitCode, text, explanation }`; 400 `bad_request` for what the CLI calls a
 * usage error (`message` is the CLI's stderr line).
 */
export function explainHandler(json: Answer) {
  return async (req: IncomingMessage, res: ServerResponse, deps: AdminDeps): Promise<void> => {
    const body = parseExplainBody(await readJson(req));
    const { engine, registry, health } = deps.runtime;
    const live = await openLiveExplain(engine, registry, {
      overrides: (id) => deps.backendStates.view(id),
      probes: (id, cluster) => health.lastProbe(id, cluster),
    });
    try {
      const explanation = explainRoute(live.engine, {
        host: body.host,
        path: body.path ?? '/',
        method: body.method ?? 'GET',
        headers: parseHeaders(body.headers ?? []),
        clientIp: body.client ?? '127.0.0.1',
        sni: body.sni,
        alpn: body.alpn?.split(',').map((s) => s.trim()),
        vip: body.vip,
        listener: body.listener,
      });
      json(res, 200, {
        ok: true,
        routed: explanation.routed,
        exitCode: explanation.routed ? 0 : 1,
        text: formatRouteExplanation(explanation),
        explanation: JSON.parse(JSON.stringify(explanation, (_k, v: unknown) => (v === undefined ? null : v))),
      });
    } catch (e) {
      if (e instanceof ExplainInputError) throw new AdminError(400, 'bad_request', `route: ${e.message}`);
      throw e;
    } finally {
      await live.close();
    }
  };
}
