/**
 * HTTP/2 upstreams (cluster `protocol: h2c | h2`): per pool key (a backend and its TLS
 * settings; with an outbound PROXY header also the client) a small group of multiplexed
 * sessions (session-group.ts), shared by every stream routed there.
 *
 * 1. `open` takes a free stream slot on one of the key's sessions, or dials a new session
 *    through the upstream pipeline (src/upstream/dial.ts: connectTimeout, DNS, PROXY header,
 *    TLS with the cluster's ca/sni/verify and ALPN h2, registry, diagnostics); concurrent
 *    streams wait on the same dial. A failed dial rejects with `ConnectError`, which the caller
 *    retries elsewhere.
 * 2. A new session is used once the backend's first SETTINGS arrived (within connectTimeout):
 *    a session takes streams up to the backend's SETTINGS_MAX_CONCURRENT_STREAMS. One session
 *    per key while it has room (the common case); when all are full, a second one and so on up
 *    to `limits.maxUpstreamSessionsPerBackend`, a client connection holding half a session's
 *    worth of upstream streams or more cannot make the group grow, and a stream that finds no
 *    slot waits at most `connectTimeout`, then is answered 503 `overloaded` (session-group.ts).
 * 3. The socket is not half-open: a backend's FIN closes it, so a backend that dies is noticed
 *    at once. A session that errors, receives GOAWAY, closes or runs out of stream ids leaves
 *    the group immediately, so the next stream takes another or dials a new one; the streams
 *    in flight on a lost session fail (exchange `failed` with code 0, "upstream connection
 *    lost"), which stream-forward.ts answers 502 / gRPC UNAVAILABLE.
 * 4. While streams are open, a PING every `PING_INTERVAL_MS` that gets no answer within
 *    `PING_TIMEOUT_MS` destroys the session: a backend that vanished without a FIN (power loss,
 *    a dropped route) is noticed too.
 * 5. Idle sessions close after `idleTimeout`; `close` sends GOAWAY on every session and lets
 *    their streams finish. A session private to a client connection (outbound PROXY) gets its
 *    GOAWAY when that client connection closes (private-keys.ts).
 * 6. A stream whose client reset it while it waited for a slot or a dial is never opened
 *    upstream (`ClientWatch`): rapid reset does not reach the backend that way.
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type ClientSessionOptions,
  connect as h2connect,
} from 'node:http2';
import type { Socket } from 'node:net';
import { peerError } from '../../src/base/errors.ts';
import type { Backend } from '../../src/contracts/types.ts';
import { ConnectError } from '../../src/upstream/connect.ts';
import { type DialPlan, dial } from '../../src/upstream/index.ts';
import type { Exchange } from './exchange.ts';
import { H2Exchange } from './h2-exchange.ts';
import { type Head, h2RequestHeaders } from './headers.ts';
import { PrivateKeys } from './private-keys.ts';
import { SessionGroup, UpstreamSession } from './session-group.ts';

/** Tells whether the client stream a slot is being found for is gone (reset, closed). */
export interface ClientWatch {
  clientGone(): boolean;
}

/** Who a stream is opened for, and the key's session limit. */
export interface StreamOwner {
  /** The client connection a private key (outbound PROXY) belongs to. */
  readonly owner: Socket | undefined;
  /** The client connection's socket: its share of upstream streams is counted. */
  readonly client: Socket | undefined;
  /** Asked before a stream opens after a wait: a gone client stream opens nothing upstream. */
  readonly watch: ClientWatch | undefined;
  /** `limits.maxUpstreamSessionsPerBackend`. */
  readonly maxSessions: number;
}

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

/** Pooled HTTP/2 sessions: per pool key a group of sessions (session-group.ts). */
export class H2Pool {
  readonly #idleTimeout: number;
  readonly #groups = new Map<string, SessionGroup>();
  /** Every open session (draining ones included) and its pool entry. */
  readonly #all = new Map<ClientHttp2Session, UpstreamSession>();
  /** Keys private to client connections (outbound PROXY): closed with the last of them. */
  readonly #private = new PrivateKeys((key) => this.#closeKey(key));

  constructor(idleTimeout: number) {
    this.#idleTimeout = idleTimeout;
  }

  /** Sessions currently open (for tests and drain). */
  get size(): number {
    return this.#all.size;
  }

