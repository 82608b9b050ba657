/**
 * Protocol switches in per-request mode (hazard row 14, RFC 9112 §6.3 rules 1–2): a 101 answer
 * to Upgrade (WebSocket, with the `ws` package) and a 2xx answer to CONNECT turn the connection
 * into an opaque tunnel to that backend.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { collectRequests, type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

describe('per-request: WebSocket through the router', () => {
  let http: NamedBackend;
  let wsServer: Server;
  let wss: WebSocketServer;
  let router: TestRouter;
  const requests = collectRequests();

  beforeAll(async () => {
    http = await startNamedBackend('http');
    wsServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': '7' });
      res.end('ws-http');
    });
    wss = new WebSocketServer({ server: wsServer });
    // Echoes each message back with its type preserved, prefixed so the test sees the backend did it.
    wss.on('connection', (ws) =>
      ws.on('message', (data, isBinary) => {
        const buf = data as Buffer;
        ws.send(isBinary ? Buffer.concat([Buffer.from([0xee]), buf]) : `echo:${buf.toString()}`, { binary: isBinary });
      }),
    );
    await new Promise<void>((r) => wsServer.listen(0, '127.0.0.1', () => r()));
    const wsAddress = `127.0.0.1:${(wsServer.address() as AddressInfo).port}`;
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: "*", backends: [${http.address}] }`,
            `- { host: "*", path: /ws, backends: [${wsAddress}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    requests.stop();
    await router.close();
    for (const c of wss.clients) c.terminate();
    wss.close();
    await new Promise<void>((r) => wsServer.close(() => r()));
    await http.close();
  });

  it('echoes text and binary frames both ways, then closes cleanly', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${router.port()}/ws/chat`);
    const got: { text?: string; binary?: Buffer }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      ws.on('message', (data, isBinary) => {
        got.push(isBinary ? { binary: data as Buffer } : { text: (data as Buffer).toString() });
        if (got.length === 3) ws.close();
      });
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send('hello');
    ws.send(Buffer.from([1, 2, 3, 0, 255]));
    ws.send('x'.repeat(100_000));
    await done;
    expect(got[0]).toEqual({ text: 'echo:hello' });
    expect(got[1]?.binary).toEqual(Buffer.from([0xee, 1, 2, 3, 0, 255]));
    expect(got[2]?.text).toBe(`echo:${'x'.repeat(100_000)}`);
    await noLeaks(router, [http]);
    expect(requests.records.some((r) => r.status === 101 && r.path === '/ws/chat')).toBe(true);
  });

  it('a keep-alive request to one backend, then an Upgrade to another on the same connection', async () => {
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    const res = await rawRequest(
      router.port(),
      'GET /plain HTTP/1.1\r\nHost: a.test\r\n\r\n' +
        `GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n` +
        // A masked text frame "hi", then a close frame: sent before the 101 arrives.
        '\x81\x82\x00\x00\x00\x00hi\x88\x80\x00\x00\x00\x00',
    );
    const text = res.toString('latin1');
    expect(text).toContain('"backend":"http"');
    expect(text).toContain('HTTP/1.1 101 Switching Protocols');
    expect(text).toContain('echo:hi');
    await noLeaks(router, [http]);
  });
});

describe('per-request: CONNECT on a listener that allows it', () => {
  let target: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    // Accepts the CONNECT, then echoes every byte that follows.
    target = await startTcpBackend('target', (socket) => {
      let open = false;
      let seen = '';
      socket.on('data', (d) => {
        if (open) {
          socket.write(d);
          return;
        }
        seen += d.toString('latin1');
        const end = seen.indexOf('\r\n\r\n');
        if (end === -1) return;
        open = true;
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (seen.length > end + 4) socket.write(seen.slice(end + 4));
      });
      socket.on('end', () => socket.end());
    });
    router = await startTestRouter(
      {
        listeners: [{ name: 'web', address: '127.0.0.1:0', allowConnect: true }],
        operator: 'round-robin',
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: tunnel.test, backends: [${target.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await target.close();
  });

  it('becomes a tunnel on 2xx: bytes after the CONNECT are not parsed as HTTP', async () => {
    const res = await rawRequest(
      router.port(),
      'CONNECT tunnel.test:443 HTTP/1.1\r\nHost: tunnel.test:443\r\n\r\n\x16\x03\x01 not http at all \r\n\r\n',
      { end: true },
    );
    expect(res.toString('latin1')).toBe(
      'HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x01 not http at all \r\n\r\n',
    );
    await noLeaks(router);
  });
});
