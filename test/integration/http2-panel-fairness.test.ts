/**
 * The http2 panel's upstream sessions under clients that hold or reset streams (issue 40 items
 * 1 and 2), on `http2` and `worker` running `http2` (one thread, so every client meets the
 * same pool):
 *
 * - a few client connections holding streams open fill the backend's
 *   SETTINGS_MAX_CONCURRENT_STREAMS on one session: further sessions open and other clients
 *   are served (panels/http2/session-group.ts);
 * - at `limits.maxUpstreamSessionsPerBackend` sessions, a stream waits at most connectTimeout
 *   for a slot, then is answered 503 `overloaded` (gRPC: UNAVAILABLE) with a reason;
 * - rapid reset: HEADERS + RST_STREAM pairs do not reach the backend, the connection is closed
 *   with GOAWAY ENHANCE_YOUR_CALM, and a concurrent client is served (panels/http2/resets.ts).
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect as h2connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FRAME } from '../../src/peek/h2-frames.ts';
import { block, frame, goawayCode, headers, prelude } from '../fixtures/h2/build.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';

const PANELS = [
  { label: 'http2', panel: 'http2' },
  { label: 'worker/http2', panel: { name: 'worker', threads: 1, engine: 'http2' } },
] as const;

const HOST = 'fair.test';
const get = (path: string, extra: Record<string, string> = {}) => ({
  ':method': 'GET',
  ':path': path,
  ':authority': HOST,
  ':scheme': 'http',
  ...extra,
});

function connectClient(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = h2connect(`http://127.0.0.1:${port}`);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** Resolves with `p`'s value, or with 'timeout' after `ms` (a bounded wait, not a speed check). */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);
}

/** Opens `n` streams to `/hold` that the backend never answers (each holds an upstream slot). */
function hold(session: ClientHttp2Session, n: number): ClientHttp2Stream[] {
  return Array.from({ length: n }, () => {
    const s = session.request(get('/hold'), { endStream: true });
    s.on('error', () => {});
    return s;
  });
}

describe.each(PANELS)('http2 panel upstream fairness: $label', ({ panel }) => {
  let backend: H2Backend;
  let router: TestRouter | undefined;
  const clients: ClientHttp2Session[] = [];

  beforeEach(async () => {
    backend = await startH2Backend('fair', (stream, h) => {
      if (h[':path'] === '/hold') return; // held open: never answered
      stream.respond({ ':status': 200, 'content-type': 'text/plain' });
      stream.end('fast');
    });
    (backend.server as import('node:http2').Http2Server).updateSettings({ maxConcurrentStreams: 100 });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await router?.close();
    router = undefined;
    await backend.close();
  });

  async function start(limits: Record<string, unknown> = {}): Promise<TestRouter> {
    router = await startTestRouter(
      { panel, limits, addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}], protocol: h2c }\n` }) },
    );
    return router;
  }

  it('two client connections holding 120 streams: every other client of the backend is served within 1 s', async () => {
    const r = await start();
    const a = await connectClient(r.port());
    const b = await connectClient(r.port());
    clients.push(a, b);
    hold(a, 60);
    hold(b, 60);
    // The backend's 100 slots of one session are taken (old code: the other 20 queue behind them).
    await eventually(() => backend.streams.length >= 100);
    const victims = await Promise.all(Array.from({ length: 5 }, () => connectClient(r.port())));
    clients.push(...victims);
    const replies = await Promise.all(victims.map((v) => within(h2Request(v, get('/fast')), 1_000)));
    expect(replies.map((x) => (x === 'timeout' ? 'timeout' : x.status))).toEqual([200, 200, 200, 200, 200]);
    expect(backend.sessions).toBeGreaterThan(1);
  });

  it('every session full and no more allowed: a waiting stream is answered 503 overloaded (gRPC: UNAVAILABLE) after connectTimeout', async () => {
    const r = await start({ maxUpstreamSessionsPerBackend: 1, connectTimeout: '500ms' });
    const a = await connectClient(r.port());
    clients.push(a);
    hold(a, 100);
    await eventually(() => backend.streams.length >= 100);
    const victim = await connectClient(r.port());
    clients.push(victim);
    const plain = await within(h2Request(victim, get('/fast')), 5_000);
    expect(plain === 'timeout' ? 'timeout' : plain.status).toBe(503);
    if (plain !== 'timeout') expect(plain.headers['x-switchboard-error']).toBe('overloaded');
    const grpc = await within(h2Request(victim, get('/fast', { 'content-type': 'application/grpc' })), 5_000);
    expect(grpc === 'timeout' ? 'timeout' : (grpc.trailers['grpc-status'] ?? grpc.headers['grpc-status'])).toBe('14');
    if (panel === 'http2') {
      const line = r.access.find((x) => x.result === 'overloaded');
      expect(line?.reason).toMatch(/no free upstream stream slot within 500ms/);
    }
  });

  it('rapid reset: 3,000 HEADERS+RST_STREAM pairs reach the backend < 1% of the time; GOAWAY ENHANCE_YOUR_CALM; a concurrent client is served', async () => {
    const r = await start();
    const fields = block([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':authority', HOST],
      [':path', '/fast'],
    ]);
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(8); // CANCEL
    const pairs: Buffer[] = [];
    for (let i = 0; i < 3_000; i++) {
      const id = 2 * i + 1;
      pairs.push(headers(fields, id), frame(FRAME.RST_STREAM, 0, id, cancel));
    }
    const victim = await connectClient(r.port());
    clients.push(victim);
    // The upstream session is up (streams open on it at once, no dial in between).
    expect((await h2Request(victim, get('/fast'))).status).toBe(200);
    const reply = await new Promise<Buffer>((resolve) => {
      const got: Buffer[] = [];
      // 100 pairs a write, a few ms apart: many pairs in each of the router's reads, but fewer than
      // nghttp2's own burst of 1,000 resets (past which it closes with INTERNAL_ERROR itself).
      const s = netConnect({ port: r.port(), host: '127.0.0.1' }, async () => {
        s.write(prelude());
        for (let i = 0; i < pairs.length && !s.destroyed; i += 100) {
          s.write(Buffer.concat(pairs.slice(i, i + 100)));
          await new Promise((w) => setTimeout(w, 10));
        }
      });
      s.on('data', (d: Buffer) => got.push(d));
      s.on('error', () => {});
      s.on('close', () => resolve(Buffer.concat(got)));
      setTimeout(() => s.destroy(), 10_000).unref();
    });
    const served = await within(h2Request(victim, get('/fast')), 5_000);
    expect(served === 'timeout' ? 'timeout' : served.status).toBe(200);
    // Only the victim's two streams and under 1% of the 3,000 reached the backend.
    expect(backend.streams.length - 2).toBeLessThan(30);
    expect(goawayCode(reply)).toBe(0xb);
  });
});
