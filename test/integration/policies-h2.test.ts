/**
 * Policies on HTTP/2 streams (issue 42 item 4), through the real router and node's http2 client:
 *
 * - the http2 panel answers per stream: a rate limit over its burst answers 429 with
 *   `Retry-After` on each refused stream while the other streams of the same session are served;
 *   a `close` verdict resets just that stream (RST_STREAM CANCEL) and the session goes on; a HEAD
 *   gets the answer's status and headers and no body; a gRPC request gets the policy's status
 *   (grpc-js maps it to the call's error code);
 * - h2c through the net panel, `h2c: allow` (the splice, routed by the first stream): the router
 *   answers the first stream itself (HEADERS + DATA, then GOAWAY naming it:
 *   src/data-path/policy-answer.ts) and no backend is reached;
 * - h2c through the net panel, `h2c: route` (the http2 engine): each stream is answered on its
 *   own, as on the http2 panel, and the session goes on.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, constants, connect as h2connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { echoClient } from '../../examples/grpc/service.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';

const req = (path: string, extra: Record<string, string> = {}) => ({
  ':method': 'GET',
  ':path': path,
  ':authority': 'a.test',
  ...extra,
});

/** A blocked path answered 403 in the router's words; `/closed` closed. */
const BLOCK_ADMIN = {
  name: 'admin',
  use: 'block',
  when: 'req_path_prefix_in("/admin", false)',
  action: { respond: { status: 403, body: 'no\n', headers: { 'X-Why': 'admin' } } },
};
const CLOSE_CLOSED = { name: 'closed', use: 'block', when: 'req_path_prefix_in("/closed", false)', action: 'close' };

/** A stream's outcome: its response head and body, or its reset code. */
interface StreamEnd {
  readonly status: number | undefined;
  readonly headers: Record<string, unknown>;
  readonly body: string;
  readonly rstCode: number;
}

/** Sends a request (and `payload`, ending it) on `session`; resolves when its stream closes, reset or not. */
function send(session: ClientHttp2Session, headers: Record<string, string>, payload?: Buffer): Promise<StreamEnd> {
  return new Promise((resolve) => {
    const stream: ClientHttp2Stream = session.request(headers, { endStream: payload === undefined });
    if (payload !== undefined) stream.end(payload);
    let head: Record<string, unknown> = {};
    let body = '';
    stream.on('response', (h) => {
      head = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      body += c;
    });
    stream.on('error', () => {});
    stream.on('close', () =>
      resolve({
        status: head[':status'] === undefined ? undefined : Number(head[':status']),
        headers: head,
        body,
        rstCode: stream.rstCode ?? 0,
      }),
    );
  });
}

function open(port: number): ClientHttp2Session {
  const session = h2connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  return session;
}

