/**
 * HTTP/2 upstreams (cluster `protocol: h2c | h2`): one multiplexed session per backend, shared
 * by every stream routed there.
 *
 * 1. `open` takes the backend's session, or connects a new one under `connectTimeout` (DNS
 *    included, src/connect.ts); concurrent streams wait on the same connect. A failed connect
 *    rejects with `ConnectError`, which the caller retries on another backend.
 * 2. `h2` wraps the TCP connection in TLS with ALPN `h2`, verified against Node's CA store
 *    (add private CAs with NODE_EXTRA_CA_CERTS); a failed handshake counts as a failed connect.
 * 3. A session that receives GOAWAY, errors, or closes leaves the pool at once, so the next
 *    stream opens a new session while the old one finishes its streams.
 * 4. Registry: `connected` when a session's connection is up, `closed` when it closes, so
 *    `active` counts sessions (not streams) for these backends.
 * 5. Idle sessions close after `idleTimeout`; `close` sends GOAWAY on every session and lets
 *    their streams finish.
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect as h2connect } from 'node:http2';
import { isIP, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { BackendRegistry } from '../../src/backend-registry.ts';
import { ConnectError, connectBackend } from '../../src/connect.ts';
import type { Backend } from '../../src/types.ts';
import type { Exchange, ExchangeEvents } from './exchange.ts';
import { type Head, h2RequestHeaders, responseHeaders, trailerFields } from './headers.ts';

/** The END_STREAM flag of a HEADERS frame (RFC 9113 §6.2). */
const END_STREAM = 0x1;

/** Wraps a connected socket in TLS (ALPN h2) within what is left of the connect deadline. */
function secure(socket: Socket, backend: Backend, timeoutMs: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const where = `tls ${backend.host}:${backend.port}`;
    const tls = tlsConnect({
      socket,
      ALPNProtocols: ['h2'],
      ...(isIP(backend.host) === 0 ? { servername: backend.host } : {}),
    });
    const timer = setTimeout(() => {
      tls.destroy();
      reject(new ConnectError(`${where}: handshake timed out after ${timeoutMs}ms`, true));
    }, timeoutMs);
    tls.once('error', (err) => {
      clearTimeout(timer);
      tls.destroy();
      reject(new ConnectError(`${where}: ${err.message}`, false));
    });
    tls.once('secureConnect', () => {
      clearTimeout(timer);
      if (tls.alpnProtocol !== 'h2') {
        tls.destroy();
        reject(new ConnectError(`${where}: backend did not negotiate h2`, false));
      } else resolve(tls);
    });
  });
}

/** Pooled HTTP/2 sessions, one per backend and protocol. */
export class H2Pool {
  readonly #registry: BackendRegistry;
  readonly #idleTimeout: number;
  readonly #sessions = new Map<string, Promise<ClientHttp2Session>>();
  readonly #all = new Set<ClientHttp2Session>();

  constructor(registry: BackendRegistry, idleTimeout: number) {
    this.#registry = registry;
    this.#idleTimeout = idleTimeout;
  }

  /** Sessions currently open (for tests and drain). */
  get size(): number {
    return this.#all.size;
  }

  /** The backend's session, connecting one when there is none usable. Rejects with ConnectError. */
  session(backend: Backend, tls: boolean, connectTimeout: number): Promise<ClientHttp2Session> {
    const key = `${tls ? 'h2' : 'h2c'} ${backend.id}`;
    const pending = this.#sessions.get(key);
    if (pending !== undefined) return pending;
    const created = this.#connect(backend, tls, connectTimeout, key);
    this.#sessions.set(key, created);
    created.catch(() => {
      if (this.#sessions.get(key) === created) this.#sessions.delete(key);
    });
    return created;
  }

  async #connect(backend: Backend, tls: boolean, timeoutMs: number, key: string): Promise<ClientHttp2Session> {
    const started = performance.now();
    let socket: Socket;
    try {
      socket = await connectBackend(backend.host, backend.port, timeoutMs);
      if (tls) socket = await secure(socket, backend, Math.max(1, timeoutMs - (performance.now() - started)));
    } catch (e) {
      if (e instanceof ConnectError) this.#registry.connectFailed(backend.id);
      throw e;
    }
    this.#registry.connected(backend.id, performance.now() - started);
    const authority = `${tls ? 'https' : 'http'}://${backend.host.includes(':') ? `[${backend.host}]` : backend.host}:${backend.port}`;
    const session = h2connect(authority, { createConnection: () => socket });
    this.#all.add(session);
    const forget = () => {
      if (this.#sessions.get(key) === current) this.#sessions.delete(key);
    };
    const current = Promise.resolve(session);
    session.on('error', forget);
    session.on('goaway', forget);
    session.once('close', () => {
      forget();
      this.#all.delete(session);
      this.#registry.closed(backend.id);
    });
    session.setTimeout(this.#idleTimeout, () => session.close());
    this.#sessions.set(key, current);
    return session;
  }

  /** Opens a stream for `head` on the backend's session. Rejects with ConnectError. */
  async open(
    backend: Backend,
    tls: boolean,
    connectTimeout: number,
    head: Head,
    endStream: boolean,
  ): Promise<Exchange> {
    let session = await this.session(backend, tls, connectTimeout);
    if (session.closed || session.destroyed) {
      this.#sessions.delete(`${tls ? 'h2' : 'h2c'} ${backend.id}`);
      session = await this.session(backend, tls, connectTimeout);
    }
    const stream = session.request(h2RequestHeaders(head), { endStream, waitForTrailers: !endStream });
    return h2Exchange(stream);
  }

  /** GOAWAY on every session; resolves when they have closed. */
  async close(): Promise<void> {
    this.#sessions.clear();
    await Promise.all([...this.#all].map((s) => new Promise<void>((r) => s.close(() => r()))));
  }

  /** Destroys every session now. */
  destroy(): void {
    this.#sessions.clear();
    for (const s of this.#all) s.destroy();
  }
}

/** The Exchange view of one client stream towards a backend. */
function h2Exchange(stream: ClientHttp2Stream): Exchange {
  let trailersOut: Record<string, string> = {};
  let trailersIn: Record<string, string> = {};
  // Errors are reported through `listen`; this keeps one from going unhandled before that.
  stream.on('error', () => {});
  stream.on('wantTrailers', () => stream.sendTrailers(trailersOut));
  stream.on('trailers', (_t, _f, raw) => {
    trailersIn = trailerFields(raw);
  });
  return {
    body: stream,
    finish(trailers) {
      trailersOut = trailers;
      if (!stream.writableEnded) stream.end();
    },
    cancel(h2Code) {
      if (!stream.destroyed) stream.close(h2Code);
    },
    listen(events: ExchangeEvents) {
      let answered = false;
      stream.once('response', (headers, flags, raw) => {
        answered = true;
        events.response({
          status: Number(headers[':status']),
          headers: responseHeaders(raw),
          body: stream,
          endStream: (flags & END_STREAM) !== 0,
        });
      });
      let reported = false;
      const fail = (code: number, reason: string) => {
        if (reported) return;
        reported = true;
        events.failed(code, reason);
      };
      stream.on('error', (err) => fail(stream.rstCode ?? 0, `upstream: ${err.message}`));
      stream.once('close', () => {
        const code = stream.rstCode ?? 0;
        // END_STREAM then close with NO_ERROR is success; any reset (or no response) is not.
        if (code === 0 && answered && !reported) {
          reported = true;
          events.complete(trailersIn);
        } else fail(code, `upstream: stream closed with code ${code}`);
      });
    },
  };
}
