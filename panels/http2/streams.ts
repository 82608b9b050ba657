/**
 * The http2 panel's engine without listeners: the HTTP/2 and HTTP/1.1 servers of each listener
 * config, the client sessions, the first-request deadlines and the upstream pools. The panel
 * (server.ts) feeds it the connections of its own listener pipeline; app/panels.ts lends one to
 * the net panel as its `StreamRouter` (src/panel/capabilities.ts) for `listeners[].h2c: route`, so an h2c
 * connection accepted there is served exactly as here: every stream routed on its own.
 *
 *   Connection ─► serve(c) ─┬─ tls: terminate, ALPN h2 ──────► http2 server ─┐
 *                           ├─ plaintext ─ sniffPreface ─ h2c ► http2 server ─┤─► handleStream (stream.ts)
 *                           └─ otherwise ─────────────────────► http server ──┘
 *
 * 1. `serve` arms the first-request deadline (what is left of `peekTimeout`), sniffs the
 *    preface on plaintext and hands the socket to a server with `emit('connection')`; the
 *    servers never listen. When the socket closes, the connection's end is published
 *    (`switchboard:connection:end`, no access line: connections_total, bytes_total) and
 *    `c.done()` runs.
 * 2. Shutdown is in three calls, around the owner's wait for its connections: `drain` (GOAWAY,
 *    idle HTTP/1.1 closed), `sweepIdle` while waiting, `close` (upstream pools), or `destroy`.
 */

