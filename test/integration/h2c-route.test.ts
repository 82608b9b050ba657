/**
 * `listeners[].h2c: route` on the net panel (issue 40 item 7): an h2c connection with prior
 * knowledge is handed to the http2 engine, so every stream is routed on its own, on the same
 * listener with the same rules. It is the default under `routing: per-request`; under
 * per-connection the default stays `allow` (the splice, routed by the first stream).
 *
 * The book sends `/admin` to a blackhole and `/api` to its own backend: before `route`, stream 3
 * of a connection opened with `/` reached the app backend unchecked (h2c-bypass.test.ts).
 */
import { execFile } from 'node:child_process';
import { type ClientHttp2Session, connect as h2connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoReply, echoClient, startEchoServer } from '../../examples/grpc/service.ts';
import { pathSplitBook as book } from '../harness/books.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';
import { type NamedBackend, startNamedBackend } from './per-request-helpers.ts';

const get = (path: string) => ({ ':method': 'GET', ':path': path, ':authority': 'app.test' });

/** Streams 1, 3 and 5 on one prior-knowledge connection: `/`, `/admin/secret`, `/api/x`. */
async function threeStreams(port: number) {
  const session: ClientHttp2Session = h2connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  try {
    const first = await h2Request(session, get('/'));
    const admin = await h2Request(session, get('/admin/secret'));
    const api = await h2Request(session, get('/api/x'));
    return { first, admin, api };
  } finally {
    session.close();
  }
}

describe.each([
  { panel: 'net', name: 'net' },
  { panel: { name: 'worker', threads: 1, engine: 'net' }, name: 'worker/net' },
])('$name panel, routing per-request: h2c is routed per stream by default (h2c: route)', ({ panel }) => {
  let app: NamedBackend;
  let api: NamedBackend;
  let router: TestRouter;

  beforeAll(async () => {
    app = await startNamedBackend('app');
    api = await startNamedBackend('api');
    router = await startTestRouter({ panel, addressBook: book(app.address, api.address) });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
    await api.close();
  });

  it('streams 1, 3 and 5 of one connection are each routed by their own path; /admin never reaches a backend', async () => {
    const { first, admin, api: third } = await threeStreams(router.port());
    expect(first.status).toBe(200);
    expect(first.headers['x-backend']).toBe('app');
    expect(admin.status).toBe(503);
    expect(admin.headers['x-switchboard-error']).toBe('blackhole');
    expect(third.status).toBe(200);
    expect(third.headers['x-backend']).toBe('api');
    expect([...app.seen, ...api.seen].some((s) => s.includes('/admin'))).toBe(false);
    // One access line per stream, as on the http2 panel.
    await eventually(() => router.access.filter((a) => a.protocol === 'h2c').length >= 3);
    expect(router.access.filter((a) => a.protocol === 'h2c').map((a) => [a.path, a.result])).toEqual([
      ['/', 'ok'],
      ['/admin/secret', 'blackhole'],
      ['/api/x', 'ok'],
    ]);
  });

  it('curl --http2-prior-knowledge is served (it failed with a splice to an HTTP/1.1 backend)', async () => {
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile(
        'curl',
        ['-sS', '--http2-prior-knowledge', '-H', 'Host: app.test', `http://127.0.0.1:${router.port()}/api/curl`],
        { timeout: 10_000 },
        (err, out) => (err === null ? resolve({ stdout: out }) : reject(err)),
      ),
    );
    expect(JSON.parse(stdout)).toMatchObject({ backend: 'api', url: '/api/curl' });
  });

  it('HTTP/1.1 on the same listener is routed per request as before', async () => {
    const res = await fetch(`http://127.0.0.1:${router.port()}/api/h1`);
    expect(res.headers.get('x-backend')).toBe('api');
    await res.arrayBuffer();
  });
});

describe('net panel: gRPC over h2c with route (grpc-js client, h2c cluster)', () => {
  const servers: grpc.Server[] = [];
  let router: TestRouter;

  beforeAll(async () => {
    const echo = await startEchoServer('echo-1');
    servers.push(echo.server);
    const unused = `127.0.0.1:${echo.port}`;
    router = await startTestRouter({ panel: 'net', addressBook: book(unused, unused, 'h2c') });
  });
  afterAll(async () => {
    await router.close();
    for (const s of servers) s.forceShutdown();
  });

  it('a unary call with a deadline succeeds, forwarded as its own stream', async () => {
    const client = echoClient(`127.0.0.1:${router.port()}`, { 'grpc.use_local_subchannel_pool': 1 });
    try {
      const reply = await new Promise<EchoReply>((resolve, reject) =>
        client.Say({ message: 'hi' }, new grpc.Metadata(), { deadline: Date.now() + 5_000 }, (err, r) =>
          err === null ? resolve(r) : reject(err),
        ),
      );
      expect(reply).toEqual({ message: 'hi', server: 'echo-1' });
    } finally {
      client.close();
    }
  });
});

describe('net panel, routing per-connection: h2c stays `allow` by default (the splice)', () => {
  let app: H2Backend;
  let router: TestRouter;

  beforeAll(async () => {
    app = await startH2Backend('app');
    router = await startTestRouter({ routing: 'per-connection', addressBook: book(app.address, app.address) });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
  });

  it('the connection is routed by its first stream: stream 3 reaches the same backend (documented)', async () => {
    const { first, admin } = await threeStreams(router.port());
    expect(first.status).toBe(200);
    expect(admin.status).toBe(200);
    expect(JSON.parse(admin.body.toString())).toMatchObject({ backend: 'app', path: '/admin/secret' });
  });
});
