/**
 * HTTP/2 upstreams (cluster `protocol: h2c | h2`): one multiplexed session per pool key (a
 * backend and its TLS settings; with an outbound PROXY header also the client), shared by every
 * stream routed there.
 *
 * 1. `open` takes the key's session, or dials a new one through the upstream pipeline
 *    (src/upstream/dial.ts: connectTimeout, DNS, PROXY header, TLS with the cluster's
 *    ca/sni/verify and ALPN h2, registry, diagnostics); concurrent streams wait on the same
 *    dial. A failed dial rejects with `ConnectError`, which the caller retries elsewhere.
 * 2. A new session is used once the backend's first SETTINGS arrived (within connectTimeout):
 *    streams beyond its SETTINGS_MAX_CONCURRENT_STREAMS are then queued by the session
 *    (nghttp2 holds their HEADERS until a stream closes), never refused, never a new socket.
 * 3. The socket is not half-open: a backend's FIN closes it, so a backend that dies is noticed
 *    at once. A session that errors, receives GOAWAY or closes leaves the pool immediately, so
 *    the next stream dials a new one; its streams in flight fail (exchange `failed` with code
 *    0, "upstream connection lost"), which forward.ts answers 502 / gRPC UNAVAILABLE.
 * 4. While streams are open, a PING every `PING_INTERVAL_MS` that gets no answer within
 *    `PING_TIMEOUT_MS` destroys the session: a backend that vanished without a FIN (power loss,
 *    a dropped route) is noticed too.
 * 5. Idle sessions close after `idleTimeout`; `close` sends GOAWAY on every session and lets
 *    their streams finish. A session private to a client connection (outbound PROXY) gets its
 *    GOAWAY when that client connection closes (private-keys.ts).
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type ClientSessionOptions,
  connect as h2connect,
} from 'node:http2';
import type { Socket } from 'node:net';
import { ConnectError } from '../../src/connect.ts';
import { peerError } from '../../src/errors.ts';
import type { Backend } from '../../src/types.ts';
import { type DialPlan, dial } from '../../src/upstream/index.ts';
import type { Exchange } from './exchange.ts';
import { H2Exchange, type StreamCounter } from './h2-exchange.ts';
import { type Head, h2RequestHeaders } from './headers.ts';
import { PrivateKeys } from './private-keys.ts';

/** Node's refusals of a head's fields (names, connection-specific fields, repeated single values). */
const NOT_SENDABLE = new Set([
  'ERR_HTTP2_HEADER_SINGLE_VALUE',
  'ERR_HTTP2_INVALID_CONNECTION_HEADERS',
  'ERR_HTTP2_INVALID_HEADER_VALUE',
  'ERR_HTTP2_INVALID_PSEUDOHEADER',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_INVALID_CHAR',
]);
/** How often a session with open streams is pinged. */
const PING_INTERVAL_MS = 10_000;
/** A PING unanswered this long means the backend is gone. */
const PING_TIMEOUT_MS = 5_000;

/** Pooled HTTP/2 sessions, one per pool key. */
export class H2Pool implements StreamCounter {
  readonly #idleTimeout: number;
  readonly #sessions = new Map<string, Promise<ClientHttp2Session>>();
  /** The settled session behind each key's promise, for a stream opened without awaiting it. */
  readonly #ready = new Map<
    string,
    { readonly pending: Promise<ClientHttp2Session>; readonly session: ClientHttp2Session }
  >();
  /** Every open session and its number of open streams. */
  readonly #all = new Map<ClientHttp2Session, number>();
  /** Keys private to client connections (outbound PROXY): closed with the last of them. */
  readonly #private = new PrivateKeys((key) => this.#closeKey(key));

  constructor(idleTimeout: number) {
    this.#idleTimeout = idleTimeout;
  }

  /** Sessions currently open (for tests and drain). */
  get size(): number {
    return this.#all.size;
  }

