/**
 * h2c cannot carry requests past the router's rules (issue 17 item 5), on the net panel. `/admin`
 * goes to a blackhole; the application backend speaks h2c (it answers `Upgrade: h2c` with 101
 * and would serve whatever the switched connection carries) and records every byte it receives.
 *
 * 1. `Upgrade: h2c` is refused with 400 before any byte reaches a backend on an `h2c: allow`
 *    listener, in both routing modes (RFC 9113 §3.1 deprecates the upgrade; after it the tunnel
 *    would carry `/admin/secret`). `h2c: route` switches it itself: h2c-upgrade.test.ts.
 * 2. `listeners[].h2c: refuse` answers the h2c preface with GOAWAY HTTP_1_1_REQUIRED and one
 *    access line; with `allow` (set here: `route`, the per-request default, is h2c-route.test.ts)
 *    the connection is routed by its first stream, so a later stream for `/admin/secret` reaches
 *    the same backend — why the switch exists.
 * 3. A backend's 101 to a request that did not offer that protocol is answered 502
 *    `bad_response`; the connection closes, and the request pipelined behind it reaches no
 *    backend (before: the 101 made a tunnel and the next request, meant for another backend,
 *    reached the first).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAME } from '../../src/peek/h2-frames.ts';
import { block, goawayCode, headers, prelude } from '../fixtures/h2/build.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { collectRequests, type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

const SWITCH_H2C = 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n';

/**
 * An h2c-capable backend: a request offering `Upgrade: h2c` (or any request, when `always`) is
 * answered 101 and the connection then only records, as it does after an h2c preface; other
 * requests get a keep-alive 200 naming the backend.
 */
