/**
 * The soak's backends, each restartable on a fixed loopback port so a restart comes back on the
 * same address: an HTTP backend (GET, upload byte count, WebSocket echo), a TLS echo backend
 * (for passthrough) and an h2c backend.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import type { Server as NetServer, Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { WebSocketServer } from 'ws';
import type { CertPair } from '../harness/certs.ts';

/** A backend that can be stopped (its connections destroyed) and started again on its port. */
export interface Restartable {
  readonly name: string;
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Wraps a server factory: tracks sockets so `stop()` ends them, listens on 127.0.0.1:port. */
function restartable(name: string, port: number, make: () => NetServer): Restartable {
  let server: NetServer | undefined;
  const sockets = new Set<Socket>();
  return {
    name,
    port,
    async start() {
      const s = make();
      s.on('connection', (sock: Socket) => {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
      });
      await new Promise<void>((r) => s.listen(port, '127.0.0.1', () => r()));
      server = s;
    },
    async stop() {
      const s = server;
      server = undefined;
      for (const sock of sockets) sock.destroy();
      if (s !== undefined) await new Promise((r) => s.close(r));
    },
  };
}

/** HTTP: answers every request with the number of body bytes it got; WebSocket messages echo. */
export function httpBackend(name: string, port: number): Restartable {
  return restartable(name, port, () => {
    const server: Server = createServer((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => res.end(String(n)));
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (m, binary) => ws.send(m, { binary })));
    return server;
  });
}

/** TLS: echoes every byte after the handshake and ends when the client ends. */
export function tlsEchoBackend(name: string, port: number, pair: CertPair): Restartable {
  return restartable(name, port, () => {
    const server = createTlsServer({ cert: pair.certPem, key: pair.keyPem, allowHalfOpen: true }, (s) => {
      s.on('error', () => {});
      s.pipe(s);
    });
    server.on('tlsClientError', () => {});
    return server;
  });
}

/** h2c: every stream is answered 200 `h2c`. */
export function h2cBackend(name: string, port: number): Restartable {
  return restartable(name, port, () => {
    const server = createH2Server();
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end('h2c');
    });
    return server as unknown as NetServer;
  });
}
