/**
 * The `http2` panel: terminates HTTP/2 with node:http2 and routes every stream on its own
 * (one connection multiplexes many hosts and paths). See README.md in this folder.
 *
 *   plaintext listener ─ net ─ sniffPreface ─┬─ h2c ──► http2 server ─┐
 *                                            └─ http/1.1 ─► http server ┤── 'request' ─► handleStream
 *   tls: terminate ─ http2 secure server (ALPN h2, http/1.1) ───────────┘
 *
 * 1. Every accepted connection counts against `maxConnections` (over: closed, logged `overloaded`).
 * 2. Sessions idle for `idleTimeout` are closed (GOAWAY); HTTP/1 sockets time out likewise.
 * 3. `close`: stop accepting, GOAWAY every client session, let streams finish within
 *    `drainTimeout`, then close the upstream pools; `destroy` closes everything now.
 */

import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import {
  createServer as createH2Server,
  createSecureServer,
  type Http2SecureServer,
  type Http2Server,
  type Http2Session,
} from 'node:http2';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { channels } from '../../src/diagnostics.ts';
import type { PanelRuntime } from '../../src/engine.ts';
import type { BoundPanel, PanelFactory } from '../../src/panel.ts';
import { clientAddress } from '../net/client-address.ts';
import type { DownResponse } from './errors.ts';
import { sniffPreface } from './sniff.ts';
import { handleStream, type StreamContext } from './stream.ts';
import { loadTls } from './tls.ts';
import type { DownRequest } from './to-request.ts';
import { H1Pool } from './upstream-h1.ts';
import { H2Pool } from './upstream-h2.ts';

/** How long upstream sessions may take to close once every client connection is gone. */
const UPSTREAM_GRACE_MS = 1_000;

interface Bound {
  readonly config: ListenerConfig;
  /** The socket-owning server (net for plaintext, the secure server for TLS). */
  readonly server: Server;
  readonly h2: Http2Server | Http2SecureServer;
  readonly h1: HttpServer | undefined;
}

class Http2Panel implements BoundPanel {
  readonly #runtime: PanelRuntime;
  readonly #bound: Bound[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<Http2Session>();
  readonly #h2: H2Pool;
  readonly #h1: H1Pool;
  #idle: (() => void) | undefined;

  constructor(runtime: PanelRuntime) {
    this.#runtime = runtime;
    const { idleTimeout } = runtime.engine.limits;
    this.#h2 = new H2Pool(idleTimeout);
    this.#h1 = new H1Pool(idleTimeout);
  }

  /** Addresses actually bound, by listener name (port 0 resolved). */
  addresses(): Record<string, { host: string; port: number }> {
    const out: Record<string, { host: string; port: number }> = {};
    for (const b of this.#bound) {
      const a = b.server.address();
      if (a !== null && typeof a === 'object') out[b.config.name] = { host: a.address, port: a.port };
    }
    return out;
  }

  async start(): Promise<void> {
    const { config } = this.#runtime.engine.loaded;
    try {
      for (const l of config.listeners) this.#bound.push(await this.#listen(l));
    } catch (e) {
      this.destroy();
      throw e;
    }
    for (const [name, a] of Object.entries(this.addresses())) {
      this.#runtime.logger.info({ listener: name, address: `${a.host}:${a.port}`, panel: 'http2' }, 'listening');
    }
  }

