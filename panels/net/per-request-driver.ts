/**
 * The driver of one per-request connection (per-request.ts has the mechanism): a state machine
 * over the client socket, its current upstream link and the exchange in flight. It is the only
 * thing in this file, and it owns its state: the client's listeners, the links (LinkOwner) and
 * the idle ticker (IdleMember) reach it through its methods only.
 *
 *   head ──route──► body ──request sent──► wait ──response done──► head …
 *     │               └────────────────────────────────────────────► tunnel (101, CONNECT 2xx)
 *     └─ new link ─► connecting ─► body          any state ─► closing (answer, close, abort)
 *
 * Steps, in the order of a request: the client's bytes (onClientData, #frame, #flush, #flow),
 * its route and link (#route, ClientLinks.forKey, #bind, #connect, #connected), a resend on a new link
 * (#resend, #resent), the exchange's end and the link's events (#requestSent, #complete, the
 * LinkOwner methods), the connection's end (#refuse, #bodyError, #answer, #close, #abort,
 * #stop, #finish). Helpers below it: per-request-start.ts, per-request-resend.ts,
 * per-request-links.ts (the current and idle links), per-request-idle.ts, exchange.ts, upstream-link.ts.
 */
import type { Socket } from 'node:net';
import { isPeerError, isSwitchboardError, RESULT_STATUS, type ResultCode } from '../../src/base/errors.ts';
import type { MemberNode } from '../../src/base/member-list.ts';
import { type Candidates, isRefusal, type Jack, type Request } from '../../src/contracts/types.ts';
import { endRecord, logConnection } from '../../src/data-path/access-record.ts';
import { discardUpTo, endWithLinger, errorResponse, LINGER_BYTES, statusOf } from '../../src/data-path/answer.ts';
import type { Drainable } from '../../src/data-path/drain.ts';
import { splice } from '../../src/data-path/splice.ts';
import type { Engine } from '../../src/panel/contract.ts';
import { type BodyTracker, releaseTracker, takeTracker } from '../../src/peek/body-tracker.ts';
import { GrowBuffer } from '../../src/peek/grow-buffer.ts';
import type { Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import { releaseHeadScanner, takeHeadScanner } from '../../src/peek/scanner-spares.ts';
import { decideRoute, isRouteRefused } from '../../src/routing/route.ts';
import {
  isUpstreamFailure,
  openUpstreamThen,
  pickFirst,
  type Upstream,
  type UpstreamFailure,
} from '../../src/upstream/index.ts';
import { Exchange } from './exchange.ts';
import { type IdleMember, type IdleTicker, idleTickerFor, leaveTicker, Traffic } from './per-request-idle.ts';
import { ClientLinks, type WritableListener } from './per-request-links.ts';
import { type Resend, resendFor, resendsAfter } from './per-request-resend.ts';
import type { PerRequestStart } from './per-request-start.ts';
import { type LinkBreak, type LinkOwner, type LinkSettings, linkKey, UpstreamLink } from './upstream-link.ts';

/**
 * head: reading a head · body: forwarding a body · wait: the response is awaited ·
 * connecting: a new upstream connection is being opened · tunnel: spliced · closing: ending.
 */
type State = 'head' | 'body' | 'wait' | 'connecting' | 'tunnel' | 'closing';

/**
 * The driver of a client socket, in a symbol slot on the socket (the shared listeners find it
 * there) rather than a WeakMap keyed by it: a WeakMap lookup on every read is a hash probe
 * (issue 18), and a young socket's entry an ephemeron the scavenger revisits.
 */
const kDriver = Symbol('switchboard.perRequest');
type DrivenSocket = Socket & { [kDriver]?: PerRequestDriver };

// The client's listeners are shared by every driver (one function each, found again through the
// socket's `kDriver` slot): no closure per connection for them (issue 18), and removeListener
// names them. Each guards its step: a throw (a broken invariant) closes this connection and
// releases its slot instead of reaching the process.
function clientData(this: DrivenSocket, chunk: Buffer): void {
  this[kDriver]?.onClientData(chunk);
}
function clientEnd(this: DrivenSocket): void {
  this[kDriver]?.onClientEnd();
}
function clientError(this: DrivenSocket, err: Error): void {
  this[kDriver]?.onClientError(err);
}
function clientClose(this: DrivenSocket): void {
  this[kDriver]?.onClientClose();
}

/** One per-request client connection, from its first routed head until its access line. */
export class PerRequestDriver implements LinkOwner, Drainable, IdleMember, WritableListener {
  readonly #start: PerRequestStart;
  readonly #client: Socket;
  readonly #limits: Engine['limits'];
  readonly #links: ClientLinks;
  readonly #linkSettings: LinkSettings;
  #state: State = 'head';
  /** The scanner of a head split across reads (scanner-spares.ts: none between heads). */
  #scanner: Http1HeadScanner | undefined;
  /** Client bytes not framed yet (a partial head, or what came while the client must wait). */
  #pending: Buffer | undefined;
  /**
   * While `#pending` grows read by read (a trickled head), its bytes live in one growing buffer,
   * so each byte is copied once rather than the whole of `#pending` on every read (issue 17
   * item 9); `#carried` is the window `#pending` must equal for the next read to append to it.
   * Dropped as soon as `#pending` is something else, so an idle connection holds no buffer.
   */
  #carry: GrowBuffer | undefined;
  #carried: Buffer | undefined;
  /** The framing of the request body being forwarded. */
  #body: BodyTracker | undefined;
  #exchange: Exchange | undefined;
  /** The current request's bytes while it may be sent once more (per-request-resend.ts). */
  #resend: Resend | undefined;
  /** The access record's client of the last request (`ip:port`) and the address it names. */
  #recordClient: string | undefined;
  #recordClientIp = '';
  #recordClientPort = 0;
  #clientEnded = false;
  /** No request was bound to a link yet: the next one fills the connection's access record. */
  #firstBind = true;
  /** The connection's result: its first non-ok end. */
  #result = 'ok';
  #linger: NodeJS.Timeout | undefined;
  /** Set by a graceful shutdown: close after the current response (or now, when idle). */
  #draining = false;
  /** The first head was routed and framed: a drain may close between requests from now on. */
  #begun = false;
  /** The connection's end was reported (finish runs once, even after an internal error). */
  #finished = false;
  /** Client reads, for the idle tick (per-request-idle.ts). */
  readonly #traffic = new Traffic();
  #idleTicker: IdleTicker | undefined;
  #idleNode: MemberNode<IdleMember> | undefined;
  /** Its place among the runtime's drainable members (src/base/member-list.ts). */
  #drainNode: MemberNode<Drainable> | undefined;

  constructor(start: PerRequestStart) {
    this.#start = start;
    const client = start.client;
    this.#client = client;
    this.#limits = start.engine.limits;
    this.#links = new ClientLinks(this.#limits.maxIdleUpstreamsPerConnection, this);
    this.#linkSettings = {
      client,
      registry: start.runtime.registry,
      maxHeaderBytes: this.#limits.maxHeaderBytes,
    };
    (client as DrivenSocket)[kDriver] = this;
    client.on('data', clientData);
    client.on('end', clientEnd);
    client.on('error', clientError);
    client.on('close', clientClose); // 'close' comes once: no `once` wrapper per connection
    const ticker = idleTickerFor(this.#limits.idleTimeout);
    if (ticker !== undefined) {
      this.#idleTicker = ticker;
      this.#idleNode = ticker.members.add(this);
      // The shared timer's next tick may come at once: it sees this as traffic, so the quiet
      // ticks start after it (a silent connection closes after idleTimeout, never before).
      this.#traffic.count++;
    }
    this.#drainNode = start.runtime.drain.add(this);
  }

  /**
   * Runs the connection from its peeked first `head` and its `request`; `buffer` holds the head
   * at offset 0 and whatever followed it (none of the three is kept once routed).
   */
  begin(head: Http1Head, buffer: Buffer, request: Request): void {
    try {
      const consumed = this.#route(head, buffer, request);
      if (consumed >= 0) this.#frame(buffer, consumed, 0);
      this.#begun = true;
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  // ── the client side: framing heads and bodies, writing them upstream, flow control ──

  /** The client's 'data': bytes are framed before they are written (1 write per read). */
  onClientData(chunk: Buffer): void {
    this.#traffic.count++;
    try {
      let buf = chunk;
      if (this.#pending !== undefined) {
        if (this.#carry === undefined || this.#carried !== this.#pending) {
          this.#carry = new GrowBuffer(this.#limits.maxHeaderBytes);
          this.#carry.append(this.#pending);
        }
        buf = this.#carried = this.#carry.append(chunk);
        this.#pending = undefined;
      }
      if (this.#state === 'head' || this.#state === 'body') this.#frame(buf, 0, 0);
      else if (this.#state !== 'closing') this.#pending = buf; // paused states: kept for later
      if (this.#carry !== undefined && this.#pending !== this.#carried) {
        this.#carry = undefined;
        this.#carried = undefined;
      }
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** Frames `buf` from `off`; bytes [from, off) are already framed and still to be forwarded. */
  #frame(buf: Buffer, off: number, from: number): void {
    for (;;) {
      if (this.#state === 'body') {
        const body = this.#body!;
        if (!body.done && off < buf.length) {
          try {
            off += body.feed(buf, off);
          } catch (e) {
            if (!isSwitchboardError(e)) throw e;
            this.#bodyError(e.message);
            return;
          }
        }
        if (!body.done) break;
        this.#flush(buf, from, off);
        from = off;
        this.#requestSent();
        continue;
      }
      if (this.#state !== 'head') {
        if (off < buf.length && this.#state !== 'closing') this.#pending = buf.subarray(off);
        break;
      }
      if (off >= buf.length) break;
      const view = off === 0 ? buf : buf.subarray(off);
      let head: Http1Head | undefined;
      const limits = this.#limits;
      const scanner =
        this.#scanner ??
        takeHeadScanner(limits.maxHeaderBytes, this.#start.listener.pathNormalization, limits.maxHeaderCount);
      this.#scanner = undefined;
      try {
        head = scanner.feed(view);
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        // Everything read of a head that cannot be parsed belongs to it (bytesIn).
        this.#refuse(isPeerError(e) ? e.result : 'bad_request', e.message, view.length);
        return;
      }
      if (head === undefined) {
        this.#scanner = scanner; // the rest of the head comes in a later read
        this.#pending = view;
        break;
      }
      releaseHeadScanner(scanner);
      const consumed = this.#route(head, view, undefined);
      if (consumed < 0) return;
      from = off;
      off += consumed;
    }
    this.#flush(buf, from, off);
  }

  /** Writes request bytes [from, to) to the current link, pausing the client when it is full. */
  #flush(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    if (this.#exchange !== undefined) this.#exchange.record.bytesIn += to - from;
    this.#links.write(from === 0 && to === buf.length ? buf : buf.subarray(from, to));
  }

  /** Reads from the client only while a head or body is wanted and the backend keeps up. */
  #flow(): void {
    const c = this.#client;
    const state = this.#state;
    if (c.destroyed || state === 'tunnel') return;
    if (this.#clientEnded && state === 'head') {
      // The client has finished sending and nothing is in flight: nothing more can come.
      this.#close(this.#pending === undefined ? 'ok' : 'client_closed');
      return;
    }
    // While a response is awaited the client may still be read into `#pending`, up to a bound:
    // pausing and resuming the socket for every request would cost two syscalls each time.
    const want =
      ((state === 'head' || state === 'body') && !this.#links.full) ||
      ((state === 'wait' || state === 'connecting') && (this.#pending?.length ?? 0) < this.#limits.maxHeaderBytes);
    if (want) {
      if (c.isPaused()) c.resume();
    } else if (state !== 'closing' && !c.isPaused()) c.pause();
  }

  /** ClientLinks: the current link's socket took what was written; the client may be read again. */
  onLinkWritable(): void {
    try {
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** The client's 'end' (a FIN). */
  onClientEnd(): void {
    try {
      this.#clientEnded = true;
      // A truncated body: pass the half-close on, as a splice would, and wait for the answer.
      if (this.#state === 'body') this.#links.current?.socket.end();
      this.#flow();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** Parses what the client sent while the last exchange was in flight. */
  #resumeParsing(): void {
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#frame(pending, 0, 0);
    this.#flow();
  }

  // ── a head's route and its link ──

  /**
   * Routes one complete head at offset 0 of `view`: its Request, its Exchange, the body bytes
   * in hand framed, decideRoute, the first pick; everything that can refuse it is decided before
   * a byte goes upstream. Returns the bytes of `view` that now belong to the request on the
   * current link (head + body in hand), or -1 when it was refused or waits for a connect (which
   * resumes on its own).
   */
  #route(head: Http1Head, view: Buffer, given: Request | undefined): number {
    const start = this.#start;
    let request: Request;
    try {
      request = given ?? start.requestFor(head);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#refuse('bad_request', e.message, head.headLength);
      return -1;
    }
    const ex = new Exchange(start.listener.name, this.#recordClientOf(request), this.#requestLog(), head, request);
    this.#exchange = ex;
    // Given back when the body is done (#requestSent); a refused head's is dropped.
    const body = takeTracker(head.bodyFraming);
    let fed: number;
    try {
      fed = body.feed(view, head.headLength);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      this.#refuse('bad_request', e.message, view.length); // a body that cannot be framed: all of it read
      return -1;
    }
    // A refused request counts the bytes read for it (head and body in hand) in bytesIn.
    const consumed = head.headLength + fed;
    const candidates = decideRoute(start.engine, start.listener, request, ex.record, this.#client);
    if (isRouteRefused(candidates)) {
      this.#refuse(candidates.refused, candidates.reason, consumed);
      return -1;
    }
    // The first pick names the backend, hence the link; the upstream pipeline starts with it.
    const pick = pickFirst(request, candidates, start.engine.operator);
    if (isRefusal(pick)) {
      this.#refuse(pick.refused, `operator refused: ${pick.refused}`, consumed);
      return -1;
    }
    this.#body = body;
    const link = this.#links.forKey(linkKey(pick.backend.id, candidates.policy, request));
    if (link !== undefined) {
      this.#resend = resendFor(head.method, body.done, view, consumed, request, candidates);
      this.#bind(link, undefined);
      return consumed;
    }
    this.#resend = undefined;
    this.#connect(request, candidates, pick, view, consumed);
    return -1;
  }

  /**
   * The access record's client of `request` (`ip:port`): the string of the connection's previous
   * request when the address is the same (it is, unless a forwarded header names another client),
   * so a keep-alive connection builds it once.
   */
  #recordClientOf(request: Request): string {
    if (
      this.#recordClient === undefined ||
      request.clientIp !== this.#recordClientIp ||
      request.clientPort !== this.#recordClientPort
    ) {
      this.#recordClientIp = request.clientIp;
      this.#recordClientPort = request.clientPort;
      this.#recordClient = `${request.clientIp}:${request.clientPort}`;
    }
    return this.#recordClient;
  }

  /** Where an exchange's per-request line goes: the runtime's access log, or nowhere (connection lines). */
  #requestLog(): PerRequestStart['runtime'] | undefined {
    return this.#start.requestLines ? this.#start.runtime : undefined;
  }

  /** Binds the routed exchange to `link` (`attempts`: of a new connection); the request's bytes follow. */
  #bind(link: UpstreamLink, attempts: number | undefined): void {
    const ex = this.#exchange!;
    const record = ex.record;
    record.backend = link.jack.backend.id;
    if (attempts !== undefined) record.attempts = attempts;
    if (this.#firstBind) {
      this.#firstBind = false;
      const connectionRecord = this.#start.connectionRecord;
      connectionRecord.backend = record.backend;
      if (record.product !== undefined) connectionRecord.product = record.product;
      if (record.cluster !== undefined) connectionRecord.cluster = record.cluster;
      if (attempts !== undefined) connectionRecord.attempts = attempts;
    }
    link.expect(ex.method, ex.upgradeTo);
    this.#state = 'body';
  }

  /**
   * A new connection through the upstream pipeline, starting with `first` and retrying per the
   * cluster policy; the client is read into `#pending` meanwhile. Callbacks, no promise (issue
   * 18: nothing async on the accept → connect path). One catch for the pipeline's bug report and
   * for `#connected`: a throw in either (a broken invariant) closes this connection and the
   * socket that was opened for it; it never reaches the socket's handler.
   */
  #connect(request: Request, candidates: Candidates, first: Jack, view: Buffer, consumed: number): void {
    this.#state = 'connecting';
    const { engine, runtime } = this.#start;
    openUpstreamThen(
      request,
      candidates,
      engine.operator,
      runtime,
      engine,
      'frames',
      (err, up) => {
        try {
          if (err !== undefined || up === undefined) throw err ?? new Error('openUpstream settled without an outcome');
          this.#connected(up, request, candidates, view, consumed);
        } catch (e) {
          if (up !== undefined && !isUpstreamFailure(up)) up.socket.destroy();
          this.#failed(e);
        }
      },
      first,
    );
  }

  /**
   * The upstream pipeline is done: a new link for the exchange, or its refusal (a request the
   * outbound PROXY header cannot carry is answered like a failed connect: 431 for an AUTHORITY
   * longer than a host name). What the client sent meanwhile is framed now, and a FIN it sent
   * passed on if its body is still in flight. A connect that ends after the connection closed
   * destroys its socket.
   */
  #connected(
    up: Upstream | UpstreamFailure,
    request: Request,
    candidates: Candidates,
    view: Buffer,
    consumed: number,
  ): void {
    if (this.#state !== 'connecting') {
      if (!isUpstreamFailure(up)) up.socket.destroy();
      return;
    }
    this.#exchange!.record.attempts = up.attempts;
    if (this.#firstBind) this.#start.connectionRecord.attempts = up.attempts;
    if (isUpstreamFailure(up)) {
      this.#refuse(up.result, up.reason, consumed);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, candidates, request, this.#linkSettings, this);
    this.#links.use(link);
    this.#bind(link, up.attempts);
    const pending = this.#pending;
    this.#pending = undefined;
    const buf = pending === undefined ? view : Buffer.concat([view, pending]);
    this.#frame(buf, consumed, 0);
    // A client FIN that came while connecting, in the middle of a body: passed on now, as
    // onClientEnd does once a link is there (the backend may read to the end). (`#frame` moved
    // the state on: TypeScript still holds it at the `connecting` checked above.)
    if (this.#clientEnded && (this.#state as State) === 'body') this.#links.current?.socket.end();
    this.#flow();
  }

  /**
   * The reused link of a request kept in `resend` failed before any response byte: the request
   * goes once more, on a new connection (the upstream pipeline: findJack, connect, retries). The
   * client's next bytes wait in `#pending` meanwhile, as during any connect.
   */
  #resendOnNewLink(resend: Resend): void {
    this.#resend = undefined;
    this.#state = 'connecting';
    const { engine, runtime } = this.#start;
    openUpstreamThen(resend.request, resend.candidates, engine.operator, runtime, engine, 'frames', (err, up) => {
      try {
        if (err !== undefined || up === undefined) throw err ?? new Error('openUpstream settled without an outcome');
        this.#resent(up, resend);
      } catch (e) {
        if (up !== undefined && !isUpstreamFailure(up)) up.socket.destroy();
        this.#failed(e);
      }
    });
  }

  /** The resend's connection is up (or refused): the kept request is written, its response awaited. */
  #resent(up: Upstream | UpstreamFailure, resend: Resend): void {
    if (this.#state !== 'connecting') {
      if (!isUpstreamFailure(up)) up.socket.destroy();
      return;
    }
    const ex = this.#exchange!;
    ex.record.attempts = (ex.record.attempts ?? 1) + up.attempts;
    if (isUpstreamFailure(up)) {
      this.#refuse(up.result, up.reason);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, resend.candidates, resend.request, this.#linkSettings, this);
    this.#links.use(link);
    this.#bind(link, ex.record.attempts);
    link.traffic.count++;
    link.socket.write(resend.bytes);
    this.#state = 'wait'; // the whole request is written (#requestSent ran for it before)
    this.#flow();
  }

  // ── the exchange's end, and what the links report (LinkOwner) ──

  /** The request's last byte was written upstream. */
  #requestSent(): void {
    const ex = this.#exchange!;
    ex.requestDone = true;
    const body = this.#body;
    this.#body = undefined;
    if (body !== undefined) releaseTracker(body);
    if (ex.responseDone) this.#complete();
    else this.#state = 'wait';
  }

  /** Both halves are forwarded: log, release a link the backend will close, go on or close. */
  #complete(): void {
    const ex = this.#exchange!;
    const link = this.#links.current;
    this.#exchange = undefined;
    this.#resend = undefined;
    ex.record.bytesOut = link?.bytesOut ?? 0;
    ex.finish('ok');
    if (link !== undefined && !link.reusable) {
      this.#links.use(undefined);
      link.socket.end();
    }
    if (ex.clientClose || link?.endsConnection === true || this.#draining) this.#close('ok');
    else this.#state = 'head';
  }

  /** LinkOwner: a response head; a final status (or 101) is the exchange's. */
  responseHead(link: UpstreamLink, status: number): void {
    try {
      if (link !== this.#links.current || this.#exchange === undefined) return;
      if (status >= 200 || status === 101) this.#exchange.record.status = status;
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: the response was forwarded whole. */
  responseDone(link: UpstreamLink): void {
    try {
      const ex = this.#exchange;
      if (link !== this.#links.current || ex === undefined) return;
      ex.responseDone = true;
      if (ex.requestDone) {
        this.#complete();
        if (this.#state === 'head') this.#resumeParsing();
      } else if (!link.reusable) {
        // The backend answered early and will close: the rest of the request has nowhere to go.
        this.#exchange = undefined;
        ex.record.bytesOut = link.bytesOut;
        ex.finish('ok');
        this.#close('ok');
      }
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: 101 or a 2xx to CONNECT: the client and the link are spliced until either ends. */
  tunnel(link: UpstreamLink): void {
    try {
      const ex = this.#exchange;
      if (link !== this.#links.current || ex === undefined) return;
      this.#state = 'tunnel';
      const c = this.#client;
      c.removeListener('data', clientData);
      c.removeListener('end', clientEnd);
      this.#stopIdle();
      this.#links.use(undefined);
      this.#links.closeIdle();
      const pending = this.#pending;
      this.#pending = undefined;
      const read = c.bytesRead;
      const written = c.bytesWritten;
      splice(c, link.socket, pending, this.#limits.idleTimeout, (end, reason) => {
        ex.record.bytesIn += c.bytesRead - read + (pending?.length ?? 0);
        ex.record.bytesOut = link.bytesOut + c.bytesWritten - written;
        ex.finish(end, undefined, reason);
        this.#result = end;
        if (reason !== undefined) this.#start.connectionRecord.reason = reason;
        this.#finish();
      });
    } catch (err) {
      this.#failed(err);
    }
  }

  /**
   * LinkOwner: the link failed while a response was expected or in progress. Nothing of the
   * response went out: a request kept for a resend goes once more on a new connection, any
   * other is answered 502 (`bad_response` for a response the router cannot frame, a 101 nobody
   * asked for included; `upstream_reset` for a lost link). Part of it went out: the exchange
   * ends with why and the client is cut.
   */
  broken(link: UpstreamLink, why: LinkBreak, reason: string): void {
    try {
      this.#links.forget(link);
      if (link !== this.#links.current || this.#state === 'closing' || this.#state === 'tunnel') return;
      this.#links.use(undefined);
      const ex = this.#exchange;
      if (ex === undefined) return;
      ex.record.bytesOut = link.bytesOut;
      const resend = this.#resend;
      this.#resend = undefined;
      if (link.bytesOut === 0) {
        // The reused link was closing as the request went out (its FIN not read yet): once more.
        if (resend !== undefined && ex.requestDone && resendsAfter(why)) {
          this.#resendOnNewLink(resend);
          return;
        }
        // Nothing of the response reached the client, so no answer can interleave: it gets the
        // router's 502 instead of a bare close, then a close. An idle timeout keeps its close.
        if (why !== 'idle_timeout') {
          this.#refuse(why === 'bad_response' ? 'bad_response' : 'upstream_reset', reason);
          return;
        }
      }
      this.#exchange = undefined;
      ex.finish(why, undefined, reason);
      // Nothing of the response went out: a clean close. Part of it did: cut it, so it shows.
      if (link.bytesOut === 0) this.#close(why);
      else this.#abort(why);
    } catch (err) {
      this.#failed(err);
    }
  }

  /** LinkOwner: an idle link closed (pooled or between requests). */
  closed(link: UpstreamLink): void {
    try {
      this.#links.forget(link);
      if (link === this.#links.current) this.#links.use(undefined);
    } catch (err) {
      this.#failed(err);
    }
  }

  // ── the connection's end: the router's answers, closes and aborts, the last line ──

  /** Drainable (src/data-path/drain.ts), graceful shutdown: between requests close now; otherwise after the current response. */
  drain(): void {
    this.#draining = true;
    if (this.#begun && this.#state === 'head' && this.#exchange === undefined && this.#pending === undefined)
      this.#close('ok');
  }

  /**
   * A request the router answers itself: sent once nothing is in flight (always so here: a head
   * is routed only after the previous response, and a broken response is answered only while
   * none of it went out). `read`: the request's bytes the router read and did not forward (its
   * head, the body in hand; all of a head it could not parse), counted in the line's `bytesIn`
   * as forwarded bytes are, so a refused request logs what it cost like a proxied one.
   */
  #refuse(code: ResultCode, reason?: string, read = 0): void {
    const ex =
      this.#exchange ??
      new Exchange(this.#start.listener.name, this.#start.connectionRecord.client, this.#requestLog());
    this.#exchange = undefined;
    ex.record.bytesIn += read;
    // The access line counts the answer the client gets (nothing of a response went out before it).
    if (!this.#client.destroyed) ex.record.bytesOut += errorResponse(code)?.length ?? 0;
    ex.finish(code, statusOf(code), reason);
    this.#answer(code, reason);
  }

  /** A request body the framing tracker cannot follow: 400 if nothing went out yet, else cut. */
  #bodyError(reason: string): void {
    const ex = this.#exchange!;
    const link = this.#links.current;
    this.#exchange = undefined;
    ex.finish('bad_request', 400, reason);
    this.#links.use(undefined);
    link?.destroy();
    if ((link?.bytesOut ?? 0) === 0 && !ex.responseDone) this.#answer('bad_request');
    else this.#abort('bad_request');
  }

  /** Writes the router's answer for `code` (Connection: close) and closes after a linger. */
  #answer(code: ResultCode, reason?: string): void {
    this.#stop(code);
    const c = this.#client;
    const bytes = errorResponse(code, reason);
    if (bytes === undefined || c.destroyed) {
      c.destroy();
      return;
    }
    c.removeListener('data', clientData);
    this.#linger = endWithLinger(c, bytes);
  }

  /** Ends the client gracefully after what was written (its idle timeout still applies). */
  #close(result: string): void {
    if (this.#state === 'closing') return;
    this.#stop(result);
    const c = this.#client;
    c.removeListener('data', clientData);
    c.end();
    // What the client still sends is read and dropped, up to the linger's bound (src/data-path/answer.ts).
    discardUpTo(c, LINGER_BYTES);
  }

  /** Closes everything now. */
  #abort(result: string): void {
    this.#stop(result);
    this.#client.destroy();
  }

  /** State `closing`: every link closed, the first non-ok result kept. */
  #stop(result: string): void {
    this.#state = 'closing';
    this.#pending = undefined;
    this.#resend = undefined;
    if (this.#result === 'ok') this.#result = result;
    this.#links.closeAll();
  }

  /** The client's 'error' (a reset, or the pipeline's half-close or lifetime bound). */
  onClientError(err: Error): void {
    try {
      if (this.#state === 'tunnel') return;
      const reason = `client: ${err.message}`;
      this.#exchange?.finish('client_error', undefined, reason);
      this.#exchange = undefined;
      if (this.#result === 'ok') this.#start.connectionRecord.reason = reason;
      this.#abort('client_error');
    } catch (e) {
      this.#failed(e);
    }
  }

  /** The client's 'close': the end of the connection, unless a tunnel owns it. */
  onClientClose(): void {
    try {
      if (this.#state === 'tunnel') return;
      if (this.#exchange !== undefined) {
        this.#exchange.finish('client_closed');
        this.#exchange = undefined;
        this.#stop('client_closed');
      } else this.#stop('ok');
      this.#finish();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** IdleMember: one tick of the shared idle timer (per-request-idle.ts). */
  idleTick(): void {
    if (this.#idleTicker === undefined) return; // left the ticker during this walk
    try {
      const link = this.#links.current;
      const linkQuiet = link === undefined || link.traffic.tick();
      if (this.#traffic.tick(linkQuiet) && this.#traffic.idle) {
        this.#stopIdle();
        this.#exchange?.finish('idle_timeout');
        this.#exchange = undefined;
        this.#abort('idle_timeout');
        return;
      }
      if (link?.traffic.idle) link.onTimeout();
      this.#links.tickIdle();
    } catch (err) {
      this.#stopIdle();
      this.#failed(err);
    }
  }

  /** Leaves the idle ticker (tunnel, close, timeout). */
  #stopIdle(): void {
    const ticker = this.#idleTicker;
    if (ticker === undefined) return;
    this.#idleTicker = undefined;
    if (this.#idleNode !== undefined) leaveTicker(ticker, this.#idleNode);
    this.#idleNode = undefined;
  }

  /**
   * A throw on this connection's path (a broken invariant, never bad input: that is refused with
   * a typed error): logged with its stack, the connection and its links closed, its end reported
   * once so its admission slot goes back. The other connections carry on.
   */
  #failed(err: unknown): void {
    this.#start.runtime.logger.error({ err }, 'per-request connection failed (internal error): closing it');
    this.#exchange?.finish('internal_error');
    this.#exchange = undefined;
    try {
      this.#abort('internal_error');
    } finally {
      // 'close' already went by (the throw came from it, or from a tunnel's end): end it here.
      if (this.#client.closed) this.#finish();
    }
  }

  /** The connection's result, once: its access line (connection lines) or its end. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    const start = this.#start;
    start.runtime.drain.remove(this.#drainNode);
    this.#drainNode = undefined;
    this.#stopIdle();
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    const result = this.#result;
    const record = start.connectionRecord;
    endRecord(record, start.conn.acceptedAt, result, statusOfResult(result));
    record.bytesIn = this.#client.bytesRead;
    record.bytesOut = this.#client.bytesWritten;
    logConnection(record, start.requestLines ? undefined : start.runtime.accessLog);
    start.conn.done();
  }
}

/** The status the router answers a connection result with, when it is a result code. */
function statusOfResult(result: string): number | undefined {
  return result in RESULT_STATUS ? statusOf(result as ResultCode) : undefined;
}
