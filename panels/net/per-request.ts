/**
 * Per-request routing on an HTTP/1 keep-alive connection (`routing: per-request`): every request
 * is routed on its own while the bytes pass through unmodified.
 *
 *   client ──► head (Http1HeadScanner) ─► route ─► body (BodyTracker) ─► wait for the response ─┐
 *               ▲     decideRoute + findJack:                                                    │
 *               │       current link │ pooled link │ new connection (retries)                    │
 *               └──────────────────── exchange complete (request and response forwarded) ◄──────┘
 *
 * 1. One exchange at a time: after a request has been forwarded, what the client sends next is
 *    held (at most maxHeaderBytes, then the client is paused) until the response is complete,
 *    so pipelined requests are answered in order and every request can go to another backend
 *    without two responses ever interleaving.
 * 2. A head is validated (hazard rows 1–13, and no `Upgrade: h2c`), then the body bytes already
 *    in hand are framed before anything is written, so a request refused for its head or for a
 *    chunk size in the same read never reaches a backend (answered 400, then closed). A body
 *    error in bytes read later, after the head went upstream, destroys the upstream connection
 *    (the backend sees a truncated request and nothing after it) and answers 400, or cuts the
 *    client when part of the response already went out.
 * 3. The chosen backend's link is the current one, an idle one this client used before
 *    (UpstreamPool), or a new connection with the cluster's PROXY header and retries.
 * 4. The router's own answers (404, 405, 502…) go out once the previous response is complete;
 *    they carry `Connection: close` and the connection closes.
 * 5. 101 to a request that offered that protocol in Upgrade, or a 2xx to CONNECT, makes the
 *    connection an opaque tunnel (src/data-path/splice.ts); bytes the client sent after such a request
 *    wait until the response decides what they are. A response the router cannot frame, a 101
 *    to any other request included, is answered 502 `bad_response` while none of it went out
 *    (else the client is cut); either way the connection closes.
 * 6. A close-delimited response, a client `Connection: close`, or a client FIN end the
 *    connection after the exchange; a backend that closes is replaced for the next request.
 * 7. A link that fails before any byte of its response went out: an idempotent request that
 *    went on a reused link is sent once more on a new connection (the backend may have closed
 *    it as the request left); otherwise the client gets 502 `upstream_reset`, never a bare FIN.
 *
 * One `PerRequestDriver` per connection holds the state; plain functions over it do the work,
 * one responsibility per file:
 *
 *   per-request-client.ts    client side: framing loop (heads, bodies), writes upstream, flow control
 *   per-request-route.ts     a head's route (src/routing/route.ts + findJack), its link, the connect
 *   per-request-exchange.ts  an exchange's end and the link's events (response done, tunnel, broken)
 *   per-request-end.ts       the router's answers, closes and aborts, client errors, drain, the last line
 */