import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import {
  createServer as createH2Server,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { channels } from '../../src/base/diagnostics.ts';
import type { ResultCode } from '../../src/base/errors.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { MemberList } from '../../src/base/member-list.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { logConnection, logRequest, millisSince } from '../../src/data-path/access-record.ts';
import { answer, statusOf } from '../../src/data-path/answer.ts';
import { clientText } from '../../src/listener/client-address.ts';
import type { Connection } from '../../src/listener/connection.ts';
import { clientOf, connectionOf } from '../../src/listener/pipeline.ts';
import type { StreamRouter } from '../../src/listener/stream-router.ts';
import type { Engine, PanelRuntime } from '../../src/panel/contract.ts';
import { H2_ERROR } from '../../src/peek/h2c.ts';
import { H1Down, H2Down } from './down.ts';
import { HeadDeadlines } from './head-deadline.ts';
import { sniffPreface } from './sniff.ts';
import { handleStream, type StreamContext } from './stream.ts';
import { H1Pool } from './upstream-h1.ts';
import { H2Pool } from './upstream-h2.ts';

/** How long upstream sessions may take to close once every client connection is gone. */
const UPSTREAM_GRACE_MS = 1_000;

/**
 * What the panel keeps of a connection and a session, in slots of their own objects rather than
 * in long-lived Maps and WeakSets that connections join and leave (those keep closed connections
 * alive through scavenges: src/base/member-list.ts).
 */
const kSniffing = Symbol('switchboard.http2.sniffing');
const kH2 = Symbol('switchboard.http2.h2');
const kConnection = Symbol('switchboard.http2.connection');
const kRefused = Symbol('switchboard.http2.refused');
type Slotted = Connection & {
  [kSniffing]?: (() => void) | undefined;
  [kH2]?: boolean;
  /** The result that refused the connection before its first request (its end's result). */
  [kRefused]?: string;
};
/** The session's pipeline connection: undefined before the first look-up, null when it has none. */
type SlottedSession = Http2Session & { [kConnection]?: Connection | null };

/** Ends the sniff of `c`: returns its cancel function while it was still sniffing. */
function stopSniffing(c: Connection): (() => void) | undefined {
  const cancel = (c as Slotted)[kSniffing];
  (c as Slotted)[kSniffing] = undefined;
  return cancel;
}

/** What an HTTP/1.1 head node's parser refused becomes (DESIGN's table); anything else is `bad_request`. */
const CLIENT_ERRORS: Readonly<Record<string, { readonly result: ResultCode; readonly reason: string }>> = {
  HPE_HEADER_OVERFLOW: { result: 'header_too_large', reason: 'request: head over maxHeaderBytes' },
  ERR_HTTP_REQUEST_TIMEOUT: { result: 'peek_timeout', reason: 'request: head not complete within peekTimeout' },
};

interface Servers {
  readonly h2: Http2Server;
  readonly h1: HttpServer;
}

/** Milliseconds since the pipeline accepted the connection of `socket` (µs precision), 0 if unknown. */
function durationOf(socket: Socket): number {
  const c = connectionOf(socket);
  return c === undefined ? 0 : millisSince(c.acceptedAt);
}

/** What a connection handed to a server speaks, as stream access lines name it. */
function protocolOf(c: Connection): string {
  if ((c as Slotted)[kH2] !== true) return 'http1';
  return c.listener.tls === 'terminate' ? 'h2' : 'h2c';
}

/**
 * The socket a handler got has closed: its connection's end is published (no access line: this
 * engine's lines are per request and stream), then the pipeline's slot goes back. The end's
 * result is `ok`, or what refused the connection before its first request (kRefused).
 */
function onClosed(this: Socket): void {
  const c = connectionOf(this);
  if (c === undefined) return;
  // Nobody counts connection ends (no admin listener, no metrics): no record is made.
  if (channels.connectionEnd.hasSubscribers) publishEnd(this, c);
  c.done();
}

/** Publishes the end of `c` (its socket `socket`) through logConnection, with no access line. */
function publishEnd(socket: Socket, c: Connection): void {
  const record: AccessRecord = {
    listener: c.listener.name,
    client: clientText(c.ip, c.port),
    protocol: protocolOf(c),
    bytesIn: socket.bytesRead,
    bytesOut: socket.bytesWritten,
    durationMs: millisSince(c.acceptedAt),
    result: (c as Slotted)[kRefused] ?? 'ok',
  };
  logConnection(record, undefined);
}

export class StreamServers implements StreamRouter {
  readonly #runtime: PanelRuntime;
  /** The servers of each listener config (a reload's new config object gets new ones). */
  readonly #servers = new WeakMap<ListenerConfig, Servers>();
  /** Every HTTP/1 server made, for closing idle keep-alive sockets on drain. */
  readonly #h1Servers = new Set<HttpServer>();
  /** Open client sessions (a list, not a Set: src/base/member-list.ts says why). */
  readonly #sessions = new MemberList<Http2Session>();
  readonly #h2: H2Pool;
  readonly #h1: H1Pool;
  /** First-request deadlines (peekTimeout), and where each waiting connection is. */
  readonly #deadlines = new HeadDeadlines((c) => this.#headExpired(c));

  constructor(runtime: PanelRuntime) {
    this.#runtime = runtime;
    const { idleTimeout } = runtime.engine.limits;
    this.#h2 = new H2Pool(idleTimeout);
    this.#h1 = new H1Pool(idleTimeout);
  }

  /** Hands a connection of the pipeline to the HTTP/2 or the HTTP/1.1 server of its listener. */
  serve(c: Connection): void {
    const s = this.#serversFor(c.listener, c.engine);
    const socket = c.socket;
    socket.once('close', onClosed);
    if (socket.destroyed) {
      c.done();
      return;
    }
    this.#deadlines.arm(c);
    socket.once('close', () => {
      const sniffing = stopSniffing(c) !== undefined;
      // Closed before any request, answer or deadline: one access line, as the net panel's peek writes.
      if (!this.#deadlines.arrived(c)) return;
      const reason = 'client closed before the first request';
      this.#refuseHead(c.listener, socket, 'client_closed', reason, sniffing ? undefined : protocolOf(c), 0);
    });
    if (c.listener.tls === 'terminate') {
      this.#hand(c, s, (socket as TLSSocket).alpnProtocol === 'h2');
      return;
    }
    (c as Slotted)[kSniffing] = sniffPreface(
      socket,
      (isH2c) => {
        stopSniffing(c);
        if (isH2c && c.listener.h2c === 'refuse') this.#refuseH2c(c);
        else this.#hand(c, s, isH2c);
      },
      (reason) => {
        // Neither HTTP/2 nor HTTP/1: sniff.ts answered GOAWAY PROTOCOL_ERROR and is closing it.
        stopSniffing(c);
        this.#deadlines.arrived(c);
        this.#refuseHead(c.listener, socket, 'bad_request', reason, 'h2c', 0);
      },
    );
  }

  /** Hands the connection to its listener's HTTP/2 or HTTP/1.1 server. */
  #hand(c: Connection, s: Servers, h2: boolean): void {
    if (h2) (c as Slotted)[kH2] = true;
    (h2 ? s.h2 : s.h1).emit('connection', c.socket);
  }

  /** `h2c: refuse`: the preface is answered with GOAWAY HTTP_1_1_REQUIRED, as on the net panel. */
  #refuseH2c(c: Connection): void {
    this.#deadlines.arrived(c);
    answer(c.socket, 'bad_request', 'h2c', H2_ERROR.HTTP_1_1_REQUIRED);
    const reason = 'h2c: prior-knowledge HTTP/2 is refused on this listener (h2c: refuse)';
    this.#refuseHead(c.listener, c.socket, 'bad_request', reason, 'h2c', 0);
  }

  /** No first request within peekTimeout: 408 on HTTP/1.1 (or while still sniffing), else a close. */
  #headExpired(c: Connection): void {
    if (c.socket.destroyed) return;
    stopSniffing(c)?.();
    const reason = 'request: first request not complete within peekTimeout';
    if ((c as Slotted)[kH2] === true) {
      c.socket.destroy();
      this.#refuseHead(c.listener, c.socket, 'peek_timeout', reason, 'h2c', 0);
    } else {
      answer(c.socket, 'peek_timeout', 'http1');
      this.#refuseHead(c.listener, c.socket, 'peek_timeout', reason, 'http1', statusOf('peek_timeout'));
    }
  }

  /** The HTTP/2 (and HTTP/1.1) servers of one listener config, wired to handleStream. */
  #serversFor(l: ListenerConfig, engine: Engine): Servers {
    let s = this.#servers.get(l);
    if (s !== undefined) return s;
    const ctx: StreamContext = { runtime: this.#runtime, listener: l, h2: this.#h2, h1: this.#h1 };
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const conn = connectionOf(req.socket);
      this.#deadlines.arrived(conn);
      handleStream(new H1Down(req, res, conn), ctx);
    };
    // HTTP/2 streams through the core API (down.ts): no compat request/response per stream.
    const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, raw: string[]) => {
      const session = stream.session;
      let conn: Connection | undefined;
      if (session === undefined) conn = undefined;
      else {
        const known = (session as SlottedSession)[kConnection];
        if (known !== undefined) conn = known ?? undefined;
        else {
          conn = connectionOf(session.socket);
          (session as SlottedSession)[kConnection] = conn ?? null;
          this.#deadlines.arrived(conn);
        }
      }
      // `Expect` as node's compat layer answers it: 100-continue at once, anything else 417.
      const expect = headers.expect;
      if (expect !== undefined) {
        if (expect !== '100-continue') {
          stream.on('error', () => {});
          stream.respond({ ':status': 417 }, { endStream: true });
          return;
        }
        stream.additionalHeaders({ ':status': 100 });
      }
      handleStream(new H2Down(stream, headers, raw, conn, conn?.socket ?? session?.socket), ctx);
    };
    const { idleTimeout, maxHeaderBytes, maxConcurrentStreams, maxHeaderCount } = engine.limits;
    const h2 = createH2Server({
      settings: { maxConcurrentStreams, maxHeaderListSize: maxHeaderBytes },
      // Node's own cap on a list's entries (128 by default) would reset a stream with more fields
      // than that but within limits.maxHeaderCount (up to 1,000). to-request.ts answers 431 past
      // the configured count, so node's cap sits well above it: a list up to twice the limit is
      // answered 431, a longer one is reset by node (ENHANCE_YOUR_CALM).
      maxHeaderListPairs: Math.max(128, 2 * maxHeaderCount + 8),
    });
    h2.on('stream', onStream);
    h2.on('session', (session: Http2Session) => {
      const member = this.#sessions.add(session);
      session.setTimeout(idleTimeout, () => session.close());
      session.once('close', () => this.#sessions.remove(member));
      session.on('error', () => {});
      // Sockets are half-open (the pipeline accepts with allowHalfOpen) and node's session does not
      // act on the client's FIN: without this it would stay open until idleTimeout. A client that
      // can send no more frames gets its open streams finished, then the connection closed.
      connectionOf(session.socket)?.socket.once('end', () => session.close());
    });
    // A stream-level protocol error from a client: node resets the stream; nothing to route.
    h2.on('sessionError', () => {});
    // Every request head must be complete within peekTimeout (node checks its connections at
    // `connectionsCheckingInterval`, so that is kept well under the deadline).
    const { peekTimeout } = engine.limits;
    const h1 = createHttpServer(
      {
        requestTimeout: 0,
        headersTimeout: peekTimeout,
        connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(peekTimeout / 4))),
        maxHeaderSize: maxHeaderBytes,
      },
      onRequest,
    );
    h1.keepAliveTimeout = idleTimeout;
    // A client that half-closes after its request still gets the response (as on the net panel):
    // node's server otherwise aborts the requests in flight at the FIN. It ends the socket after
    // the last response either way.
    (h1 as HttpServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    h1.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.#clientError(l, err, socket));
    this.#h1Servers.add(h1);
    s = { h2, h1 };
    this.#servers.set(l, s);
    return s;
  }

  /**
   * An HTTP/1.1 head node could not take: answered per DESIGN's table (431 too large, 408 not
   * complete within peekTimeout, 400 malformed) with one access line; a socket that can no
   * longer be written to is just closed.
   */
  #clientError(l: ListenerConfig, err: NodeJS.ErrnoException, socket: Socket): void {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_INVALID_EOF_STATE') {
      // The client's FIN in the middle of a head: closed unanswered, as the net panel's peek does.
      this.#deadlines.arrived(connectionOf(socket));
      socket.destroy();
      this.#refuseHead(l, socket, 'client_closed', 'client closed before the head was complete', 'http1', 0);
      return;
    }
    const known = CLIENT_ERRORS[err.code ?? ''];
    const result = known?.result ?? 'bad_request';
    this.#deadlines.arrived(connectionOf(socket));
    answer(socket, result, 'http1');
    const reason = known?.reason ?? `request: ${err.message.toLowerCase()}`;
    this.#refuseHead(l, socket, result, reason, 'http1', statusOf(result));
  }

  /** The access line of a connection refused before any request was routed (`protocol` unknown while sniffing). */
  #refuseHead(
    l: ListenerConfig,
    socket: Socket,
    result: ResultCode | 'client_closed',
    reason: string,
    protocol: string | undefined,
    status: number,
  ) {
    const record: AccessRecord = {
      listener: l.name,
      client: clientOf(socket),
      ...(protocol === undefined ? {} : { protocol }),
      bytesIn: socket.bytesRead,
      bytesOut: socket.bytesWritten,
      durationMs: durationOf(socket),
      result,
      reason,
    };
    if (status > 0) record.status = status;
    const c = connectionOf(socket);
    if (c !== undefined) (c as Slotted)[kRefused] ??= result;
    logRequest(record, this.#runtime.accessLog);
  }

  /** Shutdown, step 1: GOAWAY to every client session, idle HTTP/1.1 sockets closed. */
  drain(): void {
    this.sweepIdle();
    for (const s of this.#sessions.values()) s.close();
  }

  /** HTTP/1.1 keep-alive sockets that became idle since `drain` are closed. */
  sweepIdle(): void {
    for (const h1 of this.#h1Servers) h1.closeIdleConnections();
  }

  /** Shutdown, last step (client streams are gone): upstream sessions get a short grace, then are destroyed. */
  async close(): Promise<void> {
    const grace = new Promise<void>((r) => setTimeout(r, UPSTREAM_GRACE_MS).unref());
    await Promise.race([this.#h2.close(), grace]);
    this.#h2.destroy();
    this.#h1.close();
  }

  destroy(): void {
    this.#deadlines.clear();
    for (const s of this.#sessions.values()) s.destroy();
    this.#h2.destroy();
    this.#h1.close();
  }
}
