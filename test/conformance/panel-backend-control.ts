/**
 * Panel conformance scenarios for the admin runtime control of backends (issue 19), part of the
 * table of panel.ts: a drained backend receives no new connection or request on any panel and
 * routing mode (net per-request and per-connection, http2 over HTTP/1 and h2c, worker threads of
 * either engine), while the request it is serving finishes; enable brings it back everywhere.
 * The drain is set once on the admin listener (main thread) and must reach every thread through
 * the backend registry, with no code of the panel's own.
 */
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect as h2Connect } from 'node:http2';
import { expect } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { KeepAliveClient } from '../harness/keep-alive-client.ts';
import { eventually, startTestRouter } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, runsHttp2, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';
const TOKEN = 'conformance';

/** An HTTP backend that counts requests and holds `/slow` until `release()`. */
interface GatedBackend extends TestBackend {
  readonly arrivals: string[];
  release(): void;
}

async function gatedBackend(name: string): Promise<GatedBackend> {
  const arrivals: string[] = [];
  const held: ServerResponse[] = [];
  let open = false;
  const answer = (res: ServerResponse) => {
    const body = JSON.stringify({ backend: name });
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': name, 'content-length': body.length });
    res.end(body);
  };
  const backend = await startHttpBackend(name, (req: IncomingMessage, res: ServerResponse) => {
    arrivals.push(req.url ?? '');
    if (req.url === '/slow' && !open) held.push(res);
    else answer(res);
  });
  return Object.assign(backend, {
    arrivals,
    release() {
      open = true;
      for (const res of held.splice(0)) answer(res);
    },
  });
}

/** POST `path` on the admin listener with the token and a JSON content type. */
function adminPost(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        path,
        method: 'POST',
        agent: false,
        headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The `x-backend` of one h2c request on a fresh session. */
function h2cBackend(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = h2Connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':path': '/', ':authority': HOST });
    stream.on('response', (h) => {
      stream.resume();
      stream.on('end', () => {
        session.close();
        resolve(String(h['x-backend']));
      });
    });
    stream.on('error', reject);
  });
}

/** Who answers `n` requests on fresh connections (HTTP/1.1, plus h2c on an http2 panel). */
async function answerers(port: number, n: number, h2: boolean): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(String((await httpGet(port, '/', { host: HOST })).headers['x-backend']));
  if (h2) for (let i = 0; i < n; i++) out.push(await h2cBackend(port));
  return out;
}

async function drainScenario(p: PanelUnderTest, routing: 'per-request' | 'per-connection'): Promise<void> {
  const a = await gatedBackend('a');
  const b = await gatedBackend('b');
  const byName = { a, b };
  const r = await startTestRouter({
    ...panelKeys(p),
    routing,
    admin: { address: '127.0.0.1:0', token: TOKEN },
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: {
        c: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }, { address: b.address }] } } },
      },
    },
  });
  const slow = new KeepAliveClient(r.port());
  try {
    const admin = r.router.admin!.address().port;
    // An open request on backend X, held by X until released.
    slow.send('/slow');
    await eventually(() => a.arrivals.includes('/slow') || b.arrivals.includes('/slow'), 4_000, '/slow to arrive');
    const x = a.arrivals.includes('/slow') ? 'a' : 'b';
    const y = x === 'a' ? 'b' : 'a';
    const before = byName[x].arrivals.length;

    expect(await adminPost(admin, `/backends/${byName[x].address}/drain`)).toBe(200);
    const after = await answerers(r.port(), 6, runsHttp2(p));
    expect(after).toEqual(after.map(() => y));
    expect(byName[x].arrivals.length).toBe(before);

    // The open request finishes on X.
    byName[x].release();
    expect(await slow.answer()).toBe(x);
    // The open connection: spliced to X per connection (it finishes there); per request, its
    // next request is routed anew and avoids X.
    slow.send('/');
    expect(await slow.answer()).toBe(routing === 'per-connection' ? x : y);

    expect(await adminPost(admin, `/backends/${byName[x].address}/enable`)).toBe(200);
    expect(await answerers(r.port(), 6, false)).toContain(x);
  } finally {
    slow.close();
    await r.close();
    await Promise.all([a.close(), b.close()]);
  }
}

export const backendControlScenarios: readonly Scenario[] = [
  {
    name: 'a drained backend takes no new request while its open request finishes (per-request routing)',
    spec: 'docs/admin-api.md POST /backends/{id}/drain; issue 19',
    run: (p) => drainScenario(p, 'per-request'),
  },
  {
    name: 'a drained backend takes no new connection while its open connection finishes (per-connection routing)',
    spec: 'docs/admin-api.md POST /backends/{id}/drain; issue 19',
    refusal: (p) =>
      runsHttp2(p)
        ? {
            config: {
              routing: 'per-connection',
              addressBook: {
                name: 'bfe',
                products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
                clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address: '127.0.0.1:1' }] } } } },
              },
            },
            error: /routing: per-connection is not supported by panel/,
          }
        : undefined,
    run: (p) => drainScenario(p, 'per-connection'),
  },
];