import type { Socket } from 'node:net';
import type { AccessRecord } from '../../src/base/log.ts';
import type { MemberNode } from '../../src/base/member-list.ts';
import { type ListenerConfig, writesRequestLines } from '../../src/config/schema.ts';
import type { Request } from '../../src/contracts/types.ts';
import type { Drainable } from '../../src/data-path/drain.ts';
import type { Connection } from '../../src/listener/connection.ts';
import type { Engine, PanelRuntime } from '../../src/panel/contract.ts';
import type { BodyTracker } from '../../src/peek/body-tracker.ts';
import type { GrowBuffer } from '../../src/peek/grow-buffer.ts';
import type { Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import type { ProxyHeader } from '../../src/proxy-protocol/index.ts';
import { clientAddressing } from '../../src/request/client-ip.ts';
import { http1Requests } from '../../src/request/from-peek.ts';
import type { Exchange } from './exchange.ts';
import { flow, frame, onData, onEnd } from './per-request-client.ts';
import { drain, failed, onClose, onError } from './per-request-end.ts';
import { broken, closed, responseDone, responseHead, tunnel } from './per-request-exchange.ts';
import { type IdleTicker, startIdle } from './per-request-idle.ts';
import { type Replay, route } from './per-request-route.ts';
import type { LinkBreak, LinkOwner, LinkSettings, UpstreamLink } from './upstream-link.ts';
import { UpstreamPool } from './upstream-pool.ts';

/** What the net panel hands over once the first head of an HTTP/1 connection is peeked. */
export interface PerRequestStart {
  readonly client: Socket;
  readonly listener: ListenerConfig;
  readonly runtime: PanelRuntime;
  readonly engine: Engine;
  /** The listener pipeline's connection: its accept time, and `done()` once it has closed. */
  readonly conn: Connection;
  /** The connection's access record (filled with the first request's route). */
  readonly connection: AccessRecord;
  /**
   * Builds the Request of a later head (same connection facts); throws peer errors. Made on
   * the first later head (a connection with one request never builds it, issue 18 newconn),
   * then replaced by the builder itself.
   */
  requestFor: (head: Http1Head) => Request;
  /**
   * True when the config writes a per-request access line for each exchange (a copy of its
   * record with `line: 'request'`; nothing when the access log is off) and none for the
   * connection; false: one connection line.
   */
  readonly requestLines: boolean;
}

/**
 * The start of a per-request connection handed over by connection.ts: built here, outside the
 * panel's connection handler, so that the driver keeps none of that handler's closures (issue
 * 18: what an idle connection keeps).
 */
export function perRequestStart(
  conn: Connection,
  runtime: PanelRuntime,
  record: AccessRecord,
  proxy: ProxyHeader | undefined,
): PerRequestStart {
  const { socket, listener, engine } = conn;
  const start: PerRequestStart = {
    client: socket,
    listener,
    runtime,
    engine,
    conn,
    connection: record,
    requestFor: (head) => {
      start.requestFor = http1Requests(proxy, {
        listener: listener.name,
        socket,
        peer: conn,
        addressing: clientAddressing(listener),
      });
      return start.requestFor(head);
    },
    requestLines: writesRequestLines(engine.loaded.config),
  };
  return start;
}

/**
 * Runs a client connection in per-request mode until it closes, starting with the peeked first
 * `head` and its `request`; `buffer` holds the head at offset 0 and whatever followed it (none
 * of the three is kept once routed: an idle connection holds no head).
 */
export function runPerRequest(start: PerRequestStart, head: Http1Head, buffer: Buffer, request: Request): void {
  const d = new PerRequestDriver(start);
  try {
    const consumed = route(d, head, buffer, request);
    if (consumed >= 0) frame(d, buffer, consumed, 0);
    d.begun = true;
    flow(d);
  } catch (err) {
    failed(d, err);
  }
}

/**
 * The driver of a client socket in per-request mode, in a symbol slot on the socket (the shared
 * listeners find it there) rather than a WeakMap keyed by it: a WeakMap lookup on every read is
 * a hash probe (issue 18), and a young socket's entry an ephemeron the scavenger revisits.
 */
const kDriver = Symbol('switchboard.perRequest');
type DrivenSocket = Socket & { [kDriver]?: PerRequestDriver };

/**
 * Runs `step` for the driver of `socket`, guarded: a throw (a broken invariant) closes this
 * connection and releases its slot instead of reaching the process (per-request-end.ts failed).
 */
function dispatch(socket: DrivenSocket, step: (d: PerRequestDriver) => void): void {
  const d = socket[kDriver];
  if (d === undefined) return;
  try {
    step(d);
  } catch (err) {
    failed(d, err);
  }
}

function clientData(this: DrivenSocket, chunk: Buffer): void {
  const d = this[kDriver];
  if (d === undefined) return;
  d.activity++;
  try {
    onData(d, chunk);
  } catch (err) {
    failed(d, err);
  }
}

function clientEnd(this: Socket): void {
  dispatch(this, onEnd);
}

function clientError(this: Socket, err: Error): void {
  dispatch(this, (d) => onError(d, err));
}

function clientClose(this: Socket): void {
  dispatch(this, onClose);
}

/**
 * head: reading a head · body: forwarding a body · wait: the response is awaited ·
 * connecting: a new upstream connection is being opened · tunnel: spliced · closing: ending.
 */
export type State = 'head' | 'body' | 'wait' | 'connecting' | 'tunnel' | 'closing';

/**
 * The state of one per-request connection, shared by the per-request-*.ts functions (nothing
 * else touches it). The client's listeners are made once here, so removing them works and the
 * hot path allocates no closures.
 */
export class PerRequestDriver implements LinkOwner, Drainable {
  readonly s: PerRequestStart;
  readonly client: Socket;
  /** The scanner of a head split across reads (scanner-spares.ts: none between heads). */
  scanner: Http1HeadScanner | undefined;
  readonly pool = new UpstreamPool();
  readonly settings: LinkSettings;
  state: State = 'head';
  /** Client bytes not framed yet (a partial head, or what came while the client must wait). */
  pending: Buffer | undefined;
  /**
   * While `pending` grows read by read (a trickled head), its bytes live in one growing buffer,
   * so each byte is copied once rather than the whole of `pending` on every read (issue 17
   * item 9); `carried` is the window `pending` must equal for the next read to append to it.
   * Dropped as soon as `pending` is something else, so an idle connection holds no buffer.
   */
  carry: GrowBuffer | undefined;
  carried: Buffer | undefined;
  body: BodyTracker | undefined;
  exchange: Exchange | undefined;
  link: UpstreamLink | undefined;
  /** The current request's bytes while it may be sent again (per-request-route.ts retry). */
  replay: Replay | undefined;
  /** The access record's client of the last request (`ip:port`) and the address it names. */
  clientAddr: string | undefined;
  clientIp = '';
  clientPort = 0;
  /** The link's socket is full: the client is paused until its 'drain'. */
  upBlocked = false;
  clientEnded = false;
  /** The next route is the connection's first: it fills the connection's access record. */
  first = true;
  result = 'ok';
  linger: NodeJS.Timeout | undefined;
  /** Set by a graceful shutdown: close after the current response (or now, when idle). */
  draining = false;
  begun = false;
  /** The connection's end was reported (finish runs once, even after an internal error). */
  finished = false;
  /** Client reads, and the idle tick's view of them (per-request-idle.ts). */
  activity = 0;
  seen = 0;
  quiet = 0;
  idleTicker: IdleTicker | undefined;
  /** Its places among the ticker's and the runtime's drainable members (src/base/member-list.ts). */
  idleNode: MemberNode<PerRequestDriver> | undefined;
  drainNode: MemberNode<Drainable> | undefined;
  // The client's listeners are shared by every driver (one function each, found again through
  // the socket's `kDriver` slot): no closure per connection for them (issue 18). Kept as fields so that
  // removeListener names them.
  readonly onData = clientData;
  readonly onEnd = clientEnd;
  readonly onError = clientError;
  readonly onClose = clientClose;
  readonly onUpDrain = (): void => {
    try {
      this.upBlocked = false;
      if (this.link !== undefined) this.link.activity++;
      flow(this);
    } catch (err) {
      failed(this, err);
    }
  };

  constructor(s: PerRequestStart) {
    this.s = s;
    this.client = s.client;
    const { limits } = s.engine;
    this.settings = {
      client: s.client,
      registry: s.runtime.registry,
      maxHeaderBytes: limits.maxHeaderBytes,
    };
    const c = s.client;
    (c as DrivenSocket)[kDriver] = this;
    c.on('data', this.onData);
    c.on('end', this.onEnd);
    c.on('error', this.onError);
    c.on('close', this.onClose); // 'close' comes once: no `once` wrapper per connection
    startIdle(this, limits.idleTimeout);
    this.drainNode = s.runtime.drain.add(this);
  }

  /** Drainable (src/data-path/drain.ts): graceful shutdown, per-request-end.ts drain. */
  drain(): void {
    drain(this);
  }

  // LinkOwner: what the current (or a pooled) link reports; per-request-exchange.ts.
  responseHead(link: UpstreamLink, status: number): void {
    try {
      responseHead(this, link, status);
    } catch (err) {
      failed(this, err);
    }
  }
  responseDone(link: UpstreamLink): void {
    try {
      responseDone(this, link);
    } catch (err) {
      failed(this, err);
    }
  }
  tunnel(link: UpstreamLink): void {
    try {
      tunnel(this, link);
    } catch (err) {
      failed(this, err);
    }
  }
  broken(link: UpstreamLink, why: LinkBreak, reason: string): void {
    try {
      broken(this, link, why, reason);
    } catch (err) {
      failed(this, err);
    }
  }
  closed(link: UpstreamLink): void {
    try {
      closed(this, link);
    } catch (err) {
      failed(this, err);
    }
  }
}