  /** The HTTP/2 (and HTTP/1.1) servers of one listener, wired to handleStream. */
  #servers(l: ListenerConfig): Pick<Bound, 'h2' | 'h1'> {
    const ctx: StreamContext = { runtime: this.#runtime, listener: l, h2: this.#h2, h1: this.#h1 };
    const onRequest = (req: DownRequest, res: DownResponse) => handleStream(req, res, ctx);
    const { idleTimeout } = this.#runtime.engine.limits;
    const h2 =
      l.tls === 'terminate'
        ? createSecureServer({ ...loadTls(l, this.#runtime.engine.loaded.dir), allowHTTP1: true })
        : createH2Server();
    h2.on('request', onRequest);
    h2.on('session', (session: Http2Session) => {
      this.#sessions.add(session);
      session.setTimeout(idleTimeout, () => session.close());
      session.once('close', () => this.#sessions.delete(session));
      session.on('error', () => {});
    });
    // A stream-level protocol error from a client: node resets the stream; nothing to route.
    h2.on('sessionError', () => {});
    let h1: HttpServer | undefined;
    if (l.tls !== 'terminate') {
      h1 = createHttpServer({ requestTimeout: 0 }, onRequest);
      h1.keepAliveTimeout = idleTimeout;
      h1.on('clientError', (_err, socket) => socket.destroy());
    }
    return { h2, h1 };
  }

  #listen(l: ListenerConfig): Promise<Bound> {
    if (l.tls === 'passthrough') {
      throw new Error(`listeners.${l.name}.tls: passthrough is served by the net panel, not http2`);
    }
    const { h2, h1 } = this.#servers(l);
    const server: Server =
      h1 === undefined
        ? (h2 as unknown as Server)
        : createNetServer({ noDelay: true }, (socket) => {
            sniffPreface(socket, this.#runtime.engine.limits.peekTimeout, (isH2c) =>
              (isH2c ? h2 : h1).emit('connection', socket),
            );
          });
    server.prependListener('connection', (socket: Socket) => this.#accept(socket, l));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: l.address.host, port: l.address.port, backlog: 4096 }, () => {
        server.removeListener('error', reject);
        server.on('error', (err) =>
          this.#runtime.logger.error({ listener: l.name, err: err.message }, 'listener error'),
        );
        resolve({ config: l, server, h2, h1 });
      });
    });
  }

  /** Counts a new client connection; over maxConnections it is closed at once. */
  #accept(socket: Socket, l: ListenerConfig): void {
    socket.on('error', () => {});
    if (this.#sockets.size >= this.#runtime.engine.limits.maxConnections) {
      socket.destroy();
      const record = {
        listener: l.name,
        client: clientAddress(socket),
        bytesIn: 0,
        bytesOut: 0,
        durationMs: 0,
        result: 'overloaded',
      };
      this.#runtime.accessLog(record);
      if (channels.connectionEnd.hasSubscribers) channels.connectionEnd.publish({ record });
      return;
    }
    this.#sockets.add(socket);
    if (channels.accept.hasSubscribers) channels.accept.publish({ listener: l.name, socket });
    socket.once('close', () => {
      this.#sockets.delete(socket);
      if (this.#sockets.size === 0) this.#idle?.();
    });
  }

  /** Open client connections. */
  get connections(): number {
    return this.#sockets.size;
  }

  async close(): Promise<void> {
    const closing = this.#bound.map((b) => new Promise<void>((r) => b.server.close(() => r())));
    for (const b of this.#bound) b.h1?.closeIdleConnections();
    const bound = this.#bound.splice(0);
    for (const s of this.#sessions) s.close();
    if (this.#sockets.size > 0) {
      // HTTP/1 keep-alive sockets become idle as their requests finish: close them as they do.
      const sweep = setInterval(() => {
        for (const b of bound) b.h1?.closeIdleConnections();
      }, 50);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#runtime.engine.limits.drainTimeout);
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      clearInterval(sweep);
      for (const s of this.#sockets) s.destroy();
    }
    await Promise.all(closing);
    // Client streams are gone; upstream sessions get a short grace to finish, then are destroyed.
    const grace = new Promise<void>((r) => setTimeout(r, UPSTREAM_GRACE_MS).unref());
    await Promise.race([this.#h2.close(), grace]);
    this.#h2.destroy();
    this.#h1.close();
  }

  destroy(): void {
    for (const b of this.#bound) b.server.close();
    this.#bound.length = 0;
    for (const s of this.#sessions) s.destroy();
    for (const s of this.#sockets) s.destroy();
    this.#h2.destroy();
    this.#h1.close();
  }
}

/** The `http2` panel factory. */
export const http2Panel = {
  name: 'http2',
  create: (runtime: PanelRuntime) => new Http2Panel(runtime),
} satisfies PanelFactory;

export type { Http2Panel };
