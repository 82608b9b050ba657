/**
 * The http2 panel's private upstream pools (issue 17 item 7): with an outbound PROXY header a
 * pool names one client connection, so its connections (HTTP/1) or session (h2c) close when
 * that client connection closes, not `idleTimeout` (here 60 s) later. Shared pools (no PROXY)
 * stay for the next client. Counted in the router (the registry's open connections per backend).
 */
import { type ClientHttp2Session, createServer as createH2Server, connect as h2connect } from 'node:http2';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { h2Request } from './http2-helpers.ts';

/**
 * A backend behind PROXY v2: strips the header (16 bytes + its length), then hands the socket to
 * `serve` (an HTTP/1 or h2c server) with the bytes that followed it.
 */
async function proxyBackend(serve: (socket: Socket) => void): Promise<{ server: Server; address: string }> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.length < 16) return;
      const length = 16 + buf.readUInt16BE(14);
      if (buf.length < length) return;
      socket.removeListener('data', onData);
      socket.pause();
      if (buf.length > length) socket.unshift(buf.subarray(length));
      serve(socket);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Answers every request head with 200 `ok` (keep-alive). */
function http1(socket: Socket): void {
  let text = '';
  socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
    let end = text.indexOf('\r\n\r\n');
    while (end !== -1) {
      text = text.slice(end + 4);
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      end = text.indexOf('\r\n\r\n');
    }
  });
  socket.resume();
}

const h2 = createH2Server();
h2.on('stream', (stream) => {
  stream.respond({ ':status': 200 });
  stream.end('ok');
});
h2.on('sessionError', () => {});

function connectClient(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = h2connect(`http://127.0.0.1:${port}`);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

const get = (host: string) => ({ ':method': 'GET', ':path': '/x', ':authority': host });

describe('http2 panel: private pools close with their client connection', () => {
  let ppH1: Awaited<ReturnType<typeof proxyBackend>>;
  let ppH2: Awaited<ReturnType<typeof proxyBackend>>;
  let shared: Awaited<ReturnType<typeof proxyBackend>>;
  let router: TestRouter;

  beforeAll(async () => {
    ppH1 = await proxyBackend(http1);
    ppH2 = await proxyBackend((socket) => h2.emit('connection', socket));
    // No PROXY header towards this one: a plain HTTP/1 backend behind a shared pool.
    shared = { server: createServer(http1), address: '' };
    await new Promise<void>((r) => shared.server.listen(0, '127.0.0.1', () => r()));
    shared = { ...shared, address: `127.0.0.1:${(shared.server.address() as AddressInfo).port}` };
    const cluster = (address: string, policy: Record<string, unknown>) => ({
      retries: 0,
      ...policy,
      subclusters: { s: { weight: 1, backends: [{ address }] } },
    });
    const product = (host: string, c: string) => ({ hosts: [host], rules: [{ cond: 'default_t()', cluster: c }] });
    router = await startTestRouter({
      panel: 'http2',
      limits: { idleTimeout: '60s' },
      addressBook: {
        name: 'bfe',
        products: {
          h1: product('h1.test', 'h1'),
          h2: product('h2.test', 'h2'),
          shared: product('shared.test', 'shared'),
        },
        clusters: {
          h1: cluster(ppH1.address, { proxyProtocol: 'v2' }),
          h2: cluster(ppH2.address, { proxyProtocol: 'v2', protocol: 'h2c' }),
          shared: cluster(shared.address, {}),
        },
      },
    });
  });
  afterAll(async () => {
    await router?.close();
    for (const b of [ppH1, ppH2, shared]) {
      b?.server.close();
    }
  });

  const active = (address: string) => router.router.runtime.registry.peek(address)?.active ?? 0;

  it('HTTP/1 and h2c upstreams behind PROXY close when the client closes; a shared pool stays', async () => {
    const client = await connectClient(router.port());
    try {
      // Two streams at once towards the HTTP/1 backend: two private connections.
      const replies = await Promise.all([
        h2Request(client, get('h1.test')),
        h2Request(client, get('h1.test')),
        h2Request(client, get('h2.test')),
        h2Request(client, get('shared.test')),
      ]);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(active(ppH1.address)).toBeGreaterThanOrEqual(1);
      expect(active(ppH2.address)).toBe(1);
      expect(active(shared.address)).toBe(1);
    } finally {
      client.close();
    }
    await eventually(
      () => active(ppH1.address) === 0 && active(ppH2.address) === 0,
      10_000,
      'private upstreams closed with their client connection',
    );
    // The shared pool keeps its idle connection for the next client (until idleTimeout).
    expect(active(shared.address)).toBe(1);
    const next = await connectClient(router.port());
    try {
      expect((await h2Request(next, get('shared.test'))).status).toBe(200);
      expect(active(shared.address)).toBe(1);
    } finally {
      next.close();
    }
  });
});
