/**
 * Panel conformance scenarios for issue 42 item 6 at the request points (`request`, `routed`),
 * part of the table of panel.ts. One implementation per promise: the net panels are asked with
 * HTTP/1.1 on raw connections, the http2 panels with HTTP/2 streams on one session (h2c, or h2
 * over TLS), and each row checks the documented semantics of the panel's mode
 * (docs/policies.md "Points": per-request routing and HTTP/2 ask every request or stream;
 * per-connection routing the first request only, and an answer closes the connection).
 *
 * - A request blocked at `request` is answered 403; the next request on the same connection (h2:
 *   the next stream of the session) is forwarded byte-identical (the backend answers the sha256
 *   of the body it got).
 * - `rate-limit` 10/s burst 10 by client address, 50 requests at once: 10 (at most 11; one more
 *   per 100 ms if a loaded machine took longer to decide them all) reach the backend, the rest
 *   get 429 with an integer `Retry-After` ≥ 1.
 * - `in-flight` max 2, 5 held requests: 2 reach the backend, 3 get 429; once the 2 complete the
 *   next request passes (the holds came back).
 * - `redirect` to https 308: the exact `Location` with the query on the plain listener, no
 *   backend hit; not fired on the TLS-terminating listener (the request is forwarded).
 * - A request rate limit of burst 8 passes 8 in total (worker: with 4 threads, not 8 × 4).
 * - A `routed` rule of one product answers 503 with a body from a file; its access line names it.
 */
import { randomBytes } from 'node:crypto';
import type { ClientHttp2Session } from 'node:http2';
import { expect } from 'vitest';
import type { TestBackend } from '../harness/backend.ts';
import { startHttpBackend } from '../harness/backend.ts';
import { createPki } from '../harness/certs.ts';
import {
  H1Connection,
  h2Request,
  h2Session,
  type Reply,
  sha256,
  startHashingBackend,
  startHoldingBackend,
  tlsH1Request,
} from '../harness/policy-traffic.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, routesPerConnection, runsHttp2, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';
const OTHER = 'other.example.test';

/** Product `p` (HOST) and product `q` (OTHER), both to one cluster of `address`. */
function book(address: string): Record<string, unknown> {
  const rules = [{ cond: 'default_t()', cluster: 'c' }];
  return {
    name: 'bfe',
    products: { p: { hosts: [HOST], rules }, q: { hosts: [OTHER], rules } },
    clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address }] } } } },
  };
}

/** A router for `p` in front of `backend` with `policies` (and `extra` keys, files in its directory). */
async function withRouter<B extends TestBackend>(
  p: PanelUnderTest,
  start: () => Promise<B>,
  config: { policies: unknown[]; extra?: Record<string, unknown>; files?: Record<string, string> },
  body: (r: TestRouter, b: B) => Promise<void>,
): Promise<void> {
  const backend = await start();
  let router: TestRouter | undefined;
  try {
    const dir = await tempDir(config.files ?? {});
    const keys = { ...panelKeys(p), addressBook: book(backend.address), policies: config.policies };
    router = await startTestRouter({ ...keys, ...config.extra }, { dir });
    await body(router, backend);
  } finally {
    await router?.close();
    await backend.close();
  }
}

/** An HTTP/1.1 GET of `path` (keep-alive unless `close`). */
const get = (path: string, host = HOST, close = false) =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

/** An h2 GET of `path`. */
const h2Get = (path: string, host = HOST) => ({ ':path': path, ':authority': host });

/**
 * Sends one GET on each of `n` fresh clients at once (HTTP/1: a connection each; h2: streams of
 * one session, or a session each), the clients connected first; with the milliseconds from the
 * first request written to the last reply read (the window every decision fell in).
 */