describe('policies on HTTP/2 streams', () => {
  let backend: TestBackend | undefined;
  let h2backend: H2Backend | undefined;
  let router: TestRouter | undefined;
  let session: ClientHttp2Session | undefined;
  afterEach(async () => {
    session?.destroy();
    await router?.close();
    await backend?.close();
    await h2backend?.close();
    session = undefined;
    router = undefined;
    backend = undefined;
    h2backend = undefined;
  });

  /** A router whose file book sends every host to an HTTP/1 backend. */
  async function start(policies: unknown[], extra: Record<string, unknown>): Promise<TestRouter> {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, policies, ...extra },
      { dir },
    );
    return router;
  }

  describe('http2 panel', () => {
    it('a rate limit over its burst answers 429 with Retry-After on each refused stream; the other streams are served', async () => {
      const r = await start(
        [
          {
            name: 'limited',
            use: 'rate-limit',
            when: 'req_path_prefix_in("/limited", false)',
            options: { key: 'client-ip', rate: '1/h', burst: 2 },
          },
        ],
        { panel: 'http2' },
      );
      session = open(r.port());
      const s = session;
      // Six streams at once on one session: four over the limited path, two elsewhere.
      const ends = await Promise.all([
        send(s, req('/limited/1')),
        send(s, req('/free/1')),
        send(s, req('/limited/2')),
        send(s, req('/limited/3')),
        send(s, req('/free/2')),
        send(s, req('/limited/4')),
      ]);
      const limited = [ends[0], ends[2], ends[3], ends[5]];
      expect(limited.filter((e) => e?.status === 200)).toHaveLength(2);
      const refused = limited.filter((e) => e?.status === 429);
      expect(refused).toHaveLength(2);
      for (const e of refused) {
        expect(e?.rstCode).toBe(0);
        // 1/h: the next event is an hour away.
        expect(Number(e?.headers['retry-after'])).toBeGreaterThanOrEqual(3000);
      }
      expect([ends[1]?.status, ends[4]?.status]).toEqual([200, 200]);
      // The session went on: one more stream on it is served.
      expect((await h2Request(s, req('/free/3'))).status).toBe(200);
      expect(backend?.hits).toBe(5);
      await eventually(() => r.access.filter((a) => a.policy === 'limited').length === 2);
      expect(r.access.filter((a) => a.policy === 'limited').map((a) => [a.result, a.status])).toEqual([
        ['policy_answered', 429],
        ['policy_answered', 429],
      ]);
    });

    it('a close verdict resets just that stream with CANCEL; the session goes on', async () => {
      const r = await start([CLOSE_CLOSED], { panel: 'http2' });
      session = open(r.port());
      const closed = await send(session, req('/closed'));
      expect(closed.status).toBeUndefined();
      expect(closed.rstCode).toBe(constants.NGHTTP2_CANCEL);
      expect(session.closed || session.destroyed).toBe(false);
      expect((await h2Request(session, req('/open'))).status).toBe(200);
      expect(backend?.hits).toBe(1);
      await eventually(() => r.access.some((a) => a.policy === 'closed'));
      expect(r.access.find((a) => a.policy === 'closed')).toMatchObject({ result: 'policy_closed', action: 'close' });
    });

    it('a HEAD request gets the answer’s status and headers and no body', async () => {
      const r = await start([BLOCK_ADMIN], { panel: 'http2' });
      session = open(r.port());
      const get = await send(session, req('/admin'));
      expect(get).toMatchObject({ status: 403, body: 'no\n', rstCode: 0 });
      const head = await send(session, req('/admin', { ':method': 'HEAD' }));
      expect(head).toMatchObject({ status: 403, body: '', rstCode: 0 });
      expect(head.headers['x-why']).toBe('admin');
      expect(head.headers['content-length']).toBe('3');
      expect(backend?.hits).toBe(0);
    });

    it('a gRPC request gets the policy’s status', async () => {
      const r = await start([BLOCK_ADMIN], { panel: 'http2' });
      session = open(r.port());
      const grpc = await send(
        session,
        req('/admin.Service/Call', { ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers' }),
        Buffer.from([0, 0, 0, 0, 0]), // one empty, uncompressed message
      );
      expect(grpc.status).toBe(403);
      expect(grpc.headers['x-why']).toBe('admin');
      expect(backend?.hits).toBe(0);
    });

    it('a gRPC client (grpc-js) sees the policy’s status as its call’s error (403: PERMISSION_DENIED)', async () => {
      const rule = { ...BLOCK_ADMIN, when: 'req_path_prefix_in("/switchboard.example.Echo/", false)' };
      const r = await start([rule], { panel: 'http2' });
      const client = echoClient(`127.0.0.1:${r.port()}`, { 'grpc.use_local_subchannel_pool': 1 });
      try {
        const err = await new Promise<grpc.ServiceError | null>((resolve) =>
          client.Say({ message: 'hi' }, new grpc.Metadata(), { deadline: Date.now() + 5_000 }, (e) => resolve(e)),
        );
        expect(err?.code).toBe(grpc.status.PERMISSION_DENIED);
      } finally {
        client.close();
      }
      expect(backend?.hits).toBe(0);
    });
  });

  describe('h2c through the net panel', () => {
    it('h2c: allow: the first stream is answered by the router (HEADERS, DATA), then GOAWAY; no backend reached', async () => {
      h2backend = await startH2Backend('h2');
      const r = await startTestRouter({
        listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }],
        addressBook: {
          name: 'bfe',
          products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: {
            c: { protocol: 'h2c', subclusters: { s1: { weight: 1, backends: [{ address: h2backend.address }] } } },
          },
        },
        policies: [BLOCK_ADMIN],
      });
      router = r;
      session = open(r.port());
      const s = session;
      const goaway = new Promise<{ code: number; lastStreamID: number }>((resolve) =>
        s.once('goaway', (code, lastStreamID) => resolve({ code, lastStreamID })),
      );
      const answered = await send(s, req('/admin/x'));
      expect(answered).toMatchObject({ status: 403, body: 'no\n', rstCode: 0 });
      expect(answered.headers['x-why']).toBe('admin');
      expect(answered.headers['content-type']).toBe('text/plain; charset=utf-8');
      // GOAWAY NO_ERROR naming the answered stream (1): the splice has no backend to go on to.
      expect(await goaway).toEqual({ code: constants.NGHTTP2_NO_ERROR, lastStreamID: 1 });
      expect(h2backend.streams).toHaveLength(0);
      await eventually(() => r.access.some((a) => a.policy === 'admin'));
      expect(r.access.find((a) => a.policy === 'admin')).toMatchObject({ result: 'policy_answered', status: 403 });

      // A connection whose first stream passes is spliced to the backend as before.
      const other = open(r.port());
      try {
        expect((await h2Request(other, req('/ok'))).status).toBe(200);
      } finally {
        other.destroy();
      }
      expect(h2backend.streams).toHaveLength(1);
    });

    it('h2c: route: each stream is answered on its own, as on the http2 panel, and the session goes on', async () => {
      const r = await start([BLOCK_ADMIN, CLOSE_CLOSED], {
        panel: 'net',
        listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'route' }],
      });
      session = open(r.port());
      const s = session;
      const first = await send(s, req('/admin'));
      expect(first).toMatchObject({ status: 403, body: 'no\n', rstCode: 0 });
      expect(first.headers['x-why']).toBe('admin');
      const closed = await send(s, req('/closed'));
      expect(closed.status).toBeUndefined();
      expect(closed.rstCode).toBe(constants.NGHTTP2_CANCEL);
      const served = await h2Request(s, req('/ok'));
      expect(served.status).toBe(200);
      expect(backend?.hits).toBe(1);
      await eventually(() => r.access.filter((a) => a.protocol === 'h2c').length >= 3);
      expect(r.access.filter((a) => a.protocol === 'h2c').map((a) => [a.path, a.result])).toEqual([
        ['/admin', 'policy_answered'],
        ['/closed', 'policy_closed'],
        ['/ok', 'ok'],
      ]);
    });
  });
});