  /** The group of `key`; `max` (the engine's limit now) applies from here on. */
  #group(key: string, max: number): SessionGroup {
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = new SessionGroup(max, (s) => this.#drained(key, s));
      this.#groups.set(key, group);
    } else group.max = max;
    return group;
  }

  /** A session left its group: GOAWAY once its streams (reserved ones too) end; the key forgotten when empty. */
  #drained(key: string, s: UpstreamSession): void {
    const group = this.#groups.get(key);
    if (group?.empty() === true) this.#groups.delete(key);
    s.closeIfIdle();
  }

  /** Dials one more session for `group` (one dial at a time). Rejects with ConnectError. */
  #dial(group: SessionGroup, backend: Backend, key: string, plan: DialPlan, attempt: number): Promise<UpstreamSession> {
    const created = dial(backend, plan, attempt)
      .then((socket) => {
        const s = this.#adopt(socket, backend, plan, group);
        return settled(s.session, backend, plan.connectTimeout).then(() => s);
      })
      .then(
        (s) => {
          group.dialing = undefined;
          group.add(s);
          return s;
        },
        (e: unknown) => {
          group.dialing = undefined;
          if (group.empty()) this.#groups.delete(key);
          throw e;
        },
      );
    group.dialing = created;
    return created;
  }

  #adopt(socket: Socket, backend: Backend, plan: DialPlan, group: SessionGroup): UpstreamSession {
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
    const entry = new UpstreamSession(session, group);
    this.#all.set(session, entry);
    const leave = () => group.drain(entry);
    session.on('error', leave);
    session.on('goaway', leave);
    session.once('close', () => {
      leave();
      clearInterval(pinger);
      this.#all.delete(session);
    });
    session.setTimeout(this.#idleTimeout, leave);
    const pinger = setInterval(() => {
      if (entry.active > 0) keepAlive(session);
    }, PING_INTERVAL_MS);
    pinger.unref();
    return entry;
  }

  /**
   * Opens a stream for `head` at once when a session of the key has a free slot (the common
   * case: no promise, no await per stream); undefined when none has, and `open` must be used.
   * `client`: the client connection's socket (its share of upstream streams is counted).
   * Throws what `open` rejects with.
   */
  openReady(
    backend: Backend,
    key: string,
    head: Head,
    endStream: boolean,
    owner?: Socket,
    client?: Socket,
  ): Exchange | undefined {
    const s = this.#groups.get(key)?.take(client);
    if (s === undefined) return undefined;
    if (owner !== undefined) this.#private.hold(key, owner);
    return this.#stream(s, backend, head, endStream, client);
  }

  /**
   * Opens a stream for `head` on a session of the key: one with a free slot, a new one (within
   * the group's maximum and the client's share), or the first to free a slot within the queue
   * timeout (`plan.connectTimeout`). Rejects with ConnectError.
   */
  async open(
    backend: Backend,
    key: string,
    plan: DialPlan,
    attempt: number,
    head: Head,
    endStream: boolean,
    by: StreamOwner,
  ): Promise<Exchange> {
    const { owner, client, watch } = by;
    if (owner !== undefined) this.#private.hold(key, owner);
    const s = await this.#slot(backend, key, plan, attempt, by);
    if (watch?.clientGone() === true) {
      // Reset (or gone) while its slot was found: the backend never sees it (rapid reset).
      s.unreserve(client);
      throw new ConnectError('client closed the stream before it was opened upstream', false, true);
    }
    return this.#stream(s, backend, head, endStream, client);
  }

  /** A reserved slot on a session of `key`. */
  async #slot(
    backend: Backend,
    key: string,
    plan: DialPlan,
    attempt: number,
    by: StreamOwner,
  ): Promise<UpstreamSession> {
    const group = this.#group(key, by.maxSessions);
    for (;;) {
      const free = group.take(by.client);
      if (free !== undefined) return free;
      if (group.dialing !== undefined && group.sessions.length === 0) await group.dialing;
      else if (group.mayGrow(by.client)) await this.#dial(group, backend, key, plan, attempt);
      else return group.wait(plan.connectTimeout, `h2 ${backend.id}`, by.client);
    }
  }

  /** A stream for `head` on the reserved slot of `s`. */
  #stream(s: UpstreamSession, backend: Backend, head: Head, endStream: boolean, client: Socket | undefined): Exchange {
    let stream: ClientHttp2Stream;
    try {
      stream = s.session.request(h2RequestHeaders(head), { endStream, waitForTrailers: !endStream });
    } catch (e) {
      s.unreserve(client);
      // The client's head is what node refused: its answer is 400, and the session is fine.
      if (NOT_SENDABLE.has((e as NodeJS.ErrnoException).code ?? ''))
        throw peerError('bad_request', `http2 upstream: request head cannot be sent: ${(e as Error).message}`);
      // Nothing was sent (the session is closing, stream ids ran out): safe to try elsewhere.
      s.outOfStreams();
      throw new ConnectError(`h2 ${backend.id}: ${(e as Error).message}`, false);
    }
    return new H2Exchange(s.session, stream, endStream, s, client);
  }

  /** GOAWAY on every session of `key`: their streams finish, no new one starts there. */
  #closeKey(key: string): void {
    const group = this.#groups.get(key);
    if (group === undefined) return;
    for (const s of [...group.sessions]) group.drain(s);
    group.dialing?.then(
      (s) => group.drain(s),
      () => {},
    );
  }

  /** GOAWAY on every session; resolves when they have closed. */
  async close(): Promise<void> {
    this.#groups.clear();
    await Promise.all([...this.#all.keys()].map((s) => new Promise<void>((r) => s.close(() => r()))));
  }

  /** Destroys every session now. */
  destroy(): void {
    this.#groups.clear();
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
