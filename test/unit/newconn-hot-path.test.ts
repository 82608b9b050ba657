/**
 * The per-connection path (issue 18, new connection per request): the peek hands its head on
 * within the read that completed it (no promise between accept and connect), and a Request
 * reads the socket's local address (a getsockname) only when something asks, and the peek and
 * the splice keep their state in a slot on the socket, not in a WeakMap entry per socket.
 * Counted, never timed.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { splice } from '../../src/data-path/splice.ts';
import { type Peeked, type PeekFailure, peekThen } from '../../src/peek/peek.ts';
import { requestFromPeek } from '../../src/request/from-peek.ts';

const MAX = 16384;
let server: Server | undefined;
let client: Socket | undefined;

afterEach(() => {
  client?.destroy();
  server?.close();
});

/** Peeks the first head a client sends; `done` also says whether it ran inside the read. */
function peekOne(
  head: string,
): Promise<{ peeked: Peeked | undefined; failure: PeekFailure | undefined; inRead: boolean }> {
  return new Promise((resolve) => {
    server = createServer({ allowHalfOpen: true }, (socket) => {
      let inRead = false;
      // Runs first on each read; its microtask runs after the read's own listeners.
      socket.prependListener('data', () => {
        inRead = true;
        queueMicrotask(() => {
          inRead = false;
        });
      });
      peekThen(
        socket,
        { peekTimeout: 5000, maxHeaderBytes: MAX, tls: 'off', h2c: 'allow', proxy: undefined },
        (failure, peeked) => {
          resolve({ peeked, failure, inRead });
          socket.destroy();
        },
      );
    });
    server.listen(0, '127.0.0.1', () => {
      const a = server!.address() as { port: number };
      client = tcpConnect(a.port, '127.0.0.1', () => client!.write(head));
      client.on('error', () => {});
    });
  });
}

describe('new connection hot path', () => {
  it('hands the peeked head on inside the read that completed it (no promise hop)', async () => {
    const r = await peekOne('GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n');
    expect(r.failure).toBeUndefined();
    expect(r.peeked?.kind).toBe('http1');
    expect(r.inRead).toBe(true);
  });

  it('builds a Request without reading the local address until it is asked for', async () => {
    const r = await peekOne('GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n');
    const reads = { localAddress: 0, localPort: 0 };
    const socket = {
      remoteAddress: '127.0.0.1',
      remotePort: 4000,
      get localAddress() {
        reads.localAddress++;
        return '127.0.0.2';
      },
      get localPort() {
        reads.localPort++;
        return 80;
      },
    };
    const request = requestFromPeek(r.peeked!, { listener: 'web', socket: socket as never, addressing: undefined });
    expect(request.host).toBe('a.test');
    expect(reads).toEqual({ localAddress: 0, localPort: 0 });
    expect([request.localIp, request.localPort, request.localIp]).toEqual(['127.0.0.2', 80, '127.0.0.2']);
    expect(reads).toEqual({ localAddress: 1, localPort: 1 });
  });

  it('peeks and splices a connection without a WeakMap entry keyed by either socket', async () => {
    const keys: unknown[] = [];
    const set = WeakMap.prototype.set;
    const spy = vi.spyOn(WeakMap.prototype, 'set').mockImplementation(function (this: WeakMap<object, unknown>, k, v) {
      keys.push(k);
      return set.call(this, k, v);
    });
    try {
      const backend = createServer((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
      await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
      const backendPort = (backend.address() as { port: number }).port;
      const sockets: Socket[] = [];
      const ended = new Promise<string>((resolve) => {
        server = createServer({ allowHalfOpen: true }, (socket) => {
          sockets.push(socket);
          peekThen(
            socket,
            { peekTimeout: 5000, maxHeaderBytes: MAX, tls: 'off', h2c: 'allow', proxy: undefined },
            (_failure, peeked) => {
              const up = tcpConnect({ port: backendPort, host: '127.0.0.1', allowHalfOpen: true }, () => {
                up.pause();
                sockets.push(up);
                splice(socket, up, peeked!.buffer, 5000, resolve);
              });
            },
          );
        });
      });
      const answer = await new Promise<string>((resolve) => {
        server!.listen(0, '127.0.0.1', () => {
          const a = server!.address() as { port: number };
          let got = '';
          client = tcpConnect(a.port, '127.0.0.1', () => client!.write('GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n'));
          client.on('data', (d) => {
            got += d.toString('latin1');
          });
          client.on('end', () => {
            client!.end();
            resolve(got);
          });
        });
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(await ended).toBe('ok');
      backend.close();
      expect(sockets).toHaveLength(2);
      expect(keys.filter((k) => sockets.includes(k as Socket))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});