  /** The key's session, dialling one when there is none usable. Rejects with ConnectError. */
  session(backend: Backend, key: string, plan: DialPlan, attempt: number): Promise<ClientHttp2Session> {
    const pending = this.#sessions.get(key);
    if (pending !== undefined) return pending;
    const created: Promise<ClientHttp2Session> = dial(backend, plan, attempt)
      .then((socket) => settled(this.#adopt(socket, backend, key, plan, created), backend, plan.connectTimeout))
      .then((session) => {
        this.#ready.set(key, { pending: created, session });
        return session;
      });
    this.#sessions.set(key, created);
    created.catch(() => {
      if (this.#sessions.get(key) === created) this.#sessions.delete(key);
    });
    return created;
  }

  #adopt(
    socket: Socket,
    backend: Backend,
    key: string,
    plan: DialPlan,
    current: Promise<ClientHttp2Session>,
  ): ClientHttp2Session {
    const scheme = plan.tls === undefined ? 'http' : 'https';
    const host = backend.host.includes(':') ? `[${backend.host}]` : backend.host;
    // Repeated single-value fields a client sent are forwarded as sent (node would throw on them;
    // client sessions take the option on node 24, @types/node lists it for servers only; a node
    // that ignores it throws, and `open` refuses that request with 400).
    const options: ClientSessionOptions & { strictSingleValueFields: boolean } = {
      createConnection: () => socket,
      strictSingleValueFields: false,
    };
    const session = h2connect(`${scheme}://${host}:${backend.port}`, options);
    this.#all.set(session, 0);
    const forget = () => {
      if (this.#sessions.get(key) === current) this.#sessions.delete(key);
    };
    session.on('error', forget);
    session.on('goaway', forget);
    session.once('close', () => {
      forget();
      clearInterval(pinger);
      this.#all.delete(session);
      if (this.#ready.get(key)?.session === session) this.#ready.delete(key);
    });
    session.setTimeout(this.#idleTimeout, () => {
      forget();
      session.close();
    });
    const pinger = setInterval(() => {
      if ((this.#all.get(session) ?? 0) > 0) keepAlive(session);
    }, PING_INTERVAL_MS);
    pinger.unref();
    return session;
  }

  /**
   * Opens a stream for `head` at once when the key's session is settled and usable (the common
   * case: no promise, no await per stream); undefined when it is not, and `open` must be used.
   * Throws what `open` rejects with.
   */
  openReady(backend: Backend, key: string, head: Head, endStream: boolean, owner?: Socket): Exchange | undefined {
    const ready = this.#ready.get(key);
    if (ready === undefined || this.#sessions.get(key) !== ready.pending) return undefined;
    const { session } = ready;
    if (session.closed || session.destroyed) return undefined;
    if (owner !== undefined) this.#private.hold(key, owner);
    return this.#stream(session, backend, key, head, endStream);
  }

  /**
   * Opens a stream for `head` on the key's session. `owner`: the client connection a private
   * key (outbound PROXY) belongs to. Rejects with ConnectError.
   */
  async open(
    backend: Backend,
    key: string,
    plan: DialPlan,
    attempt: number,
    head: Head,
    endStream: boolean,
    owner?: Socket,
  ): Promise<Exchange> {
    const first = this.session(backend, key, plan, attempt);
    if (owner !== undefined) this.#private.hold(key, owner);
    let session = await first;
    if (session.closed || session.destroyed) {
      // It closed between its dial and this stream (GOAWAY, a dead backend): take a new one.
      this.#sessions.delete(key);
      session = await this.session(backend, key, plan, attempt);
    }
    return this.#stream(session, backend, key, head, endStream);
  }

  /** A stream for `head` on `session` (the session of `key`). */
  #stream(session: ClientHttp2Session, backend: Backend, key: string, head: Head, endStream: boolean): Exchange {
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(h2RequestHeaders(head), { endStream, waitForTrailers: !endStream });
    } catch (e) {
      // The client's head is what node refused: its answer is 400, and the session is fine.
      if (NOT_SENDABLE.has((e as NodeJS.ErrnoException).code ?? ''))
        throw peerError('bad_request', `http2 upstream: request head cannot be sent: ${(e as Error).message}`);
      // Nothing was sent (the session is closing, stream ids ran out): safe to try elsewhere.
      this.#sessions.delete(key);
      throw new ConnectError(`h2 ${backend.id}: ${(e as Error).message}`, false);
    }
    this.#all.set(session, (this.#all.get(session) ?? 0) + 1);
    return new H2Exchange(session, stream, endStream, this);
  }

  /** A stream of `session` closed (its exchange tells). */
  streamClosed(session: ClientHttp2Session): void {
    const n = this.#all.get(session);
    if (n !== undefined) this.#all.set(session, n - 1);
  }

  /** GOAWAY on the session of `key`: its streams finish, no new one starts there. */
  #closeKey(key: string): void {
    const pending = this.#sessions.get(key);
    if (pending === undefined) return;
    this.#sessions.delete(key);
    pending.then(
      (s) => s.close(),
      () => {},
    );
  }

  /** GOAWAY on every session; resolves when they have closed. */
  async close(): Promise<void> {
    this.#sessions.clear();
    await Promise.all([...this.#all.keys()].map((s) => new Promise<void>((r) => s.close(() => r()))));
  }

  /** Destroys every session now. */
  destroy(): void {
    this.#sessions.clear();
    for (const s of this.#all.keys()) s.destroy();
  }
}

/**
 * Resolves once the backend's first SETTINGS arrived: until then the session assumes 100
 * concurrent streams, and a backend allowing fewer would refuse the excess (REFUSED_STREAM).
 */
function settled(session: ClientHttp2Session, backend: Backend, timeoutMs: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      session.removeListener('remoteSettings', ok);
      session.removeListener('close', closed);
      session.destroy();
      reject(new ConnectError(`h2 ${backend.id}: ${why}`, false));
    };
    const timer = setTimeout(() => fail(`no SETTINGS within ${timeoutMs}ms`), timeoutMs);
    const closed = () => fail('session closed before its SETTINGS');
    const ok = () => {
      clearTimeout(timer);
      session.removeListener('close', closed);
      resolve(session);
    };
    session.once('remoteSettings', ok);
    session.once('close', closed);
  });
}

/** Pings a session with open streams; no answer in time destroys it (its streams fail). */
function keepAlive(session: ClientHttp2Session): void {
  if (session.closed || session.destroyed) return;
  const timer = setTimeout(() => session.destroy(), PING_TIMEOUT_MS);
  timer.unref();
  const sent = session.ping((err) => {
    clearTimeout(timer);
    if (err !== null && !session.destroyed) session.destroy();
  });
  if (!sent) clearTimeout(timer);
}
