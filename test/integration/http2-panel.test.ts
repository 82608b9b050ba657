/**
 * The http2 panel end to end: one client connection whose streams are routed one by one,
 * HTTP/1.1 on the same plaintext port, trailers, resets both ways, router errors as HTTP/2
 * responses, retries and upstream GOAWAY.
 */

import { request as httpRequest } from 'node:http';
import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';

describe('http2 panel: per-stream routing', () => {
  let a: TestBackend;
  let b: H2Backend;
  let c: TestBackend;
  let slow: H2Backend;
  let router: TestRouter;
  let session: ClientHttp2Session;
  let dead: number;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    b = await startH2Backend('b');
    c = await startHttpBackend('c');
    // Answers the head at once and then never ends: for resets in both directions.
    slow = await startH2Backend('slow', (stream, headers) => {
      if (headers[':path'] === '/slow/reset') {
        stream.respond({ ':status': 200 });
        stream.write('partial');
        setImmediate(() => stream.close(constants.NGHTTP2_ENHANCE_YOUR_CALM));
        return;
      }
      stream.respond({ ':status': 200 });
      stream.write('started');
    });
    dead = await closedPort();
    router = await startTestRouter(
      { panel: 'http2', operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: "*", path: /a, backends: [${a.address}] }`,
            `- { host: "*", path: /b, backends: [${b.address}], protocol: h2c }`,
            `- { host: "*", path: /c, backends: [${c.address}] }`,
            `- { host: "*", path: /slow, backends: [${slow.address}], protocol: h2c }`,
            `- { host: "*", path: /retry, backends: [127.0.0.1:${dead}, ${a.address}], retries: 2 }`,
            `- { host: "*", path: /down, backends: [127.0.0.1:${dead}], retries: 1 }`,
          ].join('\n'),
        }),
      },
    );
    session = connect(`http://127.0.0.1:${router.port()}`);
  });
  afterAll(async () => {
    session.close();
    await router.close();
    await Promise.all([a.close(), b.close(), c.close(), slow.close()]);
  });

  it('routes each stream of one connection by its path (three backends)', async () => {
    const replies = await Promise.all(
      ['/a/1', '/b/2', '/c/3', '/a/4', '/b/5'].map((p) => h2Request(session, { ':path': p, ':authority': 'app.test' })),
    );
    const who = replies.map((r) => JSON.parse(r.body.toString()).backend);
    expect(who).toEqual(['a', 'b', 'c', 'a', 'b']);
    const paths = replies.map((r) => JSON.parse(r.body.toString()).url ?? JSON.parse(r.body.toString()).path);
    expect(paths).toEqual(['/a/1', '/b/2', '/c/3', '/a/4', '/b/5']);
    // HTTP/1 backends see the authority as Host; the h2c backend as :authority.
    expect(JSON.parse(replies[0]!.body.toString()).host).toBe('app.test');
    expect(JSON.parse(replies[1]!.body.toString()).authority).toBe('app.test');
    // One access line per stream, naming its backend.
    await eventually(() => router.access.filter((r) => r.path?.match(/^\/[abc]\/\d$/)).length === 5);
    const lines = router.access.filter((r) => r.path?.match(/^\/[abc]\/\d$/));
    expect(new Set(lines.map((l) => l.backend))).toEqual(new Set([a.address, b.address, c.address]));
    expect(lines.every((l) => l.protocol === 'h2c' && l.result === 'ok' && l.status === 200)).toBe(true);
  });

  it('answers Expect as node does (100-continue: an interim 100, then forwarded; others: 417) and HEAD without a body', async () => {
    const interim = await new Promise<{ continued: boolean; status: number; body: string }>((resolve, reject) => {
      const stream = session.request({ ':path': '/b/expect', ':method': 'POST', expect: '100-continue' });
      let continued = false;
      let status = 0;
      let body = '';
      stream.on('continue', () => {
        continued = true;
        stream.end('payload');
      });
      stream.on('response', (h) => {
        status = Number(h[':status']);
      });
      stream.on('data', (c: Buffer) => {
        body += c.toString();
      });
      stream.on('end', () => resolve({ continued, status, body }));
      stream.on('error', reject);
    });
    expect(interim.continued).toBe(true);
    expect(interim.status).toBe(200);
    expect(JSON.parse(interim.body).backend).toBe('b');
    const other = await h2Request(session, { ':path': '/b/expect-other', expect: 'something-else' });
    expect(other.status).toBe(417);
    const head = await h2Request(session, { ':path': '/b/head', ':method': 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('keeps one upstream session for many streams to an h2c backend', async () => {
    const before = b.sessions;
    await Promise.all(Array.from({ length: 20 }, (_, i) => h2Request(session, { ':path': `/b/m${i}` })));
    expect(b.sessions - before).toBeLessThanOrEqual(1);
  });

  it('forwards a request body and trailers both ways (h2c backend)', async () => {
    const seen: Record<string, unknown> = {};
    const t = await startH2Backend('t', (stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (ch: Buffer) => chunks.push(ch));
      stream.on('trailers', (tr) => {
        seen.trailer = tr['x-request-trailer'];
      });
      stream.on('end', () => {
        seen.body = Buffer.concat(chunks).toString();
        stream.respond({ ':status': 201, 'x-head': 'h' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'x-response-trailer': 'rt' }));
        stream.end('done');
      });
    });
    const r2 = await startTestRouter(
      { panel: 'http2', addressBook: { name: 'file', path: 's.yaml' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${t.address}], protocol: h2c }` }) },
    );
    const s = connect(`http://127.0.0.1:${r2.port()}`);
    try {
      const reply = await h2Request(s, { ':path': '/t', ':method': 'POST' }, undefined, { 'x-request-trailer': 'qt' });
      expect(reply.status).toBe(201);
      expect(reply.headers['x-head']).toBe('h');
      expect(reply.body.toString()).toBe('done');
      expect(reply.trailers['x-response-trailer']).toBe('rt');
      expect(reply.trailers['grpc-status']).toBe('0');
      expect(seen.trailer).toBe('qt');
    } finally {
      s.close();
      await r2.close();
      await t.close();
    }
  });

  it('answers HTTP/1.1 on the same plaintext port', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { port: router.port(), host: '127.0.0.1', path: '/c/h1', headers: { host: 'x.test' } },
        (res) => {
          let text = '';
          res.on('data', (ch) => (text += ch));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(body)).toMatchObject({ backend: 'c', url: '/c/h1', host: 'x.test' });
    await eventually(() => router.access.some((r) => r.path === '/c/h1' && r.protocol === 'http1'));
  });

  it.each([
    // DESIGN "What the router itself answers": status and code; gRPC gets grpc-status (gRPC HTTP mapping).
    ['/nowhere', 'no_route', 404, 12],
    ['/down', 'connect_failed', 502, 14],
  ])('%s → %s as an HTTP/2 response (and as gRPC)', async (path, code, status, grpcStatus) => {
    const plain = await h2Request(session, { ':path': path, ':authority': 'none.test' });
    expect(plain.status).toBe(status);
    expect(plain.headers['x-switchboard-error']).toBe(code);
    expect(plain.body.toString()).toBe(`${code}\n`);
    const grpc = await h2Request(session, { ':path': path, ':method': 'POST', 'content-type': 'application/grpc' }, '');
    expect(grpc.status).toBe(200);
    expect(grpc.trailers['grpc-status']).toBe(String(grpcStatus));
    await eventually(() => router.access.some((r) => r.path === path && r.result === code && r.status === status));
  });

  it('answers 400 bad_request for a path that climbs above the root', async () => {
    const r = await h2Request(session, { ':path': '/a/../../etc' });
    expect(r.status).toBe(400);
    expect(r.headers['x-switchboard-error']).toBe('bad_request');
  });

  it('retries a failed connect on another backend before any byte went upstream', async () => {
    const before = a.hits;
    for (let i = 0; i < 4; i++) {
      const r = await h2Request(session, { ':path': '/retry', ':method': 'POST' }, 'payload');
      expect(r.status).toBe(200);
    }
    expect(a.hits - before).toBe(4);
    expect(router.access.some((r) => r.path === '/retry' && r.attempts === 2)).toBe(true);
  });

  it('propagates a client reset to the backend stream', async () => {
    const before = slow.streams.length;
    const stream = session.request({ ':path': '/slow/cancel' });
    await new Promise<void>((r) => stream.once('response', () => r()));
    stream.close(constants.NGHTTP2_CANCEL);
    await eventually(
      () => slow.streams.length > before && slow.streams[before]!.closed,
      10_000,
      'backend stream closed',
    );
    expect(slow.streams[before]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await eventually(() => router.access.some((r) => r.path === '/slow/cancel' && r.result === 'client_reset'));
  });

  it('propagates an upstream reset to the client stream with its code', async () => {
    // The request body stays open: a Node backend's close(code) on a stream whose request has
    // ended only half-closes it, so the reset is observable only while the request is open.
    const stream = session.request({ ':path': '/slow/reset', ':method': 'POST' });
    stream.write('body still open');
    stream.on('error', () => {});
    stream.resume();
    await new Promise<void>((r) => stream.once('close', () => r()));
    expect(stream.rstCode).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    await eventually(() => router.access.some((r) => r.path === '/slow/reset' && r.result === 'upstream_reset'));
  });

  it('opens a new upstream session after the backend sends GOAWAY', async () => {
    await h2Request(session, { ':path': '/b/before' });
    const sessionsBefore = b.sessions;
    b.goawayAll();
    // A stream racing the GOAWAY is refused by the backend (REFUSED_STREAM, safe to retry), so poll.
    await eventually(
      async () => {
        const r = await h2Request(session, { ':path': '/b/after' }).catch(() => undefined);
        return r?.status === 200 && b.sessions > sessionsBefore;
      },
      10_000,
      'a new upstream session',
    );
  });
});