async function burst(
  p: PanelUnderTest,
  port: number,
  n: number,
  sessionEach = false,
): Promise<{ replies: Reply[]; ms: number }> {
  if (!runsHttp2(p)) {
    const conns = Array.from({ length: n }, () => new H1Connection(port));
    await Promise.all(conns.map((c) => c.connected()));
    try {
      const started = performance.now();
      const replies = await Promise.all(conns.map((c) => c.request(get('/', HOST, true))));
      return { replies, ms: performance.now() - started };
    } finally {
      for (const c of conns) c.destroy();
    }
  }
  const sessions = Array.from({ length: sessionEach ? n : 1 }, () => h2Session(port));
  try {
    await Promise.all(sessions.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => h2Request(sessions[i % sessions.length]!, h2Get('/'))),
    );
    return { replies, ms: performance.now() - started };
  } finally {
    for (const s of sessions) s.close();
  }
}

/** Checks a burst's outcome: `passed` answered 200 by the backend, every other one 429 with `Retry-After` ≥ 1. */
function expectLimited(replies: readonly Reply[], b: TestBackend): number {
  const passed = replies.filter((x) => x.status === 200).length;
  expect(b.hits).toBe(passed);
  for (const x of replies.filter((y) => y.status !== 200)) {
    expect(x.status).toBe(429);
    expect(x.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  }
  return passed;
}

const ADMIN = {
  name: 'admin',
  use: 'block',
  when: 'req_path_prefix_in("/admin", false)',
  action: { respond: 403 },
};

export const requestPolicyScenarios: readonly Scenario[] = [
  {
    name: 'policies: a request blocked at request is answered 403; the next request on the connection (h2: stream of the session) is forwarded byte-identical (per-connection: first request only, then close)',
    spec: 'docs/policies.md "Points" (every request or stream; per-connection: the first request only); issue 42 items 4, 6',
    run: (p) =>
      withRouter(
        p,
        () => startHashingBackend('web'),
        { policies: [ADMIN] },
        async (r, b) => {
          const body = randomBytes(48 * 1024);
          const expected = { sha256: sha256(body), bytes: body.length, method: 'POST', url: '/upload?x=1' };
          const post = Buffer.concat([
            Buffer.from(`POST /upload?x=1 HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: ${body.length}\r\n\r\n`),
            body,
          ]);
          if (runsHttp2(p)) {
            const s = h2Session(r.port());
            try {
              expect((await h2Request(s, h2Get('/admin/x'))).status).toBe(403);
              const headers = {
                ':method': 'POST',
                ':path': '/upload?x=1',
                ':authority': HOST,
                'content-length': body.length,
              };
              const reply = await h2Request(s, headers, body);
              expect(JSON.parse(reply.body.toString())).toEqual(expected);
              expect(s.closed || s.destroyed).toBe(false);
            } finally {
              s.close();
            }
          } else if (routesPerConnection(p)) {
            const c = new H1Connection(r.port());
            const blocked = await c.request(get('/admin/x'));
            expect(blocked.status).toBe(403);
            expect(blocked.headers.connection).toBe('close');
            await c.closed;
            expect(c.closedByPeer).toBe(true);
            expect(b.hits).toBe(0);
            // The rules see a connection's first request only: a later /admin is forwarded with it.
            const next = new H1Connection(r.port());
            try {
              expect(JSON.parse((await next.request(post)).body.toString())).toEqual(expected);
              expect(JSON.parse((await next.request(get('/admin/x'))).body.toString())).toMatchObject({
                url: '/admin/x',
              });
            } finally {
              next.destroy();
            }
          } else {
            const c = new H1Connection(r.port());
            try {
              const blocked = await c.request(get('/admin/x'));
              expect(blocked.status).toBe(403);
              expect(blocked.headers.connection).toBe('keep-alive');
              expect(JSON.parse((await c.request(post)).body.toString())).toEqual(expected);
            } finally {
              c.destroy();
            }
          }
          expect(b.hits).toBe(routesPerConnection(p) ? 2 : 1);
          await eventually(() => r.access.some((a) => a.policy === 'admin'), 5_000, 'the line naming the rule');
          expect(r.access.find((a) => a.policy === 'admin')).toMatchObject({
            result: 'policy_answered',
            action: 'answer',
            status: 403,
          });
        },
      ),
  },
  {
    name: 'policies: rate-limit 10/s burst 10 at request, 50 requests at once: 10 (at most 11) reach the backend, the rest 429 with Retry-After',
    spec: 'docs/policies.md `rate-limit` (at the request points: 429 with Retry-After); issue 42 item 6',
    run: (p) =>
      withRouter(
        p,
        () => startHttpBackend('web'),
        { policies: [{ name: 'req-rate', use: 'rate-limit', point: 'request', options: { rate: '10/s', burst: 10 } }] },
        async (r, b) => {
          const { replies, ms } = await burst(p, r.port(), 50);
          const passed = expectLimited(replies, b);
          expect(passed).toBeGreaterThanOrEqual(10);
          // GCRA at 10/s lets one more through per 100 ms after the burst: at most 11 when the 50
          // were decided within 200 ms; a machine too loaded for that earns one more per 100 ms
          // the window took (2 ms for the clocks of the router's threads), never a burst per thread.
          expect(passed, `${passed} passed within ${ms.toFixed(0)} ms`).toBeLessThanOrEqual(
            Math.max(11, 10 + Math.floor((ms + 2) / 100)),
          );
        },
      ),
  },
  {
    name: 'policies: in-flight max 2 at request, 5 held requests: 2 reach the backend, 3 get 429; once the 2 complete the next passes',
    spec: 'docs/policies.md `in-flight` (the slot is given back when what it counted ends); issue 42 item 6',
    run: (p) =>
      withRouter(
        p,
        () => startHoldingBackend('web'),
        { policies: [{ name: 'two', use: 'in-flight', point: 'request', options: { max: 2 } }] },
        async (r, b) => {
          const port = r.port();
          const session: ClientHttp2Session | undefined = runsHttp2(p) ? h2Session(port) : undefined;
          const conns = Array.from({ length: 5 }, () => new H1Connection(port));
          const send = (i: number) =>
            session === undefined ? conns[i]!.request(get(`/held/${i}`)) : h2Request(session, h2Get(`/held/${i}`));
          try {
            const first = [send(0), send(1)];
            await eventually(() => b.held === 2, 5_000, 'two requests held at the backend');
            for (const i of [2, 3, 4]) expect((await send(i)).status).toBe(429);
            expect(b.hits).toBe(2);
            b.release();
            expect((await Promise.all(first)).map((x) => x.status)).toEqual([200, 200]);
            // Per-connection routing counts a connection's request until the connection ends.
            if (routesPerConnection(p)) for (const c of conns.slice(0, 2)) c.destroy();
            await eventually(
              async () => {
                if (session !== undefined) return (await h2Request(session, h2Get('/next'))).status === 200;
                const c = new H1Connection(port);
                conns.push(c);
                return (await c.request(get('/next'))).status === 200;
              },
              5_000,
              'a next request passing once the held ones completed',
            );
            expect(b.hits).toBe(3);
          } finally {
            session?.close();
            for (const c of conns) c.destroy();
          }
        },
      ),
  },
  {
    name: 'policies: redirect to https 308 answers the exact Location on the plain listener (no backend hit) and does not fire on the TLS listener',
    spec: 'docs/policies.md `redirect` (the scheme is the listener’s; a Location equal to the request’s own URL is not answered)',
    timeoutMs: 20_000,
    async run(p) {
      const pki = await createPki();
      try {
        const www = await pki.leaf('www', { dns: [HOST] });
        const tls = {
          name: 'tls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: www.cert, key: www.key }],
        };
        const extra = { listeners: [{ name: 'web', address: '127.0.0.1:0' }, tls] };
        const rule = { name: 'https', use: 'redirect', options: { scheme: 'https', status: 308 } };
        await withRouter(
          p,
          () => startHashingBackend('web'),
          { policies: [rule], extra },
          async (r, b) => {
            const path = '/a/b%20c?x=1&y=%2F';
            let plain: Reply;
            let secure: Reply;
            if (runsHttp2(p)) {
              const s = h2Session(r.port('web'));
              const t = h2Session(r.port('tls'), { ca: pki.ca.certPem, servername: HOST });
              try {
                plain = await h2Request(s, h2Get(path));
                secure = await h2Request(t, h2Get(path));
              } finally {
                s.close();
                t.close();
              }
            } else {
              const c = new H1Connection(r.port('web'));
              plain = await c.request(get(path, HOST, true)).finally(() => c.destroy());
              secure = await tlsH1Request(r.port('tls'), pki.ca.certPem, HOST, get(path, HOST, true));
            }
            expect(plain.status).toBe(308);
            expect(plain.headers.location).toBe(`https://${HOST}${path}`);
            expect(secure.status).toBe(200);
            expect(JSON.parse(secure.body.toString())).toMatchObject({ url: path });
            expect(b.hits).toBe(1);
          },
        );
      } finally {
        await pki.close();
      }
    },
  },
  {
    name: 'policies: a request rate limit of burst 8 passes 8 in total (worker panels run 4 threads: 8, not 8 × 4)',
    spec: 'docs/policies.md "What the connection point does today" (panel: worker counts once for the process); issue 42 item 3',
    // Four worker threads take a while to start on a loaded machine.
    timeoutMs: 30_000,
    run: (p) => {
      const worker = typeof p.panel === 'object' && p.panel.name === 'worker';
      const four: PanelUnderTest = worker ? { ...p, panel: { ...(p.panel as object), threads: 4 } } : p;
      return withRouter(
        four,
        () => startHttpBackend('web'),
        { policies: [{ name: 'burst', use: 'rate-limit', point: 'request', options: { rate: '1/m', burst: 8 } }] },
        async (r, b) => {
          // A session each on h2, so that the worker's threads share the streams.
          expect(expectLimited((await burst(four, r.port(), 32, true)).replies, b)).toBe(8);
        },
      );
    },
  },
  {
    name: 'policies: a routed rule of one product answers 503 with a body from a file; the access line names the rule',
    spec: 'docs/policies.md `respond` (file) and "Rule keys" (products: runs at routed); issue 42 item 5',
    run: (p) =>
      withRouter(
        p,
        () => startHttpBackend('web'),
        {
          policies: [{ name: 'maint', use: 'respond', products: ['p'], options: { status: 503, file: 'maint.html' } }],
          files: { 'maint.html': '<h1>back soon</h1>\n' },
        },
        async (r, b) => {
          let answered: Reply;
          let other: Reply;
          if (runsHttp2(p)) {
            const s = h2Session(r.port());
            try {
              answered = await h2Request(s, h2Get('/shop'));
              other = await h2Request(s, h2Get('/shop', OTHER));
            } finally {
              s.close();
            }
          } else {
            const c = new H1Connection(r.port());
            const d = new H1Connection(r.port());
            try {
              answered = await c.request(get('/shop', HOST, true));
              other = await d.request(get('/shop', OTHER, true));
            } finally {
              c.destroy();
              d.destroy();
            }
          }
          expect(answered.status).toBe(503);
          expect(answered.body.toString()).toBe('<h1>back soon</h1>\n');
          expect(answered.headers['content-type']).toMatch(/^text\/html/);
          expect(other.status).toBe(200);
          expect(b.hits).toBe(1);
          await eventually(() => r.access.some((a) => a.policy === 'maint'), 5_000, 'the line naming the rule');
          expect(r.access.find((a) => a.policy === 'maint')).toMatchObject({
            policy: 'maint',
            action: 'answer',
            result: 'policy_answered',
            status: 503,
          });
        },
      ),
  },
];
