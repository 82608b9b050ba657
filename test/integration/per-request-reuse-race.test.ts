/**
 * The keep-alive race (issue 40 item 9): a backend sends a response and its FIN in one write,
 * without `Connection: close`. The next request of the client, pipelined or sent right after,
 * was written to that closing connection and the client got a bare FIN. Now a request that
 * fails on a reused connection before any response byte is retried once on a new connection
 * when its method is idempotent (GET, HEAD, PUT, DELETE, OPTIONS, TRACE: as HAProxy does), and
 * answered 502 `upstream_reset` otherwise (POST, PATCH): never a bare close.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { collectRequests, noLeaks, splitResponses } from './per-request-helpers.ts';

describe('per-request: a response and FIN in one write, the next request right after', () => {
  let backend: TcpBackend;
  let router: TestRouter;
  const requests = collectRequests();

  beforeAll(async () => {
    // Answers the first request of each connection with its path, response and FIN in one write.
    backend = await startTcpBackend('closer', (socket) => {
      let seen = '';
      socket.on('data', (d: Buffer) => {
        if (seen.includes('\r\n\r\n')) return;
        seen += d.toString('latin1');
        if (!seen.includes('\r\n\r\n')) return;
        const path = /^[A-Z]+ (\S+)/.exec(seen)?.[1] ?? '?';
        socket.end(`HTTP/1.1 200 OK\r\nContent-Length: ${path.length}\r\n\r\n${path}`);
      });
    });
    router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: a.test, backends: [${backend.address}] }` }) },
    );
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    await backend.close();
  });

  const req = (method: string, path: string, last = false) =>
    `${method} ${path} HTTP/1.1\r\nHost: a.test\r\n${method === 'POST' || method === 'PUT' ? 'Content-Length: 2\r\n' : ''}${last ? 'Connection: close\r\n' : ''}\r\n${method === 'POST' || method === 'PUT' ? 'hi' : ''}`;

  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])(
    'pipelined: the second request (%s) is retried on a new connection and answered',
    async (method) => {
      const res = await rawRequest(router.port(), req('GET', '/one') + req(method, '/two', true));
      const [first, second] = splitResponses(res, ['GET', method]);
      expect(first?.status).toBe(200);
      expect(first?.body.toString()).toBe('/one');
      expect(second?.status).toBe(200);
      if (method !== 'HEAD') expect(second?.body.toString()).toBe('/two');
      await noLeaks(router);
    },
  );

  it('sent right after the first response: a GET is retried and answered', async () => {
    const s = connect({ port: router.port(), host: '127.0.0.1' });
    s.on('error', () => {});
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    s.write(req('GET', '/first'));
    await eventually(() => got.endsWith('/first'));
    s.write(req('GET', '/second', true));
    await closed;
    expect(got).toMatch(/\r\n\r\n\/first/);
    expect(got).toMatch(/\r\n\r\n\/second$/);
  });

  it.each(['POST', 'PATCH'])('pipelined: a %s is not retried: answered 502, never a bare close', async (method) => {
    const body = 'Content-Length: 2\r\n\r\nhi';
    const res = await rawRequest(
      router.port(),
      `${req('GET', '/one')}${method} /two HTTP/1.1\r\nHost: a.test\r\n${body}`,
    );
    const [first, second] = splitResponses(res, ['GET', method]);
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(502);
    expect(second?.head).toMatch(/X-Switchboard-Error: upstream_reset/i);
    await eventually(() => requests.records.some((r) => r.method === method && r.path === '/two'));
    expect(requests.records.find((r) => r.method === method && r.path === '/two')).toMatchObject({
      result: 'upstream_reset',
      status: 502,
    });
    await noLeaks(router);
  });
});
