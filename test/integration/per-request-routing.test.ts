/**
 * Per-request routing on HTTP/1.1 keep-alive (issue 6): one client connection, requests to two
 * backends behind host and path rules, real clients (Node http.Agent, curl) and raw bytes.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import {
  collectRequests,
  type NamedBackend,
  noLeaks,
  splitResponses,
  startNamedBackend,
} from './per-request-helpers.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const BIG = randomBytes(10 * 1024 * 1024);

interface Reply {
  status: number;
  body: Buffer;
  localPort: number;
  headers: Record<string, string | string[] | undefined>;
}

function send(
  port: number,
  agent: Agent,
  host: string,
  path: string,
  init: { method?: string; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { port, host: '127.0.0.1', path, method: init.method ?? 'GET', headers: { host, ...init.headers }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks),
            localPort: req.socket?.localPort ?? res.socket.localPort ?? 0,
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    if (init.headers?.expect === '100-continue') req.on('continue', () => req.end(init.body));
    else req.end(init.body);
  });
}

const backendOf = (r: Reply) => JSON.parse(r.body.toString()).backend as string;

describe('per-request routing: one keep-alive connection, two backends', () => {
  let a: NamedBackend;
  let b: NamedBackend;
  let router: TestRouter;
  const requests = collectRequests();

  beforeAll(async () => {
    a = await startNamedBackend('a', (req, res, body) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-length': BIG.length, 'x-backend': 'a' });
        res.end(BIG);
        return;
      }
      const text = JSON.stringify({ backend: 'a', url: req.url, host: req.headers.host, body: sha(body) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
    });
    b = await startNamedBackend('b', (req, res, body) => {
      const text = JSON.stringify({
        backend: 'b',
        url: req.url,
        host: req.headers.host,
        body: sha(body),
        trailer: req.trailers['x-sum'] ?? null,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: a.test, backends: [${a.address}] }`,
            `- { host: a.test, path: /api, backends: [${b.address}] }`,
            `- { host: b.test, backends: [${b.address}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterEach(async () => {
    await noLeaks(router, [a, b]);
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    await Promise.all([a.close(), b.close()]);
  });

  it('Node http.Agent keep-alive alternating hosts and paths reaches the right backend every time', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = requests.records.length;
    const plan: [string, string, string][] = [
      ['a.test', '/', 'a'],
      ['b.test', '/', 'b'],
      ['a.test', '/api/users', 'b'],
      ['a.test', '/x', 'a'],
      ['b.test', '/y', 'b'],
      ['a.test', '/apiary', 'a'],
    ];
    try {
      const ports = new Set<number>();
      for (let round = 0; round < 2; round++) {
        for (const [host, path, want] of plan) {
          const r = await send(router.port(), agent, host, path);
          expect(r.status).toBe(200);
          expect(backendOf(r)).toBe(want);
          expect(JSON.parse(r.body.toString()).url).toBe(path);
          ports.add(r.localPort);
        }
      }
      expect(ports.size).toBe(1); // one client connection throughout
    } finally {
      agent.destroy();
    }
    await eventually(() => requests.records.length >= before + 12, 10_000, '12 request records');
    const mine = requests.records.slice(before, before + 12);
    expect(mine.map((r) => r.backend)).toEqual(
      [...plan, ...plan].map(([, , want]) => (want === 'a' ? a.address : b.address)),
    );
    for (const r of mine) {
      expect(r).toMatchObject({ result: 'ok', status: 200, protocol: 'http1', method: 'GET' });
      expect(r.bytesIn).toBeGreaterThan(0);
      expect(r.bytesOut).toBeGreaterThan(0);
      // The access line's field order (the record's key order) is part of the log format.
      expect(Object.keys(r)).toEqual([
        'listener',
        'client',
        'protocol',
        'bytesIn',
        'bytesOut',
        'durationMs',
        'result',
        'host',
        'path',
        'method',
        'product',
        'cluster',
        ...('attempts' in r ? ['attempts'] : []), // the request that opened a new upstream connection
        'backend',
        'status',
      ]);
    }
  });

  it('curl with several URLs on one connection', async () => {
    const port = router.port();
    const urls = ['/one', '/api/two', '/three', '/api/four'].map((p) => `http://127.0.0.1:${port}${p}`);
    const { stdout } = await promisify(execFile)('curl', [
      '-s',
      '--http1.1',
      '-H',
      'Host: a.test',
      '-w',
      ' %{num_connects}\\n',
      ...urls,
    ]);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    const got = lines.map((l) => {
      const [json, connects] = [l.slice(0, l.lastIndexOf(' ')), l.slice(l.lastIndexOf(' ') + 1)];
      return [JSON.parse(json).backend, JSON.parse(json).url, Number(connects)];
    });
    expect(got).toEqual([
      ['a', '/one', 1],
      ['b', '/api/two', 0],
      ['a', '/three', 0],
      ['b', '/api/four', 0],
    ]);
  });

  it('raw pipelined requests in one write are answered in order by the right backends', async () => {
    const res = await rawRequest(
      router.port(),
      'GET /1 HTTP/1.1\r\nHost: a.test\r\n\r\n' +
        'GET /2 HTTP/1.1\r\nHost: b.test\r\n\r\n' +
        'HEAD /3 HTTP/1.1\r\nHost: a.test\r\n\r\n' +
        'GET /api/4 HTTP/1.1\r\nHost: a.test\r\n\r\n' +
        'GET /5 HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    const parts = splitResponses(res, ['GET', 'GET', 'HEAD', 'GET', 'GET']);
    expect(parts.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
    const json = parts.filter((_, i) => i !== 2).map((p) => JSON.parse(p.body.toString()));
    expect(json.map((j) => `${j.backend}${j.url}`)).toEqual(['a/1', 'b/2', 'b/api/4', 'a/5']);
    expect(parts[2]!.body.length).toBe(0);
    // Nothing after the last response: the router closed after `Connection: close`.
    const last = parts[4]!;
    expect(res.length).toBe(res.indexOf(last.body) + last.body.length);
  });

  it('HEAD then GET on one connection (the HEAD response has no body)', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const head = await send(router.port(), agent, 'a.test', '/h', { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
      expect(head.body.length).toBe(0);
      const get = await send(router.port(), agent, 'b.test', '/g');
      expect(backendOf(get)).toBe('b');
      expect(get.localPort).toBe(head.localPort);
    } finally {
      agent.destroy();
    }
  });

  it('Expect: 100-continue upload, then another request on the same connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const body = randomBytes(200_000);
    try {
      const up = await send(router.port(), agent, 'b.test', '/upload', {
        method: 'POST',
        body,
        headers: { expect: '100-continue', 'content-length': String(body.length) },
      });
      expect(up.status).toBe(200);
      expect(JSON.parse(up.body.toString()).body).toBe(sha(body));
      const next = await send(router.port(), agent, 'a.test', '/after');
      expect(backendOf(next)).toBe('a');
      expect(next.localPort).toBe(up.localPort);
    } finally {
      agent.destroy();
    }
  });

  it('a chunked request with extensions and trailers, then a request to the other backend', async () => {
    const res = await rawRequest(
      router.port(),
      'POST /api/chunked HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n' +
        '5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n' +
        'GET /plain HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    const [first, second] = splitResponses(res, ['POST', 'GET']);
    const j = JSON.parse(first!.body.toString());
    expect(j).toMatchObject({ backend: 'b', body: sha(Buffer.from('hello world')), trailer: '42' });
    expect(JSON.parse(second!.body.toString())).toMatchObject({ backend: 'a', url: '/plain' });
  });

  it('10 MiB upload and 10 MiB download in the middle of a keep-alive sequence', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await send(router.port(), agent, 'a.test', '/start');
      const up = await send(router.port(), agent, 'b.test', '/up', { method: 'POST', body: BIG });
      expect(JSON.parse(up.body.toString())).toMatchObject({ backend: 'b', body: sha(BIG) });
      const down = await send(router.port(), agent, 'a.test', '/big');
      expect(down.body.length).toBe(BIG.length);
      expect(sha(down.body)).toBe(sha(BIG));
      const last = await send(router.port(), agent, 'b.test', '/end');
      expect(backendOf(last)).toBe('b');
      expect(new Set([first.localPort, up.localPort, down.localPort, last.localPort]).size).toBe(1);
    } finally {
      agent.destroy();
    }
  }, 30_000);
});

describe('per-request routing: backends that close', () => {
  let closer: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    // Answers each request head, then closes: with or without saying `Connection: close`.
    closer = await startTcpBackend('closer', (socket) => {
      let seen = '';
      socket.on('data', (d) => {
        seen += d.toString('latin1');
        if (!seen.includes('\r\n\r\n')) return;
        const announce = seen.includes('/announce');
        socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n${announce ? 'Connection: close\r\n' : ''}\r\nok`);
      });
    });
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${closer.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await closer.close();
  });

  function open(): Promise<{ socket: Socket; read(n: number): Promise<string>; closed: Promise<void> }> {
    const socket = connect(router.port(), '127.0.0.1');
    let data = '';
    const waiters: (() => void)[] = [];
    socket.on('data', (d) => {
      data += d.toString('latin1');
      for (const w of waiters.splice(0)) w();
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    const read = async (n: number) => {
      while (data.split('\r\n\r\nok').length - 1 < n) await new Promise<void>((r) => waiters.push(r));
      return data;
    };
    return new Promise((r) => socket.once('connect', () => r({ socket, read, closed })));
  }

  it('a backend that closes after a response is replaced for the next request', async () => {
    const before = closer.received.length;
    const c = await open();
    c.socket.write('GET /1 HTTP/1.1\r\nHost: x.test\r\n\r\n');
    await c.read(1);
    // The router has seen the backend close once no upstream is counted active.
    await eventually(() => [...router.router.runtime.registry.all()].every((s) => s.active === 0));
    c.socket.write('GET /2 HTTP/1.1\r\nHost: x.test\r\n\r\n');
    const text = await c.read(2);
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(closer.received.length).toBe(before + 2);
    c.socket.destroy();
    await noLeaks(router);
  });

  it('after a response that says Connection: close, the router closes the client too', async () => {
    const c = await open();
    c.socket.write('GET /announce HTTP/1.1\r\nHost: x.test\r\n\r\n');
    await c.closed;
    await noLeaks(router);
  });
});
