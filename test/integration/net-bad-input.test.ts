/**
 * The net panel's answers to bad input (DESIGN error table; issue "Bad input"). A recording
 * backend sits behind the route and must receive nothing in every case.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startBlackhole, startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

describe('net panel: bad input is answered and nothing reaches a backend', () => {
  let sink: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    sink = await startTcpBackend('sink');
    router = await startTestRouter(
      {
        operator: 'round-robin',
        addressBook: { name: 'file', path: 'servers.yaml' },
        limits: { peekTimeout: '1s', maxHeaderBytes: 2048 },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: ok.test, backends: [${sink.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await sink.close();
  });

  const cases: [string, string, number, string][] = [
    ['malformed request line', 'GET  / HTTP/1.1\r\nHost: ok.test\r\n\r\n', 400, 'bad_request'],
    ['malformed header', 'GET / HTTP/1.1\r\nHost: ok.test\r\nBad Header: x\r\n\r\n', 400, 'bad_request'],
    ['two Host headers', 'GET / HTTP/1.1\r\nHost: ok.test\r\nHost: other.test\r\n\r\n', 400, 'bad_request'],
    ['no Host on HTTP/1.1', 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n', 400, 'bad_request'],
    ['absolute-form authority ≠ Host', 'GET http://other.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n', 400, 'bad_request'],
    [
      'head larger than maxHeaderBytes',
      `GET / HTTP/1.1\r\nHost: ok.test\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`,
      431,
      'header_too_large',
    ],
    [
      'request line larger than maxHeaderBytes',
      `GET /${'a'.repeat(4000)} HTTP/1.1\r\nHost: ok.test\r\n\r\n`,
      414,
      'uri_too_long',
    ],
    ['no route', 'GET / HTTP/1.1\r\nHost: nowhere.test\r\n\r\n', 404, 'no_route'],
  ];

  it.each(cases)('%s → %i %s', async (_name, bytes, status, code) => {
    const before = router.access.length;
    const res = await rawRequest(router.port(), bytes);
    expect(statusOf(res)).toBe(status);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe(code);
    expect(headerOf(res, 'Connection')).toBe('close');
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)?.result).toBe(code);
    expect(sink.hits).toBe(0);
  });

  it('slowloris: a head at 1 byte per 300 ms is answered 408 at the peek deadline', async () => {
    const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: ok.test\r\nX-Slow: 1\r\n\r\n', {
      chunkSize: 1,
      delayMs: 300,
      timeoutMs: 15_000,
    });
    expect(statusOf(res)).toBe(408);
    expect(headerOf(res, 'X-Switchboard-Error')).toBe('peek_timeout');
    expect(sink.hits).toBe(0);
  });

  it('a client that disconnects mid-peek is logged as client_closed and leaks nothing', async () => {
    const before = router.access.length;
    const socket = connect(router.port(), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET / HTTP/1.1\r\nHo');
    socket.destroy();
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)?.result).toBe('client_closed');
    await eventually(() => (router.router.panel as unknown as { connections: number }).connections === 0);
    expect(sink.hits).toBe(0);
  });
});

describe('net panel: backends that fail', () => {
  it('every backend refusing → 502 connect_failed after the retry budget', async () => {
    const p1 = await closedPort();
    const p2 = await closedPort();
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' } },
      {
        dir: await tempDir({ 's.yaml': `- { host: "*", backends: [127.0.0.1:${p1}, 127.0.0.1:${p2}], retries: 1 }\n` }),
      },
    );
    try {
      const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      expect(statusOf(res)).toBe(502);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('connect_failed');
      await router.waitForAccess(1);
      expect(router.access[0]).toMatchObject({ result: 'connect_failed', attempts: 2 });
    } finally {
      await router.close();
    }
  });

  it('retries the next backend when the first refuses', async () => {
    const dead = await closedPort();
    const live = await startTcpBackend('live', (s) => s.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n'));
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [127.0.0.1:${dead}, ${live.address}] }\n` }) },
    );
    try {
      for (let i = 0; i < 3; i++) {
        const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
        expect(statusOf(res)).toBe(204);
      }
      expect(live.hits).toBe(3);
    } finally {
      await router.close();
      await live.close();
    }
  });

  it('connect timeout → 504 connect_timeout', async () => {
    const hole = await startBlackhole();
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' }, limits: { connectTimeout: '300ms' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [127.0.0.1:${hole.port}], retries: 0 }\n` }) },
    );
    try {
      const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      expect(statusOf(res)).toBe(504);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('connect_timeout');
    } finally {
      await router.close();
      await hole.close();
    }
  });

  it('a backend that resets mid-stream ends the client connection without a crash', async () => {
    const rude = await startTcpBackend('rude', (s) => {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
      setTimeout(() => s.resetAndDestroy(), 50);
    });
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${rude.address}] }\n` }) },
    );
    try {
      const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      expect(res.toString('latin1')).toContain('partial');
      await router.waitForAccess(1);
      expect(router.access[0]?.result).toBe('upstream_error');
      await eventually(() => (router.router.panel as unknown as { connections: number }).connections === 0);
    } finally {
      await router.close();
      await rude.close();
    }
  });

  it('over maxConnections → closed before reading, logged overloaded', async () => {
    const hold = await startTcpBackend('hold');
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' }, limits: { maxConnections: 1 } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${hold.address}] }\n` }) },
    );
    try {
      const first = connect(router.port(), '127.0.0.1');
      first.on('error', () => {});
      first.write('GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      await eventually(() => hold.hits === 1);
      const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      expect(res.length).toBe(0);
      await eventually(() => router.access.some((r) => r.result === 'overloaded'));
      expect(hold.hits).toBe(1);
      first.destroy();
    } finally {
      await router.close();
      await hold.close();
    }
  });
});

describe('net panel: CONNECT in per-connection mode', () => {
  it('is refused with 405 unless the listener allows it, and nothing reaches the backend', async () => {
    const sink = await startTcpBackend('sink');
    const router = await startTestRouter(
      { routing: 'per-connection', operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${sink.address}] }\n` }) },
    );
    try {
      const res = await rawRequest(
        router.port(),
        'CONNECT db.internal:5432 HTTP/1.1\r\nHost: db.internal:5432\r\n\r\n',
      );
      expect(statusOf(res)).toBe(405);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('method_not_allowed');
      expect(sink.hits).toBe(0);
    } finally {
      await router.close();
      await sink.close();
    }
  });
});
