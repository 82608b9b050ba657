/**
 * The net panel end to end: real backends, the real router on port 0, real clients.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, startTcpBackend, type TcpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

function get(port: number, host: string, path: string, agent?: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path, headers: { host }, agent: agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('net panel: routing by host and path (file book)', () => {
  let a: TestBackend;
  let b: TestBackend;
  let c: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    b = await startHttpBackend('b');
    c = await startHttpBackend('c');
    router = await startTestRouter(
      {
        // One case below asserts the classic keep-alive behaviour of per-connection routing.
        routing: 'per-connection',
        operator: 'round-robin',
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: www.example.test, backends: [${a.address}] }`,
            `- { host: "*.example.test", backends: [${b.address}] }`,
            `- { host: "*.example.test", path: /api, backends: [localhost:${c.port}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it.each([
    ['www.example.test', '/', 'a'],
    ['WWW.Example.TEST.', '/x', 'a'],
    ['shop.example.test', '/', 'b'],
    ['deep.shop.example.test', '/cart', 'b'],
    ['shop.example.test', '/api/v1/users', 'c'],
    ['shop.example.test', '/apiary', 'b'],
  ])('%s %s → backend %s', async (host, path, want) => {
    const res = await get(router.port(), host, path);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).backend).toBe(want);
  });

  it('answers 404 no_route for an unknown host, and logs the code', async () => {
    const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: nowhere.test\r\n\r\n');
    const text = res.toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text).toContain('X-Switchboard-Error: no_route');
    expect(text).toContain('Connection: close');
    await eventually(
      () => router.access.some((r) => r.result === 'no_route' && r.host === 'nowhere.test' && r.status === 404),
      10_000,
      'the no_route access record',
    );
  });

  it("keeps a keep-alive connection on the first request's backend (per-connection)", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(router.port(), 'www.example.test', '/', agent);
      expect(JSON.parse(first.body).backend).toBe('a');
      // Same connection, another host: per-connection mode keeps routing to the first backend.
      const second = await get(router.port(), 'shop.example.test', '/', agent);
      expect(JSON.parse(second.body).backend).toBe('a');
      expect(JSON.parse(second.body).host).toBe('shop.example.test');
    } finally {
      agent.destroy();
    }
  });

  it.each([1, 7])('routes a head fed %i byte(s) at a time', async (chunkSize) => {
    const res = await rawRequest(
      router.port(),
      'GET /api/split HTTP/1.1\r\nHost: shop.example.test\r\nConnection: close\r\n\r\n',
      { chunkSize, delayMs: 1 },
    );
    expect(res.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    expect(res.toString('latin1')).toContain('"backend":"c"');
  });
});

describe('net panel: bytes pass through unmodified', () => {
  let echo: TcpBackend;
  let router: TestRouter;
  const downstream = randomBytes(5 * 1024 * 1024);

  beforeAll(async () => {
    // Records the request, then answers with a fixed response head + 5 MiB of random bytes.
    echo = await startTcpBackend('echo', (socket) => {
      let seen = Buffer.alloc(0);
      socket.on('data', (d) => {
        seen = Buffer.concat([seen, d]);
        if (seen.includes('\r\n\r\n') && (seen.includes('X-Done: 1') || seen.length >= 5 * 1024 * 1024)) {
          socket.end(
            Buffer.concat([
              Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${downstream.length}\r\nConnection: close\r\n\r\n`),
              downstream,
            ]),
          );
        }
      });
      socket.on('end', () => socket.end());
    });
    router = await startTestRouter(
      {
        operator: 'round-robin',
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${echo.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await echo.close();
  });

  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  it('a 5 MiB random body up and a 5 MiB body down, compared by hash', async () => {
    const body = randomBytes(5 * 1024 * 1024);
    const head = Buffer.from(`POST /upload HTTP/1.1\r\nHost: bytes.test\r\nContent-Length: ${body.length}\r\n\r\n`);
    const sent = Buffer.concat([head, body]);
    const before = echo.received.length;
    const res = await rawRequest(router.port(), sent, { chunkSize: 64 * 1024, timeoutMs: 20_000 });
    const received = Buffer.concat(echo.received[before] ?? []);
    expect(sha(received)).toBe(sha(sent));
    const split = res.indexOf('\r\n\r\n');
    expect(sha(res.subarray(split + 4))).toBe(sha(downstream));
  });

  it('a chunked request and odd-but-valid header casing and spacing arrive byte for byte', async () => {
    const sent = Buffer.from(
      'POST /odd?x=1&y=%41 HTTP/1.1\r\nhOsT:   Bytes.Test  \r\nx-MiXeD-CaSe:\tvalue  with  spaces\r\n' +
        'Transfer-Encoding: chunked\r\nX-Done: 1\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer-A: 1\r\n\r\n',
      'latin1',
    );
    const before = echo.received.length;
    await rawRequest(router.port(), sent, { timeoutMs: 20_000 });
    expect(Buffer.concat(echo.received[before] ?? []).equals(sent)).toBe(true);
  });

  it('a client that half-closes after its request still gets the response', async () => {
    const before = echo.received.length;
    const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: bytes.test\r\nX-Done: 1\r\n\r\n', {
      end: true,
      timeoutMs: 20_000,
    });
    expect(echo.received.length).toBe(before + 1);
    expect(res.length).toBeGreaterThan(downstream.length);
    expect(sha(res.subarray(res.indexOf('\r\n\r\n') + 4))).toBe(sha(downstream));
  });
});
