/**
 * Test backends on port 0: an HTTP server that says who it is, the same behind a PROXY header
 * (`startProxiedHttpBackend`), and a raw TCP server that records every byte it receives. All
 * track their open sockets and close everything on `close()`.
 */
import type { ChildProcessByStdio } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { type ProxyHeader, parseProxyHeader } from '../../src/proxy-protocol/index.ts';

export interface TestBackend {
  readonly name: string;
  readonly port: number;
  readonly address: string;
  /** Requests (HTTP) or connections (TCP) received. */
  readonly hits: number;
  close(): Promise<void>;
}

function track(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return sockets;
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((r) => server.close(() => r()));
}

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse, name: string) => void;

const whoami: HttpHandler = (req, res, name) => {
  const body = JSON.stringify({ backend: name, host: req.headers.host, url: req.url, method: req.method });
  res.writeHead(200, {
    'content-type': 'application/json',
    'x-backend': name,
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
};

/**
 * An HTTP backend answering `{ backend, host, url, method }` unless given a handler; on `port`
 * when given (a backend restarted where it was), else on a free one.
 */
export async function startHttpBackend(name: string, handler: HttpHandler = whoami, port = 0): Promise<TestBackend> {
  let hits = 0;
  const server = createHttpServer((req, res) => {
    hits++;
    handler(req, res, name);
  });
  const sockets = track(server);
  const bound = await listen(server, port);
  return {
    name,
    port: bound,
    address: `127.0.0.1:${bound}`,
    get hits() {
      return hits;
    },
    close: () => closeServer(server, sockets),
  };
}

export interface TcpBackend extends TestBackend {
  /** Every byte received, per connection, in order. */
  readonly received: Buffer[][];
  all(): Buffer;
}

/** A raw TCP backend; `onConnection` decides what to answer (default: nothing). */
export async function startTcpBackend(name: string, onConnection?: (socket: Socket) => void): Promise<TcpBackend> {
  const received: Buffer[][] = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const chunks: Buffer[] = [];
    received.push(chunks);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {});
    onConnection?.(socket);
  });
  const sockets = track(server);
  const port = await listen(server);
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    received,
    get hits() {
      return received.length;
    },
    all: () => Buffer.concat(received.flat()),
    close: () => closeServer(server, sockets),
  };
}

/** A port that was free a moment ago (nothing listens there): connects to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A python3 listener with backlog 0 whose accept queue is full: further SYNs are dropped. */
export interface FullBacklog {
  readonly port: number;
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  /** The connections that fill the queue (destroy them to let the next connect in). */
  readonly fillers: readonly Socket[];
}

/**
 * Runs `script` (python3, with `args`), which binds 127.0.0.1:0 with `listen(0)` and prints its
 * port, then fills its accept queue, so the kernel drops further SYNs until a filler goes.
 */
export async function fullBacklog(script: string, args: readonly string[] = []): Promise<FullBacklog> {
  const { spawn } = await import('node:child_process');
  const { connect } = await import('node:net');
  const child = spawn('python3', ['-c', script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('error', reject);
  });
  const fillers: Socket[] = [];
  for (let i = 0; i < 3; i++) {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('error', () => {});
    fillers.push(s);
  }
  await new Promise((r) => setTimeout(r, 100));
  return { port, child, fillers };
}

/**
 * A loopback port whose connects hang: a listener with backlog 0 that never accepts, its accept
 * queue filled first, so the kernel drops further SYNs (the connect-timeout path, on loopback only).
 */
export async function startBlackhole(): Promise<{ port: number; close(): Promise<void> }> {
  const { port, child, fillers } = await fullBacklog(
    'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(120)',
  );
  return {
    port,
    async close() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}

export interface ProxiedHttpBackend extends TestBackend {
  /** The PROXY header of every connection, in order (parsed by the router's own strict parser). */
  readonly headers: ProxyHeader[];
  /** Connections open now. */
  readonly open: number;
}

/**
 * An HTTP/1.1 backend behind a cluster with `proxyProtocol: v1 | v2`: each connection must start
 * with a PROXY header (a missing or malformed one closes it, as HAProxy and nginx do); the rest
 * is served by `handler` (default: who am I).
 */
export async function startProxiedHttpBackend(
  name: string,
  handler: HttpHandler = whoami,
): Promise<ProxiedHttpBackend> {
  let hits = 0;
  const headers: ProxyHeader[] = [];
  const http = createHttpServer((req, res) => {
    hits++;
    handler(req, res, name);
  });
  const server = createServer((socket) => {
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      let header: ProxyHeader | undefined;
      try {
        header = parseProxyHeader(buf, 'any', 65_536 + 16);
      } catch {
        socket.destroy();
        return;
      }
      if (header === undefined) return;
      socket.removeListener('data', onData);
      headers.push(header);
      socket.pause();
      const rest = buf.subarray(header.length);
      if (rest.length > 0) socket.unshift(rest);
      http.emit('connection', socket);
      socket.resume();
    };
    socket.on('data', onData);
  });
  const sockets = track(server);
  const port = await listen(server);
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    headers,
    get hits() {
      return hits;
    },
    get open() {
      return sockets.size;
    },
    close: () => closeServer(server, sockets),
  };
}
