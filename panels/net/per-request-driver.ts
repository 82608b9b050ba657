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
import { isPeerError, isSwitchboardError, type ResultCode } from '../../src/base/errors.ts';
import type { MemberNode } from '../../src/base/member-list.ts';
import { type Candidates, isRefusal, type Jack, type Request } from '../../src/contracts/types.ts';
import { errorResponse, statusOf } from '../../src/data-path/answer.ts';
import type { Drainable } from '../../src/data-path/drain.ts';
import { splice } from '../../src/data-path/splice.ts';
import type { Engine } from '../../src/panel/contract.ts';
import { type BodyTracker, releaseTracker, takeTracker } from '../../src/peek/body-tracker.ts';
import type { Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';
import { releaseHeadScanner, takeHeadScanner } from '../../src/peek/scanner-spares.ts';
import { decideRoute, isRouteRefused } from '../../src/routing/route.ts';
import { isUpstreamFailure, pickFirst, type Upstream, type UpstreamFailure } from '../../src/upstream/index.ts';
import type { Exchange } from './exchange.ts';
import { type ClientListener, handClientToTunnel, listenToClient } from './per-request-client-events.ts';
import { openLink } from './per-request-connect.ts';
import { answerClient, closeClient, reportConnectionEnd } from './per-request-end.ts';
import { type IdleMember, IdleSeat, Traffic } from './per-request-idle.ts';
import { ClientLinks, type WritableListener } from './per-request-links.ts';
import { PendingBytes } from './per-request-pending.ts';
import { ExchangeRecords } from './per-request-records.ts';
import { type Resend, resendFor, resendsAfter } from './per-request-resend.ts';
import type { PerRequestStart } from './per-request-start.ts';
import { type LinkBreak, type LinkOwner, type LinkSettings, linkKey, UpstreamLink } from './upstream-link.ts';

/**
 * head: reading a head · body: forwarding a body · wait: the response is awaited ·
 * connecting: a new upstream connection is being opened · tunnel: spliced · closing: ending.
 */
type State = 'head' | 'body' | 'wait' | 'connecting' | 'tunnel' | 'closing';

/**
 * One per-request client connection, from its first routed head until its access line. Each
 * event entry (ClientListener, LinkOwner, IdleMember, WritableListener) guards its step: a throw
 * (a broken invariant) ends in `#failed`, which closes this connection and releases its slot
 * instead of reaching the process.
 */
export class PerRequestDriver implements ClientListener, LinkOwner, Drainable, IdleMember, WritableListener {
  readonly #start: PerRequestStart;
  readonly #client: Socket;
  readonly #limits: Engine['limits'];
  readonly #links: ClientLinks;
  readonly #linkSettings: LinkSettings;
  #state: State = 'head';
  /** The scanner of a head split across reads (scanner-spares.ts: none between heads). */
  #scanner: Http1HeadScanner | undefined;
  /** Client bytes not framed yet (a partial head, or what came while the client must wait). */
  readonly #pending: PendingBytes;
  /** The framing of the request body being forwarded. */
  #body: BodyTracker | undefined;
  #exchange: Exchange | undefined;
  readonly #records: ExchangeRecords;
  /** The current request's bytes while it may be sent once more (per-request-resend.ts). */
  #resend: Resend | undefined;
  #clientEnded = false;
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
  readonly #idle = new IdleSeat();
  /** Its place among the runtime's drainable members (src/base/member-list.ts). */
  #drainNode: MemberNode<Drainable> | undefined;

  constructor(start: PerRequestStart) {
    this.#start = start;
    const client = start.client;
    this.#client = client;
    this.#limits = start.engine.limits;
    this.#pending = new PendingBytes(this.#limits.maxHeaderBytes);
    this.#records = new ExchangeRecords(start);
    this.#links = new ClientLinks(this.#limits.maxIdleUpstreamsPerConnection, this);
    this.#linkSettings = {
      client,
      registry: start.runtime.registry,
      maxHeaderBytes: this.#limits.maxHeaderBytes,
    };
    listenToClient(client, this);
    if (this.#idle.take(this, this.#limits.idleTimeout)) {
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
      const buf = this.#pending.withRead(chunk);
      if (this.#state === 'head' || this.#state === 'body') this.#frame(buf, 0, 0);
      else if (this.#state !== 'closing') this.#pending.keep(buf); // paused states: kept for later
      this.#pending.settle();
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
        if (off < buf.length && this.#state !== 'closing') this.#pending.keep(buf.subarray(off));
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
        this.#pending.keep(view);
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
      this.#close(this.#pending.empty ? 'ok' : 'client_closed');
      return;
    }
    // While a response is awaited the client may still be read into `#pending`, up to a bound:
    // pausing and resuming the socket for every request would cost two syscalls each time.
    const want =
      ((state === 'head' || state === 'body') && !this.#links.full) ||
      ((state === 'wait' || state === 'connecting') && this.#pending.length < this.#limits.maxHeaderBytes);
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
    const pending = this.#pending.take();
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
    const ex = this.#records.open(head, request);
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

  /** Binds the routed exchange to `link` (`attempts`: of a new connection); the request's bytes follow. */
  #bind(link: UpstreamLink, attempts: number | undefined): void {
    const ex = this.#exchange!;
    this.#records.bound(ex, link.jack.backend.id, attempts);
    link.expect(ex.method, ex.upgradeTo);
    this.#state = 'body';
  }

  /**
   * A new connection through the upstream pipeline (per-request-connect.ts), starting with
   * `first` and retrying per the cluster policy; the client is read into `#pending` meanwhile.
   */
  #connect(request: Request, candidates: Candidates, first: Jack, view: Buffer, consumed: number): void {
    this.#state = 'connecting';
    openLink(
      this.#start,
      request,
      candidates,
      first,
      (up) => this.#connected(up, request, candidates, view, consumed),
      (e) => this.#failed(e),
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
    this.#records.connectAttempts(this.#exchange!, up.attempts);
    if (isUpstreamFailure(up)) {
      this.#refuse(up.result, up.reason, consumed);
      return;
    }
    const link = new UpstreamLink(up.socket, up.jack, candidates, request, this.#linkSettings, this);
    this.#links.use(link);
    this.#bind(link, up.attempts);
    const pending = this.#pending.take();
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
    openLink(
      this.#start,
      resend.request,
      resend.candidates,
      undefined,
      (up) => this.#resent(up, resend),
      (e) => this.#failed(e),
    );
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
      handClientToTunnel(c);
      this.#idle.leave();
      this.#links.use(undefined);
      this.#links.closeIdle();
      const pending = this.#pending.take();
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
    if (this.#begun && this.#state === 'head' && this.#exchange === undefined && this.#pending.empty) this.#close('ok');
  }

  /**
   * A request the router answers itself: sent once nothing is in flight (always so here: a head
   * is routed only after the previous response, and a broken response is answered only while
   * none of it went out). `read`: the request's bytes the router read and did not forward (its
   * head, the body in hand; all of a head it could not parse), counted in the line's `bytesIn`
   * as forwarded bytes are, so a refused request logs what it cost like a proxied one.
   */
  #refuse(code: ResultCode, reason?: string, read = 0): void {
    const ex = this.#exchange ?? this.#records.forAnswer();
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
    this.#linger = answerClient(this.#client, code, reason);
  }

  /** Ends the client gracefully after what was written (its idle timeout still applies). */
  #close(result: string): void {
    if (this.#state === 'closing') return;
    this.#stop(result);
    closeClient(this.#client);
  }

  /** Closes everything now. */
  #abort(result: string): void {
    this.#stop(result);
    this.#client.destroy();
  }

  /** State `closing`: every link closed, the first non-ok result kept. */
  #stop(result: string): void {
    this.#state = 'closing';
    this.#pending.take();
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
    if (!this.#idle.taken) return; // left the ticker during this walk
    try {
      const link = this.#links.current;
      const linkQuiet = link === undefined || link.traffic.tick();
      if (this.#traffic.tick(linkQuiet) && this.#traffic.idle) {
        this.#idle.leave();
        this.#exchange?.finish('idle_timeout');
        this.#exchange = undefined;
        this.#abort('idle_timeout');
        return;
      }
      if (link?.traffic.idle) link.onTimeout();
      this.#links.tickIdle();
    } catch (err) {
      this.#idle.leave();
      this.#failed(err);
    }
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
    this.#idle.leave();
    if (this.#linger !== undefined) clearTimeout(this.#linger);
    reportConnectionEnd(start, this.#client, this.#result);
  }
}