function startH2cBackend(name: string, always = false): Promise<TcpBackend> {
  return startTcpBackend(name, (socket) => {
    let seen = '';
    let switched = false;
    socket.on('data', (d: Buffer) => {
      if (switched) return;
      seen += d.toString('latin1');
      for (let end = seen.indexOf('\r\n\r\n'); end !== -1 && !switched; end = seen.indexOf('\r\n\r\n')) {
        const head = seen.slice(0, end);
        seen = seen.slice(end + 4);
        if (head.startsWith('PRI * HTTP/2.0'))
          switched = true; // prior knowledge: just record
        else if (always || /^upgrade:.*h2c/im.test(head)) {
          switched = true;
          socket.write(SWITCH_H2C);
        } else socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${name.length}\r\n\r\n${name}`);
      }
    });
    socket.on('end', () => socket.end());
  });
}

/** The bfe book: `/admin` to a blackhole, host `rogue.test` to `rogue`, the rest to `app`. */
function book(app: string, rogue = app): Record<string, unknown> {
  const one = (address: string) => ({ subclusters: { s1: { weight: 1, backends: [{ address }] } } });
  return {
    name: 'bfe',
    products: {
      p: {
        hosts: ['*'],
        rules: [
          { cond: 'req_path_prefix_in("/admin", false)', cluster: 'admin' },
          { cond: 'req_host_in("rogue.test")', cluster: 'rogue' },
          { cond: 'default_t()', cluster: 'app' },
        ],
      },
    },
    clusters: { app: one(app), rogue: one(rogue), admin: { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } } },
  };
}

const UPGRADE_H2C =
  'GET / HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n' +
  'HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n';
// What the switched connection would carry next: HTTP/2 for the blackholed path.
const H2_ADMIN = Buffer.concat([
  prelude(),
  headers(
    block([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':authority', 'app.test'],
      [':path', '/admin/secret'],
    ]),
    3,
  ),
]);

describe.each(['per-request', 'per-connection'])('net panel, %s, h2c: allow: Upgrade: h2c is refused', (routing) => {
  let app: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    app = await startH2cBackend('app');
    router = await startTestRouter({
      routing,
      listeners: [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }],
      addressBook: book(app.address),
    });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
  });

  it('the blackhole holds for a direct request (control)', async () => {
    const res = await rawRequest(router.port(), 'GET /admin/secret HTTP/1.1\r\nHost: app.test\r\n\r\n');
    expect(statusOf(res)).toBe(503);
    expect(app.hits).toBe(0);
  });

  it('400 bad_request, and no byte of it, nor of what follows, reaches the h2c backend (RFC 9113 §3.1)', async () => {
    const res = await rawRequest(router.port(), Buffer.concat([Buffer.from(UPGRADE_H2C, 'latin1'), H2_ADMIN]));
    expect(statusOf(res)).toBe(400);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_request');
    expect(res.toString('latin1')).not.toContain('Switching Protocols');
    expect(app.all().length).toBe(0);
    await eventually(() => router.access.some((a) => a.result === 'bad_request'));
    expect(router.access.find((a) => a.result === 'bad_request')?.reason).toMatch(/Upgrade: h2c is refused/);
    await noLeaks(router);
  });
});

/** Sends `bytes` on a fresh connection to `port`, half-closes, and collects the reply until close. */
function exchange(port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.end(bytes);
  });
}

describe('net panel: listeners[].h2c', () => {
  let app: TcpBackend;
  let router: TestRouter;
  // Two streams on one connection: the first for `/`, the second for the blackholed path.
  const twoStreams = () =>
    Buffer.concat([
      prelude(),
      headers(
        block([
          [':method', 'GET'],
          [':scheme', 'http'],
          [':authority', 'app.test'],
          [':path', '/'],
        ]),
      ),
      headers(
        block([
          [':method', 'GET'],
          [':scheme', 'http'],
          [':authority', 'app.test'],
          [':path', '/admin/secret'],
        ]),
        3,
      ),
    ]);

  beforeAll(async () => {
    app = await startH2cBackend('app');
    router = await startTestRouter({
      listeners: [
        { name: 'open', address: '127.0.0.1:0', h2c: 'allow' },
        { name: 'strict', address: '127.0.0.1:0', h2c: 'refuse' },
      ],
      addressBook: book(app.address),
    });
  });
  afterAll(async () => {
    await router.close();
    await app.close();
  });

  it('refuse: the preface gets GOAWAY HTTP_1_1_REQUIRED and an access line; nothing reaches a backend', async () => {
    const reply = await exchange(router.port('strict'), twoStreams());
    expect(reply[3]).toBe(FRAME.SETTINGS);
    expect(goawayCode(reply)).toBe(0xd);
    expect(app.all().length).toBe(0);
    await eventually(() => router.access.some((a) => a.listener === 'strict'));
    expect(router.access.find((a) => a.listener === 'strict')).toMatchObject({
      result: 'bad_request',
      reason: expect.stringMatching(/h2c: refuse/),
    });
    // HTTP/1 on the same listener is served as before.
    const res = await rawRequest(
      router.port('strict'),
      'GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n',
    );
    expect(statusOf(res)).toBe(200);
    expect(res.toString('latin1').endsWith('app')).toBe(true);
  });

  it('allow: the connection is routed by its first stream, so the second stream reaches the same backend', async () => {
    const before = app.all().length;
    const bytes = twoStreams();
    const socket = connect({ port: router.port('open'), host: '127.0.0.1' });
    socket.on('error', () => {});
    socket.write(bytes);
    await eventually(() => app.all().length - before >= bytes.length);
    socket.destroy();
    expect(app.all().subarray(before).equals(bytes)).toBe(true);
  });
});

describe('per-request: a 101 nobody asked for is answered 502', () => {
  let rogue: TcpBackend;
  let app: NamedBackend;
  let router: TestRouter;
  const requests = collectRequests();

  beforeAll(async () => {
    rogue = await startH2cBackend('rogue', true);
    app = await startNamedBackend('app');
    router = await startTestRouter({ addressBook: book(app.address, rogue.address) });
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    await rogue.close();
    await app.close();
  });

  it.each([
    ['a plain GET', 'GET / HTTP/1.1\r\nHost: rogue.test\r\n\r\n', 'did not ask to upgrade', 'RFC 9110 §7.8'],
    [
      'a WebSocket upgrade answered with h2c',
      'GET / HTTP/1.1\r\nHost: rogue.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      'did not offer',
      'RFC 9110 §7.8',
    ],
  ])('101 to %s → 502 bad_response, closed; the next request reaches no backend (%s)', async (_name, first, why) => {
    const before = rogue.all().length;
    const next = 'GET /other HTTP/1.1\r\nHost: app.test\r\n\r\n';
    const res = await rawRequest(router.port(), first + next);
    const text = res.toString('latin1');
    expect(statusOf(res)).toBe(502);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('bad_response');
    expect(headerOf(res, 'Connection')).toBe('close');
    // Exactly one response, then the close: nothing of the 101 went out.
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(rogue.all().subarray(before).toString('latin1')).toBe(first);
    expect(app.seen).toEqual([]);
    await eventually(() =>
      requests.records.some((r) => r.result === 'bad_response' && r.reason?.includes(why) === true),
    );
    expect(requests.records.find((r) => r.result === 'bad_response')).toMatchObject({
      status: 502,
      host: 'rogue.test',
    });
    await noLeaks(router);
  });
});
